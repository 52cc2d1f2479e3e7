// Offset assignment in one arena, behind the three calls of TensorFlow Lite Micro's planner:
// AddBuffer(bytes, first_use, last_use) -> id, GetOffset(id), GetArenaSize().
//
// A buffer is live over the closed step interval [first_use, last_use]. Two buffers whose
// live ranges intersect must not overlap in memory; buffers whose ranges are disjoint may.
// Every offset is a multiple of kArenaAlignment and every size is rounded up to it, so the
// arena size is a multiple of it too.
//
// Planners compute lazily: the plan is made on the first GetOffset/GetArenaSize after the
// last AddBuffer.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace edgec::memory {

constexpr int64_t kArenaAlignment = 64;

constexpr int64_t AlignUp(int64_t bytes, int64_t alignment = kArenaAlignment) {
  return (bytes + alignment - 1) / alignment * alignment;
}

struct BufferRequest {
  int64_t bytes = 0;  // as asked; planners align it
  int first_use = 0;
  int last_use = 0;
};

inline bool LiveRangesIntersect(const BufferRequest& a, const BufferRequest& b) {
  return a.first_use <= b.last_use && b.first_use <= a.last_use;
}

// The largest total of aligned bytes live at one step: no placement can use less.
int64_t LowerBound(std::span<const BufferRequest> buffers);

class MemoryPlanner {
 public:
  virtual ~MemoryPlanner() = default;
  virtual std::string_view name() const = 0;

  // Returns the buffer's id (0, 1, 2, ... in call order), or -1 when bytes < 0 or
  // first_use > last_use.
  int AddBuffer(int64_t bytes, int first_use, int last_use);
  // The buffer's offset in the arena; -1 for an unknown id.
  int64_t GetOffset(int id);
  int64_t GetArenaSize();

  const std::vector<BufferRequest>& buffers() const { return buffers_; }

 protected:
  // Fills offsets (one per buffer, aligned) for `buffers` (sizes already aligned).
  virtual std::vector<int64_t> Place(std::span<const BufferRequest> buffers) const = 0;

 private:
  void PlanIfNeeded();

  std::vector<BufferRequest> buffers_;  // sizes aligned
  std::vector<int64_t> offsets_;
  int64_t arena_size_ = 0;
  bool planned_ = true;
};

// The TFLite arena approach: buffers in decreasing size, each at the lowest offset where it
// overlaps no already-placed buffer whose live range intersects its own. Beyond that plain
// first-fit pass it tries other orders (by size x lifetime, by lifetime, by first use), a
// best-fit placement (the smallest gap that fits), then seeded random perturbations of the
// size order until one reaches the lower bound or a work budget runs out; it keeps the
// smallest arena. The plain TFLite pass is always a candidate, so the result is never
// worse than it, and the result is deterministic.
class GreedyBySizePlanner final : public MemoryPlanner {
 public:
  // `only_tflite_order`: just the classic pass (largest first, first fit), for tests and
  // comparison.
  explicit GreedyBySizePlanner(bool only_tflite_order = false)
      : only_tflite_order_(only_tflite_order) {}
  std::string_view name() const override { return "greedy-by-size"; }

 protected:
  std::vector<int64_t> Place(std::span<const BufferRequest> buffers) const override;

 private:
  bool only_tflite_order_;
};

// Each buffer right after the previous one, no reuse: the naive sum, for comparison.
class LinearPlanner final : public MemoryPlanner {
 public:
  std::string_view name() const override { return "linear"; }

 protected:
  std::vector<int64_t> Place(std::span<const BufferRequest> buffers) const override;
};

}  // namespace edgec::memory
