// Converters for If, Loop, Scan and SequenceMap: the graph attributes become subgraphs whose values from
// the enclosing scope are captures, trailing inputs of the node (ir/control_flow.h).
//   If                 both branches get the same captures, in one order
//   Loop               body inputs typed from the node's when the body leaves them untyped
//   Scan-9+            one to one
//   Scan-8             (a batch axis 0 on every input, scan axis 1) -> per batch row: Gather
//                      the row, a Scan-9 node, Unsqueeze its outputs, then Concat the rows
#include "frontend/onnx/converter.h"
#include "ir/control_flow.h"
#include "ir/infer.h"

namespace edgec::onnx_fe {

StatusOr<SubgraphPtr> ConvertContext::ImportSubgraph(const std::string& attr, std::vector<std::string>* captures,
                                                     const std::vector<TensorType>& hints) const {
  for (const auto& a : node_.attribute()) {
    if (a.name() != attr) continue;
    if (a.type() != onnx::AttributeProto::GRAPH) return Error("attribute '{}' must be a graph", attr);
    if (!import_subgraph_) return Unsupported("subgraphs cannot be imported here");
    return import_subgraph_(a.g(), attr, captures, hints);
  }
  return Error("attribute '{}' (a graph) is missing", attr);
}

namespace {

// The node's inputs for `captures` in the enclosing scope.
StatusOr<std::vector<Value*>> CaptureInputs(ConvertContext& c, const std::vector<std::string>& captures) {
  std::vector<Value*> v;
  for (const auto& name : captures) {
    Value* x = c.Lookup(name);
    if (!x) return c.Error("a subgraph reads '{}', which is not defined", name);
    v.push_back(x);
  }
  return v;
}

// dtype known, rank unknown: what a subgraph input that changes shape between iterations is.
// A sequence or optional keeps its kind.
TensorType DTypeOnly(const Value* v) {
  TensorType t = UnknownRank(v ? v->type.dtype : DType::kUndefined);
  if (v) {
    t.kind = v->type.kind;
    t.optional = v->type.optional;
  }
  return t;
}

Status EmitWithCaptures(ConvertContext& c, OpKind op, std::vector<Value*> inputs, Attributes a,
                        const std::vector<std::string>& captures) {
  ASSIGN_OR_RETURN(std::vector<Value*> cap, CaptureInputs(c, captures));
  inputs.insert(inputs.end(), cap.begin(), cap.end());
  a.Set(kCapturesAttr, static_cast<int64_t>(captures.size()));
  c.Emit(op, std::move(inputs), std::move(a));
  return Status::Ok();
}

// Appends the node's inputs [first, n) to `inputs` (each must be present: "`what` i is
// missing") and their body hints (DTypeOnly; `items`: the body sees one item of a sequence).
Status AddBodyInputs(ConvertContext& c, int first, const char* what, bool items, std::vector<Value*>& inputs,
                     std::vector<TensorType>& hints) {
  for (int i = first; i < c.num_inputs(); ++i) {
    if (!c.input(i)) return c.Error("{} {} is missing", what, i);
    inputs.push_back(c.input(i));
    TensorType t = DTypeOnly(c.input(i));
    if (items) t.kind = ValueKind::kTensor;
    hints.push_back(t);
  }
  return Status::Ok();
}

// Imports the graph attribute "body" with `hints` and sets it on `a`; the outer values it
// reads go to `captures`.
StatusOr<SubgraphPtr> ImportBody(ConvertContext& c, Attributes& a, const std::vector<TensorType>& hints,
                                 std::vector<std::string>& captures) {
  ASSIGN_OR_RETURN(SubgraphPtr body, c.ImportSubgraph("body", &captures, hints));
  a.Set("body", body);
  return body;
}

Status ConvertScan8(ConvertContext& c, Attributes a, SubgraphPtr body, const std::vector<std::string>& captures);

}  // namespace

Status ConvertIf(ConvertContext& c) {
  if (!c.input(0)) return c.Error("input 0 (cond) is missing");
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes(/*skip_graphs=*/true));
  std::vector<std::string> captures;
  ASSIGN_OR_RETURN(SubgraphPtr then_g, c.ImportSubgraph("then_branch", &captures));
  const size_t then_count = captures.size();
  ASSIGN_OR_RETURN(SubgraphPtr else_g, c.ImportSubgraph("else_branch", &captures));
  if (captures.size() != then_count) {
    // The else branch reads values the then branch does not: import it again with all of them.
    ASSIGN_OR_RETURN(then_g, c.ImportSubgraph("then_branch", &captures));
  }
  a.Set("then_branch", then_g);
  a.Set("else_branch", else_g);
  return EmitWithCaptures(c, OpKind::kIf, {c.input(0)}, std::move(a), captures);
}

