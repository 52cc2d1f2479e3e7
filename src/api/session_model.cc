// edgec::Session on a Model: the CPU plan (api/cpu_runner.h), Q/DQ folded into integer ops.
#include "api/convert.h"
#include "api/cpu_runner.h"
#include "api/session_impl.h"
#include "kernels/cpu/kernel.h"
#include "quant/pipeline.h"

namespace edgec {
inline namespace v1 {
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

}  // namespace

StatusOr<Session> Session::Create(const Model& model, const SessionOptions& options) {
  if (options.device != Device::kCpu)
    return InvalidArgument("{}: the simulated NPU runs compiled models: compile it first (CompiledModel::Compile)",
                           model.name());
  if (options.threads < 0) return InvalidArgument("session: threads {} < 0", options.threads);
  Graph g = model.impl().graph.Clone();
  if (options.fold_qdq && HasQdq(g)) {
    quant::FoldOptions fo;
    fo.fixed_point = options.fixed_point;
    auto folded = quant::FoldQdqForCpu(g, fo);
    if (!folded.ok()) return folded.status().WithContext(model.name());
  }
  auto impl = std::make_unique<Impl>();
  impl->inputs = api::InputsOf(g);
  impl->outputs = api::OutputsOf(g);
  api::CpuRunner::Options o;
  o.opt_level = options.opt_level;
  o.threads = options.threads;
  o.profiling = options.profiling;
  o.tuning = api::ToKernelTuning(options.tuning);
  o.pipeline = options.pipeline;
  o.fast_kernels = !options.reference_kernels;
  o.verbose = options.verbose;
  ASSIGN_OR_RETURN(std::unique_ptr<api::CpuRunner> runner, api::CpuRunner::Create(std::move(g), model.name(), o));
  std::shared_ptr<api::CpuRunner> cpu(std::move(runner));
  impl->cpu = cpu;
  std::vector<std::string> names;
  for (const auto& v : impl->outputs) names.push_back(v.name);
  impl->run_model = [cpu, names](const std::map<std::string, Tensor>& in, std::vector<NamedTensor>* result,
                                 Profile* p) -> Status {
    std::vector<Tensor> outs;
    RETURN_IF_ERROR(cpu->Run(in, &outs));
    p->total_seconds = cpu->last_seconds();
    for (const api::CpuStepTime& s : cpu->profiling() ? cpu->LastSteps() : std::vector<api::CpuStepTime>()) {
      NodeProfile n;
      n.node = s.node ? s.node->name() : "";
      n.op = s.node ? std::string(OpName(s.node->op())) : "";
      n.kernel = s.kernel;
      n.seconds = static_cast<double>(s.nanos) * 1e-9;
      if (s.node) {
        for (const Value* v : s.node->inputs()) n.bytes += ValueBytes(v);
        for (const Value* v : s.node->outputs()) n.bytes += ValueBytes(v);
      }
      p->nodes.push_back(std::move(n));
    }
    for (size_t i = 0; i < outs.size(); ++i)
      result->push_back({i < names.size() ? names[i] : "", api::AdoptTensor(std::move(outs[i]))});
    return Status::Ok();
  };
  return Session(std::move(impl));
}

StatusOr<PlanInfo> Session::Prepare(const std::map<std::string, std::vector<int64_t>>& input_dims) {
  if (!impl_->cpu) return InvalidArgument("session: Prepare plans a Model's CPU run; a compiled model has none");
  std::map<std::string, Dims> shapes;
  for (const auto& [name, d] : input_dims) shapes[name] = Dims(d.begin(), d.end());
  ASSIGN_OR_RETURN(api::CpuRunner::PlanFigures f, impl_->cpu->Prepare(shapes));
  return PlanInfo{f.threads, f.arena_bytes, f.lower_bound, f.naive_bytes, f.summary};
}

void Session::SetProfiling(bool on) {
  if (impl_->cpu) impl_->cpu->SetProfiling(on);
}

std::string Session::StepProfileTable(int top) const { return impl_->cpu ? impl_->cpu->StepProfileTable(top) : ""; }
std::string Session::StepProfileJson() const { return impl_->cpu ? impl_->cpu->StepProfileJson() : "null"; }

Status SetVectorIsaCap(const std::string& isa) {
  if (!cpu::CapVectorIsa(isa)) return InvalidArgument("vector ISA '{}': expected avx512, avx2, scalar or \"\"", isa);
  return Status::Ok();
}

}  // namespace v1
}  // namespace edgec
