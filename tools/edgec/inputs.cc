#include "tools/edgec/inputs.h"

#include <algorithm>
#include <cctype>
#include <fstream>

#include "edgec/tensor_io.h"

namespace edgec::cli {
namespace {

// "'x', 'sr'": the names an error about an unknown input lists.
std::string QuotedNames(const std::vector<ValueInfo>& values) {
  std::string names;
  for (const ValueInfo& v : values) names += (names.empty() ? "'" : ", '") + v.name + "'";
  return names;
}

}  // namespace

StatusOr<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& flags,
                                                              const std::string& flag_name) {
  std::map<std::string, std::string> m;
  for (const auto& f : flags) {
    auto eq = f.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == f.size()) {
      return BadInput("{} '{}' must have the form NAME=VALUE", flag_name, f);
    }
    std::string name = f.substr(0, eq);
    if (m.count(name)) return BadInput("{} names '{}' twice", flag_name, name);
    m[name] = f.substr(eq + 1);
  }
  return m;
}

StatusOr<ShapeMap> ParseShapes(const std::vector<std::string>& shape_flags) {
  EDGEC_ASSIGN_OR_RETURN(auto text, ParseAssignments(shape_flags, "--shape"));
  ShapeMap shapes;
  for (auto& [name, t] : text) {
    auto d = ParseDimsText(t);
    if (!d.ok()) return BadInput("--shape {}: {}", name, d.status().message());
    shapes[name] = *d;
  }
  return shapes;
}

StatusOr<std::map<std::string, TensorView>> GatherInputs(const std::vector<ValueInfo>& graph_inputs,
                                                         const std::vector<std::string>& input_flags,
                                                         const std::vector<std::string>& shape_flags, uint64_t seed,
                                                         std::vector<std::string>* random_names) {
  EDGEC_ASSIGN_OR_RETURN(auto files, ParseAssignments(input_flags, "--input"));
  EDGEC_ASSIGN_OR_RETURN(auto shape_text, ParseAssignments(shape_flags, "--shape"));
  std::map<std::string, TensorView> inputs;
  for (auto& [name, path] : files) {
    bool known = false;
    for (const ValueInfo& v : graph_inputs) known |= v.name == name;
    if (!known) {
      return BadInput("--input '{}': the model has no input of that name (inputs: {})", name, QuotedNames(graph_inputs));
    }
    auto t = ReadNpyFile(path);
    if (!t.ok()) return t.status().WithContext(fmt::format("--input {}", name));
    inputs[name] = std::move(t).value();
  }
  // Random data for the rest, seeded per input so one input's shape does not change another's.
  uint64_t k = 0;
  for (const ValueInfo& v : graph_inputs) {
    ++k;
    if (inputs.count(v.name)) continue;
    std::vector<int64_t> dims = v.dims;
    if (auto it = shape_text.find(v.name); it != shape_text.end()) {
      EDGEC_ASSIGN_OR_RETURN(dims, ParseDimsText(it->second));
    }
    inputs[v.name] = RandomTensor(v.dtype, dims, seed * 1000003 + k);
    if (random_names) random_names->push_back(v.name);
  }
  for (auto& [name, _] : shape_text) {
    if (files.count(name)) {
      return BadInput("--shape {} conflicts with --input {} (the file gives the shape)", name, name);
    }
  }
  return inputs;
}

Status ApplyFreeze(Model& m, const std::vector<std::string>& freeze_flags, const std::string& path) {
  if (freeze_flags.empty()) return Status::Ok();
  auto text = ParseAssignments(freeze_flags, "--freeze");
  if (!text.ok()) return text.status().WithContext(path);
  const std::vector<ValueInfo> inputs = m.inputs();
  std::map<std::string, TensorView> values;
  for (auto& [name, value] : *text) {
    const ValueInfo* in = nullptr;
    for (const ValueInfo& v : inputs) in = v.name == name ? &v : in;
    if (!in) {
      return BadInput("{}: --freeze '{}': the model has no input of that name (inputs: {})", path, name,
                      QuotedNames(inputs));
    }
    if (value.size() > 4 && value.compare(value.size() - 4, 4, ".npy") == 0) {
      auto t = ReadNpyFile(value);
      if (!t.ok()) return t.status().WithContext(fmt::format("{}: --freeze {}", path, name));
      values[name] = std::move(t).value();
      continue;
    }
    std::vector<int64_t> dims = in->dims;
    bool symbolic = false;
    for (int64_t d : dims) symbolic |= d < 0;
    if (symbolic) {
      if (dims.size() > 1)
        return BadInput("{}: --freeze {}: the input is {}, with symbolic dims; give its value as a .npy file", path,
                        name, in->type);
      dims = {static_cast<int64_t>(std::count(value.begin(), value.end(), ',')) + 1};
    }
    auto t = TensorFromText(value, in->dtype, dims);
    if (!t.ok()) return t.status().WithContext(fmt::format("{}: --freeze {}", path, name));
    values[name] = std::move(t).value();
  }
  return m.FreezeInputs(values);
}

std::string SanitizeFileName(const std::string& name) {
  std::string s = name;
  for (char& c : s) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  if (s.empty() || s == "." || s == "..") s = "_" + s;
  return s;
}

Status RequireQdq(const Model& m, const std::string& model) {
  if (m.has_qdq()) return Status::Ok();
  return BadInput("{}: --int8 needs a QDQ model (QuantizeLinear/DequantizeLinear nodes) and this one has none; "
                  "make one with `edgec quantize {} --calib DIR -o model.int8.onnx`", model, model);
}

Status WriteTextFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  if (!out) return BadInput("cannot write '{}'", path);
  return Status::Ok();
}

}  // namespace edgec::cli
