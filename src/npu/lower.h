// Lowering of one layer to an NPU program, for a given tiling.
//
// GEMM-class layers (QLinearConv, QLinearMatMul, Gemm) use the implicit-GEMM view, no im2col
// buffer: output pixels are the M dimension, (kh, kw, c) the K dimension, output channels N.
// Tensors in DRAM are NHWC; weights are HWIO (a K x N matrix). For each K step the input
// tile is gathered by strided DMA straight from the NHWC tensor, one DMA per kernel position,
// with out-of-image rows filled with the input zero point (padding on load). The MAC array
// computes sum(x * w); the zero-point term -x_zp * sum(w) is folded into the bias, which is
// exact because padded positions hold x_zp. A VEC requantize applies bias, the per-channel
// fixed-point multiplier, the output zero point and the fused activation's clamp.
//
// A MatMul [M, K] x [K, N] is the conv with IH = M, IW = 1, C = K, OC = N, a 1x1 kernel.
//
// A grouped conv (ConvLayer::group G > 1, ONNX semantics: G divides C and OC) is the conv
// whose K x N weight matrix is block-diagonal; only its diagonal blocks are stored, as one
// dense matrix [kh][kw][C/G][OC] (K = kh * kw * C/G rows, column oc in group oc / (OC/G)).
// An N tile never straddles a group (Tiling::tile_n * team_n divides OC/G): its K steps read
// only its group's C/G input channels, a channel slice of each NHWC pixel (the pixel pitch
// stays C), and its weight columns are its group's block. Guarded by NpuGroupedConvTest.
//
// Band mode (Tiling::band) instead loads each tile's input rows (with the halo) once per
// channel chunk and issues one MATMUL per output row and kernel position on the shifted
// window in SRAM: KH*KW times less input traffic and whole-row DMAs, at the price of more,
// shorter MATMULs (m = output width). The tiler picks whichever simulates faster.
//
// Per core the program is a software pipeline over output tiles: the load queue fetches,
// the execute queue multiplies, the vector queue requantizes, the store queue writes back,
// linked by tokens; with double buffering each buffer kind has two slots and its "free"
// semaphore starts with two tokens.
//
// Teams (Tiling::team_m x team_n cores) share operands through the shared SRAM: a team
// computes a block of team_m M tiles x team_n N tiles, core (i, j) the tile (i, j) in its own
// accumulators, and the block's operands (its input rows and its weight columns, streamed per
// K step or resident) are loaded once per team, the DMAs dealt over the team's load queues.
// Each slot has its own "full" and "free" semaphores; every core of the team signals them on
// every core of the team and waits for one token per core, so the team moves in lockstep.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "support/status.h"
#include "npu/isa.h"
#include "npu/target.h"
#include "quant/fixed_point.h"
#include "quant/rescale.h"

namespace edgec::npu {

struct ConvLayer {
  std::string name = "layer";
  int batch = 1, in_h = 1, in_w = 1, channels = 1, out_channels = 1;
  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  int group = 1;      // groups of input and output channels (see above); 1: a plain conv
  bool fp16 = false;  // fp16 operands (2 bytes each): timing only
  // Quantization (int8): activations asymmetric per tensor, weights symmetric.
  int32_t x_zero_point = 0, y_zero_point = 0;
  int32_t act_min = -128, act_max = 127;  // fused ReLU: act_min = y_zero_point
  // Data (empty for shape-only estimates): weights HWIO [kh][kw][c][oc] (c < group_in()), bias int32[oc],
  // requantization per output channel (or one for all).
  std::vector<int8_t> weights;
  std::vector<int32_t> bias;
  std::vector<quant::FixedPointMultiplier> requant;
  // A MatMul of two activations (attention's QKᵀ and AV): the right operand is the region
  // `.input1`, one K x N matrix per batch item ([batch][K][N], row-major), with zero point
  // w_zero_point; the MATMULs subtract both zero points (isa.h), the bias is not folded.
  // Needs teams of one M tile (team_m 1) and no band mode.
  bool weights_from_input = false;
  int32_t w_zero_point = 0;
  // The right operand read through a transpose (lower::AbsorbedInto): element (b, k, n) of
  // `.input1` at b·b_strides[0] + k·b_strides[1] + n·b_strides[2]; all 0: [batch][K][N]
  // row-major. K contiguous (b_strides[1] = 1: attention's Kᵀ read from K as it is): tiles are
  // loaded as rows of k values and the MATMULs read b transposed (Instr::b_trans); else N
  // contiguous with rows b_strides[1] apart. Guarded by NpuActivationMatMulTest.TransposedRightOperand.
  std::array<int64_t, 3> b_strides{};
  // A lookup epilogue (lower/npu_fuse_epilogue.cc: a QuantizedLookup fused into its producer):
  // 256 values in the NPU's i8 terms, indexed by the requantized value + 128. Each N tile's
  // parameter block carries the table after its bias, multipliers and shifts, and a VEC lut
  // maps the output tile in SRAM after the requantize, before the store. Guarded by
  // NpuEpilogueTest.LookupEpilogueMatchesReference.
  std::vector<int8_t> output_table;
  bool has_table() const { return !output_table.empty(); }
  // Bytes of one N tile's parameter block of tn channels (bias, multiplier, shift, the table).
  int64_t params_bytes(int64_t tn) const { return 12 * tn + (has_table() ? 256 : 0); }
  bool b_transposed() const { return weights_from_input && b_strides[1] == 1 && b_strides[2] != 1; }

