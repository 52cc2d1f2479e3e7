#include "memory/liveness.h"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

namespace edgec::memory {

std::string_view PlacementName(Placement p) {
  switch (p) {
    case Placement::kOwn: return "own";
    case Placement::kView: return "view";
    case Placement::kInPlace: return "in-place";
    case Placement::kConcatInput: return "concat-input";
  }
  return "?";
}

StatusOr<int64_t> ValueBytes(const Value& v) {
  if (!v.type.IsStatic()) {
    return InvalidArgument("value '{}' has type {}: memory planning needs static shapes "
                           "(bind them with --shape)", v.name(), v.type.ToString());
  }
  const int64_t elem = static_cast<int64_t>(DTypeSize(v.type.dtype));
  if (elem == 0) return InvalidArgument("value '{}' has no element type", v.name());
  const PhysicalLayout& p = v.physical;
  if (p.padded_dims.empty()) return NumElements(v.type.dims) * elem;
  if (p.strides.empty()) return NumElements(p.padded_dims) * elem;
  // Strided: one past the farthest element.
  int64_t last = 0;
  for (size_t i = 0; i < p.padded_dims.size(); ++i) {
    if (p.padded_dims[i] == 0) return 0;
    last += (p.padded_dims[i] - 1) * p.strides[i];
  }
  return (last + 1) * elem;
}

namespace {

// --- which ops alias their input ---

// A reshape-like op or an Identity: its output may be a view of its input.
bool ViewsItsInput(OpKind op) { return HasTrait(op, op_trait::kViewOfInput); }

bool IsContiguousRowMajor(const Value& v) {
  const PhysicalLayout& p = v.physical;
  return p.layout == Layout::kRowMajor && p.strides.empty() &&
         (p.padded_dims.empty() || p.padded_dims == v.type.dims);
}

bool SamePhysical(const Value& a, const Value& b) {
  if (IsContiguousRowMajor(a) && IsContiguousRowMajor(b)) return true;
  return a.physical.layout == b.physical.layout && a.physical.padded_dims == b.physical.padded_dims &&
         a.physical.strides == b.physical.strides;
}

// Views of input 0 (an in-place Concat is decided separately).
bool IsView(const Node& n, int output) {
  const Value* x = n.input(0);
  if (x == nullptr || x->is_constant() || n.op() == OpKind::kConcat) return false;
  const Value& y = *n.output(output);
  if (y.physical.is_view) return true;
  return output == 0 && ViewsItsInput(n.op()) && IsContiguousRowMajor(*x) &&
         IsContiguousRowMajor(y);
}

int64_t DenseBytes(const Value& v) {
  return NumElements(v.type.dims) * static_cast<int64_t>(DTypeSize(v.type.dtype));
}

// The byte slot of each input of a Concat marked in place, or nullopt when the mark does
// not hold up (then the Concat is a copy).
std::optional<std::vector<int64_t>> InPlaceConcatSlots(const Node& n) {
  const Value* y = n.output(0);
  if (n.op() != OpKind::kConcat || !y->physical.is_view || !y->type.IsStatic() ||
      !IsContiguousRowMajor(*y)) {
    return std::nullopt;
  }
  const int rank = y->type.rank();
  int64_t axis = n.attrs.GetInt("axis", 0);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return std::nullopt;
  for (int i = 0; i < axis; ++i) {
    if (y->type.dims[i] != 1) return std::nullopt;
  }
  std::vector<int64_t> slots;
  std::unordered_set<const Value*> seen;
  int64_t at = 0;
  for (const Value* x : n.inputs()) {
    if (x == nullptr || x->is_constant() || x->producer() == nullptr || x->is_graph_input() ||
        x->is_graph_output() || x->uses().size() != 1 || !seen.insert(x).second ||
        !x->type.IsStatic() || !IsContiguousRowMajor(*x) || x->physical.is_view ||
        x->type.dtype != y->type.dtype) {
      return std::nullopt;
    }
    slots.push_back(at);
    at += DenseBytes(*x);
  }
  if (at != DenseBytes(*y)) return std::nullopt;
  return slots;
}

// --- building the buffers ---

class LivenessBuilder {
 public:
  LivenessBuilder(const Graph& g, std::span<Node* const> order, const PlanOptions& options)
      : g_(g), order_(order), options_(options) {}

  StatusOr<Liveness> Build() {
    RETURN_IF_ERROR(CheckOrder());
    out_.num_steps = static_cast<int>(order_.size());
    last_step_ = std::max(0, out_.num_steps - 1);
    for (const Node* n : order_) {
      auto slots = InPlaceConcatSlots(*n);
      if (!slots) continue;
      concat_buffer_[n] = -1;
      for (int j = 0; j < n->num_inputs(); ++j) concat_slot_[n->input(j)] = {n, (*slots)[j]};
      out_.concat_in_place_count++;
    }
    for (Value* v : g_.inputs()) {
      if (v->is_constant() || out_.values.count(v)) continue;
      RETURN_IF_ERROR(AddOwn(v, 0));
      out_.buffers.back().holds_graph_input = true;
    }
    for (int step = 0; step < out_.num_steps; ++step) {
      const Node& n = *order_[step];
      for (int k = 0; k < n.num_outputs(); ++k) RETURN_IF_ERROR(PlaceOutput(n, k, step));
    }
    return std::move(out_);
  }

