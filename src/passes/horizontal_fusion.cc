// horizontal-fusion: parallel Conv/FusedConv (same input, same attributes, group 1, constant
// weights of the same kernel shape) or Gemm/MatMul/FusedMatMul (same A, constant 2-D B,
// same attributes) become one wider op whose weights (and biases) are concatenated along
// the output channels, followed by a Split along the channel axis (Conv) or the last axis
// (matrix products). Fused epilogues merge when their attributes are equal and they have
// no residual input. A branch without a bias gets zeros (x + 0 is exact). Graph outputs
// keep their names (the Split outputs take them).
//
// Before:  %q = MatMul(%x, %Wq[128, 128]); %k = MatMul(%x, %Wk[128, 128])
//          %v = MatMul(%x, %Wv[128, 128])
// After:   %qkv = MatMul(%x, %Wqkv[128, 384]); %q, %k, %v = Split(%qkv, [128, 128, 128]) {axis=-1}
//
// Slices of one value with step 1 along one axis that together tile that axis become one
// Split ("parallel Slice -> Split"; a Split is one node and, along the outermost non-1
// axis, a set of views).
//
// A Split whose outputs are exactly the inputs of a Concat, in order and along the same
// axis, cancels: the Concat reads the Split's input ("cancelled Split+Concat"); a run of
// them inside a longer Concat is replaced by the Split's input.
//
// The cost rule: fuse a group when every branch has at most kMaxBranchChannels (1024)
// output channels and the fused op at most kMaxFusedChannels (4096). The MACs do not
// change (M·K·ΣN either way); what fusion buys is
//   - one pass over the shared input instead of n: (n-1)·M·K elements of traffic saved,
//   - n-1 fewer kernel launches (NPU task dispatches),
//   - tile packing: the NPU's MATMUL costs ⌈k/128⌉·⌈n/32⌉·(2·128 + 32 + m - 2) cycles per
//     call, and Σ⌈N_i/32⌉ >= ⌈ΣN_i/32⌉ (three 48-channel branches: 6 column tiles
//     separately, 5 fused); CPU micro-kernels block 16-64 columns the same way.
// Relative to a branch's work (M·K·N_i MACs) the input traffic it saves is 1/N_i element
// per MAC, so the gain is real for narrow branches and vanishes for wide ones: at
// N_i > 1024 a branch already fills whole tiles everywhere and the re-read costs < 0.1% of
// its MACs, while the fused weight becomes one large tensor that must stream through SRAM
// as a whole; 4096 caps that tensor's width. The Split costs nothing when its outputs are
// views (`views`: a channel split of NCHW with N = 1 is contiguous; a last-axis split is a
// strided view that MatMul and elementwise readers accept).
//
// Not fused: different inputs, different attributes (strides, pads, kernel, transposes,
// epilogue), group != 1, weights that are not constants, a residual input, a bias that is
// not a constant vector of the output channels.
#include <algorithm>
#include <cstring>
#include <map>

#include "ir/cost.h"
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

constexpr int64_t kMaxBranchChannels = 1024;
constexpr int64_t kMaxFusedChannels = 4096;

bool IsConvLike(OpKind op) { return op == OpKind::kConv || op == OpKind::kFusedConv; }

// Concatenates constants of equal rank along `axis`.
Tensor ConcatConstants(const std::vector<const Tensor*>& parts, int axis) {
  Dims dims = parts[0]->dims();
  dims[axis] = 0;
  for (const Tensor* t : parts) dims[axis] += t->dim(axis);
  Tensor out(parts[0]->dtype(), dims);
  const size_t es = DTypeSize(out.dtype());
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= dims[i];
  for (int i = axis + 1; i < static_cast<int>(dims.size()); ++i) inner *= dims[i];
  char* dst = static_cast<char*>(out.raw());
  int64_t row = dims[axis] * inner;
  int64_t offset = 0;
  for (const Tensor* t : parts) {
    int64_t chunk = t->dim(axis) * inner;
    const char* src = static_cast<const char*>(t->raw());
    for (int64_t o = 0; o < outer; ++o) {
      std::memcpy(dst + (o * row + offset) * es, src + o * chunk * es, chunk * es);
    }
    offset += chunk;
  }
  return out;
}

