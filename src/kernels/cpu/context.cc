#include "kernels/cpu/context.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "kernels/cpu/kernel.h"
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

std::atomic<int> g_threads{std::max(1, static_cast<int>(std::thread::hardware_concurrency()))};

// The one CPU-feature probe of the own kernels, read once (libgcc's checks include the OS's
// support for the wider register state). Everything else asks the tables and OwnAvx512.
struct CpuFeatures {
  bool avx2, fma, avx512f, avx512bw, avx512vl, avx512vbmi, avx512vnni;
};
const CpuFeatures& Cpu() {
  static const CpuFeatures f = {__builtin_cpu_supports("avx2") != 0,       __builtin_cpu_supports("fma") != 0,
                                __builtin_cpu_supports("avx512f") != 0,    __builtin_cpu_supports("avx512bw") != 0,
                                __builtin_cpu_supports("avx512vl") != 0,   __builtin_cpu_supports("avx512vbmi") != 0,
                                __builtin_cpu_supports("avx512vnni") != 0};
  return f;
}

// The tables this CPU can run, widest first. The AVX-512 table is built for AVX2 and FMA too
// (vec/avx512.cc), and the int8 rows behind both x86 tables take AVX2 for granted.
std::vector<const vec::Table*> AvailableTables() {
  const CpuFeatures& cpu = Cpu();
  std::vector<const vec::Table*> t;
  if (cpu.avx512f && cpu.avx2 && cpu.fma) t.push_back(&vec::kAvx512Table);
  if (cpu.avx2 && cpu.fma) t.push_back(&vec::kAvx2Table);
  t.push_back(&vec::kScalarTable);
  return t;
}
const std::vector<const vec::Table*>& Tables() {
  static const std::vector<const vec::Table*> tables = AvailableTables();
  return tables;
}

// An ISA's place in kIsaOrder (0 = widest), -1 for an unknown name.
constexpr std::string_view kIsaOrder[] = {"avx512", "avx2", "scalar"};
constexpr int kNumIsas = static_cast<int>(std::size(kIsaOrder));
int IsaRank(std::string_view isa) {
  for (int i = 0; i < kNumIsas; ++i)
    if (kIsaOrder[i] == isa) return i;
  return -1;
}

// For each cap, the widest available table within it (resolved once; Kernels() is on every
// own kernel's Run).
const std::array<const vec::Table*, kNumIsas>& TableByCap() {
  static const std::array<const vec::Table*, kNumIsas> by_cap = [] {
    std::array<const vec::Table*, kNumIsas> t{};
    for (int cap = 0; cap < kNumIsas; ++cap) {
      t[cap] = &vec::kScalarTable;
      for (const vec::Table* table : Tables()) {
        if (IsaRank(table->isa) >= cap) {
          t[cap] = table;
          break;
        }
      }
    }
    return t;
  }();
  return by_cap;
}

std::atomic<int> g_isa_cap{0};

}  // namespace

int Threads() { return g_threads.load(std::memory_order_relaxed); }

void SetThreads(int n) {
  n = std::max(1, n);
  g_threads.store(n, std::memory_order_relaxed);
  UseThreads(n);
}

bool CapVectorIsa(std::string_view isa) {
  const int rank = isa.empty() ? 0 : IsaRank(isa);
  if (rank < 0) return false;
  g_isa_cap.store(rank, std::memory_order_relaxed);
  return true;
}


std::vector<std::string_view> VectorIsas() {
  std::vector<std::string_view> names;
  for (const vec::Table* t : Tables()) names.push_back(t->isa);
  return names;
}

std::string_view VectorIsa() { return vec::Kernels().isa; }

bool OwnAvx512(Avx512Ext ext) {
  const CpuFeatures& cpu = Cpu();
  if (&vec::Kernels() != &vec::kAvx512Table || !cpu.avx512bw) return false;
  switch (ext) {
    case Avx512Ext::kBw: return true;
    case Avx512Ext::kBwVl: return cpu.avx512vl;
    case Avx512Ext::kVbmi: return cpu.avx512vbmi;
    case Avx512Ext::kVnni: return cpu.avx512vnni;
  }
  return false;
}

const vec::Table& vec::Kernels() { return *TableByCap()[g_isa_cap.load(std::memory_order_relaxed)]; }

// One engine per thread count for the whole process (a session's primitives are made on the
// thread that builds it and run on the threads that call Run), and one stream per calling
// thread: sessions on several threads never share a stream (tests/api/concurrency_test.cc).
DnnlContext& GetDnnlContext(int threads) {
  thread_local std::map<int, std::unique_ptr<DnnlContext>> contexts;
  auto& slot = contexts[threads];
  if (!slot) {
    static std::mutex mu;
    static std::map<int, dnnl::engine> engines;
    dnnl::engine engine;
    {
      std::lock_guard<std::mutex> lock(mu);
      auto it = engines.find(threads);
      if (it == engines.end()) it = engines.emplace(threads, dnnl::engine(dnnl::engine::kind::cpu, 0)).first;
      engine = it->second;
    }
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
