// Shape inference for the recurrent family (see ops.def): RNN, GRU and LSTM.
//   inputs  X [seq, batch, input] (layout 1: [batch, seq, input]), W [dirs, G·hidden, input],
//           R [dirs, G·hidden, hidden], B? [dirs, 2·G·hidden], sequence_lens? i32 [batch],
//           initial_h? [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]); LSTM also
//           initial_c? (as initial_h) and P? [dirs, 3·hidden] (peepholes i, o, f)
//   outputs Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs, hidden]), Y_h (as
//           initial_h); LSTM also Y_c
// with G the gate count (ir/recurrent.h), dirs 2 for direction "bidirectional", else 1.
#include "ir/infer.h"
#include "ir/recurrent.h"
#include "support/name_list.h"

namespace edgec::infer {

namespace {

bool Differ(int64_t a, int64_t b) { return a >= 0 && b >= 0 && a != b; }

Status Recurrent(InferContext& ctx) {
  const bool lstm = ctx.op() == OpKind::kLSTM;
  RETURN_IF_ERROR(ctx.ExpectInputs(3, lstm ? 8 : 6));
  RETURN_IF_ERROR(ctx.ExpectRequired(1));
  RETURN_IF_ERROR(ctx.ExpectRequired(2));
  const int max_outputs = lstm ? 3 : 2;
  if (ctx.num_outputs() > max_outputs) return ctx.Error("has {} outputs, expected at most {}", ctx.num_outputs(), max_outputs);
  RETURN_IF_ERROR(ctx.ExpectDType(0, {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}));
  const DType dt = ctx.input_type(0).dtype;
  for (int i : {1, 2, 3, 5, 6, 7}) {
    if (i < ctx.num_inputs() && ctx.has_input(i) && ctx.input_type(i).dtype != dt) {
      return ctx.Error("input {} is {}, expected X's dtype {}", i, DTypeName(ctx.input_type(i).dtype), DTypeName(dt));
    }
  }
  if (ctx.has_input(4)) RETURN_IF_ERROR(ctx.ExpectDType(4, {DType::kI32}));
  const std::string direction = ctx.attrs().GetString("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional") {
    return ctx.Error("attribute direction is '{}', expected forward, reverse or bidirectional", direction);
  }
  const int64_t dirs = direction == "bidirectional" ? 2 : 1;
  const int64_t layout = ctx.attrs().GetInt("layout", 0);
  if (layout != 0 && layout != 1) return ctx.Error("attribute layout is {}, expected 0 or 1", layout);
  if (lstm && ctx.attrs().GetInt("input_forget", 0) != 0 && ctx.attrs().GetInt("input_forget", 0) != 1) {
    return ctx.Error("attribute input_forget must be 0 or 1");
  }
  auto acts = ReadRecurrentActivations(ctx.op(), ctx.attrs(), static_cast<int>(dirs));
  if (!acts.ok()) return acts.status().WithContext(ctx.label());
  const int64_t gates = RecurrentGates(ctx.op());
  RETURN_IF_ERROR(ctx.ExpectRank(0, 3));
  RETURN_IF_ERROR(ctx.ExpectRank(1, 3));
  RETURN_IF_ERROR(ctx.ExpectRank(2, 3));
  const TensorType& x = ctx.input_type(0);
  const TensorType& w = ctx.input_type(1);
  const TensorType& r = ctx.input_type(2);
  int64_t hidden = ctx.attrs().GetInt("hidden_size", -1);
  if (hidden < 0 && r.rank_known) hidden = r.dims[2];
  if (hidden == 0) return ctx.Error("hidden_size is 0");
  const int64_t seq = x.rank_known ? x.dims[layout == 0 ? 0 : 1] : kUnknownDim;
  const int64_t batch = x.rank_known ? x.dims[layout == 0 ? 1 : 0] : kUnknownDim;
  if (w.rank_known && (Differ(w.dims[0], dirs) || Differ(w.dims[1], gates * hidden) ||
                       (x.rank_known && Differ(w.dims[2], x.dims[2])))) {
    return ctx.Error("W is {}, expected [{}, {}, input size]", w.ToString(), dirs, hidden < 0 ? -1 : gates * hidden);
  }
  if (r.rank_known && (Differ(r.dims[0], dirs) || Differ(r.dims[1], gates * hidden) || Differ(r.dims[2], hidden))) {
    return ctx.Error("R is {}, expected [{}, {}, {}]", r.ToString(), dirs, gates * hidden, hidden);
  }
  auto expect_dims = [&](int i, Dims want, const char* what) -> Status {
    if (i >= ctx.num_inputs() || !ctx.has_input(i)) return Status::Ok();
    const TensorType& t = ctx.input_type(i);
    if (!t.rank_known) return Status::Ok();
    bool bad = t.rank() != static_cast<int>(want.size());
    for (size_t k = 0; !bad && k < want.size(); ++k) bad = Differ(t.dims[k], want[k]);
    if (bad) return ctx.Error("{} (input {}) is {}, expected {}", what, i, t.ToString(), DimsToString(want));
    return Status::Ok();
  };
  const Dims state = layout == 0 ? Dims{dirs, batch, hidden} : Dims{batch, dirs, hidden};
  RETURN_IF_ERROR(expect_dims(3, {dirs, hidden < 0 ? kUnknownDim : 2 * gates * hidden}, "B"));
  RETURN_IF_ERROR(expect_dims(4, {batch}, "sequence_lens"));
  RETURN_IF_ERROR(expect_dims(5, state, "initial_h"));
  if (lstm) {
    RETURN_IF_ERROR(expect_dims(6, state, "initial_c"));
    RETURN_IF_ERROR(expect_dims(7, {dirs, hidden < 0 ? kUnknownDim : 3 * hidden}, "P"));
  }
  if (const Tensor* lens = ctx.input_value(4); lens && seq >= 0) {
    for (int64_t b = 0; b < lens->numel(); ++b) {
      const int64_t n = lens->data<int32_t>()[b];
      if (n < 0 || n > seq) return ctx.Error("sequence_lens[{}] = {} is outside [0, {}]", b, n, seq);
    }
  }
  if (ctx.num_outputs() > 0) {
    ctx.output(0) = MakeType(dt, layout == 0 ? Dims{seq, dirs, batch, hidden} : Dims{batch, seq, dirs, hidden});
  }
  for (int i = 1; i < ctx.num_outputs(); ++i) ctx.output(i) = MakeType(dt, state);
  return Status::Ok();
}

}  // namespace

EDGEC_SHARED_RULE(InferContext, Recurrent, RNN, GRU, LSTM)

}  // namespace edgec::infer
