#include "runtime/plan.h"

#include <chrono>
#include <cstring>
#include <deque>
#include <thread>

#include "runtime/reference_executor.h"

namespace edgec {
namespace {

cpu::TensorDesc DescOf(const Value* v) {
  cpu::TensorDesc d;
  if (!v) {
    d.dtype = DType::kUndefined;
    return d;
  }
  d.dtype = v->type.dtype;
  d.dims = v->type.dims;
  d.layout = v->type.rank() == 4 ? v->physical.layout : Layout::kRowMajor;
  return d;
}

// Byte offset of a view inside its input's buffer: 0 for reshape-likes and transposes of
// size-1 dims; the start of the slice for Split/Slice along the outermost non-1 axis.
StatusOr<int64_t> ViewOffset(const Node& n, int output) {
  switch (n.op()) {
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
    case OpKind::kIdentity: case OpKind::kTranspose: case OpKind::kDropout:
      return 0;
    case OpKind::kSplit: {
      const Value* x = n.input(0);
      int rank = x->type.rank();
      int64_t axis = n.attrs.GetInt("axis", 0);
      if (axis < 0) axis += rank;
      int64_t inner = static_cast<int64_t>(DTypeSize(x->type.dtype));
      for (int d = static_cast<int>(axis) + 1; d < rank; ++d) inner *= x->type.dims[d];
      int64_t start = 0;
      for (int i = 0; i < output; ++i) start += n.output(i)->type.dims[axis];
      return start * inner;
    }
    default:
      return Internal("{} is marked a view but the executor cannot place it", n.Label());
  }
}

}  // namespace

StatusOr<std::unique_ptr<Plan>> Plan::Build(Graph g, const PlanOptions& options) {
  auto plan = std::unique_ptr<Plan>(new Plan());
  plan->graph_ = std::move(g);
  const Graph& graph = plan->graph_;
  for (const Value* v : graph.inputs()) {
    if (!v->type.IsStatic()) return InvalidArgument("input '{}' has unbound dims {}", v->name(), v->type.ToString());
  }
  memory::PlanOptions mo;
  mo.in_place = options.in_place;
  ASSIGN_OR_RETURN(plan->memory_, memory::PlanMemory(graph, {}, mo));
  plan->threads_ = options.threads > 0 ? options.threads
                                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  cpu::SetThreads(plan->threads_);

  for (const Node* n : graph.nodes()) {
    Step step;
    PlanStepInfo info;
    step.node = info.node = n;
    for (const Value* o : n->outputs()) {
      if (!o->type.IsStatic()) {
        return InvalidArgument("{}: output '{}' has non-static type {} after shape binding", n->Label(),
                               o->name(), o->type.ToString());
      }
    }
    const memory::ValueMemory* vm = plan->memory_.Find(n->output(0));
    if (vm && vm->placement == memory::Placement::kView) {
      step.view = info.view = true;
      info.kernel = "view";
    } else {
      step.in_place = info.in_place = vm && vm->placement == memory::Placement::kInPlace;
      if (options.fast_kernels) {
        cpu::KernelRequest req;
        req.op = n->op();
        req.attrs = &n->attrs;
        req.label = n->Label();
        req.threads = plan->threads_;
        for (const Value* in : n->inputs()) {
          req.inputs.push_back(DescOf(in));
          req.constants.push_back(in && in->is_constant() ? &in->constant() : nullptr);
        }
        for (const Value* o : n->outputs()) req.outputs.push_back(DescOf(o));
        auto k = cpu::CreateKernel(req);
        if (k.ok()) {
          step.fast = std::move(k).value();
          info.kernel = step.fast->Describe();
          plan->scratch_bytes_ = std::max(plan->scratch_bytes_, step.fast->scratch_bytes());
        } else {
          info.fallback_reason = k.status().message();
        }
      } else {
        info.fallback_reason = "fast kernels disabled";
      }
      if (!step.fast) {
        for (const Value* v : n->inputs()) {
          if (v && v->type.rank() == 4 && v->physical.layout != Layout::kRowMajor) {
            return Internal("{}: the reference kernel needs row-major input but '{}' is {}", n->Label(),
                            v->name(), LayoutName(v->physical.layout));
          }
        }
        step.ref = ref::GetKernel(n->op());
        info.kernel = "reference";
      }
    }
    plan->steps_.push_back(std::move(step));
    plan->info_.push_back(std::move(info));
  }
  return plan;
}

std::string Plan::Summary() const {
  int fast = 0, reference = 0, views = 0, in_place = 0;
  for (const auto& s : info_) {
    if (s.view) ++views;
    else if (s.kernel == "reference") ++reference;
    else ++fast;
    in_place += s.in_place;
  }
  return fmt::format("{} steps: {} fast, {} reference, {} views, {} in place; {}; {} threads", info_.size(),
                     fast, reference, views, in_place, memory_.Summary(), threads_);
}

PlanExecutor::PlanExecutor(const Plan& plan) : plan_(plan) {
  arena_ = Tensor(DType::kU8, {std::max<int64_t>(plan.memory_.arena_bytes, 1)});
  if (plan.scratch_bytes_) scratch_ = Tensor(DType::kU8, {static_cast<int64_t>(plan.scratch_bytes_)});
  std::byte* base = static_cast<std::byte*>(arena_.raw());
  // Address of every non-constant value (views get their offset inside the input's buffer).
  std::unordered_map<const Value*, std::byte*> addr;
  for (const Value* v : plan.graph_.inputs()) {
    const memory::ValueMemory* m = plan.memory_.Find(v);
    EDGEC_CHECK(m);
    addr[v] = base + m->offset;
  }
  for (const auto& step : plan.steps_) {
    const Node* n = step.node;
    for (int i = 0; i < n->num_outputs(); ++i) {
      const Value* o = n->output(i);
      const memory::ValueMemory* m = plan.memory_.Find(o);
      if (!m) continue;  // unused output with no buffer
      if (step.view) {
        auto off = ViewOffset(*n, i);
        EDGEC_CHECK(off.ok());
        addr[o] = addr.at(n->input(0)) + *off;
      } else {
        addr[o] = base + m->offset;
      }
    }
  }
  auto ptr_of = [&](const Value* v) -> std::byte* {
    if (!v) return nullptr;
    if (v->is_constant()) return static_cast<std::byte*>(const_cast<void*>(v->constant().raw()));
    auto it = addr.find(v);
    return it == addr.end() ? nullptr : it->second;
  };
  bound_.resize(plan.steps_.size());
  for (size_t s = 0; s < plan.steps_.size(); ++s) {
    const auto& step = plan.steps_[s];
    Bound& b = bound_[s];
    const Node* n = step.node;
    for (const Value* in : n->inputs()) {
      b.in.push_back(ptr_of(in));
      if (step.ref) {
        if (!in) {
          b.ref_in.push_back(nullptr);
        } else if (in->is_constant()) {
          b.ref_in.push_back(&in->constant());
        } else {
          views_.push_back(Tensor::View(in->type.dtype, in->type.dims, ptr_of(in)));
          b.ref_in.push_back(&views_.back());
        }
      }
    }
    for (const Value* o : n->outputs()) {
      std::byte* p = ptr_of(o);
      b.out.push_back(p);
      if (step.ref) {
        // Outputs nobody reads still need somewhere to go: a private buffer.
        if (!p) {
          views_.emplace_back(o->type.dtype, o->type.dims);
          p = static_cast<std::byte*>(views_.back().raw());
          b.out.back() = p;
        }
        b.ref_out.push_back(Tensor::View(o->type.dtype, o->type.dims, p));
        b.zero_bytes.push_back(step.in_place ? 0 : NumElements(o->type.dims) * DTypeSize(o->type.dtype));
      }
    }
    if (step.fast) {
      for (size_t i = 0; i < b.out.size(); ++i) {
        if (!b.out[i]) {
          const Value* o = n->output(static_cast<int>(i));
          views_.emplace_back(o->type.dtype, o->type.dims);
          b.out[i] = views_.back().raw();
        }
      }
    }
  }
  for (const Value* v : plan.graph_.inputs()) {
    input_slots_.push_back({v->name(), {addr.at(v), NumElements(v->type.dims) * DTypeSize(v->type.dtype)}});
  }
  for (const Value* v : plan.graph_.outputs()) {
    output_slots_.push_back({ptr_of(v), NumElements(v->type.dims) * DTypeSize(v->type.dtype)});
  }
  step_nanos_.assign(plan.steps_.size(), 0);
}

Status PlanExecutor::Run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) {
  RETURN_IF_ERROR(CheckInputs(plan_.graph_, inputs));
  for (auto& [name, slot] : input_slots_) {
    const Tensor& t = inputs.at(name);
    if (slot.second) std::memcpy(slot.first, t.raw(), slot.second);
  }
  for (size_t s = 0; s < plan_.steps_.size(); ++s) {
    const auto& step = plan_.steps_[s];
    if (step.view) continue;
    auto t0 = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    Bound& b = bound_[s];
    if (step.fast) {
      RETURN_IF_ERROR(step.fast->Run(b.in, b.out, scratch_.defined() ? scratch_.raw() : nullptr));
    } else {
      for (size_t i = 0; i < b.ref_out.size(); ++i) {
        if (b.zero_bytes[i]) std::memset(b.ref_out[i].raw(), 0, b.zero_bytes[i]);
      }
      ref::KernelContext k{step.node->op(), step.node->attrs, step.node->Label(), b.ref_in, b.ref_out};
      RETURN_IF_ERROR(step.ref(k));
    }
    if (profiling_) {
      step_nanos_[s] = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    }
  }
  const auto& outs = plan_.graph_.outputs();
  outputs->resize(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const Value* v = outs[i];
    Tensor& t = (*outputs)[i];
    if (!t.defined() || t.dtype() != v->type.dtype || t.dims() != v->type.dims || !t.owns_memory()) {
      t = Tensor(v->type.dtype, v->type.dims);
    }
    if (output_slots_[i].second) std::memcpy(t.raw(), output_slots_[i].first, output_slots_[i].second);
  }
  return Status::Ok();
}

}  // namespace edgec
