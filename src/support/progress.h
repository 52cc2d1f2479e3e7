// A progress report for long loops (calibration, evaluation). On a terminal it redraws one
// line with a bar, the count, the rate and the ETA; otherwise (a log, a pipe) it prints a
// plain line at every 10% and at the end, so logs stay readable.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace edgec {

class Progress {
 public:
  // `out` null or quiet: prints nothing. `tty` < 0: ask isatty(out).
  Progress(std::string label, int64_t total, FILE* out = stderr, int tty = -1);
  ~Progress();  // finishes the line if Done() was not called
  void Step(int64_t n = 1);
  void Done();
  // "[#####.....] 5/10 2.5/s ETA 0:02" (exposed for tests).
  static std::string Format(const std::string& label, int64_t done, int64_t total, double seconds,
                            bool bar);

 private:
  void Print(bool final);
  std::string label_;
  int64_t total_, done_ = 0;
  FILE* out_;
  bool tty_;
  bool finished_ = false;
  int64_t last_decile_ = -1;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace edgec
