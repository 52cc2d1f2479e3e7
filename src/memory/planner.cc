#include "memory/planner.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

namespace edgec::memory {

int64_t LowerBound(std::span<const BufferRequest> buffers) {
  // Sweep over steps: a buffer adds its bytes at first_use and removes them after
  // last_use. At equal steps removals (keyed last_use + 1) come before additions.
  struct Event {
    int64_t step;
    int64_t delta;
  };
  std::vector<Event> events;
  events.reserve(buffers.size() * 2);
  for (const BufferRequest& b : buffers) {
    int64_t bytes = AlignUp(b.bytes);
    events.push_back({b.first_use, bytes});
    events.push_back({static_cast<int64_t>(b.last_use) + 1, -bytes});
  }
  std::sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return a.step != b.step ? a.step < b.step : a.delta < b.delta;
  });
  int64_t live = 0, peak = 0;
  for (const Event& e : events) {
    live += e.delta;
    peak = std::max(peak, live);
  }
  return peak;
}

// --- MemoryPlanner: bookkeeping shared by every planner ---

int MemoryPlanner::AddBuffer(int64_t bytes, int first_use, int last_use) {
  if (bytes < 0 || first_use > last_use) return -1;
  buffers_.push_back({AlignUp(bytes), first_use, last_use});
  planned_ = false;
  return static_cast<int>(buffers_.size()) - 1;
}

int64_t MemoryPlanner::GetOffset(int id) {
  if (id < 0 || id >= static_cast<int>(buffers_.size())) return -1;
  PlanIfNeeded();
  return offsets_[id];
}

int64_t MemoryPlanner::GetArenaSize() {
  PlanIfNeeded();
  return arena_size_;
}

void MemoryPlanner::PlanIfNeeded() {
  if (planned_) return;
  offsets_ = Place(buffers_);
  arena_size_ = 0;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    arena_size_ = std::max(arena_size_, offsets_[i] + buffers_[i].bytes);
  }
  planned_ = true;
}

// --- LinearPlanner ---

std::vector<int64_t> LinearPlanner::Place(std::span<const BufferRequest> buffers) const {
  std::vector<int64_t> offsets(buffers.size());
  int64_t end = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    offsets[i] = end;
    end += buffers[i].bytes;
  }
  return offsets;
}

// --- GreedyBySizePlanner ---

namespace {

enum class Fit { kFirst, kBest };

// Places buffers one by one in `order`. Each goes into a gap between the already-placed
// buffers that are live at the same time: the lowest one that fits (first fit) or the
// smallest one that fits (best fit); past the last of them when no gap fits.
std::vector<int64_t> PlaceInOrder(std::span<const BufferRequest> buffers,
                                  const std::vector<int>& order, Fit fit) {
  std::vector<int64_t> offsets(buffers.size(), 0);
  std::vector<int> placed;
  placed.reserve(buffers.size());
  std::vector<int> conflicts;
  for (int id : order) {
    const BufferRequest& b = buffers[id];
    conflicts.clear();
    for (int p : placed) {
      if (buffers[p].bytes > 0 && LiveRangesIntersect(b, buffers[p])) conflicts.push_back(p);
    }
    std::sort(conflicts.begin(), conflicts.end(),
              [&](int x, int y) { return offsets[x] < offsets[y]; });
    int64_t candidate = 0;
    int64_t best_offset = -1, best_gap = 0;
    for (int p : conflicts) {
      int64_t gap = offsets[p] - candidate;
      if (gap >= b.bytes) {
        if (fit == Fit::kFirst) {
          best_offset = candidate;
          break;
        }
        if (best_offset < 0 || gap < best_gap) {
          best_offset = candidate;
          best_gap = gap;
        }
      }
      candidate = std::max(candidate, offsets[p] + buffers[p].bytes);
    }
    offsets[id] = best_offset >= 0 ? best_offset : candidate;
    placed.push_back(id);
  }
  return offsets;
}

int64_t ArenaOf(std::span<const BufferRequest> buffers, const std::vector<int64_t>& offsets) {
  int64_t arena = 0;
  for (size_t i = 0; i < buffers.size(); ++i) arena = std::max(arena, offsets[i] + buffers[i].bytes);
  return arena;
}

using Before = std::function<bool(const BufferRequest&, const BufferRequest&)>;

std::vector<int> SortedOrder(std::span<const BufferRequest> buffers, const Before& before) {
  std::vector<int> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int x, int y) { return before(buffers[x], buffers[y]); });
  return order;
}

int64_t Lifetime(const BufferRequest& b) { return int64_t{b.last_use} - b.first_use + 1; }

// Randomized orders: largest first with each size scaled by a seeded factor in
// [0.5, 1.5), so buffers of similar size trade places. Enough tries for small graphs,
// a few for large ones (each try costs about n^2 steps).
int RandomTries(size_t n) {
  constexpr double kBudget = 2e8;
  double per_try = std::max<double>(1.0, static_cast<double>(n) * static_cast<double>(n));
  return static_cast<int>(std::clamp(kBudget / per_try, 4.0, 200.0));
}

std::vector<int> PerturbedSizeOrder(std::span<const BufferRequest> buffers, std::mt19937& rng) {
  std::vector<double> key(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) {
    double factor = 0.5 + static_cast<double>(rng() % 1000000) / 1000000.0;
    key[i] = static_cast<double>(buffers[i].bytes) * factor;
  }
  std::vector<int> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return key[x] > key[y]; });
  return order;
}

}  // namespace

std::vector<int64_t> GreedyBySizePlanner::Place(std::span<const BufferRequest> buffers) const {
  std::vector<Before> orders = {
      // largest first (the TFLite order); ties by id
      [](const BufferRequest& a, const BufferRequest& b) { return a.bytes > b.bytes; },
  };
  if (!only_tflite_order_) {
    // largest area in the (step, byte) plane first
    orders.push_back([](const BufferRequest& a, const BufferRequest& b) {
      return a.bytes * Lifetime(a) > b.bytes * Lifetime(b);
    });
    // longest-lived first, then largest
    orders.push_back([](const BufferRequest& a, const BufferRequest& b) {
      return Lifetime(a) != Lifetime(b) ? Lifetime(a) > Lifetime(b) : a.bytes > b.bytes;
    });
    // in execution order, then largest
    orders.push_back([](const BufferRequest& a, const BufferRequest& b) {
      return a.first_use != b.first_use ? a.first_use < b.first_use : a.bytes > b.bytes;
    });
  }
  std::vector<Fit> fits = {Fit::kFirst};
  if (!only_tflite_order_) fits.push_back(Fit::kBest);

  const int64_t bound = LowerBound(buffers);
  std::vector<int64_t> best;
  int64_t best_arena = -1;
  auto try_order = [&](const std::vector<int>& order) {
    for (Fit fit : fits) {
      if (best_arena == bound) return;  // cannot do better
      std::vector<int64_t> offsets = PlaceInOrder(buffers, order, fit);
      int64_t arena = ArenaOf(buffers, offsets);
      if (best_arena < 0 || arena < best_arena) {
        best_arena = arena;
        best = std::move(offsets);
      }
    }
  };
  for (const Before& before : orders) try_order(SortedOrder(buffers, before));
  if (!only_tflite_order_) {
    std::mt19937 rng(0x5eed);
    for (int t = RandomTries(buffers.size()); t > 0 && best_arena > bound; --t) {
      try_order(PerturbedSizeOrder(buffers, rng));
    }
  }
  return best;
}

}  // namespace edgec::memory
