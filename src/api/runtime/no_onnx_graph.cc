// libedgec_runtime has no ONNX importer: a format-2 compiled model (its graph stored as ONNX)
// must be recompiled to format 3 (runtime/graph_io.h).
#include "runtime/graph_io.h"

namespace edgec::graph_io {

StatusOr<Graph> ImportOnnxGraph(std::span<const uint8_t>, const std::string& what) {
  return Unimplemented("{}: the graph is stored as ONNX (format 2), which this runtime without the ONNX importer "
                       "cannot read; recompile the model with this edgec", what);
}

}  // namespace edgec::graph_io
