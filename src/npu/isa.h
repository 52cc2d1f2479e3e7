// The NPU instruction stream: what lowering produces and the simulator executes.
//
// Each AI core has five in-order queues: load (DMA_LD), execute (MATMUL), vector (VEC, COPY),
// store (DMA_ST) and prefetch (DMA_LD of a segment's weight prefetch, beside the layers' loads). Queues synchronize only through tokens: SIGNAL adds one token to a
// semaphore of its own core, or to the same semaphore of each core in a range (cores that
// share data in the SRAM); WAIT takes `count` tokens from its own core's semaphore, blocking
// until there are that many. Double buffering is a
// semaphore that starts with two tokens (two SIGNALs issued up front), single buffering one;
// the simulator has no special case for either.
//
// A program is a list of tasks; a task is what the hardware task queue dispatches
// (TASK_BEGIN ... TASK_END) and costs the target's dispatch overhead. Tasks run one after the
// other; inside a task the cores run in parallel.
//
// Memories: DRAM (byte addresses into the program's DRAM image), shared SRAM (byte addresses),
// and each core's accumulator memory (int32, byte addresses). Matrices in SRAM are row-major
// with an explicit row stride in bytes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"

namespace edgec::npu {

enum class Opcode : uint8_t {
  kDmaLoad, kDmaStore, kMatMul, kVec, kCopy, kSignal, kWait, kTaskBegin, kTaskEnd,
};

// Address arithmetic of the lowerings and the simulator.
inline constexpr int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline constexpr int64_t AlignUp(int64_t v, int64_t a) { return CeilDiv(v, a) * a; }

// Per core, five in-order queues. kPrefetch carries a segment's weight prefetch (DRAM -> weight
// slot), apart from the layers' own loads, so that a chunk never waits behind a load blocked on
// its producer, nor a load behind a chunk (segment.h).
enum class QueueKind : uint8_t { kLoad, kExecute, kVector, kStore, kPrefetch };
constexpr int kNumQueues = 5;

enum class VecOp : uint8_t {
  // dst_i8[r][c] = clamp(zp + Requantize(acc[r][c] + bias[c], mult[c], shift[c]), lo, hi):
  // src is an accumulator tile, params (bias, mult, shift as int32[cols] each) in SRAM;
  // imm = zp, lo, hi, and imm[kRequantBytesImm] = 2 writes int16 (2-byte elements, dst_stride
  // in bytes, zp/lo/hi in int16 terms; timed at the i16 rate).
  kRequantize,
  // Quantized add (TFLite's scheme), imm = za, zb, zo, ma, sa, mb, sb, mo, so, lo, hi:
  //   s = Mul((a - za) << L, ma, sa) + Mul((b - zb) << L, mb, sb)
  //   dst = clamp(zo + Mul(s, mo, so), lo, hi)     (Mul = MultiplyByQuantizedMultiplier)
  // L = imm[kAddShiftImm] (0: quant::kAddLeftShift); int16 operands or result have element
  // bytes imm[kAddBytesImm..+2] = a, b, dst (0 or 1: int8; 2: int16, timed at the i16 rate).
  kAdd,
  kRelu,     // dst = max(src, imm[0] (the zero point))
  // Pools over an HWC tile of in_h x in_w pixels (pixel p at src + p * src_stride, `cols`
  // channels), window win_h x win_w, strides stride_h/w, dilations at imm[kWindowDilationImm]
  // (WindowDilation), no padding (padding is done by the load); output pixels at
  // dst + q * dst_stride.
  kMaxPool,
  // imm = zi, zo, mult, shift, lo, hi: dst = Requantize(sum(v - zi), mult, shift, zo, lo, hi).
  // With imm[kPoolPixelMultImm] = 1 each output pixel q of the instruction (row-major over
  // its output rows x columns) has its own: params = int32 mult[q], then int32 shift[q]
  // (PoolPixelParamsBytes); a divisor per window, the border's and ceil_mode's own.
  kAvgPool,
  // Depthwise convolution over a pool-shaped tile (one MAC per lane per window position):
  // params = weights int8 [win_h * win_w][cols], then at params + DwParamsOffset(...) int32
  // bias[cols], mult[cols], shift[cols]; imm = zi, zo, lo, hi:
  //   dst[q][c] = clamp(zo + Requantize(sum_window (v - zi) * w[window][c] + bias[c], mult[c], shift[c]), lo, hi)
  kDwConv,
  // Quantized multiply, imm = za, zb, zo, mult, shift, lo, hi (quant::QuantizedMul):
  //   dst = clamp(zo + Mul((a - za) * (b - zb), mult, shift), lo, hi)
  // An int16 side has element bytes 2 at imm[kAddBytesImm..+2] = a, b, dst as for kAdd (at
  // most one operand: the product of two int16 differences passes int32), timed at the i16 rate.
  kMul,
  // Table lookup: dst = table[src + 128], the 256-byte table at params (SRAM); with
  // imm[kLutBytesImm] = 2 the source is int16 (2 bytes, strides in bytes) and dst =
  // table[src + 32768] of 65536 bytes, timed at the i16 rate. With imm[kLutPerColumnImm] = 1
  // each column has its own 256-byte table (see kLutPerColumnImm), timed as one table.
  kLut,
  // Integer normalization (quant/int_norm.h), imm = zx, zy, lo, hi, per_row: the groups are the
  // rows (per_row = 1) or the whole rows x cols tile (0); column c is channel c of params =
  // int64 E, then int32 M[cols], e[cols], B[cols] (NormParamsBytes); count n = the group's size.
  kNorm,
  // Integer softmax of each row (quant/int_norm.h), imm = M, e, zy, lo, hi (1/y_scale ≈ M·2^(e−31)),
  // the exp table int32[256] at params.
  kSoftmax,
  // Integer resize (quant/int_resize.h) of an HWC band of in_h rows x in_w pixels x cols
  // channels at src (row pitch src_stride) to `rows` output rows of win_w pixels at dst (row
  // pitch dst_stride). params = the layer's row taps int32 [out_h][3] (lo, hi, w), src2 = its
  // column taps int32 [win_w][3]; imm = first output row of the tile (its index in the row
  // taps), first input row of the band (subtracted from lo and hi). Timed as 4 dwconv MACs
  // per output value (the four taps' weighted sum on the lanes).
  kResize,
  // The model's float boundary, per tensor (imm = scale as float bits, zero point, lo, hi in
  // the NPU's i8 terms): kQuantize reads f32 elements (4 bytes, strides in bytes) and writes
  // dst_i8 = clamp(round_half_even(x / scale) + zp, lo, hi), QuantizeLinear's formula in f32;
  // kDequantize reads i8 and writes f32 (x - zp) * scale. Timed at the vector cores' f32 rate
  // (vector_cores.dtype_rates); a target without one has no such layer. imm[kPitchImm] > 1 is
  // the i8 side's column pitch in bytes (its row stride is the row's): element c of row r of the
  // i8 side at dst (kQuantize) or src (kDequantize) + r * stride + c * pitch, so a row of a
  // planar f32 NCHW tile (one channel) lands in an interleaved NHWC tile (rows = channels).
  kQuantize,
  kDequantize,
  // Requantize between element widths (quant/rescale.h), imm = zi, zo, mult, shift, lo, hi,
  // bytes of an src element, bytes of a dst element (1 or 2; int16 values are 2 bytes, strides
  // in bytes): dst = clamp(zo + Mul((src - zi) << 15, mult, shift), lo, hi). Timed at the
  // i16 rate when either side is 2 bytes.
  kRescale,
  // The index of each row's largest value (imm[0] = 1: its smallest) among `cols` int8 values at
  // src + r * src_stride, the first such (imm[1] = 1: the last) on ties, written as an int64 at
  // dst + r * dst_stride: ONNX ArgMax / ArgMin, whose indices are int64. Timed as a max pool
  // (one compare per element).
  kArgMax,
};
// Bytes of one resize tap (lo, hi, w as int32).
inline constexpr int64_t kResizeTapBytes = 12;
// The binary ops (kAdd, kMul) read b at src2 + r * src2_stride + c, or, with
// imm[kBroadcastImm] = 1, the one byte at src2 + r * src2_stride for every c (a scalar b).
// A per-channel b (the same row for every row of a) is src2_stride = 0.
inline constexpr int kBroadcastImm = 11;
// kRequantize: bytes of a destination element (0 or 1: int8; 2: int16).
inline constexpr int kRequantBytesImm = 3;
// kDequantize: bytes of a source element (0 or 1: int8; 2: an int16 model output, dense rows
// or, with kPitchImm, interleaved NHWC int16: stride and pitch in bytes).
inline constexpr int kDequantBytesImm = 5;
// kLut: bytes of a source element (0 or 1: int8; 2: int16, a 65536-entry table).
inline constexpr int kLutBytesImm = 0;
// kLut: 1 = a table per column (a per-channel lookup: ops.def QuantizedLookup with a Table
// [C, 256]): column c of every row reads the 256 bytes at params + 256 * c (int8 sources only).
inline constexpr int kLutPerColumnImm = 1;
// kAdd, kMul: element bytes of a, b and dst at kAddBytesImm, +1, +2; kAdd: the lift's left shift.
inline constexpr int kAddBytesImm = 12;
inline constexpr int kAddShiftImm = 15;
// kQuantize / kDequantize: the i8 side's column pitch (0 or 1: dense). COPY with
// imm[kPitchImm] > 1 writes element c of row r at dst + r * dst_stride + c * pitch: a byte
// transpose in SRAM (rows x cols -> cols x rows with dst_stride 1, pitch rows), timed as a copy.
inline constexpr int kPitchImm = 4;
// kAvgPool: 1 = a multiplier and shift per output pixel at params (see kAvgPool).
inline constexpr int kPoolPixelMultImm = 6;
// kMaxPool: 1 = the window's minimum instead of its maximum (ReduceMin).
inline constexpr int kPoolMinImm = 10;
inline int64_t PoolPixelParamsBytes(int64_t pixels) { return 8 * pixels; }
// Window ops (kMaxPool, kAvgPool, kDwConv): the dilation along H at imm[kWindowDilationImm]
// and along W at the next (0 or 1: a dense window). Window position (i, j) of output pixel
// (y, x) reads tile pixel (y * stride_h + i * dil_h, x * stride_w + j * dil_w): the window
// spans WindowExtent = (win - 1) * dil + 1 tile pixels (sim_test.cc DilatedDwConv*).
inline constexpr int kWindowDilationImm = 8;
inline int32_t WindowDilation(const int32_t* imm, int axis) {
  const int32_t d = imm[kWindowDilationImm + axis];
  return d > 1 ? d : 1;
}
inline int64_t WindowExtent(int32_t win, int32_t dilation) { return int64_t{win - 1} * dilation + 1; }
// kDwConv: the channel multiplier at imm[kDwMultiplierImm] (0 or 1: none). With m > 1 the
// source tile has cols / m channels (pixel pitch src_stride) and output column c reads source
// column c / m: a depthwise conv with m filters per input channel (sim_test.cc's dilated
// depthwise tests, NpuDilatedDepthwiseTest.ChannelMultiplier*).
inline constexpr int kDwMultiplierImm = 7;
inline int32_t DwMultiplier(const int32_t* imm) { return imm[kDwMultiplierImm] > 1 ? imm[kDwMultiplierImm] : 1; }
// Byte offset of the int32 parameters after a depthwise tile's weights (4-byte aligned).
inline int64_t DwParamsOffset(int64_t window, int64_t cols) { return (window * cols + 3) / 4 * 4; }
// Bytes of a VEC norm's parameter block for `cols` channels (8-byte aligned), and of the softmax's.
inline int64_t NormParamsBytes(int64_t cols) { return (8 + 12 * cols + 7) / 8 * 8; }
inline constexpr int64_t kSoftmaxParamsBytes = 4 * 256;
// VEC norm / softmax with imm[kWideImm] = 1: int16 elements (2 bytes each; cols counts elements,
// strides are bytes), the arithmetic of quant/int16_norm.h, timed at the target's i16 rate
// (vector_cores.dtype_rates). Parameters: a norm's block is int128 E, then int32 M[cols],
// e[cols], int64 B[cols] (WideNormParamsBytes); a softmax's the tables int32 H[256], L[256].
inline constexpr int kWideImm = 10;
inline int64_t WideNormParamsBytes(int64_t cols) { return 16 + 16 * cols; }
inline constexpr int64_t kWideSoftmaxParamsBytes = 2 * 4 * 256;
const char* OpcodeName(Opcode op);
const char* QueueName(QueueKind q);
const char* VecOpName(VecOp op);  // target's cycles_per_element keys

inline constexpr int kMaxDmaDims = 3;
// Instr::region of an on-chip DMA whose far side is the layer's own working SRAM.
inline constexpr int16_t kLocalSramRegion = -2;

// One strided dimension of a DMA transfer: `count` rows at `dram_stride` / `sram_stride`
// bytes apart. Rows whose index is outside [valid_lo, valid_hi) are not read from DRAM; on a
// load they are filled with the pad byte (padding on load).
struct DmaDim {
  int32_t count = 1;
  int64_t dram_stride = 0;
  int64_t sram_stride = 0;
  int32_t valid_lo = 0;
  int32_t valid_hi = 1;
};

struct Instr {
  Opcode op = Opcode::kTaskEnd;
  uint8_t core = 0;
  QueueKind queue = QueueKind::kLoad;

