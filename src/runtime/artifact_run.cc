#include "runtime/artifact_run.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <unordered_map>

#include <fmt/ranges.h>

#include "kernels/ref/kernel.h"
#include "npu/isa.h"
#include "lower/npu_layers.h"
#include "partition/partition.h"
#include "quant/fixed_point.h"
#include "runtime/cpu_cache.h"
#include "runtime/graph_io.h"
#include "runtime/reference_executor.h"

namespace edgec {

namespace {

// Copies a tensor of `dims` between the CPU's form (NCHW, u8 or i8, or f32 at the model's
// float boundary) and the NPU's (NHWC, i8; u8 values flipped by 0x80; f32 as it is, in the
// CPU's order: the boundary layers read and write it planar, lower/npu_layers.cc):
// NCHW -> NHWC when `to_npu`, back otherwise. Other ranks keep their order.
void Relayout(const uint8_t* s, uint8_t* d, const Dims& dims, DType dtype, bool to_npu) {
  const uint8_t flip = dtype == DType::kU8 ? 0x80 : 0;
  const int64_t e = static_cast<int64_t>(DTypeSize(dtype));
  int64_t numel = 1;
  for (int64_t v : dims) numel *= v;
  if (dims.size() != 4 || dtype == DType::kF32) {
    for (int64_t i = 0; i < numel * e; ++i) d[i] = s[i] ^ flip;
    return;
  }
  const int64_t N = dims[0], C = dims[1], HW = dims[2] * dims[3];
  for (int64_t b = 0; b < N; ++b) {
    for (int64_t c = 0; c < C; ++c) {
      for (int64_t p = 0; p < HW; ++p) {
        const int64_t nchw = (b * C + c) * HW + p, nhwc = (b * HW + p) * C + c;
        const int64_t from = (to_npu ? nchw : nhwc) * e, to = (to_npu ? nhwc : nchw) * e;
        for (int64_t k = 0; k < e; ++k) d[to + k] = s[from + k] ^ flip;
      }
    }
  }
}

}  // namespace

std::vector<uint8_t> ToNpu(const Tensor& x) {
  std::vector<uint8_t> out(x.nbytes());
  Relayout(static_cast<const uint8_t*>(x.raw()), out.data(), x.dims(), x.dtype(), true);
  return out;
}

StatusOr<Tensor> FromNpu(const uint8_t* s, const TensorType& type) {
  ASSIGN_OR_RETURN(Tensor y, Tensor::Create(type.dtype, type.dims));
  Relayout(s, static_cast<uint8_t*>(y.raw()), type.dims, type.dtype, false);
  return y;
}

namespace {

using artifact_io::Unit;

int64_t Bytes(const Tensor& t) { return static_cast<int64_t>(t.nbytes()); }

// An f32 graph input or output in an NPU region (the float boundary): the NPU reads or writes
// it in the caller's order (Relayout), so the caller's buffer is the region and no CPU copy
// is made; what it costs is the NPU's DMA and the flush / invalidate of its lines
// (tests/lower/npu_float_boundary_test.cc: CallerBufferIsTheRegion).
bool InPlace(const Value* v) {
  // ... and an int64 index list the caller passes (a gather's token ids), read as it is.
  if (v && v->type.dtype == DType::kI64 && v->type.rank() != 4 && v->is_graph_input()) return true;
  return v && v->type.dtype == DType::kF32 && (v->is_graph_input() || v->is_graph_output());
}

// The CPU's int8 form of an NPU node, on the node's own tensors (NCHW, u8 or i8): integer
// conv/matmul (int32) + bias + fixed-point requantization; the add and the global average pool
// in their fixed-point modes (as the VEC add and avgpool); max pooling as it is (exact).
StatusOr<std::vector<Tensor>> CpuInt8(const Node& n, const std::vector<const Tensor*>& in) {
  lower::QuantizedLayer q;
  if (lower::IsVectorNode(n)) {
    ASSIGN_OR_RETURN(lower::VectorLayer v, lower::VectorLayerOf(n));
    if (v.kind == lower::VectorLayer::Kind::kMove || v.kind == lower::VectorLayer::Kind::kGather)
      return EvaluateNode(n, in);  // moves bytes only: exact
    if (v.kind != lower::VectorLayer::Kind::kDepthwise) {  // the reference kernel, fixed point
      Attributes attrs = n.attrs;
      if (n.op() != OpKind::kMaxPool) attrs.Set("edgec_requant", std::string("fixed_point"));
      ASSIGN_OR_RETURN(Tensor y, Tensor::Create(n.output(0)->type.dtype, n.output(0)->type.dims));
      std::vector<Tensor> outs;
      outs.push_back(std::move(y));
      ref::KernelContext k{n.op(), attrs, n.Label(), in, outs};
      RETURN_IF_ERROR(ref::GetKernel(n.op())(k));
      return outs;
    }
    // Depthwise: the same integer conv, with the depthwise layer's bias and requantization.
    const npu::DepthwiseLayer& d = v.depthwise;
    q.layer.out_channels = d.out_channels();
    q.layer.bias = d.bias;
    q.layer.requant = d.requant;
    q.layer.y_zero_point = d.y_zero_point;
    q.layer.act_min = d.act_min;
    q.layer.act_max = d.act_max;
    q.output_u8 = v.output_u8;
  } else {
    ASSIGN_OR_RETURN(q, lower::QuantizedLayerOf(n));
  }
  const TensorType& yt = n.output(0)->type;
  ASSIGN_OR_RETURN(Tensor acc, Tensor::Create(DType::kI32, yt.dims));
  std::vector<Tensor> outs;
  outs.push_back(std::move(acc));
  const bool conv = n.op() == OpKind::kQLinearConv;
  const OpKind op = conv ? OpKind::kConvInteger : OpKind::kMatMulInteger;
  std::vector<const Tensor*> kin = {in[0], in[3], in[2], in.size() > 5 ? in[5] : nullptr};
  ref::KernelContext k{op, n.attrs, n.Label(), kin, outs};
  RETURN_IF_ERROR(ref::GetKernel(op)(k));
  const npu::ConvLayer& l = q.layer;
  ASSIGN_OR_RETURN(Tensor y, Tensor::Create(yt.dtype, yt.dims));
  const int32_t* a = outs[0].data<int32_t>();
  const int64_t N = l.out_channels;
  const int64_t plane = conv ? yt.dims[2] * yt.dims[3] : 1;
  // The layer's zero point and clamp are in the NPU's i8 terms.
  const int32_t back = q.output_u8 ? 128 : 0;
  const int32_t zy = l.y_zero_point + back, lo = l.act_min + back, hi = l.act_max + back;
  for (int64_t i = 0; i < y.numel(); ++i) {
    const int64_t oc = conv ? (i / plane) % N : i % N;
    const auto& rq = l.requant.size() == 1 ? l.requant[0] : l.requant[oc];
    const int32_t v = quant::Requantize(a[i] + l.bias[oc], rq, zy, lo, hi);
    if (q.output_u8) y.data<uint8_t>()[i] = static_cast<uint8_t>(v);
    else y.data<int8_t>()[i] = static_cast<int8_t>(v);
  }
  std::vector<Tensor> result;
  result.push_back(std::move(y));
  return result;
}

const artifact_io::Region* RegionNamed(const artifact_io::NpuProgramData& d, const std::string& name) {
  for (const auto& r : d.regions)
    if (r.name == name) return &r;
  return nullptr;
}

// A CPU row's region shares (RunCpuSegment's, from its step's start), moved past the row's
// part before its step (`offset`, the segment's copies) and scaled to the row's time; threads
// numbered in order of first appearance, the caller first.
void AddThreadShares(const std::vector<CpuThreadShare>& shares, int64_t caller, double offset, double scale, LayerRun& lr,
                     ArtifactRunResult& r) {
  auto index_of = [&](int64_t tid) {
    if (r.cpu_thread_ids.empty()) r.cpu_thread_ids.push_back(caller);
    auto it = std::find(r.cpu_thread_ids.begin(), r.cpu_thread_ids.end(), tid);
    if (it != r.cpu_thread_ids.end()) return static_cast<int>(it - r.cpu_thread_ids.begin());
    r.cpu_thread_ids.push_back(tid);
    return static_cast<int>(r.cpu_thread_ids.size() - 1);
  };
  for (const CpuThreadShare& s : shares) {
    const double b = std::min((offset + s.begin_s) * scale, lr.seconds), e = std::min((offset + s.end_s) * scale, lr.seconds);
    lr.threads.push_back({index_of(s.tid), b, std::max(b, e)});
  }
}

}  // namespace

StatusOr<LoadedArtifact> LoadArtifact(const artifact_io::MappedArtifact& file) {
  LoadedArtifact a;
  a.file = &file;
  a.meta = file.Metadata();
  if (!file.graph_ir().empty()) {
    ASSIGN_OR_RETURN(a.graph, graph_io::DeserializeGraph(file.graph_ir(), file.path()));
  } else {
    ASSIGN_OR_RETURN(a.graph, graph_io::ImportOnnxGraph(file.graph_onnx(), file.path()));
  }
  auto t = npu::ParseTargetText(a.meta.target_json, file.path() + " (target)");
  if (!t.ok()) return t.status();
  a.target = *t;
  return a;
}

StatusOr<std::unique_ptr<ArtifactExecutor>> ArtifactExecutor::Create(const LoadedArtifact& a,
                                                                     const ArtifactRunOptions& options) {
  auto x = std::unique_ptr<ArtifactExecutor>(new ArtifactExecutor(a, options));
  for (size_t i = 0; i < a.meta.segments.size(); ++i)
    if (a.meta.segments[i].unit == Unit::kNpu)
      for (const auto& n : a.meta.segments[i].nodes) x->npu_segment_[n] = i;
  if (!options.fast_kernels) return x;
  PlanOptions po;
  po.threads = options.threads;
  po.tuning = options.tuning;
  auto cpu = BuildCpuSegments(a.graph, [&](const Node& n) { return !x->npu_segment_.count(n.name()); }, po);
  if (!cpu.ok()) return cpu.status().WithContext(a.file->path());
  x->cpu_ = std::move(*cpu);
  for (size_t i = 0; i < x->cpu_.size(); ++i)
    for (const Node* n : x->cpu_[i].nodes) x->cpu_segment_of_[n->name()] = static_cast<int>(i);
  return x;
}

Status ArtifactExecutor::BuildWholeCpu() {
  whole_graph_ = a_.graph.Clone();
  for (Node* n : whole_graph_.nodes()) {
    if (!npu_segment_.count(n->name()) || n->op() == OpKind::kMaxPool) continue;
    if (lower::IsVectorNode(*n)) {
      auto v = lower::VectorLayerOf(*n);
      if (v.ok() && (v->kind == lower::VectorLayer::Kind::kMove || v->kind == lower::VectorLayer::Kind::kGather)) continue;
    }
    if (n->op() == OpKind::kQLinearConv || n->op() == OpKind::kQLinearMatMul || lower::IsVectorNode(*n))
      n->attrs.Set("edgec_requant", std::string("fixed_point"));
  }
  PlanOptions po;
  po.threads = options_.threads;
  po.tuning = options_.tuning;
  auto cpu = BuildCpuSegments(whole_graph_, [](const Node&) { return true; }, po);
  if (!cpu.ok()) return cpu.status().WithContext(a_.file->path());
  whole_ = std::move(*cpu);
  for (size_t i = 0; i < whole_.size(); ++i)
    for (const Node* n : whole_[i].nodes) whole_segment_of_[n->name()] = static_cast<int>(i);
  return Status::Ok();
}

std::string ArtifactExecutor::CpuKernelOf(const std::string& node) const {
  auto it = cpu_segment_of_.find(node);
  return it == cpu_segment_of_.end() ? std::string() : CpuSegmentKernel(cpu_[it->second], node);
}

StatusOr<ArtifactRunResult> RunArtifact(const LoadedArtifact& a, ArtifactDevice device,
                                        const std::map<std::string, Tensor>& inputs, const ArtifactRunOptions& options) {
  ASSIGN_OR_RETURN(std::unique_ptr<ArtifactExecutor> x, ArtifactExecutor::Create(a, options));
  return x->Run(device, inputs);
}

StatusOr<ArtifactRunResult> ArtifactExecutor::Run(ArtifactDevice device, const std::map<std::string, Tensor>& inputs) {
  const LoadedArtifact& a = a_;
  const partition::CpuCost& cpu = options_.cpu;
  const std::unordered_map<std::string, size_t>& npu_segment = npu_segment_;
  const std::string& path = a.file->path();
  RETURN_IF_ERROR(CheckInputs(a.graph, inputs).WithContext(path));
  const bool whole = device == ArtifactDevice::kCpu && options_.fast_kernels;
  if (whole && whole_.empty()) RETURN_IF_ERROR(BuildWholeCpu());
  std::vector<CpuSegment>& segments = whole ? whole_ : cpu_;
  const std::unordered_map<std::string, int>& segment_of = whole ? whole_segment_of_ : cpu_segment_of_;
  std::unordered_map<std::string, Tensor> env;
  std::unordered_map<std::string, std::vector<uint8_t>> in_dram;  // NHWC i8 values left in DRAM by the NPU
  for (auto& [name, t] : inputs) env[name] = t;
  ArtifactRunResult r;
  r.cpu_measured = options_.fast_kernels && options_.measure_cpu;
  if (!segments.empty()) r.cpu_threads = segments.front().plan->threads();
  // A CPU node's time: measured (measure_cpu with fast kernels) or the cost model.
  auto cpu_seconds = [&](const Node& n, double measured) {
    r.cpu_model_s += partition::CpuSeconds(n, cpu);
    const double s = r.cpu_measured ? measured : partition::CpuSeconds(n, cpu);
    r.cpu_s += s;
    return s;
  };
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  CpuSegmentTiming timing;  // of the CPU segment running now
  const npu::Target& t = a.target;
  const double bw = t.dram.bandwidth_bytes_per_s;
  // An NPU value read by the CPU (or a graph output) is copied out once.
  auto count_copy_out = [&](const Value* y, const Tensor& value, LayerRun& lr) {
    bool cpu_use = y->is_graph_output();
    for (const auto& u : y->uses()) cpu_use |= !npu_segment.count(u.node->name());
    if (!cpu_use) return;
    ++lr.copies;
    lr.copy_bytes += Bytes(value);
  };
  // A layer's copies between units: DRAM traffic plus the layout change on the CPU.
  auto settle_copies = [&](const LayerRun& lr) {
    const double s = lr.copy_bytes / bw + lr.copy_bytes / cpu.copy_bytes_per_s;
    r.copy_s += s;
    r.copies += lr.copies;
    r.copy_bytes += lr.copy_bytes;
    return s;
  };
  // Values by name (the segment's boundary values).
  std::unordered_map<std::string, const Value*> value_of;
  for (const Value* v : a.graph.inputs()) value_of[v->name()] = v;
  for (const Node* n : a.graph.nodes())
    for (const Value* v : n->outputs())
      if (v) value_of[v->name()] = v;
  auto cpu_reads = [&](const Value* y) {
    bool cpu = y->is_graph_output();
    for (const auto& u : y->uses()) cpu |= !npu_segment.count(u.node->name());
    return cpu;
  };
  // One NPU segment program, run whole when its first node comes up (npu-sim).
  struct SegmentRun {
    npu::SimResult sim;
    std::unordered_map<std::string, std::vector<int>> layer_of;  // node -> its layers (a cascade: one per stripe)
    int copies = 0;
    int64_t copy_bytes = 0;
    bool counted = false;  // its copies and totals went into the first node's row
  };
  std::unordered_map<size_t, SegmentRun> seg_runs;
  auto run_segment = [&](size_t si) -> Status {
    const artifact_io::Segment& s = a.meta.segments[si];
    const artifact_io::NpuProgramData& d = s.npu;
    SegmentRun sr;
    ASSIGN_OR_RETURN(npu::Program p, npu::DecodeProgram(d.instructions));
    p.dram_bytes = d.dram_bytes;
    p.cores_used = d.cores_used;
    p.semaphores = d.semaphores;
    p.task_names = d.task_names;
    const auto init = a.file->npu_dram_init(si);
    if (static_cast<int64_t>(init.size()) > d.dram_bytes)
      return InvalidArgument("{}: NPU segment {}: constants outside its DRAM image", path, si);
    std::vector<uint8_t> dram(d.dram_bytes, 0);
    std::memcpy(dram.data(), init.data(), init.size());
    CpuCache cache(&dram, t.cpu_cache.line_bytes, t.cpu_cache.coherent);
    auto region_of = [&](const std::string& name) -> StatusOr<const artifact_io::Region*> {
      const artifact_io::Region* r = RegionNamed(d, name);
      if (!r || r->addr < 0 || r->addr + r->bytes > d.dram_bytes)
        return InvalidArgument("{}: NPU segment {} has no DRAM region for '{}'", path, si, name);
      return r;
    };
    for (const std::string& name : s.inputs) {
      ASSIGN_OR_RETURN(const artifact_io::Region* reg, region_of(name));
      auto resident = in_dram.find(name);
      std::vector<uint8_t> staged;
      if (resident != in_dram.end()) {  // an earlier NPU segment's output: already in DRAM
        staged = resident->second;
        if (static_cast<int64_t>(staged.size()) != reg->bytes)
          return InvalidArgument("{}: input '{}' has {} bytes, the NPU region {}", path, name, staged.size(), reg->bytes);
        std::memcpy(dram.data() + reg->addr, staged.data(), staged.size());
        continue;
      }
      auto it = env.find(name);
      if (it == env.end()) return Internal("{}: NPU segment {}: input '{}' was not computed", path, si, name);
      staged = ToNpu(it->second);  // the CPU's copy: layout change and shift, through its cache
      if (static_cast<int64_t>(staged.size()) != reg->bytes)
        return InvalidArgument("{}: input '{}' has {} bytes, the NPU region {}", path, name, staged.size(), reg->bytes);
      cache.Write(reg->addr, staged.data(), reg->bytes);
      if (auto v = value_of.find(name); v != value_of.end() && InPlace(v->second)) continue;  // the caller's buffer: its flush is the hand-over's
      ++sr.copies;
      sr.copy_bytes += Bytes(it->second);
    }
    auto hand_over = [&](bool after) -> Status {
      for (const artifact_io::HandOver& h : s.hand_over) {
        if (h.after != after) continue;
        r.cache_s += h.cycles / t.clock_hz;
        ++r.cache_steps[static_cast<int>(h.kind)];
        if (h.kind == artifact_io::HandOverKind::kBarrier) continue;
        ASSIGN_OR_RETURN(const artifact_io::Region* reg, region_of(h.value));
        if (h.kind == artifact_io::HandOverKind::kFlush) cache.Flush(reg->addr, reg->bytes);
        else cache.Invalidate(reg->addr, reg->bytes);
      }
      return Status::Ok();
    };
    RETURN_IF_ERROR(hand_over(false));
    npu::SimOptions so;
    so.functional = true;
    so.dram = &dram;
    // Resident weights: the first task loads them into the SRAM the session keeps; a later
    // call finds them there and skips it (NpuSegmentTest.ResidentWeightsSkipTheirLoadOnTheSecondCall).
    int64_t resident = 0;
    for (const artifact_io::LayerSram& l : s.layer_plan) {
      resident += l.resident_weight_bytes;
      if (l.resident_weight_bytes > 0) r.resident_weight_layers.push_back(l.layer);
    }
    if (resident > 0) {
      so.sram = &sram_;
      r.resident_weight_bytes += resident;
      if (weights_loaded_.count(si)) {
        size_t end = 0;
        while (end < p.instrs.size() && p.instrs[end].op != npu::Opcode::kTaskEnd) ++end;
        if (end == p.instrs.size() || p.task_names.empty())
          return InvalidArgument("{}: NPU segment {}: resident weights without their task", path, si);
        p.instrs.erase(p.instrs.begin(), p.instrs.begin() + static_cast<std::ptrdiff_t>(end) + 1);
        p.task_names.erase(p.task_names.begin());
        for (npu::Instr& in : p.instrs)
          if (in.op == npu::Opcode::kTaskBegin) in.sem = std::max(0, in.sem - 1);
        r.resident_weight_skipped += resident;
      }
    }
    weights_loaded_.erase(si);
    auto sim = npu::Simulate(p, t, so);
    if (!sim.ok()) return sim.status().WithContext(fmt::format("{}: NPU segment {}", path, si));
    if (resident > 0) weights_loaded_.insert(si);
    RETURN_IF_ERROR(hand_over(true));
    sr.sim = std::move(*sim);
    for (size_t i = 0; i < p.layer_names.size(); ++i) {
      // A cascade's stripe layer is named "node [stripe s/S]": its statistics are its node's.
      const std::string& ln = p.layer_names[i];
      const size_t at = ln.rfind(" [stripe ");
      sr.layer_of[at != std::string::npos && ln.back() == ']' ? ln.substr(0, at) : ln].push_back(static_cast<int>(i));
    }
    for (const std::string& name : s.outputs) {
      ASSIGN_OR_RETURN(const artifact_io::Region* reg, region_of(name));
      auto vit = value_of.find(name);
      if (vit == value_of.end()) return InvalidArgument("{}: NPU segment {}: unknown output '{}'", path, si, name);
      const Value* y = vit->second;
      std::vector<uint8_t> yb(reg->bytes);
      const bool cpu = cpu_reads(y);
      if (cpu) cache.Read(reg->addr, yb.data(), reg->bytes);  // the CPU reads through its cache
      else std::memcpy(yb.data(), dram.data() + reg->addr, reg->bytes);
      ASSIGN_OR_RETURN(Tensor yt, FromNpu(yb.data(), y->type));
      if (cpu && !InPlace(y)) {
        ++sr.copies;
        sr.copy_bytes += Bytes(yt);
      }
      in_dram[name] = std::move(yb);
      env[name] = std::move(yt);
    }
    r.npu_total.Add(sr.sim.total);
    r.npu_s += sr.sim.total.cycles / t.clock_hz;
    r.npu_const_bytes += static_cast<int64_t>(init.size());
    for (const std::string& name : s.inputs)
      if (auto reg = RegionNamed(d, name)) r.npu_io_bytes += reg->bytes;
    for (const std::string& name : s.outputs)
      if (auto reg = RegionNamed(d, name)) r.npu_io_bytes += reg->bytes;
    seg_runs[si] = std::move(sr);
    return Status::Ok();
  };
  for (const Node* n : a.graph.nodes()) {
    if (auto seg = npu_segment.find(n->name()); seg != npu_segment.end() && device == ArtifactDevice::kNpuSim &&
                                                 !a.meta.segments[seg->second].npu.instructions.empty()) {
      if (!seg_runs.count(seg->second)) RETURN_IF_ERROR(run_segment(seg->second));
      SegmentRun& sr = seg_runs[seg->second];
      LayerRun lr;
      lr.node = n->name();
      lr.op = std::string(OpName(n->op()));
      lr.macs = lower::MacsOf(*n);
      lr.unit = Unit::kNpu;
      lr.simulated = true;
      // Each stripe's cycles go to its node (NpuCascadeTest.StripeCyclesFoldIntoTheirNodeRow).
      if (auto li = sr.layer_of.find(n->name()); li != sr.layer_of.end()) {
        bool first = true;
        for (int k : li->second) {
          if (k >= static_cast<int>(sr.sim.layers.size())) continue;
          lr.stats.Add(sr.sim.layers[k].stats);
          lr.attributed_s += sr.sim.layers[k].attributed / t.clock_hz;
          lr.start_cycle = first ? sr.sim.layers[k].start : std::min(lr.start_cycle, sr.sim.layers[k].start);
          first = false;
        }
      }
      if (!sr.counted) {  // the segment's copies on its first row
        sr.counted = true;
        lr.copies = sr.copies;
        lr.copy_bytes = sr.copy_bytes;
      }
      lr.kernel = "npu-sim";
      lr.seconds = lr.stats.cycles / t.clock_hz + settle_copies(lr);
      lr.attributed_s += lr.seconds - lr.stats.cycles / t.clock_hz;  // its copies
      r.layers.push_back(std::move(lr));
      continue;
    }
    if (auto cs = segment_of.find(n->name()); cs != segment_of.end()) {
      CpuSegment& seg = segments[cs->second];
      LayerRun lr;
      lr.node = n->name();
      lr.op = std::string(OpName(n->op()));
      lr.macs = lower::MacsOf(*n);
      lr.kernel = CpuSegmentKernel(seg, n->name());
      double measured = 0;
      if (seg.nodes.front()->name() == n->name()) {  // the whole segment runs now; its copies go on this row
        timing.record_threads = options_.record_threads;
        RETURN_IF_ERROR(RunCpuSegment(seg, env, &timing).WithContext(path));
        double steps = 0;
        for (const auto& [name, sec] : timing.node_seconds) steps += sec;
        measured = std::max(0.0, timing.seconds - steps);
      }
      const double before_step = measured;  // the segment's copies, on its first row
      if (auto it = timing.node_seconds.find(n->name()); it != timing.node_seconds.end()) measured += it->second;
      lr.seconds = cpu_seconds(*n, measured);
      if (auto it = timing.node_threads.find(n->name()); it != timing.node_threads.end() && measured > 0)
        AddThreadShares(it->second, timing.caller, before_step, lr.seconds / measured, lr, r);
      r.layers.push_back(std::move(lr));
      continue;
    }
    std::vector<const Tensor*> in;
    for (const Value* v : n->inputs()) {
      if (!v) {
        in.push_back(nullptr);
      } else if (v->is_constant()) {
        in.push_back(&v->constant());
      } else {
        auto it = env.find(v->name());
        if (it == env.end()) return Internal("{}: {}: input '{}' was not computed", path, n->Label(), v->name());
        in.push_back(&it->second);
      }
    }
    LayerRun lr;
    lr.node = n->name();
    lr.op = std::string(OpName(n->op()));
    lr.macs = lower::MacsOf(*n);
    auto seg = npu_segment.find(n->name());
    std::vector<Tensor> outs;
    if (seg != npu_segment.end()) lr.unit = Unit::kNpu;
    const bool view = seg != npu_segment.end() && a.meta.segments[seg->second].npu.instructions.empty();
    const auto t0 = Clock::now();
    if (view) {
      // A view of an NPU value: the same DRAM bytes under the output's name, no work.
      auto o = EvaluateNode(*n, in);
      if (!o.ok()) return o.status().WithContext(path);
      outs = std::move(*o);
      lr.simulated = device == ArtifactDevice::kNpuSim;
      lr.kernel = "npu view";
      auto resident = in_dram.find(n->input(0)->name());
      if (lr.simulated && resident != in_dram.end()) {
        in_dram[n->output(0)->name()] = resident->second;
      } else if (lr.simulated) {  // its producer ran on the CPU after all
        in_dram[n->output(0)->name()] = ToNpu(outs[0]);
        ++lr.copies;
        lr.copy_bytes += Bytes(outs[0]);
      }
      if (lr.simulated) {
        count_copy_out(n->output(0), outs[0], lr);
        lr.seconds = settle_copies(lr);
      } else {
        lr.unit = Unit::kCpu;
        lr.kernel = "reference (view)";
        lr.seconds = cpu_seconds(*n, since(t0));
      }
    } else if (seg != npu_segment.end()) {
      auto y = CpuInt8(*n, in);
      if (!y.ok()) return y.status().WithContext(path);
      outs = std::move(*y);
      lr.unit = Unit::kCpu;
      lr.kernel = "int8 reference (the NPU's arithmetic)";
      lr.seconds = cpu_seconds(*n, since(t0));
    } else {
      auto o = EvaluateNode(*n, in);
      if (!o.ok()) return o.status().WithContext(path);
      outs = std::move(*o);
      lr.kernel = "reference";
      lr.seconds = cpu_seconds(*n, since(t0));
    }
    for (int i = 0; i < n->num_outputs(); ++i)
      if (n->output(i)) env[n->output(i)->name()] = std::move(outs[i]);
    lr.attributed_s = lr.seconds;  // one CPU node at a time
    r.layers.push_back(std::move(lr));
  }
  for (const Value* v : a.graph.outputs()) {
    auto it = env.find(v->name());
    if (it == env.end()) return Internal("{}: output '{}' was not computed", path, v->name());
    r.output_names.push_back(v->name());
    r.outputs.push_back(it->second);
  }
  return r;
}

}  // namespace edgec
