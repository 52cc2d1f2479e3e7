#include "support/limits.h"

#include <atomic>

namespace edgec {

namespace {

// Each cap is its own atomic: sessions on other threads read them while a program may set
// them (tests/api/concurrency_test.cc runs under the thread sanitizer).
std::atomic<int64_t> g_model_bytes{Limits{}.model_bytes};
std::atomic<int64_t> g_tensor_bytes{Limits{}.tensor_bytes};
std::atomic<int64_t> g_nodes{Limits{}.nodes};
std::atomic<int64_t> g_arena_bytes{Limits{}.arena_bytes};

std::string Bytes(int64_t b) {
  if (b >= (int64_t{1} << 30)) return fmt::format("{} bytes ({:.1f} GiB)", b, b / double(int64_t{1} << 30));
  if (b >= (int64_t{1} << 20)) return fmt::format("{} bytes ({:.1f} MiB)", b, b / double(int64_t{1} << 20));
  return fmt::format("{} bytes", b);
}

}  // namespace

const Limits& CurrentLimits() {
  thread_local Limits l;
  l.model_bytes = g_model_bytes.load(std::memory_order_relaxed);
  l.tensor_bytes = g_tensor_bytes.load(std::memory_order_relaxed);
  l.nodes = g_nodes.load(std::memory_order_relaxed);
  l.arena_bytes = g_arena_bytes.load(std::memory_order_relaxed);
  return l;
}

void SetLimits(const Limits& limits) {
  g_model_bytes.store(limits.model_bytes, std::memory_order_relaxed);
  g_tensor_bytes.store(limits.tensor_bytes, std::memory_order_relaxed);
  g_nodes.store(limits.nodes, std::memory_order_relaxed);
  g_arena_bytes.store(limits.arena_bytes, std::memory_order_relaxed);
}

Status CheckModelBytes(int64_t bytes, const std::string& what) {
  const int64_t cap = g_model_bytes.load(std::memory_order_relaxed);
  if (bytes <= cap) return Status::Ok();
  return InvalidArgument("{}: file is {}, over the model size limit of {} (--max-model-bytes)", what,
                         Bytes(bytes), Bytes(cap));
}

Status CheckTensorBytes(int64_t bytes, const std::string& what) {
  const int64_t cap = g_tensor_bytes.load(std::memory_order_relaxed);
  if (bytes <= cap) return Status::Ok();
  return InvalidArgument("{} would need {}, over the tensor size limit of {} (--max-tensor-bytes)", what,
                         Bytes(bytes), Bytes(cap));
}

Status CheckNodeCount(int64_t nodes, const std::string& what) {
  const int64_t cap = g_nodes.load(std::memory_order_relaxed);
  if (nodes <= cap) return Status::Ok();
  return InvalidArgument("{}: graph has {} nodes, over the limit of {} (--max-nodes)", what, nodes, cap);
}

Status CheckArenaBytes(int64_t bytes, const std::string& what, const std::string& detail) {
  const int64_t cap = g_arena_bytes.load(std::memory_order_relaxed);
  if (bytes <= cap) return Status::Ok();
  return InvalidArgument("{} needs an arena of {}{}, over the arena limit of {} (--max-arena-bytes)", what,
                         Bytes(bytes), detail.empty() ? "" : " (" + detail + ")", Bytes(cap));
}

}  // namespace edgec
