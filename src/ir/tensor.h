// Tensor: a dense, contiguous, row-major buffer with a dtype and static dims. This is the
// value type of constants (weights) and of runtime data. Copies share the buffer; use
// Clone() for a deep copy. Physical layouts other than contiguous row-major are described
// on ir::Value (layout.h) and materialized by the backends, not here.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/dtype.h"

namespace edgec {

using Dims = std::vector<int64_t>;

// What a value is: a dense tensor, or an ONNX sequence of tensors. An ONNX optional is
// either of these or none (TensorType::optional; Tensor::is_none at run time).
enum class ValueKind : uint8_t { kTensor, kSequence };

// Number of elements of `dims`; fails on a negative dim or if the count overflows int64
// (or the byte count of `elem_size` overflows).
StatusOr<int64_t> CheckedNumElements(std::span<const int64_t> dims, size_t elem_size = 1);
int64_t NumElements(std::span<const int64_t> dims);  // dims must be valid
std::string DimsToString(std::span<const int64_t> dims);  // "[1, 3, 224, 224]"
// Row-major strides in elements.
std::vector<int64_t> ContiguousStrides(std::span<const int64_t> dims);

class Tensor {
 public:
  Tensor() = default;
  // Allocates a zero-filled buffer. dims must be valid (see CheckedNumElements).
  Tensor(DType dtype, Dims dims);
  // Fails instead of aborting when dims are invalid or too large.
  static StatusOr<Tensor> Create(DType dtype, Dims dims);

  template <typename T>
  static Tensor FromVector(DType dtype, Dims dims, const std::vector<T>& values) {
    Tensor t(dtype, std::move(dims));
    EDGEC_CHECK(static_cast<int64_t>(values.size()) == t.numel());
    EDGEC_CHECK(sizeof(T) == DTypeSize(dtype));
    if (!values.empty()) std::memcpy(t.raw(), values.data(), t.nbytes());
    return t;
  }
  static Tensor Scalar(float v) { return FromVector<float>(DType::kF32, {}, {v}); }
  static Tensor ScalarI64(int64_t v) { return FromVector<int64_t>(DType::kI64, {}, {v}); }
  // A tensor over memory it does not own (an arena slot, a caller's buffer); whoever made
  // it keeps the memory alive while the view is used.
  static Tensor View(DType dtype, Dims dims, void* data);

  // A sequence value: `items` are dense tensors of `elem` (any shapes). It holds no buffer of
  // its own (numel 0); items are shared, never written in place.
  static Tensor Sequence(DType elem, std::vector<Tensor> items);
  // An optional value that holds nothing; `inner` says whether it would hold a sequence.
  static Tensor None(DType elem, ValueKind inner = ValueKind::kTensor);

  static Tensor VectorI64(const std::vector<int64_t>& v) {
    return FromVector<int64_t>(DType::kI64, {static_cast<int64_t>(v.size())}, v);
  }

  bool defined() const { return dtype_ != DType::kUndefined; }
  ValueKind kind() const { return kind_; }
  bool is_sequence() const { return kind_ == ValueKind::kSequence && !none_; }
  bool is_none() const { return none_; }
  // A plain tensor (not a sequence, not an empty optional): what every kernel but the
  // sequence family reads.
  bool is_dense() const { return kind_ == ValueKind::kTensor && !none_; }
  const std::vector<Tensor>& items() const;
  DType dtype() const { return dtype_; }
  const Dims& dims() const { return dims_; }
  int rank() const { return static_cast<int>(dims_.size()); }
  int64_t dim(int i) const { return dims_[i]; }
  int64_t numel() const { return numel_; }
  size_t nbytes() const { return static_cast<size_t>(numel_) * DTypeSize(dtype_); }

  void* raw() { return data_; }
  const void* raw() const { return data_; }
  bool owns_memory() const { return buf_ != nullptr; }
  template <typename T> T* data() { return static_cast<T*>(raw()); }
  template <typename T> const T* data() const { return static_cast<const T*>(raw()); }

  // Same buffer, new dims with the same element count.
  Tensor Reshaped(Dims dims) const;
  // The elements from `first_element` on, as a tensor of `dims` over the same buffer (its
  // owner kept alive when this tensor owns one). The range must lie within this tensor.
  Tensor Part(int64_t first_element, Dims dims) const;
  Tensor Clone() const;

  // Elements as int64 / double (any dtype), for shape-like inputs and tests.
  std::vector<int64_t> ToInt64Vector() const;
  std::vector<double> ToDoubleVector() const;
  // Converts every element to `to` as ONNX Cast does for numeric types.
  Tensor CastTo(DType to) const;

  // "f32[1, 3, 224, 224]"; "seq(f32)[3 items]" and "none(f32)" for the other kinds.
  std::string TypeString() const;

 private:
  DType dtype_ = DType::kUndefined;
  Dims dims_;
  int64_t numel_ = 0;
  std::shared_ptr<std::byte> buf_;  // owner; null for views
  std::byte* data_ = nullptr;
  ValueKind kind_ = ValueKind::kTensor;
  bool none_ = false;
  std::shared_ptr<const std::vector<Tensor>> items_;  // kSequence
  static constexpr size_t kAlignment = 64;
  void Allocate();
};

}  // namespace edgec
