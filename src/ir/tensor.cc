#include "ir/tensor.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <limits>

#include "support/limits.h"

namespace edgec {

StatusOr<int64_t> CheckedNumElements(std::span<const int64_t> dims, size_t elem_size) {
  int64_t n = 1;
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d < 0) return InvalidArgument("dim {} of {} is negative", i, DimsToString(dims));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d) {
      return InvalidArgument("element count of {} overflows int64", DimsToString(dims));
    }
    n *= d;
  }
  if (elem_size > 1 && n > std::numeric_limits<int64_t>::max() / static_cast<int64_t>(elem_size)) {
    return InvalidArgument("byte size of {} overflows int64", DimsToString(dims));
  }
  return n;
}

int64_t NumElements(std::span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string DimsToString(std::span<const int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    s += dims[i] < 0 ? std::string("?") : std::to_string(dims[i]);
  }
  return s + "]";
}

std::vector<int64_t> ContiguousStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> s(dims.size());
  int64_t acc = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= dims[i];
  }
  return s;
}

void Tensor::Allocate() {
  size_t bytes = std::max<size_t>(nbytes(), 1);
  auto* p = static_cast<std::byte*>(::operator new[](bytes, std::align_val_t(kAlignment)));
  std::memset(p, 0, bytes);
  buf_ = std::shared_ptr<std::byte>(p, [](std::byte* q) { ::operator delete[](q, std::align_val_t(kAlignment)); });
  data_ = p;
}

Tensor::Tensor(DType dtype, Dims dims) : dtype_(dtype), dims_(std::move(dims)) {
  auto n = CheckedNumElements(dims_, DTypeSize(dtype));
  EDGEC_CHECK(n.ok());
  numel_ = *n;
  Allocate();
}

Tensor Tensor::View(DType dtype, Dims dims, void* data) {
  Tensor t;
  t.dtype_ = dtype;
  t.dims_ = std::move(dims);
  t.numel_ = NumElements(t.dims_);
  t.data_ = static_cast<std::byte*>(data);
  return t;
}

StatusOr<Tensor> Tensor::Create(DType dtype, Dims dims) {
  auto n = CheckedNumElements(dims, DTypeSize(dtype));
  if (!n.ok()) return n.status();
  // The tensor cap (support/limits.h, --max-tensor-bytes): a model that claims more is refused
  // before any allocation. tests/runtime/limits_test.cc: TensorCapRefusesBeforeAllocating.
  RETURN_IF_ERROR(CheckTensorBytes(*n * static_cast<int64_t>(DTypeSize(dtype)),
                                   fmt::format("tensor {}{}", DTypeName(dtype), DimsToString(dims))));
  return Tensor(dtype, std::move(dims));
}

Tensor Tensor::Reshaped(Dims dims) const {
  Tensor t = *this;
  EDGEC_CHECK(NumElements(dims) == numel_);
  t.dims_ = std::move(dims);
  return t;
}

Tensor Tensor::Part(int64_t first_element, Dims dims) const {
  Tensor t = *this;
  t.dims_ = std::move(dims);
  t.numel_ = NumElements(t.dims_);
  EDGEC_CHECK(first_element >= 0 && first_element + t.numel_ <= numel_);
  t.data_ = data_ + first_element * static_cast<int64_t>(DTypeSize(dtype_));
  return t;
}

Tensor Tensor::Sequence(DType elem, std::vector<Tensor> items) {
  Tensor t;
  t.dtype_ = elem;
  t.kind_ = ValueKind::kSequence;
  t.items_ = std::make_shared<const std::vector<Tensor>>(std::move(items));
  return t;
}

Tensor Tensor::None(DType elem, ValueKind inner) {
  Tensor t;
  t.dtype_ = elem;
  t.kind_ = inner;
  t.none_ = true;
  return t;
}

const std::vector<Tensor>& Tensor::items() const {
  static const std::vector<Tensor> kEmpty;
  return items_ ? *items_ : kEmpty;
}

Tensor Tensor::Clone() const {
  Tensor t = *this;
  if (!defined() || none_) return t;
  if (kind_ == ValueKind::kSequence) {
    std::vector<Tensor> copies;
    for (const Tensor& x : items()) copies.push_back(x.Clone());
    t.items_ = std::make_shared<const std::vector<Tensor>>(std::move(copies));
    return t;
  }
  t.Allocate();
  if (nbytes()) std::memcpy(t.data_, data_, nbytes());
  return t;
}

std::vector<int64_t> Tensor::ToInt64Vector() const {
  std::vector<int64_t> v(numel_);
  for (int64_t i = 0; i < numel_; ++i) v[i] = LoadAsInt64(dtype_, raw(), i);
  return v;
}

std::vector<double> Tensor::ToDoubleVector() const {
  std::vector<double> v(numel_);
  for (int64_t i = 0; i < numel_; ++i) v[i] = LoadAsDouble(dtype_, raw(), i);
  return v;
}

Tensor Tensor::CastTo(DType to) const {
  Tensor out(to, dims_);
  if (to == dtype_) {
    if (nbytes()) std::memcpy(out.raw(), raw(), nbytes());
    return out;
  }
  bool int_path = !IsFloat(dtype_) && !IsFloat(to);
  for (int64_t i = 0; i < numel_; ++i) {
    if (int_path) {
      int64_t v = LoadAsInt64(dtype_, raw(), i);
      if (to == DType::kBool) {
        out.data<bool>()[i] = v != 0;
      } else {
        EDGEC_DISPATCH_NUMERIC(to, out.data<T>()[i] = static_cast<T>(v), break)
      }
    } else {
      StoreFromDouble(to, out.raw(), i, LoadAsDouble(dtype_, raw(), i));
    }
  }
  return out;
}

std::string Tensor::TypeString() const {
  if (none_) return fmt::format("none({})", DTypeName(dtype_));
  if (kind_ == ValueKind::kSequence) return fmt::format("seq({})[{} items]", DTypeName(dtype_), items().size());
  return std::string(DTypeName(dtype_)) + DimsToString(dims_);
}

}  // namespace edgec
