// layout: chooses physical layouts. Two parts, both keeping every logical value as it was
// (the reference executor ignores physical layouts, so its numbers cannot change):
//
// 1. Logical transposes are cancelled (layout_transposes.cc).
//
// 2. Layout assignment (`to=nhwc`, the default; `to=nchw` keeps everything row-major and
//    does only part 1). Rank-4 activations are grouped into regions: maximal sets of values
//    connected through nodes that can run in NHWC (Conv/FusedConv/ConvTranspose, pools,
//    BatchNormalization, InstanceNormalization, Resize, elementwise ops whose other inputs
//    are constants or rank-4 values, Concat/Split/Slice/Pad, reductions). A region with at
//    least one NHWC-preferring node (convolution, pool, normalization, resize) becomes NHWC
//    when its conversions are cheap enough (the rule below): every value of it gets
//    Layout::kNHWC, and each crossing of its boundary is an explicit conversion node, a
//    Transpose with the identity perm marked edgec_relayout=1 (see types.h), whose output
//    bytes NodeCopyBytes counts. Crossings that need no copy get no conversion:
//      - a Conv with at most 4 input channels reads a row-major input directly (oneDNN's
//        first-layer kernels read plain nchw and write nhwc/blocked): an image input needs
//        no conversion;
//      - a Reshape/Flatten/Squeeze/Unsqueeze whose NHWC input reads as dense row-major
//        (NHWC [N, C, 1, 1] after a global pool is the row-major [N, C, 1, 1]) takes it as
//        it is; `views` then marks it a view.
//
//    Before:  %c = Conv(%img[1, 3, 224, 224], %w); %r = Relu(%c); %p = GlobalAveragePool(%r)
//             %f = Flatten(%p); %y = Gemm(%f, ...)
//    After:   the same nodes; %c, %r, %p are NHWC; no conversion is needed.
//
//    Before:  %c = Conv(%x, %w); %s = Softmax(%c) {axis=1}; %y = Add(%c, %s)
//    After:   %c: NHWC; %c.rowmajor = Transpose(%c) {edgec_relayout=1, perm=[0, 1, 2, 3]};
//             %s = Softmax(%c.rowmajor); %s.nhwc = Transpose(%s) {edgec_relayout=1, ...}
//             %y = Add(%c, %s.nhwc)     (when max_copy_per_mac allows the two conversions)
//
//    The cost rule: a region goes NHWC when its copying conversions cost at most
//    `max_copy_per_mac` bytes per MAC of the region (default 0: only regions that need no
//    copying conversion, as the optimizer's measure is copy bytes per inference; the
//    break-even for speed on a CPU is derived in docs/optimizer_layout.md). Concats that
//    would lose their in-place placement are charged against their own budget,
//    `max_concat_copy_per_mac` (default: max_copy_per_mac; -O3 sets 0.066, the measurements
//    are in docs/optimizer_layout.md). A value with one channel or one pixel (and no
//    padding) has the same bytes in both layouts: its conversion is a view and costs
//    nothing (tests/passes/layout_test.cc, OneChannelOutputIsFree). Values whose shape is
//    not static stay row-major. `pad_channels=16` rounds NHWC channels up to a multiple of 16 elements
//    (aligned kernels; the producer writes the zero padding); default 1, no padding.
//    Blocked NC16HW16 is not assigned (not done): strides cannot describe blocked memory
//    (physical_layout.h), and oneDNN picks blocking inside a Conv primitive by itself.
#include <algorithm>
#include <cstring>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "ir/cost.h"
#include "ir/physical_layout.h"
#include "passes/pass.h"
#include "passes/pass_util.h"
#include "passes/layout_transposes.h"
#include "passes/pattern.h"

