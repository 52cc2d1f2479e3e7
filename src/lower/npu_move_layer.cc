// Data movement nodes as DMA boxes (see npu_layers.h: MoveLayerOf).
#include <algorithm>
#include <array>
#include <optional>

#include "ir/infer_movement_util.h"
#include "lower/npu_layer_util.h"
#include "lower/npu_layers.h"

namespace edgec::lower {

namespace {

// Refines two shapes of equal size into one list of dims ("atoms") each of whose dims is a
// product of consecutive atoms; fails when a dim boundary of one falls inside a dim of the
// other without dividing it. Per atom: its stride (in elements of its dim, i.e. the atoms
// inside it) and the dim it belongs to, for each side.
struct Atom {
  int64_t size;
  int in_dim, out_dim;
  int64_t in_inner, out_inner;
};
std::optional<std::vector<Atom>> CommonRefinement(const Dims& in, const Dims& out) {
  std::vector<int> id, od;
  for (int i = 0; i < static_cast<int>(in.size()); ++i)
    if (in[i] != 1) id.push_back(i);
  for (int i = 0; i < static_cast<int>(out.size()); ++i)
    if (out[i] != 1) od.push_back(i);
  std::vector<Atom> atoms;
  size_t i = 0, j = 0;
  int64_t ri = i < id.size() ? in[id[0]] : 1, ro = j < od.size() ? out[od[0]] : 1;
  while (i < id.size() && j < od.size()) {
    const int64_t s = std::min(ri, ro);
    if (std::max(ri, ro) % s != 0) return std::nullopt;
    atoms.push_back({s, id[i], od[j], ri / s, ro / s});
    ri /= s;
    ro /= s;
    if (ri == 1 && ++i < id.size()) ri = in[id[i]];
    if (ro == 1 && ++j < od.size()) ro = out[od[j]];
  }
  if (i != id.size() || j != od.size()) return std::nullopt;
  return atoms;
}

StatusOr<std::vector<int64_t>> ConstInts(const Node& n, int i, const char* what) {
  const Value* v = n.input(i);
  if (!v) return std::vector<int64_t>{};
  if (!v->is_constant()) return Unimplemented("{} is not a constant", what);
  return v->constant().ToInt64Vector();
}

StatusOr<npu::MoveLayer> OwnMoveLayerOf(const Node& n);

}  // namespace

StatusOr<npu::MoveLayer> MoveLayerOf(const Node& n) {
  const Value* x = n.input(0);
  const Node* p = x ? x->producer() : nullptr;
  if (p && AbsorbedInto(*p) == &n) return ComposedMove(*p, n);
  return OwnMoveLayerOf(n);
}

namespace {

StatusOr<npu::MoveLayer> ElementMoveOf(const Node& n, const std::vector<const Value*>& ins, npu::MoveLayer m);

StatusOr<npu::MoveLayer> OwnMoveLayerOf(const Node& n) {
  npu::MoveLayer m;
  m.name = n.name();
  std::vector<const Value*> ins;
  for (const Value* v : n.inputs())
    if (v && !v->is_constant()) ins.push_back(v);
  if (n.op() == OpKind::kConcat) {
    for (const Value* v : n.inputs())
      if (v && v->is_constant() && NumElements(v->type.dims) > 0) return Unimplemented("constant concat operand not lowered");
  } else if (ins.size() != 1 || ins[0] != n.input(0)) {
    return Unimplemented("{} of a computed shape or index not lowered", OpName(n.op()));
  }
  // int16 values (the mixed precision's points) move as pairs of bytes: the boxes are built in
  // elements, then widened (WidenBoxes).
  const DType et = ins.empty() ? DType::kI8 : ins[0]->type.dtype;
  const bool wide = et == DType::kI16;
  auto ok_type = [&](const Value* v) { return wide ? v->type.dtype == DType::kI16 : Is8(v); };
  for (const Value* v : ins) {
    if (!ok_type(v)) return Unimplemented("dtype {} {} not lowered (8-bit or int16 only)", DTypeName(v->type.dtype), OpName(n.op()));
    if (!v->type.IsStatic()) return Unimplemented("dynamic shape");
    m.input_bytes.push_back(NumElements(v->type.dims));
  }
  for (const Value* v : n.outputs()) {
    if (!v) return Unimplemented("{} with an unused output", OpName(n.op()));
    if (!ok_type(v) || !v->type.IsStatic()) return Unimplemented("dtype or shape of output '{}'", v->name());
    m.output_bytes.push_back(NumElements(v->type.dims));
  }
  if (wide) {
    ASSIGN_OR_RETURN(m, ElementMoveOf(n, ins, std::move(m)));
    for (int64_t& b : m.input_bytes) b *= 2;
    for (int64_t& b : m.output_bytes) b *= 2;
    for (npu::MoveBox& b : m.boxes) {  // each element: two bytes, an innermost dim of 2
      b.src_offset *= 2;
      b.dst_offset *= 2;
      for (int64_t& v : b.src_strides) v *= 2;
      for (int64_t& v : b.dst_strides) v *= 2;
      b.counts.push_back(2);
      b.src_strides.push_back(1);
      b.dst_strides.push_back(1);
    }
    return m;
  }
  return ElementMoveOf(n, ins, std::move(m));
}

// Where a run of output positions on one axis of a Pad reads: `count` positions from
// `out_start` copy input positions src_start, src_start + step, ... (step 0: an edge
// repeated), or are the pad value (`fill`).
struct PadRun {
  int64_t out_start, count, src_start, step;
  bool fill;
};

// A reflect index as the reference's (kernels/ref/movement.cc): position `i` relative to the
// kept interior of `length` elements, mirrored without repeating the border element.
int64_t Reflected(int64_t i, int64_t length) {
  if (length == 1) return 0;
  const int64_t period = 2 * (length - 1);
  const int64_t m = ((i % period) + period) % period;
  return m < length ? m : period - m;
}

// The boxes of a Pad of an 8-bit (or, by the caller's widening, int16) tensor, in elements:
// the kept interior is one box (negative pads crop it); in constant mode each padded axis adds
// two fill slabs (full extent on the later axes, the interior on the earlier ones: rows of a
// padded H in NHWC are whole output rows); reflect and edge copy every border position from
// the input, one box per combination of runs over the axes (a reflected row is a run of one,
// an edge is one run of stride 0). Guarded by NpuPadTest.
StatusOr<std::vector<npu::MoveBox>> PadBoxes(const Node& n, const Dims& x, const std::vector<int64_t>& xs,
                                             const std::vector<int64_t>& ys, int8_t& fill) {
  const int rank = static_cast<int>(x.size());
  const std::string mode = n.attrs.GetString("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge") return Unimplemented("pad mode '{}' not lowered", mode);
  ASSIGN_OR_RETURN(std::vector<int64_t> raw, ConstInts(n, 1, "pads"));
  std::vector<int64_t> axes;
  if (n.num_inputs() > 3 && n.input(3)) {
    ASSIGN_OR_RETURN(axes, ConstInts(n, 3, "pad axes"));
  } else {
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  }
  if (raw.size() != 2 * axes.size()) return Unimplemented("{} pads for {} axes", raw.size(), axes.size());
  std::vector<int64_t> begin(rank, 0), end(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return Unimplemented("pad axis {}", axes[i]);
    begin[a] = raw[i];
    end[a] = raw[i + axes.size()];
  }
  fill = 0;
  if (mode == "constant" && n.num_inputs() > 2 && n.input(2)) {
    const Value* cv = n.input(2);
    if (!cv->is_constant()) return Unimplemented("pad value is not a constant");
    const Tensor& t = cv->constant();
    if (t.numel() == 1) {  // empty: 0
      const int64_t v = t.ToInt64Vector()[0];
      if (t.dtype() == DType::kI16) {  // a fill byte pads both bytes of each element
        if ((v & 0xff) != ((v >> 8) & 0xff)) return Unimplemented("int16 pad value {} is not one byte twice", v);
        fill = static_cast<int8_t>(v & 0xff);
      } else {
        fill = static_cast<int8_t>(t.dtype() == DType::kU8 ? v - 128 : v);
      }
    } else if (t.numel() > 1) {
      return Unimplemented("pad value of {} elements", t.numel());
    }
  }
  // Per axis: the interior run, then the border runs.
  std::vector<int64_t> kept(rank), dst_begin(rank), src_begin(rank);
  std::vector<std::vector<PadRun>> borders(rank);
  for (int a = 0; a < rank; ++a) {
    src_begin[a] = std::max<int64_t>(0, -begin[a]);
    dst_begin[a] = std::max<int64_t>(0, begin[a]);
    kept[a] = x[a] - src_begin[a] - std::max<int64_t>(0, -end[a]);
    if (kept[a] <= 0) return Unimplemented("pad crops axis {} of {} to nothing", a, DimsToString(x));
    const int64_t out_len = dst_begin[a] + kept[a] + std::max<int64_t>(0, end[a]);
    for (auto [lo, hi] : {std::pair{int64_t{0}, dst_begin[a]}, std::pair{dst_begin[a] + kept[a], out_len}}) {
      if (lo >= hi) continue;
      if (mode == "constant") {
        borders[a].push_back({lo, hi - lo, 0, 0, true});
      } else if (mode == "edge") {
        borders[a].push_back({lo, hi - lo, src_begin[a] + (lo == 0 ? 0 : kept[a] - 1), 0, false});
      } else {
        for (int64_t p = lo; p < hi; ++p)
          borders[a].push_back({p, 1, src_begin[a] + Reflected(p - dst_begin[a], kept[a]), 0, false});
      }
    }
  }
  auto interior = [&](int a) { return PadRun{dst_begin[a], kept[a], src_begin[a], 1, false}; };
  auto box_of = [&](const std::vector<PadRun>& runs) {
    npu::MoveBox b{0, 0, 0, 0, {}, {}, {}};
    bool is_fill = false;
    for (int a = 0; a < rank; ++a) is_fill |= runs[a].fill;
    b.input = is_fill ? npu::kFillInput : 0;
    for (int a = 0; a < rank; ++a) {
      const PadRun& r = runs[a];
      b.counts.push_back(r.count);
      b.dst_offset += r.out_start * ys[a];
      b.dst_strides.push_back(ys[a]);
      b.src_offset += is_fill ? 0 : r.src_start * xs[a];
      b.src_strides.push_back(is_fill ? ys[a] : r.step * xs[a]);
    }
    return b;
  };
  std::vector<npu::MoveBox> boxes;
  std::vector<PadRun> runs(rank);
  for (int a = 0; a < rank; ++a) runs[a] = interior(a);
  boxes.push_back(box_of(runs));
  if (mode == "constant") {  // slabs: interior before axis a, the border on a, full after it
    for (int a = 0; a < rank; ++a) {
      for (const PadRun& r : borders[a]) {
        std::vector<PadRun> s(rank);
        for (int k = 0; k < rank; ++k) {
          const int64_t full = dst_begin[k] + kept[k] + std::max<int64_t>(0, end[k]);
          s[k] = k < a ? interior(k) : k == a ? r : PadRun{0, full, 0, 0, true};
        }
        boxes.push_back(box_of(s));
      }
    }
    return boxes;
  }
  // reflect / edge: every combination of runs with at least one border run.
  std::vector<std::vector<PadRun>> choices(rank);
  for (int a = 0; a < rank; ++a) {
    choices[a] = {interior(a)};
    choices[a].insert(choices[a].end(), borders[a].begin(), borders[a].end());
  }
  std::vector<size_t> idx(rank, 0);
  while (true) {
    int d = rank - 1;
    for (; d >= 0; --d) {
      if (++idx[d] < choices[d].size()) break;
      idx[d] = 0;
    }
    if (d < 0) break;
    for (int a = 0; a < rank; ++a) runs[a] = choices[a][idx[a]];
    boxes.push_back(box_of(runs));
  }
  return boxes;
}

// The boxes of `n` in elements (one byte each), appended to `m`.
StatusOr<npu::MoveLayer> ElementMoveOf(const Node& n, const std::vector<const Value*>& ins, npu::MoveLayer m) {
  const Dims& x = ins[0]->type.dims;
  const Dims& y = n.output(0)->type.dims;
  const int rank = static_cast<int>(x.size());
  const std::vector<int64_t> xs = npu::NpuByteStrides(x), ys = npu::NpuByteStrides(y);
  auto axis_of = [&](int64_t a) { return a < 0 ? a + rank : a; };
  switch (n.op()) {
    case OpKind::kConcat: {
      m.what = "concat";
      const int64_t axis = axis_of(n.attrs.GetInt("axis", 0));
      int64_t off = 0;
      for (size_t i = 0; i < ins.size(); ++i) {
        const Dims& d = ins[i]->type.dims;
        if (static_cast<int>(d.size()) != rank || axis < 0 || axis >= rank) return Unimplemented("concat axis {}", axis);
        m.boxes.push_back({static_cast<int>(i), 0, 0, off * ys[axis], d, npu::NpuByteStrides(d), ys});
        off += d[axis];
      }
      break;
    }
    case OpKind::kTranspose: {
      m.what = "transpose";
      std::vector<int64_t> perm = n.attrs.GetInts("perm");
      if (perm.empty())
        for (int i = rank - 1; i >= 0; --i) perm.push_back(i);
      if (static_cast<int>(perm.size()) != rank) return Unimplemented("transpose perm of {} dims for rank {}", perm.size(), rank);
      npu::MoveBox b{0, 0, 0, 0, y, {}, ys};
      for (int64_t p : perm) b.src_strides.push_back(xs[axis_of(p)]);
      m.boxes.push_back(std::move(b));
      break;
    }
    case OpKind::kSlice: {
      m.what = "slice";
      ASSIGN_OR_RETURN(std::vector<int64_t> starts, ConstInts(n, 1, "slice starts"));
      ASSIGN_OR_RETURN(std::vector<int64_t> ends, ConstInts(n, 2, "slice ends"));
      ASSIGN_OR_RETURN(std::vector<int64_t> axes, ConstInts(n, 3, "slice axes"));
      ASSIGN_OR_RETURN(std::vector<int64_t> steps, ConstInts(n, 4, "slice steps"));
      if (starts.size() != ends.size() || (!axes.empty() && axes.size() != starts.size()) ||
          (!steps.empty() && steps.size() != starts.size()))
        return Unimplemented("slice parameters of different lengths");
      npu::MoveBox b{0, 0, 0, 0, y, xs, ys};
      for (size_t i = 0; i < starts.size(); ++i) {
        const int64_t a = axis_of(axes.empty() ? static_cast<int64_t>(i) : axes[i]);
        const int64_t step = steps.empty() ? 1 : steps[i];
        if (a < 0 || a >= rank) return Unimplemented("slice axis {}", a);
        if (step <= 0) return Unimplemented("slice with step {} not lowered (positive steps only)", step);
        const infer::SliceAxisRange r = infer::ClampSliceAxis(x[a], starts[i], ends[i], step);
        if (r.length != y[a]) return Unimplemented("slice of {} on axis {} is not {} long", DimsToString(x), a, y[a]);
        b.src_offset += r.start * xs[a];
        b.src_strides[a] = step * xs[a];
      }
      m.boxes.push_back(std::move(b));
      break;
    }
    case OpKind::kGather: {  // constant indices: one box per index, its slab of x on `axis`
      m.what = "gather";
      const int64_t axis = axis_of(n.attrs.GetInt("axis", 0));
      if (axis < 0 || axis >= rank) return Unimplemented("gather axis {}", axis);
      const Value* iv = n.input(1);
      if (!iv || !iv->is_constant()) return Unimplemented("gather of computed indices not lowered");
      const std::vector<int64_t> idx = iv->constant().ToInt64Vector();
      const int irank = iv->type.rank();
      if (irank > 1) return Unimplemented("gather of {}-d indices not lowered (scalar or 1-d)", irank);
      for (size_t j = 0; j < idx.size(); ++j) {
        const int64_t i = idx[j] < 0 ? idx[j] + x[axis] : idx[j];
        if (i < 0 || i >= x[axis]) return Unimplemented("gather index {} outside {} on axis {}", idx[j], x[axis], axis);
        npu::MoveBox b{0, 0, i * xs[axis], 0, {}, {}, {}};
        for (int a = 0; a < rank; ++a) {
          if (a == axis) {
            if (irank == 0) continue;  // a scalar index drops the axis
            b.counts.push_back(1);
            b.src_strides.push_back(xs[a]);
            b.dst_strides.push_back(ys[a]);
            b.dst_offset = static_cast<int64_t>(j) * ys[a];
            continue;
          }
          const int ya = a < axis || irank == 1 ? a : a - 1;  // y's dim of x's dim a
          b.counts.push_back(x[a]);
          b.src_strides.push_back(xs[a]);
          b.dst_strides.push_back(ys[ya]);
        }
        m.boxes.push_back(std::move(b));
      }
      break;
    }
    case OpKind::kSplit: {
      m.what = "split";
      const int64_t axis = axis_of(n.attrs.GetInt("axis", 0));
      if (axis < 0 || axis >= rank) return Unimplemented("split axis {}", axis);
      int64_t off = 0;
      for (int o = 0; o < n.num_outputs(); ++o) {
        const Dims& d = n.output(o)->type.dims;
        m.boxes.push_back({0, o, off * xs[axis], 0, d, xs, npu::NpuByteStrides(d)});
        off += d[axis];
      }
      if (off != x[axis]) return Unimplemented("split of {} into parts of {} on axis {}", x[axis], off, axis);
      break;
    }
    case OpKind::kChannelShuffle: {
      // y channel i·g + j = x channel j·(C/g) + i: one box over (n, i, j, the other dims). In
      // NHWC each pixel's C bytes are a [g][C/g] block transposed to [C/g][g] (npu/move.cc: a
      // permuting unit, one pitched COPY per pixel).
      m.what = "channel-shuffle";
      const int64_t g = n.attrs.GetInt("group", 0);
      if (rank < 2 || g < 1 || x[1] % g != 0) return Unimplemented("channel shuffle of {} in {} groups", DimsToString(x), g);
      const int64_t per = x[1] / g;
      npu::MoveBox b{0, 0, 0, 0, {x[0], per, g}, {xs[0], xs[1], per * xs[1]}, {ys[0], g * ys[1], ys[1]}};
      for (int d = 2; d < rank; ++d) {
        b.counts.push_back(x[d]);
        b.src_strides.push_back(xs[d]);
        b.dst_strides.push_back(ys[d]);
      }
      m.boxes.push_back(std::move(b));
      break;
    }
    case OpKind::kDepthToSpace: {
      // y[n, c, h·b + i, w·b + j] = x[n, ch(c, i, j), h, w], ch = (i·b + j)·C' + c (DCR) or
      // c·b² + i·b + j (CRD): one box over (n, c, h, i, w, j). In NHWC a DCR shuffle's (j, c)
      // are contiguous on both sides, so it moves rows of b·C' bytes (the sub-pixel
      // ConvTranspose's pixel shuffle, passes/convtranspose_subpixel.cc).
      m.what = "depth-to-space";
      const int64_t b = n.attrs.GetInt("blocksize", 0);
      if (rank != 4 || b < 1 || x[1] % (b * b) != 0) return Unimplemented("depth-to-space of {} by {}", DimsToString(x), b);
      const bool crd = n.attrs.GetString("mode", "DCR") == "CRD";
      const int64_t c = x[1] / (b * b);
      const int64_t cs = crd ? b * b * xs[1] : xs[1], is = crd ? b * xs[1] : b * c * xs[1], js = crd ? xs[1] : c * xs[1];
      m.boxes.push_back({0, 0, 0, 0, {x[0], c, x[2], b, x[3], b}, {xs[0], cs, xs[2], is, xs[3], js},
                         {ys[0], ys[1], b * ys[2], ys[2], b * ys[3], ys[3]}});
      break;
    }
    case OpKind::kPad: {
      m.what = "pad";
      ASSIGN_OR_RETURN(m.boxes, PadBoxes(n, x, xs, ys, m.fill));
      break;
    }
    default: {  // reshape-likes: the same row-major element order, in the NPU's layouts
      m.what = "reshape";
      auto atoms = CommonRefinement(x, y);
      if (!atoms) return Unimplemented("reshape {} -> {} is not a strided copy", DimsToString(x), DimsToString(y));
      npu::MoveBox b;
      for (const Atom& a : *atoms) {
        b.counts.push_back(a.size);
        b.src_strides.push_back(xs[a.in_dim] * a.in_inner);
        b.dst_strides.push_back(ys[a.out_dim] * a.out_inner);
      }
      m.boxes.push_back(std::move(b));
      break;
    }
  }
  return m;
}

}  // namespace

}  // namespace edgec::lower

