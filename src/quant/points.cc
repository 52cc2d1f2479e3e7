// The quantization points rule (points.h): units of integer form, seeds, and the spread of
// integer units over shared values.
#include "quant/points.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>

#include <fmt/format.h>

#include "passes/groupnorm_pattern.h"
#include "passes/pass_util.h"
#include "quant/fold_qdq.h"
#include "quant/int_resize.h"

namespace edgec::quant {
namespace {

using passes::ConstantOf;

bool IsFloatActivation(const Value* v) { return v && !v->is_constant() && v->type.dtype == DType::kF32; }

bool IsScalarConstant(const Value* v) {
  const Tensor* c = ConstantOf(v);
  return c && c->numel() == 1;
}

bool IsArithmetic(OpKind op) {
  return op == OpKind::kAdd || op == OpKind::kSub || op == OpKind::kMul || op == OpKind::kDiv || op == OpKind::kPow;
}

// An op an elementwise island may hold: a tabulable unary op whose parameters are scalar
// constants (not one that only moves values: Identity), or arithmetic.
bool IslandOp(const Node* n) {
  if (n->num_outputs() != 1) return false;
  if (HasTrait(n->op(), op_trait::kTabulable)) {
    if (HasTrait(n->op(), op_trait::kMovesValues)) return false;
    for (int i = 1; i < n->num_inputs(); ++i)
      if (n->input(i) && !IsScalarConstant(n->input(i))) return false;
    return true;
  }
  return IsArithmetic(n->op());
}

// A set of nodes that becomes integer as one: its activation inputs and outputs are points.
struct Unit {
  std::vector<const Node*> nodes;  // nodes[0] names the unit
  std::vector<const Value*> inputs, outputs;
  bool seed = false;
};

// The light unit of `n` alone (points.h), or nullopt with why not.
std::optional<Unit> LightUnit(const Node* n, std::string* why) {
  const OpKind op = n->op();
  Unit u;
  u.nodes = {n};
  auto float_data = [&](int i) {
    if (IsFloatActivation(n->input(i))) return true;
    *why = fmt::format("input {} is not a float activation", i);
    return false;
  };
  if (op == OpKind::kAdd || op == OpKind::kMul) {
    if (n->num_inputs() != 2) return *why = "not two operands", std::nullopt;
    for (int i = 0; i < 2; ++i) {
      if (const Tensor* c = ConstantOf(n->input(i)); c && c->numel() > 1)
        return *why = fmt::format("a constant operand of {} values, not one per channel", c->numel()),
               std::nullopt;
      if (!float_data(i)) return std::nullopt;
    }
    u.inputs = {n->input(0), n->input(1)};
    const Value* y = OutputPoint(n);
    if (y != n->output(0)) u.nodes.push_back(y->producer());
    u.outputs = {y};
    return u;
  }
  if (op == OpKind::kGlobalAveragePool || op == OpKind::kAveragePool) {
    if (!float_data(0)) return std::nullopt;
    u.inputs = {n->input(0)};
    u.outputs = {n->output(0)};
    return u;
  }
  if (op == OpKind::kSoftmax) {
    const int rank = n->input(0)->type.rank_known ? n->input(0)->type.rank() : -1;
    const int64_t axis = n->attrs.GetInt("axis", -1);
    if (axis != -1 && axis != rank - 1)
      return *why = fmt::format("softmax over axis {} of {} (only the last has an integer form)", axis, rank),
             std::nullopt;
    if (!float_data(0)) return std::nullopt;
    u.inputs = {n->input(0)};
    u.outputs = {n->output(0)};
    return u;
  }
  if (op == OpKind::kArgMax || op == OpKind::kArgMin) {
    if (!float_data(0)) return std::nullopt;
    u.inputs = {n->input(0)};  // the output is int64
    return u;
  }
  std::string pad_why;
  const bool moves = HasTrait(op, op_trait::kMovesValues) || KeepsQuantization(*n) ||
                     (op == OpKind::kPad && PadKeepsQuantization(*n, &pad_why));
  if (op == OpKind::kPad && !moves) return *why = pad_why, std::nullopt;
  if (!moves) return *why = "no integer form", std::nullopt;
  if (op == OpKind::kMaxPool && n->num_outputs() > 1) return *why = "MaxPool with indices", std::nullopt;
  for (int i = 0; i < n->num_inputs(); ++i) {
    const bool data = i == 0 || op == OpKind::kConcat;
    if (data) {
      if (!float_data(i)) return std::nullopt;
      u.inputs.push_back(n->input(i));
    } else if (n->input(i) && !ConstantOf(n->input(i))) {
      return *why = fmt::format("input {} is computed, not a constant", i), std::nullopt;
    }
  }
  for (const Value* y : n->outputs()) {
    if (!IsFloatActivation(y)) return *why = "an output that is not float", std::nullopt;
    u.outputs.push_back(y);
  }
  return u;
}

}  // namespace

std::optional<IslandMatch> MatchElementwiseIsland(const Node* last) {
  if (!IslandOp(last)) return std::nullopt;
  std::set<const Node*> in;
  const Value* x = nullptr;
  std::vector<const Node*> stack = {last};
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (in.count(n)) continue;
    if (in.size() >= 8) return std::nullopt;
    in.insert(n);
    for (const Value* v : n->inputs()) {
      if (!v) continue;
      if (ConstantOf(v)) {
        if (!IsScalarConstant(v)) return std::nullopt;
        continue;
      }
      const Node* p = v->producer();
      if (p && IslandOp(p) && passes::HasSingleUse(v) && !v->is_graph_output()) {
        stack.push_back(p);
      } else {
        if (x && x != v) return std::nullopt;  // a second source
        x = v;
      }
    }
  }
  if (!IsFloatActivation(x)) return std::nullopt;
  IslandMatch m;
  m.source = x;
  m.nodes.assign(in.begin(), in.end());
  std::erase(m.nodes, last);
  m.nodes.push_back(last);
  return m;
}

