#include "ir/graph.h"
#include "ir/physical_layout.h"

namespace edgec {

std::string PrintGraph(const Graph& g) {
  std::string s = fmt::format("graph '{}' (", g.name);
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value* v = g.inputs()[i];
    s += fmt::format("{}%{}: {}", i ? ", " : "", v->name(), v->type.ToString());
  }
  s += ") {\n";
  for (const Value* c : g.constants()) {
    s += fmt::format("  %{}: {} = constant\n", c->name(), c->type.ToString());
  }
  for (const Node* n : g.nodes()) {
    s += "  ";
    for (int i = 0; i < n->num_outputs(); ++i) {
      const Value* o = n->output(i);
      s += fmt::format("{}%{}: {}", i ? ", " : "", o->name(), o->type.ToString());
      if (PhysicalToString(*o) != "row-major") s += " @" + PhysicalToString(*o);
    }
    s += fmt::format(" = {} '{}'(", OpName(n->op()), n->name());
    for (int i = 0; i < n->num_inputs(); ++i) {
      s += i ? ", " : "";
      s += n->input(i) ? "%" + n->input(i)->name() : std::string("_");
    }
    s += ")";
    if (!n->attrs.map().empty()) {
      s += " {";
      bool first = true;
      for (auto& [k, v] : n->attrs.map()) {
        s += fmt::format("{}{}={}", first ? "" : ", ", k, AttrValueToString(v));
        first = false;
      }
      s += "}";
    }
    if (n->provenance.size() > 1 || (n->provenance.size() == 1 && n->provenance[0] != n->name())) {
      s += "  # from";
      for (auto& p : n->provenance) s += " '" + p + "'";
    }
    s += "\n";
  }
  s += "  return ";
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    s += fmt::format("{}%{}", i ? ", " : "", g.outputs()[i]->name());
  }
  return s + "\n}\n";
}

}  // namespace edgec
