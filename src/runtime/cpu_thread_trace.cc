// The OpenMP runtime's parallel-region entry, forwarded and recorded (see cpu_thread_trace.h).
#include "runtime/cpu_thread_trace.h"

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>

namespace edgec::cpu_trace {
namespace {

struct Slice {
  int64_t opener;  // the thread that opened the region
  RegionSlice s;
};

// One buffer per thread that ever ran a share of a region while recording; owned by the
// registry (never freed: a pool thread may exit, its buffer stays valid for Take).
struct Buffer {
  std::mutex mu;
  std::vector<Slice> slices;
};
struct Registry {
  std::mutex mu;
  std::vector<std::unique_ptr<Buffer>> buffers;
};
Registry& TheRegistry() {
  static Registry* r = new Registry;  // outlives every thread's last region
  return *r;
}
thread_local Buffer* t_buffer = nullptr;
Buffer& MyBuffer() {
  if (!t_buffer) {
    Registry& r = TheRegistry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.buffers.push_back(std::make_unique<Buffer>());
    t_buffer = r.buffers.back().get();
  }
  return *t_buffer;
}

std::atomic<int> g_open{0};  // recordings open

using RegionFn = void (*)(void*);
using Entry = void (*)(RegionFn, void*, unsigned, unsigned);

// The OpenMP runtime's own entry: the next definition after this one (libgomp), else the
// process's first one when that is not this (edgec_core loaded before libgomp).
Entry RealEntry();

struct Thunk {
  RegionFn fn;
  void* data;
  int64_t opener;
};

void RecordedShare(void* p) {
  const Thunk* t = static_cast<const Thunk*>(p);
  const int64_t begin = NowNs();
  t->fn(t->data);
  const int64_t end = NowNs();
  Buffer& b = MyBuffer();
  std::lock_guard<std::mutex> lock(b.mu);
  b.slices.push_back({t->opener, {ThisThread(), begin, end}});
}

}  // namespace

int64_t ThisThread() {
  thread_local const int64_t tid = static_cast<int64_t>(syscall(SYS_gettid));
  return tid;
}

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

ThreadRecording::ThreadRecording() : tid_(ThisThread()) { g_open.fetch_add(1); }

ThreadRecording::~ThreadRecording() {
  Take();
  g_open.fetch_sub(1);
}

std::vector<RegionSlice> ThreadRecording::Take() {
  std::vector<RegionSlice> out;
  Registry& r = TheRegistry();
  std::lock_guard<std::mutex> lock(r.mu);
  for (auto& b : r.buffers) {
    std::lock_guard<std::mutex> block(b->mu);
    size_t keep = 0;
    for (Slice& s : b->slices) {
      if (s.opener == tid_) out.push_back(s.s);
      else b->slices[keep++] = s;
    }
    b->slices.resize(keep);
  }
  return out;
}

}  // namespace edgec::cpu_trace

// libgomp's entry for `#pragma omp parallel` (GCC 4.9+ ABI): runs fn(data) on a team of
// num_threads (0: the default) threads, the caller among them, and returns when all are done.
extern "C" void GOMP_parallel(edgec::cpu_trace::RegionFn fn, void* data, unsigned num_threads, unsigned flags) {
  using namespace edgec::cpu_trace;
  static const Entry real = RealEntry();
  if (!real) {  // no OpenMP runtime in the process: a team of one is a valid team
    fn(data);
    return;
  }
  if (g_open.load(std::memory_order_relaxed) == 0) {
    real(fn, data, num_threads, flags);
    return;
  }
  Thunk t{fn, data, ThisThread()};
  real(&RecordedShare, &t, num_threads, flags);
}

namespace edgec::cpu_trace {
namespace {

Entry RealEntry() {
  if (void* next = dlsym(RTLD_NEXT, "GOMP_parallel")) return reinterpret_cast<Entry>(next);
  void* first = dlsym(RTLD_DEFAULT, "GOMP_parallel");
  if (first && first != reinterpret_cast<void*>(&GOMP_parallel)) return reinterpret_cast<Entry>(first);
  return nullptr;
}

}  // namespace

bool LibraryRegionsVisible() { return dlsym(RTLD_DEFAULT, "GOMP_parallel") == reinterpret_cast<void*>(&GOMP_parallel); }

}  // namespace edgec::cpu_trace
