// Shared parts of the oneDNN kernels (conv, matmul, pool, attention): memory descriptors
// of the kernels' buffers, the epilogue as post-ops, a primitive whose run-time buffers
// are bound by pointer (no allocation per Run), and the epilogue terms oneDNN does not take
// (computed by the own broadcasting loops after the primitive).
#pragma once

#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/epilogue.h"
#include "kernels/cpu/broadcast.h"
#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"

namespace edgec::cpu {

using dnnl_md = dnnl::memory::desc;

dnnl::memory::dims ToDnnlDims(const Dims& d);

// A plain descriptor of `dims` with element `strides` (row-major when empty).
dnnl_md PlainDesc(const Dims& dims, DType dtype, std::vector<int64_t> strides = {});
// The descriptor of a kernel buffer: its dims and layout.
dnnl_md PlainDesc(const TensorDesc& d);

// Appends the epilogue activation as eltwise post-ops (nothing for kNone).
void AppendActivation(dnnl::post_ops& po, const ActivationSpec& a);
// Whether the own row loop after the primitive beats oneDNN's eltwise post-op for this
// activation, so that the kernels try it first: SiLU (oneDNN 2.6's swish post-op is slower
// than the own loop in place after the primitive; docs/cpu_runtime.md).
bool OwnActivationFaster(const ActivationSpec& a);
// "relu", "clip(0, 6)", ...: for Describe().
std::string ActivationWord(const ActivationSpec& a);

// True when oneDNN picked its reference (unoptimized) implementation.
bool IsReferenceImpl(const dnnl::primitive_desc_base& pd);
// True when it picked one of its AMX (tile) implementations.
bool IsAmxImpl(const dnnl::primitive_desc_base& pd);

// A primitive with its argument memories made once; Run points them at the buffers.
class BoundPrimitive {
 public:
  // Where an argument's buffer comes from at Run.
  enum class Source { kInput, kOutput, kScratch, kFixed };

  BoundPrimitive() = default;
  BoundPrimitive(dnnl::primitive prim, const dnnl::engine& engine) : prim_(std::move(prim)), engine_(engine) {}

  // Argument `arg` with descriptor `md` comes from input/output `index` (or the scratch
  // buffer at byte `index`) at Run.
  void Bind(int arg, const dnnl_md& md, Source source, int64_t index);
  // Argument `arg` is a memory owned by the kernel (packed weights, bias).
  void Fix(int arg, const dnnl::memory& m);
  // The user scratchpad (0 bytes: none) at byte `offset` of the scratch buffer.
  void BindScratchpad(const dnnl_md& md, int64_t offset);

  // Points the bound memories at this Run's buffers and executes on `stream` (waits).
  // Each (arg, bytes) of `shifts` moves that argument's pointer by `bytes` (a band of a
  // larger buffer).
  void Execute(dnnl::stream& stream, std::span<const void* const> inputs,
               std::span<void* const> outputs, void* scratch,
               std::span<const std::pair<int, int64_t>> shifts = {});

  bool valid() const { return static_cast<bool>(prim_); }

 private:
  struct Binding {
    int arg;
    Source source;
    int64_t index;
  };
  dnnl::primitive prim_;
  dnnl::engine engine_;
  std::unordered_map<int, dnnl::memory> args_;
  std::vector<Binding> bindings_;
};


// A kernel that is one primitive taking input 0 as its source and writing output 0 (pools,
// reductions): `Make` binds both, the user scratchpad, and describes it as
// "onednn <what> [<implementation>]".
class SinglePrimitiveKernel final : public Kernel {
 public:
  static std::unique_ptr<Kernel> Make(const dnnl::primitive_desc& pd, const dnnl_md& src, const dnnl_md& dst,
                                      const std::string& label, const std::string& what, int threads,
                                      DnnlContext& ctx);
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override;
  size_t scratch_bytes() const override { return scratch_bytes_; }
  std::string Describe() const override { return describe_; }

 private:
  std::string label_;
  BoundPrimitive prim_;
  size_t scratch_bytes_ = 0;
  int threads_ = 1;
  std::string describe_;
};

// A constant tensor copied (and reordered) into a memory of descriptor `to`.
dnnl::memory PackConstant(const dnnl_md& from, const void* data, const dnnl_md& to,
                          DnnlContext& ctx);

// The epilogue terms left to the own kernels, applied in place on the primitive's output:
// y = act(y + addend_0 + addend_1) (each optional; act only when own_activation).
struct OwnEpilogue {
  struct Addend {
    int input = -1;      // the run-time buffer of this input ...
    const float* fixed = nullptr;  // ... or a kernel-owned one
    StridedLoop loop;    // output <- output + addend
  };
  std::vector<Addend> addends;
  bool own_activation = false;
  vec::UnaryFn act;

  bool empty() const { return addends.empty() && !own_activation; }
  void Run(std::span<const void* const> inputs, float* y, int64_t numel, int threads) const;
};

// What every kernel on one oneDNN primitive keeps (the fp32 conv and matmul, the int8
// matmul): its label for errors, the primitive, its scratch size, its description and the
// threads it runs on.
class DnnlPrimitiveKernel : public Kernel {
 public:
  size_t scratch_bytes() const override { return scratch_bytes_; }
  std::string Describe() const override { return describe_; }
  void Init(const std::string& label, int threads) {
    label_ = label;
    threads_ = threads;
  }

  std::string label_;
  BoundPrimitive prim_;
  size_t scratch_bytes_ = 0;
  std::string describe_;
  int threads_ = 1;
};

// A DnnlPrimitiveKernel with an f32 output of out_numel_ elements, the own epilogue applied
// to it after the primitive.
class DnnlF32Kernel : public DnnlPrimitiveKernel {
 public:
  void SetOutput(const Dims& y) {
    out_numel_ = NumElements(y);
    out_bytes_ = static_cast<size_t>(out_numel_) * sizeof(float);
  }

  OwnEpilogue own_;
  size_t out_bytes_ = 0;
  int64_t out_numel_ = 0;
};

}  // namespace edgec::cpu