// How one branch's weights and bias concatenate.
struct BranchShape {
  int weight_axis = 0;      // the output-channel axis of the weight
  int64_t channels = 0;     // its output channels
  int bias_input = -1;      // index of the bias input (-1: the op has none)
};

// The branch layout of `n`, or nullopt with *why when `n` cannot be fused.
std::optional<BranchShape> Branch(const Node* n, std::string* why) {
  const Value* w = n->input(1);
  if (!w || !w->is_constant()) {
    *why = fmt::format("{}: the weight is not a constant", n->Label());
    return std::nullopt;
  }
  if (n->num_outputs() != 1 || !n->output(0)->type.IsStatic()) {
    *why = fmt::format("{}: output shape not static", n->Label());
    return std::nullopt;
  }
  BranchShape b;
  if (IsConvLike(n->op())) {
    if (n->attrs.GetInt("group", 1) != 1) {
      *why = fmt::format("{}: group {} (only group 1 fuses)", n->Label(), n->attrs.GetInt("group", 1));
      return std::nullopt;
    }
    if (n->op() == OpKind::kFusedConv && n->input(3)) {
      *why = fmt::format("{}: has a residual input", n->Label());
      return std::nullopt;
    }
    b.weight_axis = 0;
    b.channels = w->type.dims[0];
    b.bias_input = 2;
  } else {
    if (w->type.rank() != 2) {
      *why = fmt::format("{}: B has rank {} (only a 2-D weight fuses)", n->Label(), w->type.rank());
      return std::nullopt;
    }
    if (n->op() == OpKind::kFusedMatMul && n->input(3)) {
      *why = fmt::format("{}: has a residual input", n->Label());
      return std::nullopt;
    }
    bool trans_b = n->attrs.GetInt("transB", 0) != 0;
    b.weight_axis = trans_b ? 0 : 1;
    b.channels = w->type.dims[b.weight_axis];
    b.bias_input = n->op() == OpKind::kMatMul ? -1 : 2;
  }
  if (b.bias_input >= 0 && n->input(b.bias_input)) {
    const Value* bias = n->input(b.bias_input);
    if (!bias->is_constant() || bias->type.rank() != 1 || bias->type.dims[0] != b.channels) {
      *why = fmt::format("{}: the bias is not a constant vector of {} channels", n->Label(), b.channels);
      return std::nullopt;
    }
  }
  return b;
}

// Branches of the same kind as `n` that read its input the same way.
bool SameBranchKind(const Node* a, const Node* b) {
  if (a->op() != b->op() || a->input(0) != b->input(0)) return false;
  if (!(a->attrs == b->attrs)) return false;
  const Value* wa = a->input(1);
  const Value* wb = b->input(1);
  if (!wa || !wb || wa->type.dtype != wb->type.dtype || wa->type.rank() != wb->type.rank()) return false;
  // Equal weight shapes apart from the output-channel axis.
  std::string why;
  auto ba = Branch(a, &why);
  auto bb = Branch(b, &why);
  if (!ba || !bb) return false;
  for (int i = 0; i < wa->type.rank(); ++i) {
    if (i != ba->weight_axis && wa->type.dims[i] != wb->type.dims[i]) return false;
  }
  return a->output(0)->type.dtype == b->output(0)->type.dtype;
}

