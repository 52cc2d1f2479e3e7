// Own data-movement kernels for every dtype: Transpose (also the row-major <-> NHWC layout
// conversion, a Transpose with the identity perm whose input and output layouts differ),
// Concat, Split, Slice, ChannelShuffle, and the reshape-likes when they must copy.
//
// Each is one or more strided box copies (CopyLoop), planned at creation: the box is
// walked in the destination's memory order, dims that stay adjacent are merged, rows with
// a contiguous source become memcpy, and a transposing copy runs in cache-sized tiles.
#include <cstring>
#include <numeric>

#include "ir/infer_movement_util.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"
#include "kernels/cpu/vec/nhwc.h"

namespace edgec::cpu {

namespace {

constexpr int kMaxRank = 16;

// A box of `dims` elements (outermost first) copied from src (element strides `src`,
// starting at element `src_offset`) to dst (strides `dst`, offset `dst_offset`).
struct CopyLoop {
  std::vector<int64_t> dims, src, dst;
  int64_t src_offset = 0, dst_offset = 0;
  size_t elem = 4;
};

// The loop over logical axes `axes` (in the order to walk them) with per-logical-axis
// extents and strides.
CopyLoop MakeCopyLoop(const std::vector<int>& axes, const Dims& extent,
                      const std::vector<int64_t>& src, const std::vector<int64_t>& dst, size_t elem) {
  CopyLoop c;
  c.elem = elem;
  for (int axis : axes) {
    const int64_t d = extent[axis];
    if (d == 0) return CopyLoop{{0}, {0}, {0}, 0, 0, elem};
    if (d == 1) continue;
    AppendLoopAxis<2>(c.dims, {&c.src, &c.dst}, d, {src[axis], dst[axis]});
  }
  if (c.dims.empty()) c = CopyLoop{{1}, {1}, {1}, 0, 0, elem};
  return c;
}

template <size_t kSize>
struct Elem {
  unsigned char b[kSize];
};

// dst[i * ds] = src[i * ss] for i < n, elements of E.
template <class E>
void CopyStrided1D(const E* src, int64_t ss, E* dst, int64_t ds, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i * ds] = src[i * ss];
}

template <class E>
void CopyTile(const E* src, int64_t ss0, int64_t ss1, E* dst, int64_t ds0, int64_t ds1, int64_t n0,
              int64_t n1) {
  for (int64_t i = 0; i < n0; ++i) CopyStrided1D(src + i * ss0, ss1, dst + i * ds0, ds1, n1);
}

void CopyTileBytes(size_t elem, const std::byte* src, int64_t ss0, int64_t ss1, std::byte* dst,
                   int64_t ds0, int64_t ds1, int64_t n0, int64_t n1) {
  switch (elem) {
    case 1: return CopyTile(reinterpret_cast<const Elem<1>*>(src), ss0, ss1, reinterpret_cast<Elem<1>*>(dst), ds0, ds1, n0, n1);
    case 2: return CopyTile(reinterpret_cast<const Elem<2>*>(src), ss0, ss1, reinterpret_cast<Elem<2>*>(dst), ds0, ds1, n0, n1);
    case 4: return CopyTile(reinterpret_cast<const Elem<4>*>(src), ss0, ss1, reinterpret_cast<Elem<4>*>(dst), ds0, ds1, n0, n1);
    case 8: return CopyTile(reinterpret_cast<const Elem<8>*>(src), ss0, ss1, reinterpret_cast<Elem<8>*>(dst), ds0, ds1, n0, n1);
    default:
      for (int64_t i = 0; i < n0; ++i) {
        for (int64_t j = 0; j < n1; ++j) {
          std::memcpy(dst + (i * ds0 + j * ds1) * elem, src + (i * ss0 + j * ss1) * elem, elem);
        }
      }
  }
}

// Walks the outer dims `dims[0..nd)` (with strides) over items [begin, end):
// fn(src_offset, dst_offset) per item.
template <class Fn>
void WalkOuter(const std::vector<int64_t>& dims, const std::vector<int64_t>& ss,
               const std::vector<int64_t>& ds, int64_t begin, int64_t end, const Fn& fn) {
  const int nd = static_cast<int>(dims.size());
  int64_t index[kMaxRank];
  int64_t so = 0, dof = 0, rest = begin;
  for (int d = nd - 1; d >= 0; --d) {
    index[d] = rest % dims[d];
    rest /= dims[d];
    so += index[d] * ss[d];
    dof += index[d] * ds[d];
  }
  for (int64_t item = begin; item < end; ++item) {
    fn(so, dof);
    for (int d = nd - 1; d >= 0; --d) {
      so += ss[d];
      dof += ds[d];
      if (++index[d] < dims[d]) break;
      so -= ss[d] * dims[d];
      dof -= ds[d] * dims[d];
      index[d] = 0;
    }
  }
}

void RunCopy(const CopyLoop& c, const void* src_v, void* dst_v, int threads) {
  const auto* src = static_cast<const std::byte*>(src_v) + c.src_offset * static_cast<int64_t>(c.elem);
  auto* dst = static_cast<std::byte*>(dst_v) + c.dst_offset * static_cast<int64_t>(c.elem);
  const int nd = static_cast<int>(c.dims.size());
  const int64_t inner = c.dims.back();
  if (inner == 0) return;
  const int64_t elem = static_cast<int64_t>(c.elem);
  int64_t total = 1;
  for (int64_t d : c.dims) total *= d;

  if (c.src.back() == 1 && c.dst.back() == 1) {  // contiguous rows: memcpy
    const std::vector<int64_t> od(c.dims.begin(), c.dims.end() - 1), os(c.src.begin(), c.src.end() - 1),
        ods(c.dst.begin(), c.dst.end() - 1);
    const int64_t rows = total / inner;
    if (rows == 1) {
      ParallelFor(threads, inner * elem, 1 << 20, [&](int64_t b, int64_t e) {
        std::memcpy(dst + b, src + b, static_cast<size_t>(e - b));
      });
      return;
    }
    ParallelFor(threads, rows, std::max<int64_t>(1, (1 << 16) / (inner * elem)), [&](int64_t b, int64_t e) {
      WalkOuter(od, os, ods, b, e, [&](int64_t so, int64_t dof) {
        std::memcpy(dst + dof * elem, src + so * elem, static_cast<size_t>(inner * elem));
      });
    });
    return;
  }

  // A transposing copy: tile the dst-inner dim against the src-contiguous dim k.
  int k = -1;
  for (int d = 0; d < nd - 1; ++d) {
    if (c.src[d] == 1) k = d;
  }
  if (k < 0) {  // no contiguous source dim: plain strided rows
    const std::vector<int64_t> od(c.dims.begin(), c.dims.end() - 1), os(c.src.begin(), c.src.end() - 1),
        ods(c.dst.begin(), c.dst.end() - 1);
    ParallelFor(threads, total / inner, std::max<int64_t>(1, 16384 / inner), [&](int64_t b, int64_t e) {
      WalkOuter(od, os, ods, b, e, [&](int64_t so, int64_t dof) {
        CopyTileBytes(c.elem, src + so * elem, 0, c.src.back(), dst + dof * elem, 0, c.dst.back(), 1, inner);
      });
    });
    return;
  }
  constexpr int64_t kTile = 32;
  std::vector<int64_t> od, os, ods;
  for (int d = 0; d < nd - 1; ++d) {
    if (d == k) continue;
    od.push_back(c.dims[d]);
    os.push_back(c.src[d]);
    ods.push_back(c.dst[d]);
  }
  const int64_t nk = c.dims[k];
  const int64_t tiles_k = (nk + kTile - 1) / kTile, tiles_i = (inner + kTile - 1) / kTile;
  const int64_t outer = total / (nk * inner);
  const int64_t items = outer * tiles_k * tiles_i;
  ParallelFor(threads, items, std::max<int64_t>(1, 16384 / (kTile * kTile)), [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      const int64_t o = item / (tiles_k * tiles_i);
      const int64_t tk = (item / tiles_i) % tiles_k, ti = item % tiles_i;
      WalkOuter(od, os, ods, o, o + 1, [&](int64_t so, int64_t dof) {
        const int64_t k0 = tk * kTile, i0 = ti * kTile;
        // Rows along the dst-inner dim (contiguous writes), one per k.
        CopyTileBytes(c.elem, src + (so + k0 * c.src[k] + i0 * c.src.back()) * elem, c.src[k], c.src.back(),
                      dst + (dof + k0 * c.dst[k] + i0 * c.dst.back()) * elem, c.dst[k], c.dst.back(),
                      std::min(kTile, nk - k0), std::min(kTile, inner - i0));
      });
    }
  });
}

