// Process-wide settings of edgec: the resource limits (how large a model, a tensor, a graph
// and a memory plan edgec accepts before refusing with an error that names the limit;
// docs/reliability.md) and quantities with units as the command line writes them.
//
//   edgec::ResourceLimits l = edgec::GetResourceLimits();
//   l.model_bytes = static_cast<int64_t>(*edgec::ParseQuantity("8G"));
//   edgec::SetResourceLimits(l);   // once at start, before any model is loaded
#pragma once

#include <cstdint>
#include <string>

#include "edgec/export.h"
#include "edgec/status.h"

namespace edgec {
inline namespace v1 {

struct ResourceLimits {
  int64_t model_bytes = int64_t{4} << 30;   // an ONNX or .edgec file (external data apart)
  int64_t tensor_bytes = int64_t{4} << 30;  // any one tensor: initializer, input, computed value
  int64_t nodes = 500'000;                  // nodes of one graph
  int64_t arena_bytes = int64_t{4} << 30;   // the activation arena a memory plan may need
};

EDGEC_API ResourceLimits GetResourceLimits();
EDGEC_API void SetResourceLimits(const ResourceLimits& limits);

// "512K", "1.5M", "2G" (powers of 1024 for bytes), "800MHz", "30GB/s", plain numbers: the
// value in base units; an error names the text.
EDGEC_API StatusOr<double> ParseQuantity(const std::string& text);

}  // namespace v1
}  // namespace edgec
