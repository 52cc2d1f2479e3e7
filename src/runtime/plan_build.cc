// Plan::Build: kernel selection, staging copies and the arena for a graph (plan.h).
#include "runtime/plan.h"

#include <thread>
#include <unordered_set>

#include "ir/control_flow.h"
#include "ir/infer.h"
#include "ir/infer_movement_util.h"
#include "ir/physical_layout.h"
#include "runtime/plan_view_offset.h"

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
  plan->options_ = options;
  std::unordered_set<const Value*> dynamic_values;
  std::vector<const Node*> dynamic_nodes;
  for (const Node* n : g.nodes()) {
    bool dynamic = false;
    // A sequence or optional is never static (ir/types.h), a graph input of that kind too.
    for (const Value* in : n->inputs()) dynamic |= in && (dynamic_values.count(in) || !in->type.IsDenseTensor());
    for (const Value* o : n->outputs()) dynamic |= !o->type.IsStatic();
    dynamic |= IsControlFlow(n->op());  // runs subgraphs (runtime/control_flow.h)
    if (!dynamic) continue;
    dynamic_nodes.push_back(n);
    for (const Value* o : n->outputs()) dynamic_values.insert(o);
  }
  bool sequence_io = false;
  for (const Value* v : g.inputs()) sequence_io |= !v->type.IsDenseTensor();
  for (const Value* v : g.outputs()) sequence_io |= !v->type.IsDenseTensor();
  if (!dynamic_nodes.empty() || sequence_io) {
    for (const Value* v : g.inputs()) {
      if (v->type.IsDenseTensor() && !v->type.IsStatic()) {
        return InvalidArgument("input '{}' has unbound dims {}", v->name(), v->type.ToString());
      }
    }
    auto tail = std::make_unique<DynamicTail>();
    Graph s = g.Clone();
    // Sequence and optional inputs are read by the dynamic part alone: the static part holds
    // an empty placeholder for them (tests/frontend/sequence_test.cc: SequenceInputRunsInTheDynamicPart).
    for (Value* v : s.inputs()) {
      if (v->type.IsDenseTensor()) continue;
      v->type = MakeType(DType::kU8, {0});
      tail->placeholder_inputs.push_back(v->name());
    }
    auto in_static = [&](const Value* v) { return s.FindValue(v->name()); };
    // Graph outputs: static ones stay where they are; dynamic ones become placeholders.
    for (size_t i = 0; i < g.outputs().size(); ++i) {
      const Value* o = g.outputs()[i];
      const bool dynamic = dynamic_values.count(o) > 0 || !o->type.IsDenseTensor();
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
  std::string dynamic =
      tail_ ? fmt::format(", {} dynamic (kernels for the shapes met at run time, outputs allocated then)", tail_->nodes.size()) : "";
  return fmt::format("{} steps: {} fast, {} reference, {} views, {} in place{}{}; {}; {} threads", info_.size(),
                     fast, reference, views, in_place, staging, dynamic, memory_.Summary(), threads_);
}

std::vector<const Node*> Plan::dynamic_nodes() const { return tail_ ? tail_->nodes : std::vector<const Node*>(); }

}  // namespace edgec
