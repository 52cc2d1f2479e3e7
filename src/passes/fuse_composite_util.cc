#include "passes/fuse_composite_util.h"

#include <algorithm>
#include <cmath>

#include "passes/pass_util.h"

namespace edgec::passes {

bool NearConstant(double value, double expected, double rtol) {
  return std::fabs(value - expected) <= rtol * std::fabs(expected);
}

std::optional<ScalarOperand> ScalarOperandOf(const Node* n) {
  if (!n || n->num_inputs() != 2 || !n->input(0) || !n->input(1)) return std::nullopt;
  for (int c = 0; c < 2; ++c) {
    Value* other = n->input(1 - c);
    if (other->is_constant()) continue;
    auto value = ConstantScalar(n->input(c));
    if (!value) continue;
    const TensorType &in = other->type, &out = n->output(0)->type;
    if (!in.rank_known || !out.rank_known || in.dims != out.dims) continue;
    return ScalarOperand{other, 1 - c, *value};
  }
  return std::nullopt;
}

std::optional<ScalarOperand> ScalarOperandOf(const Node* n, OpKind op, const Value* x) {
  if (!n || n->op() != op) return std::nullopt;
  auto s = ScalarOperandOf(n);
  if (!s || (x && s->other != x)) return std::nullopt;
  return s;
}

Node* SoleConsumer(const Value* v) {
  return v && v->uses().size() == 1 && !v->is_graph_output() ? v->uses()[0].node : nullptr;
}

Value* OtherInput(const Node* n, const Value* v) {
  if (n->num_inputs() != 2) return nullptr;
  if (n->input(0) == v) return n->input(1);
  if (n->input(1) == v) return n->input(0);
  return nullptr;
}

std::optional<std::vector<int>> KeptReducedAxes(const Node* reduce, int rank, std::string* why) {
  if (reduce->attrs.GetInt("keepdims", 1) == 0) {
    *why = fmt::format("{} has keepdims=0", reduce->Label());
    return std::nullopt;
  }
  return ReducedAxes(reduce, rank, why);
}

std::optional<std::vector<int>> ReducedAxes(const Node* reduce, int rank, std::string* why) {
  std::vector<int> axes;
  const Value* given = reduce->input(1);
  if (!given) {
    if (reduce->attrs.GetInt("noop_with_empty_axes", 0) != 0) {
      *why = fmt::format("{} reduces nothing (noop_with_empty_axes)", reduce->Label());
      return std::nullopt;
    }
    for (int d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  const Tensor* t = ConstantOf(given);
  if (!t) {
    *why = fmt::format("{} has non-constant axes", reduce->Label());
    return std::nullopt;
  }
  if (t->numel() == 0) {
    if (reduce->attrs.GetInt("noop_with_empty_axes", 0) != 0) {
      *why = fmt::format("{} reduces nothing (noop_with_empty_axes)", reduce->Label());
      return std::nullopt;
    }
    for (int d = 0; d < rank; ++d) axes.push_back(d);
    return axes;
  }
  for (int64_t a : t->ToInt64Vector()) {
    auto n = NormalizeAxis(a, rank);
    if (!n.ok()) {
      *why = fmt::format("{}: {}", reduce->Label(), n.status().message());
      return std::nullopt;
    }
    axes.push_back(*n);
  }
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  return axes;
}

std::optional<int> TrailingAxisOf(const std::vector<int>& axes, int rank) {
  if (axes.empty()) return std::nullopt;
  const int first = rank - static_cast<int>(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] != first + static_cast<int>(i)) return std::nullopt;
  }
  return first;
}

Tensor ScalarOf(DType dt, double v) { return FilledOf(dt, {}, v); }

Tensor FilledOf(DType dt, const Dims& dims, double v) {
  Tensor t(dt, dims);
  for (int64_t i = 0; i < t.numel(); ++i) StoreFromDouble(dt, t.raw(), i, v);
  return t;
}

std::string FusedNodeName(const std::vector<Node*>& nodes, std::string_view op) {
  std::string prefix = nodes.empty() ? "" : nodes[0]->name();
  for (const Node* n : nodes) {
    size_t k = 0;
    while (k < prefix.size() && k < n->name().size() && prefix[k] == n->name()[k]) ++k;
    prefix.resize(k);
  }
  // Keep whole scopes: "/a/b/Mul" and "/a/b/Mu_1" share "/a/b/".
  const size_t slash = prefix.rfind('/');
  prefix = slash == std::string::npos ? "" : prefix.substr(0, slash + 1);
  return prefix + std::string(op);
}

void AbsorbAllProvenance(Node* into, const std::vector<Node*>& from) {
  for (const Node* n : from) AbsorbProvenance(into, n);
}

bool CommitFusion(Graph& g, PassContext& ctx, Value* from, Node* fused, int absorbed,
                  std::string* why) {
  if (!ReplaceValue(g, from, fused->output(0))) {
    g.RemoveNode(fused);
    *why = fmt::format("'{}' is a graph output that cannot be renamed", from->name());
    return false;
  }
  ctx.stats().nodes_fused += absorbed;
  ctx.stats().nodes_added += 1;
  return true;
}

bool IsSquareOf(const Node* square, const Value* v) {
  auto pow = ScalarOperandOf(square, OpKind::kPow, v);
  return (pow && pow->other_index == 0 && pow->value == 2.0) ||
         (square && square->op() == OpKind::kMul && square->input(0) == v && square->input(1) == v);
}

}  // namespace edgec::passes
