#include "runtime/step_profile.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace edgec {

StepProfile::StepProfile(const Plan& plan)
    : plan_(plan),
      total_nanos_(plan.steps().size() + plan.dynamic_nodes().size(), 0),
      dynamic_kernels_(plan.dynamic_nodes().size(), "dynamic (not run yet)") {}

void StepProfile::Add(const std::vector<int64_t>& step_nanos, const std::vector<int64_t>& dynamic_nanos,
                      const std::vector<std::string>& dynamic_kernels) {
  const size_t steps = plan_.steps().size();
  const size_t n = std::min(step_nanos.size(), steps);
  for (size_t i = 0; i < n; ++i) total_nanos_[i] += step_nanos[i];
  for (size_t k = 0; k < dynamic_nanos.size() && steps + k < total_nanos_.size(); ++k) total_nanos_[steps + k] += dynamic_nanos[k];
  for (size_t k = 0; k < dynamic_kernels.size() && k < dynamic_kernels_.size(); ++k) dynamic_kernels_[k] = dynamic_kernels[k];
  ++runs_;
}

double StepProfile::TotalMs() const {
  int64_t sum = 0;
  for (int64_t t : total_nanos_) sum += t;
  return runs_ ? static_cast<double>(sum) * 1e-6 / runs_ : 0.0;
}

std::vector<StepProfile::Row> StepProfile::Rows() const {
  const double total = TotalMs();
  std::vector<Row> rows;
  const auto& steps = plan_.steps();
  for (size_t i = 0; i < steps.size(); ++i) {
    const PlanStepInfo& s = steps[i];
    if (s.view) continue;
    Row r;
    r.step = i;
    r.op = std::string(OpName(s.node->op()));
    r.node = s.node->name();
    r.kernel = s.fallback_reason.empty() ? s.kernel : "reference: " + s.fallback_reason;
    r.ms = runs_ ? static_cast<double>(total_nanos_[i]) * 1e-6 / runs_ : 0.0;
    r.share = total > 0 ? r.ms / total : 0.0;
    rows.push_back(std::move(r));
  }
  const std::vector<const Node*> dynamic = plan_.dynamic_nodes();
  for (size_t k = 0; k < dynamic.size(); ++k) {
    Row r;
    r.step = steps.size() + k;
    r.op = std::string(OpName(dynamic[k]->op()));
    r.node = dynamic[k]->name();
    r.kernel = dynamic_kernels_[k];
    r.ms = runs_ ? static_cast<double>(total_nanos_[r.step]) * 1e-6 / runs_ : 0.0;
    r.share = total > 0 ? r.ms / total : 0.0;
    rows.push_back(std::move(r));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.ms > b.ms; });
  return rows;
}

std::vector<StepProfile::OpRow> StepProfile::ByOp() const {
  std::map<std::string, OpRow> by;
  for (const Row& r : Rows()) {
    OpRow& o = by[r.op];
    o.op = r.op;
    ++o.steps;
    o.ms += r.ms;
    o.share += r.share;
  }
  std::vector<OpRow> out;
  for (auto& [op, row] : by) out.push_back(row);
  std::stable_sort(out.begin(), out.end(), [](const OpRow& a, const OpRow& b) { return a.ms > b.ms; });
  return out;
}

namespace {

std::string Clip(const std::string& s, size_t width) {
  return s.size() <= width ? s : "..." + s.substr(s.size() - (width - 3));
}

}  // namespace

std::string StepProfile::Table(int top) const {
  const std::vector<Row> rows = Rows();
  std::string out = fmt::format("profile: {} step(s) over {} run(s), {:.3f} ms per run in steps\n",
                                rows.size(), runs_, TotalMs());
  out += fmt::format("  {:>4} {:<18} {:<32} {:>9} {:>6}  {}\n", "#", "op", "node", "ms", "%", "kernel");
  const size_t shown = top > 0 ? std::min(rows.size(), static_cast<size_t>(top)) : rows.size();
  for (size_t i = 0; i < shown; ++i) {
    const Row& r = rows[i];
    out += fmt::format("  {:>4} {:<18} {:<32} {:>9.3f} {:>5.1f}%  {}\n", r.step, Clip(r.op, 18), Clip(r.node, 32),
                       r.ms, 100.0 * r.share, r.kernel);
  }
  if (shown < rows.size()) out += fmt::format("  ... {} more steps (--top 0 shows all)\n", rows.size() - shown);
  out += "  by op:\n";
  for (const OpRow& o : ByOp()) {
    out += fmt::format("    {:<18} {:>4} step(s) {:>9.3f} ms {:>5.1f}%\n", Clip(o.op, 18), o.steps, o.ms,
                       100.0 * o.share);
  }
  return out;
}

nlohmann::json StepProfile::ToJson() const {
  nlohmann::json steps = nlohmann::json::array();
  for (const Row& r : Rows()) {
    steps.push_back({{"step", r.step}, {"op", r.op}, {"node", r.node}, {"kernel", r.kernel}, {"ms", r.ms},
                     {"share", r.share}});
  }
  nlohmann::json ops = nlohmann::json::array();
  for (const OpRow& o : ByOp()) ops.push_back({{"op", o.op}, {"steps", o.steps}, {"ms", o.ms}, {"share", o.share}});
  return {{"runs", runs_}, {"total_ms", TotalMs()}, {"steps", steps}, {"by_op", ops}};
}

}  // namespace edgec
