#include "api/convert.h"

#include <strings.h>

#include <cstdlib>

#include "support/name_list.h"

namespace edgec::api {

// The public DataType mirrors DType value for value.
static_assert(static_cast<int>(DataType::kF32) == static_cast<int>(DType::kF32));
static_assert(static_cast<int>(DataType::kI8) == static_cast<int>(DType::kI8));
static_assert(static_cast<int>(DataType::kI64) == static_cast<int>(DType::kI64));
static_assert(static_cast<int>(DataType::kU8) == static_cast<int>(DType::kU8));
static_assert(static_cast<int>(DataType::kBool) == static_cast<int>(DType::kBool));

DType ToDType(DataType t) { return static_cast<DType>(t); }
DataType FromDType(DType t) { return static_cast<DataType>(t); }
Unit FromUnit(artifact_io::Unit u) { return u == artifact_io::Unit::kNpu ? Unit::kNpu : Unit::kCpu; }

namespace {
// The public and the kernels' tuning have the same fields.
template <typename To, typename From>
To CopyTuning(const From& t) {
  To r;
  EDGEC_COPY_FIELDS(r, t, winograd, winograd_min_channels, conv1x1_gemm_min_pixels, gemv, int8_unchecked,
                    min_parallel_macs)
  return r;
}
}  // namespace

// min_parallel_macs 0 is decided here, once per session, by how OpenMP's threads wait between
// regions (the CLI sets OMP_WAIT_POLICY=passive when every core is busy).
cpu::KernelTuning ToKernelTuning(const KernelTuning& t) {
  cpu::KernelTuning r = CopyTuning<cpu::KernelTuning>(t);
  if (r.min_parallel_macs <= 0) {
    const char* policy = std::getenv("OMP_WAIT_POLICY");
    r.min_parallel_macs = policy && strcasecmp(policy, "passive") == 0 ? int64_t{1} << 23 : int64_t{1} << 20;
  }
  return r;
}
KernelTuning FromKernelTuning(const cpu::KernelTuning& t) { return CopyTuning<KernelTuning>(t); }

Tensor BorrowTensor(const TensorView& v) {
  return Tensor::View(ToDType(v.dtype()), Dims(v.dims().begin(), v.dims().end()), const_cast<void*>(v.data()));
}

TensorView AdoptTensor(Tensor t) {
  if (!t.owns_memory()) t = t.Clone();
  auto owner = std::make_shared<Tensor>(std::move(t));
  std::vector<int64_t> dims(owner->dims().begin(), owner->dims().end());
  void* data = owner->raw();
  const DataType dtype = FromDType(owner->dtype());
  return TensorView(dtype, std::move(dims), data, std::shared_ptr<void>(owner, data));
}

ValueInfo InfoOf(const Value& v) {
  ValueInfo i;
  i.name = v.name();
  i.dtype = FromDType(v.type.dtype);
  for (int64_t d : v.type.dims) i.dims.push_back(d < 0 ? -1 : d);
  i.type = v.type.ToString();
  i.rank_known = v.type.rank_known;
  return i;
}

std::vector<ValueInfo> InputsOf(const Graph& g) {
  std::vector<ValueInfo> r;
  for (const Value* v : g.inputs()) r.push_back(InfoOf(*v));
  return r;
}

std::vector<ValueInfo> OutputsOf(const Graph& g) {
  std::vector<ValueInfo> r;
  for (const Value* v : g.outputs()) r.push_back(InfoOf(*v));
  return r;
}

}  // namespace edgec::api
