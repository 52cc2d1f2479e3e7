// Target description: strict JSON parsing, the built-in default, lookup and overrides.
#include "npu/target.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "ir/dtype.h"
#include "ir/op.h"

namespace edgec::npu {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kVecOps[] = {"add", "mul", "relu", "requantize", "maxpool", "avgpool", "lut", "dwconv",
                                   "copy", "norm", "softmax"};

// Reads fields of one JSON object, remembering which it saw so that leftovers are errors.
class ObjectReader {
 public:
  ObjectReader(const json& j, std::string path, const std::string& source, Status* err)
      : j_(j), path_(std::move(path)), source_(source), err_(err) {
    if (!j.is_object()) Fail(path_.empty() ? "target" : path_, "must be an object");
  }

  const json* Field(const std::string& key) {
    seen_.insert(key);
    if (!j_.is_object()) return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      Fail(Path(key), "missing field");
      return nullptr;
    }
    return &*it;
  }
  std::string Path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  template <typename T>
  void Int(const std::string& key, T& out, int64_t min, int64_t max = INT64_MAX) {
    const json* f = Field(key);
    if (!f) return;
    // A float must be whole and within int64 before it is converted (1e300 would overflow the
    // conversion; tests/fuzz: fuzz_target_json).
    if (!f->is_number_integer() && !(f->is_number_float() && std::floor(f->get<double>()) == f->get<double>() &&
                                     std::fabs(f->get<double>()) < 9.2e18)) {
      Fail(Path(key), fmt::format("must be an integer, got {}", f->dump()));
      return;
    }
    const int64_t v = f->is_number_integer() ? f->get<int64_t>() : static_cast<int64_t>(f->get<double>());
    if (v < min || v > max) {
      Fail(Path(key), max == INT64_MAX ? fmt::format("must be >= {}, got {}", min, v)
                                       : fmt::format("must be in [{}, {}], got {}", min, max, v));
      return;
    }
    out = static_cast<T>(v);
  }
  void Real(const std::string& key, double& out, double min_exclusive) {
    const json* f = Field(key);
    if (!f) return;
    if (!f->is_number()) {
      Fail(Path(key), fmt::format("must be a number, got {}", f->dump()));
      return;
    }
    const double v = f->get<double>();
    if (!(v > min_exclusive) || !std::isfinite(v)) {
      Fail(Path(key), fmt::format("must be > {}, got {}", min_exclusive, v));
      return;
    }
    out = v;
  }
  void Bool(const std::string& key, bool& out) {
    const json* f = Field(key);
    if (!f) return;
    if (!f->is_boolean()) return Fail(Path(key), fmt::format("must be true or false, got {}", f->dump()));
    out = f->get<bool>();
  }
  void String(const std::string& key, std::string& out, bool allow_empty = false) {
    const json* f = Field(key);
    if (!f) return;
    if (!f->is_string()) return Fail(Path(key), fmt::format("must be a string, got {}", f->dump()));
    out = f->get<std::string>();
    if (out.empty() && !allow_empty) Fail(Path(key), "must not be empty");
  }
  void Strings(const std::string& key, std::vector<std::string>& out) {
    const json* f = Field(key);
    if (!f) return;
    if (!f->is_array()) return Fail(Path(key), fmt::format("must be a list of strings, got {}", f->dump()));
    out.clear();
    for (const json& e : *f) {
      if (!e.is_string()) return Fail(Path(key), fmt::format("must be a list of strings, got {}", e.dump()));
      out.push_back(e.get<std::string>());
    }
  }
  // An optional object of dtype -> rate relative to int8 (each > 0, at most 1, i8 required).
  void DtypeRates(const std::string& key, std::map<std::string, double>& out) {
    if (!j_.is_object() || !j_.contains(key)) return;
    const json* f = Field(key);
    if (!f->is_object() || f->empty())
      return Fail(Path(key), fmt::format("must be an object of dtype: rate, got {}", f->dump()));
    static const std::set<std::string> known = {"i8", "u8", "i16", "f16", "bf16", "f32"};
    out.clear();
    for (auto it = f->begin(); it != f->end(); ++it) {
      if (!known.count(it.key()))
        return Fail(Path(key) + "." + it.key(), "unknown dtype (i8, u8, i16, f16, bf16, f32)");
      if (!it->is_number() || !(it->get<double>() > 0) || it->get<double>() > 1)
        return Fail(Path(key) + "." + it.key(), fmt::format("must be a rate in (0, 1], got {}", it->dump()));
      out[it.key()] = it->get<double>();
    }
    if (!out.count("i8")) Fail(Path(key), "must list i8 (the rates are relative to it)");
  }
  // Call after reading every known field.
  void Finish() {
    if (!j_.is_object()) return;
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (!seen_.count(it.key())) Fail(Path(it.key()), "unknown field");
    }
  }
  void Fail(const std::string& field, const std::string& what) {
    if (err_->ok()) *err_ = InvalidArgument("{}: {}: {}", source_, field, what);
  }

 private:
  const json& j_;
  std::string path_;
  const std::string& source_;
  Status* err_;
  std::set<std::string> seen_;
};

