// Fuzz target: the calibration image loader (PNG through libpng, JPEG through libjpeg,
// chosen by magic bytes).
#include "support/image.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = edgec::fuzz::WriteInput(data, size, ".img");
  auto img = edgec::ReadImage(path);
  (void)img;
  return 0;
}