 private:
  Status CheckOrder() {
    if (order_.size() != static_cast<size_t>(g_.num_nodes())) {
      return InvalidArgument("execution order lists {} nodes, the graph has {}", order_.size(),
                             g_.num_nodes());
    }
    for (size_t i = 0; i < order_.size(); ++i) {
      if (!step_of_.emplace(order_[i], static_cast<int>(i)).second) {
        return InvalidArgument("execution order lists {} twice", order_[i]->Label());
      }
    }
    for (const Node* n : order_) {
      for (const Value* x : n->inputs()) {
        if (x == nullptr || x->producer() == nullptr) continue;
        auto it = step_of_.find(x->producer());
        if (it == step_of_.end()) {
          return InvalidArgument("{} reads '{}', whose producer is not in the execution order",
                                 n->Label(), x->name());
        }
        if (it->second >= step_of_[n]) {
          return InvalidArgument("execution order runs {} before {}, which produces its input '{}'",
                                 n->Label(), x->producer()->Label(), x->name());
        }
      }
    }
    return Status::Ok();
  }

  // The last step at which `v` itself is read (not through aliases).
  int OwnLastUse(const Value& v, int defined_at) const {
    if (v.is_graph_output()) return last_step_;
    int last = defined_at;
    for (const Use& u : v.uses()) last = std::max(last, step_of_.at(u.node));
    return last;
  }

  Status AddOwn(const Value* v, int step) {
    ASSIGN_OR_RETURN(int64_t bytes, ValueBytes(*v));
    Buffer b;
    b.request = {bytes, step, OwnLastUse(*v, step)};
    b.owner = v;
    b.members = {v};
    b.holds_graph_output = v->is_graph_output();
    ValueMemory m;
    m.buffer = static_cast<int>(out_.buffers.size());
    m.bytes = bytes;
    out_.values[v] = m;
    out_.buffers.push_back(std::move(b));
    return Status::Ok();
  }

  // An input of an in-place Concat: into its slot of the Concat's buffer, which the first
  // such input to be produced allocates.
  Status AddConcatInput(const Value* v, int step) {
    auto [concat, slot] = concat_slot_.at(v);
    int& buffer = concat_buffer_.at(concat);
    if (buffer < 0) {
      const Value* y = concat->output(0);
      ASSIGN_OR_RETURN(int64_t bytes, ValueBytes(*y));
      Buffer b;
      b.request = {bytes, step, step};
      b.owner = y;
      buffer = static_cast<int>(out_.buffers.size());
      out_.buffers.push_back(std::move(b));
    }
    return Join(v, buffer, step, Placement::kConcatInput, -1, slot);
  }

  Status Join(const Value* v, int buffer, int step, Placement placement, int input,
              int64_t offset_in_buffer = 0) {
    ASSIGN_OR_RETURN(int64_t bytes, ValueBytes(*v));
    Buffer& b = out_.buffers[buffer];
    b.request.bytes = std::max(b.request.bytes, bytes);
    b.request.last_use = std::max(b.request.last_use, OwnLastUse(*v, step));
    b.members.push_back(v);
    b.holds_graph_output |= v->is_graph_output();
    ValueMemory m;
    m.buffer = buffer;
    m.offset_in_buffer = offset_in_buffer;
    m.bytes = bytes;
    m.placement = placement;
    m.shares_input = input;
    out_.values[v] = m;
    if (placement == Placement::kView) out_.view_count++;
    if (placement == Placement::kInPlace) out_.in_place_count++;
    return Status::Ok();
  }

  // The input whose buffer the output may take over, or -1.
  int InPlaceInput(const Node& n, int step) const {
    if (!options_.in_place || !IsComputedElementwise(n.op())) return -1;
    const Value& y = *n.output(0);
    for (int j = 0; j < n.num_inputs(); ++j) {
      const Value* x = n.input(j);
      if (x == nullptr || x->is_constant()) continue;
      if (x->type.dtype != y.type.dtype || x->type.dims != y.type.dims || !SamePhysical(*x, y)) continue;
      const ValueMemory& xm = out_.values.at(x);
      const Buffer& b = out_.buffers[xm.buffer];
      if (b.holds_graph_input || b.holds_graph_output) continue;
      if (b.request.last_use != step) continue;  // read later, through x or an alias
      if (xm.bytes != b.request.bytes) continue;  // x is only part of the buffer
      if (OtherInputReadsBufferDifferently(n, j, xm.buffer)) continue;
      return j;
    }
    return -1;
  }

