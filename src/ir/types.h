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
//
// A sequence value (kind kSequence) is described by its elements' type: dtype, and the dims
// the elements share (unknown where they differ). `optional` wraps either kind in an ONNX
// optional (it may hold nothing at run time). Neither is ever static: the CPU plan runs every
// node that touches one in its dynamic part (runtime/plan.h), allocated at run time.
struct TensorType {
  DType dtype = DType::kUndefined;
  Dims dims;
  std::vector<std::string> dim_names;
  bool rank_known = true;
  ValueKind kind = ValueKind::kTensor;
  bool optional = false;

  int rank() const { return static_cast<int>(dims.size()); }
  bool IsStatic() const;  // a plain tensor, rank known and every dim >= 0
  bool IsDenseTensor() const { return kind == ValueKind::kTensor && !optional; }
  std::string ToString() const;  // "f32[1, 3, ?, ?]", "seq(f32[?])", "opt(seq(f32[5]))"
  bool operator==(const TensorType& o) const {
    return dtype == o.dtype && dims == o.dims && rank_known == o.rank_known && kind == o.kind &&
           optional == o.optional;
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
// Empty strides mean "contiguous row-major over padded_dims"; empty padded_dims mean the
// logical dims in layout order (no padding). The IR's semantics stay logical: every op
// computes on row-major logical values and the reference executor ignores this struct;
// it is an annotation (set by the layout and views passes) that backends honour.
// ir/physical_layout.h turns it into strides per logical axis and holds the shared rules.
//   - kNHWC on a rank-4 value: padded_dims = [N, H, W, Cpad] with Cpad >= C (alignment
//     padding the producer writes, zero-filled, so consumers read aligned channels).
//   - kRowMajor with explicit strides: a strided layout in logical axis order (a strided
//     view, or a producer that writes a permuted order so that a later Transpose is free).
//   - is_view: the value aliases memory of the node's input 0 (a Reshape/Flatten/Squeeze/
//     Unsqueeze/Transpose/Slice/Split output addressing its input in place, described by its
//     strides). On a Concat output it means the reverse: the inputs are written in place by
//     their producers at consecutive offsets of the output (in-place concatenation).
//   - A layout conversion is an explicit node: Transpose with the identity perm and the
//     attribute edgec_relayout=1 (kRelayoutAttr), its input and output in different layouts.
//     It copies and is counted as such; eliminate-dead keeps it; the exporter drops it.
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