namespace edgec::passes {
namespace {

int64_t Bytes(const Value* v) {
  return NumElements(v->type.dims) * static_cast<int64_t>(DTypeSize(v->type.dtype));
}

bool IsRank4Activation(const Value* v) {
  return v && !v->is_constant() && v->type.rank_known && v->type.rank() == 4 && v->type.IsStatic();
}

// How a node takes part in an NHWC region.
struct Capability {
  bool preferred = false;          // a reason to use NHWC (convolution, pool, norm)
  std::vector<int> layout_inputs;  // inputs that must share the node's layout
  std::vector<int> any_inputs;     // inputs read in whatever layout they have
};

std::optional<Capability> NhwcCapability(const Node& n) {
  Capability c;
  const Value* x = n.input(0);
  // A binary op may take its constant first (PaddleOCR's `scale * x`): its activation
  // operands decide below.
  if (!IsRank4Activation(x) && !(IsBinaryElementwise(n.op()) && x && x->is_constant())) return std::nullopt;
  for (const Value* o : n.outputs()) {
    if (o->type.rank_known && o->type.rank() == 4 && !o->type.IsStatic()) return std::nullopt;
  }
  switch (n.op()) {
    case OpKind::kConv: case OpKind::kFusedConv: case OpKind::kConvTranspose: {
      const Value* w = n.input(1);
      if (!w || !w->is_constant() || w->type.rank() != 4) return std::nullopt;
      c.preferred = true;
      // Few input channels: the first-layer kernels read plain nchw directly.
      (x->type.dims[1] <= 4 ? c.any_inputs : c.layout_inputs).push_back(0);
      if (n.op() == OpKind::kFusedConv && n.input(3)) {
        if (!IsRank4Activation(n.input(3))) return std::nullopt;
        c.layout_inputs.push_back(3);
      }
      return c;
    }
    case OpKind::kQLinearConv: {  // int8 convolution: x is input 0, W input 3
      const Value* w = n.input(3);
      if (!w || !w->is_constant() || w->type.rank() != 4) return std::nullopt;
      c.preferred = true;
      (x->type.dims[1] <= 4 ? c.any_inputs : c.layout_inputs).push_back(0);
      return c;
    }
    case OpKind::kChannelShuffle:  // a permutation of channels: the same in either layout
      c.layout_inputs.push_back(0);
      return c;
    case OpKind::kQuantizedLookup:  // elementwise, the table is a constant
      if (!n.input(1) || !n.input(1)->is_constant()) return std::nullopt;
      c.layout_inputs.push_back(0);
      return c;
    case OpKind::kQLinearAdd: case OpKind::kQLinearMul: {
      // int8 add/mul, A and B in one layout, the rest constants: same shapes, or one operand
      // [N or 1, C, 1, 1] per channel of the other (a squeeze-excitation gate), which the fast
      // kernel reads in NHWC and row-major alike.
      const Value* b = n.input(3);
      if (!IsRank4Activation(b)) return std::nullopt;
      const Dims& y = n.output(0)->type.dims;
      auto fits = [&](const Dims& d) {
        return d == y || (y.size() == 4 && (d[0] == y[0] || d[0] == 1) && d[1] == y[1] && d[2] == 1 && d[3] == 1);
      };
      if (!fits(x->type.dims) || !fits(b->type.dims) || (x->type.dims != y && b->type.dims != y)) return std::nullopt;
      for (int i : {1, 2, 4, 5, 6, 7}) {
        if (i < n.num_inputs() && n.input(i) && !n.input(i)->is_constant()) return std::nullopt;
      }
      c.layout_inputs = {0, 3};
      return c;
    }
    case OpKind::kQuantizeLinear: case OpKind::kDequantizeLinear:  // per tensor: elementwise
      for (int i = 1; i < n.num_inputs(); ++i) {
        if (n.input(i) && (!n.input(i)->is_constant() || NumElements(n.input(i)->type.dims) != 1)) return std::nullopt;
      }
      c.layout_inputs.push_back(0);
      return c;
    case OpKind::kQLinearGlobalAveragePool:  // scales and zero points are constants
    case OpKind::kQLinearAveragePool:
      for (int i = 1; i < n.num_inputs(); ++i) {
        if (n.input(i) && !n.input(i)->is_constant()) return std::nullopt;
      }
      c.preferred = true;
      c.layout_inputs.push_back(0);
      return c;
    case OpKind::kMaxPool: case OpKind::kAveragePool: case OpKind::kGlobalAveragePool:
    case OpKind::kGlobalMaxPool: case OpKind::kBatchNormalization:
    case OpKind::kInstanceNormalization: case OpKind::kResize:
      if (n.num_outputs() != 1) return std::nullopt;
      c.preferred = true;
      c.layout_inputs.push_back(0);
      return c;
    case OpKind::kSplit: case OpKind::kSlice: case OpKind::kPad:
    case OpKind::kReduceMean: case OpKind::kReduceSum: case OpKind::kReduceMax:
    case OpKind::kReduceMin: case OpKind::kReduceProd: case OpKind::kReduceL2:
      for (int i = 1; i < n.num_inputs(); ++i) {
        if (n.input(i) && !n.input(i)->is_constant()) return std::nullopt;
      }
      c.layout_inputs.push_back(0);
      return c;
    case OpKind::kConcat:
      for (int i = 0; i < n.num_inputs(); ++i) {
        if (!IsRank4Activation(n.input(i))) return std::nullopt;
        c.layout_inputs.push_back(i);
      }
      return c;
    default:
      break;
  }
  if (IsUnaryElementwise(n.op())) {
    if (n.num_outputs() != 1) return std::nullopt;
    for (int i = 1; i < n.num_inputs(); ++i) {
      if (n.input(i) && !n.input(i)->is_constant()) return std::nullopt;
    }
    c.layout_inputs.push_back(0);
    return c;
  }
  if (IsBinaryElementwise(n.op())) {
    if (!n.output(0)->type.rank_known || n.output(0)->type.rank() != 4) return std::nullopt;
    for (int i = 0; i < n.num_inputs(); ++i) {
      const Value* v = n.input(i);
      if (!v || v->is_constant()) continue;
      if (!IsRank4Activation(v)) return std::nullopt;
      c.layout_inputs.push_back(i);
    }
    if (c.layout_inputs.empty()) return std::nullopt;  // constants only: fold-constants' job
    return c;
  }
  return std::nullopt;
}

struct UnionFind {
  std::unordered_map<const Value*, const Value*> parent;
  const Value* Find(const Value* v) {
    auto it = parent.find(v);
    if (it == parent.end()) {
      parent[v] = v;
      return v;
    }
    if (it->second == v) return v;
    const Value* root = Find(it->second);
    parent[v] = root;
    return root;
  }
  void Join(const Value* a, const Value* b) { parent[Find(a)] = Find(b); }
};

struct Region {
  std::vector<Value*> values;
  bool preferred = false;
  int64_t macs = 0;
  int64_t conversion_bytes = 0;  // boundary conversions
  int64_t concat_bytes = 0;      // Concats no longer in place
  // What staying row-major copies anyway: int8 convolutions and pools reorder their
  // row-major activations to NHWC inside the kernel (oneDNN's int8 kernels are NHWC only).
  int64_t row_major_bytes = 0;
  std::vector<std::string> reasons;  // where the conversions would be
};

class LayoutAssigner {
 public:
  LayoutAssigner(Graph& g, PassContext& ctx, int64_t pad_channels, double max_copy_per_mac,
                 double max_concat_copy_per_mac)
      : g_(g), ctx_(ctx), pad_(pad_channels), max_copy_per_mac_(max_copy_per_mac),
        max_concat_copy_per_mac_(max_concat_copy_per_mac) {}

