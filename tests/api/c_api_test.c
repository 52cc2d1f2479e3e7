/* The C API from a C program: loads a zoo model, runs it on the CPU plan (-O3 against -O0),
 * checks the error paths, and writes output 0's bytes to OUT.bin, which the C++ API test
 * (tests/api/api_test.cc: ApiC.MatchesTheCppApi) compares with its own run of the same input.
 * Usage: edgec_c_api_test MODEL.onnx [OUT.bin] */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edgec/c_api.h"

static int failures = 0;
#define EXPECT(cond)                                                   \
  do {                                                                 \
    if (!(cond)) {                                                     \
      fprintf(stderr, "%s:%d: expected %s (%s)\n", __FILE__, __LINE__, \
              #cond, edgec_last_error());                              \
      ++failures;                                                      \
    }                                                                  \
  } while (0)

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    fprintf(stderr, "usage: %s MODEL.onnx [OUT.bin]\n", argv[0]);
    return 2;
  }
  EXPECT(edgec_c_api_version() == EDGEC_C_API_VERSION);

  edgec_model* bad = NULL;
  EXPECT(edgec_model_load("/nonexistent.onnx", &bad) != EDGEC_OK);
  EXPECT(bad == NULL);
  EXPECT(strstr(edgec_last_error(), "/nonexistent.onnx") != NULL);

  edgec_model* model = NULL;
  if (edgec_model_load(argv[1], &model) != EDGEC_OK) {
    fprintf(stderr, "load: %s\n", edgec_last_error());
    return 1;
  }
  EXPECT(edgec_model_input_count(model) == 1);
  edgec_tensor in_info;
  EXPECT(edgec_model_input(model, 0, &in_info) == EDGEC_OK);
  EXPECT(in_info.dtype == EDGEC_F32 && in_info.rank == 4);
  EXPECT(edgec_model_input(model, 5, &in_info) == EDGEC_INVALID_ARGUMENT);
  EXPECT(strcmp(edgec_last_error(), "edgec_model_input: index 5 out of range (the model has 1 inputs)") == 0);
  EXPECT(edgec_model_output(model, 99, &in_info) == EDGEC_INVALID_ARGUMENT);
  EXPECT(strstr(edgec_last_error(), "edgec_model_output: index 99 out of range (the model has ") != NULL);
  EXPECT(edgec_model_input(model, 0, &in_info) == EDGEC_OK);

  /* A seeded input: x[i] = sin(i * 0.001). */
  size_t n = 1;
  for (size_t d = 0; d < in_info.rank; ++d) n *= (size_t)in_info.dims[d];
  float* x = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) x[i] = (float)sin((double)i * 0.001);

  edgec_session_options o = edgec_session_options_default();
  o.threads = 1;
  edgec_session* s1 = NULL;
  edgec_session* s0 = NULL;
  EXPECT(edgec_session_create(model, &o, &s1) == EDGEC_OK);
  o.opt_level = 0;
  EXPECT(edgec_session_create(model, &o, &s0) == EDGEC_OK);

  edgec_tensor input = in_info;
  input.data = x;
  edgec_outputs* y1 = NULL;
  edgec_outputs* y0 = NULL;
  EXPECT(edgec_session_run(s1, &input, 1, &y1) == EDGEC_OK);
  EXPECT(edgec_session_run(s0, &input, 1, &y0) == EDGEC_OK);
  EXPECT(edgec_session_last_seconds(s1) > 0);
  if (y1 && y0) {
    EXPECT(edgec_outputs_count(y1) == 1);
    edgec_tensor a, b;
    EXPECT(edgec_outputs_get(y1, 0, &a) == EDGEC_OK);
    EXPECT(edgec_outputs_get(y0, 0, &b) == EDGEC_OK);
    EXPECT(a.dtype == EDGEC_F32 && a.rank == 2 && a.dims[1] == 1000);
    /* -O3 and -O0 agree within float rounding; the output is not all zeros. */
    double worst = 0, largest = 0;
    for (int64_t i = 0; i < a.dims[1]; ++i) {
      const double d = fabs(((float*)a.data)[i] - ((float*)b.data)[i]);
      if (d > worst) worst = d;
      if (fabs(((float*)a.data)[i]) > largest) largest = fabs(((float*)a.data)[i]);
    }
    EXPECT(largest > 0);
    EXPECT(worst < 1e-3 * (largest > 1 ? largest : 1));
    if (argc == 3) {
      FILE* f = fopen(argv[2], "wb");
      EXPECT(f != NULL);
      if (f) {
        EXPECT(fwrite(a.data, sizeof(float), (size_t)a.dims[1], f) == (size_t)a.dims[1]);
        fclose(f);
      }
    }
    EXPECT(edgec_outputs_get(y1, 1, &a) == EDGEC_INVALID_ARGUMENT);
    EXPECT(strcmp(edgec_last_error(), "edgec_outputs_get: index 1 out of range (1 outputs)") == 0);
  }

  /* Wrong input name: an error naming it. */
  edgec_tensor wrong = input;
  wrong.name = "pixels";
  edgec_outputs* none = NULL;
  EXPECT(edgec_session_run(s1, &wrong, 1, &none) != EDGEC_OK);
  EXPECT(strstr(edgec_last_error(), "pixels") != NULL);

  /* A float model does not compile. */
  edgec_compiled* c = NULL;
  EXPECT(edgec_compile(model, "edge-default", NULL, 0, &c) == EDGEC_INVALID_ARGUMENT);
  EXPECT(strstr(edgec_last_error(), "quantize") != NULL);

  /* The NPU estimate of the float model: layer by layer, no segment schedule; a bad override
   * names the field. */
  edgec_estimate est;
  memset(&est, 0, sizeof est);
  const char* sram[] = {"shared_sram.bytes=64K"};
  EXPECT(edgec_estimate_model(argv[1], "edge-default", NULL, 0, &est) == EDGEC_OK);
  EXPECT(est.cycles > 0 && est.macs > 0 && est.quantized == 0 && est.segments == 0);
  EXPECT(est.milliseconds > 0 && est.dram_bytes > 0);
  edgec_estimate small;
  EXPECT(edgec_estimate_model(argv[1], "edge-default", sram, 1, &small) == EDGEC_OK);
  EXPECT(small.milliseconds > est.milliseconds && small.macs == est.macs);
  const char* bad_set[] = {"shared_sram.colour=1"};
  EXPECT(edgec_estimate_model(argv[1], NULL, bad_set, 1, &small) == EDGEC_INVALID_ARGUMENT);
  EXPECT(strstr(edgec_last_error(), "colour") != NULL);

  /* Quantization options: defaults, and a missing folder named in the error. */
  edgec_quantize_options qo = edgec_quantize_options_default();
  EXPECT(qo.per_channel == 1 && qo.dtype == EDGEC_I8 && qo.error_samples == 8 && qo.allow_int16 == 1);
  EXPECT(edgec_model_quantize(model, "/nonexistent_calib", &qo, NULL) != EDGEC_OK);
  EXPECT(strstr(edgec_last_error(), "nonexistent_calib") != NULL);

  /* Resource limits: a graph over the node limit is refused, naming the limit; restored after. */
  const edgec_resource_limits limits = edgec_get_resource_limits();
  EXPECT(limits.nodes == 500000 && limits.model_bytes == ((int64_t)4 << 30));
  edgec_resource_limits tight = limits;
  tight.nodes = 3;
  EXPECT(edgec_set_resource_limits(&tight) == EDGEC_OK);
  EXPECT(edgec_get_resource_limits().nodes == 3);
  edgec_model* too_big = NULL;
  EXPECT(edgec_model_load(argv[1], &too_big) == EDGEC_INVALID_ARGUMENT);
  EXPECT(strstr(edgec_last_error(), "over the limit of 3") != NULL);
  tight.nodes = 0;
  EXPECT(edgec_set_resource_limits(&tight) == EDGEC_INVALID_ARGUMENT);
  EXPECT(edgec_set_resource_limits(&limits) == EDGEC_OK);
  EXPECT(edgec_model_load(argv[1], &too_big) == EDGEC_OK);
  edgec_model_destroy(too_big);

  edgec_outputs_destroy(y0);
  edgec_outputs_destroy(y1);
  edgec_session_destroy(s0);
  edgec_session_destroy(s1);
  edgec_model_destroy(model);
  free(x);
  if (failures) fprintf(stderr, "%d failure(s)\n", failures);
  else printf("c api: all checks passed\n");
  return failures ? 1 : 0;
}
