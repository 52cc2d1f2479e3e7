// Tensors at the API boundary: a dtype, dims and a data pointer. A TensorView either borrows
// the caller's memory (no copy: the caller keeps it alive while the view is used) or shares
// ownership of memory edgec allocated (the outputs of Session::Run, which stay valid as long
// as a view of them exists). Data is dense row-major.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace edgec {
inline namespace v1 {

// Element types (the numbering is the library's own: src/api/convert.cc checks it).
enum class DataType : uint8_t {
  kUndefined = 0,
  kF32,
  kF64,
  kF16,
  kBF16,
  kI8,
  kI16,
  kI32,
  kI64,
  kU8,
  kU16,
  kU32,
  kU64,
  kBool,
};

// Bytes per element (0 for kUndefined).
inline size_t DataTypeSize(DataType t) {
  switch (t) {
    case DataType::kF64: case DataType::kI64: case DataType::kU64: return 8;
    case DataType::kF32: case DataType::kI32: case DataType::kU32: return 4;
    case DataType::kF16: case DataType::kBF16: case DataType::kI16: case DataType::kU16: return 2;
    case DataType::kI8: case DataType::kU8: case DataType::kBool: return 1;
    case DataType::kUndefined: return 0;
  }
  return 0;
}

// "f32", "i8", ... (as the CLI prints them).
inline const char* DataTypeName(DataType t) {
  static const char* const kNames[] = {"undefined", "f32", "f64", "f16", "bf16", "i8",  "i16",
                                       "i32",       "i64", "u8",  "u16", "u32",  "u64", "bool"};
  const auto i = static_cast<size_t>(t);
  return i < sizeof(kNames) / sizeof(kNames[0]) ? kNames[i] : "unknown";
}

// A graph input or output: its name, dtype and dims (-1 for a dim not known until a run).
struct ValueInfo {
  std::string name;
  DataType dtype = DataType::kUndefined;
  std::vector<int64_t> dims;
  std::string type;  // dtype and dims as edgec prints them: "f32[N,3,224,224]"
  bool rank_known = true;  // false: not even the number of dims is known before a run
  // Every dim known (no -1, rank known).
  bool is_static() const {
    if (!rank_known) return false;
    for (int64_t d : dims)
      if (d < 0) return false;
    return true;
  }
};

class TensorView {
 public:
  TensorView() = default;
  // Borrows `data` (not copied; edgec does not write an input's memory).
  TensorView(DataType dtype, std::vector<int64_t> dims, const void* data)
      : dtype_(dtype), dims_(std::move(dims)), data_(const_cast<void*>(data)) {}
  // Shares ownership of the memory `owner` keeps alive.
  TensorView(DataType dtype, std::vector<int64_t> dims, void* data, std::shared_ptr<void> owner)
      : dtype_(dtype), dims_(std::move(dims)), data_(data), owner_(std::move(owner)) {}

  // A new zero-filled tensor that owns its memory (64-byte aligned).
  static TensorView Allocate(DataType dtype, std::vector<int64_t> dims) {
    TensorView t(dtype, std::move(dims), nullptr);
    const size_t bytes = (t.nbytes() + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, bytes ? bytes : 64);
    if (p) std::memset(p, 0, bytes);
    t.owner_ = std::shared_ptr<void>(p, [](void* q) { std::free(q); });
    t.data_ = p;
    return t;
  }

  DataType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t numel() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return n;
  }
  size_t nbytes() const { return static_cast<size_t>(numel()) * DataTypeSize(dtype_); }
  void* data() { return data_; }
  const void* data() const { return data_; }
  template <typename T> T* data_as() { return static_cast<T*>(data_); }
  template <typename T> const T* data_as() const { return static_cast<const T*>(data_); }
  // Whether this view shares ownership of its memory (false: it borrows the caller's).
  bool owns_data() const { return owner_ != nullptr; }
  // The owner handle (for bindings that hand the memory on without copying).
  const std::shared_ptr<void>& owner() const { return owner_; }

 private:
  DataType dtype_ = DataType::kUndefined;
  std::vector<int64_t> dims_;
  void* data_ = nullptr;
  std::shared_ptr<void> owner_;
};

// A named tensor: one graph output of a run, or one input of a calibration sample.
struct NamedTensor {
  std::string name;
  TensorView tensor;
};

}  // namespace v1
}  // namespace edgec