// --- two moves as one (AbsorbedInto) ---

namespace edgec::lower {
namespace {

bool IsTransposeOrReshape(const Node& n) {
  switch (n.op()) {
    case OpKind::kTranspose: case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze:
    case OpKind::kUnsqueeze:
      return n.num_outputs() == 1;
    default:
      return false;
  }
}

// A move that may take part in a chain of more than two (ChainThrough): a transpose or reshape-like,
// or a Slice at its head (a split by slices, passes/gather_as_slice.cc).
bool IsChainMove(const Node& n) {
  return IsTransposeOrReshape(n) || (n.op() == OpKind::kSlice && n.num_outputs() == 1);
}

// `v` is read by one chain move, as its data input, and is no graph output: that node, or null.
const Node* ChainReader(const Value* v) {
  if (!v || v->is_graph_output() || v->uses().size() != 1 || v->uses()[0].input_index != 0) return nullptr;
  const Node* n = v->uses()[0].node;
  return IsChainMove(*n) ? n : nullptr;
}

// A chain of more than two moves starts at a Slice of a 4-d (NHWC) image: a split of its
// channels (attention's qkv, passes/gather_as_slice.cc).
bool IsImageSplit(const Node& head) {
  return head.op() == OpKind::kSlice && head.input(0) && head.input(0)->type.rank() == 4;
}

// The longest run of chain moves through `p` and its reader `n`, each read only by the next:
// its nodes in order (empty when n is not p's one reader).
std::vector<const Node*> ChainThrough(const Node& p, const Node& n) {
  if (ChainReader(p.output(0)) != &n) return {};
  std::vector<const Node*> back;
  for (const Node* h = &p;;) {
    back.push_back(h);
    const Value* x = h->input(0);
    const Node* q = x ? x->producer() : nullptr;
    if (!q || !IsChainMove(*q) || ChainReader(x) != h) break;
    h = q;
  }
  std::vector<const Node*> chain(back.rbegin(), back.rend());
  for (const Node* t = &n; t; t = ChainReader(t->output(0))) chain.push_back(t);
  return chain;
}

// out[i] = in[j] for each element of the layer's one box: out byte i holds input byte in[j].
std::vector<int32_t> ApplyBox(const npu::MoveBox& b, int64_t out_bytes, const std::vector<int32_t>& in) {
  std::vector<int32_t> out(out_bytes, -1);
  const size_t r = b.counts.size();
  std::vector<int64_t> idx(r, 0);
  int64_t src = b.src_offset, dst = b.dst_offset;
  for (int64_t e = 0, total = b.bytes(); e < total; ++e) {
    out[dst] = in[src];
    for (size_t d = r; d-- > 0;) {
      src += b.src_strides[d];
      dst += b.dst_strides[d];
      if (++idx[d] < b.counts[d]) break;
      src -= b.src_strides[d] * b.counts[d];
      dst -= b.dst_strides[d] * b.counts[d];
      idx[d] = 0;
    }
  }
  return out;
}

// The one box (dims outermost first, the destination dense) whose copy is `map` (out byte i =
// in byte map[i]), or nullopt when the map is no single strided box.
std::optional<npu::MoveBox> BoxOfMap(const std::vector<int32_t>& map) {
  const int64_t n = static_cast<int64_t>(map.size());
  std::vector<int64_t> counts, strides;  // innermost first
  for (int64_t block = 1; block < n;) {
    const int64_t stride = int64_t{map[block]} - map[0];
    int64_t c = 1;
    while (c * block < n && int64_t{map[c * block]} == map[0] + c * stride) ++c;
    while (n % (c * block) != 0) --c;
    if (c <= 1) return std::nullopt;
    counts.push_back(c);
    strides.push_back(stride);
    block *= c;
  }
  if (n == 1) counts = {1}, strides = {1};
  npu::MoveBox b;
  b.src_offset = map[0];
  int64_t dense = 1;
  for (size_t d = counts.size(); d-- > 0;) {
    b.counts.push_back(counts[d]);
    b.src_strides.push_back(strides[d]);
  }
  b.dst_strides.assign(counts.size(), 0);
  for (size_t d = counts.size(); d-- > 0;) {
    b.dst_strides[d] = dense;
    dense *= b.counts[d];
  }
  for (int64_t s : b.src_strides)
    if (s < 0) return std::nullopt;
  // Every byte, not only the blocks' first ones, must follow the box.
  std::vector<int32_t> iota(*std::max_element(map.begin(), map.end()) + 1);
  for (size_t i = 0; i < iota.size(); ++i) iota[i] = static_cast<int32_t>(i);
  if (ApplyBox(b, n, iota) != map) return std::nullopt;
  return b;
}

// The composed copy of `chain` (each node reads the previous one's output), from the first
// one's input, when every node is one box (identities included when the chain is longer
// than two: a 3-d <-> 4-d reshape between two moves).
std::optional<npu::MoveLayer> ComposeChain(const std::vector<const Node*>& chain) {
  if (chain.size() < 2) return std::nullopt;
  std::vector<npu::MoveLayer> ms;
  for (const Node* n : chain) {
    auto m = OwnMoveLayerOf(*n);
    if (!m.ok() || m->boxes.size() != 1 || (chain.size() == 2 && m->identity())) return std::nullopt;
    ms.push_back(std::move(*m));
  }
  const int64_t in_bytes = ms[0].input_bytes[0];
  if (in_bytes > (int64_t{1} << 30)) return std::nullopt;
  std::vector<int32_t> map(in_bytes);
  for (int64_t i = 0; i < in_bytes; ++i) map[i] = static_cast<int32_t>(i);
  for (const npu::MoveLayer& m : ms) map = ApplyBox(m.boxes[0], m.output_bytes[0], map);
  std::optional<npu::MoveBox> box = BoxOfMap(map);
  if (!box) return std::nullopt;
  npu::MoveLayer m = ms.back();
  m.input_bytes = ms[0].input_bytes;
  m.boxes = {*box};
  return m;
}

// The composed copy of p then n (n reads p's output), from p's input, when both are one box.
std::optional<npu::MoveLayer> Compose(const Node& p, const Node& n) { return ComposeChain({&p, &n}); }

}  // namespace

std::optional<std::array<int64_t, 3>> RightOperandStrides(const Node& p) {
  if (p.op() != OpKind::kTranspose || p.num_outputs() != 1) return std::nullopt;
  const Value* x = p.input(0);
  const Value* mid = p.output(0);
  if (!x || !mid || mid->is_graph_output() || mid->uses().size() != 1 || mid->uses()[0].input_index != 3) return std::nullopt;
  const Node& n = *mid->uses()[0].node;
  if (n.op() != OpKind::kQLinearMatMul || !n.input(0) || !Is8(x) || !x->type.IsStatic() || x->type.rank() != 3 ||
      n.input(0)->type.rank() != 3)
    return std::nullopt;
  std::vector<int64_t> perm = p.attrs.GetInts("perm");
  if (perm.empty()) perm = {2, 1, 0};
  if (perm.size() != 3) return std::nullopt;
  const std::vector<int64_t> xs = npu::NpuByteStrides(x->type.dims);
  std::array<int64_t, 3> s{};
  for (int j = 0; j < 3; ++j) {
    if (perm[j] < 0 || perm[j] > 2) return std::nullopt;
    s[j] = xs[perm[j]];
  }
  if (s[1] != 1 && s[2] != 1) return std::nullopt;  // neither K nor N contiguous: one-byte rows
  // p's own input must hold the bytes it names (not a view of a pair absorbed into p).
  const Node* q = x->producer();
  if (q && IsTransposeOrReshape(*q) && !x->is_graph_output() && x->uses().size() == 1 && Compose(*q, p)) return std::nullopt;
  if (q && AbsorbedInto(*q) == &p) return std::nullopt;  // the end of a longer chain (ChainThrough)
  return s;
}

const Node* AbsorbedInto(const Node& p) {
  if (!IsChainMove(p)) return nullptr;
  const Value* mid = p.output(0);
  if (IsTransposeOrReshape(p) && RightOperandStrides(p)) return mid->uses()[0].node;
  // A chain of more than two moves that composes to one box is one copy, at its last node.
  if (const Node* n = ChainReader(mid)) {
    const std::vector<const Node*> chain = ChainThrough(p, *n);
    if (chain.size() > 2 && IsImageSplit(*chain.front()) && ComposeChain(chain)) return n;
  }
  if (!IsTransposeOrReshape(p)) return nullptr;
  if (!mid || mid->is_graph_output() || mid->uses().size() != 1 || mid->uses()[0].input_index != 0) return nullptr;
  const Node* n = mid->uses()[0].node;
  if (!IsTransposeOrReshape(*n)) return nullptr;
  // Pairs only: p's input does not come from a move that could pair with p.
  const Value* x = p.input(0);
  const Node* q = x ? x->producer() : nullptr;
  if (q && IsTransposeOrReshape(*q) && !x->is_graph_output() && x->uses().size() == 1) return nullptr;
  return Compose(p, *n) ? n : nullptr;
}

bool InLongerChain(const Node& p) {
  const Node* n = AbsorbedInto(p);
  if (!n || !IsChainMove(*n)) return false;
  const std::vector<const Node*> chain = ChainThrough(p, *n);
  return chain.size() > 2 && IsImageSplit(*chain.front()) && ComposeChain(chain);
}

StatusOr<npu::MoveLayer> ComposedMove(const Node& p, const Node& n) {
  std::vector<const Node*> chain = ChainThrough(p, n);
  std::optional<npu::MoveLayer> m =
      chain.size() > 2 && IsImageSplit(*chain.front()) ? ComposeChain(chain) : std::nullopt;
  if (m) {  // the chain ends at n
    while (chain.back() != &n) chain.pop_back();
    m = ComposeChain(chain);
  }
  if (!m) m = Compose(p, n);
  if (!m) return Internal("{} and {} do not compose to one strided copy", p.name(), n.name());
  return *m;
}

// Rows of a constant 8-bit table on axis 0 selected by int64 indices computed at run time:
// gather DMAs (npu::GatherLayer; tests/lower/npu_gather_test.cc).
StatusOr<npu::GatherLayer> GatherLayerOf(const Node& n) {
  const Value* x = n.input(0);
  const Value* idx = n.input(1);
  const Value* y = n.output(0);
  if (!x || !idx || !y) return InvalidArgument("gather '{}' without its table, indices or output", n.name());
  if (!x->is_constant() || !Is8(x)) return Unimplemented("table '{}' is not a constant 8-bit tensor", x->name());
  if (idx->type.dtype != DType::kI64) return Unimplemented("indices of dtype {} (int64 only)", DTypeName(idx->type.dtype));
  if (!x->type.IsStatic() || !idx->type.IsStatic() || !y->type.IsStatic() || x->type.rank() < 1)
    return Unimplemented("dynamic shape");
  int64_t axis = n.attrs.GetInt("axis", 0);
  if (axis < 0) axis += x->type.rank();
  if (axis != 0) return Unimplemented("axis {} (axis 0 only)", axis);
  if (idx->type.rank() == 4 || y->type.rank() == 4) return Unimplemented("a 4-d index list or result (NHWC on the NPU)");
  const Tensor& table = x->constant();
  npu::GatherLayer g;
  g.name = n.name();
  g.rows = x->type.dims[0];
  g.row_bytes = NumElements(x->type.dims) / std::max<int64_t>(1, g.rows);
  g.count = NumElements(idx->type.dims);
  const uint8_t flip = x->type.dtype == DType::kU8 ? 0x80 : 0;  // the NPU's i8 terms
  const auto* tb = static_cast<const uint8_t*>(table.raw());
  g.table.resize(table.nbytes());
  for (size_t i = 0; i < table.nbytes(); ++i) g.table[i] = static_cast<int8_t>(tb[i] ^ flip);
  return g;
}

}  // namespace edgec::lower
