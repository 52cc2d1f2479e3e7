#include "tools/edgec/run_output.h"

#include <algorithm>
#include <cmath>
#include <filesystem>

#include <fmt/format.h>

#include "edgec/tensor_io.h"
#include "tools/edgec/inputs.h"

namespace edgec::cli {
namespace {

struct Stats {
  double min = 0, max = 0, mean = 0;
  int64_t nonfinite = 0;
  std::vector<int64_t> top;  // indices of the largest values, largest first
};

Stats StatsOf(const std::vector<double>& v, int top) {
  Stats s;
  if (v.empty()) return s;
  double mn = v[0], mx = v[0], sum = 0;
  for (double x : v) {
    if (!std::isfinite(x)) {
      ++s.nonfinite;
      continue;
    }
    mn = std::min(mn, x);
    mx = std::max(mx, x);
    sum += x;
  }
  s.min = mn, s.max = mx, s.mean = sum / static_cast<double>(v.size());
  if (top <= 0) return s;
  std::vector<int64_t> idx(v.size());
  for (size_t i = 0; i < idx.size(); ++i) idx[i] = static_cast<int64_t>(i);
  const int k = static_cast<int>(std::min<size_t>(top, idx.size()));
  std::partial_sort(idx.begin(), idx.begin() + k, idx.end(), [&](int64_t a, int64_t b) { return v[a] > v[b]; });
  s.top.assign(idx.begin(), idx.begin() + k);
  return s;
}

// NaN and infinities have no JSON number: null.
nlohmann::json Number(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(); }

}  // namespace

void PrintOutput(const std::string& name, const TensorView& t, int top) {
  fmt::print("output '{}': {}", name, TypeString(t));
  if (t.numel() == 0) {
    fmt::print(" (empty)\n");
    return;
  }
  const std::vector<double> v = ToDoubles(t);
  const Stats s = StatsOf(v, top);
  fmt::print("  min {:.6g}  max {:.6g}  mean {:.6g}", s.min, s.max, s.mean);
  if (s.nonfinite) fmt::print("  ({} non-finite)", s.nonfinite);
  fmt::print("\n");
  if (top <= 0) return;
  fmt::print("  top {}:", s.top.size());
  for (int64_t i : s.top) fmt::print("  [{}] {:.6g}", i, v[i]);
  fmt::print("\n");
}

nlohmann::json OutputJson(const std::string& name, const TensorView& t, int top) {
  nlohmann::json j = {{"name", name}, {"type", TypeString(t)}, {"dtype", DataTypeName(t.dtype())},
                      {"dims", t.dims()}, {"elements", t.numel()}};
  if (t.numel() == 0) return j;
  const std::vector<double> v = ToDoubles(t);
  const Stats s = StatsOf(v, top);
  j["min"] = Number(s.min), j["max"] = Number(s.max), j["mean"] = Number(s.mean);
  j["nonfinite"] = s.nonfinite;
  j["top"] = nlohmann::json::array();
  for (int64_t i : s.top) j["top"].push_back({{"index", i}, {"value", Number(v[i])}});
  return j;
}

nlohmann::json InputsJson(const std::map<std::string, TensorView>& inputs, const std::vector<std::string>& random,
                          uint64_t seed) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [name, t] : inputs) {
    const bool generated = std::find(random.begin(), random.end(), name) != random.end();
    nlohmann::json r = {{"name", name}, {"type", TypeString(t)}, {"source", generated ? "random" : "file"}};
    if (generated) r["seed"] = seed;
    rows.push_back(std::move(r));
  }
  return rows;
}

nlohmann::json NodesJson(const Profile& p) {
  nlohmann::json rows = nlohmann::json::array();
  for (const NodeProfile& n : p.nodes)
    rows.push_back({{"node", n.node}, {"op", n.op}, {"unit", UnitName(n.unit)}, {"kernel", n.kernel},
                    {"ms", n.seconds * 1e3}, {"cycles", n.cycles}, {"bytes", n.bytes}});
  return rows;
}

Status WriteOutputs(const std::string& dir, const std::vector<NamedTensor>& outputs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return BadInput("cannot create output folder '{}': {}", dir, ec.message());
  std::map<std::string, std::string> used;  // file -> output name, to catch collisions
  for (const NamedTensor& o : outputs) {
    const std::string file = SanitizeFileName(o.name) + ".npy";
    if (used.count(file))
      return BadInput("outputs '{}' and '{}' map to the same file name '{}'", used[file], o.name, file);
    used[file] = o.name;
  }
  for (const NamedTensor& o : outputs)
    EDGEC_RETURN_IF_ERROR(WriteNpyFile((std::filesystem::path(dir) / (SanitizeFileName(o.name) + ".npy")).string(), o.tensor));
  return Status::Ok();
}

}  // namespace edgec::cli
