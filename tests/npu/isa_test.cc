// ISA: listing, binary round trip, corrupt input, structural validation.
#include <gtest/gtest.h>

#include <random>

#include "npu/isa.h"

namespace edgec::npu {
namespace {

Program SampleProgram() {
  Program p;
  p.cores_used = 2;
  p.semaphores = 3;
  p.dram_bytes = 1 << 20;
  p.task_names = {"conv1 (QLinearConv)"};
  p.regions = {{"input", 0, 4096}, {"weights", 4096, 9000}};
  p.dram_init = {1, 2, 3, 250};
  auto add = [&](Instr in) { p.instrs.push_back(in); };
  add({.op = Opcode::kTaskBegin, .sem = 0});
  Instr sig{.op = Opcode::kSignal, .core = 1, .queue = QueueKind::kExecute, .sem = 2};
  add(sig);
  Instr ld{.op = Opcode::kDmaLoad, .core = 1, .queue = QueueKind::kLoad};
  ld.dram_addr = 4096; ld.sram_addr = 128; ld.row_bytes = 3; ld.sram_row_bytes = 16; ld.pad = -7;
  ld.ndims = 2;
  ld.dims[0] = {.count = 5, .dram_stride = 672, .sram_stride = 80, .valid_lo = 1, .valid_hi = 5};
  ld.dims[1] = {.count = 5, .dram_stride = 3, .sram_stride = 16, .valid_lo = 0, .valid_hi = 4};
  add(ld);
  Instr mm{.op = Opcode::kMatMul, .core = 1, .queue = QueueKind::kExecute};
  mm.a_addr = 128; mm.b_addr = 4096; mm.acc_addr = 0; mm.m = 25; mm.k = 16; mm.n = 32;
  mm.a_stride = 16; mm.b_stride = 32; mm.acc_stride = 128; mm.accumulate = true;
  add(mm);
  Instr v{.op = Opcode::kVec, .core = 0, .queue = QueueKind::kVector};
  v.vec = VecOp::kRequantize; v.src = 0; v.dst = 9000; v.params = 12000; v.rows = 25; v.cols = 32;
  v.imm[0] = -3; v.imm[1] = -128; v.imm[2] = 127;
  add(v);
  Instr st{.op = Opcode::kDmaStore, .core = 0, .queue = QueueKind::kStore};
  st.dram_addr = 123456789012LL; st.sram_addr = 9000; st.row_bytes = 32; st.ndims = 1;
  st.dims[0] = {.count = 25, .dram_stride = 64, .sram_stride = 32, .valid_lo = 0, .valid_hi = 25};
  add(st);
  add({.op = Opcode::kWait, .core = 1, .queue = QueueKind::kLoad, .sem = 2});
  // A token on both cores' semaphore 1, and a WAIT for two tokens.
  add({.op = Opcode::kSignal, .core = 0, .queue = QueueKind::kLoad, .sem = 1, .to_core = 0, .count = 2});
  add({.op = Opcode::kWait, .core = 1, .queue = QueueKind::kExecute, .sem = 1, .count = 2});
  add({.op = Opcode::kTaskEnd, .sem = 0});
  return p;
}

TEST(IsaTest, BinaryRoundTrip) {
  const Program p = SampleProgram();
  const std::vector<uint8_t> bytes = EncodeProgram(p);
  auto q = DecodeProgram(bytes);
  ASSERT_TRUE(q.ok()) << q.status().ToString();
  EXPECT_EQ(q->instrs, p.instrs);
  EXPECT_EQ(q->task_names, p.task_names);
  EXPECT_EQ(q->dram_init, p.dram_init);
  EXPECT_EQ(q->dram_bytes, p.dram_bytes);
  EXPECT_EQ(q->semaphores, 3);
  ASSERT_EQ(q->regions.size(), 2u);
  EXPECT_EQ(q->regions[1].name, "weights");
  EXPECT_EQ(q->regions[1].bytes, 9000);
  EXPECT_EQ(EncodeProgram(*q), bytes);
  // Compact: a few bytes per instruction, not sizeof(Instr).
  EXPECT_LT(bytes.size(), p.instrs.size() * 64);
  // A changed field shows up as inequality.
  Program r = *q;
  r.instrs[3].k = 17;
  EXPECT_FALSE(r.instrs == p.instrs);
  r = *q;
  r.instrs[7].count = 3;
  EXPECT_FALSE(r.instrs == p.instrs);
}

TEST(IsaTest, CorruptBinaryIsAnErrorNotACrash) {
  const std::vector<uint8_t> bytes = EncodeProgram(SampleProgram());
  std::mt19937 rng(7);
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    std::vector<uint8_t> b(bytes.begin(), bytes.begin() + cut);
    EXPECT_FALSE(DecodeProgram(b).ok()) << cut;
  }
  for (int i = 0; i < 200; ++i) {
    std::vector<uint8_t> b = bytes;
    b[rng() % b.size()] ^= static_cast<uint8_t>(1 + rng() % 255);
    (void)DecodeProgram(b);  // may decode or fail; must not crash
  }
}

TEST(IsaTest, ListingIsReadable) {
  const std::string s = FormatProgram(SampleProgram());
  EXPECT_NE(s.find("; task 0: conv1 (QLinearConv)"), std::string::npos) << s;
  EXPECT_NE(s.find("DMA_LD"), std::string::npos);
  EXPECT_NE(s.find("valid 1..5"), std::string::npos) << s;
  EXPECT_NE(s.find("padded to 16B"), std::string::npos);
  EXPECT_NE(s.find("MATMUL"), std::string::npos);
  EXPECT_NE(s.find("+= a 0x80 [25x16]"), std::string::npos) << s;
  EXPECT_NE(s.find("requantize"), std::string::npos);
  EXPECT_NE(s.find("SIGNAL"), std::string::npos);
  EXPECT_NE(s.find("sem 1 on cores 0..1"), std::string::npos) << s;
  EXPECT_NE(s.find("sem 1 x2"), std::string::npos) << s;
}

TEST(IsaTest, Validation) {
  Program p = SampleProgram();
  EXPECT_TRUE(ValidateProgram(p, 2).ok());
  EXPECT_NE(ValidateProgram(p, 1).message().find("core 1 but the target has 1"), std::string::npos);
  Program q = p;
  q.instrs[3].queue = QueueKind::kLoad;
  EXPECT_NE(ValidateProgram(q, 2).message().find("MATMUL belongs on the exec queue"), std::string::npos);
  // A DMA_LD may ride the prefetch queue (a segment's weight stream), nothing else may.
  q = p;
  q.instrs[2].queue = QueueKind::kPrefetch;
  EXPECT_TRUE(ValidateProgram(q, 2).ok());
  EXPECT_NE(FormatInstr(q.instrs[2]).find("prefetch DMA_LD"), std::string::npos) << FormatInstr(q.instrs[2]);
  q = p;
  q.instrs[3].queue = QueueKind::kPrefetch;
  EXPECT_NE(ValidateProgram(q, 2).message().find("MATMUL belongs on the exec queue"), std::string::npos);
  q = p;
  q.instrs.pop_back();
  EXPECT_FALSE(ValidateProgram(q, 2).ok());
  q = p;
  q.instrs[1].sem = 9;
  EXPECT_NE(ValidateProgram(q, 2).message().find("semaphore 9"), std::string::npos);
  q = p;
  q.instrs[7].to_core = 1;
  EXPECT_NE(ValidateProgram(q, 2).message().find("signals cores 1..2 but the target has 2"), std::string::npos);
  q = p;
  q.instrs[8].count = 0;
  EXPECT_NE(ValidateProgram(q, 2).message().find("token count 0"), std::string::npos);
}

TEST(IsaTest, DmaBytesSkipPaddedRows) {
  const Program p = SampleProgram();
  // 4 valid rows x 4 valid columns x 3 bytes.
  EXPECT_EQ(p.instrs[2].dma_bytes(), 4 * 4 * 3);
  EXPECT_EQ(p.instrs[3].macs(), 25 * 16 * 32);
}

}  // namespace
}  // namespace edgec::npu