class CopyLoopsKernel final : public Kernel {
 public:
  // Each loop copies from input `src_index[i]` to output `dst_index[i]`.
  CopyLoopsKernel(std::string what, std::vector<CopyLoop> loops, std::vector<int> src_index,
                  std::vector<int> dst_index, int threads)
      : what_(std::move(what)), loops_(std::move(loops)), src_index_(std::move(src_index)),
        dst_index_(std::move(dst_index)), threads_(threads) {}

  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    for (size_t i = 0; i < loops_.size(); ++i) {
      const void* src = in[src_index_[i]];
      void* dst = out[dst_index_[i]];
      if (src == dst && loops_[i].src_offset == loops_[i].dst_offset) continue;  // in place
      RunCopy(loops_[i], src, dst, threads_);
    }
    return Status::Ok();
  }
  std::string Describe() const override { return "own " + what_; }

 private:
  std::string what_;
  std::vector<CopyLoop> loops_;
  std::vector<int> src_index_, dst_index_;
  int threads_;
};

// ChannelShuffle of dense NHWC buffers: each pixel's C channels are a [g, C/g] matrix
// transposed into [C/g, g]; for g = 2 (shufflenet's) an interleave of the two halves (the
// generic strided copy walks such tiny tiles element by element: 3x slower).
class ChannelShuffleNhwcKernel final : public Kernel {
 public:
  ChannelShuffleNhwcKernel(int64_t pixels, int64_t channels, int64_t group, size_t elem, int threads)
      : pixels_(pixels), channels_(channels), group_(group), elem_(elem), threads_(threads) {}

