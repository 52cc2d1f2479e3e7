// Reference kernels for the reduce family (see ops.def).
//
// Values are widened before they are combined: floating dtypes (f16/bf16 included) to
// double, integer dtypes to int64 (to double for the logarithmic reductions). Results are
// narrowed back to the output dtype.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "kernels/ref/elementwise_util.h"
#include "kernels/ref/kernel.h"

namespace edgec::ref {

namespace {

// --- widening and narrowing ---

template <typename A>
std::vector<A> Widen(const Tensor& t) {
  if constexpr (std::is_same_v<A, double>) return t.ToDoubleVector();
  else return t.ToInt64Vector();
}

void StoreInt64(Tensor& t, int64_t i, int64_t v) {
  EDGEC_DISPATCH_NUMERIC(t.dtype(), t.data<T>()[i] = static_cast<T>(v), break)
}

template <typename A>
void Narrow(const std::vector<A>& values, Tensor& out) {
  for (int64_t i = 0; i < out.numel(); ++i) {
    if constexpr (std::is_same_v<A, double>) StoreFromDouble(out.dtype(), out.raw(), i, values[i]);
    else StoreInt64(out, i, values[i]);
  }
}

template <typename A>
bool IsNan(A v) {
  if constexpr (std::is_same_v<A, double>) return std::isnan(v);
  else return false;
}

// --- Reduce* over a set of axes ---

enum class ReduceKind { kMean, kSum, kMax, kMin, kProd, kL2, kL1, kSumSquare, kLogSum, kLogSumExp };

// The kinds whose result is a logarithm: computed in double for every input dtype.
bool IsLogarithmic(ReduceKind kind) {
  return kind == ReduceKind::kLogSum || kind == ReduceKind::kLogSumExp;
}

// log(exp(a) + exp(b)) without overflow: max(a, b) + log1p(exp(-|a - b|)).
double LogAddExp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<double>::quiet_NaN();
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  const double m = std::max(a, b);
  if (std::isinf(m)) return m;
  return m + std::log1p(std::exp(-std::fabs(a - b)));
}

// Which axes of `in` are reduced: the axes input, else the attribute; empty means all
// axes, or none with noop_with_empty_axes=1.
std::vector<bool> ReducedAxes(const KernelContext& ctx, int rank) {
  std::vector<int64_t> axes = ctx.input(1) ? ctx.input(1)->ToInt64Vector()
                                           : ctx.attrs.GetInts("axes");
  if (axes.empty()) {
    bool noop = ctx.attrs.GetInt("noop_with_empty_axes", 0) != 0;
    return std::vector<bool>(rank, !noop);
  }
  std::vector<bool> reduced(rank, false);
  for (int64_t a : axes) reduced[a < 0 ? a + rank : a] = true;
  return reduced;
}

template <typename A>
A Identity(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kProd: return A(1);
    case ReduceKind::kMax:
      return std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::lowest();
    case ReduceKind::kMin:
      return std::numeric_limits<A>::has_infinity ? std::numeric_limits<A>::infinity()
                                                  : std::numeric_limits<A>::max();
    case ReduceKind::kLogSumExp: return -std::numeric_limits<A>::infinity();  // A is double
    default: return A(0);
  }
}

template <typename A>
A Combine(ReduceKind kind, A acc, A v) {
  switch (kind) {
    case ReduceKind::kMean:
    case ReduceKind::kSum: return acc + v;
    case ReduceKind::kProd: return acc * v;
    case ReduceKind::kMax: return (v > acc || IsNan(v)) && !IsNan(acc) ? v : acc;
    case ReduceKind::kMin: return (v < acc || IsNan(v)) && !IsNan(acc) ? v : acc;
    case ReduceKind::kL2:
    case ReduceKind::kSumSquare: return acc + v * v;
    case ReduceKind::kL1: return acc + (v < A(0) ? A(0) - v : v);
    case ReduceKind::kLogSum: return acc + v;
    case ReduceKind::kLogSumExp:
      if constexpr (std::is_same_v<A, double>) return LogAddExp(acc, v);
      else return acc;  // not reached: logarithmic kinds reduce in double
  }
  return acc;
}

