// Input handling shared by the verbs that run a model: `--input name=file.npy` and
// `--shape name=1x3x224x224`, seeded random inputs for the rest.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"

namespace edgec::cli {

// Parses `name=value` flags; fails naming the flag.
StatusOr<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& flags,
                                                              const std::string& flag_name);

// Parses `--shape name=1x3x224x224` flags into dims per input name; fails naming the flag.
StatusOr<std::map<std::string, Dims>> ParseShapes(const std::vector<std::string>& shape_flags);

// Loads every `--input` file; every graph input not given gets seeded random data with
// the `--shape` dims (or its declared dims, unknown dims = 1). `random_names` receives
// the names of inputs that were generated.
StatusOr<std::map<std::string, Tensor>> GatherInputs(const Graph& g,
                                                     const std::vector<std::string>& input_flags,
                                                     const std::vector<std::string>& shape_flags,
                                                     uint64_t seed,
                                                     std::vector<std::string>* random_names);

// `--int8` on a model without QuantizeLinear/DequantizeLinear would silently run in float:
// fails naming the model and the command that makes a QDQ model of it.
Status RequireQdq(const Graph& g, const std::string& model);

// Replaces every character other than a letter, digit, '.', '_' or '-' with '_'.
std::string SanitizeFileName(const std::string& name);

}  // namespace edgec::cli
