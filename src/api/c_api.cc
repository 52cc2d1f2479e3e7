// The C API (include/edgec/c_api.h) over the C++ API: each handle owns its C++ object and
// the strings and dims the calls hand out; errors go to a thread-local message.
#include "edgec/c_api.h"

#include <memory>
#include <string>
#include <vector>

#include "edgec/edgec.h"

// Each handle is made from its C++ object (NewHandle), keeping what the calls hand out by pointer.
struct edgec_model {
  explicit edgec_model(edgec::Model m) : model(std::move(m)), inputs(model.inputs()), outputs(model.outputs()) {}
  edgec::Model model;
  std::vector<edgec::ValueInfo> inputs, outputs;
};
struct edgec_compiled {
  explicit edgec_compiled(edgec::CompiledModel c) : compiled(std::move(c)), placements(compiled.placements()) {}
  edgec::CompiledModel compiled;
  std::vector<edgec::NodePlacement> placements;
};
struct edgec_session {
  edgec::Session session;
};
struct edgec_outputs {
  std::vector<edgec::NamedTensor> tensors;
};

namespace {

static_assert(EDGEC_IO == static_cast<int>(edgec::StatusCode::kIo), "edgec_status mirrors StatusCode");
static_assert(EDGEC_INVALID_ARGUMENT == static_cast<int>(edgec::StatusCode::kInvalidArgument));
static_assert(EDGEC_BOOL == static_cast<int>(edgec::DataType::kBool), "edgec_dtype mirrors DataType");
static_assert(EDGEC_U8 == static_cast<int>(edgec::DataType::kU8));

thread_local std::string last_error;

edgec_status Fail(const edgec::Status& st) {
  last_error = st.message();
  return static_cast<edgec_status>(st.code());
}
edgec_status Ok() {
  last_error.clear();
  return EDGEC_OK;
}
edgec_status Invalid(const std::string& message) {
  return Fail(edgec::Status(edgec::StatusCode::kInvalidArgument, message));
}

void Describe(const edgec::ValueInfo& v, edgec_tensor* t) {
  t->name = v.name.c_str();
  t->dtype = static_cast<edgec_dtype>(v.dtype);
  t->dims = v.dims.data();
  t->rank = v.dims.size();
  t->data = nullptr;
}

// Index `i` past the end of a list: "CALL: index I out of range (COUNT)", where COUNT says how
// many there are ("3 nodes").
edgec_status IndexError(const char* call, size_t i, const std::string& count) {
  return Invalid(std::string(call) + ": index " + std::to_string(i) + " out of range (" + count + ")");
}

// Item i of the model's inputs or outputs (`noun`) into `info`.
edgec_status DescribeAt(const char* call, const std::vector<edgec::ValueInfo>& list, const char* noun, size_t i,
                        edgec_tensor* info) {
  if (i >= list.size()) return IndexError(call, i, "the model has " + std::to_string(list.size()) + " " + noun);
  Describe(list[i], info);
  return Ok();
}

edgec::SessionOptions ToOptions(const edgec_session_options* o) {
  const edgec_session_options d = o ? *o : edgec_session_options_default();
  edgec::SessionOptions s;
  s.device = d.device == EDGEC_DEVICE_NPU_SIM ? edgec::Device::kNpuSim : edgec::Device::kCpu;
  s.threads = d.threads;
  s.opt_level = d.opt_level;
  s.profiling = d.profiling != 0;
  return s;
}

// The handle of a call's result, or the call's error.
template <typename Handle, typename T>
edgec_status NewHandle(edgec::StatusOr<T> r, Handle** out) {
  if (!r.ok()) return Fail(r.status());
  *out = new Handle{std::move(r).value()};
  return Ok();
}

}  // namespace

