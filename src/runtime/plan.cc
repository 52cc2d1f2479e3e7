#include "runtime/plan.h"

#include <chrono>
#include <cstring>
#include <deque>
#include <thread>
#include <unordered_set>

#include "ir/control_flow.h"
#include "ir/infer_movement_util.h"
#include "ir/physical_layout.h"
#include "runtime/reference_executor.h"

namespace edgec {
namespace {

// How a value sits in memory, for a kernel request: its layout, and its strides per logical
// axis when they are not the dense ones of that layout (a strided view, padded channels).
cpu::TensorDesc DescOf(const Value* v) {
  cpu::TensorDesc d;
  if (!v) {
    d.dtype = DType::kUndefined;
    return d;
  }
  d.dtype = v->type.dtype;
  d.dims = v->type.dims;
  d.layout = v->type.rank() == 4 ? v->physical.layout : Layout::kRowMajor;
  if (!v->physical.strides.empty() || !v->physical.padded_dims.empty()) {
    if (auto s = LogicalStrides(*v)) d.strides = *s;
    if (cpu::IsDense(d)) d.strides.clear();
  }
  return d;
}

bool PresentDesc(const cpu::TensorDesc& d) { return d.dtype != DType::kUndefined; }
bool IsDenseDesc(const cpu::TensorDesc& d) { return d.strides.empty(); }
bool IsRowMajorDesc(const cpu::TensorDesc& d) { return d.strides.empty() && d.layout == Layout::kRowMajor; }

std::string DescWord(const cpu::TensorDesc& d) {
  if (!d.strides.empty()) return fmt::format("strided {}", DimsToString(d.strides));
  return d.layout == Layout::kNHWC ? "nhwc" : "row-major";
}

// `d` as a dense row-major buffer (what a staging copy produces).
cpu::TensorDesc RowMajorOf(const cpu::TensorDesc& d) {
  cpu::TensorDesc r = d;
  r.strides.clear();
  r.layout = Layout::kRowMajor;
  return r;
}

// Element offset, inside its input's buffer, of a view's element 0: the Slice starts and
// the Split position (through the input's strides); 0 for reshape-likes, transposes, layout
// conversions that keep the placement, folded Pads and in-place Concats.
StatusOr<int64_t> ViewOffset(const Node& n, int output) {
  const Value* x = n.input(0);
  auto strides = LogicalStrides(*x);
  switch (n.op()) {
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
    case OpKind::kIdentity: case OpKind::kTranspose: case OpKind::kDropout: case OpKind::kPad:
    case OpKind::kConcat:
      return 0;
    case OpKind::kSplit: {
      if (!strides) break;
      const int rank = x->type.rank();
      int64_t axis = n.attrs.GetInt("axis", 0);
      if (axis < 0) axis += rank;
      int64_t start = 0;
      for (int i = 0; i < output; ++i) start += n.output(i)->type.dims[axis];
      return start * (*strides)[axis];
    }
    case OpKind::kSlice: {
      if (!strides) break;
      const int rank = x->type.rank();
      auto ints = [&](int i) -> std::optional<std::vector<int64_t>> {
        const Value* v = n.input(i);
        if (!v) return std::nullopt;
        if (!v->is_constant()) return std::vector<int64_t>{};
        return v->constant().ToInt64Vector();
      };
      auto starts = ints(1), ends = ints(2), axes = ints(3), steps = ints(4);
      if (!starts || !ends || starts->size() != ends->size() || (axes && axes->size() != starts->size()) ||
          (steps && steps->size() != starts->size()) || (n.input(1) && !n.input(1)->is_constant())) {
        break;
      }
      int64_t offset = 0;
      for (size_t i = 0; i < starts->size(); ++i) {
        int64_t a = axes ? (*axes)[i] : static_cast<int64_t>(i);
        if (a < 0) a += rank;
        const int64_t step = steps ? (*steps)[i] : 1;
        if (a < 0 || a >= rank || step <= 0) break;
        infer::SliceAxisRange r = infer::ClampSliceAxis(x->type.dims[a], (*starts)[i], (*ends)[i], step);
        if (r.length > 0) offset += r.start * (*strides)[a];
      }
      return offset;
    }
    default:
      break;
  }
  return Internal("{} is marked a view but the executor cannot place it", n.Label());
}

}  // namespace

namespace {

// The staging copy of one input (arena `from` -> dense `to`) or output (dense -> arena).
StatusOr<PlanStage> MakeStage(int index, const cpu::TensorDesc& arena, const cpu::TensorDesc& dense,
                                bool output, int threads) {
  PlanStage st;
  st.index = index;
  st.dtype = arena.dtype;
  st.dims = arena.dims;
  ASSIGN_OR_RETURN(st.copy, output ? cpu::CreateCopyKernel(dense, arena, threads)
                                   : cpu::CreateCopyKernel(arena, dense, threads));
  return st;
}

}  // namespace

StatusOr<std::unique_ptr<Plan>> Plan::Build(Graph g, const PlanOptions& options) {
  auto plan = std::unique_ptr<Plan>(new Plan());
  std::unordered_set<const Value*> dynamic_values;
  std::vector<const Node*> dynamic_nodes;
  for (const Node* n : g.nodes()) {
    bool dynamic = false;
    for (const Value* in : n->inputs()) dynamic |= in && dynamic_values.count(in);
    for (const Value* o : n->outputs()) dynamic |= !o->type.IsStatic();
    dynamic |= IsControlFlow(n->op());  // runs subgraphs (runtime/control_flow.h)
    if (!dynamic) continue;
    dynamic_nodes.push_back(n);
    for (const Value* o : n->outputs()) dynamic_values.insert(o);
  }
  if (!dynamic_nodes.empty()) {
    for (const Value* v : g.inputs()) {
      if (!v->type.IsStatic()) return InvalidArgument("input '{}' has unbound dims {}", v->name(), v->type.ToString());
    }
    auto tail = std::make_unique<DynamicTail>();
    Graph s = g.Clone();
    auto in_static = [&](const Value* v) { return s.FindValue(v->name()); };
    // Graph outputs: static ones stay where they are; dynamic ones become placeholders.
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const Value* o = g.outputs()[i];
      const bool dynamic = dynamic_values.count(o) > 0;
      tail->static_output.push_back(dynamic ? -1 : static_cast<int>(i));
      if (dynamic) {
        Value* placeholder = s.AddConstant(s.FreshName(o->name() + ".dynamic"), Tensor(o->type.dtype, {0}));
        s.ReplaceAllUses(in_static(o), placeholder);
      }
    }
    std::unordered_map<const Value*, int> crossing;
    for (const Node* n : dynamic_nodes) {
      for (const Value* in : n->inputs()) {
        if (!in || in->is_constant() || in->is_graph_input() || dynamic_values.count(in) || crossing.count(in)) continue;
        int index = -1;
        for (size_t i = 0; i < g.outputs().size(); ++i) {
          if (g.outputs()[i] == in) index = static_cast<int>(i);
        }
        if (index < 0) {
          s.MarkOutput(in_static(in));
          index = static_cast<int>(s.outputs().size()) - 1;
        }
        crossing[in] = index;
        tail->from_static.push_back({in, index});
      }
    }
    for (auto it = dynamic_nodes.rbegin(); it != dynamic_nodes.rend(); ++it) {
      Value* first = in_static((*it)->output(0));
      s.RemoveNode(first->producer());
    }
    tail->nodes = dynamic_nodes;
    tail->graph = std::move(g);
    plan->tail_ = std::move(tail);
    plan->graph_ = std::move(s);
  } else {
    plan->graph_ = std::move(g);
  }
  const Graph& graph = plan->graph_;
  for (const Value* v : graph.inputs()) {
    if (!v->type.IsStatic()) return InvalidArgument("input '{}' has unbound dims {}", v->name(), v->type.ToString());
    if (!IsRowMajorDesc(DescOf(v))) {
      return Internal("graph input '{}' is stored as {}; the plan copies inputs in row-major", v->name(),
                      PhysicalToString(*v));
    }
  }
  memory::PlanOptions mo;
  mo.in_place = options.in_place;
  ASSIGN_OR_RETURN(plan->memory_, memory::PlanMemory(graph, {}, mo));
  plan->threads_ = options.threads > 0 ? options.threads
                                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  cpu::SetThreads(plan->threads_);
  const int threads = plan->threads_;

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
      for (int i = 0; i < n->num_outputs(); ++i) RETURN_IF_ERROR(ViewOffset(*n, i).status());
      plan->steps_.push_back(std::move(step));
      plan->info_.push_back(std::move(info));
      continue;
    }
    step.in_place = info.in_place = vm && vm->placement == memory::Placement::kInPlace;
    for (int i = 0; i < n->num_outputs() && !step.in_place; ++i) {
      const Value* o = n->output(i);
      if (!plan->memory_.Find(o)) continue;
      ASSIGN_OR_RETURN(int64_t extent, memory::ValueBytes(*o));
      if (extent > NumElements(o->type.dims) * static_cast<int64_t>(DTypeSize(o->type.dtype))) {
        step.zero_extent.push_back({i, extent});
      }
    }

    cpu::KernelRequest req;
    req.op = n->op();
    req.attrs = &n->attrs;
    req.label = n->Label();
    req.threads = threads;
    req.tuning = options.tuning;
    for (const Value* in : n->inputs()) {
      req.inputs.push_back(DescOf(in));
      req.constants.push_back(in && in->is_constant() ? &in->constant() : nullptr);
    }
    for (const Value* o : n->outputs()) req.outputs.push_back(DescOf(o));

    // Which descs a kernel gets instead of the arena's: `keep(d)` says a desc can be used as
    // it is; the others are staged into buffers laid out as `dense_of(d)` (inputs only when
    // `inputs` is set).
    auto stage = [&](auto keep, auto dense_of, bool inputs, cpu::KernelRequest* r) -> Status {
      for (size_t i = 0; i < r->inputs.size() && inputs; ++i) {
        const cpu::TensorDesc& d = req.inputs[i];
        if (!PresentDesc(d) || req.constants[i] || keep(d)) continue;
        cpu::TensorDesc dense = dense_of(d);
        ASSIGN_OR_RETURN(Stage st, MakeStage(static_cast<int>(i), d, dense, false, threads));
        info.staged.push_back(fmt::format("input {} {} -> {}", i, DescWord(d), DescWord(dense)));
        info.staged_bytes += NumElements(d.dims) * static_cast<int64_t>(DTypeSize(d.dtype));
        step.stage_in.push_back(std::move(st));
        r->inputs[i] = dense;
      }
      for (size_t i = 0; i < r->outputs.size(); ++i) {
        const cpu::TensorDesc& d = req.outputs[i];
        if (!PresentDesc(d) || keep(d)) continue;
        cpu::TensorDesc dense = dense_of(d);
        ASSIGN_OR_RETURN(Stage st, MakeStage(static_cast<int>(i), d, dense, true, threads));
        info.staged.push_back(fmt::format("output {} {} -> {}", i, DescWord(dense), DescWord(d)));
        info.staged_bytes += NumElements(d.dims) * static_cast<int64_t>(DTypeSize(d.dtype));
        step.stage_out.push_back(std::move(st));
        r->outputs[i] = dense;
      }
      return Status::Ok();
    };
    auto reset_staging = [&] {
      step.stage_in.clear();
      step.stage_out.clear();
      info.staged.clear();
      info.staged_bytes = 0;
    };

    if (options.fast_kernels) {
      auto k = cpu::CreateKernel(req);
      if (k.ok()) {
        step.fast = std::move(k).value();
      } else {
        info.fallback_reason = k.status().message();
        // Buffers the kernel refused, in this order: dense copies of strided or padded
        // outputs only, then of every strided buffer, then row-major copies of every buffer
        // in another layout; the first request the kernel takes wins.
        auto dense_of = [](const cpu::TensorDesc& d) {
          cpu::TensorDesc r = d;
          r.strides.clear();
          return r;
        };
        auto any = [&](auto pred, const std::vector<cpu::TensorDesc>& ds) {
          for (const auto& d : ds)
            if (PresentDesc(d) && !pred(d)) return true;
          return false;
        };
        const bool strided_in = any(IsDenseDesc, req.inputs), strided_out = any(IsDenseDesc, req.outputs);
        const bool other_layout = any(IsRowMajorDesc, req.inputs) || any(IsRowMajorDesc, req.outputs);
        using DescFn = cpu::TensorDesc (*)(const cpu::TensorDesc&);
        struct Attempt {
          bool wanted;
          bool (*keep)(const cpu::TensorDesc&);
          DescFn staged_as;
          bool inputs;
        };
        const Attempt attempts[] = {
            {strided_in && strided_out, IsDenseDesc, dense_of, false},  // else the next covers it
            {strided_in || strided_out, IsDenseDesc, dense_of, true},
            {other_layout, IsRowMajorDesc, RowMajorOf, true},
        };
        for (const Attempt& at : attempts) {
          if (step.fast || !at.wanted) continue;
          cpu::KernelRequest staged_req = req;
          RETURN_IF_ERROR(stage(at.keep, at.staged_as, at.inputs, &staged_req));
          auto k2 = cpu::CreateKernel(staged_req);
          if (k2.ok()) {
            step.fast = std::move(k2).value();
            info.fallback_reason.clear();
          } else {
            reset_staging();
          }
        }
      }
      if (step.fast) {
        info.kernel = step.fast->Describe();
        plan->scratch_bytes_ = std::max(plan->scratch_bytes_, step.fast->scratch_bytes());
      }
    } else {
      info.fallback_reason = "fast kernels disabled";
    }
    if (!step.fast) {
      // Reference kernels read and write dense row-major tensors.
      cpu::KernelRequest ref_req = req;
      RETURN_IF_ERROR(stage(IsRowMajorDesc, RowMajorOf, /*inputs=*/true, &ref_req));
      step.ref = ref::GetKernel(n->op());
      info.kernel = "reference";
    }
    if (!info.staged.empty()) {
      std::string list;
      for (const auto& s2 : info.staged) list += (list.empty() ? "" : ", ") + s2;
      info.kernel += fmt::format(" + staged copies ({})", list);
    }
    plan->steps_.push_back(std::move(step));
    plan->info_.push_back(std::move(info));
  }
  for (const Value* v : graph.outputs()) {
    OutputCopy oc;
    cpu::TensorDesc d = DescOf(v);
    if (!v->is_constant() && !IsRowMajorDesc(d)) {
      cpu::TensorDesc rm = d;
      rm.strides.clear();
      rm.layout = Layout::kRowMajor;
      ASSIGN_OR_RETURN(oc.copy, cpu::CreateCopyKernel(d, rm, threads));
    }
    plan->output_copies_.push_back(std::move(oc));
  }
  return plan;
}