  Status Run(std::span<const void* const> in, std::span<void* const> out, void*) override {
    switch (elem_) {
      case 1: Shuffle<uint8_t>(in[0], out[0]); break;
      case 2: Shuffle<uint16_t>(in[0], out[0]); break;
      case 4: Shuffle<uint32_t>(in[0], out[0]); break;
      case 8: Shuffle<uint64_t>(in[0], out[0]); break;
      default: return Internal("channel shuffle of {}-byte elements", elem_);
    }
    return Status::Ok();
  }
  std::string Describe() const override { return fmt::format("own channel shuffle nhwc per pixel (group {})", group_); }

 private:
  template <typename E>
  void Shuffle(const void* src_v, void* dst_v) const {
    const E* src = static_cast<const E*>(src_v);
    E* dst = static_cast<E*>(dst_v);
    const int64_t c = channels_, g = group_, per = c / g;
    ParallelFor(threads_, pixels_, std::max<int64_t>(1, 16384 / c), [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) {
        const E* s = src + p * c;
        E* d = dst + p * c;
        if (g == 2) {
          vec::Interleave2(s, s + per, d, per);
        } else {
          for (int64_t i = 0; i < per; ++i)
            for (int64_t j = 0; j < g; ++j) d[i * g + j] = s[j * per + i];
        }
      }
    });
  }

  int64_t pixels_, channels_, group_;
  size_t elem_;
  int threads_;
};

Status ExpectSameDType(const KernelRequest& req) {
  const DType dt = req.inputs[0].dtype;
  for (const TensorDesc& d : req.outputs) {
    if (Present(d) && d.dtype != dt) return Refuse(req, "outputs differ in dtype from input 0");
  }
  return Status::Ok();
}

int NormalizedAxis(int64_t axis, int rank) { return static_cast<int>(axis < 0 ? axis + rank : axis); }

