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
// Rows are counted in bytes, so 2-byte (int16) operands and results slice like 1-byte ones:
// an int16 input row of an elementwise layer is twice its int8 neighbour's
// (NpuCascadeTest.Int16ChainStripesReproduceTheUnstripedOutput).
struct Member {
  bool gemm = false;
  npu::ConvLayer conv;
  VectorLayer vec;
  npu::WindowRows rows;
  int64_t in_row_bytes = 0, out_row_bytes = 0;
  int64_t b_row_bytes = 0;  // an elementwise layer's full b operand (its element size may differ from a's)
  int b_input = -1;         // which input is that b (-1: none)
  int64_t row_elems = 0;    // an elementwise layer's values per output row
  double row_cycles = 0;  // one output row at the array's (vector cores') peak
  int whole_input = -1;   // an input read whole by every stripe (an elementwise broadcast operand)
  int64_t in_row(size_t k) const { return static_cast<int>(k) == b_input ? b_row_bytes : in_row_bytes; }
};

std::optional<Member> MemberOf(const PendingLayer& l, const npu::Target& t) {
  if (l.stripe || l.group_first >= 0 || l.inputs.empty() || l.inputs.size() > 2 || l.outputs.size() != 1)
    return std::nullopt;
  Member m;
  if (IsVectorNode(*l.node)) {
    auto v = VectorLayerOf(*l.node);
    if (!v.ok()) return std::nullopt;
    m.vec = std::move(*v);
    const double vec_peak = std::max(1.0, static_cast<double>(t.vector_cores.lanes) * t.vector_cores.count);
    if (m.vec.kind != VectorLayer::Kind::kEltwise && l.inputs.size() != 1) return std::nullopt;
    if (m.vec.kind == VectorLayer::Kind::kDepthwise) {
      const npu::DepthwiseLayer& d = m.vec.depthwise;
      if (d.batch != 1) return std::nullopt;
      m.rows = {d.in_h, d.out_h(), d.extent_h(), d.stride_h, d.pad_top};  // the dilated window's rows
      m.in_row_bytes = int64_t{d.in_w} * d.channels;
      m.out_row_bytes = int64_t{d.out_w()} * d.out_channels();
      m.row_cycles = static_cast<double>(d.macs()) / d.out_h() / vec_peak;
    } else if (m.vec.kind == VectorLayer::Kind::kPool) {
      const npu::PoolLayer& p = m.vec.pool;
      if (p.batch != 1 || p.kernel_h >= p.in_h) return std::nullopt;  // a global pool reads every row
      m.rows = {p.in_h, p.out_h(), p.kernel_h, p.stride_h, p.pad_top};
      m.in_row_bytes = int64_t{p.in_w} * p.channels;
      m.out_row_bytes = int64_t{p.out_w()} * p.channels;
      m.row_cycles = static_cast<double>(p.out_w()) * p.channels * p.kernel_h * p.kernel_w / vec_peak;
    } else if (m.vec.kind == VectorLayer::Kind::kEltwise) {
      // NHWC rows of a 4-d [1, C, H, W] result; a full operand is sliced like the result, a
      // broadcast one (a channel row, a value) read whole; a constant full operand is refused.
      // Elements of 1 or 2 bytes (int8, or an int16 point of the mixed precision); the float
      // boundary's 4-byte side is planar, not rows.
      const npu::EltwiseLayer& e = m.vec.eltwise;
      auto narrow = [](int64_t b) { return b == 1 || b == 2; };
      if (!narrow(e.a_bytes) || !narrow(e.b_bytes) || !narrow(e.y_bytes) || e.planes > 0) return std::nullopt;
      if (e.op == npu::VecOp::kQuantize || e.op == npu::VecOp::kDequantize) return std::nullopt;
      const Value* y = l.node->output(0);
      if (!y || y->type.dims.size() != 4 || y->type.dims[0] != 1) return std::nullopt;
      if (e.binary() && e.broadcast == npu::EltwiseLayer::Broadcast::kFull && !e.b_const.empty()) return std::nullopt;
      const int h = static_cast<int>(y->type.dims[2]);
      m.rows = {h, h, 1, 1, 0};
      m.row_elems = y->type.dims[1] * y->type.dims[3];
      m.in_row_bytes = m.row_elems * e.a_bytes;
      m.out_row_bytes = m.row_elems * e.y_bytes;
      if (m.row_elems * h != e.elements) return std::nullopt;
      const bool wide = e.a_bytes == 2 || e.y_bytes == 2 || (e.binary() && e.b_bytes == 2);
      const double rate = wide ? t.vector_cores.VecRate("i16") : 1.0;
      if (rate <= 0) return std::nullopt;
      m.row_cycles = static_cast<double>(m.row_elems) / vec_peak / rate;
      if (e.binary() && e.broadcast != npu::EltwiseLayer::Broadcast::kFull && e.b_const.empty())
        m.whole_input = npu::RegionOperand(e.b_region).second;
      if (e.binary() && e.broadcast == npu::EltwiseLayer::Broadcast::kFull) {
        m.b_input = npu::RegionOperand(e.b_region).second;
        m.b_row_bytes = m.row_elems * e.b_bytes;
      }
    } else {
      return std::nullopt;
    }
    return m;
  }
  if (l.inputs.size() != 1) return std::nullopt;
  auto q = QuantizedLayerOf(*l.node);
  if (!q.ok()) return std::nullopt;
  const npu::ConvLayer& c = q->layer;
  if (c.batch != 1 || c.weights_from_input || c.fp16 || c.in_w == 1) return std::nullopt;  // not a MatMul
  if (c.out_elem_bytes() != 1 && c.out_elem_bytes() != 2) return std::nullopt;
  m.gemm = true;
  m.conv = c;
  m.rows = {c.in_h, c.out_h(), c.dilation_h * (c.kernel_h - 1) + 1, c.stride_h, c.pad_top};
  m.in_row_bytes = int64_t{c.in_w} * c.channels;
  m.out_row_bytes = int64_t{c.out_w()} * c.out_channels * c.out_elem_bytes();  // an int16 point: 2 bytes
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
    else if (s.vec.kind == VectorLayer::Kind::kPool) {
      set(s.vec.pool);
      // An average pool's multipliers per output pixel (its border divisors): the stripe's rows'.
      std::vector<quant::FixedPointMultiplier>& pm = s.vec.pool.pixel_mult;
      const int64_t ow = s.vec.pool.out_w();
      if (!pm.empty()) pm = std::vector<quant::FixedPointMultiplier>(pm.begin() + r.out0 * ow, pm.begin() + r.out1 * ow);
    }
    else s.vec.eltwise.elements = r.out_rows() * m.row_elems;
  }
  return s;
}

