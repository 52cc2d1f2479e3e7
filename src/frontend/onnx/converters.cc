// The one table of ONNX op converters. Most ops map one-to-one ("Direct"); the others
// normalize older opsets to edgec's canonical forms:
//   Clip-6            min/max attributes      -> inputs
//   Squeeze/Unsqueeze-1..12, ReduceSum-1..12, other Reduce*: axes attribute -> input
//   Split-2..12       split attribute          -> input
//   Pad-2..10         pads/value attributes    -> inputs
//   Slice-1..9        starts/ends/axes attrs   -> inputs
//   TopK-1..9         k attribute              -> input
//   Dropout-7..11     ratio attribute          -> dropped (inference)
//   Upsample-7..9, Resize-10                   -> Resize-13 (asymmetric coordinates)
//   Softmax/LogSoftmax/Hardmax-1..12 (coerce to 2-D) -> Flatten, op(axis -1), Reshape
//   Cast              ONNX `to`                -> edgec DType
//   EyeLike, Random*, Bernoulli, Multinomial, SequenceEmpty: ONNX `dtype` -> edgec DType
//   Scatter-9..10                              -> ScatterElements (same meaning)
//   Constant                                   -> a constant Value, no node
#include <algorithm>
#include <cstdint>
#include <map>
#include <unordered_map>

#include <onnx/defs/schema.h>

#include "frontend/onnx/converter.h"

