/* The C API of edgec: opaque handles, plain C types, a status code per call and the
 * message of the calling thread's last error. Versioned: EDGEC_C_API_VERSION is the version
 * this header describes; edgec_c_api_version() the one the library implements (equal for a
 * matching pair; a later library keeps every earlier call).
 *
 *   edgec_model* m = NULL;
 *   if (edgec_model_load("resnet18.onnx", &m) != EDGEC_OK) fprintf(stderr, "%s\n", edgec_last_error());
 *
 * Every handle a call creates is released by its edgec_*_destroy (NULL is accepted). Strings
 * and tensors a call returns stay valid until the handle they came from is destroyed. */
#ifndef EDGEC_C_API_H_
#define EDGEC_C_API_H_

#include <stddef.h>
#include <stdint.h>

#include "edgec/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define EDGEC_C_API_VERSION 2

typedef enum edgec_status {
  EDGEC_OK = 0,
  EDGEC_INVALID_ARGUMENT = 1,
  EDGEC_UNIMPLEMENTED = 2,
  EDGEC_NOT_FOUND = 3,
  EDGEC_FAILED_PRECONDITION = 4,
  EDGEC_INTERNAL = 5,
  EDGEC_IO = 6
} edgec_status;

/* Element types; the values are those of edgec::DataType. */
typedef enum edgec_dtype {
  EDGEC_UNDEFINED = 0,
  EDGEC_F32 = 1,
  EDGEC_F64 = 2,
  EDGEC_F16 = 3,
  EDGEC_BF16 = 4,
  EDGEC_I8 = 5,
  EDGEC_I16 = 6,
  EDGEC_I32 = 7,
  EDGEC_I64 = 8,
  EDGEC_U8 = 9,
  EDGEC_U16 = 10,
  EDGEC_U32 = 11,
  EDGEC_U64 = 12,
  EDGEC_BOOL = 13
} edgec_dtype;

typedef enum edgec_device { EDGEC_DEVICE_CPU = 0, EDGEC_DEVICE_NPU_SIM = 1 } edgec_device;

typedef struct edgec_model edgec_model;          /* an ONNX model (edgec::Model) */
typedef struct edgec_compiled edgec_compiled;    /* a compiled model (edgec::CompiledModel) */
typedef struct edgec_session edgec_session;      /* edgec::Session */
typedef struct edgec_outputs edgec_outputs;      /* the outputs of one run */

/* A tensor: dense row-major data. Inputs are borrowed (not copied, not written). */
typedef struct edgec_tensor {
  const char* name;
  edgec_dtype dtype;
  const int64_t* dims;
  size_t rank;
  void* data;
} edgec_tensor;

typedef struct edgec_session_options {
  edgec_device device;
  int threads;      /* 0: all cores */
  int opt_level;    /* a model's CPU plan: 0-3 */
  int profiling;    /* nonzero: per-node times of every run */
} edgec_session_options;

/* Resource limits (process-wide, edgec/limits.h): the largest model file, tensor, graph and
 * activation arena accepted; a model over one fails with an error naming the limit. */
typedef struct edgec_resource_limits {
  int64_t model_bytes;
  int64_t tensor_bytes;
  int64_t nodes;
  int64_t arena_bytes;
} edgec_resource_limits;

EDGEC_API int edgec_c_api_version(void);
EDGEC_API const char* edgec_version(void);
/* The message of this thread's last failed call ("" after a success). */
EDGEC_API const char* edgec_last_error(void);
EDGEC_API size_t edgec_dtype_size(edgec_dtype dtype);
/* Defaults: CPU, all cores, -O3, profiling on. */
EDGEC_API edgec_session_options edgec_session_options_default(void);

EDGEC_API edgec_resource_limits edgec_get_resource_limits(void);
/* Set once at start, before models are loaded. */
EDGEC_API edgec_status edgec_set_resource_limits(const edgec_resource_limits* limits);

/* Models */
EDGEC_API edgec_status edgec_model_load(const char* path, edgec_model** out);
EDGEC_API edgec_status edgec_model_load_bytes(const void* data, size_t size, edgec_model** out);
EDGEC_API void edgec_model_destroy(edgec_model* model);
EDGEC_API size_t edgec_model_input_count(const edgec_model* model);
EDGEC_API size_t edgec_model_output_count(const edgec_model* model);
/* Name, dtype and dims (-1: not known before a run) of input/output i; `dims` stays valid
 * while the model lives. */
