// Attention(Q, K, V, Mask?) = softmax(Q·Kᵀ·scale + Mask)·V: two batched oneDNN matmuls
// (batch dims broadcast; K read transposed through strides) around the own softmax rows,
// which apply the scale and the additive mask on the way. The scores live in scratch. When
// the output is strided (`views` made Attention write its transposed order) and oneDNN
// has only its reference matmul for that destination (brgemm wants a plain dense one; the
// reference one is ~100x slower), the second product writes densely into scratch and one
// oneDNN reorder scatters it into the strided output.
#include "kernels/cpu/onednn_util.h"

#include <tuple>
#include "kernels/cpu/vec.h"

namespace edgec::cpu {

namespace {

constexpr int64_t kAlign = 64;
int64_t AlignUp(int64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

class AttentionKernel final : public Kernel {
 public:
  Status Run(std::span<const void* const> in, std::span<void* const> out, void* scratch) override {
    UseThreads(threads_);
    DnnlContext& ctx = GetDnnlContext(threads_);
    RETURN_IF_ERROR(CatchDnnl(label_, [&] {
      scores_.Execute(ctx.stream, in, out, scratch);
      return Status::Ok();
    }));
    float* s = static_cast<float*>(scratch);
    const auto* mask = has_mask_ ? static_cast<const float*>(in[3]) : nullptr;
    const vec::Table& t = vec::Kernels();
    ParallelFor(threads_, rows_, std::max<int64_t>(1, 4096 / std::max<int64_t>(sk_, 1)),
                [&](int64_t begin, int64_t end) {
                  for (int64_t r = begin; r < end; ++r) {
                    const float* m = nullptr;
                    if (mask) m = mask + mask_batch_offset_[r / sq_] + (r % sq_) * mask_row_stride_;
                    t.softmax_row(s + r * sk_, s + r * sk_, sk_, false, scale_, m, mask_col_stride_);
                  }
                });
    return CatchDnnl(label_, [&] {
      weighted_.Execute(ctx.stream, in, out, scratch);
      if (scatter_.valid()) scatter_.Execute(ctx.stream, in, out, scratch);
      return Status::Ok();
    });
  }
  size_t scratch_bytes() const override { return scratch_bytes_; }
  std::string Describe() const override { return describe_; }

  std::string label_;
  BoundPrimitive scores_, weighted_;
  BoundPrimitive scatter_;  // dense product -> strided output (valid when needed)
  int64_t rows_ = 0, sq_ = 1, sk_ = 1;
  float scale_ = 1.f;
  bool has_mask_ = false;
  std::vector<int64_t> mask_batch_offset_;  // per output batch index
  int64_t mask_row_stride_ = 0, mask_col_stride_ = 0;
  size_t scratch_bytes_ = 0;
  int threads_ = 1;
  std::string describe_;
};

Dims BatchOf(const Dims& d) { return Dims(d.begin(), d.end() - 2); }

// `d` with leading 1s up to `rank` dims, and its row-major strides.
std::pair<Dims, std::vector<int64_t>> Padded(const Dims& d, size_t rank) {
  Dims p(rank - d.size(), 1);
  p.insert(p.end(), d.begin(), d.end());
  return {p, ContiguousStrides(p)};
}

// The same for an operand buffer, keeping its own (possibly strided) element strides.
std::pair<Dims, std::vector<int64_t>> Padded(const TensorDesc& d, size_t rank) {
  Dims p(rank - d.dims.size(), 1);
  p.insert(p.end(), d.dims.begin(), d.dims.end());
  std::vector<int64_t> s = LogicalStrides(d);
  const int64_t outer = d.dims.empty() ? 1 : d.dims[0] * s[0];
  s.insert(s.begin(), rank - d.dims.size(), outer);
  return {p, s};
}

}  // namespace

KernelOr CreateAttentionKernel(const KernelRequest& req) {
  RETURN_IF_ERROR(ExpectF32(req));
  RETURN_IF_ERROR(ExpectLayouts(req, Layout::kRowMajor));
  for (int i = 0; i < 3; ++i) {
    if (!InputOrNull(req, i)) return Refuse(req, "input {} is absent", i);
  }
  const TensorDesc &q = req.inputs[0], &k = req.inputs[1], &v = req.inputs[2];
  const TensorDesc* mask = InputOrNull(req, 3);
  const TensorDesc& y = req.outputs[0];
  const bool k_transposed = req.attrs->GetInt("k_transposed", 0) != 0;
  const size_t rank = y.dims.size();
  if (q.dims.size() > rank || k.dims.size() > rank || v.dims.size() > rank) return Refuse(req, "operand ranks");
  const int64_t sq = q.dims[q.dims.size() - 2], d = q.dims.back();
  const int64_t sk = k_transposed ? k.dims.back() : k.dims[k.dims.size() - 2];
  const int64_t dv = v.dims.back();
  if (sq == 0 || sk == 0 || d == 0 || dv == 0 || NumElements(y.dims) == 0) return Refuse(req, "empty operands");
  const float scale = req.attrs->Has("scale") ? req.attrs->GetFloat("scale")
                                              : static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));

