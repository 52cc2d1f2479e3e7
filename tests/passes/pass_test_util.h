// Helpers of the pass tests: build small graphs, run a pipeline, count ops, and the
// differential check (before and after on the reference executor with seeded inputs).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ir/infer.h"
#include "passes/pass.h"
#include "runtime/reference_executor.h"

namespace edgec::testing_passes {

// Runs a pipeline ("fuse-conv-bn" or "a,b,c") with verify_each and constant folding's
// evaluator; the context is returned for its statistics.
inline StatusOr<passes::PassContext> RunPasses(Graph& g, const std::string& pipeline, bool explain = false) {
  ASSIGN_OR_RETURN(passes::Pipeline p, passes::ParsePipeline(pipeline));
  passes::PassContext ctx;
  ctx.verify_each = true;
  ctx.explain = explain;
  ctx.evaluator = EvaluateNode;
  RETURN_IF_ERROR(passes::RunPipeline(g, p, ctx));
  return ctx;
}

inline int CountOp(const Graph& g, OpKind op) {
  auto nodes = g.nodes();  // nodes() returns a copy: iterate one of them
  return static_cast<int>(std::count_if(nodes.begin(), nodes.end(),
                                        [&](const Node* n) { return n->op() == op; }));
}

// The ops of the graph in topological order: "Conv,Relu".
inline std::string OpSequence(const Graph& g) {
  std::string s;
  for (const Node* n : g.nodes()) s += (s.empty() ? "" : ",") + std::string(OpName(n->op()));
  return s;
}

// The only node of kind op (fails the test when there is not exactly one).
inline const Node* OnlyNode(const Graph& g, OpKind op) {
  const Node* found = nullptr;
  int count = 0;
  for (const Node* n : g.nodes()) {
    if (n->op() == op) found = n, ++count;
  }
  EXPECT_EQ(count, 1) << "nodes of " << OpName(op) << " in\n" << PrintGraph(g);
  return found;
}

// Seeded N(0, 1) values (or uniform [lo, hi) when lo < hi) as a constant tensor.
inline Tensor RandomTensor(DType dt, Dims dims, uint32_t seed, double lo = 0, double hi = 0) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(lo, hi);
  Tensor t(dt, std::move(dims));
  for (int64_t i = 0; i < t.numel(); ++i) StoreFromDouble(dt, t.raw(), i, lo < hi ? uniform(rng) : normal(rng));
  return t;
}

// Runs `before` and `after` on the same seeded inputs and requires every output to agree
// within rtol of the output's largest magnitude.
inline void ExpectSameOutputs(const Graph& before, const Graph& after, double rtol = 1e-5,
                              uint64_t seed = 7) {
  auto inputs = RandomInputs(before, seed);
  auto want = ReferenceExecutor(before).Run(inputs);
  ASSERT_TRUE(want.ok()) << want.status().message();
  auto got = ReferenceExecutor(after).Run(inputs);
  ASSERT_TRUE(got.ok()) << got.status().message() << "\n" << PrintGraph(after);
  ASSERT_EQ(want->size(), got->size());
  for (size_t i = 0; i < want->size(); ++i) {
    const Tensor& w = (*want)[i];
    const Tensor& g = (*got)[i];
    ASSERT_EQ(w.TypeString(), g.TypeString()) << "output " << i;
    const auto a = w.ToDoubleVector(), b = g.ToDoubleVector();
    double scale = 1e-6;
    for (double v : a) scale = std::max(scale, std::fabs(v));
    double worst = 0;
    for (size_t k = 0; k < a.size(); ++k) {
      const double d = std::fabs(a[k] - b[k]);
      worst = std::max(worst, std::isnan(d) ? INFINITY : d);
    }
    EXPECT_LE(worst / scale, rtol) << "output " << i << " (" << before.outputs()[i]->name()
                                   << "): max error " << worst << " at scale " << scale;
  }
}

// Runs `pipeline` (with explanations) on a copy of g, checks it against g on the reference
// executor and returns it; ctx_out, when given, receives the pipeline's context.
inline Graph Optimized(const Graph& g, const std::string& pipeline, passes::PassContext* ctx_out = nullptr,
                       double rtol = 1e-5) {
  Graph after = g.Clone();
  auto ctx = RunPasses(after, pipeline, /*explain=*/true);
  EXPECT_TRUE(ctx.ok()) << ctx.status().message();
  if (ctx.ok() && ctx_out) *ctx_out = *ctx;
  ExpectSameOutputs(g, after, rtol);
  return after;
}

// How often pattern `key` rewrote over every pass of the pipeline.
inline int64_t Rewrites(const passes::PassContext& ctx, const std::string& key) {
  int64_t n = 0;
  for (const auto& r : ctx.records()) {
    auto it = r.stats.rewrites.find(key);
    if (it != r.stats.rewrites.end()) n += it->second;
  }
  return n;
}

// Whether an explanation of the pipeline contains `text`.
inline bool ExplainedAs(const passes::PassContext& ctx, const std::string& text) {
  for (const std::string& e : ctx.explanations()) {
    if (e.find(text) != std::string::npos) return true;
  }
  return false;
}

// Attributes from {name, value} pairs.
inline Attributes A(std::initializer_list<std::pair<std::string, AttrValue>> list) {
  Attributes a;
  for (auto& [k, v] : list) a.Set(k, v);
  return a;
}

// Whether node n's provenance names every one of `names`.
inline bool HasProvenance(const Node* n, const std::vector<std::string>& names) {
  for (const std::string& s : names) {
    if (std::find(n->provenance.begin(), n->provenance.end(), s) == n->provenance.end()) return false;
  }
  return true;
}

}  // namespace edgec::testing_passes
