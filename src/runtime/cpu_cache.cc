// A write-back CPU cache over an NPU DRAM image (see cpu_cache.h).
#include "runtime/cpu_cache.h"

#include <algorithm>
#include <cstring>

namespace edgec {

CpuCache::Line& CpuCache::Get(int64_t line_addr) {
  auto it = lines_.find(line_addr);
  if (it != lines_.end()) return it->second;
  Line l;
  l.bytes.assign(line_, 0);
  const int64_t size = static_cast<int64_t>(dram_->size());
  const int64_t n = std::clamp<int64_t>(size - line_addr, 0, line_);
  if (n > 0) std::memcpy(l.bytes.data(), dram_->data() + line_addr, n);
  return lines_.emplace(line_addr, std::move(l)).first->second;
}

void CpuCache::Write(int64_t addr, const uint8_t* src, int64_t n) {
  if (coherent_) {
    std::memcpy(dram_->data() + addr, src, n);
    return;
  }
  for (int64_t i = 0; i < n;) {
    const int64_t la = (addr + i) / line_ * line_, off = addr + i - la, k = std::min(n - i, line_ - off);
    Line& l = Get(la);
    std::memcpy(l.bytes.data() + off, src + i, k);
    l.dirty = true;
    i += k;
  }
}

void CpuCache::Read(int64_t addr, uint8_t* dst, int64_t n) {
  if (coherent_) {
    std::memcpy(dst, dram_->data() + addr, n);
    return;
  }
  for (int64_t i = 0; i < n;) {
    const int64_t la = (addr + i) / line_ * line_, off = addr + i - la, k = std::min(n - i, line_ - off);
    std::memcpy(dst + i, Get(la).bytes.data() + off, k);
    i += k;
  }
}

void CpuCache::Flush(int64_t addr, int64_t n) {
  const int64_t size = static_cast<int64_t>(dram_->size());
  for (auto it = lines_.lower_bound(addr / line_ * line_); it != lines_.end() && it->first < addr + n; ++it) {
    if (!it->second.dirty) continue;
    const int64_t k = std::clamp<int64_t>(size - it->first, 0, line_);
    std::memcpy(dram_->data() + it->first, it->second.bytes.data(), k);
    it->second.dirty = false;
  }
}

void CpuCache::Invalidate(int64_t addr, int64_t n) {
  lines_.erase(lines_.lower_bound(addr / line_ * line_), lines_.lower_bound(addr + n));
}

int64_t CpuCache::Lines(int64_t addr, int64_t n) const {
  if (n <= 0) return 0;
  return (addr + n - 1) / line_ - addr / line_ + 1;
}

int64_t CpuCache::dirty_lines() const {
  int64_t d = 0;
  for (auto& [a, l] : lines_) d += l.dirty;
  return d;
}

}  // namespace edgec
