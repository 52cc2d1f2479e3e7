// The CLI keeps the memory it frees for its next allocations.
//
// `edgec compile` lowers and simulates every tiling it tries (npu/tiler.cc): each try builds
// instruction streams of up to tens of megabytes and drops them. glibc's default hands such
// blocks back to the kernel (mmap for the largest, heap trimming past a threshold that grows
// with them), and the next try faults every page in again: mobilenet_v2 for edge-default took
// 221k page faults, 44k with freed memory kept (figures and times in docs/npu.md, "Compile
// time"). So the CLI maps only blocks above 32 MiB on their own and never trims the heap; a
// GLIBC_TUNABLES that sets malloc's own is left as the user gave it.
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "tools/edgec/verbs.h"

namespace edgec::cli {

void KeepFreedMemory() {
#if defined(__GLIBC__)
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::strstr(tunables, "glibc.malloc.")) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 0x7fffffff);
#endif
}

}  // namespace edgec::cli
