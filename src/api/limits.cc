// include/edgec/limits.h over support/limits.h and npu/target.h (ParseQuantity); the
// environment of the CPU kernels (include/edgec/session.h) over driver/kernel_tuning.h.
#include "edgec/limits.h"

#include "api/convert.h"
#include "driver/kernel_tuning.h"
#include "edgec/session.h"
#include "npu/target.h"
#include "support/limits.h"
#include "support/name_list.h"

namespace edgec {
inline namespace v1 {

static_assert(ResourceLimits{}.model_bytes == ::edgec::Limits{}.model_bytes);
static_assert(ResourceLimits{}.tensor_bytes == ::edgec::Limits{}.tensor_bytes);
static_assert(ResourceLimits{}.nodes == ::edgec::Limits{}.nodes);
static_assert(ResourceLimits{}.arena_bytes == ::edgec::Limits{}.arena_bytes);

ResourceLimits GetResourceLimits() {
  const ::edgec::Limits& l = CurrentLimits();
  return {l.model_bytes, l.tensor_bytes, l.nodes, l.arena_bytes};
}

void SetResourceLimits(const ResourceLimits& limits) {
  ::edgec::Limits l;
  EDGEC_COPY_FIELDS(l, limits, model_bytes, tensor_bytes, nodes, arena_bytes)
  SetLimits(l);
}

StatusOr<double> ParseQuantity(const std::string& text) { return npu::ParseQuantity(text); }

// min_parallel_macs stays 0: each session decides it by OpenMP's wait policy (api/convert.cc
// ToKernelTuning). Copying the kernels' default (2^20) here kept `edgec bench` and `run` at
// 2^20 under the passive policy (tests/api/api_test.cc).
KernelTuning KernelTuningFromEnvironment() {
  KernelTuning t = api::FromKernelTuning(driver::KernelTuningFromEnvironment());
  t.min_parallel_macs = 0;
  return t;
}

void ApplyVectorIsaFromEnvironment() { driver::ApplyCpuIsaFromEnvironment(); }

}  // namespace v1
}  // namespace edgec