const char* kDefaultJson = R"JSON({
  "name": "edge-default",
  "description": "typical edge NPU: 16 AI cores of 128x32 MACs, 2 MiB shared SRAM, LPDDR 30 GB/s",
  "clock_hz": 1e9,
  "ai_cores": {
    "count": 16, "mac_rows": 128, "mac_cols": 32, "dataflow": "weight_stationary",
    "int8_rate": 1.0, "fp16_rate": 0.5,
    "accumulator_bytes": 131072, "local_buffer_bytes": 32768
  },
  "vector_cores": {
    "count": 4, "lanes": 64, "pipeline_latency": 16,
    "cycles_per_element": {"add": 1, "mul": 1, "relu": 1, "requantize": 2, "maxpool": 1,
                           "avgpool": 1, "lut": 2, "copy": 1, "dwconv": 1,
                           "norm": 4, "softmax": 4},
    "dtype_rates": {"i8": 1, "i16": 0.5, "f32": 0.25}
  },
  "shared_sram": {"bytes": 2097152, "banks": 32, "bandwidth_bytes_per_cycle": 2048, "alignment": 64},
  "dram": {"bandwidth_bytes_per_s": 30e9, "read_latency_cycles": 500, "write_latency_cycles": 500,
           "burst_bytes": 128},
  "dma": {"engines": 2, "setup_cycles": 32, "max_dims": 3, "pad_on_load": true},
  "cpu_cache": {"coherent": false, "line_bytes": 64, "cycles_per_line": 2, "barrier_cycles": 200},
  "dispatch_overhead_cycles": 1000,
  "token_latency_cycles": 2,
  "native_layout": "NHWC",
  "channel_alignment": 16,
  "supported_ops": ["QLinearConv", "QLinearMatMul", "ConvInteger", "MatMulInteger", "Add", "Relu",
                    "MaxPool", "AveragePool", "GlobalAveragePool", "QuantizeLinear",
                    "DequantizeLinear",
                    "Mul", "QuantizedLookup", "Concat", "Transpose", "Slice", "Split", "Gather", "Reshape",
                    "Flatten", "Squeeze", "Unsqueeze", "LayerNormalization",
                    "GroupNormalization", "Softmax", "Resize",
                    "DepthToSpace", "Pad", "GlobalMaxPool", "ReduceMax", "ReduceMin",
                    "ArgMax", "ArgMin"],
  "supported_dtypes": ["i8", "i32", "f16"]
})JSON";

}  // namespace

bool Target::SupportsOp(std::string_view op) const {
  return std::find(supported_ops.begin(), supported_ops.end(), op) != supported_ops.end();
}
bool Target::SupportsDType(std::string_view dtype) const {
  return std::find(supported_dtypes.begin(), supported_dtypes.end(), dtype) != supported_dtypes.end();
}

const char* DefaultTargetJson() { return kDefaultJson; }

const Target& DefaultTarget() {
  static const Target t = [] {
    auto r = ParseTargetText(kDefaultJson, "<built-in default target>");
    EDGEC_CHECK(r.ok());
    return *r;
  }();
  return t;
}

