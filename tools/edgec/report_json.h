// JSON forms of the tables the verbs print (--json). Each mirrors its table's columns, one
// object per row; tests/docs/test_cli_reference.py checks that they parse and agree with the
// tables.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "partition/partition.h"

namespace edgec::cli {

// compile: one object per node: node, op, unit ("npu"/"cpu"), reason, macs, npu_ms, cpu_ms,
// transfer_ms.
nlohmann::json PlacementsJson(const std::vector<partition::NodePlacement>& placements);

// Writes `j` (indented) to `path`; an error names the file.
Status WriteJsonFile(const std::string& path, const nlohmann::json& j);

}  // namespace edgec::cli