  // Another input of `n` lives in the same buffer but is not element-for-element the
  // taken input (a broadcast or a different view): writing would clobber what it reads.
  bool OtherInputReadsBufferDifferently(const Node& n, int taken, int buffer) const {
    const Value* x = n.input(taken);
    for (int j = 0; j < n.num_inputs(); ++j) {
      const Value* o = n.input(j);
      if (j == taken || o == nullptr || o->is_constant()) continue;
      if (out_.values.at(o).buffer != buffer) continue;
      if (o->type.dims != x->type.dims || !SamePhysical(*o, *x) || o->type.dtype != x->type.dtype) {
        return true;
      }
    }
    return false;
  }

  Status PlaceOutput(const Node& n, int k, int step) {
    const Value* y = n.output(k);
    if (concat_slot_.count(y)) return AddConcatInput(y, step);
    if (concat_buffer_.count(&n)) return Join(y, concat_buffer_.at(&n), step, Placement::kView, 0);
    if (IsView(n, k)) return Join(y, out_.values.at(n.input(0)).buffer, step, Placement::kView, 0);
    if (k == 0) {
      int j = InPlaceInput(n, step);
      if (j >= 0) return Join(y, out_.values.at(n.input(j)).buffer, step, Placement::kInPlace, j);
    }
    return AddOwn(y, step);
  }

  const Graph& g_;
  std::span<Node* const> order_;
  const PlanOptions& options_;
  std::unordered_map<const Node*, int> step_of_;
  int last_step_ = 0;
  // In-place Concats: each input's Concat and slot; each Concat's buffer (-1 until made).
  std::unordered_map<const Value*, std::pair<const Node*, int64_t>> concat_slot_;
  std::unordered_map<const Node*, int> concat_buffer_;
  Liveness out_;
};

std::string FormatBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.2f} MiB", bytes / 1048576.0);
  if (bytes >= 1024) return fmt::format("{:.1f} KiB", bytes / 1024.0);
  return fmt::format("{} B", bytes);
}

}  // namespace

StatusOr<Liveness> ComputeLiveness(const Graph& g, std::span<Node* const> order,
                                   const PlanOptions& options) {
  std::vector<Node*> all;
  if (order.empty() && g.num_nodes() > 0) {
    all = g.nodes();
    order = all;
  }
  return LivenessBuilder(g, order, options).Build();
}

StatusOr<MemoryPlan> PlanMemory(const Graph& g, std::span<Node* const> order,
                                const PlanOptions& options) {
  ASSIGN_OR_RETURN(Liveness live, ComputeLiveness(g, order, options));
  GreedyBySizePlanner greedy;
  LinearPlanner linear;
  std::vector<BufferRequest> requests;
  requests.reserve(live.buffers.size());
  for (const Buffer& b : live.buffers) {
    requests.push_back(b.request);
    greedy.AddBuffer(b.request.bytes, b.request.first_use, b.request.last_use);
    linear.AddBuffer(b.request.bytes, b.request.first_use, b.request.last_use);
  }
  MemoryPlan plan;
  plan.num_steps = live.num_steps;
  plan.arena_bytes = greedy.GetArenaSize();
  plan.naive_bytes = linear.GetArenaSize();
  plan.lower_bound = LowerBound(requests);
  plan.in_place_count = live.in_place_count;
  plan.view_count = live.view_count;
  plan.concat_in_place_count = live.concat_in_place_count;
  for (size_t i = 0; i < live.buffers.size(); ++i) {
    live.buffers[i].offset = greedy.GetOffset(static_cast<int>(i));
  }
  for (auto& [v, m] : live.values) m.offset = live.buffers[m.buffer].offset + m.offset_in_buffer;
  plan.buffers = std::move(live.buffers);
  plan.values = std::move(live.values);
  return plan;
}

const ValueMemory* MemoryPlan::Find(const Value* v) const {
  auto it = values.find(v);
  return it == values.end() ? nullptr : &it->second;
}

std::string MemoryPlan::Largest() const {
  const Buffer* big = nullptr;
  for (const Buffer& b : buffers)
    if (b.owner && (!big || b.request.bytes > big->request.bytes)) big = &b;
  if (!big) return "no buffers";
  const Node* p = big->owner->producer();
  return p ? fmt::format("largest value '{}' of node '{}', {} bytes", big->owner->name(), p->name(), big->request.bytes)
           : fmt::format("largest value '{}', {} bytes", big->owner->name(), big->request.bytes);
}

std::string MemoryPlan::Summary() const {
  std::string s = fmt::format("arena {} (lower bound {}, naive {}), {} buffers, {} in place, {} views",
                              FormatBytes(arena_bytes), FormatBytes(lower_bound),
                              FormatBytes(naive_bytes), buffers.size(), in_place_count, view_count);
  if (concat_in_place_count > 0) s += fmt::format(" ({} Concat in place)", concat_in_place_count);
  return s;
}

}  // namespace edgec::memory