StatusOr<Target> ParseTarget(const json& j, const std::string& source) {
  Status err;
  Target t;
  ObjectReader top(j, "", source, &err);
  top.String("name", t.name);
  top.String("description", t.description, true);
  top.Real("clock_hz", t.clock_hz, 0);
  if (const json* f = top.Field("ai_cores")) {
    ObjectReader r(*f, "ai_cores", source, &err);
    AiCoreSpec& a = t.ai_cores;
    r.Int("count", a.count, 1, 4096);
    r.Int("mac_rows", a.mac_rows, 1, 65536);
    r.Int("mac_cols", a.mac_cols, 1, 65536);
    std::string df;
    r.String("dataflow", df);
    if (df == "weight_stationary") a.dataflow = Dataflow::kWeightStationary;
    else if (df == "output_stationary") a.dataflow = Dataflow::kOutputStationary;
    else if (!df.empty()) r.Fail("ai_cores.dataflow", fmt::format("must be weight_stationary or output_stationary, got '{}'", df));
    r.Real("int8_rate", a.int8_rate, 0);
    r.Real("fp16_rate", a.fp16_rate, 0);
    r.Int("accumulator_bytes", a.accumulator_bytes, 1);
    r.Int("local_buffer_bytes", a.local_buffer_bytes, 0);
    r.Finish();
    // One accumulator row per array column must fit, or no MATMUL can run.
    if (err.ok() && a.accumulator_bytes < int64_t{4} * a.mac_cols)
      r.Fail("ai_cores.accumulator_bytes", fmt::format("must hold at least one row of {} int32 accumulators ({} bytes), got {}", a.mac_cols, 4 * a.mac_cols, a.accumulator_bytes));
  }
  if (const json* f = top.Field("vector_cores")) {
    ObjectReader r(*f, "vector_cores", source, &err);
    VectorCoreSpec& v = t.vector_cores;
    r.Int("count", v.count, 1, 4096);
    r.Int("lanes", v.lanes, 1, 65536);
    r.Int("pipeline_latency", v.pipeline_latency, 0);
    if (const json* c = r.Field("cycles_per_element")) {
      ObjectReader cr(*c, "vector_cores.cycles_per_element", source, &err);
      for (const char* op : kVecOps) {
        double cpe = 0;
        cr.Real(op, cpe, 0);
        v.cycles_per_element[op] = cpe;
      }
      cr.Finish();
    }
    r.DtypeRates("dtype_rates", v.dtype_rates);
    r.Finish();
  }
  if (const json* f = top.Field("shared_sram")) {
    ObjectReader r(*f, "shared_sram", source, &err);
    SramSpec& s = t.shared_sram;
    r.Int("bytes", s.bytes, 1);
    r.Int("banks", s.banks, 1, 65536);
    r.Int("bandwidth_bytes_per_cycle", s.bandwidth_bytes_per_cycle, 1);
    r.Int("alignment", s.alignment, 1, 1 << 20);
    if (f->is_object() && f->contains("resident_weights")) r.Bool("resident_weights", s.resident_weights);  // optional
    r.Finish();
    if (err.ok() && (s.alignment & (s.alignment - 1)))
      r.Fail("shared_sram.alignment", fmt::format("must be a power of two, got {}", s.alignment));
    if (err.ok() && s.bytes % s.alignment)
      r.Fail("shared_sram.bytes", fmt::format("must be a multiple of shared_sram.alignment ({}), got {}", s.alignment, s.bytes));
  }
  if (const json* f = top.Field("dram")) {
    ObjectReader r(*f, "dram", source, &err);
    DramSpec& d = t.dram;
    r.Real("bandwidth_bytes_per_s", d.bandwidth_bytes_per_s, 0);
    r.Int("read_latency_cycles", d.read_latency_cycles, 0);
    r.Int("write_latency_cycles", d.write_latency_cycles, 0);
    r.Int("burst_bytes", d.burst_bytes, 1, 1 << 20);
    r.Finish();
  }
  if (const json* f = top.Field("dma")) {
    ObjectReader r(*f, "dma", source, &err);
    DmaSpec& d = t.dma;
    r.Int("engines", d.engines, 1, 1024);
    r.Int("setup_cycles", d.setup_cycles, 0);
    r.Int("max_dims", d.max_dims, 2, 8);  // lowering needs a strided dim plus the row
    r.Bool("pad_on_load", d.pad_on_load);
    r.Finish();
  }
  if (const json* f = top.Field("cpu_cache")) {
    ObjectReader r(*f, "cpu_cache", source, &err);
    CacheSpec& c = t.cpu_cache;
    r.Bool("coherent", c.coherent);
    r.Int("line_bytes", c.line_bytes, 1, 1 << 16);
    r.Real("cycles_per_line", c.cycles_per_line, -1e-300);
    r.Int("barrier_cycles", c.barrier_cycles, 0);
    r.Finish();
  }
  if (const json* f = j.is_object() && j.contains("energy") ? top.Field("energy") : nullptr) {  // optional
    ObjectReader r(*f, "energy", source, &err);
    EnergySpec& e = t.energy;
    r.Real("pj_per_mac", e.pj_per_mac, -1e-300);
    r.Real("pj_per_dram_byte", e.pj_per_dram_byte, -1e-300);
    r.Real("pj_per_sram_byte", e.pj_per_sram_byte, -1e-300);
    r.Real("cpu_pj_per_mac", e.cpu_pj_per_mac, -1e-300);
    r.Finish();
  }
  top.Int("dispatch_overhead_cycles", t.dispatch_overhead_cycles, 0);
  top.Int("token_latency_cycles", t.token_latency_cycles, 0);
  top.String("native_layout", t.native_layout);
  if (err.ok() && t.native_layout != "NHWC" && t.native_layout != "NCHW")
    top.Fail("native_layout", fmt::format("must be NHWC or NCHW, got '{}'", t.native_layout));
  top.Int("channel_alignment", t.channel_alignment, 1, 4096);
  top.Strings("supported_ops", t.supported_ops);
  top.Strings("supported_dtypes", t.supported_dtypes);
  top.Finish();
  if (!err.ok()) return err;
  for (const std::string& op : t.supported_ops) {
    if (!OpFromName(op)) return InvalidArgument("{}: supported_ops: unknown op '{}'", source, op);
  }
  for (const std::string& d : t.supported_dtypes) {
    static const std::set<std::string> known = {"f32", "f16", "bf16", "i8", "u8", "i16", "i32", "i64", "bool"};
    if (!known.count(d)) return InvalidArgument("{}: supported_dtypes: unknown dtype '{}'", source, d);
  }
  return t;
}

