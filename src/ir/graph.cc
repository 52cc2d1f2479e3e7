#include "ir/graph.h"

#include <algorithm>
#include <unordered_set>

namespace edgec {

bool TensorType::IsStatic() const {
  if (!rank_known || !IsDenseTensor()) return false;
  for (int64_t d : dims) {
    if (d < 0) return false;
  }
  return true;
}

std::string TensorType::ToString() const {
  if (!IsDenseTensor()) {
    TensorType element = *this;
    element.kind = ValueKind::kTensor;
    element.optional = false;
    std::string s = element.ToString();
    if (kind == ValueKind::kSequence) s = "seq(" + s + ")";
    return optional ? "opt(" + s + ")" : s;
  }
  if (!rank_known) return std::string(DTypeName(dtype)) + "[*]";
  std::string s = std::string(DTypeName(dtype)) + "[";
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += ", ";
    if (dims[i] >= 0) {
      s += std::to_string(dims[i]);
    } else if (i < dim_names.size() && !dim_names[i].empty()) {
      s += dim_names[i];
    } else {
      s += "?";
    }
  }
  return s + "]";
}

std::string_view LayoutName(Layout l) {
  switch (l) {
    case Layout::kRowMajor: return "row-major";
    case Layout::kNHWC: return "nhwc";
    case Layout::kNC16HW16: return "nc16hw16";
  }
  return "?";
}

std::string Node::Label() const { return fmt::format("{} '{}'", OpName(op_), name_); }

Value* Graph::NewValue(const std::string& name) {
  auto v = std::make_unique<Value>();
  v->name_ = name.empty() || by_name_.count(name) ? FreshName(name.empty() ? "v" : name) : name;
  Value* p = v.get();
  by_name_[p->name_] = p;
  values_.push_back(std::move(v));
  return p;
}

std::string Graph::FreshName(const std::string& base) {
  for (;;) {
    std::string n = fmt::format("{}.{}", base, ++fresh_counter_);
    if (!by_name_.count(n)) return n;
  }
}

Value* Graph::AddInput(const std::string& name, TensorType type) {
  Value* v = NewValue(name);
  v->type = std::move(type);
  v->is_graph_input_ = true;
  inputs_.push_back(v);
  return v;
}

Value* Graph::AddConstant(const std::string& name, Tensor value) {
  Value* v = NewValue(name);
  v->type.dtype = value.dtype();
  v->type.dims = value.dims();
  v->constant_ = std::make_shared<const Tensor>(std::move(value));
  return v;
}

Node* Graph::AddNode(OpKind op, const std::string& name, std::vector<Value*> inputs,
                     int num_outputs, std::vector<std::string> output_names) {
  auto n = std::make_unique<Node>();
  n->op_ = op;
  n->name_ = name;
  n->provenance = {name};
  Node* p = n.get();
  for (size_t i = 0; i < inputs.size(); ++i) {
    p->inputs_.push_back(inputs[i]);
    if (inputs[i]) inputs[i]->uses_.push_back({p, static_cast<int>(i)});
  }
  for (int i = 0; i < num_outputs; ++i) {
    std::string on = i < static_cast<int>(output_names.size()) ? output_names[i] : "";
    Value* v = NewValue(on.empty() ? fmt::format("{}:{}", name.empty() ? "node" : name, i) : on);
    v->producer_ = p;
    v->producer_output_ = i;
    p->outputs_.push_back(v);
  }
  nodes_.push_back(std::move(n));
  return p;
}

void Graph::MarkOutput(Value* v) {
  v->is_graph_output_ = true;
  outputs_.push_back(v);
}

void Graph::SetInput(Node* n, int index, Value* v) {
  if (index >= n->num_inputs()) n->inputs_.resize(index + 1, nullptr);
  if (Value* old = n->inputs_[index]) {
    auto& u = old->uses_;
    u.erase(std::remove_if(u.begin(), u.end(),
                           [&](const Use& x) { return x.node == n && x.input_index == index; }),
            u.end());
  }
  n->inputs_[index] = v;
  if (v) v->uses_.push_back({n, index});
}

void Graph::ReplaceAllUses(Value* from, Value* to) {
  std::vector<Use> uses = from->uses_;
  for (const Use& u : uses) SetInput(u.node, u.input_index, to);
  for (auto& o : outputs_) {
    if (o == from) {
      o = to;
      to->is_graph_output_ = true;
    }
  }
  from->is_graph_output_ = false;
}

void Graph::RemoveNode(Node* n) {
  for (Value* o : n->outputs_) EDGEC_CHECK(o->uses_.empty() && !o->is_graph_output_);
  for (int i = 0; i < n->num_inputs(); ++i) SetInput(n, i, nullptr);
  for (Value* o : n->outputs_) {
    by_name_.erase(o->name_);
    o->producer_ = nullptr;
  }
  // Values stay allocated (cheap) so stray pointers in callers do not dangle.
  nodes_.erase(std::find_if(nodes_.begin(), nodes_.end(),
                            [&](const std::unique_ptr<Node>& p) { return p.get() == n; }));
}

