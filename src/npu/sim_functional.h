// Functional side of the simulator (internal): what one instruction computes. Begin reads the
// operands and computes the bytes to write; Commit writes them (at the instruction's end).
#pragma once

#include <cstdint>
#include <vector>

#include "support/status.h"
#include "npu/isa.h"

namespace edgec::npu {

enum class Space : uint8_t { kDram, kSram, kAcc };

struct Memories {
  std::vector<uint8_t>* dram = nullptr;
  std::vector<uint8_t> sram;
  std::vector<std::vector<uint8_t>> acc;  // per core
};

struct WriteChunk {
  int64_t addr;
  std::vector<uint8_t> bytes;
};
struct Effect {
  Space space = Space::kSram;
  int core = 0;
  std::vector<WriteChunk> chunks;
};

StatusOr<Effect> BeginInstr(const Instr& in, const Memories& mem);
void CommitEffect(const Effect& e, Memories& mem);

}  // namespace edgec::npu