EDGEC_API edgec_status edgec_model_input(const edgec_model* model, size_t i, edgec_tensor* info);
EDGEC_API edgec_status edgec_model_output(const edgec_model* model, size_t i, edgec_tensor* info);
EDGEC_API edgec_status edgec_model_optimize(edgec_model* model, int level);
/* Calibrates on the samples of a folder (as `edgec quantize --calib DIR`) and rewrites to
 * the QDQ form. method: "minmax", "percentile", "entropy" or "mse"; dtype: EDGEC_I8/EDGEC_U8. */
EDGEC_API edgec_status edgec_model_quantize_dir(edgec_model* model, const char* calib_dir, const char* method,
                                                int per_channel, edgec_dtype dtype);

/* Version 2: quantization with the accuracy budget, and the NPU estimate. */
typedef struct edgec_quantize_options {
  const char* method;      /* "minmax", "percentile", "entropy" (NULL) or "mse" */
  int per_channel;         /* weights per output channel (1) or per tensor (0) */
  edgec_dtype dtype;       /* activations: EDGEC_I8 or EDGEC_U8 */
  int64_t limit;           /* > 0: the first `limit` samples of the folder */
  double accuracy_budget;  /* > 0: promote to int16 / keep in float until the mean output cosine reaches it */
  int allow_int16;         /* the budget may promote norms and softmaxes to int16 */
  const char* target;      /* whose vector cores decide int16 (NULL: edge-default) */
  int64_t error_samples;   /* inputs the budget measures on */
} edgec_quantize_options;
typedef struct edgec_quantize_result {
  int64_t quantized_nodes, activation_pairs, int16_pairs;
  int64_t int16_promoted, kept_float;  /* by the budget */
  int budget_met;
  double int8_cosine, mean_cosine;    /* with a budget: all int8, and reached */
} edgec_quantize_result;
EDGEC_API edgec_quantize_options edgec_quantize_options_default(void);
/* The pipeline of `edgec quantize --calib DIR`; `result` may be NULL. */
EDGEC_API edgec_status edgec_model_quantize(edgec_model* model, const char* calib_dir,
                                            const edgec_quantize_options* options, edgec_quantize_result* result);

/* Shape-only NPU estimate of an ONNX file (as `edgec estimate`): every GEMM-class layer tiled
 * and simulated; a QDQ model also compiled (segments > 0: its NPU segments' time). */
typedef struct edgec_estimate {
  double cycles, milliseconds, mac_utilization;
  int64_t macs, dram_bytes, weight_bytes;
  int quantized;
  int segments;
  double segment_milliseconds;
  int64_t resident_bytes, spilled_bytes;
} edgec_estimate;
EDGEC_API edgec_status edgec_estimate_model(const char* model_path, const char* target, const char* const* sets,
                                            size_t count, edgec_estimate* out);

/* Compiling: target is a name ("edge-default"), a .json path, or JSON text (starting with
 * '{'); `sets` holds `count` overrides "FIELD=VALUE". */
EDGEC_API edgec_status edgec_compile(const edgec_model* model, const char* target, const char* const* sets,
                                     size_t count, edgec_compiled** out);
EDGEC_API edgec_status edgec_compiled_load(const char* path, edgec_compiled** out);
EDGEC_API edgec_status edgec_compiled_save(const edgec_compiled* compiled, const char* path);
EDGEC_API void edgec_compiled_destroy(edgec_compiled* compiled);
EDGEC_API size_t edgec_compiled_node_count(const edgec_compiled* compiled);
/* Node i's name, unit ("npu" or "cpu") and reason. */
EDGEC_API edgec_status edgec_compiled_placement(const edgec_compiled* compiled, size_t i, const char** node,
                                                const char** unit, const char** reason);

/* Sessions */
EDGEC_API edgec_status edgec_session_create(const edgec_model* model, const edgec_session_options* options,
                                            edgec_session** out);
EDGEC_API edgec_status edgec_session_create_compiled(const edgec_compiled* compiled,
                                                     const edgec_session_options* options, edgec_session** out);
EDGEC_API void edgec_session_destroy(edgec_session* session);
EDGEC_API edgec_status edgec_session_run(edgec_session* session, const edgec_tensor* inputs, size_t count,
                                         edgec_outputs** out);
/* The last run's total time (seconds: measured on the CPU plan, simulated on npu-sim). */
EDGEC_API double edgec_session_last_seconds(const edgec_session* session);

EDGEC_API size_t edgec_outputs_count(const edgec_outputs* outputs);
EDGEC_API edgec_status edgec_outputs_get(const edgec_outputs* outputs, size_t i, edgec_tensor* tensor);
EDGEC_API void edgec_outputs_destroy(edgec_outputs* outputs);

#ifdef __cplusplus
}
#endif

#endif /* EDGEC_C_API_H_ */
