// The memory model of PhysicalLayout (types.h): where each logical element of a value
// lives, expressed as strides per *logical* axis. The layout and views passes, the cost
// model (NodeCopyBytes) and the exporter share these helpers so that they agree on which
// nodes move data.
//
// A value's elements are addressed as  offset + Σ index[i] · stride[i]  (in elements),
// where i runs over the LOGICAL axes (row-major NCHW order). The strides come from the
// physical layout:
//   kRowMajor  strides over padded_dims (default: contiguous over padded_dims, or over the
//              logical dims when padded_dims is empty). Explicit strides describe a
//              strided view or a producer that writes a permuted order (layout order is
//              the logical order, so they are logical strides).
//   kNHWC      physical axes (N, H, W, C) over padded_dims [N, H, W, Cpad]; logical strides
//              are the physical ones permuted back to (N, C, H, W).
//   kNC16HW16  blocked: not describable by strides (these helpers return nullopt).
// "Dense row-major" means: the elements sit exactly where a contiguous row-major array of
// the logical dims puts them (size-1 axes ignored, no padding gaps); such a value can be
// reinterpreted by Reshape/Flatten/Squeeze/Unsqueeze without moving data.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/graph.h"

namespace edgec {

using Strides = std::vector<int64_t>;

// The attribute marking a layout conversion node (see types.h): a Transpose with the
// identity permutation and edgec_relayout=1. It is the identity on logical values; its
// input and output have different physical layouts, so it copies (NodeCopyBytes counts
// it), eliminate-dead keeps it, and the exporter drops it.
constexpr std::string_view kRelayoutAttr = "edgec_relayout";
bool IsRelayout(const Node& n);

// Contiguous row-major strides of `dims`.
Strides RowMajorStrides(const Dims& dims);

// True when two layouts place elements identically (layout, padding and strides; is_view
// and alignment aside).
bool SamePlacement(const PhysicalLayout& a, const PhysicalLayout& b);

// Strides per logical axis of a value of `type` stored as `p`; nullopt when the dims are not
// static or the layout is blocked.
std::optional<Strides> LogicalStrides(const TensorType& type, const PhysicalLayout& p);
inline std::optional<Strides> LogicalStrides(const Value& v) { return LogicalStrides(v.type, v.physical); }

// True when `strides` over `dims` are those of a dense row-major array (size-1 axes ignored).
bool IsDenseRowMajor(const Dims& dims, const Strides& strides);
// The same for a value: true for the default layout (even with unknown dims), false when
// its strides are unknown otherwise.
bool IsDenseRowMajor(const Value& v);
// True when the value occupies exactly numel consecutive elements in some axis order
// (dense row-major, or dense NHWC, ...): a producer writes it in one contiguous sweep.
bool IsDenseInSomeOrder(const Dims& dims, const Strides& strides);

// Strides that let a value of `in_dims` with `in_strides` be read as `out_dims` (same
// element count, row-major element order) without moving data; nullopt when no strides
// can (the reshape must copy). Size-1 axes are free.
std::optional<Strides> ReshapeStrides(const Dims& in_dims, const Strides& in_strides,
                                      const Dims& out_dims);

// Strides of Transpose(perm) of a value with `in_strides`: out axis i reads input axis perm[i].
Strides TransposeStrides(const Strides& in_strides, const std::vector<int64_t>& perm);

// The PhysicalLayout (kRowMajor) that describes logical `strides` over `dims`: default
// (empty padded_dims and strides) when they are dense row-major, explicit otherwise.
PhysicalLayout StridedLayout(const Dims& dims, const Strides& strides, bool is_view);

// Dense NHWC over [N, C, H, W], channels padded up to a multiple of `channel_multiple`
// elements (1 = no padding).
PhysicalLayout NhwcLayout(const Dims& nchw, int64_t channel_multiple = 1);

// "row-major", "NHWC [1, 56, 56, 64]", "strided [8192, 1, 64]", "view": for messages.
std::string PhysicalToString(const Value& v);

}  // namespace edgec
