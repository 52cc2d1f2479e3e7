// Fuzz target: the .npy reader (ParseNpy), and the writer on whatever it accepted.
#include <string_view>

#include "support/npy.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto t = edgec::ParseNpy(std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.npy");
  if (t.ok()) (void)edgec::WriteNpy(edgec::fuzz::InputPath(".out.npy"), *t);
  return 0;
}
