#include "api/cpu_runner.h"

#include <chrono>

#include "driver/session.h"

namespace edgec::api {

struct CpuRunner::State {
  std::unique_ptr<edgec::Session> session;
  bool profiling = true;
  double seconds = 0;
};

CpuRunner::CpuRunner() : state_(std::make_unique<State>()) {}
CpuRunner::~CpuRunner() = default;

StatusOr<std::unique_ptr<CpuRunner>> CpuRunner::Create(Graph g, const std::string& what, const Options& o) {
  SessionOptions so;
  so.opt_level = o.opt_level;
  so.plan.threads = o.threads;
  so.plan.tuning = o.tuning;
  auto r = std::unique_ptr<CpuRunner>(new CpuRunner());
  ASSIGN_OR_RETURN(r->state_->session, edgec::Session::FromGraph(std::move(g), what, so));
  r->state_->profiling = o.profiling;
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
  return Status::Ok();
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
