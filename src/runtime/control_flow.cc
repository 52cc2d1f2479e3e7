#include "runtime/control_flow.h"

#include <cstring>
#include <map>

#include "ir/control_flow.h"
#include "ir/infer.h"
#include "runtime/reference_executor.h"
#include "support/status.h"

namespace edgec {

namespace {

// A one-element value given to a subgraph input declared with another rank ([] vs [1]):
// reshaped to the declared dims.
Tensor FitScalar(Tensor t, const TensorType& declared) {
  if (declared.IsStatic() && declared.dims != t.dims() && NumElements(declared.dims) == t.numel()) {
    return t.Reshaped(declared.dims);
  }
  return t;
}

// Runs `body` on its own inputs `formal` and the node's captures (its inputs from
// `first_capture` on, ir/control_flow.h).
StatusOr<std::vector<Tensor>> RunBody(const Node& n, const Graph& body, std::vector<Tensor> formal,
                                      const std::vector<const Tensor*>& inputs, int first_capture,
                                      const BodyRunner& run_body) {
  const int captures = NumCaptures(n.attrs);
  if (body.inputs().size() != formal.size() + captures) {
    return Internal("{}: subgraph has {} inputs for {} op inputs and {} captures", n.Label(), body.inputs().size(),
                    formal.size(), captures);
  }
  std::map<std::string, Tensor> given;
  for (size_t i = 0; i < formal.size(); ++i) {
    given[body.inputs()[i]->name()] =
        formal[i].is_dense() ? FitScalar(std::move(formal[i]), body.inputs()[i]->type) : std::move(formal[i]);
  }
  for (int c = 0; c < captures; ++c) {
    const Tensor* t = first_capture + c < static_cast<int>(inputs.size()) ? inputs[first_capture + c] : nullptr;
    if (!t) return Internal("{}: captured value {} has no value", n.Label(), c);
    given[body.inputs()[formal.size() + c]->name()] = *t;
  }
  auto outs = run_body ? run_body(body, given) : ReferenceExecutor(body).Run(given);
  if (!outs.ok()) return outs.status().WithContext(n.Label());
  return outs;
}

// x without its axis `axis`, at index `index` along it.
Tensor Take(const Tensor& x, int axis, int64_t index) {
  Dims d = x.dims();
  const int64_t len = d[axis];
  int64_t outer = 1, inner = static_cast<int64_t>(DTypeSize(x.dtype()));
  for (int i = 0; i < axis; ++i) outer *= d[i];
  for (int i = axis + 1; i < x.rank(); ++i) inner *= d[i];
  d.erase(d.begin() + axis);
  Tensor r(x.dtype(), d);
  auto* dst = static_cast<std::byte*>(r.raw());
  const auto* src = static_cast<const std::byte*>(x.raw());
  for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * inner, src + (o * len + index) * inner, inner);
  return r;
}

// Stacks same-shaped `items` along a new axis `axis`: item t goes to position t, or to
// T-1-t when `reverse`. `empty` is the type of an empty stack (no items).
StatusOr<Tensor> Stack(const Node& n, const std::vector<Tensor>& items, int axis, bool reverse, const TensorType& element) {
  if (items.empty()) {
    Dims d = element.rank_known ? element.dims : Dims{};
    for (auto& x : d) x = std::max<int64_t>(x, 0);
    d.insert(d.begin() + std::min<int>(axis, static_cast<int>(d.size())), 0);
    return Tensor(element.dtype, d);
  }
  const Tensor& first = items[0];
  if (axis < 0 || axis > first.rank()) {
    return InvalidArgument("{}: scan output axis {} is out of range for rank {}", n.Label(), axis, first.rank());
  }
  for (size_t t = 1; t < items.size(); ++t) {
    if (items[t].dims() != first.dims() || items[t].dtype() != first.dtype()) {
      return InvalidArgument("{}: the subgraph's scan output is {} at step 0 but {} at step {}", n.Label(),
                             first.TypeString(), items[t].TypeString(), t);
    }
  }
  const int64_t steps = static_cast<int64_t>(items.size());
  Dims d = first.dims();
  int64_t outer = 1, inner = static_cast<int64_t>(DTypeSize(first.dtype()));
  for (int i = 0; i < axis; ++i) outer *= d[i];
  for (int i = axis; i < first.rank(); ++i) inner *= d[i];
  d.insert(d.begin() + axis, steps);
  ASSIGN_OR_RETURN(Tensor r, Tensor::Create(first.dtype(), d));
  auto* dst = static_cast<std::byte*>(r.raw());
  for (int64_t t = 0; t < steps; ++t) {
    const auto* src = static_cast<const std::byte*>(items[reverse ? steps - 1 - t : t].raw());
    for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + (o * steps + t) * inner, src + o * inner, inner);
  }
  return r;
}

