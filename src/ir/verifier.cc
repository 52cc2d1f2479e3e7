#include <unordered_map>
#include <unordered_set>

#include "ir/graph.h"

namespace edgec {

Status Verify(const Graph& g) {
  std::unordered_set<const Value*> defined;
  for (const Value* v : g.inputs()) defined.insert(v);
  std::unordered_map<const Node*, int> position;
  auto nodes = g.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = static_cast<int>(i);

  for (const Node* n : nodes) {
    for (int i = 0; i < n->num_inputs(); ++i) {
      const Value* v = n->input(i);
      if (!v) continue;
      if (!v->is_constant() && !defined.count(v)) {
        if (v->producer() && position.count(v->producer())) {
          return Internal("{}: input {} '{}' is produced by {} which comes later (not in "
                          "topological order)",
                          n->Label(), i, v->name(), v->producer()->Label());
        }
        return Internal("{}: input {} '{}' has no definition", n->Label(), i, v->name());
      }
      bool listed = false;
      for (const Use& u : v->uses()) listed |= (u.node == n && u.input_index == i);
      if (!listed) return Internal("{}: use list of '{}' misses input {}", n->Label(), v->name(), i);
    }
    for (int i = 0; i < n->num_outputs(); ++i) {
      const Value* v = n->output(i);
      if (v->producer() != n || v->producer_output() != i) {
        return Internal("{}: output {} '{}' names another producer", n->Label(), i, v->name());
      }
      if (!defined.insert(v).second) {
        return Internal("{}: output '{}' is defined twice", n->Label(), v->name());
      }
    }
  }
  for (const Node* n : nodes) {
    for (int i = 0; i < n->num_outputs(); ++i) {
      for (const Use& u : n->output(i)->uses()) {
        if (!position.count(u.node) || u.node->input(u.input_index) != n->output(i)) {
          return Internal("value '{}' has a stale use", n->output(i)->name());
        }
      }
    }
  }
  for (const Value* v : g.outputs()) {
    if (!v->is_constant() && !defined.count(v)) {
      return Internal("graph output '{}' has no definition", v->name());
    }
  }
  // Constants and physical layouts agree with logical types.
  auto check_value = [](const Value* v) -> Status {
    if (v->is_constant()) {
      if (v->constant().dtype() != v->type.dtype || v->constant().dims() != v->type.dims) {
        return Internal("constant '{}' holds {} but is typed {}", v->name(),
                        v->constant().TypeString(), v->type.ToString());
      }
    }
    const PhysicalLayout& p = v->physical;
    if (!p.padded_dims.empty()) {
      if (!v->type.rank_known || p.padded_dims.size() != v->type.dims.size()) {
        return Internal("value '{}': physical dims {} do not match logical {}", v->name(),
                        DimsToString(p.padded_dims), v->type.ToString());
      }
      // Physical dims are in layout order; for NHWC, logical NCHW maps to (0, 2, 3, 1).
      Dims logical_in_layout = v->type.dims;
      if (p.layout == Layout::kNHWC && logical_in_layout.size() == 4) {
        logical_in_layout = {v->type.dims[0], v->type.dims[2], v->type.dims[3], v->type.dims[1]};
      }
      for (size_t i = 0; i < p.padded_dims.size(); ++i) {
        if (logical_in_layout[i] >= 0 && p.padded_dims[i] < logical_in_layout[i]) {
          return Internal("value '{}': physical dim {} ({}) is smaller than the logical dim ({})",
                          v->name(), i, p.padded_dims[i], logical_in_layout[i]);
        }
      }
      if (!p.strides.empty() && p.strides.size() != p.padded_dims.size()) {
        return Internal("value '{}': {} strides for {} dims", v->name(), p.strides.size(),
                        p.padded_dims.size());
      }
    }
    if (p.alignment <= 0 || (p.alignment & (p.alignment - 1)) != 0) {
      return Internal("value '{}': alignment {} is not a power of two", v->name(), p.alignment);
    }
    return Status::Ok();
  };
  for (const Value* v : g.inputs()) RETURN_IF_ERROR(check_value(v));
  for (const Value* v : g.constants()) RETURN_IF_ERROR(check_value(v));
  for (const Node* n : nodes) {
    for (const Value* v : n->outputs()) RETURN_IF_ERROR(check_value(v));
  }
  return Status::Ok();
}

}  // namespace edgec