bool FuseParallel(Graph& g, Node* at, PassContext& ctx, std::string* why) {
  if (at->input(0) == nullptr) return false;
  auto first = Branch(at, why);
  if (!first) return false;
  std::vector<Node*> group;
  for (const Use& u : at->input(0)->uses()) {
    if (u.input_index != 0 || std::find(group.begin(), group.end(), u.node) != group.end()) continue;
    if (u.node == at || SameBranchKind(at, u.node)) group.push_back(u.node);
  }
  if (group.size() < 2) {
    *why = "no other branch with the same op, attributes and weight shape reads this input";
    return false;
  }
  // Branch order: graph order, so the Split's outputs follow the original nodes.
  std::vector<Node*> order = g.nodes();
  auto pos = [&](Node* n) { return std::find(order.begin(), order.end(), n) - order.begin(); };
  std::sort(group.begin(), group.end(), [&](Node* a, Node* b) { return pos(a) < pos(b); });
  if (group[0] != at) {
    *why = "not the first branch of its group";
    return false;
  }
  int64_t total = 0;
  std::vector<int64_t> sizes;
  for (Node* n : group) {
    auto b = Branch(n, why);
    if (!b) return false;
    if (b->channels > kMaxBranchChannels) {
      *why = fmt::format("{} has {} output channels (> {}: nothing to gain)", n->Label(), b->channels,
                         kMaxBranchChannels);
      return false;
    }
    sizes.push_back(b->channels);
    total += b->channels;
  }
  if (total > kMaxFusedChannels) {
    *why = fmt::format("the fused op would have {} output channels (> {})", total, kMaxFusedChannels);
    return false;
  }
  // Concatenated weights and biases.
  std::vector<const Tensor*> weights;
  for (Node* n : group) weights.push_back(&n->input(1)->constant());
  Tensor w = ConcatConstants(weights, first->weight_axis);
  std::vector<Value*> inputs = {at->input(0), g.AddConstant(g.FreshName(at->input(1)->name() + ".fused"), w)};
  for (int i = 2; i < at->num_inputs(); ++i) inputs.push_back(at->input(i));
  if (first->bias_input >= 0) {
    bool any = false;
    for (Node* n : group) any |= n->input(first->bias_input) != nullptr;
    if (any) {
      std::vector<Tensor> zeros;
      std::vector<const Tensor*> parts;
      zeros.reserve(group.size());
      for (size_t i = 0; i < group.size(); ++i) {
        const Value* b = group[i]->input(first->bias_input);
        if (b) {
          parts.push_back(&b->constant());
        } else {
          zeros.emplace_back(group[i]->output(0)->type.dtype, Dims{sizes[i]});
          parts.push_back(&zeros.back());
        }
      }
      Tensor bias = ConcatConstants(parts, 0);
      while (static_cast<int>(inputs.size()) <= first->bias_input) inputs.push_back(nullptr);
      inputs[first->bias_input] = g.AddConstant(g.FreshName(at->name() + ".bias.fused"), bias);
    }
  }
  while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();
  auto fused = AddInferredNode(g, at->op(), g.FreshName(at->name() + ".fused"), inputs, at->attrs, 1, at);
  if (!fused.ok()) {
    *why = fused.status().message();
    return false;
  }
  for (Node* n : group) AbsorbProvenance(*fused, n);
  Attributes split_attrs;
  int axis = IsConvLike(at->op()) ? 1 : at->output(0)->type.rank() - 1;
  split_attrs.Set("axis", int64_t{axis});
  Value* split_sizes = g.AddConstant(g.FreshName(at->name() + ".split"), Tensor::VectorI64(sizes));
  auto split = AddInferredNode(g, OpKind::kSplit, g.FreshName(at->name() + ".split"),
                               {(*fused)->output(0), split_sizes}, split_attrs,
                               static_cast<int>(group.size()), *fused);
  if (!split.ok()) {
    g.RemoveNode(*fused);
    *why = split.status().message();
    return false;
  }
  for (size_t i = 0; i < group.size(); ++i) {
    EDGEC_CHECK(ReplaceValue(g, group[i]->output(0), (*split)->output(static_cast<int>(i))));
  }
  ctx.stats().nodes_fused += static_cast<int64_t>(group.size());
  ctx.stats().nodes_added += 2;
  ctx.ExplainLine(fmt::format("horizontal-fusion: {} branches of {} on '{}' -> {} channels",
                              group.size(), OpName(at->op()), at->input(0)->name(), total));
  return true;
}

