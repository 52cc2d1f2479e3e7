#include "api/cpu_runner.h"

#include <chrono>
#include <cstdio>

#include <fmt/format.h>

#include "driver/session.h"
#include "runtime/step_profile.h"

namespace edgec::api {

struct CpuRunner::State {
  std::unique_ptr<edgec::Session> session;
  bool profiling = true;
  bool verbose = false;
  double seconds = 0;
  // The step profile while profiling is on (of the plan it was started on).
  const Plan* profiled_plan = nullptr;
  std::unique_ptr<StepProfile> steps;
};

CpuRunner::CpuRunner() : state_(std::make_unique<State>()) {}
CpuRunner::~CpuRunner() = default;

StatusOr<std::unique_ptr<CpuRunner>> CpuRunner::Create(Graph g, const std::string& what, const Options& o) {
  SessionOptions so;
  so.opt_level = o.opt_level;
  so.pipeline = o.pipeline;
  so.plan.threads = o.threads;
  so.plan.fast_kernels = o.fast_kernels;
  so.plan.tuning = o.tuning;
  so.verbose = o.verbose;
  auto r = std::unique_ptr<CpuRunner>(new CpuRunner());
  ASSIGN_OR_RETURN(r->state_->session, edgec::Session::FromGraph(std::move(g), what, so));
  r->state_->profiling = o.profiling;
  r->state_->verbose = o.verbose;
  return r;
}

Status CpuRunner::Run(const std::map<std::string, Tensor>& inputs, std::vector<Tensor>* outputs) {
  edgec::Session& s = *state_->session;
  if (PlanExecutor* e = s.last_executor()) e->set_profiling(state_->profiling);
  const PlanExecutor* before = s.last_executor();
  auto t0 = std::chrono::steady_clock::now();
  RETURN_IF_ERROR(s.Run(inputs, outputs));
  // A plan built by this run had no profiling on, and its time includes the build: run it
  // again, timed. Only the first run of each new input shape pays this.
  if (state_->profiling && s.last_executor() != before) {
    s.last_executor()->set_profiling(true);
    t0 = std::chrono::steady_clock::now();
    RETURN_IF_ERROR(s.Run(inputs, outputs));
  }
  state_->seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (state_->profiling && s.last_plan()) {
    if (!state_->steps || state_->profiled_plan != s.last_plan()) {
      state_->steps = std::make_unique<StepProfile>(*s.last_plan());
      state_->profiled_plan = s.last_plan();
    }
    const PlanExecutor& e = *s.last_executor();
    state_->steps->Add(e.step_nanos(), e.dynamic_nanos(), e.dynamic_kernels());
  }
  if (state_->verbose && s.last_plan()) {
    for (const auto& step : s.last_plan()->steps()) {
      if (!step.fallback_reason.empty()) fmt::print(stderr, "  reference: {}\n", step.fallback_reason);
      for (const auto& what : step.staged) fmt::print(stderr, "  staged copy: {}: {}\n", step.node->Label(), what);
    }
  }
  return Status::Ok();
}

StatusOr<CpuRunner::PlanFigures> CpuRunner::Prepare(const std::map<std::string, Dims>& shapes) {
  ASSIGN_OR_RETURN(const Plan* p, state_->session->Prepare(shapes));
  PlanFigures f;
  f.threads = p->threads();
  f.arena_bytes = p->memory().arena_bytes;
  f.lower_bound = p->memory().lower_bound;
  f.naive_bytes = p->memory().naive_bytes;
  f.summary = p->Summary();
  return f;
}

void CpuRunner::SetProfiling(bool on) {
  if (on && !state_->profiling) {
    state_->steps.reset();
    state_->profiled_plan = nullptr;
  }
  state_->profiling = on;
  if (PlanExecutor* e = state_->session->last_executor()) e->set_profiling(on);
}

bool CpuRunner::profiling() const { return state_->profiling; }

std::string CpuRunner::StepProfileTable(int top) const { return state_->steps ? state_->steps->Table(top) : ""; }

std::string CpuRunner::StepProfileJson() const {
  return state_->steps ? state_->steps->ToJson().dump() : "null";
}

double CpuRunner::last_seconds() const { return state_->seconds; }

std::vector<CpuStepTime> CpuRunner::LastSteps() const {
  std::vector<CpuStepTime> r;
  const Plan* plan = state_->session->last_plan();
  PlanExecutor* e = state_->session->last_executor();
  if (!plan || !e) return r;
  const auto& nanos = e->step_nanos();
  for (size_t i = 0; i < plan->steps().size(); ++i) {
    const PlanStepInfo& info = plan->steps()[i];
    CpuStepTime t;
    t.node = info.node;
    t.kernel = info.view ? "view" : info.kernel;
    t.nanos = i < nanos.size() ? nanos[i] : 0;
    r.push_back(std::move(t));
  }
  return r;
}

}  // namespace edgec::api
