// include/edgec/report.h over report/html_report.h, report/profile.h (+ chrome_trace,
// profile_html) and report/compile_diff.h.
#include "edgec/report.h"

#include "api/handle.h"
#include "api/session_impl.h"
#include "report/chrome_trace.h"
#include "report/compile_diff.h"
#include "report/html_report.h"
#include "report/profile.h"
#include "report/profile_html.h"
#include "support/status.h"

namespace edgec {
inline namespace v1 {
namespace {

// The session's compiled model and last npu-sim run, or why there is none.
Status CheckSimulatedRun(const Session& session, const char* what) {
  const Session::Impl& s = session.impl();
  if (!s.compiled) return InvalidArgument("{}: needs a compiled model's session", what);
  if (!s.last_run)
    return Status(StatusCode::kFailedPrecondition, std::string(what) + ": the session has not run yet");
  if (s.device != Device::kNpuSim) return InvalidArgument("{}: needs a run on the simulated NPU (npu-sim)", what);
  return Status::Ok();
}

}  // namespace

StatusOr<std::string> RunReportHtml(const Session& session, const std::string& title) {
  RETURN_IF_ERROR(CheckSimulatedRun(session, "run report"));
  const Session::Impl& s = session.impl();
  return report::ArtifactRunHtml(title, s.compiled->loaded, *s.last_run);
}

struct ProfileReport::Impl {
  report::Profile profile;
};

ProfileReport::ProfileReport(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EDGEC_HANDLE_MOVES(ProfileReport)

StatusOr<ProfileReport> ProfileReport::Of(const Session& session, const std::string& title, bool timeline) {
  RETURN_IF_ERROR(CheckSimulatedRun(session, "profile"));
  const Session::Impl& s = session.impl();
  auto impl = std::make_unique<Impl>();
  ASSIGN_OR_RETURN(impl->profile, report::BuildProfile(title, s.compiled->loaded, *s.last_run, timeline));
  return ProfileReport(std::move(impl));
}

void ProfileReport::SetLayerErrors(const std::map<std::string, double>& errors) { impl_->profile.error = errors; }
std::string ProfileReport::Text(int top) const { return report::FormatProfile(impl_->profile, top); }
std::string ProfileReport::Json() const { return report::ProfileJson(impl_->profile).dump(); }
std::string ProfileReport::ChromeTrace() const { return report::ChromeTrace(impl_->profile).dump(); }
std::string ProfileReport::Html() const { return report::ProfileHtml(impl_->profile); }
size_t ProfileReport::span_count() const { return impl_->profile.spans.size(); }
size_t ProfileReport::flow_count() const { return impl_->profile.flows.size(); }

StatusOr<CompileDiffResult> DiffCompiled(const CompiledModel& a, const CompiledModel& b, double threshold, int top,
                                         const std::string& a_name, const std::string& b_name) {
  auto ra = report::MeasureStatic(a.impl()->loaded);
  if (!ra.ok()) return ra.status().WithContext(a_name);
  auto rb = report::MeasureStatic(b.impl()->loaded);
  if (!rb.ok()) return rb.status().WithContext(b_name);
  const report::CompileDiff d = report::DiffRuns(*ra, *rb, threshold);
  return CompileDiffResult{d.regression, report::FormatDiff(d, a_name, b_name, top), report::DiffJson(d).dump()};
}

}  // namespace v1
}  // namespace edgec
