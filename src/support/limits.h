// Resource limits: how large a model, a tensor, a graph and a memory plan edgec accepts before
// refusing with an error that names the limit and its flag. A model file comes from anywhere;
// these caps turn a file that claims terabytes into a one-line error instead of an
// out-of-memory kill. Process-wide: the CLI sets them from its flags before any work
// (tools/edgec/main.cc: --max-model-bytes, --max-tensor-bytes, --max-nodes, --max-arena-bytes),
// a program on the library may set them once at start. docs/reliability.md lists the defaults.
// tests/runtime/limits_test.cc guards each cap; tests/bad_models/run.py the CLI's messages.
#pragma once

#include <cstdint>
#include <string>

#include "support/status.h"

namespace edgec {

struct Limits {
  int64_t model_bytes = int64_t{4} << 30;   // an ONNX or .edgec file (external data apart)
  int64_t tensor_bytes = int64_t{4} << 30;  // any one tensor: initializer, input, computed value
  int64_t nodes = 500'000;                  // nodes of one graph
  int64_t arena_bytes = int64_t{4} << 30;   // the activation arena a memory plan may need
};

// The limits in force (defaults until SetLimits).
const Limits& CurrentLimits();
void SetLimits(const Limits& limits);

// The checks, each an error naming `what` (a file, a tensor, a model), the figure, the cap and
// the flag that raises it.
Status CheckModelBytes(int64_t bytes, const std::string& what);
Status CheckTensorBytes(int64_t bytes, const std::string& what);
Status CheckNodeCount(int64_t nodes, const std::string& what);
// `detail` (optional) says what dominates the plan (memory::MemoryPlan::Largest).
Status CheckArenaBytes(int64_t bytes, const std::string& what, const std::string& detail = "");

}  // namespace edgec
