// The placement graph of a profile drawn as SVG (the HTML report's "Placement" section): every
// node a box coloured by its unit, every tensor between two nodes an edge, the edges that
// cross between the CPU and the NPU (a copy at run time) dashed red with a marker, each
// node's placement reason in its box's <title> (hover).
//
// Layout (layered, drawn here, no scripts): a node's layer is one more than its producers'
// deepest (longest path from the inputs); layers are columns read left to right, wrapped
// into bands the width of the page like lines of text; within a column nodes are ordered by
// the mean position of their producers (barycentre), so that chains stay level. An edge in
// its band is a curve to the next column or, when it skips columns, runs above the band's
// first row; an edge to a later band runs right of its source, along the gap below the
// source's band and down to its target. Graphs of more than kCollapseAbove nodes have
// their chains collapsed: consecutive nodes on one unit where each is the only consumer of
// the one before and has no other producer become one box ("k ops", every member's name and
// reason in its title). Checked in headless Chromium by tests/report/html_render_test.py
// (boxes account for every node, edges and copies drawn) and by
// tests/report/placement_graph_test.cc (layers, collapse, copies).
#pragma once

#include <string>
#include <vector>

#include "report/profile.h"

namespace edgec::report {

inline constexpr int kCollapseAbove = 120;

// The layout's boxes, for tests: each box's member ops (indices into p.ops), its column and
// position in the column, and the edges between boxes (from, to, crosses units).
struct GraphBox {
  std::vector<int> ops;
  int layer = 0, slot = 0;
};
struct GraphEdge {
  int from = 0, to = 0;
  bool copy = false;
};
struct GraphLayout {
  std::vector<GraphBox> boxes;
  std::vector<GraphEdge> edges;
  int layers = 0;
};
GraphLayout LayoutPlacementGraph(const Profile& p);

std::string PlacementGraphSvg(const Profile& p, int width);

}  // namespace edgec::report
