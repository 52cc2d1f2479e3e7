// What a Session holds (include/edgec/session.h). A Model's session runs through `run_model`
// (set by session_model.cc), so that session.cc — compiled models only — builds without the
// compiler, as libedgec_runtime does.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "api/cpu_runner.h"
#include "api/impl.h"
#include "edgec/session.h"

namespace edgec {
inline namespace v1 {

struct Session::Impl {
  Device device = Device::kCpu;
  // A Model: runs the inputs, fills the outputs and the profile.
  std::function<Status(const std::map<std::string, Tensor>&, std::vector<NamedTensor>*, Profile*)> run_model;
  std::shared_ptr<const CompiledModel::Impl> compiled;  // a CompiledModel
  ArtifactRunOptions run_options;                        // ... its executor's options
  std::unique_ptr<ArtifactExecutor> executor;            // ... built on the first Run
  std::shared_ptr<api::CpuRunner> cpu;                   // a Model's CPU plans (session_model.cc)
  std::optional<ArtifactRunResult> last_run;             // a CompiledModel's last run (its outputs moved out)
  std::vector<ValueInfo> inputs, outputs;
  Profile profile;
};

}  // namespace v1
}  // namespace edgec
