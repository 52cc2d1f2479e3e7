// Compile diffs (report/compile_diff.h) and the placement report (partition::PlacementJson,
// pins): the same model compiled for a target with a much smaller SRAM is a regression the
// diff finds and ranks first; a compile against itself is none; pins move nodes and a pin the
// NPU cannot honour fails naming the node; every CPU node carries a code, a constraint and a hint.
#include <gtest/gtest.h>

#include "report/compile_diff.h"
#include "report_test_model.h"

namespace edgec::report {
namespace {

TEST(CompileDiff, SameCompileIsNoRegression) {
  Graph g = testing_report::IntegerCnn();
  auto a = testing_report::CompileAndLoad(g, npu::DefaultTarget(), "diff_a");
  ASSERT_TRUE(a);
  auto ra = MeasureStatic(a->loaded);
  ASSERT_TRUE(ra.ok()) << ra.status().ToString();
  EXPECT_GT(ra->seconds, 0);
  EXPECT_GT(ra->dram_bytes, 0);
  const CompileDiff d = DiffRuns(*ra, *ra, 0.01);
  EXPECT_FALSE(d.regression);
  EXPECT_TRUE(d.rows.empty());
}

TEST(CompileDiff, FindsThePlantedSmallerSram) {
  Graph g = testing_report::IntegerCnn();
  auto a = testing_report::CompileAndLoad(g, npu::DefaultTarget(), "diff_big");
  auto small = npu::ApplyOverrides(npu::DefaultTarget(), {"shared_sram.bytes=48K"});
  ASSERT_TRUE(small.ok()) << small.status().ToString();
  auto b = testing_report::CompileAndLoad(g, *small, "diff_small");
  ASSERT_TRUE(a && b);
  auto ra = MeasureStatic(a->loaded), rb = MeasureStatic(b->loaded);
  ASSERT_TRUE(ra.ok() && rb.ok());
  const CompileDiff d = DiffRuns(*ra, *rb, 0.01);
  EXPECT_TRUE(d.regression) << FormatDiff(d, "big", "small", 0);
  ASSERT_FALSE(d.rows.empty());
  // Sorted by impact, the largest change first.
  for (size_t i = 1; i < d.rows.size(); ++i) EXPECT_GE(std::abs(d.rows[i - 1].impact_s), std::abs(d.rows[i].impact_s));
  EXPECT_GT(d.rows[0].impact_s, 0) << FormatDiff(d, "big", "small", 0);
  // The other way round it is an improvement.
  EXPECT_FALSE(DiffRuns(*rb, *ra, 0.01).regression) << FormatDiff(DiffRuns(*rb, *ra, 0.01), "small", "big", 0);
  EXPECT_TRUE(DiffJson(d)["regression"].get<bool>());
}

TEST(PlacementReport, CodesConstraintsHintsAndPins) {
  Graph g = testing_report::IntegerCnn();
  auto mcu = npu::LoadTarget("edge-mcu");  // lists few ops: the softmax is unsupported there
  ASSERT_TRUE(mcu.ok()) << mcu.status().ToString();
  auto ps = partition::Partition(g, *mcu, testing_report::SlowCpu());
  ASSERT_TRUE(ps.ok()) << ps.status().ToString();
  const nlohmann::json j = partition::PlacementJson(*ps);
  ASSERT_EQ(j.size(), ps->size());
  bool unsupported = false;
  for (const auto& n : j) {
    ASSERT_TRUE(n.contains("code") && n.contains("unit") && n.contains("cost")) << n.dump();
    if (n["unit"] == "cpu") {
      EXPECT_TRUE(n.contains("hint")) << n.dump();
      EXPECT_TRUE(n.contains("violated")) << n.dump();
    }
    if (n["code"] == "unsupported_op") {
      EXPECT_EQ(n["violated"]["constraint"], "supported_ops");
      unsupported |= n["violated"]["actual"] == "Softmax";
    }
  }
  EXPECT_TRUE(unsupported) << j.dump(1);

  // Pins: a conv the cost rule sends to the NPU pinned to the CPU; an unsupported node pinned
  // to the NPU is an error naming it.
  std::string conv;
  for (const auto& p : *ps)
    if (p.unit == artifact_io::Unit::kNpu && p.node->op() == OpKind::kQLinearConv) conv = p.node->name();
  ASSERT_FALSE(conv.empty()) << partition::FormatPlacements(*ps);
  partition::PartitionOptions pin = testing_report::SlowCpu();
  pin.pins[conv] = artifact_io::Unit::kCpu;
  auto pinned = partition::Partition(g, *mcu, pin);
  ASSERT_TRUE(pinned.ok()) << pinned.status().ToString();
  for (const auto& p : *pinned)
    if (p.node->name() == conv) {
      EXPECT_EQ(p.unit, artifact_io::Unit::kCpu);
      EXPECT_EQ(p.code, partition::ReasonCode::kPinnedCpu);
    }
  std::string soft;
  for (const auto& p : *ps)
    if (p.code == partition::ReasonCode::kUnsupportedOp && p.actual == "Softmax") soft = p.node->name();
  partition::PartitionOptions bad = testing_report::SlowCpu();
  bad.pins[soft] = artifact_io::Unit::kNpu;
  auto refused = partition::Partition(g, *mcu, bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(soft), std::string::npos) << refused.status().message();
  partition::PartitionOptions unknown = testing_report::SlowCpu();
  unknown.pins["no_such_node"] = artifact_io::Unit::kCpu;
  EXPECT_FALSE(partition::Partition(g, *mcu, unknown).ok());
  // With a fast CPU some small legal nodes go to the CPU by cost: code, constraint, hint.
  partition::PartitionOptions fast;
  fast.cpu.int8_macs_per_s = 1e13;
  auto by_cost = partition::Partition(g, npu::DefaultTarget(), fast);
  ASSERT_TRUE(by_cost.ok());
  bool cheaper = false;
  for (const auto& p : *by_cost)
    if (p.code == partition::ReasonCode::kCpuCheaper) {
      cheaper = true;
      EXPECT_NE(p.hint.find("--pin"), std::string::npos) << p.hint;
      EXPECT_FALSE(p.allowed.empty());
    }
  EXPECT_TRUE(cheaper);
}

}  // namespace
}  // namespace edgec::report