int64_t Plan::staged_bytes() const {
  int64_t total = 0;
  for (const auto& s : info_) total += s.staged_bytes;
  return total;
}

std::string Plan::Summary() const {
  int fast = 0, reference = 0, views = 0, in_place = 0, staged = 0;
  for (const auto& s : info_) {
    if (s.view) ++views;
    else if (s.kernel.starts_with("reference")) ++reference;
    else ++fast;
    in_place += s.in_place;
    staged += !s.staged.empty();
  }
  std::string staging = staged ? fmt::format(", {} with staged copies ({:.1f} KiB per run)", staged,
                                             static_cast<double>(staged_bytes()) / 1024.0)
                               : "";
  std::string dynamic = tail_ ? fmt::format(", {} dynamic (reference, allocated at run time)", tail_->nodes.size()) : "";
  return fmt::format("{} steps: {} fast, {} reference, {} views, {} in place{}{}; {}; {} threads", info_.size(),
                     fast, reference, views, in_place, staging, dynamic, memory_.Summary(), threads_);
}

std::vector<const Node*> Plan::dynamic_nodes() const { return tail_ ? tail_->nodes : std::vector<const Node*>(); }

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
  RETURN_IF_ERROR(RunStatic(inputs, &static_outputs_));
  return RunDynamic(inputs, outputs);
}