  Status Run() {
    FindRegions();
    for (Region& r : regions_) {
      Cost(r);
      const double macs = static_cast<double>(r.macs);
      bool cheap = (r.conversion_bytes == 0 ||
                    static_cast<double>(r.conversion_bytes) <= max_copy_per_mac_ * macs ||
                    r.conversion_bytes <= r.row_major_bytes) &&
                   (r.concat_bytes == 0 || static_cast<double>(r.concat_bytes) <= max_concat_copy_per_mac_ * macs);
      std::string head = fmt::format("layout: region of {} values at '{}' ({} MACs)",
                                     r.values.size(), r.values[0]->name(), r.macs);
      if (!r.preferred) {
        ctx_.ExplainLine(head + ": row-major (no convolution, pool or normalization)");
        continue;
      }
      if (!cheap) {
        ctx_.ExplainLine(fmt::format("{}: row-major: conversions would copy {} bytes ({})", head,
                                     r.conversion_bytes + r.concat_bytes, fmt::join(r.reasons, "; ")));
        ctx_.stats().rewrites["region kept row-major (conversions would copy)"]++;
        continue;
      }
      ctx_.ExplainLine(fmt::format("{}: NHWC, conversions copy {} bytes", head, r.conversion_bytes + r.concat_bytes));
      RETURN_IF_ERROR(Convert(r));
      ctx_.stats().rewrites["NHWC region"]++;
    }
    return g_.TopoSort();
  }