template <typename A>
A Finish(ReduceKind kind, A acc, int64_t count) {
  if (kind == ReduceKind::kL2) return static_cast<A>(std::sqrt(static_cast<double>(acc)));
  if (kind == ReduceKind::kLogSum) return static_cast<A>(std::log(static_cast<double>(acc)));
  if (kind == ReduceKind::kMean) {
    if constexpr (std::is_same_v<A, double>) return acc / static_cast<double>(count);  // 0/0: NaN
    else return count ? acc / count : 0;
  }
  return acc;
}

template <typename A>
void ReduceWith(ReduceKind kind, const Tensor& in, const std::vector<bool>& reduced, Tensor& out) {
  const std::vector<A> values = Widen<A>(in);
  const int rank = in.rank();
  // Strides of the output over the input's index space (0 on reduced axes).
  Dims kept_dims(rank);
  for (int k = 0; k < rank; ++k) kept_dims[k] = reduced[k] ? 1 : in.dim(k);
  std::vector<int64_t> out_strides = ContiguousStrides(kept_dims);
  for (int k = 0; k < rank; ++k) {
    if (reduced[k]) out_strides[k] = 0;
  }
  const int64_t out_count = NumElements(kept_dims);
  std::vector<A> acc(out_count, Identity<A>(kind));
  std::vector<int64_t> index(rank, 0);
  int64_t o = 0;
  for (int64_t i = 0; i < in.numel(); ++i) {
    acc[o] = Combine(kind, acc[o], values[i]);
    for (int k = rank - 1; k >= 0; --k) {
      o += out_strides[k];
      if (++index[k] < in.dim(k)) break;
      o -= out_strides[k] * in.dim(k);
      index[k] = 0;
    }
  }
  int64_t reduced_count = 1;
  for (int k = 0; k < rank; ++k) {
    if (reduced[k]) reduced_count *= in.dim(k);
  }
  for (A& a : acc) a = Finish(kind, a, reduced_count);
  Narrow(acc, out);
}

Status Reduce(KernelContext& ctx, ReduceKind kind) {
  const Tensor& in = *ctx.inputs[0];
  std::vector<bool> reduced = ReducedAxes(ctx, in.rank());
  if (IsFloat(in.dtype()) || IsLogarithmic(kind)) ReduceWith<double>(kind, in, reduced, ctx.outputs[0]);
  else ReduceWith<int64_t>(kind, in, reduced, ctx.outputs[0]);
  return Status::Ok();
}

// --- ArgMax / ArgMin ---

// Whether `v` beats the current best `best`: NaN beats everything (as numpy), ties go to
// the later index only with select_last_index.
template <typename A>
bool Beats(A v, A best, bool largest, bool select_last) {
  if (IsNan(best)) return false;
  if (IsNan(v)) return true;
  if (v == best) return select_last;
  return largest ? v > best : v < best;
}

template <typename A>
void ArgReduceWith(const KernelContext& ctx, bool largest) {
  const Tensor& in = *ctx.inputs[0];
  const std::vector<A> values = Widen<A>(in);
  int64_t axis = ctx.attrs.GetInt("axis", 0);
  if (axis < 0) axis += in.rank();
  const bool select_last = ctx.attrs.GetInt("select_last_index", 0) != 0;
  const int64_t outer = NumElements(std::span(in.dims()).first(axis));
  const int64_t dim = in.dim(static_cast<int>(axis));
  const int64_t inner = NumElements(std::span(in.dims()).subspan(axis + 1));
  int64_t* out = ctx.outputs[0].data<int64_t>();
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const A* slice = values.data() + o * dim * inner + i;
      int64_t best = 0;
      for (int64_t j = 1; j < dim; ++j) {
        if (Beats(slice[j * inner], slice[best * inner], largest, select_last)) best = j;
      }
      out[o * inner + i] = best;
    }
  }
}

Status ArgReduce(KernelContext& ctx, bool largest) {
  if (IsFloat(ctx.inputs[0]->dtype())) ArgReduceWith<double>(ctx, largest);
  else ArgReduceWith<int64_t>(ctx, largest);
  return Status::Ok();
}

// --- TopK ---

