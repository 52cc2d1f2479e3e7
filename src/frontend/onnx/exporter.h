// ONNX exporter: ir::Graph -> ModelProto at opset 17 of the default domain, using only
// standard ops, so that any runtime can load it. Canonical forms map back to opset-17
// spellings (Reduce* other than ReduceSum take `axes` as an attribute there, so their axes
// input must be constant; Cast's `to` becomes an ONNX data type again).
#pragma once

#include <string>

#include <onnx/onnx_pb.h>

#include "support/status.h"
#include "ir/graph.h"

namespace edgec::onnx_fe {

constexpr int kExportOpset = 17;

struct ExportOptions {
  // Write internal (fused) ops as nodes of the "edgec" domain instead of refusing them.
  bool keep_fused = false;
};

StatusOr<onnx::ModelProto> ExportOnnxModel(const Graph& g, const ExportOptions& opt = {});
Status ExportOnnxFile(const Graph& g, const std::string& path, const ExportOptions& opt = {});

}  // namespace edgec::onnx_fe
