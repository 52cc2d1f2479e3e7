// The CPU's data cache over an NPU segment's DRAM image, as a CPU <-> NPU hand-over sees it.
//
// Write-back: a CPU store goes into the cache (its lines become dirty) and reaches DRAM only
// when the line is cleaned (Flush). A CPU load is served from the cache where it holds the
// line (a stale copy if the NPU wrote DRAM since and the line was not invalidated), else
// from DRAM, keeping the line. The NPU reads and writes DRAM only. On a coherent target the
// cache is transparent (stores and loads go straight to DRAM). Guarded by
// tests/lower/npu_segment_test.cc (a dropped flush makes the NPU read stale input).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace edgec {

class CpuCache {
 public:
  CpuCache(std::vector<uint8_t>* dram, int64_t line_bytes, bool coherent)
      : dram_(dram), line_(line_bytes), coherent_(coherent) {}
  void Write(int64_t addr, const uint8_t* src, int64_t n);
  void Read(int64_t addr, uint8_t* dst, int64_t n);
  // Writes the dirty lines of [addr, addr + n) to DRAM (they stay cached, clean).
  void Flush(int64_t addr, int64_t n);
  // Drops the lines of [addr, addr + n) (a dirty line's bytes are lost).
  void Invalidate(int64_t addr, int64_t n);
  // Cache lines covering [addr, addr + n).
  int64_t Lines(int64_t addr, int64_t n) const;
  int64_t dirty_lines() const;

 private:
  struct Line {
    std::vector<uint8_t> bytes;
    bool dirty = false;
  };
  Line& Get(int64_t line_addr);  // fills from DRAM on a miss
  std::vector<uint8_t>* dram_;
  int64_t line_;
  bool coherent_;
  std::map<int64_t, Line> lines_;
};

}  // namespace edgec