extern "C" {

int edgec_c_api_version(void) { return EDGEC_C_API_VERSION; }
const char* edgec_version(void) { return edgec::Version(); }
const char* edgec_last_error(void) { return last_error.c_str(); }
size_t edgec_dtype_size(edgec_dtype dtype) { return edgec::DataTypeSize(static_cast<edgec::DataType>(dtype)); }

edgec_session_options edgec_session_options_default(void) {
  edgec_session_options o;
  o.device = EDGEC_DEVICE_CPU;
  o.threads = 0;
  o.opt_level = 3;
  o.profiling = 1;
  return o;
}

edgec_status edgec_model_load(const char* path, edgec_model** out) {
  if (!path || !out) return Invalid("edgec_model_load: path and out must not be NULL");
  return NewHandle(edgec::Model::Load(path), out);
}

edgec_status edgec_model_load_bytes(const void* data, size_t size, edgec_model** out) {
  if (!out) return Invalid("edgec_model_load_bytes: out must not be NULL");
  return NewHandle(edgec::Model::FromBytes(data, size), out);
}

void edgec_model_destroy(edgec_model* model) { delete model; }
size_t edgec_model_input_count(const edgec_model* model) { return model ? model->inputs.size() : 0; }
size_t edgec_model_output_count(const edgec_model* model) { return model ? model->outputs.size() : 0; }

edgec_status edgec_model_input(const edgec_model* model, size_t i, edgec_tensor* info) {
  if (!model || !info) return Invalid("edgec_model_input: model and info must not be NULL");
  return DescribeAt("edgec_model_input", model->inputs, "inputs", i, info);
}

edgec_status edgec_model_output(const edgec_model* model, size_t i, edgec_tensor* info) {
  if (!model || !info) return Invalid("edgec_model_output: model and info must not be NULL");
  return DescribeAt("edgec_model_output", model->outputs, "outputs", i, info);
}

static void Refresh(edgec_model* model) {
  model->inputs = model->model.inputs();
  model->outputs = model->model.outputs();
}

edgec_status edgec_model_optimize(edgec_model* model, int level) {
  if (!model) return Invalid("edgec_model_optimize: model must not be NULL");
  edgec::Status st = model->model.Optimize(level);
  Refresh(model);
  return st.ok() ? Ok() : Fail(st);
}

edgec_status edgec_model_quantize_dir(edgec_model* model, const char* calib_dir, const char* method,
                                      int per_channel, edgec_dtype dtype) {
  if (!model || !calib_dir) return Invalid("edgec_model_quantize_dir: model and calib_dir must not be NULL");
  edgec::QuantizeOptions o;
  if (method) o.method = method;
  o.per_channel = per_channel != 0;
  o.dtype = static_cast<edgec::DataType>(dtype);
  edgec::Status st = model->model.QuantizeFromDirectory(calib_dir, o);
  Refresh(model);
  return st.ok() ? Ok() : Fail(st);
}

// A target by name, path or JSON text (NULL: edge-default) with `count` overrides.
static edgec::StatusOr<edgec::Target> TargetOf(const char* target, const char* const* sets, size_t count,
                                               const char* call) {
  const std::string t = target ? target : "edge-default";
  auto tgt = !t.empty() && t[0] == '{' ? edgec::Target::FromJson(t) : edgec::Target::Load(t);
  if (!tgt.ok()) return tgt.status();
  for (size_t i = 0; i < count; ++i) {
    if (!sets || !sets[i])
      return edgec::Status(edgec::StatusCode::kInvalidArgument,
                           std::string(call) + ": override " + std::to_string(i) + " is NULL");
    EDGEC_RETURN_IF_ERROR(tgt->Set(sets[i]));
  }
  return tgt;
}

edgec_quantize_options edgec_quantize_options_default(void) {
  edgec_quantize_options o{};
  o.method = nullptr;
  o.per_channel = 1;
  o.dtype = EDGEC_I8;
  o.allow_int16 = 1;
  o.error_samples = 8;
  return o;
}

edgec_status edgec_model_quantize(edgec_model* model, const char* calib_dir, const edgec_quantize_options* options,
                                  edgec_quantize_result* result) {
  if (!model || !calib_dir || !options)
    return Invalid("edgec_model_quantize: model, calib_dir and options must not be NULL");
  edgec::QuantizeOptions o;
  if (options->method) o.method = options->method;
  o.per_channel = options->per_channel != 0;
  o.dtype = static_cast<edgec::DataType>(options->dtype);
  o.accuracy_budget = options->accuracy_budget;
  o.budget_int16 = options->allow_int16 != 0;
  o.error_samples = options->error_samples;
  if (options->accuracy_budget > 0) {
    auto t = TargetOf(options->target, nullptr, 0, "edgec_model_quantize");
    if (!t.ok()) return Fail(t.status());
    o.target = std::move(t).value();
  }
  edgec::QuantizeReport r;
  edgec::Status st = model->model.QuantizeFromDirectory(calib_dir, o, options->limit, &r);
  Refresh(model);
  if (!st.ok()) return Fail(st);
  if (result) {
    *result = edgec_quantize_result{};
    result->quantized_nodes = r.quantized_nodes;
    result->activation_pairs = r.activation_pairs;
    result->int16_pairs = r.int16_pairs;
    result->int16_promoted = static_cast<int64_t>(r.budget.int16.size());
    result->kept_float = static_cast<int64_t>(r.budget.kept_float.size());
    result->budget_met = r.budget.met ? 1 : 0;
    result->int8_cosine = r.budget.int8_cosine;
    result->mean_cosine = r.budget.mean_cosine;
  }
  return Ok();
}

edgec_status edgec_estimate_model(const char* model_path, const char* target, const char* const* sets, size_t count,
                                  edgec_estimate* out) {
  if (!model_path || !out) return Invalid("edgec_estimate_model: model_path and out must not be NULL");
  auto t = TargetOf(target, sets, count, "edgec_estimate_model");
  if (!t.ok()) return Fail(t.status());
  auto w = edgec::NpuWorkload::FromModel(model_path);
  if (!w.ok()) return Fail(w.status());
  auto e = w->Estimate(*t);
  if (!e.ok()) return Fail(e.status());
  edgec_estimate r{};
  r.cycles = e->cycles;
  r.milliseconds = e->milliseconds;
  r.mac_utilization = e->mac_utilization;
  r.macs = e->macs;
  r.dram_bytes = e->dram_read + e->dram_written;
  r.weight_bytes = e->weight_bytes;
  r.quantized = w->quantized() ? 1 : 0;
  if (w->quantized()) {
    auto s = w->EstimateSegments(*t);
    if (!s.ok()) return Fail(s.status());
    r.segments = s->segments;
    r.segment_milliseconds = s->milliseconds;
    r.resident_bytes = s->resident_bytes;
    r.spilled_bytes = s->spilled_bytes;
  }
  *out = r;
  return Ok();
}

edgec_status edgec_compile(const edgec_model* model, const char* target, const char* const* sets, size_t count,
                           edgec_compiled** out) {
  if (!model || !out) return Invalid("edgec_compile: model and out must not be NULL");
  auto tgt = TargetOf(target, sets, count, "edgec_compile");
  if (!tgt.ok()) return Fail(tgt.status());
  edgec::CompileOptions o;
  o.target = std::move(tgt).value();
  return NewHandle(edgec::CompiledModel::Compile(model->model, o), out);
}

edgec_status edgec_compiled_load(const char* path, edgec_compiled** out) {
  if (!path || !out) return Invalid("edgec_compiled_load: path and out must not be NULL");
  return NewHandle(edgec::CompiledModel::Load(path), out);
}

edgec_status edgec_compiled_save(const edgec_compiled* compiled, const char* path) {
  if (!compiled || !path) return Invalid("edgec_compiled_save: compiled and path must not be NULL");
  edgec::Status st = compiled->compiled.Save(path);
  return st.ok() ? Ok() : Fail(st);
}

void edgec_compiled_destroy(edgec_compiled* compiled) { delete compiled; }
size_t edgec_compiled_node_count(const edgec_compiled* compiled) { return compiled ? compiled->placements.size() : 0; }

edgec_status edgec_compiled_placement(const edgec_compiled* compiled, size_t i, const char** node, const char** unit,
                                      const char** reason) {
  if (!compiled) return Invalid("edgec_compiled_placement: compiled must not be NULL");
  if (i >= compiled->placements.size())
    return IndexError("edgec_compiled_placement", i, std::to_string(compiled->placements.size()) + " nodes");
  const edgec::NodePlacement& p = compiled->placements[i];
  if (node) *node = p.node.c_str();
  if (unit) *unit = edgec::UnitName(p.unit);
  if (reason) *reason = p.reason.c_str();
  return Ok();
}

edgec_status edgec_session_create(const edgec_model* model, const edgec_session_options* options,
                                  edgec_session** out) {
  if (!model || !out) return Invalid("edgec_session_create: model and out must not be NULL");
  return NewHandle(edgec::Session::Create(model->model, ToOptions(options)), out);
}

edgec_status edgec_session_create_compiled(const edgec_compiled* compiled, const edgec_session_options* options,
                                           edgec_session** out) {
  if (!compiled || !out) return Invalid("edgec_session_create_compiled: compiled and out must not be NULL");
  return NewHandle(edgec::Session::Create(compiled->compiled, ToOptions(options)), out);
}

void edgec_session_destroy(edgec_session* session) { delete session; }

edgec_status edgec_session_run(edgec_session* session, const edgec_tensor* inputs, size_t count,
                               edgec_outputs** out) {
  if (!session || !out || (count > 0 && !inputs))
    return Invalid("edgec_session_run: session, inputs and out must not be NULL");
  std::map<std::string, edgec::TensorView> in;
  for (size_t i = 0; i < count; ++i) {
    const edgec_tensor& t = inputs[i];
    if (!t.name) return Invalid("edgec_session_run: input " + std::to_string(i) + " has no name");
    if (t.rank > 0 && !t.dims) return Invalid(std::string("edgec_session_run: input '") + t.name + "' has no dims");
    std::vector<int64_t> dims(t.dims, t.dims + t.rank);
    in[t.name] = edgec::TensorView(static_cast<edgec::DataType>(t.dtype), std::move(dims), t.data);
  }
  return NewHandle(session->session.Run(in), out);
}

edgec_resource_limits edgec_get_resource_limits(void) {
  const edgec::ResourceLimits l = edgec::GetResourceLimits();
  return {l.model_bytes, l.tensor_bytes, l.nodes, l.arena_bytes};
}

edgec_status edgec_set_resource_limits(const edgec_resource_limits* limits) {
  if (!limits) return Invalid("edgec_set_resource_limits: limits must not be NULL");
  if (limits->model_bytes < 1 || limits->tensor_bytes < 1 || limits->nodes < 1 || limits->arena_bytes < 1)
    return Invalid("edgec_set_resource_limits: every limit must be at least 1");
  edgec::SetResourceLimits({limits->model_bytes, limits->tensor_bytes, limits->nodes, limits->arena_bytes});
  return Ok();
}

double edgec_session_last_seconds(const edgec_session* session) {
  return session ? session->session.profile().total_seconds : 0;
}

size_t edgec_outputs_count(const edgec_outputs* outputs) { return outputs ? outputs->tensors.size() : 0; }

edgec_status edgec_outputs_get(const edgec_outputs* outputs, size_t i, edgec_tensor* tensor) {
  if (!outputs || !tensor) return Invalid("edgec_outputs_get: outputs and tensor must not be NULL");
  if (i >= outputs->tensors.size())
    return IndexError("edgec_outputs_get", i, std::to_string(outputs->tensors.size()) + " outputs");
  const edgec::NamedTensor& t = outputs->tensors[i];
  tensor->name = t.name.c_str();
  tensor->dtype = static_cast<edgec_dtype>(t.tensor.dtype());
  tensor->dims = t.tensor.dims().data();
  tensor->rank = t.tensor.dims().size();
  tensor->data = const_cast<void*>(t.tensor.data());
  return Ok();
}

void edgec_outputs_destroy(edgec_outputs* outputs) { delete outputs; }

}  // extern "C"
