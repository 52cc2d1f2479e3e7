// The Python module `edgec` (its compiled half, edgec._edgec): the C++ API of include/edgec/
// with numpy arrays for tensors. Arrays go in without a copy when they are C-contiguous and
// of the input's dtype (else they are converted once); outputs come back as arrays over
// edgec's own buffers (no copy). Every long call releases the GIL. A failed Status raises
// edgec.Error with edgec's message.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "edgec/edgec.h"

namespace py = pybind11;

namespace {

struct StatusError {
  edgec::Status status;
};

void Check(const edgec::Status& st) {
  if (!st.ok()) throw StatusError{st};
}
template <typename T>
T Take(edgec::StatusOr<T> v) {
  if (!v.ok()) throw StatusError{v.status()};
  return std::move(v).value();
}

py::dtype NumpyType(edgec::DataType t) {
  switch (t) {
    case edgec::DataType::kF32: return py::dtype::of<float>();
    case edgec::DataType::kF64: return py::dtype::of<double>();
    case edgec::DataType::kF16: return py::dtype("float16");
    case edgec::DataType::kI8: return py::dtype::of<int8_t>();
    case edgec::DataType::kI16: return py::dtype::of<int16_t>();
    case edgec::DataType::kI32: return py::dtype::of<int32_t>();
    case edgec::DataType::kI64: return py::dtype::of<int64_t>();
    case edgec::DataType::kU8: return py::dtype::of<uint8_t>();
    case edgec::DataType::kU16: return py::dtype::of<uint16_t>();
    case edgec::DataType::kU32: return py::dtype::of<uint32_t>();
    case edgec::DataType::kU64: return py::dtype::of<uint64_t>();
    case edgec::DataType::kBool: return py::dtype::of<bool>();
    default: throw StatusError{edgec::Status(edgec::StatusCode::kUnimplemented,
                                             std::string("no numpy dtype for ") + edgec::DataTypeName(t))};
  }
}

// The graph input's dtype by name (kUndefined for an unknown name: the run names it).
edgec::DataType InputType(const std::vector<edgec::ValueInfo>& inputs, const std::string& name) {
  for (const auto& v : inputs)
    if (v.name == name) return v.dtype;
  return edgec::DataType::kUndefined;
}

// Arrays as views: `keep` holds the (possibly converted) arrays while the views are used.
std::map<std::string, edgec::TensorView> Views(const py::dict& feeds, const std::vector<edgec::ValueInfo>& inputs,
                                               std::vector<py::array>& keep) {
  std::map<std::string, edgec::TensorView> views;
  for (auto item : feeds) {
    const std::string name = py::str(item.first);
    edgec::DataType t = InputType(inputs, name);
    py::array a = py::array::ensure(item.second);
    if (!a) throw py::type_error("input '" + name + "': not convertible to a numpy array");
    if (t != edgec::DataType::kUndefined) {
      a = py::array::ensure(a.attr("astype")(NumpyType(t), py::arg("copy") = false),
                            py::array::c_style | py::array::forcecast);
    } else {
      a = py::array::ensure(a, py::array::c_style);
    }
    std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
    edgec::DataType dt = t;
    if (dt == edgec::DataType::kUndefined) dt = edgec::DataType::kF32;  // the run rejects the name
    views.emplace(name, edgec::TensorView(dt, std::move(dims), a.data()));
    keep.push_back(std::move(a));
  }
  return views;
}

// An array over the tensor's memory, which the array keeps alive (no copy).
py::array ToArray(const edgec::TensorView& t) {
  auto* owner = new std::shared_ptr<void>(t.owner());
  py::capsule base(owner, [](void* p) { delete static_cast<std::shared_ptr<void>*>(p); });
  std::vector<py::ssize_t> shape(t.dims().begin(), t.dims().end());
  return py::array(NumpyType(t.dtype()), shape, {}, t.data(), base);
}

py::list Infos(const std::vector<edgec::ValueInfo>& vs) {
  py::list l;
  for (const auto& v : vs) {
    py::dict d;
    d["name"] = v.name;
    d["dtype"] = edgec::DataTypeName(v.dtype);
    d["shape"] = py::tuple(py::cast(v.dims));
    l.append(d);
  }
  return l;
}

edgec::DataType ParseDtype(const std::string& s) {
  if (s == "i8" || s == "int8") return edgec::DataType::kI8;
  if (s == "u8" || s == "uint8") return edgec::DataType::kU8;
  throw StatusError{edgec::Status(edgec::StatusCode::kInvalidArgument, "dtype '" + s + "' is not i8 or u8")};
}

// A target from a name, a .json path or a dict of fields, with `set` overrides
// ({"shared_sram.bytes": "512K"} or ["shared_sram.bytes=512K"]).
edgec::Target TargetOf(py::object target, py::object overrides) {
  edgec::Target t;
  if (py::isinstance<py::dict>(target)) {
    const std::string text = py::str(py::module_::import("json").attr("dumps")(target));
    t = Take(edgec::Target::FromJson(text));
  } else {
    t = Take(edgec::Target::Load(py::str(py::module_::import("os").attr("fspath")(target))));
  }
  if (py::isinstance<py::dict>(overrides)) {
    for (auto kv : py::reinterpret_borrow<py::dict>(overrides))
      Check(t.Set(std::string(py::str(kv.first)) + "=" + std::string(py::str(kv.second))));
  } else if (!overrides.is_none()) {
    for (py::handle item : overrides) Check(t.Set(py::str(item)));
  }
  return t;
}

py::dict SensitivityDict(const edgec::LayerSensitivity& l) {
  py::dict d;
  d["node"] = l.node;
  d["layer"] = l.layer;
  d["sqnr_db"] = l.sqnr_db;
  d["cosine"] = l.cosine;
  return d;
}

// Model.quantize_report: QuantizeReport as a dict (the keys are its fields).
py::dict QuantizeReportDict(const edgec::QuantizeReport& r) {
  py::dict d;
  d["samples"] = r.samples;
  d["method"] = r.method;
  d["activation_dtype"] = edgec::DataTypeName(r.activation_dtype);
  d["quantized_nodes"] = r.quantized_nodes;
  d["activation_pairs"] = r.activation_pairs;
  d["int16_pairs"] = r.int16_pairs;
  d["int16_layers"] = r.int16_layers;
  d["skipped"] = r.skipped;
  d["float_ops"] = r.float_ops;
  d["float_nodes"] = r.float_nodes;
  d["shapes_from_samples"] = r.shapes_from_samples;
  d["symmetric"] = r.symmetric;
  d["error_samples"] = r.error_samples;
  py::list sens;
  for (const auto& l : r.sensitivity) sens.append(SensitivityDict(l));
  d["sensitivity"] = sens;
  if (r.budget.ran) {
    py::dict b;
    b["budget"] = r.budget.budget;
    b["met"] = r.budget.met;
    b["int8_cosine"] = r.budget.int8_cosine;
    b["mean_cosine"] = r.budget.mean_cosine;
    b["int16_allowed"] = r.budget.int16_allowed;
    b["target"] = r.budget.target;
    py::list int16, kept;
    for (const auto& p : r.budget.int16) {
      py::dict e;
      e["node"] = p.node;
      e["layer"] = p.layer;
      e["cosine_alone"] = p.cosine_alone;
      e["cosine_after"] = p.cosine_after;
      int16.append(e);
    }
    for (const auto& l : r.budget.kept_float) kept.append(SensitivityDict(l));
    b["int16"] = int16;
    b["kept_float"] = kept;
    d["budget"] = b;
  }
  return d;
}

py::dict EstimateDict(const edgec::NpuEstimate& e) {
  py::dict d;
  d["cycles"] = e.cycles;
  d["ms"] = e.milliseconds;
  d["macs"] = e.macs;
  d["dram_read"] = e.dram_read;
  d["dram_written"] = e.dram_written;
  d["weight_bytes"] = e.weight_bytes;
  d["mac_utilization"] = e.mac_utilization;
  py::list layers;
  for (const auto& l : e.layers) {
    py::dict x;
    x["name"] = l.name;
    x["count"] = l.count;
    x["cycles"] = l.cycles;
    x["macs"] = l.macs;
    x["tiling"] = l.tiling;
    layers.append(x);
  }
  d["layers"] = layers;
  return d;
}

py::dict SegmentDict(const edgec::NpuSegmentEstimate& e) {
  py::dict d;
  d["segments"] = e.segments;
  d["layers"] = e.layers;
  d["cycles"] = e.cycles;
  d["ms"] = e.milliseconds;
  d["dram_read"] = e.dram_read;
  d["dram_written"] = e.dram_written;
  d["resident_bytes"] = e.resident_bytes;
  d["spilled_bytes"] = e.spilled_bytes;
  d["mac_utilization"] = e.mac_utilization;
  return d;
}

edgec::Device ParseDevice(const std::string& s) {
  if (s == "cpu") return edgec::Device::kCpu;
  if (s == "npu-sim") return edgec::Device::kNpuSim;
  throw StatusError{edgec::Status(edgec::StatusCode::kInvalidArgument, "device '" + s + "' is not cpu or npu-sim")};
}

py::dict ProfileDict(const edgec::Profile& p) {
  py::dict d;
  d["total_seconds"] = p.total_seconds;
  d["npu_cycles"] = p.npu_cycles;
  d["simulated"] = p.simulated;
  py::list nodes;
  for (const auto& n : p.nodes) {
    py::dict e;
    e["node"] = n.node;
    e["op"] = n.op;
    e["unit"] = edgec::UnitName(n.unit);
    e["kernel"] = n.kernel;
    e["seconds"] = n.seconds;
    e["cycles"] = n.cycles;
    e["bytes"] = n.bytes;
    nodes.append(e);
  }
  d["nodes"] = nodes;
  return d;
}

// Runs `f` (C++ work that touches no Python object) with the GIL released; returns its result.
template <typename F>
auto WithoutGil(F&& f) {
  py::gil_scoped_release release;
  return f();
}

// A session with the inputs it takes (kept for conversions).
struct PySession {
  std::shared_ptr<edgec::Session> session;
  std::vector<edgec::ValueInfo> inputs;

