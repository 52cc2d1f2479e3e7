// DynamicStep: fast kernels for the dynamic part of a plan (dynamic_step.h).
#include "runtime/dynamic_step.h"

#include <cstring>

#include "ir/control_flow.h"
#include "ir/infer.h"
#include "kernels/ref/kernel.h"
#include "runtime/reference_executor.h"
#include "runtime/sequence_step.h"
#include "runtime/subgraph_plans.h"
#include "support/status.h"

namespace edgec {

namespace {

// Inputs of at most this many elements give their values to shape inference and may be
// baked into a kernel (the rest are read by the kernel at run time).
constexpr int64_t kSmallValue = 64;
// Kernels kept per node; past it the cache starts over (shapes that keep changing).
constexpr size_t kMaxKernels = 16;

std::string ValuesText(const Tensor& t) {
  std::string s;
  for (double v : t.ToDoubleVector()) s += (s.empty() ? "" : ",") + fmt::format("{}", v);
  return "{" + s + "}";
}

}  // namespace

DynamicStep::DynamicStep(const Node& n, const PlanOptions& options) : node_(n), options_(options) {
  if (IsControlFlow(n.op())) subgraphs_ = std::make_unique<SubgraphPlans>(n, options);
}

DynamicStep::~DynamicStep() = default;

std::vector<std::string> DynamicStep::ReferenceSteps() const {
  if (subgraphs_) return subgraphs_->ReferenceSteps();
  if (!reference_) return {};
  return {fmt::format("{}: {}", node_.Label(), kernel_.substr(std::string("reference: ").size()))};
}

StatusOr<std::vector<Tensor>> DynamicStep::RunReference(const std::vector<const Tensor*>& inputs, const std::string& why) {
  kernel_ = "reference: " + why;
  reference_ = true;
  return EvaluateNode(node_, inputs);
}

StatusOr<DynamicStep::Fast*> DynamicStep::FastFor(const std::vector<const Tensor*>& inputs,
                                                  const std::vector<TensorType>& outputs, bool outputs_known) {
  cpu::KernelRequest req;
  req.op = node_.op();
  req.attrs = &node_.attrs;
  req.label = node_.Label();
  req.threads = options_.threads > 0 ? options_.threads : 1;
  req.tuning = options_.tuning;
  std::string key;
  for (size_t i = 0; i < inputs.size(); ++i) {
    cpu::TensorDesc d;
    if (!inputs[i]) {
      d.dtype = DType::kUndefined;
      key += "-;";
    } else {
      d.dtype = inputs[i]->dtype();
      d.dims = inputs[i]->dims();
      key += std::string(DTypeName(d.dtype)) + DimsToString(d.dims) + ";";
    }
    const Value* v = node_.input(static_cast<int>(i));
    req.inputs.push_back(d);
    req.constants.push_back(v && v->is_constant() ? &v->constant() : nullptr);
  }
  for (const TensorType& t : outputs) {
    cpu::TensorDesc d;
    d.dtype = t.dtype;
    d.dims = t.dims;
    req.outputs.push_back(d);
    key += "->" + DimsToString(t.dims);
  }
  auto keep = [&](std::string k, std::unique_ptr<Fast> f) {
    if (f->kernel && f->kernel->scratch_bytes()) {
      f->scratch = Tensor(DType::kU8, {static_cast<int64_t>(f->kernel->scratch_bytes())});
    }
    Fast* p = f.get();
    if (cache_.size() >= kMaxKernels) {
      cache_.clear();
      last_ = nullptr;
    }
    cache_[std::move(k)] = std::move(f);
    return p;
  };
  // A kernel that wants a small input as a constant gets its value and is kept for it.
  auto with_values = [&](const std::string& refused) -> Fast* {
    cpu::KernelRequest baked = req;
    std::string values;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i] && !baked.constants[i] && inputs[i]->numel() <= kSmallValue) {
        baked.constants[i] = inputs[i];
        values += fmt::format("#{}={};", i, ValuesText(*inputs[i]));
      }
    }
    if (auto it = cache_.find(key + values); it != cache_.end()) return it->second.get();
    auto f = std::make_unique<Fast>();
    auto k = values.empty() ? StatusOr<std::unique_ptr<cpu::Kernel>>(Unimplemented("{}", refused)) : cpu::CreateKernel(baked);
    if (k.ok()) f->kernel = std::move(k).value();
    else f->refused = refused;
    return keep(key + values, std::move(f));
  };
  if (auto it = cache_.find(key); it != cache_.end()) {
    Fast* f = it->second.get();
    return f->needs_values ? with_values(f->refused) : f;
  }
  auto fast = std::make_unique<Fast>();
  if (!options_.fast_kernels) {
    fast->refused = "fast kernels disabled";
  } else {
    // Known output shapes: a kernel for them; else (or when none fits) one that sizes its
    // outputs itself; else a kernel given the small inputs' values.
    auto k = outputs_known ? cpu::CreateKernel(req) : StatusOr<std::unique_ptr<cpu::Kernel>>(Unimplemented(""));
    if (k.ok()) {
      fast->kernel = std::move(k).value();
    } else if (auto sized = cpu::CreateSizedByDataKernel(req); sized.ok()) {
      fast->sized = std::move(sized).value();
    } else if (outputs_known) {
      fast->refused = k.status().message();
      fast->needs_values = true;
      const std::string refused = fast->refused;
      keep(key, std::move(fast));
      return with_values(refused);
    } else {
      fast->refused = sized.status().message();
    }
  }
  return keep(key, std::move(fast));
}

