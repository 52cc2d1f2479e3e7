// fold-pad: a constant Pad of the spatial dims whose fill is what a window op pads with anyway
// becomes that op's own padding. TensorFlow-converted models and torch's F.pad write "same"
// padding as an explicit Pad before the Conv; as the Conv's pads it costs nothing (the CPU
// kernels and the NPU's padding on load fill the border as they read), as a node it is a copy
// of the whole tensor and a fallback reason.
//
// Folds, per reader of the Pad's output (the Pad stays while another reader needs it):
//   - Conv (auto_pad NOTSET or VALID): a pad of 0;
//   - ConvInteger, QLinearConv: a pad equal to the input's zero point (their padding value);
//   - AveragePool with count_include_pad = 1 and ceil_mode = 0: a pad of 0 (the padded zeros
//     are counted either way; with ceil_mode a last window past the pads would differ).
// The Pad must be mode constant with constant pads (its `axes` too, if any), none on the batch
// and channel dims, none negative (a crop), and its fill a constant scalar (absent: 0).
//
// Before:  %p = Pad(%x, [0, 0, 1, 1, 0, 0, 2, 2]); %y = Conv(%p, %w) {pads = [0, 0, 0, 0]}
// After:   %y = Conv(%x, %w) {pads = [1, 1, 2, 2]}
// Guarded by tests/passes/fold_pad_test.cc (reference outputs before == after).
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "support/status.h"

namespace edgec::passes {
namespace {

// The Pad's spatial pads as a window op's `pads` ([begins..., ends...] over rank - 2 dims)
// and its fill, or nullopt with why.
struct SpatialPad {
  std::vector<int64_t> pads;
  double fill = 0;
};

std::optional<SpatialPad> ReadPad(const Node& pad, std::string* why) {
  if (pad.attrs.GetString("mode", "constant") != "constant") return *why = "not a constant pad", std::nullopt;
  const Value* x = pad.input(0);
  if (!x || !x->type.rank_known || x->type.rank() < 3) return *why = "input rank unknown or < 3", std::nullopt;
  const int rank = x->type.rank();
  const Tensor* pt = ConstantOf(pad.input(1));
  if (!pt) return *why = "pads are computed", std::nullopt;
  const std::vector<int64_t> given = pt->ToInt64Vector();
  std::vector<int64_t> axes;
  if (pad.num_inputs() > 3 && pad.input(3)) {
    const Tensor* at = ConstantOf(pad.input(3));
    if (!at) return *why = "axes are computed", std::nullopt;
    axes = at->ToInt64Vector();
  } else {
    for (int i = 0; i < rank; ++i) axes.push_back(i);
  }
  if (given.size() != 2 * axes.size()) return *why = "pads do not match the axes", std::nullopt;
  std::vector<int64_t> full(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (a < 0 || a >= rank) return *why = "an axis out of range", std::nullopt;
    full[a] = given[i];
    full[a + rank] = given[i + axes.size()];
  }
  for (int64_t p : full)
    if (p < 0) return *why = "a negative pad (a crop)", std::nullopt;
  if (full[0] || full[1] || full[rank] || full[rank + 1]) return *why = "pads the batch or channel dim", std::nullopt;
  SpatialPad s;
  for (int e = 0; e < 2; ++e)
    for (int i = 2; i < rank; ++i) s.pads.push_back(full[e * rank + i]);
  if (pad.num_inputs() > 2 && pad.input(2)) {
    const Tensor* f = ConstantOf(pad.input(2));
    if (!f) return *why = "the fill is computed", std::nullopt;
    if (f->numel() > 1) return *why = "the fill is not a scalar", std::nullopt;
    if (f->numel() == 1) s.fill = f->ToDoubleVector()[0];
  }
  return s;
}

// The value `reader` pads its input 0 with, or nullopt with why it cannot take a Pad.
std::optional<double> ReaderFill(const Node& r, std::string* why) {
  const std::string auto_pad = r.attrs.GetString("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "VALID") return *why = "auto_pad " + auto_pad, std::nullopt;
  switch (r.op()) {
    case OpKind::kConv:
      return 0.0;
    case OpKind::kConvInteger:
    case OpKind::kQLinearConv: {
      const Value* z = r.input(2);  // x_zero_point of both
      if (!z) return 0.0;
      const Tensor* t = ConstantOf(z);
      if (!t || t->numel() != 1) return *why = "the input zero point is not a constant scalar", std::nullopt;
      return t->ToDoubleVector()[0];
    }
    case OpKind::kAveragePool:
      if (r.attrs.GetInt("count_include_pad", 0) != 1) return *why = "count_include_pad = 0", std::nullopt;
      if (r.attrs.GetInt("ceil_mode", 0) != 0) return *why = "ceil_mode", std::nullopt;
      return 0.0;
    default:
      return *why = "no padding of its own", std::nullopt;
  }
}

}  // namespace

Status RunFoldPad(Graph& g, PassContext& ctx, const PassOptions&) {
  int folded = 0;
  for (Node* pad : g.nodes()) {
    if (pad->op() != OpKind::kPad || pad->num_outputs() != 1) continue;
    std::string why;
    const std::optional<SpatialPad> p = ReadPad(*pad, &why);
    if (!p) {
      if (ctx.explain) ctx.Explain("fold-pad", *pad, why);
      continue;
    }
    Value* y = pad->output(0);
    const std::vector<Use> uses = y->uses();  // a copy: SetInput edits the list
    for (const Use& u : uses) {
      Node* r = u.node;
      if (u.input_index != 0) continue;
      std::string rwhy;
      const std::optional<double> fill = ReaderFill(*r, &rwhy);
      if (!fill || *fill != p->fill) {
        if (ctx.explain)
          ctx.Explain("fold-pad", *r, fill ? fmt::format("pads with {}, the Pad with {}", *fill, p->fill) : rwhy);
        continue;
      }
      std::vector<int64_t> pads = r->attrs.GetInts("pads", std::vector<int64_t>(p->pads.size(), 0));
      if (pads.size() != p->pads.size()) continue;
      for (size_t i = 0; i < pads.size(); ++i) pads[i] += p->pads[i];
      r->attrs.Set("pads", pads);
      r->attrs.Set("auto_pad", std::string("NOTSET"));
      g.SetInput(r, 0, pad->input(0));
      r->provenance.push_back(pad->name());
      ++ctx.stats().rewrites["pad folded into its reader"];
      ++folded;
    }
  }
  if (folded) ctx.stats().nodes_removed += RemoveDeadNodes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
