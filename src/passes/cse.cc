// cse: common-subexpression elimination. Two nodes with the same op, attributes and
// inputs compute the same values; the later one is replaced by the earlier. Identical
// small constants are merged first so that nodes reading copies of them match too.
//
// Before:  %a = Shape(%x); %b = Shape(%x); %y = Concat(%a, %b)
// After:   %a = Shape(%x); %y = Concat(%a, %a)
#include <cstring>
#include <unordered_map>

#include "passes/pass.h"
#include "passes/pass_util.h"

namespace edgec::passes {
namespace {

constexpr int64_t kMaxMergedConstantBytes = 1 << 20;

std::string ConstantKey(const Tensor& t) {
  std::string k = t.TypeString();
  k.append(static_cast<const char*>(t.raw()), t.nbytes());
  return k;
}

std::string NodeKey(const Node* n) {
  std::string k = fmt::format("{}|{}|", static_cast<int>(n->op()), n->num_outputs());
  for (const Value* v : n->inputs()) k += fmt::format("{}|", static_cast<const void*>(v));
  for (auto& [name, v] : n->attrs.map()) k += name + "=" + AttrValueToString(v) + "|";
  return k;
}

}  // namespace

Status RunCse(Graph& g, PassContext& ctx, const PassOptions&) {
  // Merge identical constants.
  std::unordered_map<std::string, Value*> constants;
  for (Value* c : g.constants()) {
    if (c->is_graph_output() || static_cast<int64_t>(c->constant().nbytes()) > kMaxMergedConstantBytes) continue;
    auto [it, inserted] = constants.emplace(ConstantKey(c->constant()), c);
    if (!inserted) {
      g.ReplaceAllUses(c, it->second);
      ctx.stats().rewrites["merged constants"]++;
    }
  }
  // Merge nodes, in topological order so chains of duplicates collapse in one sweep.
  std::unordered_map<std::string, Node*> seen;
  for (Node* n : g.nodes()) {
    std::string key = NodeKey(n);
    // Tensor attributes print only their type; compare them fully before merging.
    auto [it, inserted] = seen.emplace(key, n);
    if (inserted) continue;
    Node* first = it->second;
    if (!(first->attrs == n->attrs)) continue;
    bool ok = true;
    for (int i = 0; i < n->num_outputs() && ok; ++i) ok = !n->output(i)->is_graph_output() || !first->output(i)->is_graph_output();
    if (!ok) continue;
    for (int i = 0; i < n->num_outputs(); ++i) ReplaceValue(g, n->output(i), first->output(i));
    AbsorbProvenance(first, n);
    ctx.stats().rewrites[std::string("merged ") + std::string(OpName(n->op()))]++;
  }
  ctx.stats().nodes_removed += RemoveDeadNodes(g);
  return Status::Ok();
}

}  // namespace edgec::passes
