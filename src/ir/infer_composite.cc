// Shape inference for the composite family (see ops.def): internal ops that the fusion
// passes make out of exporter patterns (Gelu, RmsNormalization, Attention, ChannelShuffle).
#include "ir/infer.h"

namespace edgec::infer {

namespace {

bool Known(int64_t d) { return d != kUnknownDim; }

const std::initializer_list<DType> kFloatTypes = {DType::kF32, DType::kF64, DType::kF16,
                                                  DType::kBF16};

Status ExpectSameDType(const InferContext& ctx, int i, int ref) {
  if (ctx.has_input(i) && ctx.input_type(i).dtype != ctx.input_type(ref).dtype) {
    return ctx.Error("input {} has dtype {}, expected input {}'s dtype {}", i,
                     DTypeName(ctx.input_type(i).dtype), ref, DTypeName(ctx.input_type(ref).dtype));
  }
  return Status::Ok();
}

Status ExpectOneOutput(const InferContext& ctx) {
  if (ctx.num_outputs() != 1) return ctx.Error("has {} outputs, expected 1", ctx.num_outputs());
  return Status::Ok();
}

// A normalization's epsilon attribute (default 1e-5) must be >= 0.
Status ExpectEpsilon(const InferContext& ctx) {
  const float epsilon = ctx.attrs().GetFloat("epsilon", 1e-5f);
  if (!(epsilon >= 0)) return ctx.Error("attribute epsilon is {}, expected >= 0", epsilon);
  return Status::Ok();
}

}  // namespace

// Gelu(X): elementwise, same type as X.
Status Gelu(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  const std::string approximate = ctx.attrs().GetString("approximate", "none");
  if (approximate != "none" && approximate != "tanh") {
    return ctx.Error("attribute approximate is '{}', expected 'none' or 'tanh'", approximate);
  }
  ctx.output(0) = ctx.input_type(0);
  ctx.output(0).dim_names.clear();
  return Status::Ok();
}

// RmsNormalization(X, Scale): Y has X's type; Scale broadcasts to X.
Status RmsNormalization(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(2, 2));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  RETURN_IF_ERROR(ExpectSameDType(ctx, 1, 0));
  RETURN_IF_ERROR(ExpectEpsilon(ctx));
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(x.dtype);
    return Status::Ok();
  }
  if (x.rank() < 1) return ctx.Error("input 0 (X) is a scalar, expected at least 1 dim");
  auto axis = NormalizeAxis(ctx.attrs().GetInt("axis", -1), x.rank(), "attribute axis");
  if (!axis.ok()) return axis.status().WithContext(ctx.label());
  RETURN_IF_ERROR(ExpectBroadcastsTo(ctx, 1, "Scale", x.dims));
  ctx.output(0) = MakeType(x.dtype, x.dims);
  return Status::Ok();
}

Status GroupNormalization(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 3));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  for (int i : {1, 2}) {
    RETURN_IF_ERROR(ctx.ExpectRequired(i));
    RETURN_IF_ERROR(ExpectSameDType(ctx, i, 0));
  }
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  RETURN_IF_ERROR(ExpectEpsilon(ctx));
  const TensorType& x = ctx.input_type(0);
  if (!x.rank_known) {
    ctx.output(0) = UnknownRank(x.dtype);
    return Status::Ok();
  }
  if (x.rank() < 3) return ctx.Error("input 0 (X) is {}, expected [N, C, spatial...]", x.ToString());
  const int64_t groups = ctx.attrs().GetInt("num_groups", 0), c = x.dims[1];
  if (groups < 1 || (c != kUnknownDim && c % groups != 0))
    return ctx.Error("attribute num_groups {} does not divide the {} channels", groups, c);
  for (int i : {1, 2}) {
    const TensorType& t = ctx.input_type(i);
    if (t.rank_known && (t.rank() != 1 || (c != kUnknownDim && t.dims[0] != kUnknownDim && t.dims[0] != c)))
      return ctx.Error("input {} ({}) is {}, expected [{}]", i, i == 1 ? "Scale" : "B", t.ToString(), c);
  }
  ctx.output(0) = MakeType(x.dtype, x.dims);
  return Status::Ok();
}