// Sorts each slice along `axis` by value (largest or smallest first, NaN counted as the
// largest value), ties by lower index, and keeps the first k. The values are copied as
// bytes from the input so they are exact for every dtype.
template <typename A>
void TopKWith(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  const std::vector<A> values = Widen<A>(in);
  int64_t axis = ctx.attrs.GetInt("axis", -1);
  if (axis < 0) axis += in.rank();
  const bool largest = ctx.attrs.GetInt("largest", 1) != 0;
  const int64_t k = ctx.inputs[1]->ToInt64Vector()[0];
  const int64_t outer = NumElements(std::span(in.dims()).first(axis));
  const int64_t dim = in.dim(static_cast<int>(axis));
  const int64_t inner = NumElements(std::span(in.dims()).subspan(axis + 1));
  const size_t es = DTypeSize(in.dtype());
  const auto* src = static_cast<const std::byte*>(in.raw());
  auto* out_values = static_cast<std::byte*>(ctx.outputs[0].raw());
  int64_t* out_indices = ctx.outputs[1].data<int64_t>();

  auto greater = [](A a, A b) { return IsNan(a) ? !IsNan(b) : (!IsNan(b) && a > b); };
  std::vector<int64_t> order(dim);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * dim * inner + i;
      auto before = [&](int64_t x, int64_t y) {
        A a = values[base + x * inner], b = values[base + y * inner];
        if (greater(a, b)) return largest;
        if (greater(b, a)) return !largest;
        return x < y;
      };
      std::iota(order.begin(), order.end(), 0);
      std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        const int64_t dst = o * k * inner + j * inner + i;
        std::memcpy(out_values + dst * es, src + (base + order[j] * inner) * es, es);
        out_indices[dst] = order[j];
      }
    }
  }
}

// --- CumSum ---

// Running sums along `axis`: out[j] = sum of in[k] for k <= j (k < j when exclusive; k >= j
// or k > j when reversed). Integer sums wrap as two's complement when narrowed.
template <typename A>
void CumSumWith(KernelContext& ctx) {
  const Tensor& in = *ctx.inputs[0];
  const std::vector<A> values = Widen<A>(in);
  int64_t axis = ctx.inputs[1]->ToInt64Vector()[0];
  if (axis < 0) axis += in.rank();
  const bool exclusive = ctx.attrs.GetInt("exclusive", 0) != 0;
  const bool reverse = ctx.attrs.GetInt("reverse", 0) != 0;
  const int64_t outer = NumElements(std::span(in.dims()).first(axis));
  const int64_t dim = in.dim(static_cast<int>(axis));
  const int64_t inner = NumElements(std::span(in.dims()).subspan(axis + 1));
  std::vector<A> sums(values.size(), A(0));
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * dim * inner + i;
      A running = A(0);
      auto add = [&running](A v) {
        if constexpr (std::is_same_v<A, double>) running += v;
        else running = WrapAdd(running, v);
      };
      for (int64_t step = 0; step < dim; ++step) {
        const int64_t j = reverse ? dim - 1 - step : step;
        const int64_t at = base + j * inner;
        if (exclusive) {
          sums[at] = running;
          add(values[at]);
        } else {
          add(values[at]);
          sums[at] = running;
        }
      }
    }
  }
  Narrow(sums, ctx.outputs[0]);
}

}  // namespace

Status ReduceMean(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kMean); }
Status ReduceSum(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kSum); }
Status ReduceMax(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kMax); }
Status ReduceMin(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kMin); }
Status ReduceProd(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kProd); }
Status ReduceL2(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kL2); }
Status ReduceL1(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kL1); }
Status ReduceSumSquare(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kSumSquare); }
Status ReduceLogSum(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kLogSum); }
Status ReduceLogSumExp(KernelContext& ctx) { return Reduce(ctx, ReduceKind::kLogSumExp); }
Status ArgMax(KernelContext& ctx) { return ArgReduce(ctx, /*largest=*/true); }
Status ArgMin(KernelContext& ctx) { return ArgReduce(ctx, /*largest=*/false); }

Status TopK(KernelContext& ctx) {
  if (IsFloat(ctx.inputs[0]->dtype())) TopKWith<double>(ctx);
  else TopKWith<int64_t>(ctx);
  return Status::Ok();
}

Status CumSum(KernelContext& ctx) {
  if (IsFloat(ctx.inputs[0]->dtype())) CumSumWith<double>(ctx);
  else CumSumWith<int64_t>(ctx);
  return Status::Ok();
}

}  // namespace edgec::ref
