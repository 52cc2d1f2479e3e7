#include "quant/pipeline.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

#include "driver/load.h"
#include "driver/session.h"
#include "quant/fold_qdq.h"
#include "quant/int_resize.h"
#include "quant/points.h"
#include "runtime/reference_executor.h"
#include "support/progress.h"

namespace edgec::quant {

Status PrepareForQuantization(Graph& g) {
  passes::PassContext ctx;
  RETURN_IF_ERROR(driver::Optimize(g, 2, "", ctx));
  passes::PassContext lower;
  return driver::Optimize(g, 0, "unfuse,convtranspose-subpixel,integer-forms,eliminate-dead", lower);
}

void ShareScalesThroughValueMovingOps(const Graph& g, ScaleTable& table) {
  auto& acts = table.activations;
  // Groups of points that must share parameters, joined with a union-find: a Concat's inputs
  // and output (so that it concatenates int8 values), and the output of an op that keeps its
  // input's values with the nearest point up its chain (Reshape -> Transpose -> Reshape ->
  // Slice). Chains link groups: in shufflenet_v2 a Concat's output is shuffled, split, and
  // half of it concatenated again, all one group, so no requantize is left between them. A
  // group's range is the union of its members' calibrated ranges, except the outputs of
  // value-keeping ops, which follow (their values are their source's, and their own clipped
  // range could only widen it).
  std::map<std::string, std::string> parent;
  std::function<std::string(const std::string&)> root = [&](const std::string& v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v) return v;
    return it->second = root(it->second);
  };
  auto join = [&](const std::string& a, const std::string& b) {
    const std::string ra = root(a), rb = root(b);
    parent.emplace(ra, ra);
    parent.emplace(rb, rb);
    if (ra != rb) parent[rb] = ra;
  };
  std::set<std::string> in_group, follows;
  auto keeps = [](const Node* n) {
    return HasTrait(n->op(), op_trait::kKeepsValues) || KeepsQuantization(*n) || PadKeepsQuantization(*n);
  };
  for (const Node* n : g.nodes()) {
    if (!n->output(0) || !acts.count(n->output(0)->name())) continue;
    const std::string out = n->output(0)->name();
    if (n->op() == OpKind::kConcat) {
      bool all = true;
      for (const Value* v : n->inputs()) all &= v && acts.count(v->name());
      if (!all) continue;
      in_group.insert(out);
      for (const Value* v : n->inputs()) {
        join(out, v->name());
        in_group.insert(v->name());
      }
    } else if (keeps(n) && n->num_outputs() >= 1 && n->input(0)) {
      const Value* src = n->input(0);
      while (!acts.count(src->name()) && src->producer() && keeps(src->producer()) &&
             src->producer()->input(0))
        src = src->producer()->input(0);
      if (!acts.count(src->name())) continue;
      in_group.insert(src->name());
      for (const Value* y : n->outputs()) {  // a Split's every output
        if (!y || !acts.count(y->name())) continue;
        join(src->name(), y->name());
        in_group.insert(y->name());
        follows.insert(y->name());
      }
    }
  }
  std::map<std::string, Range> group_range;
  for (const std::string& v : in_group) {
    if (follows.count(v)) continue;
    const ActivationScale& a = acts[v];
    auto [it, fresh] = group_range.emplace(root(v), Range{a.lo, a.hi});
    if (!fresh) it->second = {std::min(it->second.lo, a.lo), std::max(it->second.hi, a.hi)};
  }
  for (const std::string& v : in_group) {
    auto it = group_range.find(root(v));
    if (it == group_range.end()) continue;  // cannot happen: every chain starts at a point that counts
    const ScaleZeroPoint p = ParamsFromRange(it->second, table.dtype, table.symmetric);
    ActivationScale& a = acts[v];
    a.scale = p.scale;
    a.zero_point = p.zero_point;
    a.lo = it->second.lo;  // min and max stay what was observed
    a.hi = it->second.hi;
  }
}

StatusOr<ScaleTable> Calibrate(const Graph& prepared, const std::vector<Sample>& samples,
                               const CalibrationOptions& calib, const QuantizeOptions& rewrite,
                               bool progress) {
  const std::vector<std::string> points = QuantizationPoints(prepared, rewrite);
  ASSIGN_OR_RETURN(auto observed, ObserveActivations(prepared, points, samples, progress));
  ScaleTable table = ChooseScales(observed, calib, static_cast<int64_t>(samples.size()));
  ShareScalesThroughValueMovingOps(prepared, table);
  return table;
}

