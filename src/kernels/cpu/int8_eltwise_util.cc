#include "kernels/cpu/int8_eltwise_util.h"

#include <algorithm>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

// Both x86 tables need AVX2 and FMA (context.cc's probe): any table but the scalar one.
bool HasAvx2() { return &vec::Kernels() != &vec::kScalarTable; }

bool HasAvx2Fma() { return HasAvx2(); }

bool HasAvx512() { return OwnAvx512(Avx512Ext::kBwVl); }

Status ScalarParams(const KernelRequest& req, int s, double* scale, int32_t* zp) {
  const Tensor* st = ConstantOrNull(req, s);
  if (!st || st->numel() != 1) return Refuse(req, "input {} (scale) is not a constant scalar", s);
  *scale = st->ToDoubleVector()[0];
  *zp = 0;
  if (InputOrNull(req, s + 1)) {
    const Tensor* z = ConstantOrNull(req, s + 1);
    if (!z || z->numel() != 1) return Refuse(req, "input {} (zero point) is not a constant scalar", s + 1);
    *zp = static_cast<int32_t>(z->ToInt64Vector()[0]);
  }
  return Status::Ok();
}

Status ModeAndClamp(const KernelRequest& req, DType out, bool* fixed_point, int32_t* qmin, int32_t* qmax) {
  const std::string mode = req.attrs ? req.attrs->GetString("edgec_requant", "float") : "float";
  if (mode != "float" && mode != "fixed_point") return Refuse(req, "edgec_requant '{}'", mode);
  *fixed_point = mode == "fixed_point";
  const int64_t tmin = out == DType::kU8 ? 0 : -128, tmax = out == DType::kU8 ? 255 : 127;
  *qmin = static_cast<int32_t>(std::max(tmin, req.attrs ? req.attrs->GetInt("edgec_qmin", tmin) : tmin));
  *qmax = static_cast<int32_t>(std::min(tmax, req.attrs ? req.attrs->GetInt("edgec_qmax", tmax) : tmax));
  if (*qmin > *qmax) return Refuse(req, "edgec_qmin {} > edgec_qmax {}", *qmin, *qmax);
  return Status::Ok();
}

}  // namespace edgec::cpu