KernelOr MakeTranspose(const KernelRequest& req, int threads) {
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  const int rank = static_cast<int>(x.dims.size());
  std::vector<int64_t> perm = req.attrs->GetInts("perm");
  if (!req.attrs->Has("perm")) {
    for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
  }
  if (static_cast<int>(perm.size()) != rank) return Refuse(req, "perm has {} entries for rank {}", perm.size(), rank);
  const std::vector<int64_t> xs = LogicalStrides(x);
  std::vector<int64_t> src(rank);
  for (int i = 0; i < rank; ++i) src[i] = xs[perm[i]];  // output axis i reads input axis perm[i]
  CopyLoop loop = MakeCopyLoop(MemoryOrder(y), y.dims, src, LogicalStrides(y), DTypeSize(x.dtype));
  const bool identity = std::is_sorted(perm.begin(), perm.end());
  std::string what = identity && x.layout != y.layout
                         ? fmt::format("relayout {} -> {}", LayoutWord(x.layout), LayoutWord(y.layout))
                         : "transpose";
  return std::unique_ptr<Kernel>(new CopyLoopsKernel(what, {std::move(loop)}, {0}, {0}, threads));
}

KernelOr MakeConcat(const KernelRequest& req, int threads) {
  const TensorDesc& y = req.outputs[0];
  const int rank = static_cast<int>(y.dims.size());
  const int axis = NormalizedAxis(req.attrs->GetInt("axis", 0), rank);
  const std::vector<int64_t> ys = LogicalStrides(y);
  std::vector<CopyLoop> loops;
  std::vector<int> src_index, dst_index;
  int64_t position = 0;
  for (size_t i = 0; i < req.inputs.size(); ++i) {
    const TensorDesc& x = req.inputs[i];
    if (!Present(x)) continue;
    if (x.dtype != y.dtype) return Refuse(req, "input {} differs in dtype from the output", i);
    // Walk in the input's memory order: its reads are then contiguous.
    CopyLoop loop = MakeCopyLoop(MemoryOrder(x), x.dims, LogicalStrides(x), ys, DTypeSize(x.dtype));
    loop.dst_offset = position * ys[axis];
    position += x.dims[axis];
    loops.push_back(std::move(loop));
    src_index.push_back(static_cast<int>(i));
    dst_index.push_back(0);
  }
  return std::unique_ptr<Kernel>(new CopyLoopsKernel("concat", std::move(loops), std::move(src_index),
                                                     std::move(dst_index), threads));
}

KernelOr MakeSplit(const KernelRequest& req, int threads) {
  const TensorDesc& x = req.inputs[0];
  const int rank = static_cast<int>(x.dims.size());
  const int axis = NormalizedAxis(req.attrs->GetInt("axis", 0), rank);
  const std::vector<int64_t> xs = LogicalStrides(x);
  std::vector<CopyLoop> loops;
  std::vector<int> src_index, dst_index;
  int64_t position = 0;
  for (size_t i = 0; i < req.outputs.size(); ++i) {
    const TensorDesc& y = req.outputs[i];
    if (!Present(y)) return Refuse(req, "output {} is absent", i);
    CopyLoop loop = MakeCopyLoop(MemoryOrder(y), y.dims, xs, LogicalStrides(y), DTypeSize(x.dtype));
    loop.src_offset = position * xs[axis];
    position += y.dims[axis];
    loops.push_back(std::move(loop));
    src_index.push_back(0);
    dst_index.push_back(static_cast<int>(i));
  }
  return std::unique_ptr<Kernel>(new CopyLoopsKernel("split", std::move(loops), std::move(src_index),
                                                     std::move(dst_index), threads));
}