Tensor BoolScalar(bool b) {
  Tensor t(DType::kBool, {});
  t.data<bool>()[0] = b;
  return t;
}

bool Truth(const Tensor& t) { return t.numel() > 0 && LoadAsInt64(t.dtype(), t.raw(), 0) != 0; }

StatusOr<std::vector<Tensor>> RunIf(const Node& n, const std::vector<const Tensor*>& in, const BodyRunner& run_body) {
  if (!in[0] || in[0]->numel() != 1) return InvalidArgument("{}: cond must have one element", n.Label());
  const Graph* branch = n.attrs.GetGraph(Truth(*in[0]) ? "then_branch" : "else_branch");
  ASSIGN_OR_RETURN(std::vector<Tensor> outs, RunBody(n, *branch, {}, in, 1, run_body));
  outs.resize(n.num_outputs());
  return outs;
}

StatusOr<std::vector<Tensor>> RunLoop(const Node& n, const std::vector<const Tensor*>& in, const BodyRunner& run_body) {
  const Graph& body = *n.attrs.GetGraph("body");
  const int carried = n.num_inputs() - 2 - NumCaptures(n.attrs);
  const int scans = static_cast<int>(body.outputs().size()) - 1 - carried;
  const Tensor* max_trips = in[0];
  const Tensor* cond_in = in[1];
  if (max_trips && max_trips->numel() != 1) return InvalidArgument("{}: M must have one element", n.Label());
  if (cond_in && cond_in->numel() != 1) return InvalidArgument("{}: cond must have one element", n.Label());
  const int64_t trips = max_trips ? LoadAsInt64(max_trips->dtype(), max_trips->raw(), 0) : -1;
  bool cond = cond_in ? Truth(*cond_in) : true;
  std::vector<Tensor> state;
  for (int i = 0; i < carried; ++i) state.push_back(*in[2 + i]);
  std::vector<std::vector<Tensor>> scanned(scans);
  for (int64_t i = 0; (trips < 0 || i < trips) && cond; ++i) {
    std::vector<Tensor> formal = {Tensor::ScalarI64(i), BoolScalar(cond)};
    for (auto& s : state) formal.push_back(s);
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, RunBody(n, body, std::move(formal), in, 2 + carried, run_body));
    // Without a cond input the body's cond output is ignored (ONNX Loop: a for loop).
    if (cond_in) cond = Truth(outs[0]);
    for (int k = 0; k < carried; ++k) state[k] = std::move(outs[1 + k]);
    for (int k = 0; k < scans; ++k) scanned[k].push_back(std::move(outs[1 + carried + k]));
  }
  std::vector<Tensor> result = std::move(state);
  for (int k = 0; k < scans; ++k) {
    ASSIGN_OR_RETURN(Tensor t, Stack(n, scanned[k], 0, false, body.outputs()[1 + carried + k]->type));
    result.push_back(std::move(t));
  }
  result.resize(n.num_outputs());
  return result;
}

