#include "partition/partition.h"

#include <algorithm>
#include <map>
#include <set>

#include "npu/vector_tiler.h"
#include "lower/npu_layers.h"

namespace edgec::partition {
namespace {

bool IsData(const Value* v) { return v && !v->is_constant(); }

int64_t Bytes(const Value* v) {
  return v->type.IsStatic() ? NumElements(v->type.dims) * static_cast<int64_t>(DTypeSize(v->type.dtype)) : 0;
}

// The target lists the internal integer ops as the operation they perform.
std::string TargetOpName(OpKind op) {
  if (op == OpKind::kQLinearAdd) return "Add";
  if (op == OpKind::kQLinearMul) return "Mul";
  if (op == OpKind::kQLinearGlobalAveragePool) return "GlobalAveragePool";
  if (op == OpKind::kQLinearAveragePool) return "AveragePool";
  if (op == OpKind::kQLinearLayerNormalization) return "LayerNormalization";
  if (op == OpKind::kQLinearGroupNormalization) return "GroupNormalization";
  if (op == OpKind::kQLinearSoftmax) return "Softmax";
  if (op == OpKind::kQLinearRequantize) return "QuantizeLinear";  // Q(DQ(x)) between widths
  if (op == OpKind::kChannelShuffle) return "Transpose";  // a transpose within each pixel
  return std::string(OpName(op));
}

// The NPU's DRAM form of a value (NHWC when 4-d, else as it is) orders its bytes as the
// logical row-major order does when the 4-d value has one pixel or one channel.
bool NhwcIsRowMajor(const Value* v) {
  const Dims& d = v->type.dims;
  return d.size() != 4 || d[2] * d[3] == 1 || d[1] == 1;
}

}  // namespace

// A reshape-like node whose bytes are the same in both layouts by the shapes alone.
static bool IsRowMajorView(const Node& n) {
  if (!IsReshapeLike(n.op()) && n.op() != OpKind::kIdentity) return false;
  const Value* x = n.input(0);
  const Value* y = n.output(0);
  if (!x || !y || !x->type.IsStatic() || !y->type.IsStatic()) return false;
  if (x->type.dtype != DType::kI8 && x->type.dtype != DType::kU8) return false;
  for (int i = 1; i < n.num_inputs(); ++i)
    if (n.input(i) && !n.input(i)->is_constant()) return false;
  return NhwcIsRowMajor(x) && NhwcIsRowMajor(y);
}

bool IsDramView(const Node& n) {
  if (IsRowMajorView(n) || lower::AbsorbedInto(n)) return true;
  if (!lower::IsMoveNode(n) || n.num_outputs() != 1) return false;
  auto m = lower::MoveLayerOf(n);
  return m.ok() && m->identity();
}

double CpuSeconds(const Node& n, const CpuCost& cpu) {
  if (const int64_t macs = lower::MacsOf(n)) return macs / cpu.int8_macs_per_s;
  int64_t bytes = 0;
  for (const Value* v : n.inputs())
    if (IsData(v)) bytes += Bytes(v);
  for (const Value* v : n.outputs())
    if (v) bytes += Bytes(v);
  return bytes / cpu.copy_bytes_per_s;
}

std::string NpuSupportDetail(const Node& n, const npu::Target& t, NodePlacement* p) {
  auto fail = [&](ReasonCode code, std::string reason, std::string constraint, std::string actual, std::string allowed,
                  std::string hint) {
    if (p) {
      p->code = code;
      p->constraint = std::move(constraint);
      p->actual = std::move(actual);
      p->allowed = std::move(allowed);
      p->hint = std::move(hint);
    }
    return reason;
  };
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (const auto& x : v) s += (s.empty() ? "" : "|") + x;
    return s;
  };
  const std::string op = TargetOpName(n.op());
  if (!t.SupportsOp(op))
    return fail(ReasonCode::kUnsupportedOp, "unsupported op " + op, "supported_ops", op, join(t.supported_ops),
                fmt::format("none on this target (the NPU has no {}); a target listing it: --set supported_ops=...|{}", op, op));
  // int16 activations (the quantizer's mixed precision): the vector cores must declare i16
  // (vector_cores.dtype_rates); where they do, segments hold 2-byte tensors and the int16
  // layers (the wide VEC norm / softmax, npu/lower_wide_norm.cc) run on the NPU by cost
  // (tests/quant/int16_quantize_test.cc, tests/lower/npu_int16_segment_test.cc).
  std::vector<const Value*> ends(n.inputs().begin(), n.inputs().end());
  for (const Value* v : n.outputs()) ends.push_back(v);
  bool wide = false;
  for (const Value* v : ends) {
    if (!v || !IsData(v) || v->type.dtype != DType::kI16) continue;
    wide = true;
    std::string rates;
    for (const auto& [d, r] : t.vector_cores.dtype_rates) rates += fmt::format("{}{}:{}", rates.empty() ? "" : "|", d, r);
    if (t.vector_cores.VecRate("i16") <= 0)
      return fail(ReasonCode::kUnsupportedDtype, "vector cores take no i16", "vector_cores.dtype_rates",
                  fmt::format("i16 ('{}')", v->name()), rates,
                  "keep this layer int8 (quantize without --int16), or a target whose vector cores take i16");
  }
  // An i16 value needs the vector cores' i16 rate (checked above), not supported_dtypes.
  auto dtype_ok = [&](const Value* v) {
    return (wide && v->type.dtype == DType::kI16) || t.SupportsDType(DTypeName(v->type.dtype));
  };
  auto bad_dtype = [&](const Value* v) {
    const std::string d(DTypeName(v->type.dtype));
    const bool boundary = (n.op() == OpKind::kQuantizeLinear && n.input(0) && n.input(0)->is_graph_input()) ||
                          (n.op() == OpKind::kDequantizeLinear && n.output(0) && n.output(0)->is_graph_output());
    if (boundary)
      return fail(ReasonCode::kBoundary, fmt::format("dtype {} not supported", d), "supported_dtypes",
                  fmt::format("{} ('{}', a model {})", d, v->name(), n.op() == OpKind::kQuantizeLinear ? "input" : "output"),
                  join(t.supported_dtypes), "none needed: the model's float boundary; feed int8 to skip it");
    return fail(ReasonCode::kUnsupportedDtype, fmt::format("dtype {} not supported", d), "supported_dtypes",
                fmt::format("{} ('{}')", d, v->name()), join(t.supported_dtypes),
                "quantize the model to int8 (edgec quantize --calib DIR, or compile --calib DIR)");
  };
  // A Gather of computed indices (an embedding's token ids): a gather DMA reads the index list
  // (npu::GatherLayer) when the table is a constant 8-bit one on axis 0 and the indices int64;
  // otherwise the lowering's reason (tests/lower/segment_cost_rule_test.cc:
  // GatherOfComputedIndicesSaysWhy). The int64 index list is its one non-8-bit input.
  const Value* index_list = nullptr;
  if (n.op() == OpKind::kGather && n.input(1) && IsData(n.input(1))) {
    auto g = lower::VectorLayerOf(n);
    if (!g.ok())
      return fail(ReasonCode::kNotLowered, "gather of computed indices: " + g.status().message(), "NPU lowering",
                  fmt::format("indices '{}' computed at run time", n.input(1)->name()),
                  "a constant 8-bit table, axis 0, int64 indices (a gather DMA)",
                  "none but the CPU for this gather");
    index_list = n.input(1);
  }
  // The model's float boundary (lower::IsFloatBoundary): the DMA moves the f32 bytes and the
  // vector cores convert, where they declare an f32 rate; the 8-bit side is checked as usual.
  if (lower::IsFloatBoundary(n)) {
    const bool q = n.op() == OpKind::kQuantizeLinear;
    const Value* f = q ? n.input(0) : n.output(0);
    const Value* i8 = q ? n.output(0) : n.input(0);
    if (!dtype_ok(i8)) return bad_dtype(i8);
    if (t.vector_cores.VecRate("f32") <= 0) {
      std::string rates;
      for (const auto& [d, r] : t.vector_cores.dtype_rates) rates += fmt::format("{}{}:{}", rates.empty() ? "" : "|", d, r);
      return fail(ReasonCode::kBoundary, "the model's float boundary: vector cores take no f32", "vector_cores.dtype_rates",
                  fmt::format("f32 ('{}', a model {})", f->name(), q ? "input" : "output"), rates,
                  "none needed: feed int8 to skip it, or a target whose vector cores list f32");
    }
  } else {
    for (const Value* v : n.inputs())
      if (IsData(v) && v != index_list && !dtype_ok(v)) return bad_dtype(v);
    // ArgMax / ArgMin write the graph's int64 indices (a VEC argmax, lower::ArgMaxLayerOf).
    const bool indices = n.op() == OpKind::kArgMax || n.op() == OpKind::kArgMin;
    for (const Value* v : n.outputs())
      if (v && !(indices && v->type.dtype == DType::kI64) && !dtype_ok(v)) return bad_dtype(v);
  }
  auto dynamic = [&](const Value* v) {
    return fail(ReasonCode::kDynamicShape, "dynamic shape", "static shapes", v->type.ToString(), "every dim known",
                "bind the input dims: compile --shape NAME=1x3x224x224");
  };
  for (const Value* v : n.inputs())
    if (IsData(v) && !v->type.IsStatic()) return dynamic(v);
  for (const Value* v : n.outputs())
    if (v && !v->type.IsStatic()) return dynamic(v);
  auto not_lowered = [&](const Status& st) {
    return fail(ReasonCode::kNotLowered, st.message(), "NPU lowering", st.message(), "the layer kinds in docs/npu.md",
                "none but the CPU: the NPU lowering does not take these attributes");
  };
  if (lower::IsVectorNode(n)) {
    auto v = lower::VectorLayerOf(n);
    return v.ok() ? "" : not_lowered(v.status());
  }
  auto q = lower::QuantizedLayerOf(n);
  if (!q.ok()) return not_lowered(q.status());
  return "";
}

