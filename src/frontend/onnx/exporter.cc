#include "frontend/onnx/exporter.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "frontend/onnx/onnx_tensor.h"
#include "ir/control_flow.h"
#include "ir/infer.h"
#include "ir/physical_layout.h"

namespace edgec::onnx_fe {
namespace {

void SetAttribute(const std::string& name, const AttrValue& v, onnx::AttributeProto* a) {
  a->set_name(name);
  std::visit(
      [&](const auto& x) {
        using X = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<X, int64_t>) {
          a->set_type(onnx::AttributeProto::INT);
          a->set_i(x);
        } else if constexpr (std::is_same_v<X, float>) {
          a->set_type(onnx::AttributeProto::FLOAT);
          a->set_f(x);
        } else if constexpr (std::is_same_v<X, std::string>) {
          a->set_type(onnx::AttributeProto::STRING);
          a->set_s(x);
        } else if constexpr (std::is_same_v<X, std::vector<int64_t>>) {
          a->set_type(onnx::AttributeProto::INTS);
          for (auto i : x) a->add_ints(i);
        } else if constexpr (std::is_same_v<X, std::vector<float>>) {
          a->set_type(onnx::AttributeProto::FLOATS);
          for (auto f : x) a->add_floats(f);
        } else if constexpr (std::is_same_v<X, std::vector<std::string>>) {
          a->set_type(onnx::AttributeProto::STRINGS);
          for (auto& s : x) a->add_strings(s);
        } else if constexpr (std::is_same_v<X, SubgraphPtr>) {
          EDGEC_CHECK(false && "subgraph attributes are written by ModelWriter::Write");
        } else {
          a->set_type(onnx::AttributeProto::TENSOR);
          TensorToProto(x, "", a->mutable_t());
        }
      },
      v);
}

bool AxesAreAttributeAtOpset17(OpKind op) {
  switch (op) {
    case OpKind::kReduceMean: case OpKind::kReduceMax: case OpKind::kReduceMin:
    case OpKind::kReduceProd: case OpKind::kReduceL2: case OpKind::kReduceL1:
    case OpKind::kReduceSumSquare: case OpKind::kReduceLogSum: case OpKind::kReduceLogSumExp:
      return true;
    default:
      return false;
  }
}

// A QuantizeLinear to int16 or a DequantizeLinear from int16.
bool IsInt16Qdq(const Node& n) {
  if (n.op() == OpKind::kQuantizeLinear) return n.output(0) && n.output(0)->type.dtype == DType::kI16;
  if (n.op() == OpKind::kDequantizeLinear) return n.input(0) && n.input(0)->type.dtype == DType::kI16;
  return false;
}

}  // namespace

namespace {

// What the graphs of one model share while they are written.
struct ModelWriter {
  const ExportOptions& opt;
  onnx::ModelProto& m;
  std::set<std::string> domains;  // the other domains the model imports
  // Node names must be unique in ONNX (ONNX Runtime refuses a file with two nodes of one
  // name), while passes name the nodes they make after a pattern ("Attention/k_transposed"
  // in every block): a repeated name gets the first free "<name>_<k>".
  std::unordered_set<std::string> taken, written;

  std::string UniqueName(const std::string& name) {
    if (name.empty() || written.insert(name).second) return name;
    for (int k = 2;; ++k) {
      std::string candidate = fmt::format("{}_{}", name, k);
      if (!taken.count(candidate) && written.insert(candidate).second) return candidate;
    }
  }
  void Reserve(const Graph& g) {
    for (const Node* n : g.nodes()) {
      taken.insert(n->name());
      for (const auto& [attr, sub] : Subgraphs(n->attrs)) Reserve(*sub);
    }
  }

