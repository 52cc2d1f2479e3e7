// edgec::Session (include/edgec/session.h): a Model on the CPU plan (api/cpu_runner.h), a
// CompiledModel on runtime/artifact_run.h.
#include "edgec/session.h"

#include "api/convert.h"
#include "api/cpu_runner.h"
#include "api/impl.h"
#include "kernels/cpu/kernel.h"
#include "quant/fold_qdq.h"

namespace edgec {
inline namespace v1 {

struct Session::Impl {
  Device device = Device::kCpu;
  std::unique_ptr<api::CpuRunner> cpu;                   // a Model
  std::shared_ptr<const CompiledModel::Impl> compiled;   // a CompiledModel
  std::vector<ValueInfo> inputs, outputs;
  Profile profile;
};

namespace {

int64_t ValueBytes(const Value* v) {
  if (!v || !v->type.IsStatic()) return 0;
  int64_t n = 1;
  for (int64_t d : v->type.dims) n *= d;
  return n * static_cast<int64_t>(DTypeSize(v->type.dtype));
}

bool HasQdq(const Graph& g) {
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kDequantizeLinear) return true;
  return false;
}

std::map<std::string, Tensor> Borrow(const std::map<std::string, TensorView>& inputs) {
  std::map<std::string, Tensor> r;
  for (const auto& [name, v] : inputs) r.emplace(name, api::BorrowTensor(v));
  return r;
}

}  // namespace

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;
Session::~Session() = default;

StatusOr<Session> Session::Create(const Model& model, const SessionOptions& options) {
  if (options.device != Device::kCpu)
    return InvalidArgument("{}: the simulated NPU runs compiled models: compile it first (CompiledModel::Compile)",
                           model.name());
  if (options.threads < 0) return InvalidArgument("session: threads {} < 0", options.threads);
  Graph g = model.impl().graph.Clone();
  if (options.fold_qdq && HasQdq(g)) {
    quant::FoldOptions fo;
    fo.fixed_point = options.fixed_point;
    auto folded = quant::FoldQdqToInteger(g, fo);
    if (!folded.ok()) return folded.status().WithContext(model.name());
  }
  auto impl = std::make_unique<Impl>();
  impl->inputs = api::InputsOf(g);
  impl->outputs = api::OutputsOf(g);
  api::CpuRunner::Options o;
  o.opt_level = options.opt_level;
  o.threads = options.threads;
  o.profiling = options.profiling;
  o.tuning.winograd = options.tuning.winograd;
  o.tuning.winograd_min_channels = options.tuning.winograd_min_channels;
  o.tuning.conv1x1_gemm_min_pixels = options.tuning.conv1x1_gemm_min_pixels;
  o.tuning.gemv = options.tuning.gemv;
  ASSIGN_OR_RETURN(impl->cpu, api::CpuRunner::Create(std::move(g), model.name(), o));
  return Session(std::move(impl));
}

StatusOr<Session> Session::Create(const CompiledModel& model, const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->device = options.device;
  impl->compiled = model.impl();
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
  if (impl_->cpu) {
    std::vector<Tensor> outs;
    RETURN_IF_ERROR(impl_->cpu->Run(in, &outs));
    p.total_seconds = impl_->cpu->last_seconds();
    for (const api::CpuStepTime& s : impl_->cpu->LastSteps()) {
      NodeProfile n;
      n.node = s.node ? s.node->name() : "";
      n.op = s.node ? std::string(OpName(s.node->op())) : "";
      n.kernel = s.kernel;
      n.seconds = static_cast<double>(s.nanos) * 1e-9;
      if (s.node) {
        for (const Value* v : s.node->inputs()) n.bytes += ValueBytes(v);
        for (const Value* v : s.node->outputs()) n.bytes += ValueBytes(v);
      }
      p.nodes.push_back(std::move(n));
    }
    for (size_t i = 0; i < outs.size(); ++i)
      result.push_back({i < impl_->outputs.size() ? impl_->outputs[i].name : "", api::AdoptTensor(std::move(outs[i]))});
  } else {
    const ArtifactDevice d = impl_->device == Device::kNpuSim ? ArtifactDevice::kNpuSim : ArtifactDevice::kCpu;
    ASSIGN_OR_RETURN(ArtifactRunResult r, RunArtifact(impl_->compiled->loaded, d, in));
    p.simulated = d == ArtifactDevice::kNpuSim;
    p.total_seconds = p.simulated ? r.latency_s() : r.cpu_s;
    p.npu_cycles = r.npu_total.cycles;
    for (const LayerRun& l : r.layers) {
      NodeProfile n;
      n.node = l.node;
      n.op = l.op;
      n.unit = p.simulated ? api::FromUnit(l.unit) : Unit::kCpu;
      n.kernel = n.unit == Unit::kNpu ? "npu-sim" : "int8 reference";
      n.seconds = l.seconds;
      n.cycles = l.simulated ? l.stats.cycles : 0;
      n.bytes = l.copy_bytes + (l.simulated ? l.stats.dram_read + l.stats.dram_written : 0);
      p.nodes.push_back(std::move(n));
    }
    for (size_t i = 0; i < r.outputs.size(); ++i)
      result.push_back({r.output_names[i], api::AdoptTensor(std::move(r.outputs[i]))});
  }
  impl_->profile = std::move(p);
  return result;
}

Status SetVectorIsaCap(const std::string& isa) {
  if (!cpu::CapVectorIsa(isa)) return InvalidArgument("vector ISA '{}': expected avx512, avx2, scalar or \"\"", isa);
  return Status::Ok();
}

const char* Version() { return EDGEC_VERSION_STRING; }

}  // namespace v1
}  // namespace edgec
