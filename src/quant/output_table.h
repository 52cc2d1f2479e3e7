// The `edgec_output_table` attribute of QLinearConv / QLinearMatMul (src/ir/ops.def; set by
// lower/cpu_fuse_output_table.cc): read and checked in one place for the reference kernels and
// the fast requantization.
#pragma once

#include <cstdint>
#include <vector>

#include "support/status.h"
#include "ir/attributes.h"
#include "ir/types.h"

namespace edgec::quant {

// 256 values of the output type `out` (u8 or i8), entry i for the value lowest(out) + i;
// empty when the node has no table. The error names the attribute, not the node.
inline StatusOr<std::vector<int64_t>> ReadOutputTable(const Attributes& attrs, DType out) {
  if (!attrs.Has("edgec_output_table")) return std::vector<int64_t>();
  std::vector<int64_t> table = attrs.GetInts("edgec_output_table");
  if (table.size() != 256) return InvalidArgument("edgec_output_table has {} values, expected 256", table.size());
  const int64_t lowest = out == DType::kU8 ? 0 : -128;
  for (int64_t v : table) {
    if (v < lowest || v > lowest + 255) return InvalidArgument("edgec_output_table value {} is outside {}", v, DTypeName(out));
  }
  return table;
}

}  // namespace edgec::quant