  // Writes `g` into `gp`. A subgraph's captures (ir/control_flow.h) are not written as its
  // inputs: its readers read the enclosing graph's names `captured` instead.
  Status Write(const Graph& g, onnx::GraphProto* gp, int formal_inputs,
               const std::vector<std::string>& captured);
};

Status ModelWriter::Write(const Graph& g, onnx::GraphProto* gp, int formal_inputs,
                          const std::vector<std::string>& captured) {
  // Layout conversions (physical_layout.h) are the identity on logical values: dropped, their
  // readers read the conversion's input (an Identity stays where the output is a graph output).
  std::unordered_map<const Value*, std::string> renamed;
  auto name_of = [&](const Value* v) {
    auto it = renamed.find(v);
    return it == renamed.end() ? v->name() : it->second;
  };
  for (int i = 0; i < static_cast<int>(g.inputs().size()); ++i) {
    const Value* v = g.inputs()[i];
    if (formal_inputs >= 0 && i >= formal_inputs) {
      renamed[v] = captured.at(i - formal_inputs);
      continue;
    }
    TypeToValueInfo(v->type, v->name(), gp->add_input());
  }
  std::unordered_set<const Value*> folded_axes;  // axes constants turned into attributes
  for (const Node* n : g.nodes()) {
    if (AxesAreAttributeAtOpset17(n->op()) && n->input(1)) folded_axes.insert(n->input(1));
  }
  for (const Value* c : g.constants()) {
    bool only_axes = folded_axes.count(c) && !c->is_graph_output();
    for (const Use& u : c->uses()) only_axes &= AxesAreAttributeAtOpset17(u.node->op()) && u.input_index == 1;
    if (only_axes) continue;
    TensorToProto(c->constant(), c->name(), gp->add_initializer());
  }
  for (const Node* n : g.nodes()) {
    if (IsRelayout(*n)) {
      if (!n->output(0)->is_graph_output()) {
        renamed[n->output(0)] = name_of(n->input(0));
        continue;
      }
      onnx::NodeProto* np = gp->add_node();
      np->set_op_type("Identity");
      np->set_name(UniqueName(n->name()));
      np->add_input(name_of(n->input(0)));
      np->add_output(n->output(0)->name());
      continue;
    }
    if (IsInternalOp(n->op()) && !opt.keep_fused) {
      return Unimplemented("{} is an internal edgec op; lower it with the unfuse pass or export "
                           "with --keep-fused", n->Label());
    }
    onnx::NodeProto* np = gp->add_node();
    np->set_op_type(std::string(OpName(n->op())));
    // Ops of another domain (internal ops, the training optimizers) name it, and the model
    // imports it once; int16 activations: ONNX 17's QuantizeLinear / DequantizeLinear take
    // only 8 bits, so the pair is written in the com.microsoft domain, which ONNX Runtime
    // runs with int16 (quantization.md "int16 activations"; tests/frontend/export_validity.py).
    const std::string_view domain = IsInt16Qdq(*n) ? std::string_view("com.microsoft") : OnnxDomain(n->op());
    if (!domain.empty()) {
      np->set_domain(std::string(domain));
      if (domains.insert(std::string(domain)).second) {
        auto* d = m.add_opset_import();
        d->set_domain(std::string(domain));
        d->set_version(1);
      }
    }
    np->set_name(UniqueName(n->name()));
    Attributes attrs = n->attrs;
    int num_inputs = n->num_inputs();
    if (AxesAreAttributeAtOpset17(n->op()) && n->input(1)) {
      const Value* axes = n->input(1);
      if (!axes->is_constant()) {
        return Unimplemented("{}: axes input '{}' is not constant; opset {} needs axes as an "
                             "attribute", n->Label(), axes->name(), kExportOpset);
      }
      attrs.Set("axes", axes->constant().ToInt64Vector());
      num_inputs = 1;
    }
    if (n->op() == OpKind::kCast) {
      attrs.Set("to", static_cast<int64_t>(ToOnnxDType(static_cast<DType>(attrs.GetInt("to")))));
    }
    if (attrs.Has("output_datatype") && OpFamily(n->op()) == "signal") {
      attrs.Set("output_datatype",
                static_cast<int64_t>(ToOnnxDType(static_cast<DType>(attrs.GetInt("output_datatype")))));
    }
    if ((n->op() == OpKind::kEyeLike || n->op() == OpKind::kSequenceEmpty || OpFamily(n->op()) == "random") &&
        attrs.Has("dtype")) {
      attrs.Set("dtype", static_cast<int64_t>(ToOnnxDType(static_cast<DType>(attrs.GetInt("dtype")))));
    }
    // Control flow: the captures are outer-scope references inside the subgraphs.
    const bool control = IsControlFlow(n->op());
    if (control) {
      const int captures = NumCaptures(attrs);
      num_inputs -= captures;
      std::vector<std::string> outer;
      for (int i = num_inputs; i < n->num_inputs(); ++i) outer.push_back(name_of(n->input(i)));
      attrs.Erase(kCapturesAttr);
      for (const auto& [attr, sub] : Subgraphs(n->attrs)) {
        onnx::AttributeProto* a = np->add_attribute();
        a->set_name(attr);
        a->set_type(onnx::AttributeProto::GRAPH);
        a->mutable_g()->set_name(sub->name.empty() ? n->name() + "/" + attr : sub->name);
        const int formal = static_cast<int>(sub->inputs().size()) - captures;
        RETURN_IF_ERROR(Write(*sub, a->mutable_g(), formal, outer));
        attrs.Erase(attr);
      }
    }
    while (num_inputs > 0 && !n->input(num_inputs - 1) && control) --num_inputs;
    for (int i = 0; i < num_inputs; ++i) np->add_input(n->input(i) ? name_of(n->input(i)) : "");
    // Unused trailing outputs are dropped (an optional output's presence can change an op's
    // mode, e.g. BatchNormalization's training outputs); the others keep their names. A
    // control-flow node keeps all: their count is its subgraphs'.
    int last_used = -1;
    for (int i = 0; i < n->num_outputs(); ++i) {
      if (control || !n->output(i)->uses().empty() || n->output(i)->is_graph_output()) last_used = i;
    }
    for (int i = 0; i <= std::max(last_used, 0); ++i) np->add_output(n->output(i)->name());
    if (n->provenance.size() > 1 || (n->provenance.size() == 1 && n->provenance[0] != n->name())) {
      std::string doc = "edgec provenance:";
      for (auto& p : n->provenance) doc += " " + p;
      np->set_doc_string(doc);
    }
    if (n->op() == OpKind::kOptional && attrs.Has("edgec_dtype")) {
      // Back to ONNX's `type` attribute (a TypeProto), which the importer split up.
      TensorType element = UnknownRank(static_cast<DType>(attrs.GetInt("edgec_dtype")));
      if (attrs.GetInt("edgec_sequence", 0)) element.kind = ValueKind::kSequence;
      onnx::ValueInfoProto vi;
      TypeToValueInfo(element, "", &vi);
      onnx::AttributeProto* a = np->add_attribute();
      a->set_name("type");
      a->set_type(onnx::AttributeProto::TYPE_PROTO);
      *a->mutable_tp() = vi.type();
      attrs.Erase("edgec_dtype");
      attrs.Erase("edgec_sequence");
    }
    for (auto& [k, v] : attrs.map()) SetAttribute(k, v, np->add_attribute());
  }
  for (const Value* v : g.outputs()) TypeToValueInfo(v->type, name_of(v), gp->add_output());
  return Status::Ok();
}

}  // namespace

StatusOr<onnx::ModelProto> ExportOnnxModel(const Graph& g, const ExportOptions& opt) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("edgec");
  m.set_producer_version("0.1");
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(kExportOpset);
  onnx::GraphProto* gp = m.mutable_graph();
  gp->set_name(g.name.empty() ? "edgec" : g.name);
  ModelWriter w{opt, m};
  w.Reserve(g);
  RETURN_IF_ERROR(w.Write(g, gp, -1, {}));
  return m;
}

Status ExportOnnxFile(const Graph& g, const std::string& path, const ExportOptions& opt) {
  ASSIGN_OR_RETURN(onnx::ModelProto m, ExportOnnxModel(g, opt));
  std::string bytes;
  if (!m.SerializeToString(&bytes)) return Internal("serializing the ONNX model failed");
  // Write to a temporary file first so a failure never leaves a half-written model.
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    if (!out) return IoError("cannot write '{}'", path);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) return IoError("writing '{}' failed", path);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) return IoError("cannot move '{}' to '{}'", tmp, path);
  return Status::Ok();
}

}  // namespace edgec::onnx_fe
