#include "support/progress.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace edgec {

namespace {
std::string Clock(double seconds) {
  const int64_t s = static_cast<int64_t>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}
}  // namespace

Progress::Progress(std::string label, int64_t total, FILE* out, int tty)
    : label_(std::move(label)), total_(std::max<int64_t>(total, 0)), out_(out),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {
  tty_ = out_ && (tty >= 0 ? tty != 0 : isatty(fileno(out_)) != 0);
}

Progress::~Progress() {
  if (!finished_) Done();
}

std::string Progress::Format(const std::string& label, int64_t done, int64_t total, double seconds,
                             bool bar) {
  const double rate = seconds > 0 ? done / seconds : 0;
  std::string s = label + " ";
  if (bar) {
    const int width = 24;
    const int filled = total > 0 ? static_cast<int>(width * std::min(done, total) / total) : width;
    s += "[" + std::string(filled, '#') + std::string(width - filled, '.') + "] ";
  }
  s += fmt::format("{}/{} {:.1f}/s", done, total, rate);
  if (done < total && rate > 0) s += " ETA " + Clock((total - done) / rate);
  else if (done >= total) s += " in " + Clock(seconds);
  return s;
}

void Progress::Print(bool final) {
  if (!out_) return;
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start_).count();
  if (tty_) {
    if (!final && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    fmt::print(out_, "\r{}\x1b[K{}", Format(label_, done_, total_, seconds, true), final ? "\n" : "");
    std::fflush(out_);
    return;
  }
  const int64_t decile = total_ > 0 ? done_ * 10 / total_ : 10;
  if (!final && decile == last_decile_) return;
  if (final && decile == last_decile_ && done_ == total_) return;  // already printed
  last_decile_ = decile;
  fmt::print(out_, "{}\n", Format(label_, done_, total_, seconds, false));
  std::fflush(out_);
}

void Progress::Step(int64_t n) {
  done_ += n;
  Print(false);
}

void Progress::Done() {
  if (finished_) return;
  finished_ = true;
  Print(true);
}

}  // namespace edgec