 private:
  // The layout values of a capable node: its layout inputs and rank-4 outputs.
  static std::vector<Value*> LayoutValues(const Node* n, const Capability& c) {
    std::vector<Value*> vs;
    for (int i : c.layout_inputs) vs.push_back(n->input(i));
    for (Value* o : n->outputs()) {
      if (IsRank4Activation(o)) vs.push_back(o);
    }
    return vs;
  }

  void FindRegions() {
    UnionFind uf;
    std::vector<Value*> order;
    std::set<const Value*> seen;
    std::vector<Node*> capable;
    for (Node* n : g_.nodes()) {
      auto c = NhwcCapability(*n);
      if (!c) continue;
      std::vector<Value*> vs = LayoutValues(n, *c);
      if (vs.empty()) continue;
      caps_[n] = *c;
      capable.push_back(n);
      for (Value* v : vs) {
        if (seen.insert(v).second) order.push_back(v);
        uf.Join(v, vs[0]);
      }
    }
    std::map<const Value*, int> index;
    for (Value* v : order) {
      const Value* root = uf.Find(v);
      if (!index.count(root)) {
        index[root] = static_cast<int>(regions_.size());
        regions_.emplace_back();
      }
      regions_[index[root]].values.push_back(v);
      region_of_[v] = index[root];
    }
    for (Node* n : capable) {
      const Capability& c = caps_[n];
      Region& r = regions_[region_of_[LayoutValues(n, c)[0]]];
      r.preferred |= c.preferred;
      int64_t m = NodeMacs(*n);
      if (m > 0) r.macs += m;
      const bool int8_pool = (n->op() == OpKind::kMaxPool || n->op() == OpKind::kGlobalMaxPool) &&
                             (n->input(0)->type.dtype == DType::kU8 || n->input(0)->type.dtype == DType::kI8);
      if ((n->op() == OpKind::kQLinearConv && !c.layout_inputs.empty()) || int8_pool) {
        auto bytes = [](const Value* v) { return NumElements(v->type.dims) * static_cast<int64_t>(DTypeSize(v->type.dtype)); };
        r.row_major_bytes += bytes(n->input(0)) + bytes(n->output(0));
      }
    }
  }

  // Whether `v` is written in the region's layout (by a capable node).
  bool ProducedInRegion(const Value* v) const {
    Node* p = v->producer();
    return p && caps_.count(p);
  }

  // Whether use `u` reads its value in the region's layout.
  bool ReadsInRegion(const Use& u) const {
    auto it = caps_.find(u.node);
    if (it == caps_.end()) return false;
    const auto& li = it->second.layout_inputs;
    return std::find(li.begin(), li.end(), u.input_index) != li.end();
  }

  // Uses of an NHWC `v` outside the region that still need no conversion.
  bool ReadsAnyLayout(const Value* v, const Use& u) const {
    auto it = caps_.find(u.node);
    if (it != caps_.end()) {
      const auto& ai = it->second.any_inputs;
      if (std::find(ai.begin(), ai.end(), u.input_index) != ai.end()) return true;
    }
    if (IsReshapeLike(u.node->op()) && u.input_index == 0 && u.node->output(0)->type.IsStatic()) {
      auto s = LogicalStrides(v->type, NhwcLayout(v->type.dims, pad_));
      auto out = s ? ReshapeStrides(v->type.dims, *s, u.node->output(0)->type.dims) : std::nullopt;
      return out && IsDenseRowMajor(u.node->output(0)->type.dims, *out);
    }
    return false;
  }

  std::vector<Use> UsesNeedingRowMajor(const Value* v) const {
    std::vector<Use> out;
    for (const Use& u : v->uses()) {
      if (!ReadsInRegion(u) && !ReadsAnyLayout(v, u)) out.push_back(u);
    }
    return out;
  }

