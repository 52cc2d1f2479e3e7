// edgec::Session (include/edgec/session.h) on a CompiledModel (runtime/artifact_run.h); a
// Model's session is made in session_model.cc.
#include "edgec/session.h"

#include "api/convert.h"
#include "api/handle.h"
#include "api/session_impl.h"

namespace edgec {
inline namespace v1 {
namespace {

std::map<std::string, Tensor> Borrow(const std::map<std::string, TensorView>& inputs) {
  std::map<std::string, Tensor> r;
  for (const auto& [name, v] : inputs) r.emplace(name, api::BorrowTensor(v));
  return r;
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EDGEC_HANDLE_MOVES(Session)

StatusOr<Session> Session::Create(const CompiledModel& model, const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->device = options.device;
  if (options.threads < 0) return InvalidArgument("session: threads {} < 0", options.threads);
  impl->compiled = model.impl();
  impl->run_options.threads = options.threads;
  impl->run_options.tuning = api::ToKernelTuning(options.tuning);
  impl->run_options.fast_kernels = !options.reference_kernels;
  impl->run_options.measure_cpu = options.measure_cpu;
  impl->run_options.record_threads = options.record_threads;
  impl->inputs = model.inputs();
  impl->outputs = model.outputs();
  return Session(std::move(impl));
}

std::vector<ValueInfo> Session::inputs() const { return impl_->inputs; }
std::vector<ValueInfo> Session::outputs() const { return impl_->outputs; }
const Profile& Session::profile() const { return impl_->profile; }

StatusOr<std::vector<NamedTensor>> Session::Run(const std::map<std::string, TensorView>& inputs) {
  for (const auto& [name, v] : inputs)
    if (v.data() == nullptr && v.numel() > 0) return InvalidArgument("run: input '{}' has no data", name);
  const auto in = Borrow(inputs);
  std::vector<NamedTensor> result;
  Profile p;
  if (impl_->run_model) {
    RETURN_IF_ERROR(impl_->run_model(in, &result, &p));
  } else {
    const ArtifactDevice d = impl_->device == Device::kNpuSim ? ArtifactDevice::kNpuSim : ArtifactDevice::kCpu;
    if (!impl_->executor) {
      ASSIGN_OR_RETURN(impl_->executor, ArtifactExecutor::Create(impl_->compiled->loaded, impl_->run_options));
    }
    ASSIGN_OR_RETURN(ArtifactRunResult r, impl_->executor->Run(d, in));
    p.simulated = d == ArtifactDevice::kNpuSim;
    p.total_seconds = p.simulated ? r.latency_s() : r.cpu_s;
    p.cpu_seconds = r.cpu_s;
    p.cpu_measured = r.cpu_measured;
    p.npu_cycles = r.npu_total.cycles;
    for (const LayerRun& l : r.layers) {
      NodeProfile n;
      n.node = l.node;
      n.op = l.op;
      n.unit = p.simulated ? api::FromUnit(l.unit) : Unit::kCpu;
      n.kernel = l.kernel;
      n.seconds = l.attributed_s;
      n.cycles = l.simulated ? l.stats.cycles : 0;
      n.bytes = l.copy_bytes + (l.simulated ? l.stats.dram_read + l.stats.dram_written : 0);
      p.nodes.push_back(std::move(n));
    }
    for (size_t i = 0; i < r.outputs.size(); ++i)
      result.push_back({r.output_names[i], api::AdoptTensor(std::move(r.outputs[i]))});
    r.outputs.clear();
    impl_->last_run = std::move(r);
  }
  impl_->profile = std::move(p);
  return result;
}

std::string Session::RunReport() const {
  if (!impl_->compiled || !impl_->last_run) return "";
  return FormatArtifactRun(impl_->compiled->loaded, *impl_->last_run);
}

const char* Version() { return EDGEC_VERSION_STRING; }

}  // namespace v1
}  // namespace edgec