  // DMA_LD / DMA_ST: up to kMaxDmaDims strided dims (outer first) around a contiguous row
  // (a target's dma.max_dims counts the row too).
  int64_t dram_addr = 0;
  int64_t sram_addr = 0;
  int32_t row_bytes = 0;       // bytes moved per row
  int32_t sram_row_bytes = 0;  // >= row_bytes on load: the rest is filled with pad (alignment)
  int8_t pad = 0;
  uint8_t ndims = 0;
  DmaDim dims[3] = {};
  // The far side is the shared SRAM too (dram_addr is an SRAM address): an on-chip copy
  // between a tensor kept in SRAM by a segment's residency plan and a layer's working tile.
  // It moves no DRAM byte; it costs setup + bytes / shared_sram.bandwidth_bytes_per_cycle.
  bool on_chip = false;
  // DMA_LD gather (one strided dim): row i comes from dram_addr + idx * dims[0].dram_stride,
  // idx the int64 at SRAM index_addr + 8 i (an index list the layer loaded or computed; a
  // negative idx counts from dims[0].valid_hi, the table's rows; outside them is an error).
  // Each row is timed as any DMA row: its DRAM bursts.
  bool gather = false;
  int64_t index_addr = 0;
  // Lowering only (not encoded): the index in Program::regions of the region the DMA's
  // dram_addr points into (its rows may reach outside it into the padding), -1 for none,
  // kLocalSramRegion for an on-chip copy between two of the layer's own SRAM tiles. The
  // segment assembler (segment.h) relocates each DMA by its region's final location.
  int16_t region = -1;

