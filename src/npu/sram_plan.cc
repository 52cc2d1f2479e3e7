// Greedy SRAM residency planning over a segment's layer order (see sram_plan.h).
#include "npu/sram_plan.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <tuple>

#include <fmt/format.h>

#include "npu/isa.h"

namespace edgec::npu {
namespace {

struct Item {
  int64_t addr = 0, bytes = 0;
  int first = 0, last = 0;
  bool placed = false;
};

// Lowest aligned offset where [off, off + bytes) meets no placed item (but `skip`) whose
// steps intersect [first, last]; -1 when none fits below `limit`.
int64_t Fit(const std::vector<Item>& items, int64_t bytes, int first, int last, int64_t limit, int64_t align,
            size_t skip) {
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (size_t i = 0; i < items.size(); ++i) {
    const Item& x = items[i];
    if (i == skip || !x.placed || x.bytes == 0 || x.last < first || x.first > last) continue;
    busy.push_back({x.addr, x.addr + x.bytes});
  }
  std::sort(busy.begin(), busy.end());
  int64_t off = 0;
  for (auto [lo, hi] : busy) {
    if (off + bytes <= lo) break;
    off = std::max(off, AlignUp(hi, align));
  }
  return off + bytes <= limit ? off : -1;
}

// The largest aligned range [off, off + bytes) below `limit` that meets no placed item whose
// steps intersect [first, last]: {off, bytes}, bytes 0 when there is none.
std::pair<int64_t, int64_t> LargestFree(const std::vector<Item>& items, int first, int last, int64_t limit,
                                        int64_t align) {
  std::vector<std::pair<int64_t, int64_t>> busy;
  for (const Item& x : items)
    if (x.placed && x.bytes > 0 && x.last >= first && x.first <= last) busy.push_back({x.addr, x.addr + x.bytes});
  busy.push_back({limit, limit});
  std::sort(busy.begin(), busy.end());
  std::pair<int64_t, int64_t> best{0, 0};
  int64_t off = 0;
  for (auto [lo, hi] : busy) {
    if (lo - off > best.second) best = {off, lo - off};
    off = std::max(off, AlignUp(hi, align));
  }
  return best;
}

// Lead-in slots, for a layer whose image has no slot yet (not resident, not in the ring): the
// largest free range over [p, j] holds the longest prefix of its image at which some of its
// constant loads end (SramPlanLayer::const_reads: a prefix no load lies wholly inside saves no
// DRAM byte); its chunks load at the head of layer p + 1's loads. Two passes: before the ring,
// images of at least `min_image` bytes walk p back from j - 1, down to j - `depth`, while the
// prefix still saves half the bytes it saves from j - 1 (a large late image, a classifier,
// loads while earlier layers leave the DRAM idle); after the ring, every other image takes
// what is free over [j - 1, j] (its load overlaps the previous layer's tail). Guarded by
// SramPlanTest.LeadInSlotsHoldAPrefixFreeUntilUse.
void PlanLeadIns(const std::vector<SramPlanLayer>& layers, std::vector<Item>& items, int64_t sram_bytes,
                 int64_t al, int64_t min_image, int depth, SramPlan& plan) {
  constexpr int64_t kMinLeadIn = 16384;  // below this a chunk's setup and latency outweigh it
  const int L = static_cast<int>(layers.size());
  for (int j = 1; j < L; ++j) {
    if (layers[j].const_bytes <= 0 || layers[j].const_bytes < min_image || plan.weights_from[j] >= 0) continue;
    // The longest prefix the free range over [p, j] holds that ends where loads end, and the
    // DRAM bytes those loads then read on chip: {offset, prefix, saved}.
    auto room = [&](int p) {
      const auto [off, free] = LargestFree(items, p, j, sram_bytes, al);
      std::tuple<int64_t, int64_t, int64_t> best{off, 0, 0};
      for (auto [end, saved] : layers[j].const_reads)
        if (AlignUp(end, al) <= free) best = {off, end, saved};
      return best;
    };
    const int64_t lead = std::get<2>(room(j - 1));
    if (lead < kMinLeadIn) continue;
    int from = j - 1;
    while (from > std::max(0, j - depth) && 2 * std::get<2>(room(from - 1)) >= lead) --from;
    const auto [off, bytes, saved] = room(from);
    if (saved <= 0) continue;
    items.push_back({off, AlignUp(bytes, al), from, j, true});
    plan.weights_from[j] = from;
    plan.weights_addr[j] = off;
    plan.weights_bytes[j] = bytes;
    plan.lead_in[j] = true;
    for (int s = from; s <= j; ++s) plan.weight_occupancy[s] += bytes;
  }
}

}  // namespace

SramPlan PlanSram(const std::vector<SramPlanLayer>& layers, const std::vector<SramPlanTensor>& tensors,
                  int64_t sram_bytes, int64_t alignment, bool stream_weights, bool resident_weights,
                  bool clear_of_previous, int lead_in_depth) {
  const int L = static_cast<int>(layers.size());
  const int64_t al = std::max<int64_t>(alignment, 1);
  SramPlan plan;
  plan.sram_bytes = sram_bytes;
  plan.work_base.assign(L, 0);
  plan.prefetch.assign(L, false);
  plan.tensors.resize(tensors.size());
  std::vector<Item> items(L + tensors.size());
  for (int j = 0; j < L; ++j) {
    Item& w = items[j];
    w.bytes = AlignUp(layers[j].work_bytes, al);
    w.first = w.last = j;
    const int group = layers[j].first >= 0 && layers[j].first < j ? layers[j].first : j;
    w.addr = Fit(items, w.bytes, group, j, sram_bytes, al, items.size());
    if (w.addr >= 0) {
      w.first = group;
    } else {
      w.addr = Fit(items, w.bytes, j, j, sram_bytes, al, items.size());
      if (w.addr < 0) w.addr = 0;  // the tiling fits the SRAM alone (the tiler checked it)
    }
    w.placed = true;
  }
  std::vector<size_t> order;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SramPlanTensor& x = tensors[i];
    SramPlan::Tensor& pt = plan.tensors[i];
    if (!x.dram_reason.empty()) {
      pt.reason = x.dram_reason;
    } else if (x.first < 0 || x.last < x.first) {
      pt.reason = "no producer and consumer in the segment";
    } else {
      order.push_back(i);
    }
  }
  auto density = [&](size_t i) {
    const SramPlanTensor& x = tensors[i];
    return static_cast<double>(x.last - x.first + 1);
  };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (density(a) != density(b)) return density(a) < density(b);
    return tensors[a].bytes > tensors[b].bytes;
  });
  for (size_t i : order) {
    const SramPlanTensor& x = tensors[i];
    Item& it = items[L + i];
    it.bytes = AlignUp(x.bytes, al);
    it.first = x.first;
    it.last = x.last;
    const int64_t off = Fit(items, it.bytes, x.first, x.last, sram_bytes, al, items.size());
    SramPlan::Tensor& pt = plan.tensors[i];
    if (off >= 0) {
      it.addr = off;
      it.placed = true;
      pt.in_sram = true;
      pt.addr = off;
      pt.reason = fmt::format("resident over layers {}..{}", x.first, x.last);
      continue;
    }
    // Where it did not fit: the step with the least room.
    int worst = x.first;
    int64_t worst_free = INT64_MAX, worst_work = 0, worst_res = 0;
    for (int s = x.first; s <= x.last; ++s) {
      int64_t work = 0, res = 0;
      for (size_t k = 0; k < items.size(); ++k) {
        const Item& o = items[k];
        if (!o.placed || o.last < s || o.first > s) continue;
        (k < static_cast<size_t>(L) ? work : res) += o.bytes;
      }
      if (sram_bytes - work - res < worst_free) {
        worst_free = sram_bytes - work - res;
        worst = s;
        worst_work = work;
        worst_res = res;
      }
    }
    pt.reason = fmt::format("spilled: needs {} B over layers {}..{}; at layer {} ({}) working tiles take {} B and "
                            "resident tensors {} B of {} B",
                            x.bytes, x.first, x.last, worst, layers[worst].name, worst_work, worst_res, sram_bytes);
  }
  // Prefetch: move each layer's working tiles to a range free over [j - 1, j].
  for (int j = 1; j < L; ++j) {
    Item& w = items[j];
    if (w.bytes == 0) continue;
    if (w.first < j) {  // a parallel group's member: already held since the group's start
      plan.prefetch[j] = true;
      continue;
    }
    const int64_t off = Fit(items, w.bytes, j - 1, j, sram_bytes, al, j);
    if (off < 0) continue;
    w.addr = off;
    w.first = j - 1;
    plan.prefetch[j] = true;
  }
  // Layer pipelining: a tensor written by layer j moves to a range also free at step j - 1 (its
  // producer then overlaps the layer before it without a hazard on the tensor's bytes).
  for (size_t i : order) {
    Item& it = items[L + i];
    if (!clear_of_previous || !it.placed || it.first < 1) continue;
    const int64_t off = Fit(items, it.bytes, it.first - 1, it.last, sram_bytes, al, L + i);
    if (off < 0) continue;
    it.addr = off;
    it.first -= 1;
    plan.tensors[i].addr = off;
  }
  for (int j = 0; j < L; ++j) plan.work_base[j] = items[j].addr;
  // Weight slots, in layer order, each from the earliest step that leaves it room.
  plan.weights_from.assign(L, -1);
  plan.weights_addr.assign(L, 0);
  plan.weight_occupancy.assign(L, 0);
  plan.weights_resident.assign(L, false);
  plan.weights_bytes.assign(L, 0);
  plan.lead_in.assign(L, false);
  for (int j = 0; j < L; ++j) plan.weights_bytes[j] = layers[j].const_bytes;
  std::vector<int> by_size(L);
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(),
                   [&](int a, int b) { return layers[a].const_bytes > layers[b].const_bytes; });
  for (int j : by_size) {
    const int64_t bytes = AlignUp(layers[j].const_bytes, al);
    if (!resident_weights || bytes == 0) continue;
    const int64_t off = Fit(items, bytes, 0, L - 1, sram_bytes, al, items.size());
    if (off < 0) continue;
    items.push_back({off, bytes, 0, L - 1, true});
    plan.weights_from[j] = 0;
    plan.weights_addr[j] = off;
    plan.weights_resident[j] = true;
    for (int s = 0; s < L; ++s) plan.weight_occupancy[s] += bytes;
  }
  if (stream_weights && lead_in_depth != 0)
    PlanLeadIns(layers, items, sram_bytes, al, sram_bytes / 8, std::abs(lead_in_depth), plan);
  int from = 0;
  for (int j = 1; stream_weights && j < L; ++j) {
    const int64_t bytes = AlignUp(layers[j].const_bytes, al);
    if (bytes == 0 || plan.weights_resident[j] || plan.lead_in[j]) continue;
    for (int p = from; p < j; ++p) {
      const int64_t off = Fit(items, bytes, p, j, sram_bytes, al, items.size());
      if (off < 0) continue;
      items.push_back({off, bytes, p, j, true});
      plan.weights_from[j] = from = p;
      plan.weights_addr[j] = off;
      for (int s = p; s <= j; ++s) plan.weight_occupancy[s] += bytes;
      break;
    }
  }
  if (stream_weights && lead_in_depth > 0) PlanLeadIns(layers, items, sram_bytes, al, 1, 1, plan);
  plan.occupancy.assign(L, 0);
  for (int s = 0; s < L; ++s)
    for (size_t k = 0; k < L + tensors.size(); ++k)
      if (items[k].placed && items[k].first <= s && items[k].last >= s) plan.occupancy[s] += items[k].bytes;
  return plan;
}

