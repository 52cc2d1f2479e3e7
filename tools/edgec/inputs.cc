#include "tools/edgec/inputs.h"

#include <random>

#include "ir/infer.h"
#include "runtime/reference_executor.h"
#include "runtime/shape_binding.h"
#include "support/npy.h"

namespace edgec::cli {

StatusOr<std::map<std::string, std::string>> ParseAssignments(const std::vector<std::string>& flags,
                                                              const std::string& flag_name) {
  std::map<std::string, std::string> m;
  for (const auto& f : flags) {
    auto eq = f.rfind('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == f.size()) {
      return InvalidArgument("{} '{}' must have the form NAME=VALUE", flag_name, f);
    }
    std::string name = f.substr(0, eq);
    if (m.count(name)) return InvalidArgument("{} names '{}' twice", flag_name, name);
    m[name] = f.substr(eq + 1);
  }
  return m;
}

StatusOr<std::map<std::string, Dims>> ParseShapes(const std::vector<std::string>& shape_flags) {
  ASSIGN_OR_RETURN(auto text, ParseAssignments(shape_flags, "--shape"));
  std::map<std::string, Dims> shapes;
  for (auto& [name, t] : text) {
    auto d = ParseDims(t);
    if (!d.ok()) return InvalidArgument("--shape {}: {}", name, d.status().message());
    shapes[name] = *d;
  }
  return shapes;
}

StatusOr<std::map<std::string, Tensor>> GatherInputs(const Graph& g,
                                                     const std::vector<std::string>& input_flags,
                                                     const std::vector<std::string>& shape_flags,
                                                     uint64_t seed,
                                                     std::vector<std::string>* random_names) {
  ASSIGN_OR_RETURN(auto files, ParseAssignments(input_flags, "--input"));
  ASSIGN_OR_RETURN(auto shape_text, ParseAssignments(shape_flags, "--shape"));
  std::map<std::string, Tensor> inputs;
  for (auto& [name, path] : files) {
    bool known = false;
    for (const Value* v : g.inputs()) known |= v->name() == name;
    if (!known) {
      std::string names;
      for (const Value* v : g.inputs()) names += (names.empty() ? "'" : ", '") + v->name() + "'";
      return InvalidArgument("--input '{}': the model has no input of that name (inputs: {})", name,
                             names);
    }
    auto t = ReadNpy(path);
    if (!t.ok()) return t.status().WithContext(fmt::format("--input {}", name));
    inputs[name] = std::move(t).value();
  }
  // Random data for the rest, seeded per input so one input's shape does not change another's.
  uint64_t k = 0;
  for (const Value* v : g.inputs()) {
    ++k;
    if (inputs.count(v->name())) continue;
    Dims dims = v->type.dims;
    if (auto it = shape_text.find(v->name()); it != shape_text.end()) {
      ASSIGN_OR_RETURN(dims, ParseDims(it->second));
    }
    for (auto& d : dims) {
      if (d < 0) d = 1;
    }
    Graph one;
    one.AddInput(v->name(), MakeType(v->type.dtype, dims));
    auto r = RandomInputs(one, seed * 1000003 + k);
    inputs[v->name()] = r.begin()->second;
    if (random_names) random_names->push_back(v->name());
  }
  for (auto& [name, _] : shape_text) {
    if (files.count(name)) {
      return InvalidArgument("--shape {} conflicts with --input {} (the file gives the shape)", name,
                             name);
    }
  }
  return inputs;
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

Status RequireQdq(const Graph& g, const std::string& model) {
  for (const Node* n : g.nodes())
    if (n->op() == OpKind::kQuantizeLinear || n->op() == OpKind::kDequantizeLinear) return Status::Ok();
  return InvalidArgument("{}: --int8 needs a QDQ model (QuantizeLinear/DequantizeLinear nodes) and this one has none; "
                         "make one with `edgec quantize {} --calib DIR -o model.int8.onnx`", model, model);
}

}  // namespace edgec::cli