StatusOr<std::vector<Tensor>> RunScan(const Node& n, const std::vector<const Tensor*>& in, const BodyRunner& run_body) {
  const Graph& body = *n.attrs.GetGraph("body");
  const int formal = n.num_inputs() - NumCaptures(n.attrs);
  const int m = static_cast<int>(n.attrs.GetInt("num_scan_inputs", 0));
  const int states = formal - m;
  const int scans = static_cast<int>(body.outputs().size()) - states;
  const auto in_axes = n.attrs.GetInts("scan_input_axes", std::vector<int64_t>(m, 0));
  const auto in_dirs = n.attrs.GetInts("scan_input_directions", std::vector<int64_t>(m, 0));
  const auto out_axes = n.attrs.GetInts("scan_output_axes", std::vector<int64_t>(scans, 0));
  const auto out_dirs = n.attrs.GetInts("scan_output_directions", std::vector<int64_t>(scans, 0));
  if (static_cast<int>(in_dirs.size()) != m || static_cast<int>(out_dirs.size()) != scans) {
    return InvalidArgument("{}: scan_input_directions has {} entries for {} scan inputs, scan_output_directions {} for {}",
                           n.Label(), in_dirs.size(), m, out_dirs.size(), scans);
  }
  std::vector<int> axes(m);
  int64_t steps = -1;
  for (int j = 0; j < m; ++j) {
    const Tensor& x = *in[states + j];
    ASSIGN_OR_RETURN(axes[j], NormalizeAxis(in_axes[j], x.rank(), "scan_input_axes"));
    if (steps >= 0 && x.dim(axes[j]) != steps) {
      return InvalidArgument("{}: scan input {} has {} steps, scan input 0 has {}", n.Label(), j, x.dim(axes[j]), steps);
    }
    steps = x.dim(axes[j]);
  }
  std::vector<Tensor> state;
  for (int i = 0; i < states; ++i) state.push_back(*in[i]);
  std::vector<std::vector<Tensor>> scanned(scans);
  for (int64_t t = 0; t < steps; ++t) {
    std::vector<Tensor> formal_in = state;
    for (int j = 0; j < m; ++j) formal_in.push_back(Take(*in[states + j], axes[j], in_dirs[j] ? steps - 1 - t : t));
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, RunBody(n, body, std::move(formal_in), in, formal, run_body));
    for (int i = 0; i < states; ++i) state[i] = std::move(outs[i]);
    for (int k = 0; k < scans; ++k) scanned[k].push_back(std::move(outs[states + k]));
  }
  std::vector<Tensor> result = std::move(state);
  for (int k = 0; k < scans; ++k) {
    const TensorType& element = body.outputs()[states + k]->type;
    const int rank = scanned[k].empty() ? element.rank() : scanned[k][0].rank();
    ASSIGN_OR_RETURN(int axis, NormalizeAxis(out_axes[k], rank + 1, "scan_output_axes"));
    ASSIGN_OR_RETURN(Tensor s, Stack(n, scanned[k], axis, out_dirs[k] != 0, element));
    result.push_back(std::move(s));
  }
  result.resize(n.num_outputs());
  return result;
}

// SequenceMap: the body once per item of input 0; sequence inputs give their item, tensors
// pass whole; output k collects the body's output k of every run.
StatusOr<std::vector<Tensor>> RunSequenceMap(const Node& n, const std::vector<const Tensor*>& in, const BodyRunner& run_body) {
  const Graph& body = *n.attrs.GetGraph("body");
  const int formal = n.num_inputs() - NumCaptures(n.attrs);
  if (!in[0] || !in[0]->is_sequence()) return InvalidArgument("{}: input 0 must be a sequence", n.Label());
  const size_t count = in[0]->items().size();
  for (int j = 1; j < formal; ++j) {
    if (in[j] && in[j]->is_sequence() && in[j]->items().size() != count) {
      return InvalidArgument("{}: input {} has {} items, input 0 has {}", n.Label(), j, in[j]->items().size(), count);
    }
  }
  std::vector<std::vector<Tensor>> collected(body.outputs().size());
  for (size_t i = 0; i < count; ++i) {
    std::vector<Tensor> args;
    for (int j = 0; j < formal; ++j) {
      if (!in[j]) return InvalidArgument("{}: input {} is missing", n.Label(), j);
      args.push_back(in[j]->is_sequence() ? in[j]->items()[i] : *in[j]);
    }
    ASSIGN_OR_RETURN(std::vector<Tensor> outs, RunBody(n, body, std::move(args), in, formal, run_body));
    for (size_t k = 0; k < outs.size(); ++k) collected[k].push_back(std::move(outs[k]));
  }
  std::vector<Tensor> result;
  for (size_t k = 0; k < collected.size(); ++k) {
    result.push_back(Tensor::Sequence(body.outputs()[k]->type.dtype, std::move(collected[k])));
  }
  result.resize(n.num_outputs());
  return result;
}

}  // namespace

StatusOr<std::vector<Tensor>> RunControlFlow(const Node& n, const std::vector<const Tensor*>& inputs,
                                             const BodyRunner& run_body) {
  std::vector<const Tensor*> in = inputs;
  in.resize(std::max<size_t>(in.size(), 2), nullptr);
  for (const char* attr : {"then_branch", "else_branch", "body"}) {
    const bool needed = (n.op() == OpKind::kIf) == (std::string_view(attr) != "body");
    if (needed && !n.attrs.GetGraph(attr)) return InvalidArgument("{}: attribute '{}' (a graph) is missing", n.Label(), attr);
  }
  switch (n.op()) {
    case OpKind::kIf: return RunIf(n, in, run_body);
    case OpKind::kLoop: return RunLoop(n, in, run_body);
    case OpKind::kScan: return RunScan(n, in, run_body);
    case OpKind::kSequenceMap: return RunSequenceMap(n, in, run_body);
    default: return Internal("{} is not a control-flow op", n.Label());
  }
}

}  // namespace edgec