std::string NpuSupport(const Node& n, const npu::Target& t) { return NpuSupportDetail(n, t, nullptr); }

const char* ReasonCodeName(ReasonCode c) {
  switch (c) {
    case ReasonCode::kNpuCheaper: return "npu_cheaper";
    case ReasonCode::kNpuForced: return "npu_forced";
    case ReasonCode::kNpuView: return "npu_view";
    case ReasonCode::kPinnedNpu: return "pinned_npu";
    case ReasonCode::kPinnedCpu: return "pinned_cpu";
    case ReasonCode::kUnsupportedOp: return "unsupported_op";
    case ReasonCode::kUnsupportedDtype: return "unsupported_dtype";
    case ReasonCode::kBoundary: return "model_boundary";
    case ReasonCode::kDynamicShape: return "dynamic_shape";
    case ReasonCode::kNotLowered: return "not_lowered";
    case ReasonCode::kNoTiling: return "no_tiling";
    case ReasonCode::kCpuCheaper: return "cpu_cheaper";
  }
  return "?";
}

nlohmann::json PlacementJson(const std::vector<NodePlacement>& ps) {
  nlohmann::json nodes = nlohmann::json::array();
  for (const NodePlacement& p : ps) {
    nlohmann::json j = {{"node", p.node->name()}, {"op", OpName(p.node->op())}, {"unit", artifact_io::UnitName(p.unit)},
                        {"code", ReasonCodeName(p.code)}, {"reason", p.reason}, {"macs", p.macs}};
    nlohmann::json cost = {{"cpu_s", p.cpu_s > 0 ? nlohmann::json(p.cpu_s) : nlohmann::json(0.0)}};
    if (p.legal)
      cost.update({{"npu_s", p.npu_s}, {"transfer_s", p.transfer_s}, {"transfer_bytes", p.transfer_bytes},
                   {"cpu_transfer_s", p.cpu_transfer_s}});
    j["cost"] = cost;
    if (!p.constraint.empty())
      j["violated"] = {{"constraint", p.constraint}, {"actual", p.actual}, {"allowed", p.allowed}};
    if (!p.hint.empty()) j["hint"] = p.hint;
    nodes.push_back(std::move(j));
  }
  return nodes;
}

