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

StatusOr<Session::Entry*> Session::EntryFor(const std::map<std::string, Dims>& shapes) {
  std::string key;
  for (auto& [name, dims] : shapes) key += name + DimsToString(dims) + ";";
  if (auto it = cache_.find(key); it != cache_.end()) return it->second.get();

  Graph g = source_.Clone();
  Status bound = BindInputShapes(g, shapes, 1);
  if (!bound.ok()) return bound.WithContext(what_);
  passes::PassContext ctx;
  Status opt = driver::Optimize(g, options_.opt_level, options_.pipeline, ctx);
  if (!opt.ok()) return opt.WithContext(what_);
  auto plan = lower::BuildCpuPlan(std::move(g), options_.plan);
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
  for (auto& [name, t] : inputs) shapes[name] = t.dims();
  ASSIGN_OR_RETURN(Entry* e, EntryFor(shapes));
  last_ = e;
  return e->executor->Run(inputs, outputs);
}

}  // namespace edgec
