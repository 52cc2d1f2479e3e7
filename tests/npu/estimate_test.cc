// Shape-only estimates: decoder configs, parameter counts, FP16 vs INT8 weight streaming.
#include <gtest/gtest.h>

#include <map>

#include "npu/estimate.h"

namespace edgec::npu {
namespace {

TEST(NpuEstimateTest, DecoderConfigs) {
  auto c = ParseDecoderConfig("7b");
  ASSERT_TRUE(c.ok());
  // LLaMA-7B: 6.74 B parameters.
  EXPECT_NEAR(c->parameters() / 1e9, 6.74, 0.01);
  auto custom = ParseDecoderConfig("layers=4,hidden=512,heads=8,ffn=2048,seq=16,context=64");
  ASSERT_TRUE(custom.ok()) << custom.status().ToString();
  EXPECT_EQ(custom->layers, 4);
  EXPECT_EQ(custom->kv_heads, 8);
  EXPECT_EQ(custom->vocab, 32000);  // unnamed keys keep the 7b values
  EXPECT_NE(ParseDecoderConfig("layers=4,depth=3").status().message().find("unknown key 'depth'"), std::string::npos);
  EXPECT_NE(ParseDecoderConfig("hidden=x").status().message().find("hidden must be a positive integer"),
            std::string::npos);
  EXPECT_NE(ParseDecoderConfig("hidden=100,heads=3").status().message().find("not a multiple"), std::string::npos);
  const std::vector<RepeatedLayer> layers = DecoderLayers(*custom);
  int64_t weights = 0;
  for (const auto& l : layers)
    if (l.layer.name.find("attn.scores") == std::string::npos && l.layer.name.find("attn.context") == std::string::npos)
      weights += l.count * l.layer.k() * l.layer.n();
  // Every projection and the LM head (the embedding table is not a matmul).
  EXPECT_EQ(weights, custom->parameters() - int64_t{custom->vocab} * custom->hidden);
}

TEST(NpuEstimateTest, Fp16StreamsTwiceTheWeights) {
  auto c = ParseDecoderConfig("layers=2,hidden=512,heads=8,ffn=1024,seq=1,context=128,vocab=1000");
  ASSERT_TRUE(c.ok());
  auto int8 = EstimateModel(DecoderLayers(*c), DefaultTarget());
  c->fp16 = true;
  auto fp16 = EstimateModel(DecoderLayers(*c), DefaultTarget());
  ASSERT_TRUE(int8.ok() && fp16.ok()) << int8.status().ToString() << fp16.status().ToString();
  EXPECT_EQ(fp16->weight_bytes, 2 * int8->weight_bytes);
  EXPECT_EQ(fp16->total.macs, int8->total.macs);
  EXPECT_GT(fp16->total.dram_read, int8->total.dram_read * 19 / 10);
  // Decode (seq 1) is weight streaming: each pass at least its bytes / bandwidth, and the
  // FP16 - INT8 difference is at least the extra bytes / bandwidth minus the fixed costs.
  const Target& t = DefaultTarget();
  EXPECT_GE(int8->total.cycles, int8->weight_bytes / t.dram_bytes_per_cycle());
  EXPECT_GE(fp16->total.cycles - int8->total.cycles, 0.8 * int8->weight_bytes / t.dram_bytes_per_cycle());
  EXPECT_GE(int8->total.cycles, int8->total.roofline_cycles(t));
  // The seed's arithmetic: 3.5 GB at 30 GB/s is about 117 ms.
  EXPECT_NEAR(3.5e9 / t.dram.bandwidth_bytes_per_s * 1e3, 116.7, 0.1);
}

TEST(NpuEstimateTest, GemmTrafficAgainstTheSqrtSramBound) {
  // The tiler minimizes cycles (then traffic within 3%). Its DRAM traffic on a GEMM stays
  // within 2x of the lower bound max(compulsory, 2*M*N*K / sqrt(SRAM)) (Hong and Kung): the
  // layer is memory-bound, and teams of cores share one copy of each operand block in the
  // SRAM, so a block of output tiles as large as all the cores' accumulators together is
  // computed from one load of its input rows and weight columns.
  const ConvLayer l = ConvLayer::MatMul("gemm", 512, 1024, 1024);
  std::map<std::string, double> traffic;
  for (const char* sram : {"256K", "512K", "1M", "2M", "4M"}) {
    auto t = ApplyOverride(DefaultTarget(), std::string("shared_sram.bytes=") + sram);
    ASSERT_TRUE(t.ok());
    auto c = ChooseTiling(l, *t);
    ASSERT_TRUE(c.ok()) << c.status().ToString();
    traffic[sram] = c->stats.dram_read + c->stats.dram_written;
    const double compulsory = l.m() * l.k() + l.k() * l.n() + l.m() * l.n();
    const double bound = std::max(compulsory, 2.0 * l.m() * l.n() * l.k() / std::sqrt(double(t->shared_sram.bytes)));
    std::printf("SRAM %s: traffic %.2f MB, bound %.2f MB (%.2fx), %s\n", sram, traffic[sram] / 1e6, bound / 1e6,
                traffic[sram] / bound, c->best.tiling.ToString().c_str());
    EXPECT_GE(traffic[sram], compulsory);
    EXPECT_LE(traffic[sram], 2 * bound) << sram << " " << c->best.tiling.ToString();
  }
  EXPECT_LT(traffic["1M"], traffic["256K"]);
}

}  // namespace
}  // namespace edgec::npu
