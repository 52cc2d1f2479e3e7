// Fuzz target: the NPU target-file parser and validator (npu::ParseTargetText), then one
// override on the parsed target.
#include <string>

#include "npu/target.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto t = edgec::npu::ParseTargetText(text, "fuzz.json");
  if (t.ok()) (void)edgec::npu::ApplyOverride(*t, "shared_sram.bytes=128K");
  // The override syntax itself: the input as one `path=value` assignment.
  (void)edgec::npu::ApplyOverride(edgec::npu::DefaultTarget(), text);
  return 0;
}
