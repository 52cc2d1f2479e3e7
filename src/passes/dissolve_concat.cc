// dissolve-concat: a Concat along the channel axis that is read only by convolutions or
// pools need not be materialized.
//
// A group-1 convolution sums over its input channels, so a convolution of a channel
// Concat is the sum of one convolution per Concat input, each with its slice of the
// weight's input channels. The partial sums chain through the residual epilogue: the
// first part carries the bias (and the original residual, if any), each later part adds
// the previous part's output, and only the last applies the activation.
//
// Before:  %c = Concat(%a[1,64,55,55], %b[1,64,55,55]) {axis=1}
//          %y = FusedConv(%c, %w[16,128,1,1], %bias) {activation="Relu"}
// After:   %p = FusedConv(%a, %w[:, 0:64], %bias)
//          %y = FusedConv(%b, %w[:, 64:128], -, %p) {activation="Relu"}
//
// A pool works channel by channel, so it moves above the Concat (the Concat then copies
// the smaller pooled tensors, and may dissolve into the convolution that reads them):
//
// Before:  %c = Concat(%a, %b) {axis=1};  %y = MaxPool(%c)
// After:   %y = Concat(MaxPool(%a), MaxPool(%b)) {axis=1}
//
// The cost rule (convolutions): the Concat reads and writes each of its E_in elements
// once; the n parts instead pass over the E_out output elements n - 1 more times (each
// later part reads its residual and writes the sum). When several convolutions read the
// Concat, all of them split (E_out is the sum of their outputs) or none. Dissolve when
// (n - 1)·E_out < E_in: squeezenet's squeeze layers (128 -> 16 channels) qualify, its
// classifier (512 -> 1000) does not. The MACs are the same; the sums are added in another
// order (float rounding).
//
// Not dissolved: a Concat that is a graph output, has a reader that is not a convolution (a
// pool must be its only reader), joins another axis, or has an input that is a constant or
// of unknown shape; a convolution with a group, a weight that is not a constant, or the
// Concat as an input other than X; non-float types (the int8 forms quantize each tensor,
// and a partial sum would need a scale of its own).
#include <algorithm>
#include <cstring>

#include "ir/cost.h"
#include "passes/epilogue_util.h"
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

// The Concat producing `x` when it joins static tensors along axis 1 of rank >= 3 and
// `x` is not a graph output (and, with `single_reader`, is read once); nullptr (and *why)
// otherwise.
Node* ChannelConcatOf(const Value* x, bool single_reader, std::string* why) {
  Node* concat = ProducerOf(x, OpKind::kConcat);
  if (!concat) {
    *why = "the input is not a Concat";
    return nullptr;
  }
  if (x->is_graph_output() || (single_reader && !HasSingleUse(x))) {
    *why = fmt::format("{} has other readers", concat->Label());
    return nullptr;
  }
  if (!x->type.IsStatic() || x->type.rank() < 3) {
    *why = fmt::format("{}: output not a static tensor of rank >= 3", concat->Label());
    return nullptr;
  }
  int64_t axis = concat->attrs.GetInt("axis", 0);
  if (axis < 0) axis += x->type.rank();
  if (axis != 1) {
    *why = fmt::format("{} joins axis {}, not the channels", concat->Label(), axis);
    return nullptr;
  }
  if (concat->num_inputs() < 2) {
    *why = fmt::format("{} has one input", concat->Label());
    return nullptr;
  }
  for (int i = 0; i < concat->num_inputs(); ++i) {
    const Value* v = concat->input(i);
    if (!v || v->is_constant() || !v->type.IsStatic()) {
      *why = fmt::format("{}: input {} is absent, constant or not static", concat->Label(), i);
      return nullptr;
    }
  }
  return concat;
}

// w[:, begin:end, ...] of a constant weight [OC, IC, k...].
Tensor SliceInputChannels(const Tensor& w, int64_t begin, int64_t end) {
  Dims dims = w.dims();
  const int64_t ic = dims[1];
  int64_t inner = 1;
  for (size_t i = 2; i < dims.size(); ++i) inner *= dims[i];
  dims[1] = end - begin;
  Tensor out(w.dtype(), dims);
  const size_t es = DTypeSize(w.dtype());
  const auto* src = static_cast<const char*>(w.raw());
  auto* dst = static_cast<char*>(out.raw());
  const size_t chunk = static_cast<size_t>((end - begin) * inner) * es;
  for (int64_t o = 0; o < dims[0]; ++o) {
    std::memcpy(dst + o * chunk, src + (o * ic + begin) * inner * es, chunk);
  }
  return out;
}

