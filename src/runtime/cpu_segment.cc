#include "runtime/cpu_segment.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <unordered_set>

#include "lower/cpu_lower.h"
#include "runtime/cpu_thread_trace.h"

namespace edgec {

StatusOr<Graph> ExtractSegmentGraph(const Graph& g, const std::vector<const Node*>& nodes,
                                    std::vector<const Value*>* inputs, std::vector<const Value*>* outputs) {
  Graph s;
  s.name = g.name;
  std::unordered_set<const Node*> inside(nodes.begin(), nodes.end());
  std::unordered_map<const Value*, Value*> map;
  auto copy_facts = [](const Value* from, Value* to) {
    to->type = from->type;
    to->quant = from->quant;
  };
  for (const Node* n : nodes) {
    std::vector<Value*> in;
    for (const Value* v : n->inputs()) {
      if (!v) {
        in.push_back(nullptr);
        continue;
      }
      auto it = map.find(v);
      if (it == map.end()) {
        if (v->producer() && inside.count(v->producer()))
          return Internal("{}: input '{}' is read before its producer runs", n->Label(), v->name());
        Value* c = v->is_constant() ? s.AddConstant(v->name(), v->constant()) : s.AddInput(v->name(), v->type);
        copy_facts(v, c);
        if (!v->is_constant()) inputs->push_back(v);
        it = map.emplace(v, c).first;
      }
      in.push_back(it->second);
    }
    std::vector<std::string> names;
    for (const Value* o : n->outputs()) names.push_back(o ? o->name() : "");
    Node* m = s.AddNode(n->op(), n->name(), std::move(in), n->num_outputs(), names);
    m->attrs = n->attrs;
    m->provenance = n->provenance;
    m->opset = n->opset;
    for (int i = 0; i < n->num_outputs(); ++i) {
      const Value* o = n->output(i);
      if (!o) continue;
      copy_facts(o, m->output(i));
      map[o] = m->output(i);
    }
  }
  for (const Node* n : nodes) {
    for (const Value* o : n->outputs()) {
      if (!o) continue;
      bool read_outside = o->is_graph_output();
      for (const Use& u : o->uses()) read_outside |= !inside.count(u.node);
      if (!read_outside) continue;
      s.MarkOutput(map.at(o));
      outputs->push_back(o);
    }
  }
  return s;
}

StatusOr<std::vector<CpuSegment>> BuildCpuSegments(const Graph& g, const std::function<bool(const Node&)>& on_cpu,
                                                   const PlanOptions& options) {
  std::vector<std::vector<const Node*>> runs;
  bool open = false;
  for (const Node* n : g.nodes()) {
    if (!on_cpu(*n)) {
      open = false;
      continue;
    }
    if (!open) runs.emplace_back();
    open = true;
    runs.back().push_back(n);
  }
  std::vector<CpuSegment> segments;
  for (auto& nodes : runs) {
    CpuSegment seg;
    seg.nodes = std::move(nodes);
    ASSIGN_OR_RETURN(Graph sub, ExtractSegmentGraph(g, seg.nodes, &seg.inputs, &seg.outputs));
    auto plan = lower::BuildCpuPlan(std::move(sub), options);
    if (!plan.ok())
      return plan.status().WithContext(fmt::format("CPU segment from {}", seg.nodes.front()->Label()));
    seg.plan = std::move(*plan);
    for (size_t i = 0; i < seg.plan->steps().size(); ++i)
      seg.step_of[seg.plan->steps()[i].node->name()] = static_cast<int>(i);
    seg.exec = std::make_unique<PlanExecutor>(*seg.plan);
    seg.exec->set_profiling(true);
    segments.push_back(std::move(seg));
  }
  return segments;
}

Status RunCpuSegment(CpuSegment& s, std::unordered_map<std::string, Tensor>& env, CpuSegmentTiming* timing) {
  std::map<std::string, Tensor> in;
  for (const Value* v : s.inputs) {
    auto it = env.find(v->name());
    if (it == env.end())
      return Internal("{}: input '{}' was not computed", s.nodes.front()->Label(), v->name());
    in.emplace(v->name(), it->second);
  }
  if (!s.warm) {
    RETURN_IF_ERROR(s.exec->Run(in, &s.results));
    s.warm = true;
  }
  std::optional<cpu_trace::ThreadRecording> recording;
  if (timing->record_threads) recording.emplace();
  const auto t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(s.exec->Run(in, &s.results));
  timing->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<cpu_trace::RegionSlice> regions;
  if (recording) regions = recording->Take();
  const auto& outs = s.plan->outputs();
  if (outs.size() != s.results.size()) return Internal("CPU plan returned {} outputs, not {}", s.results.size(), outs.size());
  for (size_t i = 0; i < outs.size(); ++i) env[outs[i]->name()] = std::move(s.results[i]);  // the next Run allocates anew
  timing->node_seconds.clear();
  const auto& nanos = s.exec->step_nanos();
  for (const auto& [name, step] : s.step_of) timing->node_seconds[name] = nanos[step] * 1e-9;
  timing->node_threads.clear();
  if (!recording) return Status::Ok();
  // A region's share belongs to the step whose span holds its start (steps run one at a time).
  timing->caller = recording->thread();
  const auto& begins = s.exec->step_begin_nanos();
  for (const auto& [name, step] : s.step_of) {
    const int64_t b = begins[step], e = b + nanos[step];
    for (const cpu_trace::RegionSlice& r : regions)
      if (r.begin_ns >= b && r.begin_ns < e)
        timing->node_threads[name].push_back({r.tid, (r.begin_ns - b) * 1e-9, (std::min(r.end_ns, e) - b) * 1e-9});
  }
  return Status::Ok();
}

std::string CpuSegmentKernel(const CpuSegment& s, const std::string& node) {
  auto it = s.step_of.find(node);
  if (it == s.step_of.end()) {
    for (const Node* n : s.plan->dynamic_nodes())
      if (n->name() == node) return "reference (shape known at run time)";
    return "fused";
  }
  return s.plan->steps()[it->second].kernel;
}

}  // namespace edgec
