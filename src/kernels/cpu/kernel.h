// Fast CPU kernels. A kernel is created once per node with everything static known (shapes,
// layouts, constant weights — packed at creation), and then run many times on raw buffers
// with no allocation. The Plan (src/runtime) decides buffers and order; a kernel never sees
// the Graph. When no fast kernel fits a node, CreateKernel says why and the Plan falls back
// to the reference kernel.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "support/status.h"
#include "ir/attributes.h"
#include "ir/op.h"
#include "ir/tensor.h"
#include "ir/types.h"

namespace edgec::cpu {

// How one input or output is laid out in memory. Dims are logical (ONNX order, NCHW for
// images); `layout` says how they are stored: kRowMajor (contiguous in logical order) or
// kNHWC (4-D only: logical [N, C, H, W] stored as [N, H, W, C], contiguous).
struct TensorDesc {
  DType dtype = DType::kF32;
  Dims dims;
  Layout layout = Layout::kRowMajor;
  // Element strides per logical axis when the buffer is not dense in `layout` (a strided
  // view such as a Transpose made zero-copy, or padded NHWC channels); empty means dense.
  // Kernels that cannot read or write such a buffer refuse it (CreateKernel says so).
  std::vector<int64_t> strides = {};
};

// True when the buffer is dense in its layout: no explicit strides, or strides equal to the
// dense ones (size-1 axes ignored).
bool IsDense(const TensorDesc& d);

// Kernels with two candidates (kMeasure, the default, is the product's choice):
//   - the int8 convolution on a CPU with AMX: oneDNN's first implementation (AMX) vs the
//     first that is not AMX (VNNI); both exact, so the faster, timed side by side at
//     creation, is kept;
//   - the f32 convolution of a row-major source of at most 4 channels (an image): oneDNN's
//     choice after reordering the source vs its first-layer kernel reading it as it is;
//     chosen by a fixed rule on the output channels (onednn_conv.cc), not by a timing.
// kFirst and kSecond take one of the two, for tests that check both against the reference.
enum class MeasuredChoice { kMeasure, kFirst, kSecond };

// The choices a caller makes for the kernels it creates, carried by each request (a plan
// passes its own, so two plans with different choices do not interfere). The defaults are
// the product's; the others exist for measurements and tests. The kernels never read the
// environment: driver/kernel_tuning.h reads it for the CLI and the benchmarks.
struct KernelTuning {
  MeasuredChoice measured_choice = MeasuredChoice::kMeasure;
  // Winograd for 3x3 stride-1 f32 convolutions of at least this many input and output
  // channels (onednn_conv.cc); `winograd` also gates the own stride-2 one (conv3x3_s2_wino.cc).
  bool winograd = true;
  int64_t winograd_min_channels = 24;
  // A 1x1 f32 convolution runs as one GEMM from this many pixels (conv1x1_gemm.cc).
  int64_t conv1x1_gemm_min_pixels = 256;
  // The own f32 matrix-vector product for one-row MatMuls (gemv.cc).
  bool gemv = true;
  // The own image convolution for a planar stem with an NHWC output (image_conv.cc): taken
  // whenever it fits (kMeasure and kSecond alike: not timed, so every session of a model
  // gives the same bits) or never (kFirst: oneDNN's).
  MeasuredChoice image_conv = MeasuredChoice::kMeasure;
  // Skip the check that oneDNN's int8 sums are exact without VNNI (measurements only).
  bool int8_unchecked = false;
  // Convolutions, matrix products and recurrent layers of fewer multiply-adds run on one
  // thread whatever the request's count (registry.cc). 2^20 is about 10 us of work on one
  // core; the public API raises it to 2^23 when OpenMP's threads sleep between regions
  // (OMP_WAIT_POLICY=passive: a woken thread waits for a core; docs/cpu_runtime.md).
  int64_t min_parallel_macs = int64_t{1} << 20;
};

struct KernelRequest {
  OpKind op;
  const Attributes* attrs = nullptr;
  std::string label;                      // "Conv 'conv1'" for messages
  std::vector<TensorDesc> inputs;          // absent optional inputs: dtype kUndefined
  std::vector<const Tensor*> constants;    // per input: its value when constant, else nullptr
  std::vector<TensorDesc> outputs;
  int threads = 1;
  KernelTuning tuning;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Buffers in the layouts of the request; absent inputs are nullptr. `scratch` has
  // scratch_bytes() bytes (64-byte aligned) or is nullptr when that is 0.
  virtual Status Run(std::span<const void* const> inputs, std::span<void* const> outputs,
                     void* scratch) = 0;
  virtual size_t scratch_bytes() const { return 0; }
  // Short description for reports: "onednn conv nhwc f32 (post-ops: sum, relu)".
  virtual std::string Describe() const = 0;
};

// A fast kernel for the request, or Unimplemented with the reason none fits
// ("Conv 'c1': dilations with group > 1 not supported by this kernel").
StatusOr<std::unique_ptr<Kernel>> CreateKernel(const KernelRequest& req);

// A kernel whose output sizes the input values decide (NonMaxSuppression: the number of
// boxes it keeps). Created per set of input shapes like Kernel (dense row-major buffers; the
// request's output dims may be unknown), it allocates its outputs at every run.
class SizedByDataKernel {
 public:
  virtual ~SizedByDataKernel() = default;
  virtual Status Run(std::span<const void* const> inputs, std::vector<Tensor>* outputs) = 0;
  virtual std::string Describe() const = 0;
};

// A fast kernel of that kind, or Unimplemented with the reason none fits.
StatusOr<std::unique_ptr<SizedByDataKernel>> CreateSizedByDataKernel(const KernelRequest& req);

// A kernel that copies a buffer laid out as `from` into one laid out as `to` (same dtype and
// dims; any layouts and strides): the Plan's staging copies around kernels that need dense
// buffers, and its copies of graph outputs that are not row-major.
StatusOr<std::unique_ptr<Kernel>> CreateCopyKernel(const TensorDesc& from, const TensorDesc& to, int threads);

// Sets the number of threads fast kernels use (OpenMP, shared with oneDNN).
void SetThreads(int n);

// The own vectorized kernels (elementwise, softmax, norms, gemv, ...) run the widest code
// the CPU has of AVX-512F ("avx512"), AVX2+FMA ("avx2") and portable scalar code ("scalar"),
// chosen at run time. CapVectorIsa("avx2") or ("scalar") lowers that choice for every later
// Run ("" lifts the cap; false for an unknown name); tests run each ISA the CPU has. The CLI
// applies EDGEC_CPU_ISA=avx2|scalar the same way at start (driver/kernel_tuning.h).
bool CapVectorIsa(std::string_view isa);
// The ISAs this CPU can run, widest first.
std::vector<std::string_view> VectorIsas();
// The one the own kernels take now.
std::string_view VectorIsa();


}  // namespace edgec::cpu