// Attention(Q [..., Sq, D], K [..., Sk, D] or [..., D, Sk], V [..., Sk, Dv], Mask?):
// Y [batch..., Sq, Dv] with the batch dims of Q, K and V broadcast; Mask broadcasts to
// the scores [batch..., Sq, Sk].
Status Attention(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(3, 4));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  for (int i = 0; i < 3; ++i) RETURN_IF_ERROR(ctx.ExpectRequired(i));
  RETURN_IF_ERROR(ctx.ExpectDType(0, kFloatTypes));
  for (int i = 1; i < 4; ++i) RETURN_IF_ERROR(ExpectSameDType(ctx, i, 0));
  const int64_t k_transposed = ctx.attrs().GetInt("k_transposed", 0);
  if (k_transposed != 0 && k_transposed != 1) {
    return ctx.Error("attribute k_transposed is {}, expected 0 or 1", k_transposed);
  }
  const DType dt = ctx.input_type(0).dtype;
  const char* names[] = {"Q", "K", "V"};
  for (int i = 0; i < 3; ++i) {
    const TensorType& t = ctx.input_type(i);
    if (t.rank_known && t.rank() < 2) {
      return ctx.Error("input {} ({}) is {}, expected at least 2 dims", i, names[i], t.ToString());
    }
  }
  const TensorType &q = ctx.input_type(0), &k = ctx.input_type(1), &v = ctx.input_type(2);
  if (!q.rank_known || !k.rank_known || !v.rank_known) {
    ctx.output(0) = UnknownRank(dt);
    return Status::Ok();
  }
  auto tail = [](const Dims& d, int from_end) { return d[d.size() - from_end]; };
  const int64_t sq = tail(q.dims, 2), d_q = tail(q.dims, 1);
  const int64_t d_k = k_transposed ? tail(k.dims, 2) : tail(k.dims, 1);
  const int64_t sk = k_transposed ? tail(k.dims, 1) : tail(k.dims, 2);
  const int64_t sk_v = tail(v.dims, 2), dv = tail(v.dims, 1);
  if (Known(d_q) && Known(d_k) && d_q != d_k) {
    return ctx.Error("head dims do not match: Q {} has D = {} but K {} (k_transposed={}) has D = {}",
                     q.ToString(), d_q, k.ToString(), k_transposed, d_k);
  }
  if (Known(sk) && Known(sk_v) && sk != sk_v) {
    return ctx.Error("key lengths do not match: K {} (k_transposed={}) has {} keys but V {} has {}",
                     k.ToString(), k_transposed, sk, v.ToString(), sk_v);
  }
  auto batch_of = [](const Dims& d) { return Dims(d.begin(), d.end() - 2); };
  auto qk = BroadcastDims(batch_of(q.dims), batch_of(k.dims));
  StatusOr<Dims> batch = qk.ok() ? BroadcastDims(*qk, batch_of(v.dims)) : qk;
  if (!batch.ok()) {
    return ctx.Error("batch dims of Q {}, K {} and V {} do not broadcast", q.ToString(),
                     k.ToString(), v.ToString());
  }
  if (ctx.has_input(3)) {
    Dims scores = *batch;
    scores.push_back(sq);
    scores.push_back(sk);
    RETURN_IF_ERROR(ExpectBroadcastsTo(ctx, 3, "Mask", scores));
  }
  Dims out = *batch;
  out.push_back(sq);
  out.push_back(dv);
  ctx.output(0) = MakeType(dt, std::move(out));
  return Status::Ok();
}

// ChannelShuffle(X): X of rank >= 3, group >= 1 dividing dim 1; Y has X's type.
Status ChannelShuffle(InferContext& ctx) {
  RETURN_IF_ERROR(ctx.ExpectInputs(1, 1));
  RETURN_IF_ERROR(ExpectOneOutput(ctx));
  const TensorType& x = ctx.input_type(0);
  const int64_t group = ctx.attrs().GetInt("group", 0);
  if (group < 1) return ctx.Error("attribute group is {}, expected at least 1", group);
  if (x.rank_known) {
    if (x.rank() < 3) return ctx.Error("input 0 has rank {}, expected at least 3 (N, C, spatial...)", x.rank());
    if (Known(x.dims[1]) && x.dims[1] % group != 0)
      return ctx.Error("input 0 has {} channels, not a multiple of group {}", x.dims[1], group);
  }
  ctx.output(0) = x;
  return Status::Ok();
}

}  // namespace edgec::infer
