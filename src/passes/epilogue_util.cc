#include "passes/epilogue_util.h"

#include <algorithm>
#include <cmath>

#include "passes/pass_util.h"

namespace edgec::passes {

namespace {

bool IsFloatType(DType dt) {
  return dt == DType::kF32 || dt == DType::kF64 || dt == DType::kF16 || dt == DType::kBF16;
}

// A tensor of dtype dt holding c * t (computed in double).
Tensor Scaled(const Tensor& t, double c) {
  Tensor out(t.dtype(), t.dims());
  for (int64_t i = 0; i < t.numel(); ++i) {
    StoreFromDouble(t.dtype(), out.raw(), i, c * LoadAsDouble(t.dtype(), t.raw(), i));
  }
  return out;
}

std::optional<FusedForm> GemmToFused(Graph& g, const Node* n, std::string* why) {
  FusedForm f;
  f.op = OpKind::kFusedMatMul;
  f.inputs = {n->input(0), n->input(1), nullptr, nullptr};
  for (const char* a : {"transA", "transB"}) {
    if (n->attrs.GetInt(a, 0) != 0) f.attrs.Set(a, int64_t{1});
  }
  const float alpha = n->attrs.GetFloat("alpha", 1.0f);
  if (alpha != 1.0f) f.attrs.Set("alpha", alpha);
  const float beta = n->attrs.GetFloat("beta", 1.0f);
  Value* c = n->input(2);
  if (!c || beta == 0.0f) return f;
  if (beta == 1.0f) {
    f.inputs[2] = c;
    return f;
  }
  const Tensor* ct = ConstantOf(c);
  if (!ct) {
    *why = fmt::format("Gemm has beta={} and a non-constant C", beta);
    return std::nullopt;
  }
  f.inputs[2] = g.AddConstant(g.FreshName(c->name() + ".beta"), Scaled(*ct, beta));
  return f;
}

}  // namespace

bool IsEpilogueOp(OpKind op) {
  return op == OpKind::kFusedConv || op == OpKind::kFusedMatMul || op == OpKind::kFusedAdd;
}

ActivationSpec FusedForm::activation() const {
  auto a = ReadActivation(attrs);
  return a.ok() ? *a : ActivationSpec{};
}

std::optional<FusedForm> ToFusedForm(Graph& g, const Node* n, std::string* why) {
  const DType dt = n->output(0)->type.dtype;
  if (!IsFloatType(dt)) {
    *why = fmt::format("{} computes {}, not a float type", n->Label(), DTypeName(dt));
    return std::nullopt;
  }
  FusedForm f;
  switch (n->op()) {
    case OpKind::kConv:
      f.op = OpKind::kFusedConv;
      f.inputs = {n->input(0), n->input(1), n->input(2), nullptr};
      f.attrs = n->attrs;
      return f;
    case OpKind::kGemm:
      return GemmToFused(g, n, why);
    case OpKind::kMatMul:
      f.op = OpKind::kFusedMatMul;
      f.inputs = {n->input(0), n->input(1), nullptr, nullptr};
      return f;
    case OpKind::kAdd:
      f.op = OpKind::kFusedAdd;
      f.inputs = {n->input(0), n->input(1)};
      return f;
    case OpKind::kFusedConv:
    case OpKind::kFusedMatMul:
    case OpKind::kFusedAdd: {
      f.op = n->op();
      f.inputs = n->inputs();
      f.inputs.resize(n->op() == OpKind::kFusedAdd ? 2 : 4, nullptr);
      f.attrs = n->attrs;
      if (!ReadActivation(f.attrs).ok()) {
        *why = fmt::format("{} has an invalid activation", n->Label());
        return std::nullopt;
      }
      return f;
    }
    default:
      *why = fmt::format("{} has no fused form", n->Label());
      return std::nullopt;
  }
}

bool ReplaceWithFused(Graph& g, Value* old_output, const FusedForm& form,
                      const std::vector<const Node*>& absorbed, std::string* why) {
  std::vector<Value*> inputs = form.inputs;
  while (!inputs.empty() && !inputs.back()) inputs.pop_back();
  const Node* first = absorbed.front();
  auto made = AddInferredNode(g, form.op, first->name(), inputs, form.attrs, 1, first);
  if (!made.ok()) {
    *why = made.status().message();
    return false;
  }
  Node* n = *made;
  for (const Node* a : absorbed) AbsorbProvenance(n, a);
  if (!ReplaceValue(g, old_output, n->output(0))) {
    g.RemoveNode(n);
    *why = fmt::format("cannot replace {}", old_output->name());
    return false;
  }
  return true;
}

// --- activation forms ---

const std::vector<ActivationForm>& ActivationForms() {
  static const std::vector<ActivationForm> forms = {
      {"Relu", OpKind::kRelu},
      {"Clip", OpKind::kClip},
      {"LeakyRelu", OpKind::kLeakyRelu},
      {"HardSigmoid", OpKind::kHardSigmoid},
      {"HardSwish", OpKind::kHardSwish},
      {"x*HardSigmoid(x)", OpKind::kMul},
      {"x*Sigmoid(x)", OpKind::kMul},
      {"Gelu", OpKind::kGelu},
      {"Tanh", OpKind::kTanh},
      {"Sigmoid", OpKind::kSigmoid},
  };
  return forms;
}

namespace {

bool IsHardSwishGate(const Node* h) {
  return std::fabs(h->attrs.GetFloat("alpha", 0.2f) - 1.0 / 6.0) <= 1e-6 &&
         std::fabs(h->attrs.GetFloat("beta", 0.5f) - 0.5) <= 1e-7;
}

// Mul(x, Gate(x)) in either operand order, the gate read only by the Mul.
std::optional<ActivationMatch> MatchGatedMul(Node* mul, OpKind gate_op, Activation kind,
                                             std::string* why) {
  for (int side = 0; side < 2; ++side) {
    Node* gate = ProducerOf(mul->input(side), gate_op);
    Value* x = mul->input(1 - side);
    if (!gate || gate->input(0) != x) continue;
    if (gate_op == OpKind::kHardSigmoid && !IsHardSwishGate(gate)) {
      *why = fmt::format("{} has alpha={} beta={}, not 1/6 and 1/2 (HardSwish)", gate->Label(),
                         gate->attrs.GetFloat("alpha", 0.2f), gate->attrs.GetFloat("beta", 0.5f));
      return std::nullopt;
    }
    if (!HasSingleUse(gate->output(0))) {
      *why = fmt::format("{} output has other uses", gate->Label());
      return std::nullopt;
    }
    return ActivationMatch{x, ActivationSpec{kind}, {gate, mul}};
  }
  *why = fmt::format("not x*{}(x)", OpName(gate_op));
  return std::nullopt;
}

}  // namespace

std::optional<ActivationMatch> MatchActivation(const ActivationForm& form, Node* at, std::string* why) {
  if (at->op() != form.anchor) {
    *why = fmt::format("not a {}", OpName(form.anchor));
    return std::nullopt;
  }
  ActivationMatch m{at->input(0), {}, {at}};
  switch (at->op()) {
    case OpKind::kRelu: m.spec.kind = Activation::kRelu; return m;
    case OpKind::kTanh: m.spec.kind = Activation::kTanh; return m;
    case OpKind::kSigmoid: m.spec.kind = Activation::kSigmoid; return m;
    case OpKind::kHardSwish: m.spec.kind = Activation::kHardSwish; return m;
    case OpKind::kLeakyRelu:
      m.spec = {Activation::kLeakyRelu, at->attrs.GetFloat("alpha", 0.01f), 0.f};
      return m;
    case OpKind::kHardSigmoid:
      m.spec = {Activation::kHardSigmoid, at->attrs.GetFloat("alpha", 0.2f),
                at->attrs.GetFloat("beta", 0.5f)};
      return m;
    case OpKind::kClip: {
      m.spec = {Activation::kClip, -INFINITY, INFINITY};
      for (int i : {1, 2}) {
        if (!at->input(i)) continue;
        auto bound = ConstantScalar(at->input(i));
        if (!bound) {
          *why = fmt::format("Clip {} is not a constant", i == 1 ? "min" : "max");
          return std::nullopt;
        }
        (i == 1 ? m.spec.alpha : m.spec.beta) = static_cast<float>(*bound);
      }
      return m;
    }
    case OpKind::kGelu: {
      const std::string approx = at->attrs.GetString("approximate", "none");
      if (approx != "none" && approx != "tanh") {
        *why = fmt::format("Gelu approximate='{}'", approx);
        return std::nullopt;
      }
      m.spec.kind = approx == "tanh" ? Activation::kGeluTanh : Activation::kGelu;
      return m;
    }
    case OpKind::kMul:
      if (form.name == "x*HardSigmoid(x)") {
        return MatchGatedMul(at, OpKind::kHardSigmoid, Activation::kHardSwish, why);
      }
      return MatchGatedMul(at, OpKind::kSigmoid, Activation::kSilu, why);
    default:
      *why = "not an activation";
      return std::nullopt;
  }
}

Pattern AddIntoProducerPattern(std::string name, OpKind producer_op, AddFold fold) {
  Pattern p;
  p.name = std::move(name);
  p.anchors = {OpKind::kAdd};
  p.apply = [producer_op, fold](Graph& g, Node* add, PassContext&, std::string* why) {
    *why = fmt::format("no input is a {}", OpName(producer_op));
    for (int side = 0; side < 2; ++side) {
      Node* producer = ProducerOf(add->input(side), producer_op);
      if (producer && fold(g, add, producer, add->input(1 - side), why)) return true;
    }
    return false;
  };
  return p;
}

std::vector<Pattern> ActivationPatterns(const std::vector<OpKind>& producers, ProducerFilter accept) {
  std::vector<Pattern> patterns;
  for (OpKind producer_op : producers) {
    for (const ActivationForm& form : ActivationForms()) {
      Pattern p;
      p.name = fmt::format("{}+{}", OpName(producer_op), form.name);
      p.anchors = {form.anchor};
      p.apply = [producer_op, form, accept](Graph& g, Node* at, PassContext&, std::string* why) {
        auto m = MatchActivation(form, at, why);
        if (!m) return false;
        Node* producer = m->input ? m->input->producer() : nullptr;
        if (!producer || producer->op() != producer_op) {
          *why = fmt::format("input is {}, not a {}",
                             producer ? std::string(OpName(producer->op())) : "not computed by a node",
                             OpName(producer_op));
          return false;
        }
        if (!UsedOnlyBy(m->input, m->nodes)) {
          *why = fmt::format("{} output has other uses", producer->Label());
          return false;
        }
        if (accept && !accept(producer, why)) return false;
        auto form_or = ToFusedForm(g, producer, why);
        if (!form_or) return false;
        if (form_or->activation().kind != Activation::kNone) {
          *why = fmt::format("{} already has activation {}", producer->Label(),
                             ActivationToString(form_or->activation()));
          return false;
        }
        form_or->set_activation(m->spec);
        std::vector<const Node*> absorbed = {producer};
        absorbed.insert(absorbed.end(), m->nodes.begin(), m->nodes.end());
        return ReplaceWithFused(g, m->nodes.back()->output(0), *form_or, absorbed, why);
      };
      patterns.push_back(std::move(p));
    }
  }
  return patterns;
}

}  // namespace edgec::passes