std::string FormatSramPlan(const SramPlan& plan, const std::vector<SramPlanLayer>& layers,
                           const std::vector<SramPlanTensor>& tensors) {
  std::string s = fmt::format("SRAM plan ({} B): per layer, occupancy (# working tiles + resident tensors, w weight "
                              "slots of the coming layers)\n",
                              plan.sram_bytes);
  const int L = static_cast<int>(layers.size());
  for (int j = 0; j < L; ++j) {
    const int width = 24;
    const int filled = plan.sram_bytes ? static_cast<int>(width * plan.occupancy[j] / plan.sram_bytes) : 0;
    std::string resident;
    for (size_t i = 0; i < tensors.size(); ++i)
      if (plan.tensors[i].in_sram && tensors[i].first <= j && tensors[i].last >= j)
        resident += (resident.empty() ? "" : ", ") + tensors[i].name;
    const int64_t held = plan.weight_occupancy.empty() ? 0 : plan.weight_occupancy[j];
    const int wfilled = plan.sram_bytes ? static_cast<int>(width * held / plan.sram_bytes) : 0;
    const std::string bar = std::string(std::min(filled, width), '#') +
                            std::string(std::max(0, std::min(wfilled, width - filled)), 'w');
    const std::string slot = plan.weights_from.empty() || plan.weights_from[j] < 0
                                 ? std::string()
                                 : plan.weights_resident[j]
                                 ? fmt::format("  weights @0x{:x} resident between calls", plan.weights_addr[j])
                                 : j < static_cast<int>(plan.lead_in.size()) && plan.lead_in[j]
                                 ? fmt::format("  weights @0x{:x} from layer {} (lead-in: {} of {} B)", plan.weights_addr[j],
                                               plan.weights_from[j], plan.weights_bytes[j], layers[j].const_bytes)
                                 : fmt::format("  weights @0x{:x} from layer {}", plan.weights_addr[j],
                                               plan.weights_from[j]);
    s += fmt::format("  {:>3} {:<32} [{:<{}}] {:>8} B  tiles {:>7} B @0x{:x}{}{}  resident: {}\n", j,
                     layers[j].name.substr(0, 32), bar, width, plan.occupancy[j] + held, layers[j].work_bytes,
                     plan.work_base[j], plan.prefetch[j] ? " prefetch" : "", slot, resident.empty() ? "-" : resident);
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const SramPlan::Tensor& t = plan.tensors[i];
    s += fmt::format("  {:<40} {:>8} B  {}{}\n", tensors[i].name.substr(0, 40), tensors[i].bytes,
                     t.in_sram ? fmt::format("sram @0x{:x}, ", t.addr) : "dram: ", t.reason);
  }
  return s;
}

}  // namespace edgec::npu
