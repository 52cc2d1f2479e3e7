#include "frontend/onnx/importer.h"

#include <algorithm>
#include <fstream>
#include <unordered_map>
#include <unordered_set>

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include "frontend/onnx/converter.h"
#include "ir/infer.h"
#include "support/limits.h"

namespace edgec::onnx_fe {

StatusOr<onnx::ModelProto> LoadModelProto(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return NotFound("{}: no such file", path);
  if (std::filesystem::is_directory(path, ec)) return InvalidArgument("{}: is a folder, not a model file", path);
  const auto file_bytes = std::filesystem::file_size(path, ec);
  if (!ec) RETURN_IF_ERROR(CheckModelBytes(static_cast<int64_t>(file_bytes), path));
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError("{}: cannot open", path);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.empty()) return InvalidArgument("{}: file is empty, not an ONNX model", path);
  onnx::ModelProto m;
  google::protobuf::io::ArrayInputStream raw(bytes.data(), static_cast<int>(bytes.size()));
  google::protobuf::io::CodedInputStream coded(&raw);
  coded.SetTotalBytesLimit(INT32_MAX);
  if (!m.ParseFromCodedStream(&coded) || !coded.ConsumedEntireMessage()) {
    // A compiled model carries the identifier of runtime/artifact.fbs at bytes 4..7.
    if (bytes.size() >= 8 && bytes.compare(4, 4, "EDGC") == 0)
      return InvalidArgument("{}: a compiled edgec model, not ONNX: `edgec run`, `inspect`, `profile` and `diff` take "
                             "it; this verb needs the .onnx it was compiled from", path);
    return InvalidArgument("{}: not an ONNX model or truncated (protobuf parse failed after {} "
                           "bytes)", path, bytes.size());
  }
  if (m.ir_version() <= 0 || !m.has_graph()) {
    return InvalidArgument("{}: not an ONNX model (no ir_version or no graph)", path);
  }
  return m;
}

namespace {

int DefaultOpset(const onnx::ModelProto& m) {
  for (const auto& o : m.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return static_cast<int>(o.version());
  }
  return 0;
}

// The version the model imports for `domain`, 0 when it imports none.
int64_t DomainVersion(const onnx::ModelProto& m, const std::string& domain) {
  for (const auto& o : m.opset_import()) {
    if (o.domain() == domain) return o.version();
  }
  return 0;
}

bool IsDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

// com.microsoft's QuantizeLinear / DequantizeLinear are ONNX's with int16 allowed: edgec writes
// its int16 activations that way (exporter.cc, quantization.md) and reads them back as the
// standard ops (tests/quant/int16_quantize_test.cc).
bool IsInt16QdqNode(const onnx::NodeProto& n) {
  return n.domain() == "com.microsoft" && (n.op_type() == "QuantizeLinear" || n.op_type() == "DequantizeLinear");
}

// A node of another domain that names one of edgec's ops of that domain (OnnxDomain): internal
// ops written by `--keep-fused` exports, the training optimizers. It converts one-to-one.
bool IsOwnOpOfDomain(const onnx::NodeProto& n) {
  if (IsDefaultDomain(n.domain())) return false;
  auto k = OpFromName(n.op_type());
  return k && OnnxDomain(*k) == n.domain();
}

// A default-domain node with a converter, unless the name is one of another domain's ops.
bool IsSupportedDefaultNode(const onnx::NodeProto& n) {
  if (!IsDefaultDomain(n.domain()) && !IsInt16QdqNode(n)) return false;
  auto k = OpFromName(n.op_type());
  return FindConverter(n.op_type()) && (!k || OnnxDomain(*k).empty());
}

// The names a node reads: its inputs, then every name its subgraphs read (the ones defined
// in the enclosing scope among them are the subgraphs' captures, ir/control_flow.h).
std::vector<std::string> NamesRead(const onnx::NodeProto& n) {
  std::vector<std::string> names(n.input().begin(), n.input().end());
  for (const auto& a : n.attribute()) {
    if (a.type() != onnx::AttributeProto::GRAPH) continue;
    VisitNodes(a.g(), [&](const onnx::NodeProto& inner) {
      for (const auto& in : inner.input()) names.push_back(in);
    });
    for (const auto& o : a.g().output()) names.push_back(o.name());
  }
  return names;
}

// Orders node indices so producers come first; fails naming a node on a cycle.
StatusOr<std::vector<int>> SortNodes(const onnx::GraphProto& g) {
  std::vector<std::vector<std::string>> reads(g.node_size());
  for (int i = 0; i < g.node_size(); ++i) reads[i] = NamesRead(g.node(i));
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    for (const auto& o : g.node(i).output()) {
      if (!o.empty()) producer[o] = i;
    }
  }
  std::vector<int> state(g.node_size(), 0);  // 0 new, 1 on stack, 2 done
  std::vector<int> order;
  for (int root = 0; root < g.node_size(); ++root) {
    if (state[root]) continue;
    // Iterative DFS: (node, next input index).
    std::vector<std::pair<int, int>> stack = {{root, 0}};
    state[root] = 1;
    while (!stack.empty()) {
      auto& [n, k] = stack.back();
      if (k < static_cast<int>(reads[n].size())) {
        const std::string& in = reads[n][k++];
        auto it = producer.find(in);
        // A subgraph name equal to one of the node's own outputs is not a dependency.
        if (in.empty() || it == producer.end() || (it->second == n && k > g.node(n).input_size())) continue;
        int p = it->second;
        if (state[p] == 1) {
          return InvalidArgument("graph has a cycle: node '{}' ({}) depends on its own output "
                                 "through '{}'", g.node(p).name(), g.node(p).op_type(), in);
        }
        if (state[p] == 0) {
          state[p] = 1;
          stack.push_back({p, 0});
        }
      } else {
        state[n] = 2;
        order.push_back(n);
        stack.pop_back();
      }
    }
  }
  return order;
}

