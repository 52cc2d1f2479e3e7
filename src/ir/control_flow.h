// Control-flow nodes (If, Loop, Scan, SequenceMap) and their subgraphs.
//
// A subgraph is a Graph held in a node attribute (then_branch/else_branch, body). Its values
// from the enclosing scope are explicit: the importer gives each outer value a subgraph
// reads (a capture) a graph input of the subgraph, after the op's own inputs, and the node
// an input for it, in the same order. So use lists, liveness, dead-code removal and the
// topological order of the enclosing graph see every value a subgraph reads, and a subgraph
// runs on its inputs alone. Both branches of an If have the same capture inputs.
//
//   node inputs:     [op inputs (ONNX's)...,          captures...]
//   subgraph inputs: [the op's subgraph inputs...,    captures...]
//
// The attribute kCapturesAttr counts the captures; the exporter turns them back into outer
// scope references (tests/frontend/control_flow_test.cc: CapturesRoundTrip).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace edgec {

constexpr const char* kCapturesAttr = "edgec_captures";

inline bool IsControlFlow(OpKind op) {
  return op == OpKind::kIf || op == OpKind::kLoop || op == OpKind::kScan || op == OpKind::kSequenceMap;
}

// The number of trailing node inputs that are captures.
inline int NumCaptures(const Attributes& a) { return static_cast<int>(a.GetInt(kCapturesAttr, 0)); }

// The subgraph attributes of a node, by attribute name (empty for other ops).
inline std::vector<std::pair<std::string, const Graph*>> Subgraphs(const Attributes& a) {
  std::vector<std::pair<std::string, const Graph*>> v;
  for (const auto& [k, x] : a.map()) {
    if (auto* g = std::get_if<SubgraphPtr>(&x); g && *g) v.push_back({k, g->get()});
  }
  return v;
}

}  // namespace edgec