  int out_h() const { return (in_h + pad_top + pad_bottom - dilation_h * (kernel_h - 1) - 1) / stride_h + 1; }
  int out_w() const { return (in_w + pad_left + pad_right - dilation_w * (kernel_w - 1) - 1) / stride_w + 1; }
  int64_t m() const { return int64_t{batch} * out_h() * out_w(); }
  int group_in() const { return channels / group; }        // input channels of a group
  int group_out() const { return out_channels / group; }   // output channels of a group
  // First input channel of the group that output channel `oc` belongs to.
  int group_c0(int oc) const { return group > 1 ? oc / group_out() * group_in() : 0; }
  int64_t k() const { return int64_t{kernel_h} * kernel_w * group_in(); }
  int64_t n() const { return out_channels; }
  int64_t macs() const { return m() * k() * n(); }
  int elem_bytes() const { return fp16 ? 2 : 1; }
  // Bytes of an output element: 2 when the requantize writes int16 (an int16 point of the
  // mixed precision: act_min/act_max and y_zero_point then in int16 terms, isa.h kRequantize),
  // else the operands' size.
  int y_bytes = 0;
  int out_elem_bytes() const { return y_bytes ? y_bytes : elem_bytes(); }
  bool has_data() const { return weights_from_input ? !requant.empty() : !weights.empty(); }
  int64_t weight_bytes() const { return (weights_from_input ? int64_t{batch} : 1) * k() * n() * elem_bytes(); }
  static ConvLayer MatMul(std::string name, int m, int k, int n);
};

// Which operand stays in SRAM across the inner loop.
enum class Resident { kNone, kWeights, kInput };
const char* ResidentName(Resident r);

struct Tiling {
  int tile_h = 1, tile_w = 1;  // output pixels per tile (rows x cols), M = tile_h * tile_w
  int tile_c = 1;              // input channels per K step (of the group's C/G)
  int kw_group = 1;            // kernel columns folded into one K step (needs tile_c == C/G)
  int tile_n = 1;              // output channels per tile (with team_n, a divisor of OC/G)
  Resident resident = Resident::kWeights;
  bool double_buffer = true;
  int cores = 1;
  // Band mode: each K step (a channel chunk) loads the tile's input band with its halo once;
  // one MATMUL per (output row, kernel position) reads the shifted window from SRAM.
  // Needs weights resident, kw_group 1 and full-width tiles.
  bool band = false;
  // With band: after each band load, kernel_h on-chip DMAs lay the tile's im2col rows
  // ([pixels][kh][kw][c]) out in SRAM from the band, and one MATMUL of the whole K computes
  // the tile: a layer with few input channels (an RGB first layer, C = 3) fills the array's
  // rows with K = kh * kw * C instead of C. Needs all channels in one step.
  bool im2col = false;
  // Cores per team along M and N (see above); cores must be a multiple of team_m * team_n.
  // 1 x 1: every core loads its own operands. Not with band mode.
  int team_m = 1, team_n = 1;
  int team() const { return team_m * team_n; }
  std::string ToString() const;
};

// SRAM and accumulator bytes a tiling needs (all cores), or an error saying what does not fit.
struct Footprint {
  int64_t sram_per_team = 0, sram_total = 0, acc_per_core = 0;
};
StatusOr<Footprint> CheckTiling(const ConvLayer& l, const Target& t, const Tiling& tiling);
// The layer's group count divides its input and output channels (and no right operand input).
Status CheckGroups(const ConvLayer& l);

// Where the lowering put the layer's tensors in the DRAM image.
struct LayerImage {
  int64_t input_addr = 0, input_bytes = 0;
  int64_t output_addr = 0, output_bytes = 0;
};

// One task computing the layer. With data, dram_init holds weights and parameters.
StatusOr<Program> LowerConv(const ConvLayer& l, const Target& t, const Tiling& tiling, LayerImage* image);

// Elementwise int8 layers on the vector cores (one task): y = op(a[, b]) over `elements`.
// Binary ops (kAdd, kMul) take b of a's shape, one row of `cols` values repeated over a's
// rows (a per-channel operand in NHWC: the squeeze-excitation gate x[N,C,H,W] * g[N,C,1,1]
// with N = 1), or one value; a broadcast b is loaded once per core (SRAM-resident), as is the
// lookup table of kLut. The chunks of a row-broadcast op are whole rows. A per-channel lookup
// (ChannelLookup: kLut with broadcast kRow) has a table of 256 values per column of its rows of
// `cols` channels, loaded once into SRAM shared by the cores (isa.h kLutPerColumnImm).
struct EltwiseLayer {
  enum class Broadcast { kFull, kRow, kScalar };
  std::string name = "eltwise";
  VecOp op = VecOp::kAdd;  // kAdd, kMul, kRelu, kLut, kQuantize or kDequantize
  int64_t elements = 0;
  int32_t imm[16] = {};    // the VEC immediates (see isa.h)
  Broadcast broadcast = Broadcast::kFull;
  int64_t cols = 0;              // kRow: values in b's row
  std::vector<int8_t> table = {};    // kLut: 256 values in the NPU's i8 terms, indexed by x + 128 (per channel: [cols][256])
  std::vector<int8_t> b_const = {};  // a constant b (empty: b is a region)
  // Region names of a and b: the node's data inputs in order are ".input", ".input1", ...
  std::string a_region = ".input", b_region = ".input1";
  // Bytes of an element of a, b and y: 4 for the f32 side of kQuantize / kDequantize, 2 for an
  // int16 side of kRescale or kAdd (isa.h kAddBytesImm), else 1.
  int64_t a_bytes = 1, y_bytes = 1, b_bytes = 1;
  // The float boundary of a 4-d tensor: planes > 0 is its channel count C, and the f32 side
  // is in the caller's planar NCHW order ([N][C][pixels]) while the i8 side is NHWC; each tile
  // is a run of pixels of one image, its f32 rows (one per channel) moved by one strided DMA
  // and interleaved by the VEC's column pitch (isa.h kPitchImm).
  int64_t planes = 0, pixels = 0;
  bool binary() const { return op == VecOp::kAdd || op == VecOp::kMul; }
  int64_t b_elements() const {
    return broadcast == Broadcast::kFull ? elements : broadcast == Broadcast::kRow ? cols : 1;
  }
  // A quantized add / multiply / lookup (operands and result in the NPU's int8 terms).
  static EltwiseLayer Add(std::string name, int64_t elements, const quant::QuantizedAddParams& p);
  static EltwiseLayer Mul(std::string name, int64_t elements, const quant::QuantizedMulParams& p);
  static EltwiseLayer Lookup(std::string name, int64_t elements, std::vector<int8_t> table);
  // A lookup with a table per channel: `table` holds `channels` tables of 256 values, element i
  // reads table i % channels (the channel innermost: NHWC, or the last dim).
  static EltwiseLayer ChannelLookup(std::string name, int64_t elements, int64_t channels, std::vector<int8_t> table);
  bool channel_lookup() const { return op == VecOp::kLut && broadcast == Broadcast::kRow; }
  // Rows of `cols` values: a row-broadcast operand or a per-channel table.
  bool whole_rows() const { return (binary() || op == VecOp::kLut) && broadcast == Broadcast::kRow; }
  // The model's float boundary (isa.h kQuantize / kDequantize): zero point and clamp in i8 terms.
  static EltwiseLayer Quantize(std::string name, int64_t elements, float scale, int32_t zero_point, int32_t lo,
                               int32_t hi);
  static EltwiseLayer Dequantize(std::string name, int64_t elements, float scale, int32_t zero_point);
  // A requantize between widths (isa.h kRescale): `x_bytes` / `y_bytes` 1 (i8 terms) or 2 (int16).
  static EltwiseLayer Rescale(std::string name, int64_t elements, const quant::RescaleParams& p, int64_t x_bytes,
                              int64_t y_bytes);
};
// `chunk` elements per DMA/VEC step (a multiple of `cols` for a row broadcast). The DRAM image
// holds the constant part first (the table or a constant b), then a, b and y.
StatusOr<Program> LowerEltwise(const EltwiseLayer& l, const Target& t, int64_t chunk, bool double_buffer,
                               int64_t* a_addr, int64_t* b_addr, int64_t* y_addr);

// Int8 pooling on the vector cores (one task), NHWC. Output rows are tiled; each tile's input
// band (with its halo rows) is loaded once with the padding filled on load (-128 for max, the
// input zero point for average, i.e. count_include_pad = 1).
struct PoolLayer {
  std::string name = "pool";
  bool max = true;
  // With max: the window minimum instead (ReduceMin; padding on load by 127, isa.h kPoolMinImm).
  bool min = false;
  int batch = 1, in_h = 1, in_w = 1, channels = 1;
  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  // Average: y = Requantize(sum(x - zi), mult, zo, lo, hi) with mult ~ s_x / (s_y * window).
  int32_t x_zero_point = 0, y_zero_point = 0, act_min = -128, act_max = 127;
  quant::FixedPointMultiplier mult;
  // Average with a divisor per window (count_include_pad = 0 beside padding, ceil_mode's
  // extra windows): one multiplier per output pixel of a plane, row-major [out_h][out_w],
  // in place of `mult`; each row tile loads its rows' (isa.h kAvgPool's per-pixel form).
  std::vector<quant::FixedPointMultiplier> pixel_mult;
  int out_h() const { return (in_h + pad_top + pad_bottom - kernel_h) / stride_h + 1; }
  int out_w() const { return (in_w + pad_left + pad_right - kernel_w) / stride_w + 1; }
};
StatusOr<Program> LowerPool(const PoolLayer& l, const Target& t, int tile_rows, int tile_c, bool double_buffer,
                            LayerImage* image);

// Int8 depthwise convolution (group = channels, `multiplier` 2-d filters per channel,
// dilations >= 1) on the vector cores (one task), NHWC, tiled like the pools: each tile loads its input band
// with the halo ((kernel - 1) * dilation + 1 rows at stride 1, padded with the input zero point
// on load) and its channels' parameter block (weights, bias, multiplier, shift: one DMA, the
// lowering lays them out per channel tile), and one VEC dwconv computes, requantizes and
// clamps (isa.h; the dilation rides in imm[kWindowDilationImm]). Guarded by
// tests/npu/dilated_depthwise_test.cc.
struct DepthwiseLayer {
  std::string name = "dw";
  int batch = 1, in_h = 1, in_w = 1, channels = 1;
  int kernel_h = 1, kernel_w = 1, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int pad_top = 0, pad_left = 0, pad_bottom = 0, pad_right = 0;
  // Output channels per input channel (ONNX's group = C with M = multiplier * C outputs):
  // output channel o reads input channel o / multiplier. `channels` counts the input's.
  int multiplier = 1;
  int32_t x_zero_point = 0, y_zero_point = 0, act_min = -128, act_max = 127;
  // Data (empty for timing only): weights [kh][kw][o], bias int32[o] (the zero-point term is
  // not folded in: the VEC subtracts the input zero point), requantization per output channel
  // or one; o over the out_channels().
  std::vector<int8_t> weights;
  std::vector<int32_t> bias;
  std::vector<quant::FixedPointMultiplier> requant;
  // A lookup epilogue as for ConvLayer::output_table: the table rides in each channel tile's
  // parameter block and a VEC lut maps the output tile before the store.
  std::vector<int8_t> output_table;
  // Input rows / columns one window spans (dilation included).
  int extent_h() const { return (kernel_h - 1) * dilation_h + 1; }
  int extent_w() const { return (kernel_w - 1) * dilation_w + 1; }
  int out_h() const { return (in_h + pad_top + pad_bottom - extent_h()) / stride_h + 1; }
  int out_w() const { return (in_w + pad_left + pad_right - extent_w()) / stride_w + 1; }
  int out_channels() const { return channels * multiplier; }
  int64_t macs() const { return int64_t{batch} * out_h() * out_w() * out_channels() * kernel_h * kernel_w; }
};
// Tiles of `tile_rows` output rows x `tile_c` output channels (rounded down to a multiple of
// the multiplier, so a tile reads whole input channels).
StatusOr<Program> LowerDepthwise(const DepthwiseLayer& l, const Target& t, int tile_rows, int tile_c,
                                 bool double_buffer);

// Int8 resize of an NHWC tensor over H and W (npu/lower_resize.cc) with quant/int_resize.h's
// taps: output row tiles x channel tiles, each tile's input band (the rows its taps read)
// loaded once, one VEC resize per tile; the tap tables are loaded once per core. A nearest
// resize by integer factors (every output pixel the input pixel (oy / sh, ox / sw)) is no
// compute: each band of input rows is stored sh x sw times with strided DMAs.
struct ResizeLayer {
  std::string name = "resize";
  int batch = 1, channels = 1, in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  // Taps per output row and column (lo, hi, w: quant::IntResizeAxis).
  std::vector<int32_t> row_lo, row_hi, row_w, col_lo, col_hi, col_w;
  // Integer factors of a nearest resize that only replicates (0: not one).
  int replicate_h = 0, replicate_w = 0;
  bool replicates() const { return replicate_h > 0 && replicate_w > 0; }
  // Sets replicate_h/w when every tap is the input pixel o / factor (out = factor x in).
  void DetectReplication();
};
// Tiles of `tile_rows` output rows (input rows when it replicates) x `tile_c` channels.
StatusOr<Program> LowerResize(const ResizeLayer& l, const Target& t, int tile_rows, int tile_c, bool double_buffer);

// The zero-point-corrected int32 bias the NPU adds: bias[oc] - x_zp * sum_k w[k][oc].
std::vector<int32_t> FoldedBias(const ConvLayer& l);

// Rows of a constant table [rows][row_bytes] (int8) selected by `count` int64 indices that
// are a tensor (region ".input"; negative ones count from the end): per tile of `chunk`
// indices one DMA of the index list into SRAM, one gather DMA (isa.h Instr::gather) of the
// rows it selects, one store of them to the output (region ".output", [count][row_bytes]).
struct GatherLayer {
  std::string name = "gather";
  std::vector<int8_t> table;
  int64_t rows = 0, row_bytes = 0, count = 0;
};
StatusOr<Program> LowerGather(const GatherLayer& l, const Target& t, int64_t chunk, bool double_buffer);

// ArgMax / ArgMin over the innermost dim of the NPU layout (the channels of an NHWC tensor, the
// last dim otherwise): `rows` rows of `cols` int8 values (region ".input") to one int64 index
// each (region ".output", 8 bytes a row). Per tile of `chunk` rows one contiguous load, one
// VEC argmax (isa.h kArgMax), one contiguous store of 8 bytes a row.
struct ArgMaxLayer {
  std::string name = "argmax";
  int64_t rows = 0, cols = 0;
  bool min = false, last = false;  // ArgMin; select_last_index
};
StatusOr<Program> LowerArgMax(const ArgMaxLayer& l, const Target& t, int64_t chunk, bool double_buffer);

}  // namespace edgec::npu