Status Graph::RenameValue(Value* v, const std::string& name) {
  if (v->name_ == name) return Status::Ok();
  auto it = by_name_.find(name);
  if (it != by_name_.end() && it->second != v) {
    return Internal("cannot rename '{}' to '{}': the name is taken", v->name_, name);
  }
  by_name_.erase(v->name_);
  v->name_ = name;
  by_name_[name] = v;
  return Status::Ok();
}

void Graph::TruncateOutputs(Node* n, int keep) {
  while (n->num_outputs() > keep) {
    Value* o = n->outputs_.back();
    EDGEC_CHECK(o->uses_.empty() && !o->is_graph_output_);
    by_name_.erase(o->name_);
    o->producer_ = nullptr;
    n->outputs_.pop_back();
  }
}

Status Graph::TopoSort() {
  // Kahn's algorithm, picking the lowest original index first so sorted graphs keep order.
  std::unordered_map<const Node*, size_t> index;
  for (size_t i = 0; i < nodes_.size(); ++i) index[nodes_[i].get()] = i;
  std::vector<int> pending(nodes_.size(), 0);
  std::vector<std::vector<size_t>> consumers(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    std::unordered_set<const Node*> seen;
    for (Value* in : nodes_[i]->inputs_) {
      if (!in || !in->producer_) continue;
      auto it = index.find(in->producer_);
      if (it == index.end() || !seen.insert(in->producer_).second) continue;
      ++pending[i];
      consumers[it->second].push_back(i);
    }
  }
  std::vector<size_t> ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  std::make_heap(ready.begin(), ready.end(), std::greater<>());
  std::vector<size_t> order;
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>());
    size_t i = ready.back();
    ready.pop_back();
    order.push_back(i);
    for (size_t c : consumers[i]) {
      if (--pending[c] == 0) {
        ready.push_back(c);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
    }
  }
  if (order.size() != nodes_.size()) {
    for (size_t i = 0; i < nodes_.size(); ++i) {
      if (pending[i] > 0) {
        return InvalidArgument("graph has a cycle through node {}", nodes_[i]->Label());
      }
    }
  }
  std::vector<std::unique_ptr<Node>> sorted;
  sorted.reserve(nodes_.size());
  for (size_t i : order) sorted.push_back(std::move(nodes_[i]));
  nodes_ = std::move(sorted);
  return Status::Ok();
}

Graph Graph::Clone() const {
  Graph c;
  c.name = name;
  c.fresh_counter_ = fresh_counter_;
  std::unordered_map<const Value*, Value*> map;
  auto copy_value = [&](const Value* v) -> Value* {
    // Everything but the links into the old graph, which the copy below rebuilds.
    auto nv = std::make_unique<Value>(*v);
    nv->producer_ = nullptr;
    nv->producer_output_ = -1;
    nv->uses_.clear();
    nv->is_graph_output_ = false;
    Value* p = nv.get();
    c.by_name_[p->name_] = p;
    c.values_.push_back(std::move(nv));
    map[v] = p;
    return p;
  };
  for (const Value* v : inputs_) c.inputs_.push_back(copy_value(v));
  for (const auto& v : values_) {
    if (v->constant_ && !map.count(v.get())) copy_value(v.get());
  }
  for (const auto& n : nodes_) {
    auto nn = std::make_unique<Node>(*n);
    nn->inputs_.clear();
    nn->outputs_.clear();
    Node* p = nn.get();
    for (size_t i = 0; i < n->inputs_.size(); ++i) {
      Value* in = n->inputs_[i] ? map.at(n->inputs_[i]) : nullptr;
      p->inputs_.push_back(in);
      if (in) in->uses_.push_back({p, static_cast<int>(i)});
    }
    for (size_t i = 0; i < n->outputs_.size(); ++i) {
      Value* o = copy_value(n->outputs_[i]);
      o->producer_ = p;
      o->producer_output_ = static_cast<int>(i);
      p->outputs_.push_back(o);
    }
    c.nodes_.push_back(std::move(nn));
  }
  for (const Value* v : outputs_) c.MarkOutput(map.at(v));
  return c;
}

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> v;
  v.reserve(nodes_.size());
  for (auto& n : nodes_) v.push_back(n.get());
  return v;
}

Value* Graph::FindValue(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<Value*> Graph::constants() const {
  std::vector<Value*> v;
  for (auto& p : values_) {
    if (p->constant_ && (!p->uses_.empty() || p->is_graph_output_)) v.push_back(p.get());
  }
  return v;
}

}  // namespace edgec
