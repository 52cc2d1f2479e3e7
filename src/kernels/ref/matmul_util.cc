#include "kernels/ref/matmul_util.h"

#include <algorithm>

namespace edgec::ref {

MatMulProblem MakeMatMulProblem(const Dims& a_in, const Dims& b_in) {
  Dims a = a_in, b = b_in;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  MatMulProblem p;
  p.m = a[a.size() - 2];
  p.k = a.back();
  p.n = b.back();
  const Dims a_batch(a.begin(), a.end() - 2), b_batch(b.begin(), b.end() - 2);
  const size_t rank = std::max(a_batch.size(), b_batch.size());
  // Right-aligned batch dims; a broadcast dim has stride 0.
  Dims out(rank), a_stride(rank, 0), b_stride(rank, 0);
  int64_t a_step = p.m * p.k, b_step = p.k * p.n;
  for (size_t r = 0; r < rank; ++r) {
    const size_t i = rank - 1 - r;
    const int64_t da = r < a_batch.size() ? a_batch[a_batch.size() - 1 - r] : 1;
    const int64_t db = r < b_batch.size() ? b_batch[b_batch.size() - 1 - r] : 1;
    out[i] = std::max(da, db);
    if (da == 0 || db == 0) out[i] = 0;
    if (da != 1) a_stride[i] = a_step;
    if (db != 1) b_stride[i] = b_step;
    a_step *= da;
    b_step *= db;
  }
  p.batch_dims = out;
  const int64_t count = NumElements(out);
  p.a_offset.resize(count);
  p.b_offset.resize(count);
  Dims index(rank, 0);
  for (int64_t bi = 0; bi < count; ++bi) {
    int64_t ao = 0, bo = 0;
    for (size_t i = 0; i < rank; ++i) {
      ao += index[i] * a_stride[i];
      bo += index[i] * b_stride[i];
    }
    p.a_offset[bi] = ao;
    p.b_offset[bi] = bo;
    for (size_t i = rank; i-- > 0;) {  // next index, last dim fastest
      if (++index[i] < out[i]) break;
      index[i] = 0;
    }
  }
  return p;
}

BroadcastMap::BroadcastMap(const Dims& from, const Dims& to)
    : to_(to), from_strides_(to.size(), 0) {
  const size_t offset = to.size() - from.size();
  const std::vector<int64_t> strides = ContiguousStrides(from);
  for (size_t i = 0; i < from.size(); ++i) {
    if (from[i] != 1) from_strides_[offset + i] = strides[i];
  }
}

int64_t BroadcastMap::operator()(int64_t to_index) const {
  int64_t from_index = 0;
  for (size_t i = to_.size(); i-- > 0;) {
    from_index += (to_index % to_[i]) * from_strides_[i];
    to_index /= to_[i];
  }
  return from_index;
}

}  // namespace edgec::ref
