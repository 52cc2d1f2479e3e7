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

// Makes each named graph input a constant with the given value (Graph::FreezeInput) and
// infers the graph again, so that what depends only on it folds (an If on `sr == 16000`
// becomes its branch in fold-constants). Fails naming the input when it is not an input of
// the model (listing those it has), or when the value's dtype or dims contradict the
// declared ones (a symbolic dim takes the value's).
Status FreezeInputs(Graph& g, const std::map<std::string, Tensor>& values);

// Parses "1x3x224x224" (or "1,3,224,224").
StatusOr<Dims> ParseDims(const std::string& text);

}  // namespace edgec
