// Binds graph input shapes and infers every value's type, evaluating small integer
// subgraphs (Shape -> Gather -> Concat -> Reshape chains) on the reference kernels so the
// shapes they compute become static. Used by `inspect` and the compile path.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"

namespace edgec {

// `shapes` gives dims per input name; inputs not named keep their declared dims, with each
// unknown dim set to `default_dim` (a value <= 0 leaves it unknown). Fails naming the input
// when a given shape contradicts the declared one.
Status BindInputShapes(Graph& g, const std::map<std::string, Dims>& shapes, int64_t default_dim);

// Parses "1x3x224x224" (or "1,3,224,224").
StatusOr<Dims> ParseDims(const std::string& text);

}  // namespace edgec
