/* Loads an ONNX model with the C API, runs it on the CPU on a seeded input and prints the
 * index of the largest output. Build: cc run_model.c $(pkg-config --cflags --libs edgec)
 * Usage: run_model MODEL.onnx */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <edgec/c_api.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s MODEL.onnx\n", argv[0]);
    return 2;
  }
  edgec_model* model = NULL;
  if (edgec_model_load(argv[1], &model) != EDGEC_OK) {
    fprintf(stderr, "%s\n", edgec_last_error());
    return 1;
  }
  edgec_tensor input;
  edgec_model_input(model, 0, &input);
  size_t n = 1;
  for (size_t d = 0; d < input.rank; ++d) n *= (size_t)input.dims[d];
  float* x = malloc(n * sizeof(float));
  for (size_t i = 0; i < n; ++i) x[i] = (float)sin((double)i * 0.001);
  input.data = x;

  edgec_session* session = NULL;
  edgec_outputs* outputs = NULL;
  edgec_tensor y;
  int rc = 1;
  if (edgec_session_create(model, NULL, &session) == EDGEC_OK &&
      edgec_session_run(session, &input, 1, &outputs) == EDGEC_OK &&
      edgec_outputs_get(outputs, 0, &y) == EDGEC_OK) {
    const float* v = (const float*)y.data;
    int64_t best = 0;
    for (int64_t i = 1; i < y.dims[y.rank - 1]; ++i)
      if (v[i] > v[best]) best = i;
    printf("output '%s': largest value %.4f at %lld (%.3f ms)\n", y.name, v[best], (long long)best,
           edgec_session_last_seconds(session) * 1e3);
    rc = 0;
  } else {
    fprintf(stderr, "%s\n", edgec_last_error());
  }
  edgec_outputs_destroy(outputs);
  edgec_session_destroy(session);
  edgec_model_destroy(model);
  free(x);
  return rc;
}
