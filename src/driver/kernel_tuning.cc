#include "driver/kernel_tuning.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace edgec::driver {
namespace {

const char* Get(const char* name) {
  const char* v = std::getenv(name);
  return v && v[0] ? v : nullptr;
}

void ReadCount(const char* name, int64_t& out) {
  const char* v = Get(name);
  if (!v) return;
  char* end = nullptr;
  const long long n = std::strtoll(v, &end, 10);
  if (*end != '\0' || n < 1) {
    std::fprintf(stderr, "edgec: %s='%s' is not a positive whole number; ignored\n", name, v);
    return;
  }
  out = n;
}

}  // namespace

cpu::KernelTuning KernelTuningFromEnvironment() {
  cpu::KernelTuning t;
  if (const char* v = Get("EDGEC_CPU_WINOGRAD")) t.winograd = std::string(v) != "0";
  ReadCount("EDGEC_CPU_WINOGRAD_MIN_CHANNELS", t.winograd_min_channels);
  ReadCount("EDGEC_CPU_CONV1X1_GEMM_MIN_PIXELS", t.conv1x1_gemm_min_pixels);
  if (const char* v = Get("EDGEC_CPU_GEMV")) t.gemv = std::string(v) != "0";
  if (const char* v = Get("EDGEC_INT8_UNCHECKED")) t.int8_unchecked = std::string(v) == "1";
  return t;
}

void ApplyCpuIsaFromEnvironment() {
  const char* v = Get("EDGEC_CPU_ISA");
  if (v && !cpu::CapVectorIsa(v)) {
    std::fprintf(stderr, "edgec: EDGEC_CPU_ISA='%s' is not one of avx512, avx2, scalar; ignored\n", v);
  }
}

}  // namespace edgec::driver
