// The vectorized row kernels of the own CPU kernels: one table of plain single-threaded
// loops over f32 rows, built three times from vec/impl.inc — for AVX-512F (vec/avx512.cc) and
// AVX2+FMA (vec/avx2.cc), each compiled for that target only, and portable scalar code
// (vec/scalar.cc). Kernels() picks the table
// at run time (the CPU-feature probe of context.cc), so the binary runs on any x86-64. The
// int8 and NHWC rows of the same layer, which the kernels call by ISA, are in vec/int8.h and
// vec/nhwc.h. The drivers in
// elementwise.cc, softmax.cc, norm.cc, ... split work over threads and call these rows.
#pragma once

#include <cstdint>

namespace edgec::cpu::vec {

// Unary functions; also the activations of the fused epilogues (kIdentity = none).
enum class Unary : uint8_t {
  kIdentity,
  kRelu,
  kLeakyRelu,    // x < 0 ? alpha * x : x
  kClip,         // min(max(x, alpha), beta)
  kHardSigmoid,  // clamp(alpha * x + beta, 0, 1)
  kHardSwish,
  kSigmoid,
  kTanh,
  kSilu,
  kGelu,      // erf form
  kGeluTanh,  // tanh approximation
  kErf,
  kExp,
  kLog,
  kSqrt,
  kReciprocal,
  kNeg,
  kAbs,
  kFloor,
  kCeil,
  kSoftplus,  // log(1 + e^x)
  kSoftsign,  // x / (1 + |x|)
};

struct UnaryFn {
  Unary kind = Unary::kIdentity;
  float alpha = 0.f, beta = 0.f;
};

enum class Binary : uint8_t { kAdd, kSub, kMul, kDiv, kMax, kMin, kPRelu };

// Columns per panel of the packed matrix-vector product (Table::gemv_panel).
constexpr int kGemvPanel = 32;

struct Table {
  const char* isa;
  // y[i] = f(x[i]); y may equal x.
  void (*unary)(const UnaryFn& f, const float* x, float* y, int64_t n);
  // y[i] = act(a[i * sa] op b[i * sb]) with sa, sb in {0, 1}; y may equal a or b.
  void (*binary)(Binary op, const UnaryFn& act, const float* a, int64_t sa, const float* b,
                 int64_t sb, float* y, int64_t n);
  // Softmax (or log-softmax) of one contiguous row: v = x * scale (+ mask[i * mask_stride]
  // when mask is given, mask_stride in {0, 1}), y = softmax(v). y may equal x.
  void (*softmax_row)(const float* x, float* y, int64_t n, bool log, float scale,
                      const float* mask, int64_t mask_stride);
  // Softmax along the rows of an [n, inner] block (row stride `inner`), for `width`
  // consecutive columns starting at column 0 (width <= inner).
  void (*softmax_columns)(const float* x, float* y, int64_t n, int64_t inner, int64_t width,
                          bool log);
  // Layer normalization of one row: y = (x - mean) / sqrt(var + eps) * scale + bias (bias
  // may be null). Writes the mean and 1/sqrt(var + eps) to *mean, *inv_std.
  void (*layer_norm_row)(const float* x, float* y, int64_t n, const float* scale,
                         const float* bias, float epsilon, float* mean, float* inv_std);
  // Mean and population variance of one row.
  void (*moments_row)(const float* x, int64_t n, float* mean, float* var);
  // y = x * a + b.
  void (*affine_row)(const float* x, float* y, int64_t n, float a, float b);
  // y[i] = x[i] * a[i] + b[i] (one NHWC pixel of a per-channel affine); y may equal x.
  void (*channel_affine_row)(const float* x, float* y, int64_t n, const float* a, const float* b);
  // RMS normalization of one row: y = x / sqrt(mean(x^2) + eps) * scale.
  void (*rms_norm_row)(const float* x, float* y, int64_t n, const float* scale, float epsilon);
  // y[i] = sum_t w[t] * x[t][i] for t < taps (the blend of a linear resize); y != x[t].
  void (*blend)(const float* const* x, const float* w, int taps, float* y, int64_t n);
  // y[i] = max over t < taps of x[t][i], taps >= 1 (a max pool's window); a NaN wins only
  // from x[0] (as the reference's `x > best`). y != x[t].
  void (*window_max)(const float* const* x, int taps, float* y, int64_t n);
  // One column panel of a matrix-vector product: y[j] = sum_t x[t] * w[t * kGemvPanel + j]
  // for j < kGemvPanel, the panel's k rows stored one after another (one stream of memory).
  void (*gemv_panel)(const float* x, const float* w, int64_t k, float* y);
  // y[i * n + j] += sum_t x[i * k + t] * w[t * n + j] for i < m, j < n: x is [m, k], w
  // [k, n] and y [m, n], all row-major; n a multiple of kGemmAccAlign.
  void (*gemm_acc)(const float* x, int64_t m, int64_t k, const float* w, int64_t n, float* y);
};

// Table::gemm_acc's n is a multiple of this (the widest vector's lanes).
constexpr int kGemmAccAlign = 16;

extern const Table kScalarTable;
extern const Table kAvx2Table;
extern const Table kAvx512Table;

// The table own kernels use now: the widest the CPU supports within the cap
// (cpu::CapVectorIsa, or EDGEC_CPU_ISA in the environment).
const Table& Kernels();

}  // namespace edgec::cpu::vec
