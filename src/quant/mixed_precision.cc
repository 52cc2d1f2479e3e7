#include "quant/mixed_precision.h"

#include <algorithm>
#include <cmath>

#include "passes/groupnorm_pattern.h"
#include "quant/exact_scale.h"

namespace edgec::quant {
namespace {

bool IsInt16Kind(OpKind op) {
  return op == OpKind::kSoftmax || op == OpKind::kLayerNormalization || op == OpKind::kInstanceNormalization;
}

// The input and output values a promoted node carries in int16.
std::pair<const Value*, const Value*> Ends(const Node* n) {
  if (n->op() == OpKind::kInstanceNormalization) {
    std::string why;
    if (auto m = passes::MatchGroupNorm(n, &why)) return {m->x, m->output};
  }
  return {n->input(0), n->output(0)};
}

}  // namespace

std::vector<const Node*> Int16Candidates(const Graph& prepared, const QuantizeOptions& o) {
  const std::vector<std::string> points = QuantizationPoints(prepared, o);
  const std::set<std::string> is_point(points.begin(), points.end());
  std::vector<const Node*> out;
  for (const Node* n : prepared.nodes()) {
    if (!IsInt16Kind(n->op()) || o.keep_float.count(n->name())) continue;
    const auto [in, y] = Ends(n);
    if (in && y && is_point.count(in->name()) && is_point.count(y->name())) out.push_back(n);
  }
  return out;
}

std::set<std::string> Int16Points(const Graph& g, const QuantizeOptions& o) {
  std::set<std::string> out;
  if (o.int16_nodes.empty()) return out;
  for (const Node* n : g.nodes()) {
    if (!o.int16_nodes.count(n->name()) || !IsInt16Kind(n->op())) continue;
    const auto [in, y] = Ends(n);
    if (in) out.insert(in->name());
    if (y) out.insert(y->name());
  }
  return out;
}

ScaleZeroPoint Int16Params(const ActivationScale& a) {
  const double m = std::max({std::abs(a.min), std::abs(a.max), std::abs(a.lo), std::abs(a.hi)});
  if (!(m > 0) || !std::isfinite(m)) return {1.0f, 0};
  // 8 significant bits: (q − 0)·s with |q| ≤ 2^15 has at most 24 and is exact in f32.
  int e = 0;
  const double f = std::frexp(m / 32767.0, &e);
  return {static_cast<float>(std::ldexp(std::ceil(std::ldexp(f, 8)), e - 8)), 0};
}

StatusOr<MixedBudgetResult> FitAccuracyBudgetMixed(const Graph& prepared, const ScaleTable& scales,
                                                   const QuantizeOptions& o,
                                                   const std::vector<LayerSensitivity>& ranked,
                                                   const std::vector<Sample>& samples, double min_cosine,
                                                   bool allow_int16) {
  MixedBudgetResult r;
  ASSIGN_OR_RETURN(OutputAgreement all8, QuantizedAgreement(prepared, scales, o, samples));
  r.int8_cosine = r.mean_cosine = all8.mean_cosine;
  QuantizeOptions current = o;
  if (allow_int16 && r.mean_cosine < min_cosine) {
    // Per-layer error: the output cosine each candidate reaches when it alone is int16.
    std::vector<Int16Promotion> measured;
    for (const Node* n : Int16Candidates(prepared, o)) {
      QuantizeOptions alone = o;
      alone.int16_nodes.insert(n->name());
      ASSIGN_OR_RETURN(OutputAgreement a, QuantizedAgreement(prepared, scales, alone, samples));
      measured.push_back({n->name(), n->Label(), a.mean_cosine, 0});
    }
    std::stable_sort(measured.begin(), measured.end(), [](const Int16Promotion& a, const Int16Promotion& b) {
      return a.cosine_alone > b.cosine_alone;
    });
    for (Int16Promotion& p : measured) {
      if (r.mean_cosine >= min_cosine) break;
      current.int16_nodes.insert(p.node);
      ASSIGN_OR_RETURN(OutputAgreement a, QuantizedAgreement(prepared, scales, current, samples));
      p.cosine_after = r.mean_cosine = a.mean_cosine;
      r.int16.push_back(p);
    }
  }
  ASSIGN_OR_RETURN(r.float_fit, FitAccuracyBudget(prepared, scales, current, ranked, samples, min_cosine));
  r.mean_cosine = r.float_fit.mean_cosine;
  r.met = r.float_fit.met;
  return r;
}

}  // namespace edgec::quant