  // Whether `concat` is concatenated in place (views) when row-major but not when NHWC:
  // along the outermost non-1 axis of NCHW, every input a fresh single-use node output,
  // and an axis whose NHWC slots are not contiguous (channels, when H·W > 1).
  static bool LosesInPlaceInNhwc(const Node* concat) {
    const Value* y = concat->output(0);
    int64_t axis = concat->attrs.GetInt("axis", 0);
    if (axis < 0) axis += y->type.rank();
    for (int i = 0; i < axis; ++i) {
      if (y->type.dims[i] != 1) return false;
    }
    // Still in place in NHWC when every axis outside `axis` in (N, H, W, C) order is 1.
    const int nhwc_order[4] = {0, 2, 3, 1};
    bool nhwc_in_place = true;
    for (int k = 0; k < 4 && nhwc_order[k] != axis; ++k) nhwc_in_place &= y->type.dims[nhwc_order[k]] == 1;
    if (nhwc_in_place) return false;
    std::set<const Value*> seen;
    for (const Value* x : concat->inputs()) {
      const Node* p = x->producer();
      if (!p || !HasSingleUse(x) || !seen.insert(x).second) return false;
      switch (p->op()) {
        case OpKind::kReshape: case OpKind::kFlatten: case OpKind::kSqueeze: case OpKind::kUnsqueeze:
        case OpKind::kTranspose: case OpKind::kSlice: case OpKind::kSplit: case OpKind::kConcat:
        case OpKind::kIdentity: case OpKind::kDropout:
          return false;
        default:
          break;
      }
    }
    return true;
  }

  // Whether v's NHWC bytes are its row-major bytes (one channel, or one pixel, unpadded):
  // its conversion is then a view (views.cc), no copy.
  bool SameBytesInNhwc(const Value* v) const {
    if (!v->type.IsStatic()) return false;
    auto s = LogicalStrides(v->type, NhwcLayout(v->type.dims, pad_));
    if (!s) return false;
    const Strides rm = RowMajorStrides(v->type.dims);
    for (int i = 0; i < v->type.rank(); ++i) {
      if (v->type.dims[i] != 1 && (*s)[i] != rm[i]) return false;
    }
    return true;
  }

  void Cost(Region& r) {
    for (const auto& [n, c] : caps_) {
      if (n->op() == OpKind::kConcat && region_of_.at(n->output(0)) == &r - regions_.data() &&
          LosesInPlaceInNhwc(n)) {
        r.concat_bytes += Bytes(n->output(0));
        r.reasons.push_back(fmt::format("{} would no longer be in place", n->Label()));
      }
    }
    for (Value* v : r.values) {
      if (SameBytesInNhwc(v)) continue;
      if (!ProducedInRegion(v)) {
        r.conversion_bytes += Bytes(v);
        r.reasons.push_back(fmt::format("'{}' to NHWC", v->name()));
        continue;
      }
      std::vector<Use> rm = UsesNeedingRowMajor(v);
      if (!rm.empty() || v->is_graph_output()) {
        r.conversion_bytes += Bytes(v);
        r.reasons.push_back(fmt::format("'{}' to row-major for {}", v->name(),
                                        rm.empty() ? std::string("the graph output") : rm[0].node->Label()));
      }
    }
  }

  StatusOr<Value*> AddConversion(Value* v, PhysicalLayout to, const std::string& suffix) {
    Attributes a;
    a.Set("perm", std::vector<int64_t>{0, 1, 2, 3});
    a.Set(std::string(kRelayoutAttr), int64_t{1});
    const Node* origin = v->producer();
    ASSIGN_OR_RETURN(Node* n, AddInferredNode(g_, OpKind::kTranspose, g_.FreshName(v->name() + suffix),
                                              {v}, a, 1, origin));
    if (!origin && !v->uses().empty()) n->provenance = v->uses()[0].node->provenance;
    n->output(0)->physical = std::move(to);
    ctx_.stats().nodes_added++;
    return n->output(0);
  }

