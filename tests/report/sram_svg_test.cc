// The SRAM plots: a segment's plan becomes per-layer bars of working tiles, tensors kept on
// chip (only at the steps they live) and the rest of the occupancy; the sweep plot marks the
// first value where nothing spills.
#include <gtest/gtest.h>

#include "report/sram_svg.h"

namespace edgec::report {
namespace {

TEST(SramSvgTest, StepsSplitOccupancyIntoTilesResidentAndRest) {
  artifact_io::Segment s;
  s.layer_plan = {{"a", 0, 100, 100, false}, {"b", 0, 50, 350, true}, {"c", 0, 80, 130, false}};
  s.sram_plan = {{"x", true, 200, 200, 0, 1, ""}, {"y", false, 0, 999, 1, 2, "spilled"}, {"z", true, 500, 50, 1, 2, ""}};
  const std::vector<SramStep> st = SramSteps(s);
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[0].tiles, 100);
  EXPECT_EQ(st[0].resident, 200);  // x lives over 0..1; y is not on chip
  EXPECT_EQ(st[0].other, 0);       // occupancy below tiles + resident: nothing else
  EXPECT_EQ(st[1].resident, 250);
  EXPECT_EQ(st[1].other, 50);  // 350 - 50 - 250: the next layer's tiles placed early
  EXPECT_EQ(st[2].resident, 50);
  const std::string svg = SramOccupancySvg("t <&>", st, 400);
  EXPECT_NE(svg.find("t &lt;&amp;&gt;"), std::string::npos);
  EXPECT_NE(svg.find("SRAM 400 B"), std::string::npos);
  EXPECT_EQ(svg.rfind("</svg>"), svg.size() - 7);
}

TEST(SramSvgTest, SweepMarksWhereActivationsFit) {
  const std::vector<SweepPoint> pts = {{"256K", 1.5, 3000000}, {"1M", 0.8, 400000}, {"2M", 0.6, 0}, {"4M", 0.5, 0}};
  const std::string svg = SweepSvg("shared_sram.bytes", "r", pts);
  const size_t mark = svg.find("activations fit");
  ASSERT_NE(mark, std::string::npos);
  EXPECT_EQ(svg.find("activations fit", mark + 1), std::string::npos);  // once, at the first value without spills
  // The marker's x is the third point's.
  const size_t c3 = svg.find("<circle", svg.find("<circle", svg.find("<circle") + 1) + 1);
  const std::string cx = svg.substr(svg.find("cx=\"", c3) + 4, 5);
  const std::string lx = svg.substr(svg.rfind("x1=\"", mark) + 4, 5);
  EXPECT_EQ(cx, lx);
  const std::string shape_only = SweepSvg("f", "r", {{"a", 1, -1}, {"b", 2, -1}});
  EXPECT_EQ(shape_only.find("spilled"), std::string::npos);
}

}  // namespace
}  // namespace edgec::report
