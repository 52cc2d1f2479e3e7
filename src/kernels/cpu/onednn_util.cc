#include "kernels/cpu/onednn_util.h"

#include <cfloat>
#include <cmath>

namespace edgec::cpu {

dnnl::memory::dims ToDnnlDims(const Dims& d) { return dnnl::memory::dims(d.begin(), d.end()); }

dnnl_md PlainDesc(const Dims& dims, DType dtype, std::vector<int64_t> strides) {
  if (strides.empty()) strides = ContiguousStrides(dims);
  if (dims.empty()) return dnnl_md({1}, DnnlType(dtype), dnnl::memory::dims{1});
  return dnnl_md(ToDnnlDims(dims), DnnlType(dtype), dnnl::memory::dims(strides.begin(), strides.end()));
}

dnnl_md PlainDesc(const TensorDesc& d) { return PlainDesc(d.dims, d.dtype, LogicalStrides(d)); }

namespace {

float Finite(float v) { return std::isinf(v) ? (v > 0 ? FLT_MAX : -FLT_MAX) : v; }

}  // namespace

void AppendActivation(dnnl::post_ops& po, const ActivationSpec& a) {
  using alg = dnnl::algorithm;
  switch (a.kind) {
    case Activation::kNone: return;
    case Activation::kRelu: po.append_eltwise(1.f, alg::eltwise_relu, 0.f, 0.f); return;
    case Activation::kLeakyRelu: po.append_eltwise(1.f, alg::eltwise_relu, a.alpha, 0.f); return;
    case Activation::kClip:
      po.append_eltwise(1.f, alg::eltwise_clip_v2, Finite(a.alpha), Finite(a.beta));
      return;
    case Activation::kHardSigmoid:  // oneDNN 2.6 has no hardsigmoid: linear, then clip
      po.append_eltwise(1.f, alg::eltwise_linear, a.alpha, a.beta);
      po.append_eltwise(1.f, alg::eltwise_clip_v2, 0.f, 1.f);
      return;
    case Activation::kHardSwish: po.append_eltwise(1.f, alg::eltwise_hardswish, 0.f, 0.f); return;
    case Activation::kSigmoid: po.append_eltwise(1.f, alg::eltwise_logistic, 0.f, 0.f); return;
    case Activation::kTanh: po.append_eltwise(1.f, alg::eltwise_tanh, 0.f, 0.f); return;
    case Activation::kSilu: po.append_eltwise(1.f, alg::eltwise_swish, 1.f, 0.f); return;
    case Activation::kGelu: po.append_eltwise(1.f, alg::eltwise_gelu_erf, 0.f, 0.f); return;
    case Activation::kGeluTanh: po.append_eltwise(1.f, alg::eltwise_gelu_tanh, 0.f, 0.f); return;
  }
}

bool OwnActivationFaster(const ActivationSpec& a) { return a.kind == Activation::kSilu; }

std::string ActivationWord(const ActivationSpec& a) {
  std::string s = ActivationToString(a);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool IsReferenceImpl(const dnnl::primitive_desc_base& pd) {
  const std::string impl = pd.impl_info_str();
  return impl.rfind("ref", 0) == 0;
}

bool IsAmxImpl(const dnnl::primitive_desc_base& pd) {
  return std::string(pd.impl_info_str()).find("amx") != std::string::npos;
}

void BoundPrimitive::Bind(int arg, const dnnl_md& md, Source source, int64_t index) {
  args_[arg] = dnnl::memory(md, engine_, DNNL_MEMORY_NONE);
  bindings_.push_back({arg, source, index});
}

void BoundPrimitive::Fix(int arg, const dnnl::memory& m) { args_[arg] = m; }

void BoundPrimitive::BindScratchpad(const dnnl_md& md, int64_t offset) {
  if (md.get_size() == 0) return;
  Bind(DNNL_ARG_SCRATCHPAD, md, Source::kScratch, offset);
}

void BoundPrimitive::Execute(dnnl::stream& stream, std::span<const void* const> inputs,
                             std::span<void* const> outputs, void* scratch,
                             std::span<const std::pair<int, int64_t>> shifts) {
  for (const Binding& b : bindings_) {
    void* p = nullptr;
    switch (b.source) {
      case Source::kInput: p = const_cast<void*>(inputs[b.index]); break;
      case Source::kOutput: p = outputs[b.index]; break;
      case Source::kScratch: p = static_cast<std::byte*>(scratch) + b.index; break;
      case Source::kFixed: break;
    }
    for (const auto& [arg, bytes] : shifts)
      if (arg == b.arg) p = static_cast<std::byte*>(p) + bytes;
    args_[b.arg].set_data_handle(p);
  }
  prim_.execute(stream, args_);
  stream.wait();
}

dnnl::memory PackConstant(const dnnl_md& from, const void* data, const dnnl_md& to, DnnlContext& ctx) {
  dnnl::memory src(from, ctx.engine, const_cast<void*>(data));
  dnnl::memory dst(to, ctx.engine);  // oneDNN allocates and owns the packed copy
  dnnl::reorder(src, dst).execute(ctx.stream, src, dst);
  ctx.stream.wait();
  return dst;
}

void OwnEpilogue::Run(std::span<const void* const> inputs, float* y, int64_t numel, int threads) const {
  for (size_t i = 0; i < addends.size(); ++i) {
    const Addend& a = addends[i];
    const float* src = a.fixed ? a.fixed : static_cast<const float*>(inputs[a.input]);
    const bool last = i + 1 == addends.size();
    const vec::UnaryFn fn = last && own_activation ? act : vec::UnaryFn{};
    RunBinaryLoop(a.loop, vec::Binary::kAdd, fn, y, src, y, threads);
  }
  if (addends.empty() && own_activation) RunUnary(act, y, y, numel, threads);
}

std::unique_ptr<Kernel> SinglePrimitiveKernel::Make(const dnnl::primitive_desc& pd, const dnnl_md& src,
                                                    const dnnl_md& dst, const std::string& label,
                                                    const std::string& what, int threads, DnnlContext& ctx) {
  auto k = std::unique_ptr<SinglePrimitiveKernel>(new SinglePrimitiveKernel());
  k->label_ = label;
  k->threads_ = threads;
  k->prim_ = BoundPrimitive(dnnl::primitive(pd), ctx.engine);
  k->prim_.Bind(DNNL_ARG_SRC, src, BoundPrimitive::Source::kInput, 0);
  k->prim_.Bind(DNNL_ARG_DST, dst, BoundPrimitive::Source::kOutput, 0);
  k->prim_.BindScratchpad(pd.scratchpad_desc(), 0);
  k->scratch_bytes_ = pd.scratchpad_desc().get_size();
  k->describe_ = fmt::format("onednn {} [{}]", what, pd.impl_info_str());
  return k;
}

Status SinglePrimitiveKernel::Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) {
  UseThreads(threads_);
  return CatchDnnl(label_, [&] {
    prim_.Execute(GetDnnlContext(threads_).stream, in, out, scratch);
    return Status::Ok();
  });
}

}  // namespace edgec::cpu
