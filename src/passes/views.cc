// views: marks data-movement nodes whose output can address memory that already exists as
// zero-copy views (physical.is_view, with strides when the view is not dense), and folds
// copies into the nodes around them. Logical values do not change (the reference executor
// ignores physical layouts); only the copy bytes the cost model counts go down.
//
// The rules, in terms of strides per logical axis (ir/physical_layout.h):
//   - Reshape/Flatten/Squeeze/Unsqueeze: a view when strides for the new dims exist over
//     the input's memory (always for a dense row-major input; for NHWC only when the
//     regrouped axes are contiguous, e.g. NHWC [N, C, 1, 1]). A Reshape of NHWC [N, C, H, W]
//     with C, H·W > 1 to [N, C·H·W] really moves data and stays a copy.
//   - Transpose: a view when the permuted strides are dense row-major (only size-1 axes
//     move, or the input is NHWC and the perm is (0, 2, 3, 1)); else, when its input is
//     written by a MatMul/Gemm/Attention/elementwise node read by nothing else, that
//     producer writes the permuted order directly ("producer writes transposed") and the
//     Transpose becomes a dense view; else a strided view when every reader accepts strides.
//   - Slice (positive steps) and Split: views into the input (the offset is implied by the
//     node: Slice starts, Split position); dense along the outermost non-1 axis.
//   - Layout conversions whose input and output place elements identically: views.
//   - Concat along the outermost non-1 axis of a dense row-major output: in place; each
//     input's producer writes at its offset of the output (is_view on the Concat output,
//     see types.h) when every input is a fresh, dense row-major, single-use node output.
//   - Pad that appends zero channels (constant mode, value 0, only the end of axis 1) to a
//     fresh node output read by nothing else: alignment padding folded into the producer,
//     which writes the padded layout (padded_dims with the padded channel count, zero
//     filled); the Pad output is a dense view of that buffer.
// Strided (non-dense) views are made only when every reader accepts strided input:
// MatMul/FusedMatMul/Gemm/Attention (any strides: oneDNN matmul memory descriptors take
// arbitrary strides), elementwise ops (unit innermost stride), and movement nodes that are
// themselves views. Graph outputs are never strided. A strided view whose readers do not
// all accept strides is withdrawn and the analysis repeats (downstream strides change).
//
// Options (all 1 by default): strided=0 (only dense views; no producer writes a transposed
// order), slices=0 (Slice outputs stay copies), in_place_concat=0, fold_pads=0; with all
// four at 0 only dense Reshape/Flatten/Squeeze/Unsqueeze/Transpose/Split/conversion views
// remain.
//
// Before:  %r = Reshape(%x[1, 64, 7, 7], [1, 3136]); %t = Transpose(%s[1, 1, 64]) {perm=[1, 0, 2]}
//          %m = MatMul(%a, %b); %mt = Transpose(%m[4, 128, 64]) {perm=[1, 0, 2]}
//          %h = Reshape(%mt, [128, 256])
// After:   %r, %t: dense views (copy nothing); %m strided [64, 256, 1] (written transposed);
//          %mt and %h: dense views.
#include <algorithm>
#include <map>
#include <set>

#include "ir/cost.h"
#include "ir/infer_movement_util.h"
#include "ir/physical_layout.h"
#include "passes/pass.h"
#include "passes/pass_util.h"

namespace edgec::passes {
namespace {

bool IsMatMulFamily(OpKind op) {
  return op == OpKind::kMatMul || op == OpKind::kFusedMatMul || op == OpKind::kGemm ||
         op == OpKind::kAttention;
}

bool IsFresh(const Value* v) {
  return v->producer() && !v->physical.is_view && v->physical.layout == Layout::kRowMajor &&
         v->physical.padded_dims.empty() && v->physical.strides.empty();
}

class ViewAnalysis {
 public:
  struct Options {
    bool strided = true;          // strided views and producers writing a transposed order
    bool slices = true;           // Slice outputs as views (the offset is the executor's)
    bool in_place_concat = true;
    bool fold_pads = true;
  };