// Whether `conv` (a reader of the Concat output x) can be split into partial convolutions.
bool Splittable(const Node* conv, const Value* x, std::string* why) {
  if (conv->op() != OpKind::kConv && conv->op() != OpKind::kFusedConv) {
    *why = fmt::format("the Concat is also read by {}", conv->Label());
    return false;
  }
  if (conv->input(0) != x) {
    *why = fmt::format("{} reads the Concat as another input than X", conv->Label());
    return false;
  }
  for (int i = 1; i < conv->num_inputs(); ++i) {
    if (conv->input(i) == x) {
      *why = fmt::format("{} reads the Concat as input {} too", conv->Label(), i);
      return false;
    }
  }
  if (conv->attrs.GetInt("group", 1) != 1) {
    *why = fmt::format("{}: group {} (the channels of a group must stay together)", conv->Label(),
                       conv->attrs.GetInt("group", 1));
    return false;
  }
  const Value* w = conv->input(1);
  const Value* y = conv->output(0);
  if (!w || !w->is_constant() || w->type.rank() != x->type.rank()) {
    *why = fmt::format("{}: the weight is not a constant of the input's rank", conv->Label());
    return false;
  }
  if (conv->num_outputs() != 1 || !y->type.IsStatic()) {
    *why = fmt::format("{}: output shape not static", conv->Label());
    return false;
  }
  if (y->type.dtype != DType::kF32 && y->type.dtype != DType::kF16) {
    *why = fmt::format("{}: {} output (only float partial sums chain)", conv->Label(), DTypeName(y->type.dtype));
    return false;
  }
  return true;
}

// Makes the partial convolutions of `conv` (reading `concat`'s output), appending them to
// `made`; returns the last one's output, or nullptr (with *why) when a node cannot be made.
Value* MakeParts(Graph& g, Node* conv, const Node* concat, std::vector<Node*>* made, std::string* why) {
  auto form = ToFusedForm(g, conv, why);
  if (!form) return nullptr;
  const ActivationSpec activation = form->activation();
  const Value* w = conv->input(1);
  const int n = concat->num_inputs();
  Value* previous = nullptr;
  int64_t begin = 0;
  for (int i = 0; i < n; ++i) {
    Value* xi = concat->input(i);
    const int64_t end = begin + xi->type.dims[1];
    FusedForm part = *form;
    part.inputs[0] = xi;
    part.inputs[1] = g.AddConstant(g.FreshName(fmt::format("{}.in{}", w->name(), i)),
                                   SliceInputChannels(w->constant(), begin, end));
    if (i > 0) {
      part.inputs[2] = nullptr;  // the bias is in the first part
      part.inputs[3] = previous;
    }
    part.set_activation(i + 1 == n ? activation : ActivationSpec{});
    std::vector<Value*> inputs = part.inputs;
    while (!inputs.empty() && inputs.back() == nullptr) inputs.pop_back();
    auto node = AddInferredNode(g, OpKind::kFusedConv, g.FreshName(fmt::format("{}.part{}", conv->name(), i)),
                                inputs, part.attrs, 1, conv);
    if (!node.ok()) {
      *why = node.status().message();
      return nullptr;
    }
    AbsorbProvenance(*node, concat);
    made->push_back(*node);
    previous = (*node)->output(0);
    begin = end;
  }
  return previous;
}