Status ConvertLoop(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes(/*skip_graphs=*/true));
  std::vector<TensorType> hints = {MakeType(DType::kI64, {}), MakeType(DType::kBool, {})};
  std::vector<Value*> inputs = {c.input(0), c.input(1)};
  RETURN_IF_ERROR(AddBodyInputs(c, 2, "loop-carried input", /*items=*/false, inputs, hints));
  std::vector<std::string> captures;
  RETURN_IF_ERROR(ImportBody(c, a, hints, captures).status());
  return EmitWithCaptures(c, OpKind::kLoop, std::move(inputs), std::move(a), captures);
}

Status ConvertScan(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes(/*skip_graphs=*/true));
  const int first = c.opset() < 9 ? 1 : 0;  // Scan-8 starts with sequence_lens
  std::vector<TensorType> hints;
  std::vector<Value*> inputs;
  RETURN_IF_ERROR(AddBodyInputs(c, first, "input", /*items=*/false, inputs, hints));
  std::vector<std::string> captures;
  ASSIGN_OR_RETURN(SubgraphPtr body, ImportBody(c, a, hints, captures));
  if (c.opset() < 9) return ConvertScan8(c, std::move(a), body, captures);
  return EmitWithCaptures(c, OpKind::kScan, std::move(inputs), std::move(a), captures);
}

Status ConvertSequenceMap(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes(/*skip_graphs=*/true));
  std::vector<TensorType> hints;
  std::vector<Value*> inputs;
  RETURN_IF_ERROR(AddBodyInputs(c, 0, "input", /*items=*/true, inputs, hints));
  std::vector<std::string> captures;
  RETURN_IF_ERROR(ImportBody(c, a, hints, captures).status());
  return EmitWithCaptures(c, OpKind::kSequenceMap, std::move(inputs), std::move(a), captures);
}

namespace {

Status ConvertScan8(ConvertContext& c, Attributes a, SubgraphPtr body, const std::vector<std::string>& captures) {
  const int m = static_cast<int>(a.GetInt("num_scan_inputs", 0));
  const int formal = c.num_inputs() - 1;
  const int states = formal - m;
  if (m < 1 || states < 0) return c.Error("num_scan_inputs {} does not fit {} inputs", m, formal);
  const int scans = static_cast<int>(body->outputs().size()) - states;
  if (scans < 0) return c.Error("the body has fewer outputs than states");
  int64_t batch = -1;
  for (int i = 1; i <= formal; ++i) {
    const TensorType& t = c.input(i)->type;
    if (!t.rank_known || t.rank() < 1 || t.dims[0] < 0) {
      return c.Unsupported("Scan-8 needs a static batch dim; input {} is {}", i, t.ToString());
    }
    batch = t.dims[0];
  }
  if (Value* lens = c.input(0)) {
    if (!lens->is_constant()) return c.Unsupported("sequence_lens must be constant");
    const int64_t steps = c.input(1 + states)->type.dims.size() > 1 ? c.input(1 + states)->type.dims[1] : -1;
    for (int64_t l : lens->constant().ToInt64Vector()) {
      if (l != steps) return c.Unsupported("sequence_lens {} shorter than the {} steps", l, steps);
    }
  }
  Attributes scan9;
  scan9.Set("body", body);
  scan9.Set("num_scan_inputs", static_cast<int64_t>(m));
  if (a.Has("directions")) scan9.Set("scan_input_directions", a.GetInts("directions"));
  ASSIGN_OR_RETURN(std::vector<Value*> cap, CaptureInputs(c, captures));
  scan9.Set(kCapturesAttr, static_cast<int64_t>(captures.size()));
  const int outs = states + scans;
  std::vector<std::vector<Value*>> rows(outs);
  Value* zero = c.MakeConstant("axis0", Tensor::VectorI64({0}));
  for (int64_t b = 0; b < batch; ++b) {
    Value* index = c.MakeConstant("row", Tensor::ScalarI64(b));
    std::vector<Value*> in;
    for (int i = 1; i <= formal; ++i) {
      Attributes ga;
      ga.Set("axis", int64_t{0});
      in.push_back(c.Emit(OpKind::kGather, {c.input(i), index}, ga, false)->output(0));
    }
    in.insert(in.end(), cap.begin(), cap.end());
    Node* scan = c.Emit(OpKind::kScan, in, scan9, false, outs);
    for (int k = 0; k < outs; ++k) {
      rows[k].push_back(c.Emit(OpKind::kUnsqueeze, {scan->output(k), zero}, {}, false)->output(0));
    }
  }
  for (int k = 0; k < outs && k < c.node().output_size(); ++k) {
    Attributes ca;
    ca.Set("axis", int64_t{0});
    Node* cat = c.Emit(OpKind::kConcat, rows[k], ca, false);
    if (c.node().output(k).empty()) continue;
    RETURN_IF_ERROR(c.graph().RenameValue(cat->output(0), c.node().output(k)));
    c.aliases().push_back({c.node().output(k), cat->output(0)});
  }
  return Status::Ok();
}

}  // namespace

}  // namespace edgec::onnx_fe
