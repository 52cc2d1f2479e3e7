// OpenMP's wait policy for the CLI, chosen from the machine's load at start-up.
//
// oneDNN runs under libgomp, whose threads spin at the end of each parallel region before
// they sleep. On a quiet machine that is the fastest (2 threads, load ~1.8: passive makes
// mobilenet_v2 1.4x, resnet18 1.45x, bert_tiny 1.9x slower); when other processes already
// keep every core busy, a spinning thread holds the core its partner needs and every
// barrier waits for a time slice (2 threads, load ~5.5: resnet18 107 ms active vs 16 ms
// passive, mobilenet_v2 23 vs 5.3 ms; GOMP_SPINCOUNT=1000 still 39 ms; with this rule
// resnet18 61 -> 24 ms and mobilenet_v2 12 -> 4.3 ms, but bert_tiny, whose short regions
// each pay a wake-up when passive, 0.19 -> 0.45 ms). libgomp reads the
// policy once, when it is loaded, so the choice is made here and applied by re-executing
// the program with OMP_WAIT_POLICY=passive.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "tools/edgec/verbs.h"

namespace edgec::cli {

namespace {

// Runnable tasks on the machine (this process included), -1 when /proc/stat is unreadable.
int ProcsRunning() {
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "procs_running") {
      int n = -1;
      in >> n;
      return n;
    }
    in.ignore(1 << 20, '\n');
  }
  return -1;
}

}  // namespace

void ChooseOmpWaitPolicy(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;  // the user's choice
  const char* v = std::getenv("EDGEC_WAIT_POLICY");
  const std::string mode = v && v[0] ? v : "auto";
  std::string why;
  if (mode == "passive") {
    why = "EDGEC_WAIT_POLICY=passive";
  } else if (mode == "auto") {
    // The fewest other runnable tasks over three looks 1 ms apart (a blip is not load).
    int others = 1 << 20;
    for (int i = 0; i < 3; ++i) {
      if (i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      const int n = ProcsRunning();
      if (n < 0) return;
      others = std::min(others, n - 1);
    }
    const int cores = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
    if (others < cores) return;
    why = fmt::format("{} other runnable task(s) on {} core(s) at start", others, cores);
  } else {
    return;  // "active" or anything else: libgomp's default
  }
  setenv("OMP_WAIT_POLICY", "passive", 1);
  setenv("EDGEC_WAIT_POLICY_REASON", why.c_str(), 1);
  execv("/proc/self/exe", argv);
  // The re-exec failed: carry on with libgomp's default.
  unsetenv("OMP_WAIT_POLICY");
  unsetenv("EDGEC_WAIT_POLICY_REASON");
}

std::string OmpWaitPolicyNote() {
  const char* policy = std::getenv("OMP_WAIT_POLICY");
  const char* why = std::getenv("EDGEC_WAIT_POLICY_REASON");
  if (!policy) return std::getenv("GOMP_SPINCOUNT") ? "GOMP_SPINCOUNT from the environment" : "active (default)";
  return why ? fmt::format("{} ({})", policy, why) : fmt::format("{} (OMP_WAIT_POLICY from the environment)", policy);
}

}  // namespace edgec::cli