namespace edgec::onnx_fe {

Value* ConvertContext::input(int i) const {
  if (i >= node_.input_size() || node_.input(i).empty()) return nullptr;
  return lookup_(node_.input(i));
}

Value* ConvertContext::MakeConstant(const std::string& suffix, Tensor t) {
  std::string base = node_.name().empty() ? node_.op_type() : node_.name();
  return g_.AddConstant(g_.FreshName(base + "/" + suffix), std::move(t));
}

Node* ConvertContext::Emit(OpKind op, std::vector<Value*> inputs, Attributes attrs,
                           bool final_node, int num_outputs) {
  std::vector<std::string> names;
  std::string name = node_.name();
  if (final_node) {
    if (num_outputs < 0) num_outputs = node_.output_size();
    for (int i = 0; i < num_outputs; ++i) {
      names.push_back(i < node_.output_size() ? node_.output(i) : "");
    }
  } else {
    if (num_outputs < 0) num_outputs = 1;
    name = fmt::format("{}/{}{}", name.empty() ? node_.op_type() : name, OpName(op), counter_++);
  }
  Node* n = g_.AddNode(op, name, std::move(inputs), num_outputs, names);
  n->attrs = std::move(attrs);
  n->opset = opset_;
  n->provenance = {node_.name()};
  // A model edgec exported keeps the source names of fused/rewritten nodes in doc_string
  // ("edgec provenance: a b c"), so per-layer comparisons still match after a round trip.
  constexpr std::string_view kProvenance = "edgec provenance:";
  if (node_.doc_string().rfind(kProvenance, 0) == 0) {
    std::vector<std::string> prov;
    std::string rest = node_.doc_string().substr(kProvenance.size());
    size_t pos = 0;
    while (pos < rest.size()) {
      const size_t end = rest.find(' ', pos);
      const std::string item = rest.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
      if (!item.empty()) prov.push_back(item);
      if (end == std::string::npos) break;
      pos = end + 1;
    }
    if (!prov.empty()) n->provenance = std::move(prov);
  }
  emitted_.push_back(n);
  return n;
}

StatusOr<Attributes> ConvertContext::ConvertAttributes(bool skip_graphs) const {
  Attributes a;
  // A default-domain op's attributes have the types its ONNX schema declares; another type is
  // refused by name here rather than read as a missing attribute later
  // (tests/bad_models/run.py: "attribute of the wrong type").
  const onnx::OpSchema* schema =
      node_.domain().empty() || node_.domain() == "ai.onnx"
          ? onnx::OpSchemaRegistry::Schema(node_.op_type(), opset_, "")
          : nullptr;
  for (const auto& at : node_.attribute()) {
    const std::string& k = at.name();
    if (schema) {
      auto declared = schema->attributes().find(k);
      if (declared != schema->attributes().end() && declared->second.type != onnx::AttributeProto::UNDEFINED &&
          declared->second.type != at.type())
        return Error("attribute '{}' has type {}, expected {}", k,
                     onnx::AttributeProto::AttributeType_Name(at.type()),
                     onnx::AttributeProto::AttributeType_Name(declared->second.type));
    }
    switch (at.type()) {
      case onnx::AttributeProto::INT: a.Set(k, static_cast<int64_t>(at.i())); break;
      case onnx::AttributeProto::FLOAT: a.Set(k, at.f()); break;
      case onnx::AttributeProto::STRING: a.Set(k, at.s()); break;
      case onnx::AttributeProto::INTS:
        a.Set(k, std::vector<int64_t>(at.ints().begin(), at.ints().end()));
        break;
      case onnx::AttributeProto::FLOATS:
        a.Set(k, std::vector<float>(at.floats().begin(), at.floats().end()));
        break;
      case onnx::AttributeProto::STRINGS:
        a.Set(k, std::vector<std::string>(at.strings().begin(), at.strings().end()));
        break;
      case onnx::AttributeProto::TENSOR: {
        auto t = TensorFromProto(at.t(), model_dir_, fmt::format("{}: attribute '{}'", label(), k));
        if (!t.ok()) return t.status();
        a.Set(k, std::move(t).value());
        break;
      }
      case onnx::AttributeProto::GRAPH:
        if (skip_graphs) break;
        [[fallthrough]];
      default:
        return Unsupported("attribute '{}' has type {} (graphs, sparse tensors and type protos are "
                           "not supported)", k,
                           onnx::AttributeProto::AttributeType_Name(at.type()));
    }
  }
  return a;
}

namespace {

StatusOr<OpKind> KindOf(const ConvertContext& c) {
  auto k = OpFromName(c.node().op_type());
  if (!k) return c.Unsupported("unsupported op");
  return *k;
}

std::vector<Value*> AllInputs(const ConvertContext& c) {
  std::vector<Value*> v;
  for (int i = 0; i < c.num_inputs(); ++i) v.push_back(c.input(i));
  while (!v.empty() && !v.back()) v.pop_back();
  return v;
}

Status Direct(ConvertContext& c) {
  ASSIGN_OR_RETURN(OpKind k, KindOf(c));
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  if (c.opset() < 7) {
    // Opsets 1-6: `consumed_inputs` was an in-place hint; `broadcast` without `axis`
    // aligned trailing dims, which numpy broadcasting does too.
    a.Erase("consumed_inputs");
    if (a.Has("broadcast")) {
      if (a.Has("axis")) return c.Unsupported("legacy broadcast with 'axis' (opset {}) is not supported", c.opset());
      a.Erase("broadcast");
    }
  }
  c.Emit(k, AllInputs(c), std::move(a));
  return Status::Ok();
}

// Attributes of older opsets that are inputs now: below `below_opset` each moves into its input
// slot as a constant (kInts: an i64 vector; kInt: one i64 as a vector; kFloat: a scalar of
// input 0's dtype). A node that also has that input is an error.
enum class Moved : uint8_t { kInts, kInt, kFloat };
struct AttrInput {
  const char* attr;
  size_t slot;
  Moved as;
};
struct AttrInputs {
  int64_t below_opset;
  std::vector<AttrInput> moved;
};
constexpr int64_t kEveryOpset = INT64_MAX;

// The ops AttrsToInputs converts (FindConverter adds them to kConverters' entries).
const std::unordered_map<std::string, AttrInputs>& AttrInputTable() {
  static const std::unordered_map<std::string, AttrInputs> table = [] {
    std::unordered_map<std::string, AttrInputs> m = {
        {"Clip", {11, {{"min", 1, Moved::kFloat}, {"max", 2, Moved::kFloat}}}},
        {"Pad", {11, {{"pads", 1, Moved::kInts}, {"value", 2, Moved::kFloat}}}},
        {"Slice", {10, {{"starts", 1, Moved::kInts}, {"ends", 2, Moved::kInts}, {"axes", 3, Moved::kInts}}}},
        {"Split", {kEveryOpset, {{"split", 1, Moved::kInts}}}},
        {"TopK", {kEveryOpset, {{"k", 1, Moved::kInt}}}},
    };
    // The reductions, Squeeze and Unsqueeze: axes.
    for (const char* op : {"ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL2", "ReduceL1",
                           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "Squeeze", "Unsqueeze"})
      m.emplace(op, AttrInputs{kEveryOpset, {{"axes", 1, Moved::kInts}}});
    return m;
  }();
  return table;
}

Tensor MovedValue(const Attributes& a, const AttrInput& m, const std::vector<Value*>& ins) {
  if (m.as == Moved::kInts) return Tensor::VectorI64(a.GetInts(m.attr));
  if (m.as == Moved::kInt) return Tensor::VectorI64({a.GetInt(m.attr)});
  return Tensor::Scalar(a.GetFloat(m.attr)).CastTo(ins[0]->type.dtype);
}

Status AttrsToInputs(ConvertContext& c) {
  ASSIGN_OR_RETURN(OpKind k, KindOf(c));
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  auto ins = AllInputs(c);
  const AttrInputs& table = AttrInputTable().at(c.node().op_type());
  if (c.opset() < table.below_opset) {
    const bool typed = std::any_of(table.moved.begin(), table.moved.end(),
                                   [](const AttrInput& m) { return m.as == Moved::kFloat; });
    if (typed && ins.empty()) return c.Error("has no input");
    for (const AttrInput& m : table.moved) {
      if (!a.Has(m.attr)) continue;
      Tensor value = MovedValue(a, m, ins);
      a.Erase(m.attr);
      if (ins.size() <= m.slot) ins.resize(m.slot + 1, nullptr);
      if (ins[m.slot]) return c.Error("has both the '{}' attribute and input {}", m.attr, m.slot);
      ins[m.slot] = c.MakeConstant(m.attr, std::move(value));
    }
  }
  c.Emit(k, std::move(ins), std::move(a));
  return Status::Ok();
}

Status ConvertDropout(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  auto ins = AllInputs(c);
  a.Erase("ratio");  // opsets < 12; inference ignores it
  a.Erase("is_test");
  c.Emit(OpKind::kDropout, std::move(ins), std::move(a));
  return Status::Ok();
}

// Upsample-7 (scales attribute), Upsample-9 and Resize-10 (scales input) -> Resize.
Status ConvertUpsample(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  Value* x = c.input(0);
  if (!x) return c.Error("has no input");
  Value* scales = c.input(1);
  if (a.Has("scales")) {
    auto s = a.GetFloats("scales");
    scales = c.MakeConstant("scales", Tensor::FromVector<float>(
                                          DType::kF32, {static_cast<int64_t>(s.size())}, s));
    a.Erase("scales");
  }
  if (!scales) return c.Error("has no scales");
  std::string mode = a.GetString("mode", "nearest");
  if (mode == "bilinear") mode = "linear";  // Upsample-7 accepted both spellings
  Attributes r;
  r.Set("mode", mode);
  r.Set("coordinate_transformation_mode", std::string("asymmetric"));
  r.Set("nearest_mode", std::string("floor"));
  c.Emit(OpKind::kResize, {x, nullptr, scales}, std::move(r));
  return Status::Ok();
}

Status ConvertResize(ConvertContext& c) {
  if (c.opset() < 11) return ConvertUpsample(c);
  return Direct(c);
}

// Softmax-1..12 flattens to 2-D at `axis` (default 1). When axis is the last dim this is
// the opset-13 single-axis softmax; otherwise Flatten -> Softmax(-1) -> Reshape(Shape(x)).
Status ConvertSoftmaxFamily(ConvertContext& c) {
  ASSIGN_OR_RETURN(OpKind k, KindOf(c));
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  Value* x = c.input(0);
  if (!x) return c.Error("has no input");
  if (c.opset() >= 13) {
    c.Emit(k, {x}, std::move(a));
    return Status::Ok();
  }
  int64_t axis = a.GetInt("axis", 1);
  const TensorType& t = x->type;
  if (t.rank_known) {
    int r = t.rank();
    int64_t ax = axis < 0 ? axis + r : axis;
    if (ax == r - 1 || r <= 1) {
      Attributes s;
      s.Set("axis", int64_t{-1});
      c.Emit(k, {x}, std::move(s));
      return Status::Ok();
    }
  }
  Attributes fa;
  fa.Set("axis", axis);
  Node* flat = c.Emit(OpKind::kFlatten, {x}, fa, false);
  Attributes sa;
  sa.Set("axis", int64_t{-1});
  Node* sm = c.Emit(k, {flat->output(0)}, sa, false);
  Node* shape = c.Emit(OpKind::kShape, {x}, Attributes(), false);
  c.Emit(OpKind::kReshape, {sm->output(0), shape->output(0)}, Attributes());
  return Status::Ok();
}

Status ConvertCast(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  if (!a.Has("to")) return c.Error("has no 'to' attribute");
  auto dt = FromOnnxDType(static_cast<int>(a.GetInt("to")));
  if (!dt.ok()) return dt.status().WithContext(c.label() + ": attribute 'to'");
  a.Set("to", static_cast<int64_t>(*dt));
  c.Emit(OpKind::kCast, AllInputs(c), std::move(a));
  return Status::Ok();
}

// EyeLike and the random ops: ONNX `dtype` -> edgec DType.
Status ConvertDTypeAttr(ConvertContext& c) {
  ASSIGN_OR_RETURN(OpKind k, KindOf(c));
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  if (a.Has("dtype")) {
    auto dt = FromOnnxDType(static_cast<int>(a.GetInt("dtype")));
    if (!dt.ok()) return dt.status().WithContext(c.label() + ": attribute 'dtype'");
    a.Set("dtype", static_cast<int64_t>(*dt));
  }
  c.Emit(k, AllInputs(c), std::move(a));
  return Status::Ok();
}

// The window functions and MelWeightMatrix: ONNX `output_datatype` -> edgec DType.
Status ConvertOutputDType(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  if (a.Has("output_datatype")) {
    auto dt = FromOnnxDType(static_cast<int>(a.GetInt("output_datatype")));
    if (!dt.ok()) return dt.status().WithContext(c.label() + ": attribute 'output_datatype'");
    a.Set("output_datatype", static_cast<int64_t>(*dt));
  }
  ASSIGN_OR_RETURN(OpKind op, KindOf(c));
  c.Emit(op, AllInputs(c), std::move(a));
  return Status::Ok();
}

// Scatter (deprecated in opset 11) is ScatterElements without a reduction.
Status ConvertScatter(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  c.Emit(OpKind::kScatterElements, AllInputs(c), std::move(a));
  return Status::Ok();
}

Status ConvertConstant(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  std::optional<Tensor> t = ConstantAttributeValue(a);
  if (!t) {
    return c.Unsupported("needs a value, value_float(s) or value_int(s) attribute (sparse and "
                         "string constants are not supported)");
  }
  if (c.node().output_size() != 1) return c.Error("must have one output");
  // The value keeps the output's name (a graph output must keep it); AddConstant picks a
  // fresh one only when the name is taken.
  Value* v = c.graph().AddConstant(c.node().output(0), std::move(*t));
  c.aliases().push_back({c.node().output(0), v});
  return Status::Ok();
}

Status ConvertBatchNorm(ConvertContext& c) {
  ASSIGN_OR_RETURN(Attributes a, c.ConvertAttributes());
  if (c.opset() < 9) {
    if (a.GetInt("spatial", 1) != 1) return c.Unsupported("spatial=0 is not supported");
    a.Erase("spatial");
  }
  a.Erase("consumed_inputs");
  if (c.opset() < 14 && c.node().output_size() > 1) a.Set("training_mode", int64_t{1});
  c.Emit(OpKind::kBatchNormalization, AllInputs(c), std::move(a));
  return Status::Ok();
}

struct Entry {
  const char* op_type;
  ConvertFn fn;
};

// Every supported ONNX op type and its converter (and the ops of AttrInputTable).
const Entry kConverters[] = {
    {"Relu", Direct}, {"LeakyRelu", Direct}, {"PRelu", Direct},
    {"Sigmoid", Direct}, {"HardSigmoid", Direct}, {"HardSwish", Direct}, {"Tanh", Direct},
    {"Erf", Direct}, {"Exp", Direct}, {"Log", Direct}, {"Sqrt", Direct},
    {"Reciprocal", Direct}, {"Neg", Direct}, {"Abs", Direct}, {"Floor", Direct},
    {"Ceil", Direct}, {"Not", Direct}, {"Identity", Direct}, {"Dropout", ConvertDropout},
    {"Cast", ConvertCast}, {"Add", Direct}, {"Sub", Direct}, {"Mul", Direct}, {"Div", Direct},
    {"Pow", Direct}, {"Max", Direct}, {"Min", Direct}, {"Sum", Direct}, {"Mean", Direct},
    {"Equal", Direct}, {"Less", Direct}, {"Greater", Direct}, {"And", Direct}, {"Or", Direct},
    {"Where", Direct}, {"Softmax", ConvertSoftmaxFamily}, {"LogSoftmax", ConvertSoftmaxFamily},
    {"Conv", Direct}, {"ConvTranspose", Direct}, {"Gemm", Direct}, {"MatMul", Direct},
    {"Einsum", Direct}, {"MaxPool", Direct}, {"AveragePool", Direct},
    {"GlobalAveragePool", Direct}, {"GlobalMaxPool", Direct},
    {"BatchNormalization", ConvertBatchNorm}, {"InstanceNormalization", Direct},
    {"LayerNormalization", Direct}, {"ArgMax", Direct}, {"ArgMin", Direct}, {"Reshape", Direct},
    {"Flatten", Direct}, {"Transpose", Direct}, {"Concat", Direct}, {"Gather", Direct},
    {"GatherElements", Direct}, {"Shape", Direct}, {"Size", Direct},
    {"Constant", ConvertConstant}, {"ConstantOfShape", Direct}, {"Expand", Direct},
    {"Tile", Direct}, {"Range", Direct}, {"DepthToSpace", Direct},
    {"SpaceToDepth", Direct}, {"Resize", ConvertResize}, {"Upsample", ConvertUpsample},
    {"QuantizeLinear", Direct}, {"DequantizeLinear", Direct}, {"QLinearConv", Direct},
    {"QLinearMatMul", Direct}, {"MatMulInteger", Direct}, {"ConvInteger", Direct},
    // comparisons, casts and elementwise math
    {"LessOrEqual", Direct}, {"GreaterOrEqual", Direct}, {"CastLike", Direct}, {"Xor", Direct},
    {"Mod", Direct}, {"Sign", Direct}, {"Round", Direct}, {"IsNaN", Direct}, {"IsInf", Direct},
    // activations, trigonometric and hyperbolic functions
    {"Elu", Direct}, {"Selu", Direct}, {"Celu", Direct}, {"Softplus", Direct},
    {"Softsign", Direct}, {"ThresholdedRelu", Direct}, {"Shrink", Direct}, {"Sin", Direct},
    {"Cos", Direct}, {"Tan", Direct}, {"Asin", Direct}, {"Acos", Direct}, {"Atan", Direct},
    {"Sinh", Direct}, {"Cosh", Direct}, {"Asinh", Direct}, {"Acosh", Direct}, {"Atanh", Direct},
    // reductions, scans and normalizations
    {"Hardmax", ConvertSoftmaxFamily}, {"CumSum", Direct},
    {"MeanVarianceNormalization", Direct}, {"LRN", Direct},
    // indexing
    {"GatherND", Direct}, {"ScatterElements", Direct}, {"Scatter", ConvertScatter},
    {"ScatterND", Direct}, {"OneHot", Direct}, {"Trilu", Direct}, {"NonZero", Direct},
    {"EyeLike", ConvertDTypeAttr}, {"Compress", Direct},
    // bitwise, sequence reversal and linear algebra
    {"BitShift", Direct}, {"ReverseSequence", Direct}, {"Det", Direct},
    {"DynamicQuantizeLinear", Direct}, {"MaxUnpool", Direct},
    {"Unique", Direct},
    // detection tails and sampling
    {"NonMaxSuppression", Direct}, {"RoiAlign", Direct}, {"GridSample", Direct},
    // signal processing
    {"HannWindow", ConvertOutputDType}, {"HammingWindow", ConvertOutputDType},
    {"BlackmanWindow", ConvertOutputDType}, {"MelWeightMatrix", ConvertOutputDType},
    {"DFT", Direct}, {"STFT", Direct},
    // recurrent networks
    {"RNN", Direct}, {"GRU", Direct}, {"LSTM", Direct},
    // control flow
    {"If", ConvertIf}, {"Loop", ConvertLoop}, {"Scan", ConvertScan},
    // sequences and optionals
    {"SequenceConstruct", Direct}, {"SequenceEmpty", ConvertDTypeAttr}, {"SequenceInsert", Direct},
    {"SequenceErase", Direct}, {"SequenceAt", Direct}, {"SequenceLength", Direct},
    {"SplitToSequence", Direct}, {"ConcatFromSequence", Direct}, {"SequenceMap", ConvertSequenceMap},
    {"Optional", ConvertOptional}, {"OptionalHasElement", Direct}, {"OptionalGetElement", Direct},
    // text
    {"TfIdfVectorizer", Direct},
    // random values
    {"RandomUniform", ConvertDTypeAttr}, {"RandomNormal", ConvertDTypeAttr},
    {"RandomUniformLike", ConvertDTypeAttr}, {"RandomNormalLike", ConvertDTypeAttr},
    {"Bernoulli", ConvertDTypeAttr}, {"Multinomial", ConvertDTypeAttr},
    // losses
    {"NegativeLogLikelihoodLoss", Direct}, {"SoftmaxCrossEntropyLoss", Direct},
};

}  // namespace

Status ConvertOneToOne(ConvertContext& c) { return Direct(c); }

ConvertFn FindConverter(const std::string& op_type) {
  static const std::unordered_map<std::string, ConvertFn> table = [] {
    std::unordered_map<std::string, ConvertFn> m;
    for (const Entry& e : kConverters) m[e.op_type] = e.fn;
    for (const auto& [op_type, moved] : AttrInputTable()) m[op_type] = AttrsToInputs;
    return m;
  }();
  auto it = table.find(op_type);
  return it == table.end() ? nullptr : it->second;
}

std::vector<std::string> SupportedOnnxOps() {
  std::vector<std::string> v;
  for (const Entry& e : kConverters) v.push_back(e.op_type);
  for (const auto& [op_type, moved] : AttrInputTable()) v.push_back(op_type);
  return v;
}

}  // namespace edgec::onnx_fe