KernelOr MakeSlice(const KernelRequest& req, int threads) {
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  const int rank = static_cast<int>(x.dims.size());
  std::vector<std::vector<int64_t>> v(5);
  for (int i = 1; i < 5; ++i) {
    if (!InputOrNull(req, i)) continue;
    const Tensor* t = ConstantOrNull(req, i);
    if (!t) return Refuse(req, "input {} (starts/ends/axes/steps) is not constant", i);
    v[i] = t->ToInt64Vector();
  }
  const std::vector<int64_t>& starts = v[1];
  const std::vector<int64_t>& ends = v[2];
  std::vector<int64_t> axes = v[3], steps = v[4];
  if (!InputOrNull(req, 3)) {
    axes.resize(starts.size());
    std::iota(axes.begin(), axes.end(), 0);
  }
  if (!InputOrNull(req, 4)) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size()) {
    return Refuse(req, "starts, ends, axes and steps differ in length");
  }
  std::vector<int64_t> src = LogicalStrides(x);
  int64_t offset = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    const int a = NormalizedAxis(axes[i], rank);
    const infer::SliceAxisRange r = infer::ClampSliceAxis(x.dims[a], starts[i], ends[i], steps[i]);
    if (r.length != y.dims[a]) return Refuse(req, "slice length of axis {} disagrees with the output", a);
    if (r.length == 0) continue;
    offset += r.start * src[a];
    src[a] *= r.step;
  }
  CopyLoop loop = MakeCopyLoop(MemoryOrder(y), y.dims, src, LogicalStrides(y), DTypeSize(x.dtype));
  loop.src_offset = offset;
  return std::unique_ptr<Kernel>(new CopyLoopsKernel("slice", {std::move(loop)}, {0}, {0}, threads));
}

// ChannelShuffle: output channel c = i·g + j reads input channel j·(C/g) + i. One copy over
// the view [N, C/g, g, H, W] of the output, the input's strides rearranged to match; in
// NHWC the (C/g, g) dims are innermost (a transposing copy within each pixel), row-major
// they are outer and every (n, c) plane is one memcpy.
KernelOr MakeChannelShuffle(const KernelRequest& req, int threads) {
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  const int64_t g = req.attrs->GetInt("group", 1);
  if (x.dims.size() != 4 || y.dims != x.dims || g < 1 || x.dims[1] % g != 0)
    return Refuse(req, "expected a rank-4 input whose {} channels group {} divides", x.dims.size() == 4 ? x.dims[1] : 0, g);
  const int64_t per = x.dims[1] / g;
  if (x.layout == Layout::kNHWC && y.layout == Layout::kNHWC && IsDense(x) && IsDense(y)) {
    return std::unique_ptr<Kernel>(new ChannelShuffleNhwcKernel(x.dims[0] * x.dims[2] * x.dims[3], x.dims[1], g,
                                                                DTypeSize(x.dtype), threads));
  }
  const std::vector<int64_t> xs = LogicalStrides(x), ys = LogicalStrides(y);
  const Dims view = {x.dims[0], per, g, x.dims[2], x.dims[3]};
  const std::vector<int64_t> src = {xs[0], xs[1], per * xs[1], xs[2], xs[3]};
  const std::vector<int64_t> dst = {ys[0], g * ys[1], ys[1], ys[2], ys[3]};
  std::vector<int> order;  // the output's memory order, channel axis split in two
  for (int a : MemoryOrder(y)) {
    if (a == 0) order.push_back(0);
    else if (a == 1) order.insert(order.end(), {1, 2});
    else order.push_back(a + 1);
  }
  CopyLoop loop = MakeCopyLoop(order, view, src, dst, DTypeSize(x.dtype));
  return std::unique_ptr<Kernel>(new CopyLoopsKernel(fmt::format("channel shuffle {} -> {} (group {})", LayoutWord(x.layout), LayoutWord(y.layout), g),
                                                     {std::move(loop)}, {0}, {0}, threads));
}