StatusOr<Graph> Int8Executable(const Graph& qdq) {
  Graph g = qdq.Clone();
  // A QDQ file is standard ONNX: the fusions whose ops have integer forms run again first, so
  // that a decomposed LayerNorm or GroupNorm between a DQ and a Q folds as one island.
  passes::PassContext ctx;
  RETURN_IF_ERROR(driver::Optimize(g, 0, "fuse-layernorm,fuse-groupnorm", ctx));
  ASSIGN_OR_RETURN(FoldSummary s, FoldQdqToInteger(g));
  (void)s;
  // Attention's [1, H, S, d] tensors as 3-d: the NPU keeps them row-major (passes/attention_3d.cc).
  // A split by Gathers of a reshaped tensor as Slices (passes/gather_as_slice.cc).
  // 1-d convolutions and pools as 2-d with H = 1: the NPU lowers them in 2-d only
  // (passes/lift_1d_windows.cc).
  RETURN_IF_ERROR(driver::Optimize(g, 0, "attention-3d,gather-as-slice,lift-1d-windows", ctx));
  return g;
}

StatusOr<FoldSummary> FoldQdqForCpu(Graph& g, const FoldOptions& options) {
  ASSIGN_OR_RETURN(FoldSummary s, FoldQdqToInteger(g, options));
  passes::PassContext ctx;
  RETURN_IF_ERROR(driver::Optimize(g, 0, "lift-1d-windows", ctx));
  return s;
}

namespace {

// Runs a graph many times: the CPU plan when it builds, else the reference executor.
class Runner {
 public:
  explicit Runner(const Graph& g) : g_(g) {
    SessionOptions so;
    so.opt_level = 0;
    so.plan.threads = 1;
    auto s = Session::FromGraph(g.Clone(), "compare", so);
    if (s.ok()) session_ = std::move(s).value();
  }
  StatusOr<std::vector<Tensor>> Run(const Sample& in) {
    if (session_) {
      std::vector<Tensor> out;
      Status st = session_->Run(in, &out);
      if (st.ok()) {
        for (Tensor& t : out) t = t.Clone();  // the plan reuses its buffers
        return out;
      }
      session_.reset();
    }
    return ReferenceExecutor(g_).Run(in);
  }

 private:
  const Graph& g_;
  std::unique_ptr<Session> session_;
};

}  // namespace

void Accumulate(const Tensor& want, const Tensor& got, OutputAgreement& a, double& sig, double& err,
                int64_t& rows, int64_t& top1_hits) {
  const std::vector<double> w = want.ToDoubleVector(), q = got.ToDoubleVector();
  double dot = 0, ww = 0, qq = 0;
  for (size_t i = 0; i < w.size(); ++i) {
    dot += w[i] * q[i], ww += w[i] * w[i], qq += q[i] * q[i];
    const double e = w[i] - q[i];
    sig += w[i] * w[i], err += e * e;
    a.max_abs = std::max(a.max_abs, std::abs(e));
  }
  const double cos = ww > 0 && qq > 0 ? dot / std::sqrt(ww * qq) : (ww == qq ? 1.0 : 0.0);
  a.min_cosine = std::min(a.min_cosine, cos);
  a.mean_cosine += cos;
  const int64_t cols = want.rank() ? want.dim(want.rank() - 1) : 1;
  for (int64_t r = 0; cols > 0 && r < want.numel() / cols; ++r) {
    int64_t bw = 0, bq = 0;
    for (int64_t c = 1; c < cols; ++c) {
      if (w[r * cols + c] > w[r * cols + bw]) bw = c;
      if (q[r * cols + c] > q[r * cols + bq]) bq = c;
    }
    ++rows;
    top1_hits += bw == bq;
  }
}