// One slice of x along a single axis with step 1: [start, end) of `axis`.
struct AxisSlice {
  Node* node;
  int axis;
  int64_t start, end;
};

std::optional<AxisSlice> AsAxisSlice(Node* n) {
  const Value* x = n->input(0);
  const Tensor* starts = ConstantOf(n->input(1));
  const Tensor* ends = ConstantOf(n->input(2));
  if (!x || !x->type.IsStatic() || !starts || !ends || (n->input(3) && !ConstantOf(n->input(3))) ||
      (n->input(4) && !ConstantOf(n->input(4)))) {
    return std::nullopt;
  }
  const int r = x->type.rank();
  std::vector<int64_t> st = starts->ToInt64Vector(), en = ends->ToInt64Vector(), axes, steps;
  if (n->input(3)) {
    axes = ConstantOf(n->input(3))->ToInt64Vector();
  } else {
    for (size_t i = 0; i < st.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  steps = n->input(4) ? ConstantOf(n->input(4))->ToInt64Vector() : std::vector<int64_t>(st.size(), 1);
  if (axes.size() != st.size() || en.size() != st.size() || steps.size() != st.size()) return std::nullopt;
  std::optional<AxisSlice> found;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i] < 0 ? axes[i] + r : axes[i];
    if (a < 0 || a >= r || steps[i] != 1) return std::nullopt;
    int64_t dim = x->type.dims[a];
    int64_t s = st[i] < 0 ? std::max<int64_t>(st[i] + dim, 0) : std::min(st[i], dim);
    int64_t e = en[i] < 0 ? std::max<int64_t>(en[i] + dim, 0) : std::min(en[i], dim);
    if (s == 0 && e == dim) continue;  // the whole axis
    if (found || e <= s) return std::nullopt;
    found = AxisSlice{n, static_cast<int>(a), s, e};
  }
  return found;
}

// Slices of one value along one axis that together tile it -> one Split.
bool FuseSlices(Graph& g, Node* at, PassContext& ctx, std::string* why) {
  auto mine = AsAxisSlice(at);
  if (!mine) {
    *why = "not a constant step-1 slice of one axis";
    return false;
  }
  const Value* x = at->input(0);
  std::vector<AxisSlice> parts;
  for (const Use& u : x->uses()) {
    if (u.input_index != 0 || u.node->op() != OpKind::kSlice) continue;
    auto s = AsAxisSlice(u.node);
    if (s && s->axis == mine->axis &&
        std::none_of(parts.begin(), parts.end(), [&](const AxisSlice& p) { return p.node == u.node; })) {
      parts.push_back(*s);
    }
  }
  std::sort(parts.begin(), parts.end(), [](const AxisSlice& a, const AxisSlice& b) {
    return a.start != b.start ? a.start < b.start : a.end < b.end;
  });
  // A chain from 0 to the axis' end, each part starting where the previous one ended.
  std::vector<AxisSlice> chain;
  int64_t at_pos = 0;
  for (const AxisSlice& p : parts) {
    if (p.start == at_pos) {
      chain.push_back(p);
      at_pos = p.end;
    }
  }
  int64_t dim = x->type.dims[mine->axis];
  if (at_pos != dim || chain.size() < 2) {
    *why = fmt::format("the slices of '{}' along axis {} do not tile it", x->name(), mine->axis);
    return false;
  }
  if (std::none_of(chain.begin(), chain.end(), [&](const AxisSlice& p) { return p.node == at; })) {
    *why = "another set of slices tiles the axis";
    return false;
  }
  std::vector<int64_t> sizes;
  for (const AxisSlice& p : chain) sizes.push_back(p.end - p.start);
  Attributes attrs;
  attrs.Set("axis", int64_t{mine->axis});
  Value* split_sizes = g.AddConstant(g.FreshName(chain[0].node->name() + ".split"), Tensor::VectorI64(sizes));
  auto split = AddInferredNode(g, OpKind::kSplit, g.FreshName(chain[0].node->name() + ".split"),
                               {const_cast<Value*>(x), split_sizes}, attrs,
                               static_cast<int>(chain.size()), chain[0].node);
  if (!split.ok()) {
    *why = split.status().message();
    return false;
  }
  for (const AxisSlice& p : chain) AbsorbProvenance(*split, p.node);
  for (size_t i = 0; i < chain.size(); ++i) {
    EDGEC_CHECK(ReplaceValue(g, chain[i].node->output(0), (*split)->output(static_cast<int>(i))));
  }
  ctx.stats().nodes_fused += static_cast<int64_t>(chain.size());
  ctx.stats().nodes_added++;
  return true;
}

