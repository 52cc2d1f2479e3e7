// The placement graph's layout and drawing (report/placement_graph.h): layers by the longest
// path, copies where an edge changes unit, chains collapsed only in large graphs and only
// where each node is the only consumer of the one before, every node in exactly one box.
#include <gtest/gtest.h>

#include <string>

#include "report/placement_graph.h"

namespace edgec::report {
namespace {

Profile Graph(const std::vector<std::string>& units, const std::vector<std::pair<int, int>>& edges) {
  Profile p;
  for (size_t i = 0; i < units.size(); ++i) {
    OpProfile o;
    o.node = "n" + std::to_string(i);
    o.op = "Op" + std::to_string(i % 3);
    o.unit = units[i];
    if (o.unit == "cpu") o.reason = "unsupported op Op" + std::to_string(i % 3);
    (o.unit == "npu" ? p.npu_nodes : p.cpu_nodes)++;
    p.ops.push_back(o);
  }
  p.edges = edges;
  return p;
}

TEST(PlacementGraph, DiamondLayersAndCopies) {
  // a(cpu) -> b, c (npu) -> d (npu); a also -> d (a skip edge).
  const Profile p = Graph({"cpu", "npu", "npu", "npu"}, {{0, 1}, {0, 2}, {1, 3}, {2, 3}, {0, 3}, {0, 3}});
  const GraphLayout g = LayoutPlacementGraph(p);
  ASSERT_EQ(g.boxes.size(), 4u);
  EXPECT_EQ(g.layers, 3);
  EXPECT_EQ(g.boxes[0].layer, 0);
  EXPECT_EQ(g.boxes[1].layer, 1);
  EXPECT_EQ(g.boxes[2].layer, 1);
  EXPECT_EQ(g.boxes[3].layer, 2);
  EXPECT_NE(g.boxes[1].slot, g.boxes[2].slot);
  ASSERT_EQ(g.edges.size(), 5u);  // the repeated a -> d once
  int copies = 0;
  for (const GraphEdge& e : g.edges) copies += e.copy;
  EXPECT_EQ(copies, 3);
  const std::string svg = PlacementGraphSvg(p, 1180);
  EXPECT_NE(svg.find("data-nodes=\"4\" data-boxes=\"4\" data-edges=\"5\" data-copies=\"3\""), std::string::npos);
  EXPECT_NE(svg.find("n0 (Op0) on cpu: unsupported op Op0"), std::string::npos);
  int drawn = 0;
  for (size_t at = svg.find("<path class=\"edge copy\""); at != std::string::npos; at = svg.find("<path class=\"edge copy\"", at + 1))
    ++drawn;
  EXPECT_EQ(drawn, 3);
}

TEST(PlacementGraph, LongChainsCollapseOnlyInLargeGraphs) {
  const int n = kCollapseAbove + 10;
  std::vector<std::string> units(n, "npu");
  units[60] = "cpu";
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i + 1 < n; ++i) edges.push_back({i, i + 1});
  edges.push_back({99, 101});  // 99 feeds two nodes and 101 has two producers: the chain breaks there
  const GraphLayout g = LayoutPlacementGraph(Graph(units, edges));
  // Boxes: 0..59, 60 (cpu), 61..99, 100, 101..end.
  ASSERT_EQ(g.boxes.size(), 5u);
  EXPECT_EQ(g.boxes[0].ops.size(), 60u);
  EXPECT_EQ(g.boxes[1].ops, std::vector<int>{60});
  EXPECT_EQ(g.boxes[2].ops.front(), 61);
  EXPECT_EQ(g.boxes[2].ops.back(), 99);
  EXPECT_EQ(g.boxes[3].ops, std::vector<int>{100});
  EXPECT_EQ(g.boxes[4].ops.front(), 101);
  EXPECT_EQ(g.boxes[4].ops.size(), static_cast<size_t>(n - 101));
  std::vector<int> seen(n, 0);
  for (const GraphBox& b : g.boxes)
    for (int i : b.ops) seen[i]++;
  for (int i = 0; i < n; ++i) EXPECT_EQ(seen[i], 1) << i;
  EXPECT_EQ(g.edges.size(), 5u);  // 0-59 > 60 > 61-99 > 100 > 101-, and 61-99 > 101-
  EXPECT_EQ(g.layers, 5);
  // The same chain below the threshold: a box per node.
  std::vector<std::pair<int, int>> short_edges;
  for (int i = 0; i + 1 < 50; ++i) short_edges.push_back({i, i + 1});
  EXPECT_EQ(LayoutPlacementGraph(Graph(std::vector<std::string>(50, "npu"), short_edges)).boxes.size(), 50u);
}

}  // namespace
}  // namespace edgec::report