  // MATMUL: acc[m][n] (+)= (a[m][k] - a_zero) * (b[k][n] - b_zero); int8 operands in SRAM,
  // int32 acc. The PEs subtract the operand zero points (9-bit products): a MatMul of two
  // activations (attention's QKᵀ and AV) has no constant operand to fold them into the bias.
  // VEC/COPY: src/src2/dst addresses (src is the core's accumulators for kRequantize,
  // SRAM otherwise), rows x cols elements with row strides in bytes. COPY moves bytes.
  int64_t a_addr = 0, b_addr = 0, acc_addr = 0;
  int32_t m = 0, k = 0, n = 0;
  int32_t a_stride = 0, b_stride = 0, acc_stride = 0;  // row strides (bytes)
  bool accumulate = false;
  int32_t a_zero = 0, b_zero = 0;  // MATMUL operand zero points (0 for a conv: folded into its bias)
  bool fp16 = false;  // fp16 operands (timing at the target's fp16 rate; no functional model)
  // MATMUL: b is stored transposed, b[k][n] at b_addr + n * b_stride + k (rows of k values:
  // attention's Kᵀ read from K as it is; the weight path transposes on the way into the array).
  bool b_trans = false;

  VecOp vec = VecOp::kRelu;
  int64_t src = 0, src2 = 0, dst = 0, params = 0;
  int32_t src_stride = 0, src2_stride = 0, dst_stride = 0;
  int32_t rows = 0, cols = 0;
  int32_t imm[16] = {};
  // Pool: input tile [in_h][in_w][cols] at src (row = one pixel of cols bytes), window and stride.
  int32_t in_h = 0, in_w = 0, win_h = 0, win_w = 0, stride_h = 0, stride_w = 0;