namespace {
// Rule 5's report: the shared SRAM (and accumulators) the tiler had.
void NoTiling(NodePlacement& p, const npu::Target& t, const Status& st) {
  p.code = ReasonCode::kNoTiling;
  p.constraint = "shared_sram.bytes, ai_cores.accumulator_bytes";
  p.actual = st.message();
  p.allowed = fmt::format("{} B SRAM, {} B accumulators per core", t.shared_sram.bytes, t.ai_cores.accumulator_bytes);
  p.hint = fmt::format("a larger SRAM: --set shared_sram.bytes={}", 2 * t.shared_sram.bytes);
}
}  // namespace

StatusOr<std::vector<NodePlacement>> Partition(const Graph& g, const npu::Target& t, const PartitionOptions& o) {
  std::vector<NodePlacement> out;
  std::set<const Node*> legal;
  for (const Node* n : g.nodes()) {
    NodePlacement p;
    p.node = n;
    p.macs = lower::MacsOf(*n);
    p.reason = NpuSupportDetail(*n, t, &p);
    p.cpu_s = CpuSeconds(*n, o.cpu);
    const Node* from = n->input(0) ? n->input(0)->producer() : nullptr;
    if (IsDramView(*n) && from && legal.count(from)) {
      p.reason.clear();
      p.plan = "view of the DRAM tensor (no work, no copy)";
      p.legal = true;
      p.code = ReasonCode::kNpuView;
      p.constraint = p.actual = p.allowed = p.hint = "";
      legal.insert(n);
    } else if (p.reason.empty() && lower::IsVectorNode(*n)) {
      ASSIGN_OR_RETURN(lower::VectorLayer v, lower::VectorLayerOf(*n));
      using K = lower::VectorLayer::Kind;
      auto tr = lower::ChooseVectorTiling(v, t, o.tiler);
      if (v.kind == K::kMove) {
        p.moved_bytes = v.move.bytes();
        p.element_rows = v.move.element_rows();
      }
      if (!tr.ok()) {
        p.reason = "no tiling fits: " + tr.status().message();
        NoTiling(p, t, tr.status());
      } else {
        p.vector_tiling = *tr;
        p.npu_cycles = tr->cycles;
        p.plan = tr->ToString();
        p.legal = true;
        legal.insert(n);
      }
    } else if (p.reason.empty()) {
      ASSIGN_OR_RETURN(npu::ConvLayer shape, lower::GemmLayerShape(*n));
      auto tr = npu::ChooseTiling(shape, t, o.tiler);
      if (!tr.ok()) {
        p.reason = "no tiling fits: " + tr.status().message();
        NoTiling(p, t, tr.status());
      } else {
        p.tiling = *tr;
        p.npu_cycles = tr->best.cycles;
        p.plan = tr->best.tiling.ToString();
        p.legal = true;
        legal.insert(n);
      }
    }
    out.push_back(std::move(p));
  }
  // Pins: to the CPU before the transfers are counted (neighbours see a CPU node); to the
  // NPU only a legal node.
  std::set<std::string> pinned;
  for (NodePlacement& p : out) {
    auto pin = o.pins.find(p.node->name());
    if (pin == o.pins.end()) continue;
    pinned.insert(pin->first);
    if (pin->second == artifact_io::Unit::kCpu) {
      legal.erase(p.node);
    } else if (!p.legal) {
      return InvalidArgument("--pin {}=npu: {} cannot run on the NPU: {}", pin->first, p.node->Label(), p.reason);
    }
  }
  for (const auto& [name, unit] : o.pins)
    if (!pinned.count(name)) return InvalidArgument("--pin {}: no node of that name", name);
  const double bw = t.dram.bandwidth_bytes_per_s;
  const double dispatch_s = t.dispatch_overhead_cycles / t.clock_hz;
  auto crossing_s = [&](int64_t bytes) { return bytes / bw + bytes / o.cpu.copy_bytes_per_s; };
  for (size_t i = 0; i < out.size(); ++i) {
    NodePlacement& p = out[i];
    if (!p.legal) continue;
    const Node* n = p.node;
    auto pin = o.pins.find(n->name());
    // The data neighbours on the other unit: the NPU side pays for those the CPU has, the CPU
    // side for those the NPU has (the same DRAM crossing and layout change either way).
    int64_t npu_neighbour_bytes = 0;
    // The float boundary's f32 graph input or output is the caller's buffer, which the NPU
    // reads or writes in place (its DMA and the cache maintenance are the NPU's time, runtime/
    // artifact_run.cc): no crossing (tests/lower/npu_float_boundary_test.cc).
    const bool boundary = lower::IsFloatBoundary(*n);
    for (const Value* v : n->inputs()) {
      if (!IsData(v)) continue;
      if (v->is_graph_input() && (boundary || (n->op() == OpKind::kGather && v == n->input(1) &&
                                               v->type.dtype == DType::kI64)))
        continue;  // ... as is a gather's int64 index list
      if (!v->producer() || !legal.count(v->producer())) p.transfer_bytes += Bytes(v);
      else npu_neighbour_bytes += Bytes(v);
    }
    for (const Value* v : n->outputs()) {
      bool cpu_use = v->is_graph_output() && !boundary, npu_use = false;
      for (const auto& u : v->uses()) (legal.count(u.node) ? npu_use : cpu_use) = true;
      if (cpu_use) p.transfer_bytes += Bytes(v);
      if (npu_use) npu_neighbour_bytes += Bytes(v);
    }
    // A node joins the segment of a legal node next to it in graph order and shares that
    // segment's one dispatch; on the CPU between two legal nodes it splits their segment in
    // two, a second dispatch (tests/lower/segment_cost_rule_test.cc).
    const bool prev_npu = i > 0 && legal.count(out[i - 1].node);
    const bool next_npu = i + 1 < out.size() && legal.count(out[i + 1].node);
    p.npu_s = p.npu_cycles / t.clock_hz;
    if ((prev_npu || next_npu) && p.npu_cycles > 0) p.npu_s = std::max(0.0, p.npu_s - dispatch_s);
    // Beside a legal graph-order predecessor that none of its inputs come from, the segment
    // runs both at once on disjoint cores (lower/npu_segment.h, parallel groups): the node adds
    // only what it takes beyond that partner (sd_unet's cross-attention K and V projections of
    // the text context) (tests/lower/segment_cost_rule_test.cc: IndependentNeighboursOverlap).
    if (prev_npu && p.npu_cycles > 0 && !lower::IsMoveNode(*n) && !IsDramView(*n)) {
      const NodePlacement& q = out[i - 1];
      bool independent = q.npu_cycles > 0 && !lower::IsMoveNode(*q.node);
      for (const Value* v : n->inputs()) independent &= !v || v->producer() != q.node;
      if (independent) p.npu_s = std::max(0.0, p.npu_cycles - q.npu_cycles) / t.clock_hz;
    }
    p.transfer_s = crossing_s(p.transfer_bytes);
    p.cpu_s = CpuSeconds(*n, o.cpu);
    p.cpu_transfer_s = crossing_s(npu_neighbour_bytes) + (prev_npu && next_npu ? dispatch_s : 0);
    const double npu_total = p.npu_s + p.transfer_s;
    const double cpu_total = p.cpu_s + p.cpu_transfer_s;
    const bool view = p.code == ReasonCode::kNpuView;
    if (pin != o.pins.end() && pin->second == artifact_io::Unit::kCpu) {
      p.code = ReasonCode::kPinnedCpu;
      p.reason = fmt::format("pinned to the CPU (--pin); npu would take {:.4f} ms + transfers {:.4f} ms, cpu {:.4f} ms",
                             p.npu_s * 1e3, p.transfer_s * 1e3, p.cpu_s * 1e3);
      p.hint = "drop --pin " + n->name() + "=cpu";
    } else if (pin != o.pins.end() || !o.cost_rule || npu_total <= cpu_total) {
      p.unit = artifact_io::Unit::kNpu;
      if (!view) p.code = pin != o.pins.end() ? ReasonCode::kPinnedNpu : npu_total <= cpu_total ? ReasonCode::kNpuCheaper : ReasonCode::kNpuForced;
      p.reason = fmt::format("{}npu {:.4f} ms + transfers {:.4f} ms {} cpu {:.4f} ms + transfers {:.4f} ms; {}",
                             pin != o.pins.end() ? "pinned to the NPU (--pin); " : "", p.npu_s * 1e3, p.transfer_s * 1e3,
                             npu_total <= cpu_total ? "<=" : ">", p.cpu_s * 1e3, p.cpu_transfer_s * 1e3, p.plan);
    } else {
      // The model's own float boundary kept on the CPU by cost is still no fallback (--strict).
      p.code = lower::IsFloatBoundary(*n) ? ReasonCode::kBoundary : ReasonCode::kCpuCheaper;
      p.reason = fmt::format("cost: cpu {:.4f} ms + transfers {:.4f} ms < npu {:.4f} ms + transfers {:.4f} ms",
                             p.cpu_s * 1e3, p.cpu_transfer_s * 1e3, p.npu_s * 1e3, p.transfer_s * 1e3);
      p.constraint = "cost rule: npu + transfers <= cpu + transfers";
      p.actual = fmt::format("npu {:.4f} ms + transfers {:.4f} ms", p.npu_s * 1e3, p.transfer_s * 1e3);
      p.allowed = fmt::format("<= cpu {:.4f} ms + transfers {:.4f} ms", p.cpu_s * 1e3, p.cpu_transfer_s * 1e3);
      p.hint = p.transfer_s > cpu_total - p.npu_s && p.npu_s <= cpu_total
                   ? fmt::format("the transfers decide: --pin {}=npu (or its CPU neighbours to the NPU) keeps the data on the NPU", n->name())
                   : fmt::format("--pin {}=npu forces it (slower by the cost model), or a faster target", n->name());
    }
  }
  // A move absorbed into the next (lower::AbsorbedInto) is a view only while that one copies
  // from its input on the NPU: unless both are there, both run on the CPU (to a fixpoint: a
  // chain of moves is one copy).
  // A chain of more than two moves (lower::InLongerChain) is one copy only inside one NPU
  // segment: a CPU node between two of its nodes in graph order sends the chain to the CPU.
  std::map<const Node*, NodePlacement*> at;
  std::map<const Node*, size_t> order;
  for (size_t i = 0; i < out.size(); ++i) at[out[i].node] = &out[i], order[out[i].node] = i;
  auto split = [&](const NodePlacement& p, const NodePlacement& q) {
    if (p.unit == artifact_io::Unit::kCpu || !lower::InLongerChain(*p.node)) return false;
    for (size_t i = order[p.node] + 1; i < order[q.node]; ++i)
      if (out[i].unit != p.unit) return true;
    return false;
  };
  for (bool changed = true; changed;) {
   changed = false;
   for (NodePlacement& p : out) {
    const Node* n = lower::AbsorbedInto(*p.node);
    NodePlacement* q = n ? at[n] : nullptr;
    if (!q || (p.unit == q->unit && (p.unit == artifact_io::Unit::kCpu || p.code == ReasonCode::kNpuView) &&
               !split(p, *q)))
      continue;
    for (NodePlacement* x : {&p, q}) {
      if (x->unit == artifact_io::Unit::kCpu) continue;
      changed = true;
      x->unit = artifact_io::Unit::kCpu;
      x->code = ReasonCode::kCpuCheaper;
      x->reason = fmt::format("moves with {} (one copy on the NPU), which runs on the CPU",
                              (x == &p ? q : &p)->node->name());
      x->constraint = "a move absorbed into the next runs on the same unit";
      x->hint = "";
    }
   }
  }
  return out;
}

