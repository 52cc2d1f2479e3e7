// Format-2 compiled models carry their graph as ONNX: the importer reads it.
#include <onnx/onnx_pb.h>

#include "frontend/onnx/importer.h"
#include "runtime/graph_io.h"

namespace edgec::graph_io {

StatusOr<Graph> ImportOnnxGraph(std::span<const uint8_t> bytes, const std::string& what) {
  onnx::ModelProto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())))
    return InvalidArgument("{}: the compiled graph is not valid ONNX", what);
  return onnx_fe::ImportOnnxModel(proto, "", what);
}

}  // namespace edgec::graph_io