// The values visible while converting one graph: its own, and (for a subgraph) the
// enclosing graph's through `outer`. A name found only outside becomes a capture: a new
// input of this graph, its name appended to `captures` (ir/control_flow.h).
struct Scope {
  Graph* g;
  std::unordered_map<std::string, Value*> values;
  Scope* outer;
  std::vector<std::string>* captures;

  Value* Lookup(const std::string& name) {
    auto it = values.find(name);
    if (it != values.end()) return it->second;
    if (!outer) return nullptr;
    Value* o = outer->Lookup(name);
    if (!o) return nullptr;
    Value* v = g->AddInput(name, o->type);
    values[name] = v;
    captures->push_back(name);
    return v;
  }
};

// Converts `gp` into scope.g. `formal_hints` types the inputs of a subgraph that declares
// none (the op knows them); a top-level graph passes none.
Status ImportGraph(const onnx::GraphProto& gp, int opset, const std::filesystem::path& model_dir,
                   const std::string& what, Scope& scope, const std::vector<TensorType>& formal_hints) {
  Graph& g = *scope.g;
  g.name = gp.name();
  auto& values = scope.values;

  for (const auto& init : gp.initializer()) {
    if (init.name().empty()) return InvalidArgument("{}: an initializer has no name", what);
    if (values.count(init.name())) {
      return InvalidArgument("{}: initializer '{}' is defined twice", what, init.name());
    }
    auto t = TensorFromProto(init, model_dir, fmt::format("{}: initializer '{}'", what, init.name()));
    if (!t.ok()) return t.status();
    values[init.name()] = g.AddConstant(init.name(), std::move(t).value());
  }
  if (gp.sparse_initializer_size() > 0) {
    return Unimplemented("{}: sparse initializers are not supported", what);
  }
  for (int i = 0; i < gp.input_size(); ++i) {
    const auto& in = gp.input(i);
    if (values.count(in.name())) continue;  // an initializer listed as input (IR < 4)
    auto t = TypeFromValueInfo(in);
    if (i < static_cast<int>(formal_hints.size()) && (!t.ok() || t->dtype == DType::kUndefined)) {
      t = formal_hints[i];
    }
    if (!t.ok()) return t.status().WithContext(fmt::format("{}: graph input", what));
    values[in.name()] = g.AddInput(in.name(), std::move(t).value());
  }
  // A subgraph's captures known before it is converted (the other branch's, for If) come
  // first, in their order.
  if (scope.captures) {
    std::vector<std::string> known = std::move(*scope.captures);
    scope.captures->clear();
    for (const auto& name : known) {
      if (!scope.Lookup(name)) return InvalidArgument("{}: '{}' is not defined in the enclosing graph", what, name);
    }
  }

  auto order = SortNodes(gp);
  if (!order.ok()) return order.status().WithContext(what);

  for (int idx : *order) {
    const onnx::NodeProto& np = gp.node(idx);
    // Every ONNX op has an output (LSTM may leave its first one empty, not all); shape
    // inference writes them (fuzz_onnx_import found a Transpose with none:
    // tests/fuzz/make_regressions.py).
    if (std::all_of(np.output().begin(), np.output().end(), [](const std::string& o) { return o.empty(); }))
      return InvalidArgument("{}: {} '{}' has no output", what, np.op_type(), np.name());
    for (int i = 0; i < np.input_size(); ++i) {
      if (!np.input(i).empty() && !scope.Lookup(np.input(i))) {
        return InvalidArgument("{}: {} '{}': input {} '{}' is not defined (no graph input, "
                               "initializer or node output has that name)",
                               what, np.op_type(), np.name(), i, np.input(i));
      }
    }
    for (const auto& o : np.output()) {
      if (!o.empty() && values.count(o)) {
        return InvalidArgument("{}: {} '{}': output '{}' is already defined elsewhere", what,
                               np.op_type(), np.name(), o);
      }
    }
    ConvertContext ctx(np, opset, g, model_dir, [&](const std::string& name) { return scope.Lookup(name); });
    ctx.set_subgraph_importer([&](const onnx::GraphProto& sub, const std::string& attr, std::vector<std::string>* captures,
                                  const std::vector<TensorType>& hints) -> StatusOr<SubgraphPtr> {
      auto sg = std::make_shared<Graph>();
      Scope inner{sg.get(), {}, &scope, captures};
      const std::string sub_what = fmt::format("{}: {} '{}' attribute '{}'", what, np.op_type(), np.name(), attr);
      RETURN_IF_ERROR(ImportGraph(sub, opset, model_dir, sub_what, inner, hints));
      return SubgraphPtr(std::move(sg));
    });
    Status st = IsOwnOpOfDomain(np) ? ConvertOneToOne(ctx) : FindConverter(np.op_type())(ctx);
    if (!st.ok()) return st.WithContext(what);
    for (Node* n : ctx.emitted()) {
      auto types = InferNodeTypes(*n);
      if (!types.ok()) return types.status().WithContext(what);
      for (int i = 0; i < n->num_outputs(); ++i) n->output(i)->type = (*types)[i];
    }
    if (!ctx.emitted().empty()) {
      Node* last = ctx.emitted().back();
      for (int i = 0; i < np.output_size() && i < last->num_outputs(); ++i) {
        if (!np.output(i).empty()) values[np.output(i)] = last->output(i);
      }
    }
    for (auto& [name, v] : ctx.aliases()) values[name] = v;
  }

  for (const auto& out : gp.output()) {
    Value* v = scope.Lookup(out.name());
    if (!v) return InvalidArgument("{}: graph output '{}' is not produced by any node", what, out.name());
    // What the model declares fills in what inference could not know (value-dependent dims).
    auto declared = TypeFromValueInfo(out);
    if (declared.ok() && declared->rank_known && declared->dtype == v->type.dtype && !v->is_constant() &&
        !v->is_graph_input()) {
      if (!v->type.rank_known) {
        v->type = *declared;
      } else if (v->type.rank() == declared->rank()) {
        for (int i = 0; i < v->type.rank(); ++i) {
          if (v->type.dims[i] < 0) v->type.dims[i] = declared->dims[i];
        }
        v->type.dim_names = declared->dim_names;
      }
    }
    g.MarkOutput(v);
  }
  if (g.outputs().empty()) return InvalidArgument("{}: graph has no outputs", what);
  Status v = Verify(g);
  if (!v.ok()) return v.WithContext(what);
  return Status::Ok();
}

}  // namespace

