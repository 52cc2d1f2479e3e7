#include "runtime/reference_executor.h"

#include <random>
#include <unordered_map>

#include "ir/control_flow.h"
#include "ir/infer.h"
#include "kernels/ref/kernel.h"
#include "runtime/control_flow.h"

namespace edgec {

Status CheckInputs(const Graph& g, const std::map<std::string, Tensor>& given) {
  std::string names;
  for (const Value* v : g.inputs()) names += (names.empty() ? "'" : ", '") + v->name() + "'";
  for (auto& [name, t] : given) {
    bool known = false;
    for (const Value* v : g.inputs()) known |= v->name() == name;
    if (!known) return InvalidArgument("input '{}' is not an input of the model (inputs: {})", name, names);
  }
  for (const Value* v : g.inputs()) {
    auto it = given.find(v->name());
    if (it == given.end()) {
      return InvalidArgument("input '{}' ({}) was not given", v->name(), v->type.ToString());
    }
    const Tensor& t = it->second;
    const TensorType& want = v->type;
    if (!want.IsDenseTensor() || !t.is_dense()) {
      // A sequence or optional: the kind must agree (none only for an optional); the items'
      // shapes are checked by the nodes that read them.
      const bool kind_ok = t.is_none() ? want.optional : t.kind() == want.kind;
      if (!kind_ok || t.dtype() != want.dtype) {
        return InvalidArgument("input '{}': expected {}, got {}", v->name(), want.ToString(), t.TypeString());
      }
      continue;
    }
    if (t.dtype() != want.dtype) {
      return InvalidArgument("input '{}': expected dtype {}, got {}", v->name(),
                             DTypeName(want.dtype), DTypeName(t.dtype()));
    }
    if (!want.rank_known) continue;
    if (t.rank() != want.rank()) {
      return InvalidArgument("input '{}': expected {} dims {}, got {} dims {}", v->name(),
                             want.rank(), want.ToString(), t.rank(), t.TypeString());
    }
    for (int i = 0; i < t.rank(); ++i) {
      if (want.dims[i] >= 0 && want.dims[i] != t.dim(i)) {
        return InvalidArgument("input '{}': expected {}, got {} (dim {} is {}, expected {})",
                               v->name(), want.ToString(), t.TypeString(), i, t.dim(i),
                               want.dims[i]);
      }
    }
  }
  return Status::Ok();
}

StatusOr<std::vector<Tensor>> ReferenceExecutor::Run(const std::map<std::string, Tensor>& inputs) const {
  RETURN_IF_ERROR(CheckInputs(g_, inputs));
  std::unordered_map<const Value*, Tensor> live;
  std::unordered_map<const Value*, int> remaining_uses;
  for (const Value* v : g_.inputs()) live[v] = inputs.at(v->name());
  auto nodes = g_.nodes();
  for (const Node* n : nodes) {
    for (const Value* in : n->inputs()) {
      if (in && !in->is_constant()) remaining_uses[in]++;
    }
  }
  auto fetch = [&](const Value* v) -> const Tensor* {
    if (v->is_constant()) return &v->constant();
    auto it = live.find(v);
    return it == live.end() ? nullptr : &it->second;
  };

  for (const Node* n : nodes) {
    std::vector<const Tensor*> in_tensors;
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Value* v = n->input(i);
      const Tensor* t = v ? fetch(v) : nullptr;
      if (v && !t) return Internal("{}: input {} '{}' has no value", n->Label(), i, v->name());
      in_tensors.push_back(t);
    }
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, EvaluateNode(*n, in_tensors));
    if (hook_) hook_(*n, outs);
    for (int i = 0; i < n->num_outputs(); ++i) live[n->output(i)] = std::move(outs[i]);
    for (const Value* in : n->inputs()) {
      if (in && !in->is_constant() && --remaining_uses[in] == 0 && !in->is_graph_output()) {
        live.erase(in);
      }
    }
  }
  std::vector<Tensor> result;
  for (const Value* v : g_.outputs()) {
    const Tensor* t = fetch(v);
    if (!t) return Internal("graph output '{}' was not computed", v->name());
    result.push_back(*t);
  }
  return result;
}

StatusOr<std::vector<Tensor>> EvaluateNode(const Node& n, const std::vector<const Tensor*>& inputs) {
  if (IsControlFlow(n.op())) return RunControlFlow(n, inputs);
  std::vector<TensorType> types(inputs.size());
  std::vector<InferInput> infer_in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    types[i] = TypeOf(*inputs[i]);
    infer_in[i] = {&types[i], inputs[i]};
  }
  InferContext ictx(n.op(), n.attrs, n.Label(), std::move(infer_in), n.num_outputs());
  RETURN_IF_ERROR(ExpectTensorInputs(ictx));
  RETURN_IF_ERROR(GetInferFn(n.op())(ictx));
  std::vector<Tensor> outs;
  for (int i = 0; i < n.num_outputs(); ++i) {
    const TensorType& t = ictx.output(i);
    if (!t.IsDenseTensor()) {  // a sequence or optional: the kernel makes it (kernels/ref/sequence.cc)
      outs.emplace_back();
      continue;
    }
    if (!t.IsStatic()) {
      return Internal("{}: output {} type {} is not static although every input is known", n.Label(), i, t.ToString());
    }
    auto created = Tensor::Create(t.dtype, t.dims);
    if (!created.ok()) return created.status().WithContext(fmt::format("{}: output {}", n.Label(), i));
    outs.push_back(std::move(created).value());
  }
  ref::KernelContext k{n.op(), n.attrs, n.Label(), inputs, outs};
  RETURN_IF_ERROR(ref::GetKernel(n.op())(k));
  return outs;
}

std::map<std::string, Tensor> RandomInputs(const Graph& g, uint64_t seed, int64_t default_dim) {
  std::map<std::string, Tensor> m;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> small(0, 9);
  for (const Value* v : g.inputs()) {
    Dims d = v->type.dims;
    for (auto& x : d) {
      if (x < 0) x = default_dim;
    }
    Tensor t(v->type.dtype, d);
    for (int64_t i = 0; i < t.numel(); ++i) {
      if (IsFloat(t.dtype())) {
        StoreFromDouble(t.dtype(), t.raw(), i, normal(rng));
      } else if (t.dtype() == DType::kBool) {
        t.data<bool>()[i] = small(rng) < 5;
      } else {
        StoreFromDouble(t.dtype(), t.raw(), i, small(rng));
      }
    }
    m[v->name()] = std::move(t);
  }
  return m;
}

}  // namespace edgec
