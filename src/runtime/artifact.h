// The compiled model file (`.edgec`): what `edgec compile` writes and `edgec run` loads.
// The format is the FlatBuffers schema src/runtime/artifact.fbs; this header is the one way
// in and out of it, so no other file depends on the generated code.
//
// CompiledModel is the in-memory form (owning vectors). WriteArtifact serializes it; a
// MappedArtifact maps a file read-only (mmap), verifies it (the CRC-32 trailer over the whole
// buffer, every offset and length checked by flatbuffers::Verifier, the file identifier, the
// format version) and gives views into
// it without copying: the weights of the graph and of the NPU DRAM images are read where
// they lie in the file.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "support/status.h"

namespace edgec::artifact_io {

constexpr uint32_t kFormatVersion = 4;  // 2: one program per NPU segment, SRAM plan, hand-over steps
                                        // 3: the graph as edgec's own (graph_ir), no ONNX inside
                                        // 4: MATMUL carries operand zero points (npu/isa.h)
constexpr uint32_t kOldestFormatVersion = 4;  // older programs encode MATMUL without them

enum class Unit : uint8_t { kCpu = 0, kNpu = 1 };
const char* UnitName(Unit u);  // "cpu" / "npu"

struct Region {
  std::string name;
  int64_t addr = 0, bytes = 0;
};

struct NpuProgramData {
  std::vector<uint8_t> instructions;  // the ISA's binary encoding
  std::vector<std::string> task_names;
  std::vector<Region> regions;
  int64_t dram_bytes = 0;
  std::vector<uint8_t> dram_init;
  int cores_used = 1;
  int semaphores = 0;
};

struct LayerSram {
  std::string layer;
  int64_t work_addr = 0, work_bytes = 0, occupancy = 0;
  bool prefetch = false;
  int64_t resident_weight_bytes = 0;  // kept in SRAM between calls (the program's first task loads it)
};

struct TensorSram {
  std::string value;
  bool in_sram = false;
  int64_t addr = 0, bytes = 0;
  int first = -1, last = -1;
  std::string reason;
};

enum class HandOverKind : uint8_t { kFlush = 0, kInvalidate = 1, kBarrier = 2 };
const char* HandOverName(HandOverKind k);  // "flush", "invalidate", "barrier"

struct HandOver {
  HandOverKind kind = HandOverKind::kBarrier;
  std::string value;  // flush / invalidate: the value whose cache lines it cleans or drops
  int64_t bytes = 0;
  double cycles = 0;
  bool after = false;  // false: before the segment runs, true: after it
};

struct Segment {
  Unit unit = Unit::kCpu;
  std::vector<std::string> nodes, inputs, outputs;
  NpuProgramData npu;  // unit == kNpu
  std::vector<LayerSram> layer_plan;   // unit == kNpu: the SRAM plan (npu/sram_plan.h)
  std::vector<TensorSram> sram_plan;
  std::vector<HandOver> hand_over;     // unit == kNpu: cache maintenance steps, in order
};

struct Placement {
  std::string node;
  Unit unit = Unit::kCpu;
  std::string reason;
  std::string code;  // partition::ReasonCodeName; "" in files written before it was stored
};

struct ValuePlacement {
  std::string value;
  int64_t offset = 0, bytes = 0;
};

struct CompiledModel {
  std::string producer = "edgec";
  std::string source_model;
  std::string target_json;
  std::vector<uint8_t> graph_onnx;  // format 2
  std::vector<uint8_t> graph_ir;    // format 3: runtime/graph_io.h
  std::vector<Segment> segments;
  std::vector<Placement> placements;
  int64_t arena_bytes = 0;
  std::vector<ValuePlacement> values;
};

// Writes `m` to `path` (through a temporary file renamed into place, so a failed write
// leaves an existing file as it was).
Status WriteArtifact(const std::string& path, const CompiledModel& m);

// A verified, read-only mapping of a `.edgec` file.
class MappedArtifact {
 public:
  static StatusOr<std::unique_ptr<MappedArtifact>> Open(const std::string& path);
  ~MappedArtifact();
  MappedArtifact(const MappedArtifact&) = delete;
  MappedArtifact& operator=(const MappedArtifact&) = delete;

  const std::string& path() const { return path_; }
  size_t file_bytes() const { return size_; }
  // The graph's ONNX bytes, in the mapping.
  std::span<const uint8_t> graph_onnx() const;  // empty in a format-3 file
  std::span<const uint8_t> graph_ir() const;    // empty in a format-2 file
  // Everything else, copied out (small next to the weights; the NPU DRAM images are views).
  CompiledModel Metadata() const;
  // The constant DRAM image of NPU segment `i` (segment index among all segments), in the mapping.
  std::span<const uint8_t> npu_dram_init(size_t segment) const;

 private:
  MappedArtifact() = default;
  std::string path_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  int fd_ = -1;
};

}  // namespace edgec::artifact_io