  ViewAnalysis(Graph& g, PassContext& ctx, Options options) : g_(g), ctx_(ctx), options_(options) {
    for (Node* n : g.nodes()) {
      for (Value* o : n->outputs()) original_[o] = o->physical;
    }
  }

  Status Run() {
    // Forward proposal, then withdraw strided views some reader cannot take; repeat.
    for (int round = 0;; ++round) {
      if (round > g_.num_nodes() + 1) return Internal("views: the analysis did not settle");
      Propose();
      bool withdrew = false;
      for (Node* n : g_.nodes()) {
        for (Value* o : n->outputs()) {
          if (o->physical.is_view && !IsDenseRowMajor(*o) && !ReadersAcceptStrides(o)) {
            no_strided_.insert(n);
            withdrew = true;
          }
        }
      }
      if (!withdrew) break;
    }
    if (options_.fold_pads) FoldPads();
    if (options_.in_place_concat) ConcatInPlace();
    return Status::Ok();
  }

 private:
  void Reset() {
    for (auto& [v, p] : original_) v->physical = p;
    producer_writes_.clear();
  }

  void Propose() {
    Reset();
    for (Node* n : g_.nodes()) {
      if (!n->input(0) || !n->input(0)->type.IsStatic()) continue;
      bool all_static = true;
      for (Value* o : n->outputs()) all_static &= o->type.IsStatic();
      if (!all_static) continue;
      if (IsReshapeLike(n->op())) {
        ProposeReshape(n);
      } else if (n->op() == OpKind::kTranspose) {
        ProposeTranspose(n);
      } else if (n->op() == OpKind::kSlice && options_.slices) {
        ProposeSlice(n);
      } else if (n->op() == OpKind::kSplit) {
        ProposeSplit(n);
      }
    }
  }

  // Sets y as a view of its input with logical strides `s`, unless strided views are
  // withdrawn for the node.
  bool SetView(Node* n, Value* y, const Strides& s) {
    bool dense = IsDenseRowMajor(y->type.dims, s);
    if (!dense && (!options_.strided || no_strided_.count(n) || y->is_graph_output())) return false;
    y->physical = StridedLayout(y->type.dims, s, /*is_view=*/true);
    return true;
  }

  void ProposeReshape(Node* n) {
    Value* x = n->input(0);
    auto in = LogicalStrides(*x);
    if (!in) return;
    auto out = ReshapeStrides(x->type.dims, *in, n->output(0)->type.dims);
    if (out) SetView(n, n->output(0), *out);
  }

  void ProposeTranspose(Node* n) {
    Value* x = n->input(0);
    Value* y = n->output(0);
    auto in = LogicalStrides(*x);
    if (!in) return;
    if (IsRelayout(*n)) {
      // Withdrawn (its layout strided, a reader takes no strides): it stays a copy; proposing
      // it again would withdraw it again, round after round (PP-OCRv4's recognizer: tokens
      // [1, 40, 120] reshaped to [1, 1, 40, 120] and transposed to [1, 120, 1, 40], which is
      // NHWC's placement, for a conv; ViewsTest.ARelayoutOfAnNhwcPlacedTransposeSettles).
      if (no_strided_.count(n)) return;
      auto out = LogicalStrides(y->type, original_[y]);
      bool same = out.has_value();
      for (int i = 0; same && i < y->type.rank(); ++i) {
        same = y->type.dims[i] == 1 || (*out)[i] == (*in)[i];
      }
      if (same) y->physical.is_view = true;
      return;
    }
    std::vector<int64_t> perm = n->attrs.GetInts("perm");
    if (perm.empty()) {
      for (int i = x->type.rank() - 1; i >= 0; --i) perm.push_back(i);
    }
    Strides s = TransposeStrides(*in, perm);
    if (IsDenseRowMajor(y->type.dims, s)) {
      SetView(n, y, s);
      return;
    }
    // The producer writes the transposed order: x gets the strides that make y dense.
    Node* p = x->producer();
    if (options_.strided && p && IsFresh(x) && HasSingleUse(x) && p->num_outputs() == 1 &&
        (IsMatMulFamily(p->op()) || IsComputedElementwise(p->op()))) {
      Strides dense = RowMajorStrides(y->type.dims);
      Strides xs(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) xs[perm[i]] = dense[i];
      x->physical = StridedLayout(x->type.dims, xs, /*is_view=*/false);
      producer_writes_.insert(p);
      SetView(n, y, dense);
      return;
    }
    SetView(n, y, s);
  }

