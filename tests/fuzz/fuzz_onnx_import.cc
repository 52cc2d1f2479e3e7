// Fuzz target: an ONNX file through the importer, shape inference and the -O3 optimizer
// (driver::LoadModel, what every verb runs first). Any input must give a graph or an error.
#include "driver/load.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = edgec::fuzz::WriteInput(data, size, ".onnx");
  edgec::driver::LoadOptions opt;
  opt.opt_level = 3;
  opt.default_dim = 1;  // symbolic dims bound, as `edgec run` does
  auto g = edgec::driver::LoadModel(path, opt);
  (void)g;
  return 0;
}
