// Sequence steps: the sequence family of ops.def (SequenceConstruct ... ConcatFromSequence,
// Optional, OptionalHasElement, OptionalGetElement) and an Identity of a sequence or
// optional, run in a CPU plan's dynamic part (runtime/dynamic_step.h) on the runtime's own
// sequence values instead of the reference kernels.
//
// A sequence is a list of heap tensors (ir/tensor.h: Tensor::Sequence), shared between the
// sequences that hold them and never written:
// - an item enters a sequence (Construct, Insert) as it is when it owns its buffer; one over
//   memory it does not own (an arena slot, a caller's view) is copied then, so no sequence
//   outlives the memory of its items;
// - Insert and Erase make a new list of the same items, At and OptionalGetElement return the
//   item itself;
// - SplitToSequence: parts that are contiguous in the input (no dim above 1 before the split
//   axis) are views of its buffer, the others one copy per outer row;
// - ConcatFromSequence: one copy per item and outer row into an output sized from the items
//   (items that disagree are an error naming the node, the item and the axis).
// tests/runtime/sequence_step_test.cc (generated graphs against the reference executor, a
// check that no sequence step runs on a reference kernel) and the ONNX node tests of the
// sequence ops and SequenceMap through the conformance runner's `run` path.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "support/status.h"

namespace edgec {

// Whether `n` is a sequence step for these inputs (a sequence-family op, or an Identity of a
// sequence or optional value).
bool IsSequenceStep(const Node& n, const std::vector<const Tensor*>& inputs);

// Runs a sequence step; `kernel` gets what ran ("own sequence insert (items shared)").
StatusOr<std::vector<Tensor>> RunSequenceStep(const Node& n, const std::vector<const Tensor*>& inputs,
                                              std::string* kernel);

}  // namespace edgec
