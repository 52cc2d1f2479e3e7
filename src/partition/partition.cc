#include "partition/partition.h"

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
  if (op == OpKind::kQLinearLayerNormalization) return "LayerNormalization";
  if (op == OpKind::kQLinearGroupNormalization) return "GroupNormalization";
  if (op == OpKind::kQLinearSoftmax) return "Softmax";
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
  if (IsRowMajorView(n)) return true;
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

std::string NpuSupport(const Node& n, const npu::Target& t) {
  const std::string op = TargetOpName(n.op());
  if (!t.SupportsOp(op)) return "unsupported op " + op;
  auto dtype_ok = [&](const Value* v) { return t.SupportsDType(DTypeName(v->type.dtype)); };
  for (const Value* v : n.inputs())
    if (IsData(v) && !dtype_ok(v)) return fmt::format("dtype {} not supported", DTypeName(v->type.dtype));
  for (const Value* v : n.outputs())
    if (v && !dtype_ok(v)) return fmt::format("dtype {} not supported", DTypeName(v->type.dtype));
  for (const Value* v : n.inputs())
    if (IsData(v) && !v->type.IsStatic()) return "dynamic shape";
  for (const Value* v : n.outputs())
    if (v && !v->type.IsStatic()) return "dynamic shape";
  if (lower::IsVectorNode(n)) {
    auto v = lower::VectorLayerOf(n);
    return v.ok() ? "" : v.status().message();
  }
  auto q = lower::QuantizedLayerOf(n);
  if (!q.ok()) return q.status().message();
  return "";
}

StatusOr<std::vector<NodePlacement>> Partition(const Graph& g, const npu::Target& t, const PartitionOptions& o) {
  std::vector<NodePlacement> out;
  std::set<const Node*> legal;
  for (const Node* n : g.nodes()) {
    NodePlacement p;
    p.node = n;
    p.macs = lower::MacsOf(*n);
    p.reason = NpuSupport(*n, t);
    const Node* from = n->input(0) ? n->input(0)->producer() : nullptr;
    if (IsDramView(*n) && from && legal.count(from)) {
      p.reason.clear();
      p.plan = "view of the DRAM tensor (no work, no copy)";
      p.legal = true;
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
  const double bw = t.dram.bandwidth_bytes_per_s;
  for (NodePlacement& p : out) {
    if (!p.legal) continue;
    const Node* n = p.node;
    for (const Value* v : n->inputs())
      if (IsData(v) && (!v->producer() || !legal.count(v->producer()))) p.transfer_bytes += Bytes(v);
    for (const Value* v : n->outputs()) {
      bool cpu_use = v->is_graph_output();
      for (const auto& u : v->uses()) cpu_use |= !legal.count(u.node);
      if (cpu_use) p.transfer_bytes += Bytes(v);
    }
    p.npu_s = p.npu_cycles / t.clock_hz;
    p.transfer_s = p.transfer_bytes / bw + p.transfer_bytes / o.cpu.copy_bytes_per_s;
    p.cpu_s = CpuSeconds(*n, o.cpu);
    const double npu_total = p.npu_s + p.transfer_s;
    if (!o.cost_rule || npu_total <= p.cpu_s) {
      p.unit = artifact_io::Unit::kNpu;
      p.reason = fmt::format("npu {:.4f} ms + transfers {:.4f} ms <= cpu {:.4f} ms; {}", p.npu_s * 1e3,
                             p.transfer_s * 1e3, p.cpu_s * 1e3, p.plan);
    } else {
      p.reason = fmt::format("cost: cpu {:.4f} ms < npu {:.4f} ms + transfers {:.4f} ms", p.cpu_s * 1e3,
                             p.npu_s * 1e3, p.transfer_s * 1e3);
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
  for (const auto& p : ps) {
    npu += p.unit == artifact_io::Unit::kNpu;
    s += fmt::format("{:<{}} {:<18} {:<4} {}\n", p.node->name(), w, OpName(p.node->op()),
                     artifact_io::UnitName(p.unit), p.reason);
  }
  s += fmt::format("{} node(s): {} on the NPU, {} on the CPU\n", ps.size(), npu, ps.size() - npu);
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
