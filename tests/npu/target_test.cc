// Target description: the built-in default equals DESIGN.md and targets/edge-default.json,
// strict parsing (unknown/missing/impossible fields name the field), overrides with units.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "npu/target.h"

namespace edgec::npu {
namespace {

std::string RepoFile(const std::string& rel) {
  for (const char* prefix : {"", "../", "../../"}) {
    std::ifstream in(std::string(prefix) + rel);
    if (in) {
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    }
  }
  return "";
}

TEST(TargetTest, DefaultHasDesignValues) {
  const Target& t = DefaultTarget();
  EXPECT_EQ(t.name, "edge-default");
  EXPECT_EQ(t.clock_hz, 1e9);
  EXPECT_EQ(t.ai_cores.count, 16);
  EXPECT_EQ(t.macs_per_core(), 4096);
  EXPECT_EQ(t.ai_cores.mac_rows, 128);
  EXPECT_EQ(t.ai_cores.mac_cols, 32);
  EXPECT_EQ(t.vector_cores.count, 4);
  EXPECT_EQ(t.vector_cores.lanes, 64);
  EXPECT_EQ(t.shared_sram.bytes, 2 * 1024 * 1024);
  EXPECT_EQ(t.dram.bandwidth_bytes_per_s, 30e9);
  EXPECT_EQ(t.dram.read_latency_cycles, 500);
  EXPECT_EQ(t.dram.burst_bytes, 128);
  EXPECT_EQ(t.dma.max_dims, 3);
  EXPECT_EQ(t.channel_alignment, 16);
  // 16 x 4096 MACs x 1 GHz x 2 ops = 131 TOPS.
  EXPECT_NEAR(t.tops_int8(), 131.072, 1e-9);
  EXPECT_EQ(t.dram_bytes_per_cycle(), 30.0);
}

TEST(TargetTest, RepositoryFileMatchesBuiltIn) {
  const std::string text = RepoFile("targets/edge-default.json");
  ASSERT_FALSE(text.empty()) << "targets/edge-default.json not found from the test's directory";
  auto t = ParseTargetText(text, "edge-default.json");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(TargetToJson(*t), TargetToJson(DefaultTarget()));
}

TEST(TargetTest, AllRepositoryTargetsParseAndDiffer) {
  for (const char* name : {"edge-mcu", "edge-large"}) {
    const std::string text = RepoFile(std::string("targets/") + name + ".json");
    ASSERT_FALSE(text.empty()) << name;
    auto t = ParseTargetText(text, name);
    ASSERT_TRUE(t.ok()) << t.status().ToString();
    EXPECT_EQ(t->name, name);
    EXPECT_NE(TargetToJson(*t), TargetToJson(DefaultTarget()));
  }
  auto mcu = ParseTargetText(RepoFile("targets/edge-mcu.json"), "mcu");
  ASSERT_TRUE(mcu.ok());
  EXPECT_EQ(mcu->shared_sram.bytes, 256 * 1024);
}

TEST(TargetTest, RoundTripsThroughJson) {
  auto t = ParseTarget(TargetToJson(DefaultTarget()), "x");
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(TargetToJson(*t), TargetToJson(DefaultTarget()));
}

std::string ErrorFor(nlohmann::json j) {
  auto t = ParseTarget(j, "my.json");
  return t.ok() ? "" : t.status().message();
}

TEST(TargetTest, ErrorsNameFileAndField) {
  const nlohmann::json base = TargetToJson(DefaultTarget());
  nlohmann::json j = base;
  j["shared_sram"]["bytes"] = 0;
  EXPECT_EQ(ErrorFor(j), "my.json: shared_sram.bytes: must be >= 1, got 0");
  j = base;
  j["ai_cores"].erase("mac_rows");
  EXPECT_EQ(ErrorFor(j), "my.json: ai_cores.mac_rows: missing field");
  j = base;
  j["dram"]["colour"] = "blue";
  EXPECT_EQ(ErrorFor(j), "my.json: dram.colour: unknown field");
  j = base;
  j["clock_hz"] = -1;
  EXPECT_EQ(ErrorFor(j), "my.json: clock_hz: must be > 0, got -1");
  j = base;
  j["ai_cores"]["count"] = "many";
  EXPECT_NE(ErrorFor(j).find("ai_cores.count: must be an integer"), std::string::npos);
  j = base;
  j["ai_cores"]["dataflow"] = "row_stationary";
  EXPECT_NE(ErrorFor(j).find("ai_cores.dataflow"), std::string::npos);
  j = base;
  j["vector_cores"]["cycles_per_element"].erase("requantize");
  EXPECT_EQ(ErrorFor(j), "my.json: vector_cores.cycles_per_element.requantize: missing field");
  j = base;
  j["shared_sram"]["alignment"] = 48;
  EXPECT_NE(ErrorFor(j).find("shared_sram.alignment: must be a power of two"), std::string::npos);
  j = base;
  j["supported_ops"] = {"Conv", "Frobnicate"};
  EXPECT_NE(ErrorFor(j).find("unknown op 'Frobnicate'"), std::string::npos);
  EXPECT_NE(ParseTargetText("{", "broken.json").status().message().find("broken.json"),
            std::string::npos);
}

// vector_cores.dtype_rates: edge-default takes int16 at half rate, edge-mcu int8 only; the
// object is optional (absent: i8 only) and strict (unknown dtype, rate out of (0, 1], no i8).
TEST(TargetTest, DtypeRatesDeclareInt16PerUnit) {
  EXPECT_EQ(DefaultTarget().vector_cores.VecRate("i16"), 0.5);
  EXPECT_EQ(DefaultTarget().vector_cores.VecRate("i8"), 1.0);
  auto mcu = ParseTargetText(RepoFile("targets/edge-mcu.json"), "mcu");
  ASSERT_TRUE(mcu.ok());
  EXPECT_EQ(mcu->vector_cores.VecRate("i16"), 0.0);
  const nlohmann::json base = TargetToJson(DefaultTarget());
  nlohmann::json j = base;
  j["vector_cores"].erase("dtype_rates");
  auto absent = ParseTarget(j, "x");
  ASSERT_TRUE(absent.ok()) << absent.status().ToString();
  EXPECT_EQ(absent->vector_cores.dtype_rates, (std::map<std::string, double>{{"i8", 1.0}}));
  j = base;
  j["vector_cores"]["dtype_rates"]["i4"] = 2;
  EXPECT_EQ(ErrorFor(j), "my.json: vector_cores.dtype_rates.i4: unknown dtype (i8, u8, i16, f16, bf16, f32)");
  j = base;
  j["vector_cores"]["dtype_rates"]["i16"] = 0;
  EXPECT_EQ(ErrorFor(j), "my.json: vector_cores.dtype_rates.i16: must be a rate in (0, 1], got 0");
  j = base;
  j["vector_cores"]["dtype_rates"] = {{"i16", 0.5}};
  EXPECT_EQ(ErrorFor(j), "my.json: vector_cores.dtype_rates: must list i8 (the rates are relative to it)");
  auto slower = ApplyOverride(DefaultTarget(), "vector_cores.dtype_rates.i16=0.25");
  ASSERT_TRUE(slower.ok()) << slower.status().ToString();
  EXPECT_EQ(slower->vector_cores.VecRate("i16"), 0.25);
}

TEST(TargetTest, Quantities) {
  EXPECT_EQ(*ParseQuantity("256K"), 262144);
  EXPECT_EQ(*ParseQuantity("1M"), 1048576);
  EXPECT_EQ(*ParseQuantity("2MiB"), 2097152);
  EXPECT_EQ(*ParseQuantity("2GHz"), 2e9);
  EXPECT_EQ(*ParseQuantity("30GB/s"), 30e9);
  EXPECT_EQ(*ParseQuantity("1.5"), 1.5);
  EXPECT_FALSE(ParseQuantity("12parsecs").ok());
  EXPECT_FALSE(ParseQuantity("lots").ok());
}

TEST(TargetTest, Overrides) {
  auto t = ApplyOverrides(DefaultTarget(), {"shared_sram.bytes=512K", "clock_hz=2GHz",
                                            "dma.pad_on_load=false", "ai_cores.count=4",
                                            "dram.bandwidth_bytes_per_s=60GB/s"});
  ASSERT_TRUE(t.ok()) << t.status().ToString();
  EXPECT_EQ(t->shared_sram.bytes, 512 * 1024);
  EXPECT_EQ(t->clock_hz, 2e9);
  EXPECT_FALSE(t->dma.pad_on_load);
  EXPECT_EQ(t->ai_cores.count, 4);
  EXPECT_EQ(t->dram_bytes_per_cycle(), 30.0);
  auto cpe = ApplyOverride(DefaultTarget(), "vector_cores.cycles_per_element.add=3");
  ASSERT_TRUE(cpe.ok());
  EXPECT_EQ(cpe->vector_cores.cycles_per_element.at("add"), 3);

  auto e = ApplyOverride(DefaultTarget(), "shared_sram.size=1M");
  EXPECT_NE(e.status().message().find("unknown target field 'size'"), std::string::npos);
  e = ApplyOverride(DefaultTarget(), "shared_sram.bytes=0");
  EXPECT_NE(e.status().message().find("shared_sram.bytes: must be >= 1"), std::string::npos);
  e = ApplyOverride(DefaultTarget(), "ai_cores.count=1.5");
  EXPECT_FALSE(e.ok());
  e = ApplyOverride(DefaultTarget(), "shared_sram");
  EXPECT_FALSE(e.ok());
}

TEST(TargetTest, LoadByName) {
  auto t = LoadTarget("default");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->name, "edge-default");
  auto missing = LoadTarget("no-such-target");
  EXPECT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("no-such-target"), std::string::npos);
}

}  // namespace
}  // namespace edgec::npu
