// The static description of a value: element type, logical shape, physical layout and
// quantization parameters. Logical shape and physical layout are separate fields on
// purpose: bugs live in the map between them, so the verifier checks it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/dtype.h"
#include "ir/tensor.h"

namespace edgec {

constexpr int64_t kUnknownDim = -1;

// Logical type. `dims` may hold kUnknownDim for dims not bound yet; `dim_names` keeps the
// symbolic names given by the model (empty string when a dim has none). rank_known=false
// means even the rank is unknown (dims is then empty).
struct TensorType {
  DType dtype = DType::kUndefined;
  Dims dims;
  std::vector<std::string> dim_names;
  bool rank_known = true;

  int rank() const { return static_cast<int>(dims.size()); }
  bool IsStatic() const;  // rank known and every dim >= 0
  std::string ToString() const;  // "f32[1, 3, ?, ?]"
  bool operator==(const TensorType& o) const {
    return dtype == o.dtype && dims == o.dims && rank_known == o.rank_known;
  }
};

enum class Layout : uint8_t {
  kRowMajor,  // the logical order, contiguous (NCHW for 4-d activations)
  kNHWC,
  kNC16HW16,  // channels blocked by 16, innermost
};
std::string_view LayoutName(Layout l);

// Physical placement of a value's elements in memory. `strides` are in elements over the
// *physical* dims (`padded_dims`, in `layout` order); `alignment` is in bytes.
// Empty strides mean "contiguous row-major over padded_dims".
struct PhysicalLayout {
  Layout layout = Layout::kRowMajor;
  Dims padded_dims;
  std::vector<int64_t> strides;
  int64_t alignment = 64;
  bool is_view = false;  // shares the producer's buffer (zero-copy)
};

// Quantization parameters (ONNX QuantizeLinear semantics). axis < 0 with one scale means
// per-tensor; otherwise one scale/zero point per index of `axis`.
struct QuantParams {
  std::vector<float> scales;
  std::vector<int32_t> zero_points;
  int axis = -1;
  DType storage = DType::kI8;
  bool per_tensor() const { return scales.size() == 1; }
};

}  // namespace edgec
