#include "kernels/cpu/broadcast.h"

#include <cmath>
#include <limits>

#include "kernels/cpu/common.h"
#include "kernels/cpu/context.h"

namespace edgec::cpu {

namespace {

constexpr int kMaxLoopRank = 16;
constexpr int64_t kGrain = 16384;  // elements per thread at least

// Strides of `in` over the axes of an output of rank `rank` with dims `out_dims`.
std::vector<int64_t> BroadcastStrides(const TensorDesc& in, const Dims& out_dims) {
  const int rank = static_cast<int>(out_dims.size());
  const int r = static_cast<int>(in.dims.size());
  std::vector<int64_t> s(rank, 0);
  const std::vector<int64_t> own = LogicalStrides(in);
  for (int k = 0; k < r; ++k) {
    if (in.dims[k] != 1) s[rank - r + k] = own[k];
  }
  return s;
}

// Scalar form of the table's binary ops, for rows whose strides are not 0 or 1.
float ApplyBinary(vec::Binary op, float a, float b) {
  switch (op) {
    case vec::Binary::kAdd: return a + b;
    case vec::Binary::kSub: return a - b;
    case vec::Binary::kMul: return a * b;
    case vec::Binary::kDiv: return a / b;
    case vec::Binary::kMax:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
      return a < b ? b : a;
    case vec::Binary::kMin:
      if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<float>::quiet_NaN();
      return b < a ? b : a;
    case vec::Binary::kPRelu: return a < 0 ? b * a : a;
  }
  return 0;
}

// Calls row(a_offset, b_offset, y_offset, start, count) over every innermost row of the
// loop (rows split into pieces when there are fewer rows than threads).
template <class Row>
void Walk(const StridedLoop& loop, int threads, const Row& row) {
  const int nd = static_cast<int>(loop.dims.size());
  const int64_t inner = loop.dims.back();
  const int64_t sa = loop.a.back(), sb = loop.b.back();
  if (inner == 0) return;
  const int64_t rows = loop.numel() / inner;
  if (rows == 1) {
    ParallelFor(threads, inner, kGrain, [&](int64_t begin, int64_t end) {
      row(begin * sa, begin * sb, begin, end - begin);
    });
    return;
  }
  ParallelFor(threads, rows, std::max<int64_t>(1, kGrain / inner), [&](int64_t begin, int64_t end) {
    int64_t index[kMaxLoopRank];
    int64_t oa = 0, ob = 0, oy = 0;
    int64_t rest = begin;
    for (int d = nd - 2; d >= 0; --d) {
      index[d] = rest % loop.dims[d];
      rest /= loop.dims[d];
      oa += index[d] * loop.a[d];
      ob += index[d] * loop.b[d];
      oy += index[d] * loop.out[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      row(oa, ob, oy, inner);
      for (int d = nd - 2; d >= 0; --d) {  // odometer
        oa += loop.a[d];
        ob += loop.b[d];
        oy += loop.out[d];
        if (++index[d] < loop.dims[d]) break;
        oa -= loop.a[d] * loop.dims[d];
        ob -= loop.b[d] * loop.dims[d];
        oy -= loop.out[d] * loop.dims[d];
        index[d] = 0;
      }
    }
  });
}

}  // namespace

int64_t StridedLoop::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

StridedLoop MakeStridedLoop(const TensorDesc& out, const TensorDesc& a, const TensorDesc& b) {
  const std::vector<int64_t> so = LogicalStrides(out);
  const std::vector<int64_t> sa = BroadcastStrides(a, out.dims);
  const std::vector<int64_t> sb = BroadcastStrides(b, out.dims);
  StridedLoop loop;
  for (int axis : MemoryOrder(out)) {
    const int64_t d = out.dims[axis];
    if (d == 0) return StridedLoop{{0}, {1}, {0}, {0}};
    if (d == 1) continue;
    AppendLoopAxis<3>(loop.dims, {&loop.out, &loop.a, &loop.b}, d, {so[axis], sa[axis], sb[axis]});
  }
  if (loop.dims.empty()) return StridedLoop{{1}, {1}, {0}, {0}};
  EDGEC_CHECK(loop.dims.size() <= kMaxLoopRank);
  return loop;
}

void RunBinaryLoop(const StridedLoop& loop, vec::Binary op, const vec::UnaryFn& act,
                   const float* a, const float* b, float* y, int threads) {
  const vec::Table& t = vec::Kernels();
  const int64_t sa = loop.a.back(), sb = loop.b.back();
  const bool vector_row = (sa == 0 || sa == 1) && (sb == 0 || sb == 1);
  Walk(loop, threads, [&](int64_t oa, int64_t ob, int64_t oy, int64_t n) {
    if (vector_row) {
      t.binary(op, act, a + oa, sa, b + ob, sb, y + oy, n);
      return;
    }
    const float* ap = a + oa;
    const float* bp = b + ob;
    float* yp = y + oy;
    for (int64_t i = 0; i < n; ++i) yp[i] = ApplyBinary(op, ap[i * sa], bp[i * sb]);
    if (act.kind != vec::Unary::kIdentity) t.unary(act, yp, yp, n);
  });
}

void RunPowLoop(const StridedLoop& loop, const float* a, const float* b, float* y, int threads) {
  const int64_t sa = loop.a.back(), sb = loop.b.back();
  Walk(loop, threads, [&](int64_t oa, int64_t ob, int64_t oy, int64_t n) {
    const float* ap = a + oa;
    const float* bp = b + ob;
    float* yp = y + oy;
    for (int64_t i = 0; i < n; ++i) yp[i] = std::pow(ap[i * sa], bp[i * sb]);
  });
}

void RunUnary(const vec::UnaryFn& f, const float* x, float* y, int64_t n, int threads) {
  const vec::Table& t = vec::Kernels();
  ParallelFor(threads, n, kGrain, [&](int64_t begin, int64_t end) {
    t.unary(f, x + begin, y + begin, end - begin);
  });
}

vec::UnaryFn ToUnaryFn(const ActivationSpec& spec) {
  using vec::Unary;
  Unary k = Unary::kIdentity;
  switch (spec.kind) {
    case Activation::kNone: k = Unary::kIdentity; break;
    case Activation::kRelu: k = Unary::kRelu; break;
    case Activation::kLeakyRelu: k = Unary::kLeakyRelu; break;
    case Activation::kClip: k = Unary::kClip; break;
    case Activation::kHardSigmoid: k = Unary::kHardSigmoid; break;
    case Activation::kHardSwish: k = Unary::kHardSwish; break;
    case Activation::kSigmoid: k = Unary::kSigmoid; break;
    case Activation::kTanh: k = Unary::kTanh; break;
    case Activation::kSilu: k = Unary::kSilu; break;
    case Activation::kGelu: k = Unary::kGelu; break;
    case Activation::kGeluTanh: k = Unary::kGeluTanh; break;
  }
  return vec::UnaryFn{k, spec.alpha, spec.beta};
}

}  // namespace edgec::cpu
