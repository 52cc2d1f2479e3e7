// The pattern rewriter: a pattern is anchored at nodes of some op kinds and either rewrites
// the graph there (returns true) or says why it did not match (returns false and sets
// *why). ApplyPatterns runs every pattern at every anchor to a fixpoint, with a cap, and
// under --explain records the reasons of the final round (what still does not match).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "passes/pass.h"

namespace edgec::passes {

struct Pattern {
  std::string name;              // "Conv+BatchNormalization": also the statistics key
  std::vector<OpKind> anchors;   // op kinds the pattern is tried at
  std::function<bool(Graph& g, Node* at, PassContext& ctx, std::string* why)> apply;
};

// Every successful rewrite is counted in ctx.stats().rewrites[pattern.name]; dead nodes
// are removed after each one. Fails when `max_rewrites` is exceeded (a pattern that keeps
// matching its own output).
Status ApplyPatterns(Graph& g, const std::vector<Pattern>& patterns, PassContext& ctx,
                     int max_rewrites = 100000);

}  // namespace edgec::passes
