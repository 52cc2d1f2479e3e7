// Max / min reductions of 8-bit tensors as VEC max pools (see npu_layer_util.h ReducePoolLayerOf).
#include <algorithm>
#include <numeric>

#include "lower/npu_layer_util.h"
#include "npu/move.h"

namespace edgec::lower {

StatusOr<npu::PoolLayer> ReducePoolLayerOf(const Node& n) {
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  const std::string_view op = OpName(n.op());
  if (!x || !y || !Is8(x) || x->type.dtype != y->type.dtype)
    return Unimplemented("dtype {} {} not lowered (8-bit only)", x ? std::string(DTypeName(x->type.dtype)) : std::string("none"), op);
  ASSIGN_OR_RETURN(Dims xd, StaticDims(n, 0));
  if (!y->type.IsStatic()) return Unimplemented("dynamic shape");
  const int rank = static_cast<int>(xd.size());
  std::vector<bool> reduced(rank, false);
  bool keep = true;
  if (n.op() == OpKind::kGlobalMaxPool) {
    for (int a = 2; a < rank; ++a) reduced[a] = true;
  } else {
    std::vector<int64_t> axes = n.attrs.GetInts("axes");
    if (n.num_inputs() > 1 && n.input(1)) {
      const Tensor* t = ConstInput(n, 1);
      if (!t) return Unimplemented("{} axes are not a constant", op);
      axes = t->ToInt64Vector();
    }
    if (axes.empty()) {
      if (n.attrs.GetInt("noop_with_empty_axes", 0)) return Unimplemented("{} without axes (a copy)", op);
      for (int a = 0; a < rank; ++a) axes.push_back(a);
    }
    for (int64_t a : axes) {
      const int64_t k = a < 0 ? a + rank : a;
      if (k < 0 || k >= rank) return Unimplemented("{} axis {} of a {}-d tensor", op, a, rank);
      reduced[k] = true;
    }
    keep = n.attrs.GetInt("keepdims", 1) != 0;
  }
  // The dims in the NPU's byte order (outermost first), unit dims dropped: kept dims outside,
  // then the reduced ones, then kept dims inside them (O x R x I bytes).
  const std::vector<int64_t> xs = npu::NpuByteStrides(xd);
  std::vector<int> order;
  for (int a = 0; a < rank; ++a)
    if (xd[a] > 1) order.push_back(a);
  std::stable_sort(order.begin(), order.end(), [&](int p, int q) { return xs[p] > xs[q]; });
  int64_t outer = 1, window = 1, inner = 1;
  int phase = 0;  // 0: outer kept, 1: reduced, 2: inner kept
  for (int a : order) {
    if (reduced[a]) {
      if (phase == 2) return Unimplemented("{} over axes that are not one block of the NPU layout", op);
      phase = 1;
      window *= xd[a];
    } else {
      if (phase == 1) phase = 2;
      (phase == 0 ? outer : inner) *= xd[a];
    }
  }
  // The output must hold the kept dims in the same byte order (keepdims 0 on a 4-d tensor
  // changes its layout from NHWC to row-major).
  const Dims& yd = y->type.dims;
  const std::vector<int64_t> ys = npu::NpuByteStrides(yd);
  std::vector<int> kept_in, kept_out;
  for (int a : order)
    if (!reduced[a]) {
      int b = a;
      if (!keep) b -= static_cast<int>(std::count(reduced.begin(), reduced.begin() + a, true));
      kept_in.push_back(b);
    }
  for (int b = 0; b < static_cast<int>(yd.size()); ++b)
    if (yd[b] > 1) kept_out.push_back(b);
  std::stable_sort(kept_out.begin(), kept_out.end(), [&](int p, int q) { return ys[p] > ys[q]; });
  if (kept_in != kept_out)
    return Unimplemented("{} of {} to {} reorders the kept dims", op, DimsToString(xd), DimsToString(yd));
  if (outer > (1 << 30) || window > (1 << 30) || inner > (1 << 30)) return Unimplemented("{} too large", op);
  npu::PoolLayer l;
  l.name = n.name();
  l.max = true;
  l.min = n.op() == OpKind::kReduceMin;
  const bool image = rank == 4 && (!reduced[0] || xd[0] == 1);
  auto set = [&](int64_t batch, int64_t h, int64_t w, int64_t c, int64_t kh, int64_t kw, int64_t sw) {
    l.batch = static_cast<int>(batch), l.in_h = static_cast<int>(h), l.in_w = static_cast<int>(w);
    l.channels = static_cast<int>(c), l.kernel_h = static_cast<int>(kh), l.kernel_w = static_cast<int>(kw);
    l.stride_w = static_cast<int>(sw);
  };
  // A 4-d image keeps its rows where it can (a cascade stripes a pool by image rows,
  // lower/npu_cascade.cc): over H and/or W a window of them; over the channels each pixel's C
  // bytes are a window of C one-channel pixels (the row is W * C of them, stride C).
  if (image && reduced[1] && !reduced[2] && !reduced[3]) {
    set(xd[0], xd[2], xd[3] * xd[1], 1, 1, xd[1], xd[1]);
  } else if (image && !reduced[1]) {
    set(xd[0], xd[2], xd[3], xd[1], reduced[2] ? xd[2] : 1, reduced[3] ? xd[3] : 1, 1);
  } else {
    // Otherwise each of the O outer positions is one batch item, a 1 x R image of I channels.
    set(outer, 1, window, inner, 1, window, 1);
  }
  return l;
}

StatusOr<npu::ArgMaxLayer> ArgMaxLayerOf(const Node& n) {
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  const std::string_view op = OpName(n.op());
  if (!x || !y || !Is8(x)) return Unimplemented("dtype {} {} not lowered (8-bit only)", x ? std::string(DTypeName(x->type.dtype)) : std::string("none"), op);
  if (y->type.dtype != DType::kI64) return Unimplemented("{} writing {} (int64 only)", op, DTypeName(y->type.dtype));
  ASSIGN_OR_RETURN(Dims xd, StaticDims(n, 0));
  const int rank = static_cast<int>(xd.size());
  if (rank < 1) return Unimplemented("{} of a scalar", op);
  int64_t axis = n.attrs.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  const int64_t inner = rank == 4 ? 1 : rank - 1;  // the innermost dim of the NPU layout
  if (axis != inner)
    return Unimplemented("{} over axis {} of {} (the channel axis of a 4-d tensor or the last axis only)", op, axis,
                         DimsToString(xd));
  // The result keeps the other dims in their order: rows of a 4-d NHWC tensor are its pixels,
  // [N, 1, H, W] (or [N, H, W]) indices in the same order.
  npu::ArgMaxLayer l;
  l.name = n.name();
  l.cols = xd[axis];
  l.rows = NumElements(xd) / std::max<int64_t>(1, l.cols);
  l.min = n.op() == OpKind::kArgMin;
  l.last = n.attrs.GetInt("select_last_index", 0) != 0;
  // u8 values shift by -128 on the NPU: the order, and so every index, is unchanged.
  return l;
}

}  // namespace edgec::lower
