// What the fast CPU kernels share: the thread count, a parallel-for over OpenMP, the
// oneDNN engine and stream (one per thread count), and the conversion of oneDNN's
// exceptions into Status. Internal to src/kernels/cpu.
#pragma once

#include <omp.h>

#include <algorithm>
#include <cstdint>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>

#include "support/status.h"
#include "ir/dtype.h"

namespace edgec::cpu {

// The count SetThreads gave (default: all cores).
int Threads();

// Whether the own kernels' AVX-512 code may run with AVX-512BW and the extension `ext`: the
// vector ISA in use (within its cap, cpu::CapVectorIsa) is AVX-512 and the CPU has both. One
// table-pointer comparison and cached CPUID reads: cheap enough for a kernel's inner calls.
enum class Avx512Ext { kBw, kBwVl, kVbmi, kVnni };
bool OwnAvx512(Avx512Ext ext);

// Makes OpenMP (and so oneDNN) run the next parallel regions of this thread with n threads.
inline void UseThreads(int n) {
  if (omp_get_max_threads() != n) omp_set_num_threads(n);
}

// fn(begin, end) over [0, count) split into at most `threads` contiguous ranges, each of
// at least `grain` items (one range, on the calling thread, when count is small).
template <class Fn>
void ParallelFor(int threads, int64_t count, int64_t grain, const Fn& fn) {
  const int64_t by_size = count / std::max<int64_t>(grain, 1);
  const int n = static_cast<int>(std::min<int64_t>(threads, by_size));
  if (n <= 1) {
    if (count > 0) fn(int64_t{0}, count);
    return;
  }
#pragma omp parallel num_threads(n)
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    const int64_t begin = count * t / nt, end = count * (t + 1) / nt;
    if (begin < end) fn(begin, end);
  }
}

struct DnnlContext {
  dnnl::engine engine;
  dnnl::stream stream;
};
// The engine (shared by the process) and stream (the calling thread's own) for `threads`
// threads, made on first use and kept.
DnnlContext& GetDnnlContext(int threads);

// oneDNN's element type for an edgec dtype, or nullopt-like undef when it has none.
dnnl::memory::data_type DnnlType(DType t);

// Runs fn() (which may throw dnnl::error) and returns what it returns (a Status or
// StatusOr), turning an exception into Internal("<label>: oneDNN: <what> (status)").
template <class Fn>
auto CatchDnnl(const std::string& label, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    return Internal("{}: oneDNN: {} (status {})", label, e.what(), static_cast<int>(e.status));
  }
}

}  // namespace edgec::cpu