// Reshape-likes copy the row-major elements unchanged.
// y[n, c, h·b + i, w·b + j] = x[n, (i·b + j)·C' + c, h, w] (DCR) or x[n, c·b² + i·b + j, h, w]
// (CRD): one copy loop over (n, c, h, i, w, j) in the output's memory order.
KernelOr MakeDepthToSpace(const KernelRequest& req, int threads) {
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  const int64_t b = req.attrs->GetInt("blocksize", 0);
  if (x.dims.size() != 4 || b < 1 || x.dims[1] % (b * b) != 0)
    return Refuse(req, "expected a rank-4 input whose channels blocksize {} squared divides", b);
  const bool crd = req.attrs->GetString("mode", "DCR") == "CRD";
  const int64_t c = x.dims[1] / (b * b);
  const std::vector<int64_t> xs = LogicalStrides(x), ys = LogicalStrides(y);
  const Dims view = {x.dims[0], c, x.dims[2], b, x.dims[3], b};
  const std::vector<int64_t> src = {xs[0], crd ? b * b * xs[1] : xs[1], xs[2], crd ? b * xs[1] : b * c * xs[1],
                                    xs[3], crd ? xs[1] : c * xs[1]};
  const std::vector<int64_t> dst = {ys[0], ys[1], b * ys[2], ys[2], b * ys[3], ys[3]};
  std::vector<int> order;  // the output's memory order, H and W each split in two
  for (int a : MemoryOrder(y)) {
    if (a <= 1) order.push_back(a);
    else if (a == 2) order.insert(order.end(), {2, 3});
    else order.insert(order.end(), {4, 5});
  }
  CopyLoop loop = MakeCopyLoop(order, view, src, dst, DTypeSize(x.dtype));
  return std::unique_ptr<Kernel>(new CopyLoopsKernel(fmt::format("depth to space {} (block {})", crd ? "CRD" : "DCR", b),
                                                     {std::move(loop)}, {0}, {0}, threads));
}

KernelOr MakeReshapeCopy(const KernelRequest& req, int threads) {
  const TensorDesc& x = req.inputs[0];
  const TensorDesc& y = req.outputs[0];
  if ((x.dims.size() == 4 && x.layout != Layout::kRowMajor) ||
      (y.dims.size() == 4 && y.layout != Layout::kRowMajor)) {
    return Refuse(req, "{} of a non-row-major tensor", OpName(req.op));
  }
  const int64_t n = NumElements(x.dims);
  if (n != NumElements(y.dims)) return Refuse(req, "input and output differ in size");
  CopyLoop loop{{n}, {1}, {1}, 0, 0, DTypeSize(x.dtype)};
  return std::unique_ptr<Kernel>(new CopyLoopsKernel("copy", {std::move(loop)}, {0}, {0}, threads));
}

}  // namespace

KernelOr CreateMovementKernel(const KernelRequest& req) {
  if (req.inputs.empty() || !Present(req.inputs[0]) || req.outputs.empty()) {
    return Refuse(req, "expected an input and an output");
  }
  RETURN_IF_ERROR(ExpectSameDType(req));
  for (const TensorDesc& d : req.outputs) {
    if (d.dims.size() > kMaxRank) return Refuse(req, "more than {} dims", kMaxRank);
  }
  const int threads = std::max(1, req.threads);
  switch (req.op) {
    case OpKind::kTranspose: return MakeTranspose(req, threads);
    case OpKind::kConcat: return MakeConcat(req, threads);
    case OpKind::kSplit: return MakeSplit(req, threads);
    case OpKind::kSlice: return MakeSlice(req, threads);
    case OpKind::kChannelShuffle: return MakeChannelShuffle(req, threads);
    case OpKind::kDepthToSpace: return MakeDepthToSpace(req, threads);
    case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
      return MakeReshapeCopy(req, threads);
    default: return Refuse(req, "{} is not a movement op of this kernel", OpName(req.op));
  }
}

}  // namespace edgec::cpu

namespace edgec::cpu {

StatusOr<std::unique_ptr<Kernel>> CreateCopyKernel(const TensorDesc& from, const TensorDesc& to, int threads) {
  if (from.dtype != to.dtype || from.dims != to.dims) {
    return InvalidArgument("copy between {} {} and {} {}: dtype and dims must agree", DTypeName(from.dtype),
                           DimsToString(from.dims), DTypeName(to.dtype), DimsToString(to.dims));
  }
  if (to.dims.size() > kMaxRank) return Unimplemented("copy of more than {} dims", kMaxRank);
  CopyLoop loop = MakeCopyLoop(MemoryOrder(to), to.dims, LogicalStrides(from), LogicalStrides(to), DTypeSize(to.dtype));
  auto word = [](const TensorDesc& d) { return IsDense(d) ? LayoutWord(d.layout) : "strided"; };
  return std::unique_ptr<Kernel>(new CopyLoopsKernel(fmt::format("copy {} -> {}", word(from), word(to)),
                                                     {std::move(loop)}, {0}, {0}, std::max(1, threads)));
}

}  // namespace edgec::cpu