  py::dict Run(const py::dict& feeds) {
    std::vector<py::array> keep;
    auto views = Views(feeds, inputs, keep);
    py::dict out;
    for (const auto& t : Take(WithoutGil([&] { return session->Run(views); }))) out[py::str(t.name)] = ToArray(t.tensor);
    return out;
  }
};

PySession MakeSession(edgec::StatusOr<edgec::Session> s) {
  auto p = std::make_shared<edgec::Session>(Take(std::move(s)));
  PySession r{p, p->inputs()};
  return r;
}

}  // namespace

PYBIND11_MODULE(_edgec, m) {
  m.doc() = "edgec: compile ONNX models for edge NPUs and run them on the CPU or the simulated NPU";
  static py::exception<StatusError> error(m, "Error", PyExc_RuntimeError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      py::object err = py::handle(error.ptr())(py::str(e.status.message()));
      err.attr("code") = edgec::StatusCodeName(e.status.code());
      PyErr_SetObject(error.ptr(), err.ptr());
    }
  });
  m.attr("__version__") = edgec::Version();

  py::class_<PySession>(m, "Session", "A model ready to run (Model.session(), CompiledModel.session()).")
      .def("run", &PySession::Run, py::arg("inputs"),
           "Runs on {input name: ndarray}; returns {output name: ndarray}. The GIL is released while it runs.")
      .def("profile", [](const PySession& s) { return ProfileDict(s.session->profile()); },
           "Per-node unit, seconds, cycles and bytes of the last run.")
      .def("run_report", [](const PySession& s) { return s.session->RunReport(); },
           "A compiled model's last run as `edgec run X.edgec` prints it: per layer unit, cycles or ms, MACs, "
           "DRAM bytes, stalls, then the totals ('' for a Model's session).")
      .def_property_readonly("inputs", [](const PySession& s) { return Infos(s.session->inputs()); })
      .def_property_readonly("outputs", [](const PySession& s) { return Infos(s.session->outputs()); });

  py::class_<edgec::CompiledModel, std::shared_ptr<edgec::CompiledModel>>(m, "CompiledModel")
      .def("save", [](const edgec::CompiledModel& c, const std::string& path) { Check(c.Save(path)); }, py::arg("path"))
      .def(
          "session",
          [](const edgec::CompiledModel& c, const std::string& device) {
            return MakeSession(edgec::Session::Create(c, {.device = ParseDevice(device)}));
          },
          py::arg("device") = "npu-sim", "device: 'npu-sim' (NPU segments simulated) or 'cpu' (every node on the CPU).")
      .def("placements",
           [](const edgec::CompiledModel& c) {
             py::list l;
             for (const auto& p : c.placements()) {
               py::dict d;
               d["node"] = p.node;
               d["op"] = p.op;
               d["unit"] = edgec::UnitName(p.unit);
               d["reason"] = p.reason;
               d["code"] = p.code;
               d["macs"] = p.macs;
               l.append(d);
             }
             return l;
           })
      .def("report", &edgec::CompiledModel::PlacementReport)
      .def_property_readonly("target", &edgec::CompiledModel::target_name)
      .def_property_readonly("inputs", [](const edgec::CompiledModel& c) { return Infos(c.inputs()); })
      .def_property_readonly("outputs", [](const edgec::CompiledModel& c) { return Infos(c.outputs()); });

  py::class_<edgec::Model, std::shared_ptr<edgec::Model>>(m, "Model", py::dynamic_attr())
      .def_property_readonly("name", &edgec::Model::name)
      .def_property_readonly("inputs", [](const edgec::Model& mm) { return Infos(mm.inputs()); })
      .def_property_readonly("outputs", [](const edgec::Model& mm) { return Infos(mm.outputs()); })
      .def_property_readonly("quantized", &edgec::Model::quantized)
      .def_property_readonly("node_count", &edgec::Model::node_count)
      .def("clone", [](const edgec::Model& mm) { return std::make_shared<edgec::Model>(mm.Clone()); })
      .def(
          "optimize",
          [](std::shared_ptr<edgec::Model> self, py::object level) {
            if (py::isinstance<py::str>(level)) {
              const std::string pipeline = py::str(level);
              Check(WithoutGil([&] { return self->Optimize(pipeline); }));
            } else {
              const int l = level.cast<int>();
              Check(WithoutGil([&] { return self->Optimize(l); }));
            }
            return self;
          },
          py::arg("level") = 3, "Optimizes in place with -O<level> (or a pass list); returns the model.")
      .def(
          "set_input_shape",
          [](std::shared_ptr<edgec::Model> self, const std::string& name, const std::vector<int64_t>& dims) {
            Check(self->SetInputShape(name, dims));
            return self;
          },
          py::arg("name"), py::arg("shape"))
      .def(
          "freeze_inputs",
          [](std::shared_ptr<edgec::Model> self, const py::dict& values) {
            std::vector<py::array> keep;
            Check(self->FreezeInputs(Views(values, self->inputs(), keep)));
            return self;
          },
          py::arg("values"), "Makes inputs constants ({name: value}); what depends only on them folds.")
      .def(
          "quantize",
          [](std::shared_ptr<edgec::Model> self, py::iterable calib, const std::string& method, bool per_channel,
             const std::string& dtype, std::vector<std::string> keep_float, std::vector<std::string> int16,
             double accuracy_budget, bool sensitivity, int64_t error_samples, py::object target, bool allow_int16) {
            const auto inputs = self->inputs();
            std::vector<py::array> keep;
            std::vector<edgec::Sample> samples;
            for (py::handle sample : calib) {
              if (!py::isinstance<py::dict>(sample)) throw py::type_error("calib: each sample is a dict {input name: ndarray}");
              samples.push_back(Views(py::reinterpret_borrow<py::dict>(sample), inputs, keep));
            }
            edgec::QuantizeOptions o;
            o.method = method;
            o.per_channel = per_channel;
            o.dtype = ParseDtype(dtype);
            o.keep_float = std::move(keep_float);
            o.int16 = std::move(int16);
            o.accuracy_budget = accuracy_budget;
            o.sensitivity = sensitivity;
            o.error_samples = error_samples;
            o.budget_int16 = allow_int16;
            if (accuracy_budget > 0) o.target = TargetOf(target, py::none());
            edgec::QuantizeReport report;
            Check(WithoutGil([&] { return self->Quantize(samples, o, &report); }));
            py::object me = py::cast(self);
            me.attr("quantize_report") = QuantizeReportDict(report);
            return self;
          },
          py::arg("calib"), py::arg("method") = "entropy", py::arg("per_channel") = true, py::arg("dtype") = "i8",
          py::arg("keep_float") = std::vector<std::string>(), py::arg("int16") = std::vector<std::string>(),
          py::arg("accuracy_budget") = 0.0, py::arg("sensitivity") = false, py::arg("error_samples") = 8,
          py::arg("target") = "edge-default", py::arg("allow_int16") = true,
          "Calibrates on an iterable of {input name: ndarray} and rewrites to int8 (QDQ) in place; the "
          "norms and softmaxes named in int16 carry int16 activations; accuracy_budget (mean output cosine) "
          "promotes layers to int16 (where the target allows) and keeps layers in float until it is met. "
          "The report is the model's quantize_report (a dict).")
      .def(
          "compile",
          [](const edgec::Model& self, py::object target, py::object overrides, bool all_npu, bool single_buffer) {
            edgec::CompileOptions o;
            o.target = TargetOf(target, overrides);
            o.all_npu = all_npu;
            o.single_buffer = single_buffer;
            return std::make_shared<edgec::CompiledModel>(
                Take(WithoutGil([&] { return edgec::CompiledModel::Compile(self, o); })));
          },
          py::arg("target") = "edge-default", py::arg("set") = py::none(), py::arg("all_npu") = false,
          py::arg("single_buffer") = false,
          "Compiles for an NPU target: a name, a .json path, or a dict of target fields; `set` overrides fields "
          "({'shared_sram.bytes': '512K'} or ['shared_sram.bytes=512K']).")
      .def(
          "session",
          [](const edgec::Model& self, int threads, int opt_level, bool fixed_point) {
            edgec::SessionOptions o;
            o.threads = threads;
            o.opt_level = opt_level;
            o.fixed_point = fixed_point;
            return MakeSession(WithoutGil([&] { return edgec::Session::Create(self, o); }));
          },
          py::arg("threads") = 0, py::arg("opt_level") = 3, py::arg("fixed_point") = false,
          "A CPU session (a quantized model runs its Q/DQ as integer ops).")
      .def("save_onnx", [](const edgec::Model& self, const std::string& path) { Check(self.SaveOnnx(path)); },
           py::arg("path"));

  m.def(
      "load",
      [](py::object path) {
        const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
        return std::make_shared<edgec::Model>(Take(WithoutGil([&] { return edgec::Model::Load(p); })));
      },
      py::arg("path"), "Loads an ONNX model file.");
  m.def(
      "load_bytes",
      [](py::bytes data, const std::string& name) {
        const std::string b = data;
        return std::make_shared<edgec::Model>(Take(edgec::Model::FromBytes(b.data(), b.size(), name)));
      },
      py::arg("data"), py::arg("name") = "<memory>", "Loads an ONNX model from bytes.");
  m.def(
      "load_compiled",
      [](py::object path) {
        const std::string p = py::str(py::module_::import("os").attr("fspath")(path));
        return std::make_shared<edgec::CompiledModel>(Take(edgec::CompiledModel::Load(p)));
      },
      py::arg("path"), "Loads a compiled model (.edgec).");
  m.def(
      "estimate",
      [](py::object model, const std::string& decoder, py::object target, py::object overrides,
         std::map<std::string, std::vector<int64_t>> shapes, bool single_buffer) {
        const edgec::Target t = TargetOf(target, overrides);
        edgec::EstimateOptions o;
        o.single_buffer = single_buffer;
        py::dict d;
        edgec::StatusOr<edgec::NpuWorkload> w = edgec::Status(edgec::StatusCode::kInternal, "not loaded");
        edgec::StatusOr<edgec::NpuEstimate> e = edgec::Status(edgec::StatusCode::kInternal, "not estimated");
        std::optional<edgec::StatusOr<edgec::NpuSegmentEstimate>> seg;
        if (model.is_none() == decoder.empty())
          throw StatusError{edgec::Status(edgec::StatusCode::kInvalidArgument, "estimate: give a model path or a decoder")};
        const std::string path = model.is_none() ? "" : std::string(py::str(py::module_::import("os").attr("fspath")(model)));
        {
          py::gil_scoped_release release;
          w = decoder.empty() ? edgec::NpuWorkload::FromModel(path, shapes) : edgec::NpuWorkload::FromDecoder(decoder);
          if (w.ok()) {
            e = w->Estimate(t, o);
            if (w->quantized()) seg = w->EstimateSegments(t, o);
          }
        }
        if (!w.ok()) throw StatusError{w.status()};
        d["per_layer"] = EstimateDict(Take(std::move(e)));
        if (seg) d["segments"] = SegmentDict(Take(std::move(*seg)));
        d["target"] = t.name();
        return d;
      },
      py::arg("model") = py::none(), py::arg("decoder") = "", py::arg("target") = "edge-default",
      py::arg("set") = py::none(), py::arg("shapes") = std::map<std::string, std::vector<int64_t>>(),
      py::arg("single_buffer") = false,
      "Shape-only NPU estimate of an ONNX model (or a generated decoder: '7b', 'tiny', ...): "
      "{'per_layer': {...}, 'segments': {...} for a QDQ model, 'target': name}.");
  m.def("targets", [] { return Take(edgec::Target::Available()); }, "The names of the targets found.");
  m.def(
      "target_json", [](const std::string& name) { return Take(edgec::Target::Load(name)).ToJson(); },
      py::arg("name") = "edge-default", "A target's full description as JSON text.");
}
