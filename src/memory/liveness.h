// Liveness over an execution order and the static memory plan built from it.
//
// Steps are indices into the execution order (by default g.nodes()). Every non-constant
// value gets memory in one arena:
//   - graph inputs are buffers too, live from step 0 (the caller's data is copied into the
//     arena before the first node runs);
//   - a node output is live from its producer's step to its last consumer's step (just its
//     own step when nothing reads it); graph outputs live to the last step;
//   - a view shares its input's buffer and extends that buffer's live range: a value marked
//     `physical.is_view`, or the output of Reshape/Flatten/Squeeze/Unsqueeze/Identity on a
//     contiguous row-major input (input 0 in all cases; the arena offset is the buffer's,
//     the view's own position inside it is the executor's business via its strides);
//   - in place: an elementwise op writes its output into an input's buffer when that
//     buffer dies at this step (no later reader through any alias), the input has the
//     output's dtype, dims and physical layout, and the buffer holds neither a graph input
//     nor a graph output. PlanOptions::in_place = false turns this off;
//   - Concat in place (its output marked `physical.is_view` by the views pass): the
//     Concat's buffer is allocated when its first input is produced, every input's
//     producer writes straight into its slot (kConcatInput, `offset` includes the slot),
//     and the Concat output is a view whose address is its input 0's. A marked Concat that
//     does not meet the conditions (static dims, concatenation along the outermost non-1
//     axis, distinct fresh single-use node outputs that are not graph outputs) is planned
//     as a copy.
// Constants (and views of constants) stay out of the arena: constants have no entry,
// a reshape-like op on a constant gets a buffer of its own.
#pragma once

#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "memory/planner.h"

namespace edgec::memory {

struct PlanOptions {
  bool in_place = true;
};

enum class Placement : uint8_t {
  kOwn,      // the value allocated the buffer
  kView,     // zero-copy view of its input 0's buffer: the kernel does not run
  kInPlace,  // the kernel writes into the buffer of input `shares_input`
  kConcatInput,  // the kernel writes into its slot of the in-place Concat's buffer
};
std::string_view PlacementName(Placement p);

struct ValueMemory {
  int buffer = -1;      // index into MemoryPlan::buffers
  // Byte offset in the arena: the buffer's, plus offset_in_buffer. For views it is the
  // buffer's: the executor adds the view's own offset (a Slice's start, say).
  int64_t offset = 0;
  int64_t offset_in_buffer = 0;  // kConcatInput: the slot; else 0
  int64_t bytes = 0;    // the value's own bytes (before alignment)
  Placement placement = Placement::kOwn;
  int shares_input = -1;  // kView: 0; kInPlace: the input index of the producer
};

struct Buffer {
  BufferRequest request;          // bytes = the largest member's, not yet aligned
  // The value that allocated it (for an in-place Concat: its output).
  const Value* owner = nullptr;
  // In the order they were placed: the owner first, then views and in-place outputs (for
  // an in-place Concat: its inputs, then its output).
  std::vector<const Value*> members;
  int64_t offset = 0;             // filled by PlanMemory
  bool holds_graph_input = false;
  bool holds_graph_output = false;
};

struct Liveness {
  int num_steps = 0;
  std::vector<Buffer> buffers;
  std::unordered_map<const Value*, ValueMemory> values;  // offsets not yet assigned
  int in_place_count = 0;
  int view_count = 0;           // includes in-place Concat outputs
  int concat_in_place_count = 0;
};

struct MemoryPlan {
  int num_steps = 0;
  std::vector<Buffer> buffers;
  std::unordered_map<const Value*, ValueMemory> values;  // every non-constant value
  int64_t arena_bytes = 0;  // greedy-by-size planner
  int64_t lower_bound = 0;  // largest total of aligned bytes live at one step
  int64_t naive_bytes = 0;  // linear planner (no reuse) over the same buffers
  int in_place_count = 0;
  int view_count = 0;           // includes in-place Concat outputs
  int concat_in_place_count = 0;

  const ValueMemory* Find(const Value* v) const;
  // "arena 1.2 MiB (lower bound 1.2 MiB, naive 9.8 MiB), 43 buffers, 12 in place, 5 views"
  std::string Summary() const;
  // The largest buffer, for errors: "largest value 'y' of node 'fill', 4398046511104 bytes".
  std::string Largest() const;
};

// The value's bytes in memory: its physical extent when a physical layout is set, else
// the logical element count times the element size. Fails for non-static types.
StatusOr<int64_t> ValueBytes(const Value& v);

// `order` must list every node of `g` exactly once, producers before consumers; empty
// means g.nodes().
StatusOr<Liveness> ComputeLiveness(const Graph& g, std::span<Node* const> order = {},
                                   const PlanOptions& options = {});

StatusOr<MemoryPlan> PlanMemory(const Graph& g, std::span<Node* const> order = {},
                                const PlanOptions& options = {});

// The part of `g` a static plan can hold: a copy without the nodes that make a value of unknown
// shape or read one (a data-dependent NonMaxSuppression and what follows it, which run after
// the static steps with their outputs allocated then: runtime/plan.h's dynamic part). The
// static values those nodes read become graph outputs (live to the end, as the dynamic part
// reads them last), and a dynamic graph output becomes an empty constant. `left_out`, when
// given, gets the names of the values left out. A graph without such nodes is copied as it is.
// Guarded by MemoryStaticPart.LeavesOutTheDynamicTail.
Graph StaticPart(const Graph& g, std::vector<std::string>* left_out = nullptr);

}  // namespace edgec::memory
