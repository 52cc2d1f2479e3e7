// PlanExecutor: binds a Plan's steps to one arena and runs them (plan.h).
#include "runtime/plan.h"

#include <chrono>
#include <cstring>

#include "memory/planner.h"
#include "runtime/dynamic_step.h"
#include "runtime/plan_view_offset.h"
#include "runtime/reference_executor.h"

namespace edgec {

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
        EDGEC_CHECK(off.ok());  // checked by Plan::Build
        addr[o] = addr.at(n->input(0)) + *off * static_cast<int64_t>(DTypeSize(o->type.dtype));
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
  auto private_buffer = [&](DType dt, const Dims& dims) -> std::byte* {
    views_.emplace_back(dt, dims);
    return static_cast<std::byte*>(views_.back().raw());
  };
  bound_.resize(plan.steps_.size());
  for (size_t s = 0; s < plan.steps_.size(); ++s) {
    const auto& step = plan.steps_[s];
    Bound& b = bound_[s];
    const Node* n = step.node;
    for (const Value* in : n->inputs()) b.in.push_back(ptr_of(in));
    for (const Value* o : n->outputs()) {
      std::byte* p = ptr_of(o);
      // Outputs nobody reads still need somewhere to go: a private buffer.
      if (!p && !step.view) p = private_buffer(o->type.dtype, o->type.dims);
      b.out.push_back(p);
    }
    for (const auto& [i, bytes] : step.zero_extent) b.zero_first.push_back({b.out[i], static_cast<size_t>(bytes)});
    for (const auto& st : step.stage_in) {
      b.stage_src.push_back(b.in[st.index]);
      b.in[st.index] = private_buffer(st.dtype, st.dims);
    }
    for (const auto& st : step.stage_out) {
      b.stage_dst.push_back(b.out[st.index]);
      b.out[st.index] = private_buffer(st.dtype, st.dims);
    }
    if (step.ref) {
      for (size_t i = 0; i < n->inputs().size(); ++i) {
        const Value* in = n->input(static_cast<int>(i));
        if (!in) {
          b.ref_in.push_back(nullptr);
        } else if (in->is_constant()) {
          b.ref_in.push_back(&in->constant());
        } else {
          views_.push_back(Tensor::View(in->type.dtype, in->type.dims, const_cast<void*>(b.in[i])));
          b.ref_in.push_back(&views_.back());
        }
      }
      for (size_t i = 0; i < n->outputs().size(); ++i) {
        const Value* o = n->output(static_cast<int>(i));
        b.ref_out.push_back(Tensor::View(o->type.dtype, o->type.dims, b.out[i]));
        bool staged = false;
        for (const auto& st : step.stage_out) staged |= st.index == static_cast<int>(i);
        // An in-place output shares its input's buffer: zeroing it would erase the input.
        b.zero_bytes.push_back(step.in_place && !staged ? 0 : NumElements(o->type.dims) * DTypeSize(o->type.dtype));
      }
    }
  }
  for (size_t i = 0; i < plan.graph_.inputs().size(); ++i) {
    const Value* v = plan.graph_.inputs()[i];
    input_slots_.push_back({v->name(), {addr.at(v), NumElements(v->type.dims) * DTypeSize(v->type.dtype)}});
  }
  for (const Value* v : plan.graph_.outputs()) {
    output_slots_.push_back({ptr_of(v), NumElements(v->type.dims) * DTypeSize(v->type.dtype)});
  }
  BindInputsInPlace();
  step_nanos_.assign(plan.steps_.size(), 0);
  step_begin_nanos_.assign(plan.steps_.size(), 0);
  if (plan.tail_) {
    for (const Node* n : plan.tail_->nodes) dynamic_.push_back(std::make_unique<DynamicStep>(*n, plan.options_));
    dynamic_nanos_.assign(dynamic_.size(), 0);
  }
}

PlanExecutor::~PlanExecutor() = default;

std::vector<std::string> PlanExecutor::dynamic_kernels() const {
  std::vector<std::string> r;
  for (const auto& d : dynamic_) r.push_back(d->kernel());
  return r;
}

std::vector<std::string> PlanExecutor::ReferenceSteps() const {
  std::vector<std::string> r;
  for (const PlanStepInfo& s : plan_.info_) {
    if (!s.view && s.kernel.starts_with("reference")) r.push_back(fmt::format("{}: {}", s.node->Label(), s.fallback_reason));
  }
  for (const auto& d : dynamic_) {
    for (std::string& s : d->ReferenceSteps()) r.push_back(std::move(s));
  }
  return r;
}