std::optional<IslandMatch> MatchChannelIslandUnit(const Node* last) {
  const std::optional<ChannelIsland> ci = MatchChannelIsland(last);
  if (!ci || !IsFloatActivation(ci->x)) return std::nullopt;
  IslandMatch m;
  m.source = ci->x;
  m.nodes = ci->nodes;
  std::erase(m.nodes, last);
  m.nodes.push_back(last);
  return m;
}

std::vector<IslandMatcher> DefaultIslandMatchers() { return {MatchChannelIslandUnit, MatchElementwiseIsland}; }

bool PadKeepsQuantization(const Node& n, std::string* why) {
  std::string ignored;
  std::string& w = why ? *why : ignored;
  if (n.op() != OpKind::kPad) return w = "not a Pad", false;
  const std::string mode = n.attrs.GetString("mode", "constant");
  if (mode == "reflect" || mode == "edge") return true;
  if (mode != "constant") return w = fmt::format("pad mode '{}'", mode), false;
  const Value* c = n.input(2);
  if (!c || (ConstantOf(c) && ConstantOf(c)->numel() == 0)) return true;
  const Tensor* t = ConstantOf(c);
  if (!t || t->numel() != 1) return w = "the pad value is not a scalar constant", false;
  const double v = t->ToDoubleVector()[0];
  if (v != 0)
    return w = fmt::format("pad value {} (only 0 quantizes exactly whatever the scale)", v), false;
  return true;
}

