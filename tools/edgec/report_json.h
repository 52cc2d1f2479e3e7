// JSON files the verbs write (--json FILE). Each mirrors its table's columns, one object per
// row; tests/docs/test_cli_reference.py checks that they parse and agree with the tables.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "edgec/status.h"

namespace edgec::cli {

// Writes `j` (indented) to `path`; an error names the file.
Status WriteJsonFile(const std::string& path, const nlohmann::json& j);

}  // namespace edgec::cli