// Every pointer that reads a graph input's buffer (the input itself or a view of it: one
// memory-plan buffer) is recorded, so that Run can point it at the caller's tensor instead
// of copying the tensor into the arena. An input read by a reference step (its Tensor views
// hold fixed pointers) or whose buffer some step writes stays copied.
void PlanExecutor::BindInputsInPlace() {
  const Graph& g = plan_.graph_;
  std::unordered_map<int, int> input_of_buffer;  // memory-plan buffer -> graph input index
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const memory::ValueMemory* m = plan_.memory_.Find(g.inputs()[i]);
    if (m) input_of_buffer[m->buffer] = static_cast<int>(i);
  }
  auto input_of = [&](const Value* v) -> int {
    if (!v || v->is_constant()) return -1;
    const memory::ValueMemory* m = plan_.memory_.Find(v);
    if (!m) return -1;
    auto it = input_of_buffer.find(m->buffer);
    return it == input_of_buffer.end() ? -1 : it->second;
  };
  in_place_input_.assign(g.inputs().size(), true);
  std::vector<Redirect> redirects;
  auto add = [&](const void** loc, int input) {
    redirects.push_back({loc, input, static_cast<const std::byte*>(*loc) - static_cast<const std::byte*>(input_slots_[input].second.first)});
  };
  for (size_t s = 0; s < plan_.steps_.size(); ++s) {
    const auto& step = plan_.steps_[s];
    const Node* n = step.node;
    Bound& b = bound_[s];
    if (step.view) continue;  // runs nothing; its readers are bound to the same buffer
    for (const Value* o : n->outputs()) {
      if (int i = input_of(o); i >= 0) in_place_input_[i] = false;  // written into: keep the arena copy
    }
    for (size_t j = 0; j < n->inputs().size(); ++j) {
      const int i = input_of(n->input(static_cast<int>(j)));
      if (i < 0) continue;
      if (step.ref) {
        in_place_input_[i] = false;
        continue;
      }
      bool staged = false;
      for (size_t k = 0; k < step.stage_in.size(); ++k) {
        if (step.stage_in[k].index != static_cast<int>(j)) continue;
        add(&b.stage_src[k], i);
        staged = true;
      }
      if (!staged) add(&b.in[j], i);
    }
  }
  for (size_t o = 0; o < g.outputs().size(); ++o) {
    if (int i = input_of(g.outputs()[o]); i >= 0) add(&output_slots_[o].first, i);
  }
  for (const Redirect& r : redirects) {
    if (in_place_input_[r.input]) redirects_.push_back(r);
  }
  input_base_.assign(g.inputs().size(), nullptr);
}

Status PlanExecutor::Run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) {
  if (!plan_.tail_) return RunStatic(inputs, outputs);
  RETURN_IF_ERROR(CheckInputs(plan_.tail_->graph, inputs));
  if (plan_.tail_->placeholder_inputs.empty()) {
    RETURN_IF_ERROR(RunStatic(inputs, &static_outputs_, /*checked=*/true));
  } else {
    std::map<std::string, Tensor> static_inputs = inputs;
    for (const auto& name : plan_.tail_->placeholder_inputs) static_inputs[name] = Tensor(DType::kU8, {0});
    RETURN_IF_ERROR(RunStatic(static_inputs, &static_outputs_, /*checked=*/true));
  }
  return RunDynamic(inputs, outputs);
}