// Every reader of the Concat is a convolution: all of them split, or none.
bool DissolveIntoConvs(Graph& g, Node* at, PassContext& ctx, std::string* why) {
  Value* x = at->input(0);
  if (!x) {
    *why = "no input";
    return false;
  }
  Node* concat = ChannelConcatOf(x, /*single_reader=*/false, why);
  if (!concat) return false;
  std::vector<Node*> readers;
  int64_t out_elems = 0;
  for (const Use& u : x->uses()) {
    if (std::find(readers.begin(), readers.end(), u.node) != readers.end()) continue;
    if (!Splittable(u.node, x, why)) return false;
    readers.push_back(u.node);
    out_elems += NumElements(u.node->output(0)->type.dims);
  }
  if (readers.front() != at) {
    *why = "not the Concat's first reader";
    return false;
  }
  const int n = concat->num_inputs();
  const int64_t in_elems = NumElements(x->type.dims);
  if ((n - 1) * out_elems >= in_elems) {
    *why = fmt::format("{} parts would pass over the {} output elements of {} reader(s) {} more time(s), no "
                       "fewer than the {} elements the Concat copies",
                       n, out_elems, readers.size(), n - 1, in_elems);
    return false;
  }
  // All parts first (they read only the Concat's inputs and each other, so a failure
  // leaves nothing behind once they are removed), then the readers' outputs move to them.
  std::vector<Node*> made;
  std::vector<Value*> sums;
  for (Node* conv : readers) {
    Value* sum = MakeParts(g, conv, concat, &made, why);
    if (!sum) {
      for (auto it = made.rbegin(); it != made.rend(); ++it) g.RemoveNode(*it);
      return false;
    }
    sums.push_back(sum);
  }
  for (size_t i = 0; i < readers.size(); ++i) {
    // The sum is an intermediate value, so it can take over a graph output's name.
    EDGEC_CHECK(ReplaceValue(g, readers[i]->output(0), sums[i]));
  }
  ctx.stats().nodes_added += static_cast<int64_t>(made.size());
  ctx.ExplainLine(fmt::format("dissolve-concat: {} -> {} reader(s) split into {} partial convolutions each, {} "
                              "Concat elements not copied",
                              concat->Label(), readers.size(), n, in_elems));
  return true;
}

bool PoolAboveConcat(Graph& g, Node* pool, PassContext&, std::string* why) {
  Value* x = pool->input(0);
  if (!x) {
    *why = "no input";
    return false;
  }
  Node* concat = ChannelConcatOf(x, /*single_reader=*/true, why);
  if (!concat) return false;
  if (pool->num_outputs() != 1) {
    *why = fmt::format("{} also returns indices", pool->Label());
    return false;
  }
  std::vector<Node*> made;
  auto undo = [&] {
    for (auto it = made.rbegin(); it != made.rend(); ++it) g.RemoveNode(*it);
  };
  std::vector<Value*> pooled;
  for (int i = 0; i < concat->num_inputs(); ++i) {
    auto p = AddInferredNode(g, pool->op(), g.FreshName(fmt::format("{}.part{}", pool->name(), i)),
                             {concat->input(i)}, pool->attrs, 1, pool);
    if (!p.ok()) {
      undo();
      *why = p.status().message();
      return false;
    }
    made.push_back(*p);
    pooled.push_back((*p)->output(0));
  }
  auto joined = AddInferredNode(g, OpKind::kConcat, g.FreshName(concat->name()), pooled, concat->attrs, 1, concat);
  if (!joined.ok() || (*joined)->output(0)->type.dims != pool->output(0)->type.dims) {
    if (joined.ok()) made.push_back(*joined);
    undo();
    *why = joined.ok() ? "the pooled Concat has another shape" : joined.status().message();
    return false;
  }
  made.push_back(*joined);
  if (!ReplaceValue(g, pool->output(0), (*joined)->output(0))) {
    undo();
    *why = fmt::format("{}: its output cannot be replaced", pool->Label());
    return false;
  }
  return true;
}

}  // namespace

Status RunDissolveConcat(Graph& g, PassContext& ctx, const PassOptions&) {
  static const std::vector<Pattern> patterns = {
      {"Concat -> Conv", {OpKind::kConv, OpKind::kFusedConv}, DissolveIntoConvs},
      {"Concat -> pool", {OpKind::kMaxPool, OpKind::kAveragePool, OpKind::kGlobalAveragePool, OpKind::kGlobalMaxPool},
       PoolAboveConcat},
  };
  const int64_t before = GraphCopyBytes(g);
  RETURN_IF_ERROR(ApplyPatterns(g, patterns, ctx));
  ctx.stats().copy_bytes_removed = before - GraphCopyBytes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