// Concat(..., Split(x) outputs in order, ...) along the Split's axis reads x instead.
bool CancelSplitConcat(Graph& g, Node* concat, PassContext&, std::string* why) {
  const int r = concat->output(0)->type.rank_known ? concat->output(0)->type.rank() : -1;
  if (r < 0) {
    *why = "rank unknown";
    return false;
  }
  int64_t axis = concat->attrs.GetInt("axis", 0);
  if (axis < 0) axis += r;
  for (int i = 0; i < concat->num_inputs(); ++i) {
    Node* split = ProducerOf(concat->input(i), OpKind::kSplit);
    if (!split || concat->input(i)->producer_output() != 0) continue;
    int64_t split_axis = split->attrs.GetInt("axis", 0);
    if (split_axis < 0) split_axis += r;
    if (split_axis != axis) continue;
    int n = split->num_outputs();
    if (i + n > concat->num_inputs()) continue;
    bool run = true;
    for (int k = 0; k < n && run; ++k) {
      Value* v = concat->input(i + k);
      run = v == split->output(k) && HasSingleUse(v);
    }
    if (!run) continue;
    Value* x = split->input(0);
    if (n == concat->num_inputs()) {
      if (!ReplaceValue(g, concat->output(0), x)) continue;
      return true;
    }
    std::vector<Value*> ins;
    for (int k = 0; k < i; ++k) ins.push_back(concat->input(k));
    ins.push_back(x);
    for (int k = i + n; k < concat->num_inputs(); ++k) ins.push_back(concat->input(k));
    auto shorter = AddInferredNode(g, OpKind::kConcat, g.FreshName(concat->name()), ins, concat->attrs, 1, concat);
    if (!shorter.ok()) continue;
    AbsorbProvenance(*shorter, split);
    if (!ReplaceValue(g, concat->output(0), (*shorter)->output(0))) {
      g.RemoveNode(*shorter);
      continue;
    }
    return true;
  }
  *why = "no run of a Split's outputs, in order, along the Concat's axis";
  return false;
}

}  // namespace

Status RunHorizontalFusion(Graph& g, PassContext& ctx, const PassOptions&) {
  std::vector<Pattern> patterns = {
      {"parallel Conv", {OpKind::kConv}, FuseParallel},
      {"parallel FusedConv", {OpKind::kFusedConv}, FuseParallel},
      {"parallel Gemm", {OpKind::kGemm}, FuseParallel},
      {"parallel MatMul", {OpKind::kMatMul}, FuseParallel},
      {"parallel FusedMatMul", {OpKind::kFusedMatMul}, FuseParallel},
      {"parallel Slice -> Split", {OpKind::kSlice}, FuseSlices},
      {"cancelled Split+Concat", {OpKind::kConcat}, CancelSplitConcat},
  };
  int64_t before = GraphCopyBytes(g);
  RETURN_IF_ERROR(ApplyPatterns(g, patterns, ctx));
  ctx.stats().copy_bytes_removed = before - GraphCopyBytes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
