// Reports on compiled models (libedgec; not in libedgec_runtime): the HTML report of a run,
// the detailed profile of one simulated run (per op: unit, time or cycles, MACs, utilization,
// DRAM bytes, copies, stalls, fallback reason; a Chrome trace and an HTML page of it) and the
// layer-by-layer comparison of two compiles — what `edgec run --report`, `edgec profile` and
// `edgec diff` print.
//
//   auto s = edgec::Session::Create(*compiled, {.device = edgec::Device::kNpuSim});
//   s->Run(inputs);
//   auto p = edgec::ProfileReport::Of(*s, "model.edgec", /*timeline=*/true);
//   std::cout << p->Text(10);
#pragma once

#include <map>
#include <memory>
#include <string>

#include "edgec/compiled_model.h"
#include "edgec/export.h"
#include "edgec/session.h"
#include "edgec/status.h"

namespace edgec {
inline namespace v1 {

// The self-contained HTML report (time per layer by unit, placement reasons, stalls,
// roofline) of the session's last run on kNpuSim; `title` names the model in it.
EDGEC_API StatusOr<std::string> RunReportHtml(const Session& session, const std::string& title);

// The detailed profile of a compiled model's last run on kNpuSim.
class EDGEC_API ProfileReport {
 public:
  // `timeline`: also keep every instruction's span (for ChromeTrace and Html).
  static StatusOr<ProfileReport> Of(const Session& session, const std::string& title, bool timeline);

  ProfileReport(ProfileReport&&) noexcept;
  ProfileReport& operator=(ProfileReport&&) noexcept;
  ~ProfileReport();

  // Per-layer INT8 error (node -> relative error) to show beside the times.
  void SetLayerErrors(const std::map<std::string, double>& errors);
  // The table: every op in graph order, or the `top` slowest (top > 0).
  std::string Text(int top = 0) const;
  std::string Json() const;         // the same as JSON (one object)
  std::string ChromeTrace() const;  // the timeline (Perfetto, chrome://tracing)
  std::string Html() const;         // a self-contained page
  size_t span_count() const;        // timeline slices
  size_t flow_count() const;        // semaphore hand-overs drawn as flows

  struct Impl;

 private:
  explicit ProfileReport(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Two compiles of a model compared layer by layer from their static schedules (no run).
struct CompileDiffResult {
  bool regression = false;  // B slower or moving more DRAM bytes than A beyond the threshold, or a node left the NPU
  std::string text;         // the table (the `top` rows that changed most, then the totals)
  std::string json;         // every row and the totals as JSON
};

// `threshold`: the relative growth of latency or DRAM bytes that is a regression; `top`: rows
// in the table (0: all); `a_name`/`b_name` name the two in the table.
EDGEC_API StatusOr<CompileDiffResult> DiffCompiled(const CompiledModel& a, const CompiledModel& b, double threshold,
                                                   int top, const std::string& a_name, const std::string& b_name);

}  // namespace v1
}  // namespace edgec
