// The front of the compile chain as one call: import an ONNX file, bind input shapes, run
// an optimization pipeline. Verbs, tests and benchmarks share it so that they all see the
// same graph for the same flags.
#pragma once

#include <map>
#include <string>

#include "ir/graph.h"
#include "passes/pass.h"

namespace edgec::driver {

struct LoadOptions {
  std::map<std::string, Dims> shapes;  // --shape bindings
  int64_t default_dim = 0;             // unknown dims not bound: 0 keeps them symbolic
  int opt_level = 0;                   // named pipeline, used when `pipeline` is empty
  std::string pipeline;                // explicit pass list
};

// `ctx` (optional) receives pass statistics and carries --print-after/--explain settings;
// its evaluator is set here.
StatusOr<Graph> LoadModel(const std::string& path, const LoadOptions& opt,
                          passes::PassContext* ctx = nullptr);

// Runs a pipeline (text, or the named level when empty) on a graph already loaded.
Status Optimize(Graph& g, int opt_level, const std::string& pipeline, passes::PassContext& ctx);

}  // namespace edgec::driver
