#include "runtime/graph_io.h"

#include <cstring>
#include <unordered_map>

#include "runtime/graph_generated.h"
#include "support/limits.h"

namespace edgec::graph_io {
namespace {

namespace fb = edgec::graph_fb;
using flatbuffers::FlatBufferBuilder;
using flatbuffers::Offset;

Offset<flatbuffers::Vector<Offset<flatbuffers::String>>> Strings(FlatBufferBuilder& b,
                                                                 const std::vector<std::string>& v) {
  std::vector<Offset<flatbuffers::String>> s;
  for (const auto& x : v) s.push_back(b.CreateString(x));
  return b.CreateVector(s);
}

Offset<fb::TensorData> PutTensor(FlatBufferBuilder& b, const Tensor& t) {
  auto dims = b.CreateVector(std::vector<int64_t>(t.dims().begin(), t.dims().end()));
  b.ForceVectorAlignment(t.nbytes(), 1, 32);
  auto data = b.CreateVector(static_cast<const uint8_t*>(t.raw()), t.nbytes());
  return fb::CreateTensorData(b, static_cast<uint8_t>(t.dtype()), dims, data);
}

Offset<fb::Attr> PutAttr(FlatBufferBuilder& b, const std::string& name, const AttrValue& v) {
  auto n = b.CreateString(name);
  if (auto* x = std::get_if<int64_t>(&v)) return fb::CreateAttr(b, n, fb::AttrKind_Int, *x);
  if (auto* x = std::get_if<float>(&v)) return fb::CreateAttr(b, n, fb::AttrKind_Float, 0, *x);
  if (auto* x = std::get_if<std::string>(&v)) return fb::CreateAttr(b, n, fb::AttrKind_String, 0, 0, b.CreateString(*x));
  if (auto* x = std::get_if<std::vector<int64_t>>(&v))
    return fb::CreateAttr(b, n, fb::AttrKind_Ints, 0, 0, 0, b.CreateVector(*x));
  if (auto* x = std::get_if<std::vector<float>>(&v))
    return fb::CreateAttr(b, n, fb::AttrKind_Floats, 0, 0, 0, 0, b.CreateVector(*x));
  if (auto* x = std::get_if<std::vector<std::string>>(&v))
    return fb::CreateAttr(b, n, fb::AttrKind_Strings, 0, 0, 0, 0, 0, Strings(b, *x));
  if (auto* x = std::get_if<SubgraphPtr>(&v)) {
    std::vector<uint8_t> bytes = SerializeGraph(**x);
    return fb::CreateAttr(b, n, fb::AttrKind_Graph, 0, 0, 0, 0, 0, 0, 0, b.CreateVector(bytes));
  }
  const Tensor& t = std::get<Tensor>(v);
  auto td = PutTensor(b, t);
  return fb::CreateAttr(b, n, fb::AttrKind_Tensor, 0, 0, 0, 0, 0, 0, td);
}

// An int64 vector's elements, copied bytewise: the FlatBuffers verifier checks a vector's
// length word for 4-byte alignment only, so its int64 elements may sit 4 bytes off
// (fuzz_edgec_load, tests/fuzz/make_regressions.py misaligned_dims.edgec).
std::vector<int64_t> Longs(const flatbuffers::Vector<int64_t>* v) {
  std::vector<int64_t> r(v ? v->size() : 0);
  if (!r.empty()) std::memcpy(r.data(), v->Data(), r.size() * sizeof(int64_t));
  return r;
}

StatusOr<Tensor> GetTensor(const fb::TensorData* t, const std::string& what) {
  if (!t || !t->dims()) return InvalidArgument("{}: a tensor without dims", what);
  Dims dims = Longs(t->dims());
  for (int64_t d : dims)
    if (d < 0) return InvalidArgument("{}: a tensor dim {} < 0", what, d);
  if (t->dtype() == 0 || t->dtype() > static_cast<int>(DType::kBool))
    return InvalidArgument("{}: a tensor of unknown dtype {}", what, static_cast<int>(t->dtype()));
  const auto dtype = static_cast<DType>(t->dtype());
  // The data's size is checked against the dims before anything is allocated: fuzz_edgec_load
  // found a few bytes claiming 1.8 GB (tests/fuzz/make_regressions.py).
  ASSIGN_OR_RETURN(const int64_t n, CheckedNumElements(dims, DTypeSize(dtype)));
  const size_t have = t->data() ? t->data()->size() : 0;
  const int64_t need = n * static_cast<int64_t>(DTypeSize(dtype));
  if (static_cast<int64_t>(have) != need)
    return InvalidArgument("{}: {} data bytes for a {}{} tensor of {} bytes", what, have, DTypeName(dtype),
                           DimsToString(dims), need);
  ASSIGN_OR_RETURN(Tensor r, Tensor::Create(dtype, dims));
  if (have) std::memcpy(r.raw(), t->data()->data(), have);
  return r;
}

std::vector<std::string> GetStrings(const flatbuffers::Vector<Offset<flatbuffers::String>>* v) {
  std::vector<std::string> out;
  if (v)
    for (const auto* s : *v) out.push_back(s ? s->str() : std::string());
  return out;
}

std::string Str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

StatusOr<AttrValue> GetAttr(const fb::Attr* a, const std::string& what) {
  switch (a->kind()) {
    case fb::AttrKind_Int: return AttrValue(a->i());
    case fb::AttrKind_Float: return AttrValue(a->f());
    case fb::AttrKind_String: return AttrValue(Str(a->s()));
    case fb::AttrKind_Ints:
      return AttrValue(Longs(a->ints()));
    case fb::AttrKind_Floats:
      return AttrValue(a->floats() ? std::vector<float>(a->floats()->begin(), a->floats()->end()) : std::vector<float>());
    case fb::AttrKind_Strings: return AttrValue(GetStrings(a->strings()));
    case fb::AttrKind_Tensor: {
      ASSIGN_OR_RETURN(Tensor t, GetTensor(a->t(), what));
      return AttrValue(std::move(t));
    }
    case fb::AttrKind_Graph: {
      if (!a->graph()) return InvalidArgument("{}: a graph attribute without bytes", what);
      ASSIGN_OR_RETURN(Graph g, DeserializeGraph(std::span<const uint8_t>(a->graph()->data(), a->graph()->size()), what));
      return AttrValue(SubgraphPtr(std::make_shared<Graph>(std::move(g))));
    }
  }
  return InvalidArgument("{}: attribute kind {} unknown", what, static_cast<int>(a->kind()));
}

}  // namespace

std::vector<uint8_t> SerializeGraph(const Graph& g) {
  FlatBufferBuilder b(1 << 20);
  std::unordered_map<const Value*, int> index;
  std::vector<const Value*> order;
  for (const Value* v : g.inputs()) order.push_back(v);
  const std::vector<Value*> constants = g.constants();
  for (const Value* v : constants) order.push_back(v);
  const std::vector<Node*> nodes = g.nodes();
  for (const Node* n : nodes)
    for (const Value* v : n->outputs()) order.push_back(v);
  for (size_t i = 0; i < order.size(); ++i) index[order[i]] = static_cast<int>(i);

  std::vector<Offset<fb::Value>> values;
  for (const Value* v : order) {
    Offset<fb::TensorData> c = 0;
    if (v->is_constant()) c = PutTensor(b, v->constant());
    Offset<fb::Quant> q = 0;
    if (v->quant) {
      q = fb::CreateQuant(b, b.CreateVector(v->quant->scales), b.CreateVector(v->quant->zero_points), v->quant->axis,
                          static_cast<uint8_t>(v->quant->storage));
    }
    values.push_back(fb::CreateValue(b, b.CreateString(v->name()), static_cast<uint8_t>(v->type.dtype),
                                     b.CreateVector(std::vector<int64_t>(v->type.dims.begin(), v->type.dims.end())),
                                     Strings(b, v->type.dim_names), v->type.rank_known, c, q,
                                     static_cast<uint8_t>(v->type.kind), v->type.optional));
  }
  std::vector<Offset<fb::Node>> fnodes;
  for (const Node* n : nodes) {
    std::vector<int> in, out;
    for (const Value* v : n->inputs()) in.push_back(v ? index.at(v) : -1);
    for (const Value* v : n->outputs()) out.push_back(index.at(v));
    std::vector<Offset<fb::Attr>> attrs;
    for (const auto& [name, value] : n->attrs.map()) attrs.push_back(PutAttr(b, name, value));
    fnodes.push_back(fb::CreateNode(b, b.CreateString(std::string(OpName(n->op()))), b.CreateString(n->name()),
                                    b.CreateVector(in), b.CreateVector(out), b.CreateVector(attrs),
                                    Strings(b, n->provenance), n->opset));
  }
  std::vector<int> outputs;
  for (const Value* v : g.outputs()) outputs.push_back(index.at(v));
  auto root = fb::CreateGraph(b, b.CreateString(g.name), b.CreateVector(values), static_cast<int>(g.inputs().size()),
                              static_cast<int>(constants.size()), b.CreateVector(fnodes), b.CreateVector(outputs));
  fb::FinishGraphBuffer(b, root);
  return std::vector<uint8_t>(b.GetBufferPointer(), b.GetBufferPointer() + b.GetSize());
}

StatusOr<Graph> DeserializeGraph(std::span<const uint8_t> bytes, const std::string& what) {
  // FlatBuffers reads scalars in place and its verifier checks alignment relative to the
  // buffer's start only: a buffer that is not 8-byte aligned in memory (a subgraph attribute's
  // [ubyte], or a damaged file) is read from an aligned copy. fuzz_edgec_load found the
  // misaligned int64 dims read (tests/fuzz/make_regressions.py, misaligned_graph.edgec).
  std::vector<uint64_t> aligned;
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignof(int64_t) != 0) {
    aligned.resize((bytes.size() + sizeof(uint64_t) - 1) / sizeof(uint64_t));
    if (!bytes.empty()) std::memcpy(aligned.data(), bytes.data(), bytes.size());
    bytes = std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(aligned.data()), bytes.size());
  }
  flatbuffers::Verifier v(bytes.data(), bytes.size(), /*max_depth=*/64, /*max_tables=*/10'000'000);
  if (bytes.size() < 8 || !fb::GraphBufferHasIdentifier(bytes.data()) || !fb::VerifyGraphBuffer(v))
    return InvalidArgument("{}: the compiled graph is damaged (its tables point outside it); recompile the model", what);
  const fb::Graph* root = fb::GetGraph(bytes.data());
  Graph g;
  g.name = Str(root->name());
  const auto* vals = root->values();
  const int nvals = vals ? static_cast<int>(vals->size()) : 0;
  const int ninputs = root->num_inputs(), nconst = root->num_constants();
  if (root->nodes()) RETURN_IF_ERROR(CheckNodeCount(root->nodes()->size(), what));
  if (ninputs < 0 || nconst < 0 || int64_t{ninputs} + nconst > nvals)
    return InvalidArgument("{}: the compiled graph lists {} inputs and {} constants among {} values", what, ninputs,
                           nconst, nvals);
  std::vector<Value*> by_index(nvals, nullptr);
  auto type_of = [](const fb::Value* fv) {
    TensorType t;
    t.dtype = static_cast<DType>(fv->dtype());
    if (fv->dims()) t.dims = Longs(fv->dims());
    t.dim_names = GetStrings(fv->dim_names());
    t.rank_known = fv->rank_known();
    t.kind = fv->kind() == static_cast<uint8_t>(ValueKind::kSequence) ? ValueKind::kSequence : ValueKind::kTensor;
    t.optional = fv->optional();
    return t;
  };
  auto finish = [&](Value* x, const fb::Value* fv) {
    x->type = type_of(fv);
    if (const fb::Quant* q = fv->quant()) {
      QuantParams p;
      if (q->scales()) p.scales.assign(q->scales()->begin(), q->scales()->end());
      if (q->zero_points()) p.zero_points.assign(q->zero_points()->begin(), q->zero_points()->end());
      p.axis = q->axis();
      p.storage = static_cast<DType>(q->storage());
      x->quant = std::move(p);
    }
  };
  for (int i = 0; i < ninputs + nconst; ++i) {
    const fb::Value* fv = vals->Get(i);
    const std::string name = Str(fv->name());
    if (i < ninputs) {
      by_index[i] = g.AddInput(name, type_of(fv));
    } else {
      ASSIGN_OR_RETURN(Tensor t, GetTensor(fv->constant(), fmt::format("{}: constant '{}'", what, name)));
      by_index[i] = g.AddConstant(name, std::move(t));
    }
    finish(by_index[i], fv);
  }
  if (root->nodes()) {
    for (const fb::Node* fn : *root->nodes()) {
      const std::string name = Str(fn->name());
      const std::string op_name = Str(fn->op());
      auto op = OpFromName(op_name);
      if (!op) return InvalidArgument("{}: node '{}' has op '{}', which this edgec does not know", what, name, op_name);
      std::vector<Value*> in;
      if (fn->inputs()) {
        for (int k : *fn->inputs()) {
          if (k < -1 || k >= nvals || (k >= 0 && !by_index[k]))
            return InvalidArgument("{}: node '{}' reads value {}, which is not defined before it", what, name, k);
          in.push_back(k < 0 ? nullptr : by_index[k]);
        }
      }
      std::vector<int> outs;
      std::vector<std::string> out_names;
      if (fn->outputs()) {
        for (int k : *fn->outputs()) {
          if (k < ninputs + nconst || k >= nvals || by_index[k])
            return InvalidArgument("{}: node '{}' writes value {}, which is not a fresh value", what, name, k);
          outs.push_back(k);
          out_names.push_back(Str(vals->Get(k)->name()));
        }
      }
      Node* n = g.AddNode(*op, name, std::move(in), static_cast<int>(outs.size()), out_names);
      for (size_t j = 0; j < outs.size(); ++j) {
        by_index[outs[j]] = n->output(static_cast<int>(j));
        finish(by_index[outs[j]], vals->Get(outs[j]));
      }
      if (fn->attrs()) {
        for (const fb::Attr* a : *fn->attrs()) {
          ASSIGN_OR_RETURN(AttrValue value, GetAttr(a, fmt::format("{}: {} attribute '{}'", what, n->Label(), Str(a->name()))));
          n->attrs.Set(Str(a->name()), std::move(value));
        }
      }
      n->provenance = GetStrings(fn->provenance());
      n->opset = fn->opset();
    }
  }
  if (root->outputs()) {
    for (int k : *root->outputs()) {
      if (k < 0 || k >= nvals || !by_index[k]) return InvalidArgument("{}: graph output {} is not defined", what, k);
      g.MarkOutput(by_index[k]);
    }
  }
  RETURN_IF_ERROR(Verify(g).WithContext(what));
  return g;
}

}  // namespace edgec::graph_io
