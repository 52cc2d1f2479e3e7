// fuse-channel-shuffle: shufflenet's channel shuffle as exporters write it becomes one
// ChannelShuffle, which runs in either layout (three reshaping steps through a rank-5 view
// would pin the surrounding region to row-major and cost a copy each way in NHWC).
//   Reshape X [N, C, rest...] to [N, g, C/g, rest...], Transpose swapping dims 1 and 2,
//   Reshape back to [N, C, rest...]; the intermediates have no other readers.
//
// Before:  %a = Reshape(%x, [1, 2, 58, 28, 28]); %b = Transpose(%a) {perm=[0, 2, 1, 3, 4]}
//          %y = Reshape(%b, [1, 116, 28, 28])
// After:   %y = ChannelShuffle(%x) {group=2}
#include "passes/fuse_composite_util.h"
#include "passes/pass_util.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

bool FuseChannelShuffle(Graph& g, Node* transpose, PassContext& ctx, std::string* why) {
  Node* split = ProducerOf(transpose->input(0), OpKind::kReshape);
  Node* merge = SoleConsumer(transpose->output(0));
  if (!split || !merge || merge->op() != OpKind::kReshape) {
    *why = "the Transpose is not between two Reshapes";
    return false;
  }
  Value* x = split->input(0);
  const TensorType &xt = x->type, &vt = transpose->input(0)->type, &yt = merge->output(0)->type;
  if (!xt.IsStatic() || !vt.IsStatic() || !yt.IsStatic()) {
    *why = "shapes are not all known";
    return false;
  }
  const int rank = xt.rank();
  // The view splits the channels into [g, C/g] and keeps every other dim.
  bool view_ok = rank >= 3 && vt.rank() == rank + 1 && vt.dims[0] == xt.dims[0] &&
                 vt.dims[1] * vt.dims[2] == xt.dims[1] && yt.dims == xt.dims;
  for (int d = 2; view_ok && d < rank; ++d) view_ok = vt.dims[d + 1] == xt.dims[d];
  if (!view_ok) {
    *why = "the Reshapes do not split the channels (dim 1) into two and merge them back";
    return false;
  }
  std::vector<int64_t> swap = {0, 2, 1};
  for (int d = 3; d <= rank; ++d) swap.push_back(d);
  if (transpose->attrs.GetInts("perm") != swap) {
    *why = "the Transpose does not swap dims 1 and 2 only";
    return false;
  }
  if (!HasSingleUse(split->output(0))) {
    *why = "the first Reshape's output has other readers";
    return false;
  }
  const std::vector<Node*> nodes = {split, transpose, merge};
  Attributes attrs;
  attrs.Set("group", vt.dims[1]);
  auto fused = AddInferredNode(g, OpKind::kChannelShuffle, FusedNodeName(nodes, "ChannelShuffle"), {x},
                               std::move(attrs), 1, split);
  if (!fused.ok()) {
    *why = fused.status().message();
    return false;
  }
  AbsorbAllProvenance(*fused, nodes);
  return CommitFusion(g, ctx, merge->output(0), *fused, static_cast<int>(nodes.size()), why);
}

}  // namespace

Status RunFuseChannelShuffle(Graph& g, PassContext& ctx, const PassOptions&) {
  return ApplyPatterns(g, {{"ChannelShuffle", {OpKind::kTranspose}, FuseChannelShuffle}}, ctx);
}

}  // namespace edgec::passes
