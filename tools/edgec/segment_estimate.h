// What `edgec estimate` and `edgec sweep` share with `edgec compile` for a quantized (QDQ)
// model: the integer graph and the segment scheduler's timing (lower::EstimateSegments).
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"
#include "lower/npu_compile.h"
#include "npu/estimate.h"

namespace edgec::cli {

// Shared by estimate and sweep (estimate.cc): the NPU layers of an ONNX model (shapes
// only; layers the NPU cannot take are listed in `fallbacks` with the reason) or of a
// generated decoder, and a target with overrides.
StatusOr<std::vector<npu::RepeatedLayer>> LayersFor(const std::string& model, const std::string& decoder,
                                                    const std::vector<std::string>& shapes, bool fp16,
                                                    std::vector<std::string>* fallbacks);
StatusOr<npu::Target> TargetFor(const std::string& name, const std::vector<std::string>& sets);


// Whether the model carries quantization (QuantizeLinear / QLinear ops).
bool IsQdqModel(const Graph& g);

// The QDQ model `model` folded to integer ops, its inputs' dims bound (`shapes`: NAME=1x3x...).
StatusOr<Graph> IntegerGraphOf(const std::string& model, const std::vector<std::string>& shapes);

// Compiles `g` for `t` (partition with the cost rule, segments, SRAM plans) and times its NPU
// segments; `compiled` keeps the result when given.
StatusOr<lower::SegmentEstimate> EstimateWithSegments(const Graph& g, const npu::Target& t,
                                                      const npu::TilerOptions& opt,
                                                      lower::CompileResult* compiled = nullptr);

}  // namespace edgec::cli