  // The layer of a segment program this instruction belongs to (index in
  // Program::layer_names; per-layer statistics), 0 in a one-layer program.
  int32_t layer = 0;

  // SIGNAL / WAIT: semaphore of this core. TASK_BEGIN: task index.
  int32_t sem = 0;
  // SIGNAL: cores [to_core, to_core + count) each get a token on `sem` (to_core -1: this core,
  // count 1). WAIT: the tokens it takes.
  int32_t to_core = -1;
  int32_t count = 1;

  int64_t dma_bytes() const;  // bytes moved (not counting padding)
  int64_t macs() const { return op == Opcode::kMatMul ? int64_t{m} * k * n : 0; }
  bool operator==(const Instr& o) const;
};

// A named region of the DRAM image (an input, output, weights, parameters).
struct DramRegion {
  std::string name;
  int64_t addr = 0;
  int64_t bytes = 0;
};

struct Program {
  std::vector<Instr> instrs;                // in program order, tasks bracketed
  std::vector<std::string> task_names;      // one per TASK_BEGIN, e.g. "conv1 (QLinearConv)"
  std::vector<std::string> layer_names;     // a segment's layers (Instr::layer), may be empty
  std::vector<DramRegion> regions;
  int64_t dram_bytes = 0;                   // size of the DRAM image
  std::vector<uint8_t> dram_init;           // constant contents (weights, params); may be shorter
  int cores_used = 1;
  // Initial tokens are explicit SIGNALs; `semaphores` is the count per core (for the simulator).
  int semaphores = 0;
};

// Human-readable listing, one instruction a line:
//   core 3 load   DMA_LD  dram 0x1000 -> sram 0x400 rows 16x64B (dram stride 576) pad 0
std::string FormatInstr(const Instr& in);
std::string FormatProgram(const Program& p);

// Compact binary form (varints, per-opcode fields): Decode(Encode(p)) == p.
std::vector<uint8_t> EncodeProgram(const Program& p);
StatusOr<Program> DecodeProgram(const std::vector<uint8_t>& bytes);

// Structural checks before simulation: queues match opcodes, cores in range, tasks bracketed.
Status ValidateProgram(const Program& p, int num_cores);

}  // namespace edgec::npu