StatusOr<Target> ParseTargetText(const std::string& text, const std::string& source) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return InvalidArgument("{}: not valid JSON", source);
  return ParseTarget(j, source);
}

json TargetToJson(const Target& t) {
  json cpe = json::object();
  for (auto& [k, v] : t.vector_cores.cycles_per_element) cpe[k] = v;
  return json{
      {"name", t.name},
      {"description", t.description},
      {"clock_hz", t.clock_hz},
      {"ai_cores",
       {{"count", t.ai_cores.count},
        {"mac_rows", t.ai_cores.mac_rows},
        {"mac_cols", t.ai_cores.mac_cols},
        {"dataflow", t.ai_cores.dataflow == Dataflow::kWeightStationary ? "weight_stationary" : "output_stationary"},
        {"int8_rate", t.ai_cores.int8_rate},
        {"fp16_rate", t.ai_cores.fp16_rate},
        {"accumulator_bytes", t.ai_cores.accumulator_bytes},
        {"local_buffer_bytes", t.ai_cores.local_buffer_bytes}}},
      {"vector_cores",
       {{"count", t.vector_cores.count},
        {"lanes", t.vector_cores.lanes},
        {"pipeline_latency", t.vector_cores.pipeline_latency},
        {"cycles_per_element", cpe},
        {"dtype_rates", t.vector_cores.dtype_rates}}},
      {"shared_sram",
       {{"bytes", t.shared_sram.bytes},
        {"banks", t.shared_sram.banks},
        {"bandwidth_bytes_per_cycle", t.shared_sram.bandwidth_bytes_per_cycle},
        {"alignment", t.shared_sram.alignment},
        {"resident_weights", t.shared_sram.resident_weights}}},
      {"dram",
       {{"bandwidth_bytes_per_s", t.dram.bandwidth_bytes_per_s},
        {"read_latency_cycles", t.dram.read_latency_cycles},
        {"write_latency_cycles", t.dram.write_latency_cycles},
        {"burst_bytes", t.dram.burst_bytes}}},
      {"dma",
       {{"engines", t.dma.engines},
        {"setup_cycles", t.dma.setup_cycles},
        {"max_dims", t.dma.max_dims},
        {"pad_on_load", t.dma.pad_on_load}}},
      {"cpu_cache",
       {{"coherent", t.cpu_cache.coherent},
        {"line_bytes", t.cpu_cache.line_bytes},
        {"cycles_per_line", t.cpu_cache.cycles_per_line},
        {"barrier_cycles", t.cpu_cache.barrier_cycles}}},
      {"energy",
       {{"pj_per_mac", t.energy.pj_per_mac},
        {"pj_per_dram_byte", t.energy.pj_per_dram_byte},
        {"pj_per_sram_byte", t.energy.pj_per_sram_byte},
        {"cpu_pj_per_mac", t.energy.cpu_pj_per_mac}}},
      {"dispatch_overhead_cycles", t.dispatch_overhead_cycles},
      {"token_latency_cycles", t.token_latency_cycles},
      {"native_layout", t.native_layout},
      {"channel_alignment", t.channel_alignment},
      {"supported_ops", t.supported_ops},
      {"supported_dtypes", t.supported_dtypes},
  };
}

std::vector<std::string> TargetDirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("EDGEC_TARGETS")) dirs.push_back(env);
  std::error_code ec;
  // The executable lives in <repo>/build/bin; the repository's targets/ is two levels up.
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path p = exe.parent_path(); !p.empty() && p != p.root_path(); p = p.parent_path()) {
      if (fs::is_directory(p / "targets", ec)) {
        dirs.push_back((p / "targets").string());
        break;
      }
    }
  }
  dirs.push_back("targets");
  return dirs;
}

