#include "quant/calibrate.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "driver/session.h"
#include "runtime/reference_executor.h"
#include "support/progress.h"

namespace edgec::quant {

StatusOr<std::map<std::string, Histogram>> ObserveActivations(const Graph& g,
                                                              const std::vector<std::string>& names,
                                                              const std::vector<Sample>& samples,
                                                              bool progress) {
  // The observed values become extra graph outputs of a copy, so the fast plan computes
  // them; the original outputs come first.
  Graph probe = g.Clone();
  std::vector<std::string> order;
  for (const Value* v : probe.outputs()) order.push_back(v->name());
  for (const std::string& n : names) {
    Value* v = probe.FindValue(n);
    if (!v) return NotFound("calibration: no value '{}' in the graph", n);
    if (v->type.dtype != DType::kF32)
      return InvalidArgument("calibration: value '{}' is {}, not f32", n, v->type.ToString());
    if (!v->is_graph_output()) {
      probe.MarkOutput(v);
      order.push_back(n);
    }
  }
  std::map<std::string, Histogram> hist;
  for (const std::string& n : names) hist.emplace(n, Histogram());

  SessionOptions so;
  so.opt_level = 0;
  so.plan.threads = 1;  // small graphs lose more to thread sync than they gain
  auto session = Session::FromGraph(probe.Clone(), "calibration", so);
  Progress bar("calibrating", static_cast<int64_t>(samples.size()), progress ? stderr : nullptr);
  std::vector<Tensor> outs;
  for (const Sample& s : samples) {
    Status st = session.ok() ? (*session)->Run(s, &outs) : Status(StatusCode::kInternal, "no plan");
    if (!st.ok()) {
      // The oracle path: slower, but runs any graph the reference kernels cover.
      auto r = ReferenceExecutor(probe).Run(s);
      if (!r.ok()) return r.status().WithContext("calibration");
      outs = std::move(r).value();
    }
    for (size_t i = 0; i < order.size(); ++i) {
      auto it = hist.find(order[i]);
      if (it == hist.end()) continue;
      const Tensor& t = outs[i];
      it->second.Add(t.data<float>(), t.numel());
    }
    bar.Step();
  }
  bar.Done();
  return hist;
}

ScaleTable ChooseScales(const std::map<std::string, Histogram>& observed, const CalibrationOptions& o,
                        int64_t samples) {
  ScaleTable t;
  t.method = std::string(CalibrationMethodName(o.method));
  t.dtype = o.storage;
  t.symmetric = o.symmetric;
  t.samples = samples;
  for (const auto& [name, h] : observed) {
    const Range r = ChooseRange(h, o);
    const ScaleZeroPoint p = ParamsFromRange(r, o.storage, o.symmetric);
    t.activations[name] = {p.scale, p.zero_point, h.min(), h.max(), r.lo, r.hi};
  }
  return t;
}

Status WriteScaleTable(const ScaleTable& t, const std::string& path) {
  nlohmann::ordered_json j;
  j["format"] = "edgec-quant-scales/1";
  j["method"] = t.method;
  j["dtype"] = std::string(DTypeName(t.dtype));
  j["symmetric"] = t.symmetric;
  j["samples"] = t.samples;
  nlohmann::ordered_json acts = nlohmann::ordered_json::object();
  for (const auto& [name, a] : t.activations) {
    acts[name] = {{"scale", a.scale}, {"zero_point", a.zero_point}, {"min", a.min},
                  {"max", a.max}, {"lo", a.lo}, {"hi", a.hi}};
  }
  j["activations"] = acts;
  std::ofstream out(path);
  out << j.dump(2) << "\n";
  if (!out) return IoError("cannot write '{}'", path);
  return Status::Ok();
}

StatusOr<ScaleTable> ReadScaleTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFound("cannot open scales file '{}'", path);
  nlohmann::json j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return InvalidArgument("{}: not valid JSON", path);
  // Each field's type is checked before it is read: nlohmann's value() throws on a mismatch
  // (tests/fuzz: fuzz_scale_json found "format": 1).
  auto text = [&](const char* key, const char* def) -> StatusOr<std::string> {
    if (!j.contains(key)) return std::string(def);
    if (!j[key].is_string()) return InvalidArgument("{}: '{}' must be a string, got {}", path, key, j[key].dump());
    return j[key].get<std::string>();
  };
  ASSIGN_OR_RETURN(const std::string format, text("format", ""));
  if (format != "edgec-quant-scales/1")
    return InvalidArgument("{}: 'format' must be \"edgec-quant-scales/1\"", path);
  ScaleTable t;
  ASSIGN_OR_RETURN(t.method, text("method", "file"));
  ASSIGN_OR_RETURN(const std::string dtype, text("dtype", "u8"));
  if (dtype != "u8" && dtype != "i8") return InvalidArgument("{}: 'dtype' must be u8 or i8, got '{}'", path, dtype);
  t.dtype = dtype == "u8" ? DType::kU8 : DType::kI8;
  if (j.contains("symmetric")) {
    if (!j["symmetric"].is_boolean()) return InvalidArgument("{}: 'symmetric' must be true or false", path);
    t.symmetric = j["symmetric"].get<bool>();
  }
  if (j.contains("samples")) {
    if (!j["samples"].is_number_integer()) return InvalidArgument("{}: 'samples' must be an integer", path);
    t.samples = j["samples"].get<int64_t>();
  }
  if (!j.contains("activations") || !j["activations"].is_object())
    return InvalidArgument("{}: no 'activations' object", path);
  const int32_t qmin = t.dtype == DType::kU8 ? 0 : -128, qmax = t.dtype == DType::kU8 ? 255 : 127;
  for (const auto& item : j["activations"].items()) {  // named, not bound: the lambda captures them
    const std::string name = item.key();
    const nlohmann::json& e = item.value();
    if (!e.is_object()) return InvalidArgument("{}: activation '{}' is not an object", path, name);
    ActivationScale a;
    auto num = [&](const char* key, double def) -> StatusOr<double> {
      if (!e.contains(key)) return def;
      if (!e[key].is_number()) return InvalidArgument("{}: activation '{}': '{}' is not a number", path, name, key);
      return e[key].get<double>();
    };
    ASSIGN_OR_RETURN(a.min, num("min", 0));
    ASSIGN_OR_RETURN(a.max, num("max", 0));
    ASSIGN_OR_RETURN(a.lo, num("lo", a.min));
    ASSIGN_OR_RETURN(a.hi, num("hi", a.max));
    if (e.contains("scale")) {
      ASSIGN_OR_RETURN(double s, num("scale", 1));
      ASSIGN_OR_RETURN(double z, num("zero_point", 0));
      if (!(s > 0) || !(s <= std::numeric_limits<float>::max()) || static_cast<float>(s) == 0)
        return InvalidArgument("{}: activation '{}': scale {} must be > 0", path, name, s);
      if (z != std::floor(z) || z < qmin || z > qmax)
        return InvalidArgument("{}: activation '{}': zero_point {} is not an integer in [{}, {}]", path,
                               name, z, qmin, qmax);
      a.scale = static_cast<float>(s);
      a.zero_point = static_cast<int32_t>(z);
    } else if (e.contains("lo") || e.contains("hi")) {
      // Within float range, so the scale made from them is a float (fuzz_scale_json).
      if (!(std::fabs(a.lo) <= 1e30 && std::fabs(a.hi) <= 1e30))
        return InvalidArgument("{}: activation '{}': range [{}, {}] is out of float range", path, name, a.lo, a.hi);
      const ScaleZeroPoint p = ParamsFromRange({a.lo, a.hi}, t.dtype, t.symmetric);
      a.scale = p.scale, a.zero_point = p.zero_point;
    } else {
      return InvalidArgument("{}: activation '{}' has neither scale nor lo/hi", path, name);
    }
    t.activations[name] = a;
  }
  return t;
}

}  // namespace edgec::quant