  const Dims out_batch = BatchOf(y.dims);
  const int64_t batches = NumElements(out_batch);
  // The scores have the batch dims of Q and K broadcast; oneDNN cannot widen them further
  // in the first product, so V must not add batch dims beyond those.
  auto [q_batch, ignored_q] = Padded(BatchOf(q.dims), rank - 2);
  auto [k_batch, ignored_k] = Padded(BatchOf(k.dims), rank - 2);
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (std::max(q_batch[i], k_batch[i]) != out_batch[i]) {
      return Refuse(req, "V's batch dims {} broadcast beyond those of Q {} and K {}", DimsToString(v.dims),
                    DimsToString(q.dims), DimsToString(k.dims));
    }
  }
  Dims scores_dims = out_batch;
  scores_dims.push_back(sq);
  scores_dims.push_back(sk);

  // Named variables, not structured bindings: the lambda below captures them (clang 14, the
  // fuzz build's compiler, cannot capture structured bindings).
  Dims q_dims, k_stored, v_dims;
  std::vector<int64_t> q_strides, k_strides, v_strides;
  std::tie(q_dims, q_strides) = Padded(q, rank);
  std::tie(k_stored, k_strides) = Padded(k, rank);
  std::tie(v_dims, v_strides) = Padded(v, rank);
  Dims kt_dims = k_stored;  // K as the [.., D, Sk] weights of Q·Kᵀ
  std::vector<int64_t> kt_strides = k_strides;
  if (!k_transposed) {
    std::swap(kt_dims[rank - 2], kt_dims[rank - 1]);
    std::swap(kt_strides[rank - 2], kt_strides[rank - 1]);
  }

  // Mask offsets: per output batch index and per query row; its key stride is 0 or 1.
  std::vector<int64_t> mask_offsets;
  int64_t mask_row = 0, mask_col = 0;
  if (mask) {
    auto [m_dims, m_strides] = Padded(mask->dims, rank);
    for (size_t i = 0; i < rank; ++i) {
      if (m_dims[i] == 1) m_strides[i] = 0;
    }
    mask_row = m_strides[rank - 2];
    mask_col = m_strides[rank - 1];
    mask_offsets.resize(batches);
    std::vector<int64_t> index(rank - 2, 0);
    for (int64_t b = 0; b < batches; ++b) {
      int64_t off = 0;
      for (size_t i = 0; i + 2 < rank; ++i) off += index[i] * m_strides[i];
      mask_offsets[b] = off;
      for (int i = static_cast<int>(rank) - 3; i >= 0 && ++index[i] == out_batch[i]; --i) index[i] = 0;
    }
  }

  const int threads = std::max(1, req.threads);
  return CatchDnnl(req.label, [&]() -> KernelOr {
    UseThreads(threads);
    DnnlContext& ctx = GetDnnlContext(threads);
    const dnnl_md q_md = PlainDesc(q_dims, DType::kF32, q_strides);
    const dnnl_md kt_md = PlainDesc(kt_dims, DType::kF32, kt_strides);
    const dnnl_md v_md = PlainDesc(v_dims, DType::kF32, v_strides);
    const dnnl_md s_md = PlainDesc(scores_dims, DType::kF32);
    const dnnl_md y_md = PlainDesc(y.dims, DType::kF32, LogicalStrides(y));
    dnnl::primitive_attr attr;
    attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
    dnnl::matmul::primitive_desc pd1(dnnl::matmul::desc(q_md, kt_md, s_md), attr, ctx.engine);
    dnnl::matmul::primitive_desc pd2(dnnl::matmul::desc(s_md, v_md, y_md), attr, ctx.engine);
    const dnnl_md y_dense_md = PlainDesc(y.dims, DType::kF32);
    bool scatter = false;
    if (IsReferenceImpl(pd2) && y_md != y_dense_md) {
      dnnl::matmul::primitive_desc dense(dnnl::matmul::desc(s_md, v_md, y_dense_md), attr, ctx.engine);
      if (!IsReferenceImpl(dense)) {
        pd2 = dense;
        scatter = true;
      }
    }

    auto kernel = std::make_unique<AttentionKernel>();
    kernel->label_ = req.label;
    kernel->threads_ = threads;
    kernel->rows_ = batches * sq;
    kernel->sq_ = sq;
    kernel->sk_ = sk;
    kernel->scale_ = scale;
    kernel->has_mask_ = mask != nullptr;
    kernel->mask_batch_offset_ = std::move(mask_offsets);
    kernel->mask_row_stride_ = mask_row;
    kernel->mask_col_stride_ = mask_col;
    const int64_t scores_bytes = AlignUp(NumElements(scores_dims) * static_cast<int64_t>(sizeof(float)));
    using Src = BoundPrimitive::Source;
    kernel->scores_ = BoundPrimitive(dnnl::primitive(pd1), ctx.engine);
    kernel->scores_.Bind(DNNL_ARG_SRC, q_md, Src::kInput, 0);
    kernel->scores_.Bind(DNNL_ARG_WEIGHTS, kt_md, Src::kInput, 1);
    kernel->scores_.Bind(DNNL_ARG_DST, s_md, Src::kScratch, 0);
    kernel->weighted_ = BoundPrimitive(dnnl::primitive(pd2), ctx.engine);
    kernel->weighted_.Bind(DNNL_ARG_SRC, s_md, Src::kScratch, 0);
    kernel->weighted_.Bind(DNNL_ARG_WEIGHTS, v_md, Src::kInput, 2);
    // Scratch: [scores | dense output when scattering | the primitives' scratchpad].
    const int64_t dense_bytes = scatter ? AlignUp(static_cast<int64_t>(y_dense_md.get_size())) : 0;
    const int64_t pad_offset = scores_bytes + dense_bytes;
    kernel->scores_.BindScratchpad(pd1.scratchpad_desc(), pad_offset);
    if (scatter) {
      kernel->weighted_.Bind(DNNL_ARG_DST, y_dense_md, Src::kScratch, scores_bytes);
      kernel->scatter_ = BoundPrimitive(
          dnnl::reorder(dnnl::reorder::primitive_desc(ctx.engine, y_dense_md, ctx.engine, y_md)), ctx.engine);
      kernel->scatter_.Bind(DNNL_ARG_FROM, y_dense_md, Src::kScratch, scores_bytes);
      kernel->scatter_.Bind(DNNL_ARG_TO, y_md, Src::kOutput, 0);
    } else {
      kernel->weighted_.Bind(DNNL_ARG_DST, y_md, Src::kOutput, 0);
    }
    kernel->weighted_.BindScratchpad(pd2.scratchpad_desc(), pad_offset);
    kernel->scratch_bytes_ = static_cast<size_t>(pad_offset) +
                             std::max(pd1.scratchpad_desc().get_size(), pd2.scratchpad_desc().get_size());
    kernel->describe_ = fmt::format("onednn matmul [{}] + own softmax {} + onednn matmul [{}]{} f32",
                                    pd1.impl_info_str(), vec::Kernels().isa, pd2.impl_info_str(),
                                    scatter ? " + reorder into the strided output" : "");
    return std::unique_ptr<Kernel>(std::move(kernel));
  });
}

}  // namespace edgec::cpu