int StripeOutRows(const StripeLayer& s, const Member& m) {
  if (s.gemm) return s.conv.out_h();
  if (s.vec.kind == VectorLayer::Kind::kEltwise) return static_cast<int>(s.vec.eltwise.elements / m.row_elems);
  return s.vec.kind == VectorLayer::Kind::kDepthwise ? s.vec.depthwise.out_h() : s.vec.pool.out_h();
}

Status TileStripe(StripeLayer& s, const npu::Target& sub, const npu::TilerOptions& opt) {
  if (s.gemm) {
    ASSIGN_OR_RETURN(npu::TilerResult r, npu::ChooseTiling(s.conv, sub, opt));
    s.tiling = r.best.tiling;
    s.cycles = r.best.cycles - sub.dispatch_overhead_cycles;
    return Status::Ok();
  }
  ASSIGN_OR_RETURN(s.vtiling, ChooseVectorTiling(s.vec, sub, opt));
  s.cycles = s.vtiling.cycles - sub.dispatch_overhead_cycles;
  return Status::Ok();
}

}  // namespace

StatusOr<npu::Program> LowerStripe(const StripeLayer& s, const npu::Target& t) {
  if (s.gemm) {
    npu::LayerImage img;
    return npu::LowerConv(s.conv, t, s.tiling, &img);
  }
  const npu::VectorTiling& vt = s.vtiling;
  if (s.vec.kind == VectorLayer::Kind::kEltwise) {
    int64_t a, b, y;
    return npu::LowerEltwise(s.vec.eltwise, t, vt.chunk, vt.double_buffer, &a, &b, &y);
  }
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
  auto root = [&](int x) { return tensors[x].slice_of >= 0 ? tensors[x].slice_of : x; };
  std::vector<int> readers(tensors.size(), 0);
  for (const PendingLayer& l : pending)
    for (int x : l.inputs) ++readers[x];
  std::vector<std::optional<Member>> member(L);
  for (int i = 0; i < L; ++i) member[i] = MemberOf(pending[i], t);
  // A run p..q of members cascades when every output but q's is read only inside the run
  // (and stays inside the segment), the rows of every operand agree, and some inner output
  // is spilled by the plan.
  auto valid = [&](int p, int q) {
    bool spill = false;
    for (int j = p; j <= q; ++j) {
      const Member& m = *member[j];
      for (size_t k = 0; k < pending[j].inputs.size(); ++k) {
        const int x = pending[j].inputs[k];
        if (static_cast<int>(k) == m.whole_input) {
          if (tensors[x].producer >= p) return false;  // a broadcast operand from inside
          continue;
        }
        if (tensors[x].bytes != m.in_row(k) * m.rows.in_h) return false;
        const int from = tensors[x].producer;
        if (from >= p && from < j && member[from]->out_row_bytes != m.in_row(k)) return false;
      }
      if (j == q) break;
      const int x = pending[j].outputs[0];
      if (!plan_tensors[x].dram_reason.empty() || tensors[x].slice_of >= 0 || readers[x] == 0) return false;
      int inside = 0;
      for (int i = j + 1; i <= q; ++i)
        for (int in : pending[i].inputs) inside += in == x;
      if (inside != readers[x]) return false;
      spill |= !plan.tensors[x].in_sram;
    }
    return spill;
  };
  // A run's rows, and the tallest stripes whose inner bands take at most half the SRAM left
  // beside the tensors resident over the run (but its inner ones).
  struct Geometry {
    std::vector<npu::CascadeLayer> layers;
    std::vector<int64_t> row_bytes;
    std::vector<double> row_cycles;
    std::vector<int> out_h;
    int64_t room = 0;
    int height = 0;
    std::vector<std::vector<npu::StripeRows>> stripes;
  };
  auto geometry = [&](int p, int q, Geometry& g) {
    const int n = q - p + 1;
    g = Geometry{};
    g.layers.resize(n);
    for (int j = 0; j < n; ++j) {
      g.layers[j].rows = member[p + j]->rows;
      for (size_t k = 0; k < pending[p + j].inputs.size(); ++k) {
        const int from = tensors[pending[p + j].inputs[k]].producer;
        if (static_cast<int>(k) != member[p + j]->whole_input && from >= p) g.layers[j].reads.push_back(from - p);
      }
      g.row_bytes.push_back(member[p + j]->out_row_bytes);
      g.row_cycles.push_back(member[p + j]->row_cycles);
      g.out_h.push_back(g.layers[j].rows.out_h);
    }
    int64_t resident = 0;
    for (int s = p; s <= q; ++s) {
      int64_t r = 0;
      for (size_t x = 0; x < plan_tensors.size(); ++x) {
        const int from = tensors[x].producer;
        if (from >= p && from < q) continue;
        if (plan.tensors[x].in_sram && plan_tensors[x].first <= s && plan_tensors[x].last >= s)
          r += aligned(plan_tensors[x].bytes);
      }
      resident = std::max(resident, r);
    }
    g.room = t.shared_sram.bytes - resident;
    if (g.room <= 0) return false;
    for (int h = g.layers.back().rows.out_h - 1; h >= 1; --h) {
      auto st = npu::CascadeStripes(g.layers, h);
      if (npu::StripePeakBytes(st, g.row_bytes) + n * al <= g.room / 2) {  // each band aligned
        g.height = h;
        g.stripes = std::move(st);
        return true;
      }
    }
    return false;
  };
  // What a run's cascade saves: each spilled inner tensor written once and read by each
  // reader; what it costs: the weights every further stripe loads again and the recomputed
  // rows at peak. Cycles.
  const double bw = t.dram_bytes_per_cycle();
  struct Gain {
    double saved = 0, extra = 0;
    int64_t inner = 0;
    double net() const { return saved - extra; }
  };
  auto gain = [&](int p, int q, const Geometry& g) {
    Gain r;
    for (int j = p; j < q; ++j) {
      const int x = pending[j].outputs[0];
      if (plan.tensors[x].in_sram) continue;
      r.inner += tensors[x].bytes;
      r.saved += static_cast<double>(tensors[x].bytes) * (1 + readers[x]) / bw;
    }
    double weights = 0;
    for (int j = p; j <= q; ++j) weights += static_cast<double>(plan_layers[j].const_bytes);
    r.extra = (static_cast<double>(g.stripes.size()) - 1) * weights / bw +
              npu::RecomputedCost(g.stripes, g.out_h, g.row_cycles);
    return r;
  };
  // Runs: from each layer, the valid run (at most kMaxRun layers) whose stripes fit and whose
  // cascade gains the most.
  constexpr int kMaxRun = 16;
  std::vector<std::pair<int, int>> chains;  // [first, last] layers
  for (int p = 0; p < L;) {
    int best = -1, tried = -1;
    double best_net = 0;
    Gain tried_gain;
    Geometry g;
    for (int q = p + 1; member[p] && q < L && q < p + kMaxRun && member[q]; ++q) {
      if (!valid(p, q) || !geometry(p, q, g)) continue;
      const Gain k = gain(p, q, g);
      if (k.net() > best_net) best = q, best_net = k.net();
      if (tried < 0 || k.net() > tried_gain.net()) tried = q, tried_gain = k;
    }
    if (best > p) {
      chains.push_back({p, best});
      p = best + 1;
      continue;
    }
    if (tried > p)
      listing += fmt::format(";   no cascade from layer {}: the best run, to layer {}, would add {:.0f} cycles (weights "
                             "again, halo recomputed) for {:.0f} of spill saved\n",
                             p, tried, tried_gain.extra, tried_gain.saved);
    ++p;
  }
  if (chains.empty()) return 0;

  std::vector<std::vector<PendingLayer>> replaced(L);  // chain's first layer -> its stripe layers (local)
  std::vector<int> chain_of(L, -1);
  std::vector<int> made_by(tensors.size(), -1);  // per tensor: the chain (first layer) that made it
  int cascaded = 0;
  for (size_t ci = 0; ci < chains.size(); ++ci) {
    const auto [p, q] = chains[ci];
    const int n = q - p + 1;
    Geometry g;
    if (!geometry(p, q, g)) continue;
    const std::vector<npu::CascadeLayer>& layers = g.layers;
    const std::vector<int64_t>& row_bytes = g.row_bytes;
    const std::vector<std::vector<npu::StripeRows>>& stripes = g.stripes;
    const int height = g.height;
    const int64_t room = g.room;
    const int S = static_cast<int>(stripes.size());
    const Gain k = gain(p, q, g);
    const int64_t inner = k.inner;
    const double saved = k.saved, extra = k.extra;
    const npu::Target sub =
        SubTarget(t, t.ai_cores.count, (room - npu::StripePeakBytes(stripes, row_bytes) - n * al) / 2);
    // Tilings per distinct stripe shape.
    std::map<std::tuple<int, int, int, int>, StripeLayer> tiled;
    std::vector<PendingLayer> out;
    bool ok = true;
    const int y_out = pending[q].outputs[0];
    std::vector<int> first_stripe(n, -1);
    const size_t tensors_before = tensors.size();
    auto add_tensor = [&](npu::SegmentTensor x, const std::string& reason) {
      plan_tensors.push_back({x.name, x.bytes, -1, -1, reason});
      tensors.push_back(std::move(x));
      return static_cast<int>(tensors.size()) - 1;
    };
    for (int s = 0; s < S && ok; ++s) {
      std::vector<int> band(n, -1);  // per layer: the tensor of its output band in this stripe
      for (int j = 0; j < n && ok; ++j) {
        const npu::StripeRows& r = stripes[s][j];
        const Member& m = *member[p + j];
        const auto key = std::make_tuple(j, r.in_rows(), r.pad_top, r.pad_bottom);
        auto it = tiled.find(key);
        if (it == tiled.end()) {
          StripeLayer sl = StripeOf(m, r);
          // Its operands where the cascade puts them: bands on chip, the rest where the plan has it.
          npu::TilerOptions o = opt;
          for (size_t k = 0; k < pending[p + j].inputs.size() && k < 32; ++k) {
            const int x = pending[p + j].inputs[k];
            const int from = tensors[x].producer;
            const bool band = static_cast<int>(k) != m.whole_input && from >= p && from <= q;
            if (band || plan.tensors[root(x)].in_sram) o.on_chip_inputs |= 1u << k;
          }
          if (j + 1 < n || plan.tensors[y_out].in_sram) o.on_chip_outputs |= 1u;
          if (StripeOutRows(sl, m) != r.out_rows() || !TileStripe(sl, sub, o).ok()) {
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
        for (size_t k = 0; k < pending[p + j].inputs.size(); ++k) {
          const int x = pending[p + j].inputs[k];
          if (static_cast<int>(k) == m.whole_input) {
            l.inputs.push_back(x);
            continue;
          }
          const int from = tensors[x].producer;
          if (from >= p && from <= q) {  // a band of this stripe: all of it, or the rows this layer reads
            const int b = band[from - p];
            const int b0 = stripes[s][from - p].out0;
            if (r.in0 == b0 && r.in_rows() * m.in_row(k) == tensors[b].bytes) {
              l.inputs.push_back(b);
            } else {
              npu::SegmentTensor sx{fmt::format("{} rows {}..{}", tensors[b].name, r.in0, r.in1 - 1),
                                    r.in_rows() * m.in_row(k), false, 0, tensors[b].producer};
              sx.slice_of = b;
              sx.slice_offset = (r.in0 - b0) * m.in_row(k);
              l.inputs.push_back(add_tensor(std::move(sx), "rows of " + tensors[b].name));
            }
            continue;
          }
          if (r.in0 == 0 && r.in1 == m.rows.in_h) {
            l.inputs.push_back(x);
            continue;
          }
          const int xr = root(x);
          npu::SegmentTensor sx{fmt::format("{} rows {}..{}", tensors[xr].name, r.in0, r.in1 - 1),
                                r.in_rows() * m.in_row(k), false, 0, tensors[xr].producer};
          sx.slice_of = xr;
          sx.slice_offset = (xr != x ? tensors[x].slice_offset : 0) + r.in0 * m.in_row(k);
          l.inputs.push_back(add_tensor(std::move(sx), "rows of " + tensors[xr].name));
        }
        npu::SegmentTensor sy;
        sy.producer = -2 - local;  // local index: renumbered below
        sy.bytes = r.out_rows() * row_bytes[j];
        std::string reason;
        if (j + 1 == n) {
          sy.name = fmt::format("{} rows {}..{}", tensors[y_out].name, r.out0, r.out1 - 1);
          sy.slice_of = y_out;
          sy.slice_offset = r.out0 * row_bytes[j];
          reason = "rows of " + tensors[y_out].name;
        } else {
          sy.name = fmt::format("{} rows {}..{}", tensors[pending[p + j].outputs[0]].name, r.out0, r.out1 - 1);
        }
        band[j] = add_tensor(std::move(sy), reason);
        l.outputs = {band[j]};
        l.stripe = std::move(sl);
        out.push_back(std::move(l));
      }
    }
    // The stripes simulated alone against the layers as tiled now (their spills included).
    double striped = 0, flat = 0;
    for (const PendingLayer& l : out) striped += l.stripe->cycles;
    for (int j = p; j <= q; ++j) flat += pending[j].cycles;
    if (ok && striped >= flat) {
      ok = false;
      listing += fmt::format(";   no cascade over layers {}..{}: its {} stripes simulate {:.0f} cycles, the layers "
                             "{:.0f}\n",
                             p, q, S, striped, flat);
    } else if (!ok) {
      listing += fmt::format(";   no cascade over layers {}..{}: a stripe found no tiling\n", p, q);
    }
    if (!ok) {
      tensors.resize(tensors_before);
      plan_tensors.resize(tensors_before);
      continue;
    }
    for (int j = p; j < q; ++j) {
      const int x = pending[j].outputs[0];
      tensors[x].bytes = 0;
      tensors[x].producer = -1;
      plan_tensors[x].dram_reason = "cascaded: held as bands of its rows";
    }
    int halo = 0;
    for (int j = 0; j < n; ++j) halo = std::max(halo, layers[j].rows.kernel_h - layers[j].rows.stride_h);
    listing += fmt::format(";   cascade over layers {}..{} ({} .. {}): {} stripes of {} output rows, halo up to {} "
                           "rows; spill of {} B avoided ({:.0f} cycles) for {:.0f} cycles of weights again and "
                           "recomputed rows; simulated alone {:.0f} cycles striped, {:.0f} not\n",
                           p, q, pending[p].node->name(), pending[q].node->name(), S, height, halo, inner, saved,
                           extra, striped, flat);
    made_by.resize(tensors.size(), p);
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
  for (size_t x = 0; x < tensors.size(); ++x) {
    int& from = tensors[x].producer;
    if (from >= 0) from = chain_of[from] < 0 ? index_of[from] : last_of[chain_of[from]];
    else if (from <= -2) from = index_of[made_by[x]] + (-2 - from);  // local to its chain
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
      next.push_back(std::move(l));
    }
  }
  for (PendingLayer& l : next)
    if (l.group_first >= 0) l.group_first = index_of[l.group_first];
  pending = std::move(next);
  return cascaded;
}

}  // namespace edgec::lower