StatusOr<Graph> ImportOnnxModel(const onnx::ModelProto& model, const std::filesystem::path& model_dir,
                                const std::string& what, ImportInfo* info) {
  ImportInfo local;
  ImportInfo& inf = info ? *info : local;
  inf.ir_version = model.ir_version();
  inf.producer = model.producer_name() + (model.producer_version().empty() ? "" : " " + model.producer_version());
  const onnx::GraphProto& gp = model.graph();
  RETURN_IF_ERROR(CheckNodeCount(gp.node_size(), what));
  int opset = DefaultOpset(model);
  inf.opset = opset;
  VisitNodes(gp, [&](const onnx::NodeProto& n) { inf.op_histogram[n.op_type()]++; });

  // A model of the training domain's ops only may import no default-domain opset.
  bool uses_default = false, uses_training = false;
  VisitNodes(gp, [&](const onnx::NodeProto& n) {
    uses_default = uses_default || IsDefaultDomain(n.domain());
    uses_training = uses_training || n.domain() == kTrainingDomain;
  });
  if (uses_training) {
    const int64_t v = DomainVersion(model, kTrainingDomain);
    if (v != 1) return Unimplemented("{}: domain {} version {} is not supported (edgec has version 1)", what, kTrainingDomain, v);
  }
  if (opset == 0 && uses_default) return InvalidArgument("{}: model imports no default-domain opset", what);
  if (opset == 0) opset = kMaxOpset;
  if (opset < kMinOpset || opset > kMaxOpset) {
    return Unimplemented("{}: opset {} is outside the supported range {}-{}", what, opset, kMinOpset,
                         kMaxOpset);
  }

  // Every unsupported op at once, grouped by op type in order of first appearance, with
  // its count and first node: a model quantized by another tool can hold a hundred nodes of
  // one missing op (tests/bad_input/test_bad_input.py: "unsupported ops grouped").
  std::vector<std::pair<std::string, std::pair<int, std::string>>> groups;  // op -> (count, first node)
  int unsupported_nodes = 0;
  VisitNodes(gp, [&](const onnx::NodeProto& n) {
    if (!IsSupportedNode(n)) {
      std::string op = QualifiedOpType(n);
      auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& e) { return e.first == op; });
      if (it == groups.end()) groups.push_back({op, {1, n.name()}});
      else ++it->second.first;
      ++unsupported_nodes;
    }
  });
  for (const auto& [op, group] : groups) {
    const auto& [count, first] = group;
    inf.unsupported.push_back(count == 1 ? fmt::format("{} '{}'", op, first)
                                         : fmt::format("{} \u00d7{}, first '{}'", op, count, first));
  }
  if (!inf.unsupported.empty()) {
    std::string list;
    for (auto& u : inf.unsupported) list += (list.empty() ? "" : "; ") + u;
    return Unimplemented("{}: {} unsupported op{} in {} node{} (opset {}): {}", what, groups.size(),
                         groups.size() == 1 ? "" : "s", unsupported_nodes, unsupported_nodes == 1 ? "" : "s",
                         opset, list);
  }

  Graph g;
  Scope scope{&g, {}, nullptr, nullptr};
  RETURN_IF_ERROR(ImportGraph(gp, opset, model_dir, what, scope, {}));
  return g;
}

bool IsSupportedNode(const onnx::NodeProto& n) { return IsOwnOpOfDomain(n) || IsSupportedDefaultNode(n); }

std::string QualifiedOpType(const onnx::NodeProto& n) {
  return IsDefaultDomain(n.domain()) ? n.op_type() : n.domain() + "." + n.op_type();
}

void VisitNodes(const onnx::GraphProto& g, const std::function<void(const onnx::NodeProto&)>& fn) {
  for (const auto& n : g.node()) {
    fn(n);
    for (const auto& a : n.attribute()) {
      if (a.type() == onnx::AttributeProto::GRAPH) VisitNodes(a.g(), fn);
      for (const auto& sub : a.graphs()) VisitNodes(sub, fn);
    }
  }
}

StatusOr<Graph> ImportOnnxFile(const std::string& path, ImportInfo* info) {
  ASSIGN_OR_RETURN(onnx::ModelProto m, LoadModelProto(path));
  return ImportOnnxModel(m, std::filesystem::path(path).parent_path(), path, info);
}

}  // namespace edgec::onnx_fe
