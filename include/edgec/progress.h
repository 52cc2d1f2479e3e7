// ProgressBar: edgec's progress report for long loops, as its calibration and `edgec soak`
// show it. On a terminal it redraws one line with a bar, the count, the rate and the ETA;
// otherwise (a log, a pipe) it prints a plain line at every 10% and at the end.
//
//   edgec::ProgressBar bar("runs", n, stderr, isatty(2) ? 1 : 0);
//   for (int i = 0; i < n; ++i) { work(); bar.Step(); }
//   bar.Done();
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "edgec/export.h"

namespace edgec {
inline namespace v1 {

class EDGEC_API ProgressBar {
 public:
  // `out` null: prints nothing. `tty` < 0: ask isatty(out); 1: redraw one line; 0: plain lines.
  ProgressBar(const std::string& label, int64_t total, std::FILE* out = stderr, int tty = -1);
  ~ProgressBar();  // finishes the line if Done() was not called
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  void Step(int64_t n = 1);
  void Done();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace v1
}  // namespace edgec
