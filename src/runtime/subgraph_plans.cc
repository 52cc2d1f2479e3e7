// SubgraphPlans: fast plans for the subgraphs of If, Loop and Scan (subgraph_plans.h).
#include "runtime/subgraph_plans.h"

#include "ir/control_flow.h"
#include "runtime/control_flow.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"
#include "support/status.h"

namespace edgec {

namespace {

constexpr size_t kMaxPlans = 8;

}  // namespace

SubgraphPlans::SubgraphPlans(const Node& n, const PlanOptions& options) : node_(n), options_(options) {
  const int captures = NumCaptures(n.attrs);
  const int first = n.num_inputs() - captures;
  for (const auto& [attr, sub] : Subgraphs(n.attrs)) {
    Body& b = bodies_[sub];
    b.attr = attr;
    b.graph = sub->Clone();
    const int formal = static_cast<int>(b.graph.inputs().size()) - captures;
    if (formal < 0) continue;  // malformed: RunControlFlow says so
    for (int c = 0; c < captures; ++c) {
      const Value* outer = n.input(first + c);
      if (!outer || !outer->is_constant()) continue;
      Value* in = b.graph.inputs()[formal + c];
      Value* k = b.graph.AddConstant(b.graph.FreshName(in->name() + ".value"), outer->constant());
      b.graph.ReplaceAllUses(in, k);
    }
  }
}

SubgraphPlans::~SubgraphPlans() = default;

StatusOr<std::vector<Tensor>> SubgraphPlans::RunBody(const Graph& body, const std::map<std::string, Tensor>& given) {
  auto it = bodies_.find(&body);
  if (it == bodies_.end()) return Internal("{}: a subgraph the node does not hold", node_.Label());
  Body& b = it->second;
  // Sequence and optional values are keyed by kind and element type; their items' shapes
  // are the dynamic part's business (the plan reads them at run time).
  std::string key;
  std::map<std::string, Dims> shapes;
  for (const Value* v : b.graph.inputs()) {
    auto g = given.find(v->name());
    if (g == given.end()) return Internal("{}: subgraph input '{}' has no value", node_.Label(), v->name());
    const Tensor& t = g->second;
    if (!t.is_dense()) {
      key += t.is_none() ? fmt::format("none({});", DTypeName(t.dtype())) : fmt::format("seq({});", DTypeName(t.dtype()));
      continue;
    }
    if (v->type.IsDenseTensor()) shapes[v->name()] = t.dims();
    key += std::string(DTypeName(t.dtype())) + DimsToString(t.dims()) + ";";
  }
  auto p = b.plans.find(key);
  if (p == b.plans.end()) {
    Graph g = b.graph.Clone();
    // An input declared a tensor but given a sequence or an empty optional takes the given kind.
    for (Value* v : g.inputs()) {
      const Tensor& t = given.at(v->name());
      if (t.is_dense() || !v->type.IsDenseTensor()) continue;
      v->type.kind = t.kind();
      v->type.optional = t.is_none();
    }
    Status bound = BindInputShapes(g, shapes, 1);
    if (!bound.ok()) return bound.WithContext(fmt::format("{}: subgraph '{}'", node_.Label(), b.attr));
    if (options_.prepare_subgraph) {
      Status prepared = options_.prepare_subgraph(g);
      if (!prepared.ok()) return prepared.WithContext(fmt::format("{}: subgraph '{}'", node_.Label(), b.attr));
    }
    auto plan = Plan::Build(std::move(g), options_);
    if (!plan.ok()) return plan.status().WithContext(fmt::format("{}: subgraph '{}'", node_.Label(), b.attr));
    auto e = std::make_unique<Entry>();
    e->plan = std::move(plan).value();
    e->executor = std::make_unique<PlanExecutor>(*e->plan);
    e->executor->set_share_sequence_items(true);
    if (b.plans.size() >= kMaxPlans) {
      b.plans.clear();
      b.used.clear();
    }
    p = b.plans.emplace(key, std::move(e)).first;
  }
  Entry* e = p->second.get();
  ++b.runs;
  if (std::find(b.used.begin(), b.used.end(), e) == b.used.end()) b.used.push_back(e);
  std::vector<Tensor> outs;
  Status ran = e->executor->Run(given, &outs);
  if (!ran.ok()) return ran.WithContext(fmt::format("{}: subgraph '{}'", node_.Label(), b.attr));
  return outs;
}

StatusOr<std::vector<Tensor>> SubgraphPlans::Run(const std::vector<const Tensor*>& inputs) {
  for (auto& [g, b] : bodies_) {
    b.runs = 0;
    b.used.clear();
    b.reference.clear();
  }
  return RunControlFlow(node_, inputs, [this](const Graph& body, const std::map<std::string, Tensor>& given) {
    return RunBody(body, given);
  });
}

std::vector<std::string> SubgraphPlans::ReferenceSteps() const {
  std::vector<std::string> r;
  for (const auto& [g, b] : bodies_) {
    if (!b.reference.empty()) r.push_back(fmt::format("{} subgraph '{}': {}", node_.Label(), b.attr, b.reference));
    for (const Entry* e : b.used) {
      for (const std::string& s : e->executor->ReferenceSteps()) r.push_back(fmt::format("{} in subgraph '{}'", s, b.attr));
    }
  }
  return r;
}

std::string SubgraphPlans::Describe() const {
  if (auto ref = ReferenceSteps(); !ref.empty()) return "reference: " + ref.front();
  std::string s;
  for (const auto& [g, b] : bodies_) {
    if (!b.runs) continue;
    int steps = 0, fast = 0;
    for (const Entry* e : b.used) {
      for (const PlanStepInfo& info : e->plan->steps()) {
        steps += !info.view;
        fast += !info.view && !info.kernel.starts_with("reference");
      }
      steps += static_cast<int>(e->plan->dynamic_nodes().size());
      fast += static_cast<int>(e->plan->dynamic_nodes().size());
    }
    s += fmt::format("{}subgraph {}: {} run(s) on {} fast plan(s) ({} kernel steps, {} fast)", s.empty() ? "" : "; ",
                     b.attr, b.runs, b.used.size(), steps, fast);
  }
  return s.empty() ? "subgraphs on fast plans (none ran)" : s;
}

}  // namespace edgec
