// ONNX importer: ModelProto (libonnx protobuf types) -> ir::Graph.
//
// Accepts opsets 7 through 17 of the default domain. Converters (converters.cc, one table)
// normalize older forms to edgec's canonical op forms (Clip bounds as inputs, Upsample as
// Resize, axes as inputs, ...). Constant nodes and initializers become constant Values.
// A model with unsupported ops is refused with every unsupported op type listed at once
// (a count and the first node of each).
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "support/status.h"
#include "ir/graph.h"

namespace edgec::onnx_fe {

// Facts about the source model, filled even when the import fails (as far as it got).
struct ImportInfo {
  int64_t ir_version = 0;
  int opset = 0;
  std::string producer;
  std::map<std::string, int> op_histogram;  // ONNX op_type -> count, as in the file
  // Per op type edgec cannot import, in order of first appearance: "NonZero 'nz1'" for one
  // node, "DynamicQuantizeLinear ×119, first 'input_QuantizeLinear'" for several.
  std::vector<std::string> unsupported;
};

StatusOr<Graph> ImportOnnxFile(const std::string& path, ImportInfo* info = nullptr);
// `model_dir` anchors external data; `what` names the model in errors (its path).
StatusOr<Graph> ImportOnnxModel(const onnx::ModelProto& model, const std::filesystem::path& model_dir,
                                const std::string& what, ImportInfo* info = nullptr);

// Calls `fn` on every node of `g` and of its subgraphs (If branches, Loop and Scan bodies),
// enclosing nodes first.
void VisitNodes(const onnx::GraphProto& g, const std::function<void(const onnx::NodeProto&)>& fn);
// Whether the importer converts this node (its op in its domain), and the op as errors name
// it ("LSTM", "ai.onnx.preview.training.Adam").
bool IsSupportedNode(const onnx::NodeProto& n);
std::string QualifiedOpType(const onnx::NodeProto& n);

// Parses a model file into a ModelProto with checks a truncated or foreign file fails.
StatusOr<onnx::ModelProto> LoadModelProto(const std::string& path);

// The oldest and newest default-domain opsets the importer accepts. Opsets 7-17 are the
// target; models at opsets 1-6 import when their ops mean the same as at opset 7 (legacy
// attributes that change meaning, such as Add's broadcast/axis, are refused by name).
constexpr int kMinOpset = 1;
constexpr int kMaxOpset = 17;

}  // namespace edgec::onnx_fe
