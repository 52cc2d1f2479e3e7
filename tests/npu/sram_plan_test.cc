// Weight slots of the SRAM plan: the constant images of the coming layers stream into free
// SRAM as many layers ahead as it leaves room, never over an item live at the same step.
#include <gtest/gtest.h>

#include "npu/sram_plan.h"

namespace edgec::npu {
namespace {

// A chain of `n` layers: 64 KiB of working tiles and 32 KiB of weights each, every output
// read by the next layer only.
void Chain(int n, std::vector<SramPlanLayer>& layers, std::vector<SramPlanTensor>& tensors) {
  for (int j = 0; j < n; ++j) {
    layers.push_back({"l" + std::to_string(j), 64 << 10, -1, 32 << 10});
    tensors.push_back({"t" + std::to_string(j), 16 << 10, j, j + 1 < n ? j + 1 : -1, j + 1 < n ? "" : "graph output"});
  }
}

bool Overlaps(int64_t a, int64_t an, int64_t b, int64_t bn) { return a < b + bn && b < a + an; }

TEST(SramPlanTest, WeightSlotsReachAsFarAheadAsTheSramAllows) {
  std::vector<SramPlanLayer> layers;
  std::vector<SramPlanTensor> tensors;
  Chain(8, layers, tensors);
  // Room for everything: every slot fills from the first step.
  SramPlan big = PlanSram(layers, tensors, 4 << 20, 64);
  for (int j = 1; j < 8; ++j) EXPECT_EQ(big.weights_from[j], 0) << j;
  EXPECT_EQ(big.PrefetchDepth(7), 7);
  // 288 KiB: two layers' tiles, the hand-over tensor and a few slots at a time.
  SramPlan small = PlanSram(layers, tensors, 288 << 10, 64);
  int deepest = 0;
  for (int j = 1; j < 8; ++j) {
    ASSERT_GE(small.weights_from[j], 0) << j;
    EXPECT_LT(small.weights_from[j], j);
    if (j > 1) {
      EXPECT_GE(small.weights_from[j], small.weights_from[j - 1]) << "the stream is in layer order";
    }
    deepest = std::max(deepest, small.PrefetchDepth(j));
  }
  EXPECT_GT(deepest, 1) << "some weights stream more than one layer ahead";
  EXPECT_GT(small.weights_from[7], 0) << "less SRAM, a shallower ring";
  // No slot shares SRAM with a working area, a kept tensor or another slot live at the same step.
  for (int j = 1; j < 8; ++j) {
    const int64_t a = small.weights_addr[j], an = layers[j].const_bytes;
    EXPECT_LE(a + an, 288 << 10);
    for (int s = small.weights_from[j]; s <= j; ++s) {
      EXPECT_FALSE(Overlaps(a, an, small.work_base[s], layers[s].work_bytes)) << "slot " << j << " tiles " << s;
      for (size_t x = 0; x < tensors.size(); ++x) {
        if (small.tensors[x].in_sram && tensors[x].first <= s && tensors[x].last >= s) {
          EXPECT_FALSE(Overlaps(a, an, small.tensors[x].addr, tensors[x].bytes)) << "slot " << j << " tensor " << x;
        }
      }
    }
    for (int k = 1; k < j; ++k) {
      if (small.weights_from[j] <= k) {
        EXPECT_FALSE(Overlaps(a, an, small.weights_addr[k], layers[k].const_bytes)) << "slots " << j << ", " << k;
      }
    }
  }
  // Without streaming no layer has a slot.
  SramPlan off = PlanSram(layers, tensors, 288 << 10, 64, false);
  for (int j = 0; j < 8; ++j) EXPECT_EQ(off.weights_from[j], -1);
}

// Layer pipelining (segment.h): a layer may start while the one before it runs, so with room
// each tensor is placed where nothing live at its producer's previous step lies: neither that
// layer's working tiles nor a tensor it reads or writes. Without room it keeps its own steps.
TEST(SramPlanTest, TensorsAvoidWhatThePreviousLayerUses) {
  std::vector<SramPlanLayer> layers;
  std::vector<SramPlanTensor> tensors;
  Chain(8, layers, tensors);
  const SramPlan plan = PlanSram(layers, tensors, 1 << 20, 64);
  int checked = 0;
  for (int j = 1; j < 7; ++j) {  // t_j: written by layer j, read by j + 1
    ASSERT_TRUE(plan.tensors[j].in_sram) << j;
    const int64_t a = plan.tensors[j].addr, an = tensors[j].bytes;
    EXPECT_FALSE(Overlaps(a, an, plan.work_base[j - 1], layers[j - 1].work_bytes)) << "t" << j << " on tiles " << j - 1;
    for (int x = 0; x < 7; ++x) {
      if (x == j || !plan.tensors[x].in_sram || tensors[x].first > j - 1 || tensors[x].last < j - 1) continue;
      EXPECT_FALSE(Overlaps(a, an, plan.tensors[x].addr, tensors[x].bytes)) << "t" << j << " on t" << x;
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
  // Without the move the greedy placement puts a tensor on the previous layer's dead input.
  const SramPlan stay = PlanSram(layers, tensors, 1 << 20, 64, true, false, false);
  int overlaps = 0;
  for (int j = 2; j < 7; ++j)
    overlaps += stay.tensors[j].in_sram && stay.tensors[j - 2].in_sram &&
                Overlaps(stay.tensors[j].addr, tensors[j].bytes, stay.tensors[j - 2].addr, tensors[j - 2].bytes);
  EXPECT_GT(overlaps, 0) << "no overlap to avoid: the test shows nothing";
}

// Lead-in slots: a late image too large for a whole slot gets the largest free range over
// [p, j] for a prefix that ends where its loads end, loaded early (p well before j), and the
// range never meets a working area, a kept tensor or another slot live at the same step.
TEST(SramPlanTest, LeadInSlotsHoldAPrefixFreeUntilUse) {
  std::vector<SramPlanLayer> layers;
  std::vector<SramPlanTensor> tensors;
  Chain(8, layers, tensors);
  for (SramPlanLayer& l : layers) l.const_reads = {{l.const_bytes, l.const_bytes}};
  // Layer 6: 512 KiB of weights read as 16 loads of 32 KiB rows, each ending 32 KiB further.
  layers[6].const_bytes = 512 << 10;
  layers[6].const_reads.clear();
  for (int r = 1; r <= 16; ++r) layers[6].const_reads.push_back({int64_t{r} * (32 << 10), int64_t{r} * (32 << 10)});
  const int64_t sram = 448 << 10;
  const SramPlan without = PlanSram(layers, tensors, sram, 64);
  EXPECT_EQ(without.weights_from[6], -1) << "the image fits no whole slot";
  const SramPlan plan = PlanSram(layers, tensors, sram, 64, true, false, true, 8);
  ASSERT_TRUE(plan.lead_in[6]);
  const int64_t a = plan.weights_addr[6], an = plan.weights_bytes[6];
  EXPECT_GT(an, 0);
  EXPECT_LT(an, layers[6].const_bytes);
  EXPECT_EQ(an % (32 << 10), 0) << "a prefix that ends where a load ends";
  EXPECT_LE(a + an, sram);
  EXPECT_LT(plan.weights_from[6], 5) << "the large image walks back to load early";
  for (int s = plan.weights_from[6]; s <= 6; ++s) {
    EXPECT_FALSE(Overlaps(a, an, plan.work_base[s], layers[s].work_bytes)) << "tiles " << s;
    if (s + 1 < 8 && plan.prefetch[s + 1]) {  // layer s + 1's tiles are live from step s
      EXPECT_FALSE(Overlaps(a, an, plan.work_base[s + 1], layers[s + 1].work_bytes)) << "tiles " << s + 1;
    }
    for (size_t x = 0; x < tensors.size(); ++x) {
      // A kept tensor may sit from its producer's previous step (clear of the previous layer).
      if (plan.tensors[x].in_sram && tensors[x].first - 1 <= s && tensors[x].last >= s) {
        EXPECT_FALSE(Overlaps(a, an, plan.tensors[x].addr, tensors[x].bytes)) << "tensor " << x << " step " << s;
      }
    }
  }
  for (int k = 1; k < 8; ++k) {
    if (k == 6 || plan.weights_from[k] < 0 || plan.weights_from[k] > 6 || k < plan.weights_from[6]) continue;
    EXPECT_FALSE(Overlaps(a, an, plan.weights_addr[k], plan.weights_bytes[k])) << "slots 6, " << k;
  }
  // A layer whose loads all span the whole image gets no lead-in: no prefix would save a byte.
  layers[6].const_reads = {{512 << 10, 512 << 10}};
  EXPECT_FALSE(PlanSram(layers, tensors, sram, 64, true, false, true, 8).lead_in[6]);
}

}  // namespace
}  // namespace edgec::npu
