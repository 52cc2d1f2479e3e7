// Which CPU threads ran what while a CPU plan runs (`edgec profile`'s per-thread tracks).
//
// The CPU runtime's threads: a plan's steps run one after another on the thread that calls
// PlanExecutor::Run (no inter-op branches run side by side); a step's parallelism is inside
// its kernel, an OpenMP parallel region: oneDNN's primitives (libdnnl is built on OpenMP) and
// the own kernels' ParallelFor (kernels/cpu/context.h) alike. Every region passes through
// the OpenMP runtime's entry GOMP_parallel; this file defines that entry, forwards it to
// libgomp's and, while a ThreadRecording is open, has every team member note when it started
// and ended its share of the region. The entry is exported where edgec_core is linked into
// an executable (the CLI, the tests), so libdnnl's regions reach it too; inside a shared
// library that hides edgec_core's symbols only the own kernels' regions do
// (LibraryRegionsVisible says which). Guarded by tests/runtime/cpu_thread_trace_test.cc
// and tests/report/profile_trace_test.cc (ProfileTrace.PerThreadCpuTracks).
#pragma once

#include <cstdint>
#include <vector>

#include "support/status.h"

namespace edgec::cpu_trace {

// One team member's share of one parallel region, on the steady clock (nanoseconds).
struct RegionSlice {
  int64_t tid = 0;  // the OS thread that ran it
  int64_t begin_ns = 0, end_ns = 0;
};

// The calling thread's OS id (gettid).
int64_t ThisThread();
// Now on the steady clock, in nanoseconds (the clock of RegionSlice and PlanExecutor's steps).
int64_t NowNs();

// Records the parallel regions the constructing thread opens, every team member's share,
// until it is destroyed; regions other threads open are not its (each open recording keeps
// those of its own thread).
class ThreadRecording {
 public:
  ThreadRecording();
  ~ThreadRecording();
  ThreadRecording(const ThreadRecording&) = delete;
  ThreadRecording& operator=(const ThreadRecording&) = delete;
  // The slices recorded since construction (or the last Take), every team member's, in no
  // particular order; recording goes on.
  std::vector<RegionSlice> Take();
  int64_t thread() const { return tid_; }

 private:
  int64_t tid_;
};

// Whether regions opened inside other libraries (libdnnl) reach the recorder: the process's
// global lookup of GOMP_parallel finds this file's entry.
bool LibraryRegionsVisible();

}  // namespace edgec::cpu_trace