// The dynamic part, node by node (dynamic_step.h): shapes from the actual values, outputs
// allocated here. Values from the static part are read where RunStatic left them: no step
// writes its inputs, and they stay until the next Run.
Status PlanExecutor::RunDynamic(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) {
  const Plan::DynamicTail& tail = *plan_.tail_;
  std::unordered_map<const Value*, Tensor> live;
  for (const auto& [v, index] : tail.from_static) live[v] = static_outputs_[index];
  auto fetch = [&](const Value* v) -> const Tensor* {
    if (v->is_constant()) return &v->constant();
    if (v->is_graph_input()) return &inputs.at(v->name());
    auto it = live.find(v);
    return it == live.end() ? nullptr : &it->second;
  };
  for (size_t k = 0; k < tail.nodes.size(); ++k) {
    const Node* n = tail.nodes[k];
    std::vector<const Tensor*> in;
    for (const Value* v : n->inputs()) {
      in.push_back(v ? fetch(v) : nullptr);
      if (v && !in.back()) return Internal("{}: input '{}' has no value", n->Label(), v->name());
    }
    auto t0 = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, dynamic_[k]->Run(in));
    if (profiling_) {
      dynamic_nanos_[k] = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
    }
    if (static_cast<int>(outs.size()) < n->num_outputs()) return Internal("{}: {} outputs computed", n->Label(), outs.size());
    for (int i = 0; i < n->num_outputs(); ++i) live[n->output(i)] = std::move(outs[i]);
  }
  const auto& outs = tail.graph.outputs();
  outputs->resize(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const int s = tail.static_output[i];
    const Tensor* t = s >= 0 ? &static_outputs_[s] : fetch(outs[i]);
    if (!t) return Internal("graph output '{}' was not computed", outs[i]->name());
    (*outputs)[i] = share_sequence_items_ && t->is_sequence() ? *t : t->Clone();
  }
  if (share_sequence_items_) {
    for (const auto& [v, index] : tail.from_static) static_outputs_[index] = Tensor();
  }
  return Status::Ok();
}

Status PlanExecutor::RunStatic(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs, bool checked) {
  if (!checked) RETURN_IF_ERROR(CheckInputs(plan_.graph_, inputs));
  // Inputs read in place: the caller's tensor when it is aligned like the arena, else its
  // copy in the arena (the pointers are set on every Run: the tensors change).
  for (size_t i = 0; i < input_slots_.size(); ++i) {
    const auto& [name, slot] = input_slots_[i];
    const Tensor& t = inputs.at(name);
    const bool direct = in_place_input_[i] && reinterpret_cast<uintptr_t>(t.raw()) % memory::kArenaAlignment == 0;
    input_base_[i] = direct ? static_cast<const std::byte*>(t.raw()) : static_cast<const std::byte*>(slot.first);
    if (!direct && slot.second) std::memcpy(slot.first, t.raw(), slot.second);
  }
  for (const Redirect& r : redirects_) *r.loc = input_base_[r.input] + r.offset;
  for (size_t s = 0; s < plan_.steps_.size(); ++s) {
    const auto& step = plan_.steps_[s];
    if (step.view) continue;
    auto t0 = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point();
    Bound& b = bound_[s];
    void* scratch = scratch_.defined() ? scratch_.raw() : nullptr;
    for (const auto& [p, bytes] : b.zero_first) std::memset(p, 0, bytes);
    for (size_t i = 0; i < step.stage_in.size(); ++i) {
      const void* src[] = {b.stage_src[i]};
      void* dst[] = {const_cast<void*>(b.in[step.stage_in[i].index])};
      RETURN_IF_ERROR(step.stage_in[i].copy->Run(src, dst, nullptr));
    }
    if (step.fast) {
      RETURN_IF_ERROR(step.fast->Run(b.in, b.out, scratch));
    } else {
      for (size_t i = 0; i < b.ref_out.size(); ++i) {
        if (b.zero_bytes[i]) std::memset(b.ref_out[i].raw(), 0, b.zero_bytes[i]);
      }
      ref::KernelContext k{step.node->op(), step.node->attrs, step.node->Label(), b.ref_in, b.ref_out};
      RETURN_IF_ERROR(step.ref(k));
    }
    for (size_t i = 0; i < step.stage_out.size(); ++i) {
      const auto& st = step.stage_out[i];
      const void* src[] = {b.out[st.index]};
      void* dst[] = {b.stage_dst[i]};
      RETURN_IF_ERROR(st.copy->Run(src, dst, nullptr));
    }
    if (profiling_) {
      step_nanos_[s] = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
      step_begin_nanos_[s] = std::chrono::duration_cast<std::chrono::nanoseconds>(t0.time_since_epoch()).count();
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
    if (const auto& oc = plan_.output_copies_[i]; oc.copy) {
      const void* src[] = {output_slots_[i].first};
      void* dst[] = {t.raw()};
      RETURN_IF_ERROR(oc.copy->Run(src, dst, nullptr));
    } else if (output_slots_[i].second) {
      std::memcpy(t.raw(), output_slots_[i].first, output_slots_[i].second);
    }
  }
  return Status::Ok();
}

}  // namespace edgec