// The dynamic part, node by node on the reference kernels: shapes from the actual values,
// outputs allocated here.
Status PlanExecutor::RunDynamic(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) {
  const Plan::DynamicTail& tail = *plan_.tail_;
  std::unordered_map<const Value*, Tensor> live;
  for (const auto& [v, index] : tail.from_static) live[v] = static_outputs_[index].Clone();
  auto fetch = [&](const Value* v) -> const Tensor* {
    if (v->is_constant()) return &v->constant();
    if (v->is_graph_input()) return &inputs.at(v->name());
    auto it = live.find(v);
    return it == live.end() ? nullptr : &it->second;
  };
  for (const Node* n : tail.nodes) {
    std::vector<const Tensor*> in;
    for (const Value* v : n->inputs()) {
      in.push_back(v ? fetch(v) : nullptr);
      if (v && !in.back()) return Internal("{}: input '{}' has no value", n->Label(), v->name());
    }
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, EvaluateNode(*n, in));
    for (int i = 0; i < n->num_outputs(); ++i) live[n->output(i)] = std::move(outs[i]);
  }
  const auto& outs = tail.graph.outputs();
  outputs->resize(outs.size());
  for (size_t i = 0; i < outs.size(); ++i) {
    const int s = tail.static_output[i];
    const Tensor* t = s >= 0 ? &static_outputs_[s] : fetch(outs[i]);
    if (!t) return Internal("graph output '{}' was not computed", outs[i]->name());
    (*outputs)[i] = t->Clone();
  }
  return Status::Ok();
}

Status PlanExecutor::RunStatic(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) {
  RETURN_IF_ERROR(CheckInputs(plan_.graph_, inputs));
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