StatusOr<Target> LoadTarget(const std::string& file_or_name) {
  if (file_or_name.empty() || file_or_name == "default" || file_or_name == "edge-default")
    return DefaultTarget();
  auto read = [](const fs::path& p) -> StatusOr<Target> {
    std::ifstream in(p);
    if (!in) return IoError("{}: cannot open target file", p.string());
    std::stringstream ss;
    ss << in.rdbuf();
    return ParseTargetText(ss.str(), p.string());
  };
  std::error_code ec;
  if (file_or_name.find('/') != std::string::npos || file_or_name.ends_with(".json") ||
      fs::is_regular_file(file_or_name, ec))
    return read(file_or_name);
  for (const std::string& dir : TargetDirs()) {
    fs::path p = fs::path(dir) / (file_or_name + ".json");
    if (fs::is_regular_file(p, ec)) return read(p);
  }
  return NotFound("target '{}': no such file, and no {}.json in the target directories", file_or_name,
                  file_or_name);
}

StatusOr<std::vector<Target>> ListTargets() {
  std::vector<Target> out = {DefaultTarget()};
  std::set<std::string> names = {DefaultTarget().name};
  std::error_code ec;
  for (const std::string& dir : TargetDirs()) {
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> files;
    for (auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".json") files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const fs::path& p : files) {
      ASSIGN_OR_RETURN(Target t, LoadTarget(p.string()));
      if (names.insert(t.name).second) out.push_back(std::move(t));
    }
  }
  return out;
}

StatusOr<double> ParseQuantity(const std::string& text) {
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (...) {
    return InvalidArgument("'{}' is not a number", text);
  }
  std::string unit = text.substr(pos);
  std::string lower;
  for (char c : unit) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::map<std::string, double> units = {
      {"", 1},           {"k", 1024.0},      {"m", 1048576.0},   {"g", 1073741824.0},
      {"kb", 1024.0},    {"mb", 1048576.0},  {"gb", 1073741824.0}, {"kib", 1024.0},
      {"mib", 1048576.0}, {"gib", 1073741824.0}, {"b", 1},
      {"hz", 1},         {"khz", 1e3},       {"mhz", 1e6},       {"ghz", 1e9},
      {"b/s", 1},        {"kb/s", 1e3},      {"mb/s", 1e6},      {"gb/s", 1e9},
      {"tb/s", 1e12},
  };
  auto it = units.find(lower);
  if (it == units.end()) return InvalidArgument("'{}': unknown unit '{}'", text, unit);
  return v * it->second;
}

StatusOr<Target> ApplyOverride(const Target& t, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidArgument("--set '{}': expected FIELD=VALUE (e.g. shared_sram.bytes=512K)", assignment);
  const std::string path = assignment.substr(0, eq), value = assignment.substr(eq + 1);
  json j = TargetToJson(t);
  json* node = &j;
  std::stringstream ss(path);
  std::string part;
  while (std::getline(ss, part, '.')) {
    if (!node->is_object() || !node->contains(part))
      return InvalidArgument("--set {}: unknown target field '{}'", path, part);
    node = &(*node)[part];
  }
  if (node->is_object()) return InvalidArgument("--set {}: is a group of fields; name one of them", path);
  if (node->is_boolean()) {
    if (value != "true" && value != "false")
      return InvalidArgument("--set {}: expected true or false, got '{}'", path, value);
    *node = value == "true";
  } else if (node->is_string()) {
    *node = value;
  } else if (node->is_array()) {
    json list = json::array();
    std::stringstream vs(value);
    std::string item;
    while (std::getline(vs, item, '|'))
      if (!item.empty()) list.push_back(item);
    *node = list;
  } else {
    auto q = ParseQuantity(value);
    if (!q.ok()) return InvalidArgument("--set {}: {}", path, q.status().message());
    if (node->is_number_integer()) {
      if (std::floor(*q) != *q) return InvalidArgument("--set {}: must be an integer, got '{}'", path, value);
      *node = static_cast<int64_t>(*q);
    } else {
      *node = *q;
    }
  }
  return ParseTarget(j, fmt::format("{} with --set {}", t.name, assignment));
}

StatusOr<Target> ApplyOverrides(const Target& t, const std::vector<std::string>& assignments) {
  Target out = t;
  for (const std::string& a : assignments) {
    ASSIGN_OR_RETURN(out, ApplyOverride(out, a));
  }
  return out;
}

}  // namespace edgec::npu
