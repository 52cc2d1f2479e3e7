#include "quant/layer_compare.h"

#include <cmath>
#include <set>

#include "runtime/reference_executor.h"

namespace edgec::quant {
namespace {

// source name -> (topological index, node) of the last node whose provenance holds it.
std::map<std::string, std::pair<int, const Node*>> LastBySource(const Graph& g) {
  std::map<std::string, std::pair<int, const Node*>> m;
  int i = 0;
  for (const Node* n : g.nodes()) {
    for (const std::string& s : n->provenance) m[s] = {i, n};
    if (n->provenance.empty()) m[n->name()] = {i, n};
    ++i;
  }
  return m;
}

StatusOr<std::map<const Node*, Tensor>> RunAndKeep(const Graph& g, const std::set<const Node*>& keep,
                                                   const std::map<std::string, Tensor>& inputs,
                                                   const char* which) {
  std::map<const Node*, Tensor> out;
  ReferenceExecutor ex(g);
  ex.set_node_hook([&](const Node& n, const std::vector<Tensor>& outs) {
    if (keep.count(&n) && !outs.empty() && outs[0].dtype() == DType::kF32) out[&n] = outs[0].Clone();
  });
  auto r = ex.Run(inputs);
  if (!r.ok()) return r.status().WithContext(which);
  return out;
}

}  // namespace

StatusOr<LayerComparison> CompareLayers(const Graph& a, const Graph& b,
                                        const std::map<std::string, Tensor>& inputs, double jump_db) {
  const auto a_last = LastBySource(a);
  // Each f32-producing B node, in order, claims the A node where its latest source ends;
  // a later B node for the same A node (the DQ after a Q, the Relu after a Conv) wins.
  std::map<const Node*, const Node*> pairs;  // A node -> B node
  std::set<const Node*> keep_a, keep_b;
  for (const Node* bn : b.nodes()) {
    if (bn->num_outputs() == 0 || bn->output(0)->type.dtype != DType::kF32) continue;
    const std::vector<std::string> prov =
        bn->provenance.empty() ? std::vector<std::string>{bn->name()} : bn->provenance;
    const Node* best = nullptr;
    int best_index = -1;
    for (const std::string& s : prov) {
      auto it = a_last.find(s);
      if (it != a_last.end() && it->second.first > best_index) best_index = it->second.first, best = it->second.second;
    }
    if (best) pairs[best] = bn;
  }
  // Graph outputs pair by position whatever the provenance says: a rewrite may leave B's
  // last nodes no name in common with A's (LayerCompare.OutputsPairByPosition).
  for (size_t i = 0; i < a.outputs().size() && i < b.outputs().size(); ++i) {
    const Value* ao = a.outputs()[i];
    const Value* bo = b.outputs()[i];
    const Node* an = ao->producer();
    const Node* bn = bo->producer();
    if (an && bn && an->output(0) == ao && bn->output(0) == bo && bo->type.dtype == DType::kF32) pairs[an] = bn;
  }
  for (auto& [an, bn] : pairs) keep_a.insert(an), keep_b.insert(bn);
  ASSIGN_OR_RETURN(auto a_out, RunAndKeep(a, keep_a, inputs, "model A"));
  ASSIGN_OR_RETURN(auto b_out, RunAndKeep(b, keep_b, inputs, "model B"));

  LayerComparison result;
  for (const Node* an : a.nodes()) {
    auto p = pairs.find(an);
    if (p == pairs.end()) continue;
    auto ta = a_out.find(an);
    auto tb = b_out.find(p->second);
    if (ta == a_out.end() || tb == b_out.end() || ta->second.dims() != tb->second.dims()) continue;
    LayerError e;
    e.source = an->provenance.empty() ? an->name() : an->provenance.back();
    e.a_value = an->output(0)->name();
    e.b_value = p->second->output(0)->name();
    e.b_op = std::string(OpName(p->second->op()));
    const float* x = ta->second.data<float>();
    const float* y = tb->second.data<float>();
    double dot = 0, xx = 0, yy = 0, err = 0;
    e.elements = ta->second.numel();
    for (int64_t i = 0; i < e.elements; ++i) {
      const double d = static_cast<double>(x[i]) - y[i];
      dot += static_cast<double>(x[i]) * y[i], xx += static_cast<double>(x[i]) * x[i], yy += static_cast<double>(y[i]) * y[i];
      err += d * d;
      e.max_abs = std::max(e.max_abs, std::abs(d));
    }
    e.cosine = xx > 0 && yy > 0 ? dot / std::sqrt(xx * yy) : (xx == yy ? 1.0 : 0.0);
    e.sqnr_db = err > 0 ? 10 * std::log10(xx / err) : INFINITY;
    result.layers.push_back(e);
  }
  for (size_t i = 1; i < result.layers.size(); ++i) {
    const double prev = result.layers[i - 1].sqnr_db, cur = result.layers[i].sqnr_db;
    if (std::isfinite(cur) && (!std::isfinite(prev) ? cur < 60 : cur < prev - jump_db)) {
      result.layers[i].jump = true;
      result.first_jump = static_cast<int>(i);
      break;
    }
  }
  if (result.first_jump < 0 && !result.layers.empty() && std::isfinite(result.layers[0].sqnr_db) &&
      result.layers[0].sqnr_db < 60) {
    result.layers[0].jump = true;
    result.first_jump = 0;
  }
  return result;
}

}  // namespace edgec::quant
