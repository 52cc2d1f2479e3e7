// Node attributes: a small typed map. Names and meanings follow the ONNX spec of the op;
// the importer fills in every default the spec defines, so kernels read attributes
// without re-deciding defaults.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ir/tensor.h"

namespace edgec {

class Graph;
// A subgraph attribute (If's branches, Loop's and Scan's body). Subgraphs are shared between
// clones of a node and never edited after import; ir/control_flow.h says how their inputs
// map to the node's.
using SubgraphPtr = std::shared_ptr<const Graph>;

using AttrValue = std::variant<int64_t, float, std::string, std::vector<int64_t>,
                               std::vector<float>, std::vector<std::string>, Tensor, SubgraphPtr>;

class Attributes {
 public:
  bool Has(const std::string& name) const { return map_.count(name) != 0; }
  void Set(const std::string& name, AttrValue v) { map_[name] = std::move(v); }
  void Erase(const std::string& name) { map_.erase(name); }

  int64_t GetInt(const std::string& name, int64_t def = 0) const { return Get<int64_t>(name, def); }
  float GetFloat(const std::string& name, float def = 0.f) const { return Get<float>(name, def); }
  std::string GetString(const std::string& name, const std::string& def = "") const {
    return Get<std::string>(name, def);
  }
  std::vector<int64_t> GetInts(const std::string& name, std::vector<int64_t> def = {}) const {
    return Get<std::vector<int64_t>>(name, std::move(def));
  }
  std::vector<float> GetFloats(const std::string& name, std::vector<float> def = {}) const {
    return Get<std::vector<float>>(name, std::move(def));
  }
  std::vector<std::string> GetStrings(const std::string& name) const {
    return Get<std::vector<std::string>>(name, {});
  }
  Tensor GetTensor(const std::string& name) const { return Get<Tensor>(name, Tensor()); }
  // nullptr when absent.
  const Graph* GetGraph(const std::string& name) const { return Get<SubgraphPtr>(name, nullptr).get(); }
  const AttrValue* Find(const std::string& name) const {
    auto it = map_.find(name);
    return it == map_.end() ? nullptr : &it->second;
  }

  const std::map<std::string, AttrValue>& map() const { return map_; }
  bool operator==(const Attributes& o) const;

 private:
  template <typename T>
  T Get(const std::string& name, T def) const {
    auto it = map_.find(name);
    if (it == map_.end()) return def;
    if (auto* p = std::get_if<T>(&it->second)) return *p;
    // ints and floats convert into each other (some exporters write 1 for 1.0).
    if constexpr (std::is_same_v<T, float>) {
      if (auto* p = std::get_if<int64_t>(&it->second)) return static_cast<float>(*p);
    }
    if constexpr (std::is_same_v<T, int64_t>) {
      if (auto* p = std::get_if<float>(&it->second)) return static_cast<int64_t>(*p);
    }
    return def;
  }
  std::map<std::string, AttrValue> map_;
};

std::string AttrValueToString(const AttrValue& v);

// The value a Constant node's attributes give (value, value_float(s) or value_int(s)), or
// nullopt when it has none of them (the ONNX importer and the reference kernel read it alike).
std::optional<Tensor> ConstantAttributeValue(const Attributes& a);

}  // namespace edgec
