#include "passes/pattern.h"

#include <algorithm>

#include "passes/pass_util.h"

namespace edgec::passes {

Status ApplyPatterns(Graph& g, const std::vector<Pattern>& patterns, PassContext& ctx,
                     int max_rewrites) {
  int rewrites = 0;
  for (;;) {
    bool changed = false;
    std::vector<std::string> reasons;
    std::vector<Node*> nodes = g.nodes();
    for (size_t i = 0; i < nodes.size() && !changed; ++i) {
      Node* n = nodes[i];
      for (const Pattern& p : patterns) {
        if (std::find(p.anchors.begin(), p.anchors.end(), n->op()) == p.anchors.end()) continue;
        std::string why;
        if (p.apply(g, n, ctx, &why)) {
          ctx.stats().rewrites[p.name]++;
          changed = true;
          break;  // `n` may be gone: start over on the new graph
        }
        if (ctx.explain) reasons.push_back(fmt::format("{}: {}: {}", p.name, n->Label(), why.empty() ? "no match" : why));
      }
    }
    if (!changed) {
      for (std::string& r : reasons) ctx.ExplainLine(std::move(r));
      return Status::Ok();
    }
    ctx.stats().nodes_removed += RemoveDeadNodes(g);
    RETURN_IF_ERROR(g.TopoSort());
    if (++rewrites > max_rewrites) {
      return Internal("pattern rewriting did not converge after {} rewrites", max_rewrites);
    }
  }
}

}  // namespace edgec::passes
