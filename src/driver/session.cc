#include "driver/session.h"

#include "driver/load.h"
#include "frontend/onnx/importer.h"
#include "lower/cpu_lower.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"

namespace edgec {

StatusOr<std::unique_ptr<Session>> Session::Open(const std::string& model_path, const SessionOptions& options) {
  ASSIGN_OR_RETURN(Graph g, onnx_fe::ImportOnnxFile(model_path));
  return FromGraph(std::move(g), model_path, options);
}

StatusOr<std::unique_ptr<Session>> Session::FromGraph(Graph g, std::string what, const SessionOptions& options) {
  auto s = std::unique_ptr<Session>(new Session());
  s->source_ = std::move(g);
  s->what_ = std::move(what);
  s->options_ = options;
  return s;
}

namespace {

int CountNonStatic(const Graph& g) {
  int n = 0;
  for (const Node* node : g.nodes()) {
    for (const Value* o : node->outputs()) n += !o->type.IsStatic();
  }
  return n;
}

// `g`'s input `name` replaced by the constant `value` in every use (the input itself stays).
void BindValue(Graph& g, const std::string& name, const Tensor& value) {
  Value* in = g.FindValue(name);
  Value* c = g.AddConstant(g.FreshName(name + ".value"), value);
  g.ReplaceAllUses(in, c);
}

std::string ValuesText(const Tensor& t) {
  std::string s;
  for (double v : t.ToDoubleVector()) s += (s.empty() ? "" : ",") + fmt::format("{}", v);
  return "{" + s + "}";
}

}  // namespace

StatusOr<std::vector<std::string>> FindShapeInputs(const Graph& g, const std::map<std::string, Tensor>& inputs) {
  std::map<std::string, Dims> shapes;
  for (auto& [name, t] : inputs) {
    if (t.is_dense()) shapes[name] = t.dims();  // a sequence or optional has no shape to bind
  }
  std::vector<std::string> candidates;
  for (const Value* v : g.inputs()) {
    auto it = inputs.find(v->name());
    if (it == inputs.end()) continue;
    const Tensor& t = it->second;
    if (!t.is_dense()) continue;
    const bool integer = !IsFloat(t.dtype()) && t.dtype() != DType::kBool;
    if ((integer && t.numel() <= 64) || (IsFloat(t.dtype()) && t.numel() <= 8)) candidates.push_back(v->name());
  }
  if (candidates.empty()) return std::vector<std::string>();
  Graph dims_only = g.Clone();
  RETURN_IF_ERROR(BindInputShapes(dims_only, shapes, 1));
  const int open = CountNonStatic(dims_only);
  std::vector<std::string> found;
  if (open == 0) return found;
  for (const std::string& name : candidates) {
    Graph with_value = g.Clone();
    BindValue(with_value, name, inputs.at(name));
    RETURN_IF_ERROR(BindInputShapes(with_value, shapes, 1));
    if (CountNonStatic(with_value) < open) found.push_back(name);
  }
  return found;
}

StatusOr<Session::Entry*> Session::EntryFor(const std::map<std::string, Dims>& shapes,
                                            const std::map<std::string, Tensor>& shape_values) {
  std::string key;
  for (auto& [name, dims] : shapes) key += name + DimsToString(dims) + ";";
  for (auto& [name, value] : shape_values) key += name + " = " + ValuesText(value) + ";";
  if (auto it = cache_.find(key); it != cache_.end()) return it->second.get();

  Graph g = source_.Clone();
  for (auto& [name, value] : shape_values) BindValue(g, name, value);
  Status bound = BindInputShapes(g, shapes, 1);
  if (!bound.ok()) return bound.WithContext(what_);
  passes::PassContext ctx;
  Status opt = driver::Optimize(g, options_.opt_level, options_.pipeline, ctx);
  if (!opt.ok()) return opt.WithContext(what_);
  PlanOptions plan_options = options_.plan;
  if (!plan_options.prepare_subgraph) {
    // Subgraphs (loop bodies, branches) go through the same pipeline once their shapes are bound.
    plan_options.prepare_subgraph = [level = options_.opt_level, pipeline = options_.pipeline](Graph& sub) {
      passes::PassContext sub_ctx;
      return driver::Optimize(sub, level, pipeline, sub_ctx);
    };
  }
  auto plan = lower::BuildCpuPlan(std::move(g), plan_options);
  if (!plan.ok()) return plan.status().WithContext(what_);
  auto entry = std::make_unique<Entry>();
  entry->plan = std::move(plan).value();
  entry->executor = std::make_unique<PlanExecutor>(*entry->plan);
  ++plans_built_;
  if (options_.verbose) {
    std::string shapes = key;
    while (!shapes.empty() && shapes.back() == ';') shapes.pop_back();
    for (size_t i = 0; (i = shapes.find(';', i)) != std::string::npos;) shapes.replace(i, 1, ", ");
    fmt::print(stderr, "edgec: built plan #{} for input shapes {}: {}\n", plans_built_, shapes.empty() ? "(static)" : shapes,
               entry->plan->Summary());
  }
  if (cache_.size() >= options_.max_cached_plans && !order_.empty()) {
    cache_.erase(order_.front());
    order_.erase(order_.begin());
  }
  Entry* e = entry.get();
  cache_[key] = std::move(entry);
  order_.push_back(key);
  return e;
}

StatusOr<const Plan*> Session::Prepare(const std::map<std::string, Dims>& shapes) {
  ASSIGN_OR_RETURN(Entry* e, EntryFor(shapes));
  last_ = e;
  return e->plan.get();
}

Status Session::Run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) {
  RETURN_IF_ERROR(CheckInputs(source_, inputs));
  std::map<std::string, Dims> shapes;
  for (auto& [name, t] : inputs) {
    if (t.is_dense()) shapes[name] = t.dims();  // a sequence or optional has no shape to bind
  }
  if (!shape_inputs_found_) {
    auto found = FindShapeInputs(source_, inputs);
    if (!found.ok()) return found.status().WithContext(what_);
    shape_inputs_ = std::move(found).value();
    shape_inputs_found_ = true;
    if (options_.verbose && !shape_inputs_.empty()) {
      std::string list;
      for (auto& n : shape_inputs_) list += (list.empty() ? "'" : ", '") + n + "'";
      fmt::print(stderr, "edgec: input{} {} decide{} shapes: one plan per value\n", shape_inputs_.size() == 1 ? "" : "s",
                 list, shape_inputs_.size() == 1 ? "s" : "");
    }
  }
  std::map<std::string, Tensor> shape_values;
  for (const auto& name : shape_inputs_) shape_values[name] = inputs.at(name);
  ASSIGN_OR_RETURN(Entry* e, EntryFor(shapes, shape_values));
  last_ = e;
  return e->executor->Run(inputs, outputs);
}

}  // namespace edgec