// Output shapes from the input shapes and the small values, then the kernel for them.
Status DynamicStep::Choose(const std::vector<const Tensor*>& inputs) {
  std::vector<TensorType> types(inputs.size());
  std::vector<InferInput> infer_in(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    types[i] = TypeOf(*inputs[i]);
    const Value* v = node_.input(static_cast<int>(i));
    const bool known = (v && v->is_constant()) || inputs[i]->numel() <= kSmallValue;
    infer_in[i] = {&types[i], known ? inputs[i] : nullptr};
  }
  InferContext ictx(node_.op(), node_.attrs, node_.Label(), std::move(infer_in), node_.num_outputs());
  RETURN_IF_ERROR(ExpectTensorInputs(ictx));
  RETURN_IF_ERROR(GetInferFn(node_.op())(ictx));
  bool known = true;
  for (const TensorType& t : ictx.outputs()) known &= t.IsDenseTensor() && t.IsStatic();
  ASSIGN_OR_RETURN(Fast * fast, FastFor(inputs, ictx.outputs(), known));
  RememberLast(inputs, ictx.outputs(), fast);
  return Status::Ok();
}

bool DynamicStep::SameAsLast(const std::vector<const Tensor*>& inputs) const {
  if (!last_ || inputs.size() != last_in_.size()) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor* t = inputs[i];
    const TensorType& was = last_in_[i];
    if (!t) {
      if (was.dtype != DType::kUndefined) return false;
      continue;
    }
    if (t->dtype() != was.dtype || t->dims() != was.dims) return false;
    const Tensor& small = last_small_[i];
    if (small.defined() && std::memcmp(small.raw(), t->raw(), t->nbytes()) != 0) return false;
  }
  return true;
}

void DynamicStep::RememberLast(const std::vector<const Tensor*>& inputs, const std::vector<TensorType>& outputs,
                               Fast* fast) {
  last_in_.assign(inputs.size(), TensorType());
  last_small_.assign(inputs.size(), Tensor());
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i]) continue;
    last_in_[i] = TypeOf(*inputs[i]);
    const Value* v = node_.input(static_cast<int>(i));
    if (!(v && v->is_constant()) && inputs[i]->numel() <= kSmallValue) last_small_[i] = inputs[i]->Clone();
  }
  last_out_ = outputs;
  last_ = fast;
}

StatusOr<std::vector<Tensor>> DynamicStep::Run(const std::vector<const Tensor*>& inputs) {
  reference_ = false;
  if (subgraphs_) {
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, subgraphs_->Run(inputs));
    kernel_ = subgraphs_->Describe();
    return outs;
  }
  if (options_.fast_kernels && IsSequenceStep(node_, inputs)) return RunSequenceStep(node_, inputs, &kernel_);
  bool dense = true;
  for (const Tensor* t : inputs) dense &= !t || t->is_dense();
  if (!dense) return RunReference(inputs, "sequence or optional values run on the reference kernels");
  if (IsControlFlow(node_.op())) return RunReference(inputs, fmt::format("{} runs on the reference executor", OpName(node_.op())));

  if (!SameAsLast(inputs)) {
    RETURN_IF_ERROR(Choose(inputs));
  }
  Fast* fast = last_;
  if (!fast->kernel && !fast->sized) return RunReference(inputs, fast->refused);

  std::vector<const void*> in;
  for (const Tensor* t : inputs) in.push_back(t ? t->raw() : nullptr);
  std::vector<Tensor> outs;
  if (fast->sized) {
    RETURN_IF_ERROR(fast->sized->Run(in, &outs));
    kernel_ = fast->sized->Describe();
    return outs;
  }
  std::vector<void*> out;
  for (const TensorType& t : last_out_) {
    auto created = Tensor::Create(t.dtype, t.dims);
    if (!created.ok()) return created.status().WithContext(node_.Label());
    outs.push_back(std::move(created).value());
    out.push_back(outs.back().raw());
  }
  RETURN_IF_ERROR(fast->kernel->Run(in, out, fast->scratch.defined() ? fast->scratch.raw() : nullptr));
  kernel_ = fast->kernel->Describe();
  return outs;
}

}  // namespace edgec