  Status Convert(Region& r) {
    for (Value* v : r.values) {
      PhysicalLayout nhwc = NhwcLayout(v->type.dims, pad_);
      if (!ProducedInRegion(v)) {
        // A graph input or row-major producer: one conversion serves the region's readers.
        std::vector<Use> region_uses;
        for (const Use& u : v->uses()) {
          if (ReadsInRegion(u)) region_uses.push_back(u);
        }
        ASSIGN_OR_RETURN(Value* c, AddConversion(v, nhwc, ".nhwc"));
        for (const Use& u : region_uses) g_.SetInput(u.node, u.input_index, c);
        ctx_.stats().rewrites["conversion to NHWC"]++;
        continue;
      }
      v->physical = nhwc;
      std::vector<Use> rm_uses = UsesNeedingRowMajor(v);
      if (rm_uses.empty() && !v->is_graph_output()) continue;
      ASSIGN_OR_RETURN(Value* c, AddConversion(v, PhysicalLayout(), ".rowmajor"));
      for (const Use& u : rm_uses) g_.SetInput(u.node, u.input_index, c);
      if (v->is_graph_output()) {
        // The graph output keeps its name and row-major layout: the conversion produces it.
        Node* conv = c->producer();
        std::vector<Use> others;
        for (const Use& u : v->uses()) {
          if (u.node != conv) others.push_back(u);
        }
        g_.ReplaceAllUses(v, c);
        g_.SetInput(conv, 0, v);
        for (const Use& u : others) g_.SetInput(u.node, u.input_index, v);
        std::string name = v->name();
        RETURN_IF_ERROR(g_.RenameValue(v, g_.FreshName(name + ".nhwc")));
        RETURN_IF_ERROR(g_.RenameValue(c, name));
      }
      ctx_.stats().rewrites["conversion to row-major"]++;
    }
    return Status::Ok();
  }

  Graph& g_;
  PassContext& ctx_;
  int64_t pad_;
  double max_copy_per_mac_;
  double max_concat_copy_per_mac_;
  std::map<Node*, Capability> caps_;
  std::vector<Region> regions_;
  std::unordered_map<const Value*, int> region_of_;
};

}  // namespace

Status RunLayout(Graph& g, PassContext& ctx, const PassOptions& options) {
  std::string to = options.Get("to", "nhwc");
  if (to != "nhwc" && to != "nchw") {
    return InvalidArgument("layout: to={} is not supported (nhwc, or nchw to keep row-major; "
                           "blocked NC16HW16 is not assigned by this pass)", to);
  }
  char* end = nullptr;
  std::string pad_text = options.Get("pad_channels", "1");
  int64_t pad = std::strtoll(pad_text.c_str(), &end, 10);
  if (*end != '\0' || pad < 1) {
    return InvalidArgument("layout: pad_channels={} must be a whole number >= 1", pad_text);
  }
  std::string ratio_text = options.Get("max_copy_per_mac", "0");
  double max_copy_per_mac = std::strtod(ratio_text.c_str(), &end);
  if (*end != '\0' || !(max_copy_per_mac >= 0)) {
    return InvalidArgument("layout: max_copy_per_mac={} must be a number >= 0", ratio_text);
  }
  std::string concat_text = options.Get("max_concat_copy_per_mac", ratio_text);
  double max_concat_copy_per_mac = std::strtod(concat_text.c_str(), &end);
  if (*end != '\0' || !(max_concat_copy_per_mac >= 0)) {
    return InvalidArgument("layout: max_concat_copy_per_mac={} must be a number >= 0", concat_text);
  }

  const std::vector<Pattern> patterns = TransposeCancelPatterns();
  int64_t before = GraphCopyBytes(g);
  RETURN_IF_ERROR(ApplyPatterns(g, patterns, ctx));
  if (to == "nhwc") {
    LayoutAssigner assigner(g, ctx, pad, max_copy_per_mac, max_concat_copy_per_mac);
    RETURN_IF_ERROR(assigner.Run());
  }
  int remaining = 0;
  for (const Node* n : g.nodes()) {
    if (n->op() == OpKind::kTranspose && !IsRelayout(*n)) ++remaining;
  }
  if (remaining) ctx.stats().rewrites["Transposes remaining"] = remaining;
  ctx.stats().copy_bytes_removed = before - GraphCopyBytes(g);
  return Status::Ok();
}

}  // namespace edgec::passes