// Fast Gather: dense row-major data, indices and output of any dtype; per outer block of the
// data (the dims before axis), each index copies one contiguous slice (the dims after axis).
// Indices are read at every run (they may be activations): negative ones count from the end,
// one out of range is an error naming the node, the index and the range (as the reference).
// tests/kernels/cpu/gather_test.cc against the reference on random shapes.
#include <cstring>

#include "kernels/cpu/common.h"

namespace edgec::cpu {

namespace {

class GatherKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    const auto* data = static_cast<const std::byte*>(in[0]);
    auto* y = static_cast<std::byte*>(out[0]);
    for (int64_t t = 0; t < count_; ++t) {
      int64_t idx = i64_ ? static_cast<const int64_t*>(in[1])[t] : static_cast<const int32_t*>(in[1])[t];
      if (idx < -len_ || idx >= len_) {
        return InvalidArgument("{}: indices element {} = {} is out of range for axis {} of size {}", label_, t, idx,
                               axis_, len_);
      }
      index_[t] = idx < 0 ? idx + len_ : idx;
    }
    for (int64_t o = 0; o < outer_; ++o) {
      for (int64_t t = 0; t < count_; ++t) {
        std::memcpy(y + (o * count_ + t) * slice_, data + (o * len_ + index_[t]) * slice_, slice_);
      }
    }
    return Status::Ok();
  }
  std::string Describe() const override { return "own gather"; }

  std::string label_;
  int64_t outer_ = 1, len_ = 0, count_ = 0, axis_ = 0;
  size_t slice_ = 0;  // bytes
  bool i64_ = true;
  std::vector<int64_t> index_;
};

}  // namespace

KernelOr CreateGatherKernel(const KernelRequest& req) {
  if (req.inputs.size() != 2 || req.outputs.size() != 1) return Refuse(req, "expected 2 inputs and 1 output");
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& idx = req.inputs[1];
  const TensorDesc& y = req.outputs[0];
  for (const TensorDesc* d : {&x, &idx, &y}) {
    if (d->layout != Layout::kRowMajor || !IsDense(*d)) return Refuse(req, "data, indices and output must be dense row-major");
  }
  if (idx.dtype != DType::kI64 && idx.dtype != DType::kI32) return Refuse(req, "indices are {}", DTypeName(idx.dtype));
  if (x.dtype != y.dtype || x.dims.empty()) return Refuse(req, "expected data of rank >= 1 and an output of its dtype");
  const int rank = static_cast<int>(x.dims.size());
  int64_t axis = req.attrs ? req.attrs->GetInt("axis", 0) : 0;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return Refuse(req, "axis {} out of range for rank {}", axis, rank);
  auto k = std::make_unique<GatherKernel>();
  k->label_ = req.label;
  k->axis_ = axis;
  for (int i = 0; i < axis; ++i) k->outer_ *= x.dims[i];
  k->len_ = x.dims[axis];
  k->count_ = NumElements(idx.dims);
  int64_t inner = 1;
  for (int i = static_cast<int>(axis) + 1; i < rank; ++i) inner *= x.dims[i];
  k->slice_ = static_cast<size_t>(inner) * DTypeSize(x.dtype);
  k->i64_ = idx.dtype == DType::kI64;
  k->index_.resize(k->count_);
  if (NumElements(y.dims) != k->outer_ * k->count_ * inner) return Refuse(req, "output {} does not fit", DimsToString(y.dims));
  return std::unique_ptr<Kernel>(std::move(k));
}

}  // namespace edgec::cpu