std::string FormatPlacements(const std::vector<NodePlacement>& ps) {
  size_t w = 24;
  for (const auto& p : ps) w = std::max(w, p.node->name().size());
  w = std::min<size_t>(w, 60);
  std::string s = fmt::format("{:<{}} {:<18} {:<4} {}\n", "node", w, "op", "unit", "reason");
  int npu = 0;
  int64_t macs = 0, npu_macs = 0;
  std::map<std::pair<std::string, std::string>, int> cpu_groups;  // (op, reason code) -> nodes
  for (const auto& p : ps) {
    const bool on_npu = p.unit == artifact_io::Unit::kNpu;
    npu += on_npu;
    macs += p.macs;
    npu_macs += on_npu ? p.macs : 0;
    if (!on_npu) ++cpu_groups[{std::string(OpName(p.node->op())), std::string(ReasonCodeName(p.code))}];
    s += fmt::format("{:<{}} {:<18} {:<4} {}\n", p.node->name(), w, OpName(p.node->op()),
                     artifact_io::UnitName(p.unit), p.reason);
  }
  s += fmt::format("{} node(s): {} on the NPU, {} on the CPU; {:.1f}% of {:.1f} M MACs on the NPU\n", ps.size(), npu,
                   ps.size() - npu, macs ? 100.0 * static_cast<double>(npu_macs) / static_cast<double>(macs) : 100.0,
                   static_cast<double>(macs) * 1e-6);
  if (!cpu_groups.empty()) {  // the largest groups first: what to look at to move work to the NPU
    std::vector<std::pair<int, std::string>> groups;
    for (const auto& [key, n] : cpu_groups) groups.push_back({n, fmt::format("{} {} ({})", n, key.first, key.second)});
    std::stable_sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    s += "on the CPU:";
    for (size_t i = 0; i < groups.size(); ++i) s += (i ? ", " : " ") + groups[i].second;
    s += "\n";
  }
  const DataMovementSummary m = SummarizeDataMovement(ps);
  if (m.views + m.npu_copies + m.cpu_moves > 0)
    s += fmt::format("data movement: {} view(s) of DRAM tensors, {} strided DMA copies on the NPU ({} B; {} of them "
                     "transposes that remain real data movement, {} with one-byte rows), {} on the CPU ({} "
                     "transposes)\n",
                     m.views, m.npu_copies, m.npu_bytes, m.npu_transposes, m.element_rows, m.cpu_moves,
                     m.cpu_transposes);
  return s;
}

DataMovementSummary SummarizeDataMovement(const std::vector<NodePlacement>& ps) {
  DataMovementSummary m;
  for (const auto& p : ps) {
    const bool move = lower::IsMoveNode(*p.node) || IsRowMajorView(*p.node);
    if (!move) continue;
    const bool transpose = p.node->op() == OpKind::kTranspose;
    if (p.unit != artifact_io::Unit::kNpu) {
      ++m.cpu_moves;
      m.cpu_transposes += transpose;
    } else if (IsDramView(*p.node)) {
      ++m.views;
    } else {
      ++m.npu_copies;
      m.npu_bytes += p.moved_bytes;
      m.npu_transposes += transpose;
      m.element_rows += p.element_rows;
    }
  }
  return m;
}

}  // namespace edgec::partition
