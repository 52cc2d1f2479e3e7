// edgec::ProgressBar (include/edgec/progress.h) over support/progress.h.
#include "edgec/progress.h"

#include "support/progress.h"

namespace edgec {
inline namespace v1 {

struct ProgressBar::Impl {
  Progress progress;
};

ProgressBar::ProgressBar(const std::string& label, int64_t total, std::FILE* out, int tty)
    : impl_(new Impl{Progress(label, total, out, tty)}) {}
ProgressBar::~ProgressBar() = default;
void ProgressBar::Step(int64_t n) { impl_->progress.Step(n); }
void ProgressBar::Done() { impl_->progress.Done(); }

}  // namespace v1
}  // namespace edgec
