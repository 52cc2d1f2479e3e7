// Attention chains of an NPU segment as one NPU layer (npu/lower_attention.h).
//
// The chain, as the quantizer leaves it (the 1/sqrt(d) scale folded into the scores'
// requantization): a 3-d QLinearMatMul of two activations (scores = Q·Kᵀ, K read through an
// absorbed transpose or as it is), a QLinearSoftmax over its last axis reading only the
// scores, and a 3-d QLinearMatMul of two activations whose left operand is the softmax's
// output and nothing else reads it (context = P·V). Between them in the run there may only be
// views (the head reshapes and transposes the partition made DRAM views). The scores and
// probabilities then never exist outside the layer. With the mixed precision's int16 point at
// the softmax the scores' MatMul writes int16, the softmax is int16 in and out, and a
// QLinearRequantize (int16 -> 8 bits, read only by the context) sits between it and the context.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"
#include "npu/lower_attention.h"
#include "partition/partition.h"

namespace edgec::lower {

// The nodes of an attention chain (`narrow`: the int16 softmax's requantize to 8 bits, or none).
struct AttentionChain {
  const Node* scores = nullptr;
  const Node* softmax = nullptr;
  const Node* context = nullptr;
  const Node* narrow = nullptr;
  std::vector<const Node*> nodes() const {
    if (narrow) return {scores, softmax, narrow, context};
    return {scores, softmax, context};
  }
};

// The chains among `run` (a segment's nodes in graph order): each starts at a scores node
// whose softmax and context follow with only views (`is_view`) in between.
template <typename IsView>
std::vector<AttentionChain> FindAttentionChains(const std::vector<const Node*>& run, IsView&& is_view);

// Whether `scores -> softmax -> context` has the chain's shape (the reason when not).
Status MatchAttention(const AttentionChain& c);

// The chain as one NPU layer with its data (the NPU's int8 terms), or why it cannot be one
// (a per-column bias or multiplier, an int16 softmax without its requantize to 8 bits, shapes
// that do not chain).
StatusOr<npu::AttentionLayer> AttentionLayerOf(const AttentionChain& c);

// An attention chain of a segment's run taken as one layer, with its tiling.
struct FusedAttention {
  AttentionChain chain;
  npu::AttentionLayer layer;
  npu::AttentionChoice choice;
  const partition::NodePlacement* context = nullptr;
};

// The run's attention chains that become one layer (keyed by each of their three nodes): those
// whose fused program, simulated alone, is faster than their three layers alone (dispatch
// excluded). `listing` gets a line per chain: its tiling, cycles, the SRAM its scores take and
// the DRAM bytes of scores and probabilities the unfused chain moves.
std::map<const Node*, FusedAttention> FuseAttention(const std::vector<const partition::NodePlacement*>& run,
                                                    const npu::Target& t, const npu::TilerOptions& opt,
                                                    std::string& listing);

template <typename IsView>
std::vector<AttentionChain> FindAttentionChains(const std::vector<const Node*>& run, IsView&& is_view) {
  std::vector<AttentionChain> out;
  for (size_t i = 0; i < run.size(); ++i) {
    if (run[i]->op() != OpKind::kQLinearMatMul) continue;
    AttentionChain c{run[i], nullptr, nullptr};
    size_t j = i + 1;
    auto next = [&]() -> const Node* {
      while (j < run.size() && is_view(*run[j])) ++j;
      return j < run.size() ? run[j++] : nullptr;
    };
    c.softmax = next();
    c.context = c.softmax ? next() : nullptr;
    if (c.context && c.context->op() == OpKind::kQLinearRequantize) c.narrow = c.context, c.context = next();
    if (c.softmax && c.context && MatchAttention(c).ok()) out.push_back(c);
  }
  return out;
}

}  // namespace edgec::lower
