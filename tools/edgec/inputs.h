// Input handling shared by the verbs that run a model: `--input name=file.npy` and
// `--shape name=1x3x224x224`, seeded random inputs for the rest. On the public API only.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "edgec/model.h"
#include "edgec/status.h"
#include "edgec/tensor.h"

namespace edgec::cli {

// An invalid-argument Status with a formatted message (a flag or a file the user gave).
template <typename... Args>
Status BadInput(fmt::format_string<Args...> f, Args&&... args) {
  return Status(StatusCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...));
}

using ShapeMap = std::map<std::string, std::vector<int64_t>>;

// Parses `name=value` flags; fails naming the flag.
StatusOr<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& flags,
                                                              const std::string& flag_name);

// Parses `--shape name=1x3x224x224` flags into dims per input name; fails naming the flag.
StatusOr<ShapeMap> ParseShapes(const std::vector<std::string>& shape_flags);

// Loads every `--input` file; every graph input not given gets seeded random data with
// the `--shape` dims (or its declared dims, unknown dims = 1). `random_names` receives
// the names of inputs that were generated.
StatusOr<std::map<std::string, TensorView>> GatherInputs(const std::vector<ValueInfo>& graph_inputs,
                                                         const std::vector<std::string>& input_flags,
                                                         const std::vector<std::string>& shape_flags, uint64_t seed,
                                                         std::vector<std::string>* random_names);

// Applies `--freeze name=VALUE` flags (Model::FreezeInputs): VALUE is a number or a comma
// list ("16000", "1,0"), read in the input's declared dtype and dims (a rank-0 or rank-1
// input with symbolic dims takes the list's length), or a .npy file. Fails naming the model
// file `path`, the flag and the input.
Status ApplyFreeze(Model& m, const std::vector<std::string>& freeze_flags, const std::string& path);

// `--int8` on a model without QuantizeLinear/DequantizeLinear would silently run in float:
// fails naming the model and the command that makes a QDQ model of it.
Status RequireQdq(const Model& m, const std::string& model);

// Replaces every character other than a letter, digit, '.', '_' or '-' with '_'.
std::string SanitizeFileName(const std::string& name);

// Writes `text` to `path`; an error names the file.
Status WriteTextFile(const std::string& path, const std::string& text);

}  // namespace edgec::cli
