// Cascades in an NPU segment (see npu_cascade.h).
#include "lower/npu_cascade.h"

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "lower/npu_segment.h"
#include "npu/cascade.h"
#include "npu/tiler.h"
#include "support/status.h"

namespace edgec::lower {
namespace {

// A layer's view as a cascade member: its layer data, rows, and bytes per input/output row.
struct Member {
  bool gemm = false;
  npu::ConvLayer conv;
  VectorLayer vec;
  npu::WindowRows rows;
  int64_t in_row_bytes = 0, out_row_bytes = 0;
  double row_cycles = 0;  // one output row at the array's (vector cores') peak
};

std::optional<Member> MemberOf(const PendingLayer& l, const npu::Target& t) {
  if (l.stripe || l.group_first >= 0 || l.inputs.size() != 1 || l.outputs.size() != 1) return std::nullopt;
  Member m;
  if (IsVectorNode(*l.node)) {
    auto v = VectorLayerOf(*l.node);
    if (!v.ok()) return std::nullopt;
    m.vec = std::move(*v);
    const double vec_peak = std::max(1.0, double{t.vector_cores.lanes} * t.vector_cores.count);
    if (m.vec.kind == VectorLayer::Kind::kDepthwise) {
      const npu::DepthwiseLayer& d = m.vec.depthwise;
      if (d.batch != 1) return std::nullopt;
      m.rows = {d.in_h, d.out_h(), d.kernel_h, d.stride_h, d.pad_top};
      m.in_row_bytes = int64_t{d.in_w} * d.channels;
      m.out_row_bytes = int64_t{d.out_w()} * d.channels;
      m.row_cycles = static_cast<double>(d.macs()) / d.out_h() / vec_peak;
    } else if (m.vec.kind == VectorLayer::Kind::kPool) {
      const npu::PoolLayer& p = m.vec.pool;
      if (p.batch != 1 || p.kernel_h >= p.in_h) return std::nullopt;  // a global pool reads every row
      m.rows = {p.in_h, p.out_h(), p.kernel_h, p.stride_h, p.pad_top};
      m.in_row_bytes = int64_t{p.in_w} * p.channels;
      m.out_row_bytes = int64_t{p.out_w()} * p.channels;
      m.row_cycles = double{p.out_w()} * p.channels * p.kernel_h * p.kernel_w / vec_peak;
    } else {
      return std::nullopt;
    }
    return m;
  }
  auto q = QuantizedLayerOf(*l.node);
  if (!q.ok()) return std::nullopt;
  const npu::ConvLayer& c = q->layer;
  if (c.batch != 1 || c.weights_from_input || c.fp16 || c.in_w == 1) return std::nullopt;  // not a MatMul
  m.gemm = true;
  m.conv = c;
  m.rows = {c.in_h, c.out_h(), c.dilation_h * (c.kernel_h - 1) + 1, c.stride_h, c.pad_top};
  m.in_row_bytes = int64_t{c.in_w} * c.channels;
  m.out_row_bytes = int64_t{c.out_w()} * c.out_channels;
  m.row_cycles = static_cast<double>(c.macs()) / c.out_h() / t.peak_int8_macs_per_cycle();
  return m;
}

// The member's layer over the stripe's input rows, with the stripe's padding.
StripeLayer StripeOf(const Member& m, const npu::StripeRows& r) {
  StripeLayer s;
  s.gemm = m.gemm;
  if (m.gemm) {
    s.conv = m.conv;
    s.conv.in_h = r.in_rows();
    s.conv.pad_top = r.pad_top;
    s.conv.pad_bottom = r.pad_bottom;
  } else {
    s.vec = m.vec;
    auto set = [&](auto& l) {
      l.in_h = r.in_rows();
      l.pad_top = r.pad_top;
      l.pad_bottom = r.pad_bottom;
    };
    if (s.vec.kind == VectorLayer::Kind::kDepthwise) set(s.vec.depthwise);
    else set(s.vec.pool);
  }
  return s;
}

int StripeOutRows(const StripeLayer& s) {
  if (s.gemm) return s.conv.out_h();
  return s.vec.kind == VectorLayer::Kind::kDepthwise ? s.vec.depthwise.out_h() : s.vec.pool.out_h();
}

Status TileStripe(StripeLayer& s, const npu::Target& sub, const npu::TilerOptions& opt) {
  if (s.gemm) {
    ASSIGN_OR_RETURN(npu::TilerResult r, npu::ChooseTiling(s.conv, sub, opt));
    s.tiling = r.best.tiling;
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(s.vtiling, ChooseVectorTiling(s.vec, sub, opt));
  return Status::Ok();
}

}  // namespace

StatusOr<npu::Program> LowerStripe(const StripeLayer& s, const npu::Target& t) {
  if (s.gemm) {
    npu::LayerImage img;
    return npu::LowerConv(s.conv, t, s.tiling, &img);
  }
  const npu::VectorTiling& vt = s.vtiling;
  if (s.vec.kind == VectorLayer::Kind::kDepthwise)
    return npu::LowerDepthwise(s.vec.depthwise, t, vt.tile_rows, vt.tile_c, vt.double_buffer);
  return npu::LowerPool(s.vec.pool, t, vt.tile_rows, vt.tile_c, vt.double_buffer, nullptr);
}

StatusOr<int> PlanCascades(std::vector<PendingLayer>& pending, std::vector<npu::SegmentTensor>& tensors,
                           std::vector<npu::SramPlanTensor>& plan_tensors,
                           const std::vector<npu::SramPlanLayer>& plan_layers, const npu::SramPlan& plan,
                           const npu::Target& t, const npu::TilerOptions& opt, std::string& listing) {
  const int L = static_cast<int>(pending.size());
  const int64_t al = std::max<int64_t>(1, t.shared_sram.alignment);
  auto aligned = [&](int64_t b) { return (b + al - 1) / al * al; };
  std::vector<int> readers(tensors.size(), 0);
  for (const PendingLayer& l : pending)
    for (int x : l.inputs) ++readers[x];
  std::vector<std::optional<Member>> member(L);
  for (int i = 0; i < L; ++i) member[i] = MemberOf(pending[i], t);
  // Edge i -> i + 1: layer i's only output is layer i + 1's only input, read by no other
  // layer, spilled by the plan, and the two agree on its rows.
  auto edge = [&](int i) {
    if (!member[i] || !member[i + 1]) return false;
    const int x = pending[i].outputs[0];
    if (pending[i + 1].inputs[0] != x || readers[x] != 1 || plan.tensors[x].in_sram ||
        !plan_tensors[x].dram_reason.empty() || tensors[x].slice_of >= 0)
      return false;
    return member[i]->rows.out_h == member[i + 1]->rows.in_h &&
           member[i]->out_row_bytes == member[i + 1]->in_row_bytes &&
           member[i]->out_row_bytes * member[i]->rows.out_h == tensors[x].bytes;
  };
  std::vector<std::pair<int, int>> chains;  // [first, last] layers
  for (int i = 0; i + 1 < L;) {
    if (!edge(i)) {
      ++i;
      continue;
    }
    int j = i + 1;
    while (j + 1 < L && edge(j)) ++j;
    chains.push_back({i, j});
    i = j;
  }
  if (chains.empty()) return 0;

  const double bw = t.dram_bytes_per_cycle();
  std::vector<std::vector<PendingLayer>> replaced(L);  // chain's first layer -> its stripe layers (local)
  std::vector<int> chain_of(L, -1);
  int cascaded = 0;
  for (size_t ci = 0; ci < chains.size(); ++ci) {
    const auto [p, q] = chains[ci];
    const int n = q - p + 1;
    std::vector<npu::WindowRows> rows(n);
    std::vector<int64_t> row_bytes(n);
    std::vector<double> row_cycles(n);
    for (int j = 0; j < n; ++j) {
      rows[j] = member[p + j]->rows;
      row_bytes[j] = member[p + j]->out_row_bytes;
      row_cycles[j] = member[p + j]->row_cycles;
    }
    // SRAM beside the tensors resident over the chain (its own input and output included).
    int64_t resident = 0;
    for (int s = p; s <= q; ++s) {
      int64_t r = 0;
      for (size_t x = 0; x < plan_tensors.size(); ++x)
        if (plan.tensors[x].in_sram && plan_tensors[x].first <= s && plan_tensors[x].last >= s)
          r += aligned(plan_tensors[x].bytes);
      resident = std::max(resident, r);
    }
    const int64_t room = t.shared_sram.bytes - resident;
    if (room <= 0) continue;
    int height = 0;
    std::vector<std::vector<npu::StripeRows>> stripes;
    for (int h = rows.back().out_h - 1; h >= 1; --h) {
      auto s = npu::CascadeStripes(rows, h);
      // Each band aligned: two at once at most (a layer's input and output band).
      if (npu::StripePeakBytes(s, row_bytes) + 2 * al <= room / 2) {
        height = h;
        stripes = std::move(s);
        break;
      }
    }
    if (height == 0) continue;
    const int S = static_cast<int>(stripes.size());
    double saved = 0, weights = 0;
    int64_t inner = 0;
    for (int j = p; j < q; ++j) inner += tensors[pending[j].outputs[0]].bytes;
    saved = 2.0 * static_cast<double>(inner) / bw;
    for (int j = p; j <= q; ++j) weights += static_cast<double>(plan_layers[j].const_bytes);
    const double extra = (S - 1) * weights / bw + npu::RecomputedCost(stripes, rows, row_cycles);
    if (extra >= saved) {
      listing += fmt::format(";   no cascade over layers {}..{}: {} stripes of {} rows would add {:.0f} cycles "
                             "(weights again, halo recomputed) for {:.0f} of spill saved\n",
                             p, q, S, height, extra, saved);
      continue;
    }
    const npu::Target sub = SubTarget(t, t.ai_cores.count, room - npu::StripePeakBytes(stripes, row_bytes) - 2 * al);
    // Tilings per distinct stripe shape.
    std::map<std::tuple<int, int, int, int>, StripeLayer> tiled;
    std::vector<PendingLayer> out;
    bool ok = true;
    const int x_in = pending[p].inputs[0], y_out = pending[q].outputs[0];
    const int in_root = tensors[x_in].slice_of >= 0 ? tensors[x_in].slice_of : x_in;
    const int64_t in_base = tensors[x_in].slice_of >= 0 ? tensors[x_in].slice_offset : 0;
    std::vector<int> first_stripe(n, -1);
    const size_t tensors_before = tensors.size();
    for (int s = 0; s < S && ok; ++s) {
      int prev = -1;  // the tensor of the previous layer's band
      for (int j = 0; j < n && ok; ++j) {
        const npu::StripeRows& r = stripes[s][j];
        const auto key = std::make_tuple(j, r.in_rows(), r.pad_top, r.pad_bottom);
        auto it = tiled.find(key);
        if (it == tiled.end()) {
          StripeLayer sl = StripeOf(*member[p + j], r);
          if (StripeOutRows(sl) != r.out_rows() || !TileStripe(sl, sub, opt).ok()) {
            ok = false;
            break;
          }
          it = tiled.emplace(key, std::move(sl)).first;
        }
        auto sl = std::make_shared<StripeLayer>(it->second);
        sl->index = s;
        sl->count = S;
        PendingLayer l;
        l.node = pending[p + j].node;
        l.placement = pending[p + j].placement;
        l.placement.plan = fmt::format("stripe {}/{} rows {}..{}: {}", s, S, r.out0, r.out1 - 1,
                                       sl->gemm ? sl->tiling.ToString() : sl->vtiling.ToString());
        l.target = sub;
        const int local = static_cast<int>(out.size());
        if (first_stripe[j] < 0) first_stripe[j] = local;
        sl->constants_of = first_stripe[j];  // local index: renumbered below
        if (j == 0) {
          if (r.in0 == 0 && r.in1 == rows[0].in_h) {
            l.inputs = {x_in};
          } else {
            npu::SegmentTensor sx{fmt::format("{} rows {}..{}", tensors[in_root].name, r.in0, r.in1 - 1),
                                  r.in_rows() * member[p]->in_row_bytes, false, 0, tensors[in_root].producer};
            sx.slice_of = in_root;
            sx.slice_offset = in_base + r.in0 * member[p]->in_row_bytes;
            l.inputs = {static_cast<int>(tensors.size())};
            tensors.push_back(sx);
            plan_tensors.push_back({sx.name, sx.bytes, -1, -1, "rows of " + tensors[in_root].name});
          }
        } else {
          l.inputs = {prev};
        }
        npu::SegmentTensor sy;
        sy.producer = -2 - local;  // local index: renumbered below
        if (j + 1 == n) {
          sy.name = fmt::format("{} rows {}..{}", tensors[y_out].name, r.out0, r.out1 - 1);
          sy.bytes = r.out_rows() * row_bytes[j];
          sy.slice_of = y_out;
          sy.slice_offset = r.out0 * row_bytes[j];
          plan_tensors.push_back({sy.name, sy.bytes, -1, -1, "rows of " + tensors[y_out].name});
        } else {
          sy.name = fmt::format("{} rows {}..{}", tensors[pending[p + j].outputs[0]].name, r.out0, r.out1 - 1);
          sy.bytes = r.out_rows() * row_bytes[j];
          plan_tensors.push_back({sy.name, sy.bytes, -1, -1, ""});
        }
        l.outputs = {static_cast<int>(tensors.size())};
        prev = l.outputs[0];
        tensors.push_back(sy);
        l.stripe = std::move(sl);
        out.push_back(std::move(l));
      }
    }
    if (!ok) {
      listing += fmt::format(";   no cascade over layers {}..{}: a stripe found no tiling\n", p, q);
      tensors.resize(tensors_before);
      plan_tensors.resize(tensors_before);
      continue;
    }
    for (int j = p; j < q; ++j) {
      const int x = pending[j].outputs[0];
      tensors[x].bytes = 0;
      tensors[x].producer = -1;
      plan_tensors[x].dram_reason = fmt::format("cascaded: held as bands of its rows");
    }
    int halo = 0;
    for (int j = 1; j < n; ++j) halo = std::max(halo, rows[j].kernel_h - rows[j].stride_h);
    listing += fmt::format(";   cascade over layers {}..{} ({} .. {}): {} stripes of {} output rows, halo up to {} "
                           "rows; spill of {} B avoided ({:.0f} cycles) for {:.0f} cycles of weights again and "
                           "recomputed rows\n",
                           p, q, pending[p].node->name(), pending[q].node->name(), S, height, halo, inner, saved,
                           extra);
    replaced[p] = std::move(out);
    for (int j = p; j <= q; ++j) chain_of[j] = p;
    ++cascaded;
  }
  if (cascaded == 0) return 0;
  // Renumber: the new order; an old producer in a chain becomes the chain's last stripe.
  std::vector<int> index_of(L, -1), last_of(L, -1);
  for (int i = 0, at = 0; i < L; ++i) {
    if (chain_of[i] < 0) {
      index_of[i] = at++;
    } else if (chain_of[i] == i) {
      index_of[i] = at;
      at += static_cast<int>(replaced[i].size());
      last_of[i] = at - 1;
    }
  }
  for (npu::SegmentTensor& st : tensors) {
    if (st.producer >= 0) st.producer = chain_of[st.producer] < 0 ? index_of[st.producer] : last_of[chain_of[st.producer]];
    else if (st.producer <= -2) st.producer = -2 - st.producer;  // local: made absolute below
  }
  std::vector<PendingLayer> next;
  for (int i = 0; i < L; ++i) {
    if (chain_of[i] < 0) {
      next.push_back(std::move(pending[i]));
      continue;
    }
    if (chain_of[i] != i) continue;
    const int base = index_of[i];
    for (PendingLayer& l : replaced[i]) {
      auto sl = std::make_shared<StripeLayer>(*l.stripe);
      sl->constants_of += base;
      l.stripe = std::move(sl);
      for (int x : l.outputs) tensors[x].producer += base;
      next.push_back(std::move(l));
    }
  }
  for (PendingLayer& l : next)
    if (l.group_first >= 0) l.group_first = index_of[l.group_first];
  pending = std::move(next);
  return cascaded;
}

}  // namespace edgec::lower
