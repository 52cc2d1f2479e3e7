// Shape-only estimates: a model as a list of GEMM-class layers (no weights), each tiled and
// simulated on a target. Decoder-only transformers are generated from a config, so a
// 7B-class model can be estimated without any weights.
#pragma once

#include <string>
#include <vector>

#include "npu/tiler.h"

namespace edgec::npu {

// A decoder-only transformer (LLaMA-like: Q/K/V/O projections, gated FFN, LM head).
// `seq` tokens are processed in one pass attending to `context` positions (decode: seq = 1).
struct DecoderConfig {
  int layers = 32, hidden = 4096, heads = 32, kv_heads = 32, ffn = 11008;
  int seq = 1, context = 1024, vocab = 32000;
  bool fp16 = false;
  int64_t parameters() const;
  std::string ToString() const;
};

// "7b", "1b", "tiny", or "layers=32,hidden=4096,heads=32,ffn=11008,seq=1,context=1024,..."
// (unnamed keys keep the 7b values). Errors name the key.
StatusOr<DecoderConfig> ParseDecoderConfig(const std::string& text);

struct RepeatedLayer {
  ConvLayer layer;
  int64_t count = 1;  // identical instances (layers x heads)
};
std::vector<RepeatedLayer> DecoderLayers(const DecoderConfig& c);

struct LayerEstimate {
  RepeatedLayer layer;
  TilerResult tiling;
};
struct ModelEstimate {
  std::vector<LayerEstimate> layers;
  Stats total;  // every instance counted
  int64_t weight_bytes = 0;
};

StatusOr<ModelEstimate> EstimateModel(const std::vector<RepeatedLayer>& layers, const Target& t,
                                      const TilerOptions& opt = {});

// Per-layer table: count, shape, cycles, MACs, utilization, mapping, DRAM, roofline, tiling.
std::string FormatEstimate(const ModelEstimate& e, const Target& t, bool show_tiling);

}  // namespace edgec::npu