  void ProposeSlice(Node* n) {
    Value* x = n->input(0);
    auto in = LogicalStrides(*x);
    if (!in) return;
    const Tensor* starts = ConstantOf(n->input(1));
    const Tensor* ends = ConstantOf(n->input(2));
    if (!starts || !ends || (n->input(3) && !ConstantOf(n->input(3))) ||
        (n->input(4) && !ConstantOf(n->input(4)))) {
      return;
    }
    const int r = x->type.rank();
    std::vector<int64_t> st = starts->ToInt64Vector(), en = ends->ToInt64Vector();
    std::vector<int64_t> axes, steps;
    if (n->input(3)) {
      axes = ConstantOf(n->input(3))->ToInt64Vector();
    } else {
      for (size_t i = 0; i < st.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    steps = n->input(4) ? ConstantOf(n->input(4))->ToInt64Vector() : std::vector<int64_t>(st.size(), 1);
    if (axes.size() != st.size() || en.size() != st.size() || steps.size() != st.size()) return;
    Strides s = *in;
    for (size_t i = 0; i < axes.size(); ++i) {
      int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
      if (a < 0 || a >= r || steps[i] <= 0) return;
      infer::SliceAxisRange range = infer::ClampSliceAxis(x->type.dims[a], st[i], en[i], steps[i]);
      s[a] *= range.step;
    }
    SetView(n, n->output(0), s);
  }

  void ProposeSplit(Node* n) {
    Value* x = n->input(0);
    auto in = LogicalStrides(*x);
    if (!in) return;
    for (Value* o : n->outputs()) {
      if (!IsDenseRowMajor(o->type.dims, *in) &&
          (!options_.strided || no_strided_.count(n) || o->is_graph_output())) {
        return;
      }
    }
    for (Value* o : n->outputs()) SetView(n, o, *in);
  }

  bool ReadersAcceptStrides(const Value* v) const {
    if (v->is_graph_output()) return false;
    auto s = LogicalStrides(*v);
    if (!s) return false;
    int inner = -1;  // innermost non-1 axis
    for (int i = v->type.rank() - 1; i >= 0 && inner < 0; --i) {
      if (v->type.dims[i] != 1) inner = i;
    }
    bool unit_inner = inner < 0 || (*s)[inner] == 1;
    for (const Use& u : v->uses()) {
      const Node* c = u.node;
      if (IsMatMulFamily(c->op())) continue;
      if (IsComputedElementwise(c->op()) && unit_inner) continue;
      bool movement = IsReshapeLike(c->op()) || c->op() == OpKind::kTranspose ||
                      c->op() == OpKind::kSlice || c->op() == OpKind::kSplit;
      if (movement && u.input_index == 0 && c->output(0)->physical.is_view) continue;
      return false;
    }
    return true;
  }

  // Pad appending zero channels to a fresh, single-use value: the producer writes them.
  void FoldPads() {
    for (Node* n : g_.nodes()) {
      if (n->op() != OpKind::kPad || n->attrs.GetString("mode", "constant") != "constant") continue;
      Value* x = n->input(0);
      Value* y = n->output(0);
      if (!x->type.IsStatic() || !y->type.IsStatic() || x->type.rank() < 2) continue;
      if (!x->producer() || x->physical.is_view || !HasSingleUse(x) || x->is_graph_output() ||
          !x->physical.strides.empty() || !x->physical.padded_dims.empty() ||
          producer_writes_.count(x->producer()) || IsReshapeLike(x->producer()->op()) ||
          x->producer()->op() == OpKind::kConcat) {
        continue;
      }
      if (n->input(2)) {
        auto cv = ConstantScalar(n->input(2));
        if (!cv || *cv != 0) continue;
      }
      const Tensor* pads = ConstantOf(n->input(1));
      if (!pads) continue;
      std::vector<int64_t> p = pads->ToInt64Vector();
      const int r = x->type.rank();
      if (static_cast<int>(p.size()) != 2 * r) continue;
      bool channels_only = true;
      for (int i = 0; i < 2 * r; ++i) channels_only &= (i == r + 1) ? p[i] >= 0 : p[i] == 0;
      if (!channels_only || p[r + 1] == 0) continue;
      if (x->physical.layout == Layout::kNHWC) {
        if (r != 4) continue;
        x->physical.padded_dims = {x->type.dims[0], x->type.dims[2], x->type.dims[3], y->type.dims[1]};
        PhysicalLayout view = NhwcLayout(y->type.dims);
        view.is_view = true;
        y->physical = view;
      } else if (x->physical.layout == Layout::kRowMajor) {
        x->physical.padded_dims = x->type.dims;
        x->physical.padded_dims[1] = y->type.dims[1];
        y->physical = PhysicalLayout();
        y->physical.is_view = true;
      } else {
        continue;
      }
      ctx_.stats().rewrites["channel Pad folded into producer"]++;
    }
  }

  void ConcatInPlace() {
    std::set<const Value*> placed;
    for (Node* n : g_.nodes()) {
      if (n->op() != OpKind::kConcat) continue;
      Value* y = n->output(0);
      if (!y->type.IsStatic() || !IsDenseRowMajor(*y) || y->physical.is_view) continue;
      const int r = y->type.rank();
      int64_t axis = n->attrs.GetInt("axis", 0);
      if (axis < 0) axis += r;
      if (axis < 0 || axis >= r) continue;
      bool outer = true;
      for (int i = 0; i < axis; ++i) outer &= y->type.dims[i] == 1;
      if (!outer) continue;
      std::set<const Value*> seen;
      bool ok = true;
      for (const Value* x : n->inputs()) {
        ok &= x && !x->is_constant() && !x->is_graph_input() && !x->is_graph_output() &&
              IsFresh(x) && HasSingleUse(x) && seen.insert(x).second && !placed.count(x) &&
              x->producer()->op() != OpKind::kSplit;
      }
      if (!ok) continue;
      for (const Value* x : n->inputs()) placed.insert(x);
      y->physical.is_view = true;
      ctx_.stats().rewrites["Concat in place"]++;
    }
  }

  Graph& g_;
  PassContext& ctx_;
  Options options_;
  std::map<Value*, PhysicalLayout> original_;
  std::set<Node*> no_strided_;
  std::set<Node*> producer_writes_;
};

}  // namespace

Status RunViews(Graph& g, PassContext& ctx, const PassOptions& options) {
  ViewAnalysis::Options o;
  for (auto& [key, flag] : std::initializer_list<std::pair<const char*, bool*>>{
           {"strided", &o.strided}, {"slices", &o.slices}, {"in_place_concat", &o.in_place_concat},
           {"fold_pads", &o.fold_pads}}) {
    std::string v = options.Get(key, "1");
    if (v != "0" && v != "1") return InvalidArgument("views: {}={} must be 0 or 1", key, v);
    *flag = v == "1";
  }
  for (auto& [key, value] : options.map()) {
    if (key != "strided" && key != "slices" && key != "in_place_concat" && key != "fold_pads") {
      return InvalidArgument("views: unknown option '{}' (strided, slices, in_place_concat, fold_pads)", key);
    }
  }
  int64_t before = GraphCopyBytes(g);
  ViewAnalysis analysis(g, ctx, o);
  RETURN_IF_ERROR(analysis.Run());
  for (Node* n : g.nodes()) {
    if (n->op() == OpKind::kConcat || n->op() == OpKind::kPad) continue;  // counted above
    for (Value* o : n->outputs()) {
      if (o->physical.is_view) {
        ctx.stats().rewrites[fmt::format("{} view{}", OpName(n->op()), IsDenseRowMajor(*o) ? "" : " (strided)")]++;
        break;
      }
    }
    if (n->num_outputs() == 1 && !n->output(0)->physical.strides.empty() && !n->output(0)->physical.is_view) {
      ctx.stats().rewrites[fmt::format("{} writes transposed", OpName(n->op()))]++;
    }
  }
  ctx.stats().copy_bytes_removed = before - GraphCopyBytes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
