#include "kernels/cpu/context.h"

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "kernels/cpu/kernel.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

std::atomic<int> g_threads{std::max(1, static_cast<int>(std::thread::hardware_concurrency()))};

bool ScalarFromEnvironment() {
  const char* v = std::getenv("EDGEC_CPU_SCALAR");
  return v && v[0] != '\0' && v[0] != '0';
}

std::atomic<bool> g_force_scalar{ScalarFromEnvironment()};
const bool g_has_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");

}  // namespace

int Threads() { return g_threads.load(std::memory_order_relaxed); }

void SetThreads(int n) {
  n = std::max(1, n);
  g_threads.store(n, std::memory_order_relaxed);
  UseThreads(n);
}

void ForceScalarKernels(bool on) { g_force_scalar.store(on, std::memory_order_relaxed); }

std::string_view VectorIsa() { return vec::Kernels().isa; }

const vec::Table& vec::Kernels() {
  return g_has_avx2 && !g_force_scalar.load(std::memory_order_relaxed) ? kAvx2Table : kScalarTable;
}

DnnlContext& GetDnnlContext(int threads) {
  static std::mutex mu;
  static std::map<int, std::unique_ptr<DnnlContext>> contexts;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = contexts[threads];
  if (!slot) {
    dnnl::engine engine(dnnl::engine::kind::cpu, 0);
    slot = std::make_unique<DnnlContext>(DnnlContext{engine, dnnl::stream(engine)});
  }
  return *slot;
}

dnnl::memory::data_type DnnlType(DType t) {
  using dt = dnnl::memory::data_type;
  switch (t) {
    case DType::kF32: return dt::f32;
    case DType::kF16: return dt::f16;
    case DType::kBF16: return dt::bf16;
    case DType::kI8: return dt::s8;
    case DType::kU8: return dt::u8;
    case DType::kI32: return dt::s32;
    default: return dt::undef;
  }
}

}  // namespace edgec::cpu
