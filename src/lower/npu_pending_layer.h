// A layer of an NPU segment before lowering (npu_segment.cc builds them, npu_cascade.cc may
// replace a chain of them by their row stripes).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "ir/graph.h"
#include "lower/npu_layers.h"
#include "npu/lower.h"
#include "npu/lower_attention.h"
#include "npu/target.h"
#include "npu/vector_tiler.h"
#include "partition/partition.h"

namespace edgec::lower {

// A row stripe of a node (a cascade): the node's layer with the stripe's image height and
// padding, and the tiling chosen for it.
struct StripeLayer {
  bool gemm = false;
  npu::ConvLayer conv;
  npu::Tiling tiling;
  VectorLayer vec;
  npu::VectorTiling vtiling;
  int index = 0, count = 0;  // stripe `index` of `count`
  int constants_of = -1;     // the layer index of the node's first stripe
  double cycles = 0;         // simulated alone with its operands where the cascade puts them
};

// Its node, the placement whose tiling it is lowered with, the target that tiling was chosen
// for (cores and SRAM it may use) and where it goes.
struct PendingLayer {
  const Node* node = nullptr;
  partition::NodePlacement placement;
  npu::Target target;
  double cycles = 0;  // simulated alone, dispatch excluded
  int core_base = 0;
  int group_first = -1;  // first layer of its parallel group (-1: none)
  std::vector<int> inputs, outputs;
  std::shared_ptr<const StripeLayer> stripe;  // set: lowered from it instead of the node
  // An attention chain as one layer (npu_attention.h): `node` is its context MatMul, the
  // inputs Q, K, V, the output the context.
  std::optional<npu::AttentionLayer> attention;
  npu::AttentionTiling attention_tiling;
};

}  // namespace edgec::lower
