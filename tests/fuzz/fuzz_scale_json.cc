// Fuzz target: the calibration scale table reader (quant::ReadScaleTable).
#include "quant/calibrate.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = edgec::fuzz::WriteInput(data, size, ".json");
  auto t = edgec::quant::ReadScaleTable(path);
  (void)t;
  return 0;
}