PointPlan PlanPoints(const Graph& g, const QuantizeOptions& o) {
  const std::vector<IslandMatcher> matchers = o.island_matchers.empty() ? DefaultIslandMatchers() : o.island_matchers;
  // A Conv/Gemm/MatMul kept in float holds what its unit would take (its bias Add, scale and
  // activation) in float with it, so keep_float only ever removes points.
  std::set<const Node*> held;
  for (const Node* n : g.nodes()) {
    if (!o.keep_float.count(n->name()) ||
        (n->op() != OpKind::kConv && n->op() != OpKind::kGemm && n->op() != OpKind::kMatMul))
      continue;
    if (const Node* add = MatMulBiasAdd(n)) held.insert(add);
    if (const Node* scale = ScoreScale(n, nullptr)) held.insert(scale);
    held.insert(OutputPoint(n)->producer());
  }
  auto kept = [&](const Node* n) { return o.keep_float.count(n->name()) > 0 || held.count(n) > 0; };
  std::vector<Unit> units;
  std::map<const Node*, int> unit_of;
  std::map<const Node*, std::string> why_float;
  auto claim = [&](Unit u) {
    for (const Node* n : u.nodes)
      if (unit_of.count(n) || kept(n)) return false;
    for (const Node* n : u.nodes) unit_of[n] = static_cast<int>(units.size());
    units.push_back(std::move(u));
    return true;
  };

  // Seeds. torch's GroupNorm pattern is one unit from its input to its last node (the
  // compiler fuses it again).
  for (const Node* n : g.nodes()) {
    std::string why;
    if (n->op() != OpKind::kInstanceNormalization || kept(n)) continue;
    if (auto m = passes::MatchGroupNorm(n, &why); m && IsFloatActivation(m->x)) {
      Unit u;
      u.nodes.push_back(n);
      for (const Node* p : m->nodes)
        if (p != n) u.nodes.push_back(p);
      u.inputs = {m->x};
      u.outputs = {m->output};
      u.seed = true;
      claim(std::move(u));
    }
  }
  // Conv / Gemm / MatMul with constant weights, and through OutputPoint their bias Add,
  // attention scale and activation.
  auto heavy = [&](const Node* n, std::vector<const Value*> inputs) {
    Unit u;
    u.nodes = {n};
    if (const Node* add = MatMulBiasAdd(n)) u.nodes.push_back(add);
    if (const Node* scale = ScoreScale(n, nullptr)) u.nodes.push_back(scale);
    const Value* y = OutputPoint(n);
    if (std::find(u.nodes.begin(), u.nodes.end(), y->producer()) == u.nodes.end()) u.nodes.push_back(y->producer());
    u.inputs = std::move(inputs);
    u.outputs = {y};
    u.seed = true;
    claim(std::move(u));
  };
  const QuantizablePlan plan = PlanQuantization(g, o);
  for (const Node* n : plan.nodes) heavy(n, {n->input(0)});
  for (const Node* n : g.nodes())
    if (IsActivationMatMul(n) && !kept(n)) heavy(n, {n->input(0), n->input(1)});
  for (const Node* n : g.nodes()) {
    // An embedding sum (MatchTableSum): its table and constant are quantized with their own
    // ranges in RewriteToQdq, its output is a point, so the Add folds to an integer Add.
    if (auto m = MatchTableSum(n); m && !kept(n)) {
      Unit u;
      u.nodes = {m->add, m->gather};
      u.outputs = {OutputPoint(n)};
      u.seed = true;
      claim(std::move(u));
    }
    const bool norm = n->op() == OpKind::kLayerNormalization || n->op() == OpKind::kInstanceNormalization ||
                      n->op() == OpKind::kGroupNormalization;
    if (norm && IsFloatActivation(n->input(0))) {
      Unit u;
      u.nodes = {n};
      u.inputs = {n->input(0)};
      u.outputs = {n->output(0)};
      u.seed = true;
      claim(std::move(u));
    }
  }
  // Light units: Add/Mul of two activations first (they take their Relu/Clip), then the
  // islands from the last node back (a long island takes its inner nodes before they are
  // tried alone), then the rest.
  // The first matcher whose island holds no node of a unit already claimed: a per-channel
  // island ending in an Erf GELU would reach back into its Linear's bias Add (a seed's), so the
  // scalar island is taken instead (FoldAttention.LinearBiasAttentionAndGeluFoldToIntegerOps).
  auto island = [&](const Node* n) -> std::optional<IslandMatch> {
    for (const IslandMatcher& m : matchers) {
      std::optional<IslandMatch> r = m(n);
      if (!r) continue;
      bool free = true;
      for (const Node* p : r->nodes) free &= !unit_of.count(p) && !kept(p);
      if (free) return r;
    }
    return std::nullopt;
  };
  for (const Node* n : g.nodes()) {
    if (unit_of.count(n) || kept(n) || (n->op() != OpKind::kAdd && n->op() != OpKind::kMul) || island(n)) continue;
    std::string why;
    if (auto u = LightUnit(n, &why)) claim(std::move(*u));
    else why_float[n] = why;
  }
  const std::vector<Node*> all = g.nodes();  // a copy: reverse iterators need one vector
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    const Node* n = *it;
    if (unit_of.count(n) || kept(n)) continue;
    if (auto m = island(n)) {
      Unit u;
      u.nodes = {n};
      for (const Node* p : m->nodes)
        if (p != n) u.nodes.push_back(p);
      u.inputs = {m->source};
      u.outputs = {n->output(0)};
      if (claim(std::move(u))) why_float.erase(n);
    }
  }
  for (const Node* n : g.nodes()) {
    if (unit_of.count(n) || kept(n) || why_float.count(n)) continue;
    std::string why;
    if (auto u = LightUnit(n, &why)) claim(std::move(*u));
    else why_float[n] = why;
  }

  // Integer units: the seeds, then every light unit that shares a value with an integer one.
  std::map<const Value*, std::vector<int>> touching;
  for (int i = 0; i < static_cast<int>(units.size()); ++i) {
    for (const Value* v : units[i].inputs) touching[v].push_back(i);
    for (const Value* v : units[i].outputs) touching[v].push_back(i);
  }
  std::vector<bool> integer(units.size(), false);
  std::set<const Value*> integer_values;  // an input or output of an integer unit
  std::deque<int> queue;
  auto make_integer = [&](int i) {
    integer[i] = true;
    queue.push_back(i);
    for (const Value* v : units[i].inputs) integer_values.insert(v);
    for (const Value* v : units[i].outputs) integer_values.insert(v);
  };
  for (int i = 0; i < static_cast<int>(units.size()); ++i)
    if (units[i].seed) make_integer(i);
  // A unit that reads the shared value (its consumer side) takes its other float inputs into
  // points only when they are points already: a Concat of an integer h and a float LSTM's cell
  // state c that is only a graph output stays float, c unquantized.
  auto reads_only_points = [&](const Unit& u) {
    for (const Value* v : u.inputs)
      if (IsFloatActivation(v) && !integer_values.count(v)) return false;
    return true;
  };
  while (!queue.empty()) {
    const Unit& u = units[queue.front()];
    queue.pop_front();
    std::vector<const Value*> values = u.inputs;
    values.insert(values.end(), u.outputs.begin(), u.outputs.end());
    for (const Value* v : values) {
      if (!IsFloatActivation(v)) continue;
      for (int j : touching[v]) {
        if (integer[j]) continue;
        const bool writes = std::find(units[j].outputs.begin(), units[j].outputs.end(), v) != units[j].outputs.end();
        if (writes || reads_only_points(units[j])) make_integer(j);
      }
    }
  }

  PointPlan plan_out;
  std::set<const Value*> point_set;
  for (int i = 0; i < static_cast<int>(units.size()); ++i) {
    if (!integer[i]) continue;
    for (const Value* v : units[i].inputs)
      if (IsFloatActivation(v)) point_set.insert(v);
    for (const Value* v : units[i].outputs)
      if (IsFloatActivation(v)) point_set.insert(v);
  }
  for (const Value* v : g.inputs())
    if (point_set.count(v)) plan_out.points.push_back(v->name());
  for (const Node* n : g.nodes())
    for (const Value* v : n->outputs())
      if (v && point_set.count(v)) plan_out.points.push_back(v->name());

  // The nodes that compute on float activations and stay float, with why.
  std::map<std::string, std::string> plan_why;
  for (const std::string& s : plan.skipped) {
    const size_t colon = s.find(": ");
    if (colon != std::string::npos) plan_why[s.substr(0, colon)] = s.substr(colon + 2);
  }
  for (const Node* n : g.nodes()) {
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kDequantizeLinear) continue;
    bool reads_float = false;
    for (const Value* v : n->inputs()) reads_float |= IsFloatActivation(v);
    if (!reads_float) continue;
    std::string why;
    if (auto it = unit_of.find(n); it != unit_of.end()) {
      if (integer[it->second]) continue;
      // It reads an integer value and a float op's (the reader-side rule), or neither.
      const std::vector<const Value*>& in = units[it->second].inputs;
      const auto float_in = std::find_if(in.rbegin(), in.rend(), [&](const Value* v) {  // the last names it
        return IsFloatActivation(v) && !integer_values.count(v);
      });
      const bool reads_integer =
          std::any_of(in.begin(), in.end(), [&](const Value* v) { return integer_values.count(v) > 0; });
      why = float_in != in.rend() && reads_integer
                ? fmt::format("feeds float ops only and reads '{}' from a float op (a point would quantize it for "
                              "nothing)",
                              (*float_in)->name())
                : "between float ops only (a point would add a Q/DQ pair and save nothing)";
    } else if (kept(n)) {
      why = "kept in float";
    } else if (auto p = plan_why.find(n->Label()); p != plan_why.end()) {
      why = p->second;
    } else if (auto f = why_float.find(n); f != why_float.end()) {
      why = f->second;
    } else {
      why = "no integer form";
    }
    plan_out.float_nodes.push_back({n, why});
  }
  return plan_out;
}

std::vector<std::string> SummarizeFloatNodes(const std::vector<FloatNode>& nodes) {
  std::vector<std::pair<std::string, std::string>> keys;  // first-seen order
  std::map<std::pair<std::string, std::string>, int> count;
  for (const FloatNode& f : nodes) {
    auto key = std::make_pair(std::string(OpName(f.node->op())), f.why);
    if (count[key]++ == 0) keys.push_back(key);
  }
  std::vector<std::string> out;
  for (const auto& k : keys) out.push_back(fmt::format("{} {}: {}", count[k], k.first, k.second));
  return out;
}

}  // namespace edgec::quant
