#include "kernels/ref/movement_util.h"

#include <cstring>

namespace edgec::ref {

namespace {

// One innermost row: n elements, strides in elements.
template <size_t kSize>
void CopyRowFixed(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride,
                  int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * dst_stride * static_cast<int64_t>(kSize),
                src + i * src_stride * static_cast<int64_t>(kSize), kSize);
  }
}

void CopyRow(const std::byte* src, int64_t src_stride, std::byte* dst, int64_t dst_stride,
             int64_t n, size_t elem_size) {
  if (src_stride == 1 && dst_stride == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * elem_size);
    return;
  }
  switch (elem_size) {
    case 1: return CopyRowFixed<1>(src, src_stride, dst, dst_stride, n);
    case 2: return CopyRowFixed<2>(src, src_stride, dst, dst_stride, n);
    case 4: return CopyRowFixed<4>(src, src_stride, dst, dst_stride, n);
    case 8: return CopyRowFixed<8>(src, src_stride, dst, dst_stride, n);
    default: break;
  }
  const int64_t es = static_cast<int64_t>(elem_size);
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(dst + i * dst_stride * es, src + i * src_stride * es, elem_size);
  }
}

}  // namespace

void CopyStrided(std::span<const int64_t> extent, size_t elem_size, const void* src,
                 const StridedView& src_view, void* dst, const StridedView& dst_view) {
  for (int64_t e : extent) {
    if (e == 0) return;
  }
  const auto* s = static_cast<const std::byte*>(src);
  auto* d = static_cast<std::byte*>(dst);
  const int64_t es = static_cast<int64_t>(elem_size);
  const int rank = static_cast<int>(extent.size());
  if (rank == 0) {
    std::memcpy(d + dst_view.offset * es, s + src_view.offset * es, elem_size);
    return;
  }
  const int64_t inner = extent[rank - 1];
  const int64_t src_inner = src_view.strides[rank - 1];
  const int64_t dst_inner = dst_view.strides[rank - 1];
  // Odometer over the outer dims; the offsets follow the index incrementally.
  std::vector<int64_t> index(rank - 1, 0);
  int64_t so = src_view.offset, dof = dst_view.offset;
  while (true) {
    CopyRow(s + so * es, src_inner, d + dof * es, dst_inner, inner, elem_size);
    int k = rank - 2;
    for (; k >= 0; --k) {
      if (++index[k] < extent[k]) {
        so += src_view.strides[k];
        dof += dst_view.strides[k];
        break;
      }
      so -= src_view.strides[k] * (extent[k] - 1);
      dof -= dst_view.strides[k] * (extent[k] - 1);
      index[k] = 0;
    }
    if (k < 0) return;
  }
}

void PermuteCopy(const void* src, std::span<const int64_t> src_dims,
                 std::span<const int64_t> perm, size_t elem_size, void* dst) {
  std::vector<int64_t> src_strides = ContiguousStrides(src_dims);
  Dims out_dims(perm.size());
  StridedView from;
  for (size_t i = 0; i < perm.size(); ++i) {
    out_dims[i] = src_dims[perm[i]];
    from.strides.push_back(src_strides[perm[i]]);
  }
  CopyStrided(out_dims, elem_size, src, from, dst, Contiguous(out_dims));
}

void FillWithElement(Tensor& t, const void* element) {
  const size_t es = DTypeSize(t.dtype());
  auto* d = static_cast<std::byte*>(t.raw());
  for (int64_t i = 0; i < t.numel(); ++i) std::memcpy(d + i * es, element, es);
}

}  // namespace edgec::ref