StatusOr<Agreement> CompareOnSamples(const Graph& reference, const Graph& candidate,
                                     const std::vector<Sample>& samples, bool progress) {
  Runner ref(reference), cand(candidate);
  const size_t nout = reference.outputs().size();
  if (candidate.outputs().size() != nout)
    return InvalidArgument("the graphs have {} and {} outputs", nout, candidate.outputs().size());
  Agreement result;
  result.outputs.resize(nout);
  std::vector<double> sig(nout, 0), err(nout, 0);
  std::vector<int64_t> rows(nout, 0), hits(nout, 0);
  for (size_t i = 0; i < nout; ++i) {
    result.outputs[i].output = reference.outputs()[i]->name();
    result.outputs[i].mean_cosine = 0;
  }
  Progress bar("evaluating", static_cast<int64_t>(samples.size()), progress ? stderr : nullptr);
  for (const Sample& s : samples) {
    ASSIGN_OR_RETURN(std::vector<Tensor> want, ref.Run(s));
    ASSIGN_OR_RETURN(std::vector<Tensor> got, cand.Run(s));
    for (size_t i = 0; i < nout; ++i) {
      if (want[i].dims() != got[i].dims())
        return InvalidArgument("output '{}': {} vs {}", result.outputs[i].output, want[i].TypeString(),
                               got[i].TypeString());
      Accumulate(want[i], got[i], result.outputs[i], sig[i], err[i], rows[i], hits[i]);
    }
    ++result.samples;
    bar.Step();
  }
  bar.Done();
  for (size_t i = 0; i < nout; ++i) {
    OutputAgreement& a = result.outputs[i];
    a.mean_cosine = result.samples ? a.mean_cosine / result.samples : 1;
    a.top1 = rows[i] ? static_cast<double>(hits[i]) / rows[i] : 1;
    a.sqnr_db = err[i] > 0 ? 10 * std::log10(sig[i] / err[i]) : INFINITY;
  }
  return result;
}

StatusOr<OutputAgreement> QuantizedAgreement(const Graph& prepared, const ScaleTable& scales,
                                             const QuantizeOptions& o, const std::vector<Sample>& samples) {
  Graph q = prepared.Clone();
  ASSIGN_OR_RETURN(RewriteSummary s, RewriteToQdq(q, scales, o));
  (void)s;
  ASSIGN_OR_RETURN(Graph int8, Int8Executable(q));
  ASSIGN_OR_RETURN(Agreement a, CompareOnSamples(prepared, int8, samples, false));
  return a.outputs.at(0);
}

StatusOr<std::vector<LayerSensitivity>> Sensitivity(const Graph& prepared, const ScaleTable& scales,
                                                    const QuantizeOptions& o,
                                                    const std::vector<Sample>& samples, bool progress) {
  const QuantizablePlan plan = PlanQuantization(prepared, o);
  std::vector<LayerSensitivity> out;
  Progress bar("sensitivity", static_cast<int64_t>(plan.nodes.size()), progress ? stderr : nullptr);
  for (const Node* n : plan.nodes) {
    QuantizeOptions alone = o;
    for (const Node* other : plan.nodes)
      if (other != n) alone.keep_float.insert(other->name());
    ASSIGN_OR_RETURN(OutputAgreement a, QuantizedAgreement(prepared, scales, alone, samples));
    out.push_back({n->name(), n->Label(), a.sqnr_db, a.mean_cosine});
    bar.Step();
  }
  bar.Done();
  std::stable_sort(out.begin(), out.end(),
                   [](const LayerSensitivity& a, const LayerSensitivity& b) { return a.sqnr_db < b.sqnr_db; });
  return out;
}

StatusOr<BudgetResult> FitAccuracyBudget(const Graph& prepared, const ScaleTable& scales,
                                         const QuantizeOptions& o, const std::vector<LayerSensitivity>& ranked,
                                         const std::vector<Sample>& samples, double min_cosine) {
  BudgetResult r;
  QuantizeOptions current = o;
  for (size_t k = 0;; ++k) {
    ASSIGN_OR_RETURN(OutputAgreement a, QuantizedAgreement(prepared, scales, current, samples));
    r.mean_cosine = a.mean_cosine;
    if (a.mean_cosine >= min_cosine) {
      r.met = true;
      return r;
    }
    if (k >= ranked.size()) return r;
    current.keep_float.insert(ranked[k].node);
    r.kept_float.push_back(ranked[k]);
  }
}

}  // namespace edgec::quant
