#include "runtime/shape_binding.h"

#include <algorithm>
#include <unordered_map>

#include "ir/infer.h"
#include "kernels/ref/kernel.h"

namespace edgec {

StatusOr<Dims> ParseDims(const std::string& text) {
  Dims d;
  std::string cur;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || text[i] == 'x' || text[i] == ',') {
      if (cur.empty()) return InvalidArgument("bad shape '{}': empty dim", text);
      char* end = nullptr;
      long long v = std::strtoll(cur.c_str(), &end, 10);
      if (*end != '\0' || v < 0) return InvalidArgument("bad shape '{}': dim '{}'", text, cur);
      d.push_back(v);
      cur.clear();
    } else {
      cur += text[i];
    }
  }
  return d;
}

Status FreezeInputs(Graph& g, const std::map<std::string, Tensor>& values) {
  for (const auto& [name, value] : values) {
    Value* v = g.FindValue(name);
    if (!v || !v->is_graph_input()) {
      std::string names;
      for (const Value* in : g.inputs()) names += (names.empty() ? "'" : ", '") + in->name() + "'";
      return NotFound("'{}' is not an input of the model (inputs: {})", name, names.empty() ? "none" : names);
    }
    const TensorType& t = v->type;
    if (!t.IsDenseTensor()) return InvalidArgument("input '{}' is {}: only a tensor can be frozen", name, t.ToString());
    if (t.dtype != value.dtype()) {
      return InvalidArgument("input '{}' is {}, the frozen value is {}", name, t.ToString(), value.TypeString());
    }
    bool fits = !t.rank_known || t.rank() == static_cast<int>(value.dims().size());
    for (size_t i = 0; fits && t.rank_known && i < value.dims().size(); ++i)
      fits = t.dims[i] < 0 || t.dims[i] == value.dims()[i];
    if (!fits) {
      return InvalidArgument("input '{}' is {}, the frozen value is {}", name, t.ToString(), value.TypeString());
    }
  }
  // The graph is built anew with the frozen inputs as constants of the same names (the
  // Graph keeps its inputs' list to itself).
  Graph f;
  f.name = g.name;
  std::unordered_map<const Value*, Value*> map;
  auto copy_meta = [](const Value* from, Value* to) {
    to->physical = from->physical;
    to->quant = from->quant;
  };
  for (const Value* in : g.inputs()) {
    if (auto it = values.find(in->name()); it != values.end()) continue;
    map[in] = f.AddInput(in->name(), in->type);
    copy_meta(in, map[in]);
  }
  for (const auto& [name, value] : values) map[g.FindValue(name)] = f.AddConstant(name, value);
  for (const Value* c : g.constants()) {
    map[c] = f.AddConstant(c->name(), c->constant());
    map[c]->type = c->type;
    copy_meta(c, map[c]);
  }
  for (const Node* n : g.nodes()) {
    std::vector<Value*> ins;
    for (const Value* v : n->inputs()) ins.push_back(v ? map.at(v) : nullptr);
    std::vector<std::string> outs;
    for (const Value* o : n->outputs()) outs.push_back(o->name());
    Node* m = f.AddNode(n->op(), n->name(), std::move(ins), n->num_outputs(), std::move(outs));
    m->attrs = n->attrs;
    m->provenance = n->provenance;
    m->opset = n->opset;
    for (int i = 0; i < n->num_outputs(); ++i) {
      map[n->output(i)] = m->output(i);
      m->output(i)->type = n->output(i)->type;
      copy_meta(n->output(i), m->output(i));
    }
  }
  for (const Value* o : g.outputs()) f.MarkOutput(map.at(o));
  g = std::move(f);
  return BindInputShapes(g, {}, 0);
}

Status BindInputShapes(Graph& g, const std::map<std::string, Dims>& shapes, int64_t default_dim) {
  for (auto& [name, dims] : shapes) {
    Value* v = g.FindValue(name);
    if (!v || !v->is_graph_input()) return NotFound("'{}' is not an input of the model", name);
    const TensorType& t = v->type;
    if (t.rank_known && t.rank() != static_cast<int>(dims.size())) {
      return InvalidArgument("input '{}' has {} dims {}, shape {} has {}", name, t.rank(),
                             t.ToString(), DimsToString(dims), dims.size());
    }
    for (size_t i = 0; t.rank_known && i < dims.size(); ++i) {
      if (t.dims[i] >= 0 && t.dims[i] != dims[i]) {
        return InvalidArgument("input '{}' dim {} is {}, cannot bind it to {}", name, i, t.dims[i],
                               dims[i]);
      }
    }
    v->type.dims = dims;
    v->type.rank_known = true;
  }
  for (Value* v : g.inputs()) {
    // A sequence's element dims differ item by item: they stay as declared.
    if (shapes.count(v->name()) || default_dim <= 0 || !v->type.IsDenseTensor()) continue;
    for (auto& d : v->type.dims) {
      if (d < 0) d = default_dim;
    }
  }
  // Infer in order; evaluate nodes whose inputs are all known and small.
  constexpr int64_t kMaxEvalElements = 4096;
  std::unordered_map<const Value*, Tensor> known;
  for (Node* n : g.nodes()) {
    std::vector<InferInput> ins;
    bool all_known = true;
    for (Value* v : n->inputs()) {
      InferInput in;
      if (v) {
        in.type = &v->type;
        if (v->is_constant()) {
          in.value = &v->constant();
        } else if (auto it = known.find(v); it != known.end()) {
          in.value = &it->second;
        }
        if (!in.value) all_known = false;
      }
      ins.push_back(in);
    }
    InferContext ctx(n->op(), n->attrs, n->Label(), ins, n->num_outputs());
    RETURN_IF_ERROR(GetInferFn(n->op())(ctx));
    bool small = true;
    for (int i = 0; i < n->num_outputs(); ++i) {
      TensorType t = ctx.output(i);
      const TensorType& old = n->output(i)->type;
      if (t.rank_known && old.rank_known && old.rank() == t.rank()) t.dim_names = old.dim_names;
      n->output(i)->type = t;
      // Inferred dims may multiply past int64 (fuzz_onnx_import): such a value is not small.
      bool fits = false;
      if (t.IsStatic()) {
        const auto elements = CheckedNumElements(t.dims);
        fits = elements.ok() && *elements <= kMaxEvalElements;
      }
      small &= fits;
    }
    // Shape and Size depend only on the input's type, not its value.
    if ((n->op() == OpKind::kShape || n->op() == OpKind::kSize) && n->input(0) &&
        n->input(0)->type.IsStatic()) {
      const Dims& d = n->input(0)->type.dims;
      if (n->op() == OpKind::kSize) {
        known[n->output(0)] = Tensor::ScalarI64(NumElements(d));
      } else {
        int64_t r = static_cast<int64_t>(d.size());
        auto clamp = [&](int64_t a) { return std::clamp(a < 0 ? a + r : a, int64_t{0}, r); };
        int64_t b = clamp(n->attrs.GetInt("start", 0)), e = clamp(n->attrs.GetInt("end", r));
        known[n->output(0)] = Tensor::VectorI64(std::vector<int64_t>(d.begin() + b, d.begin() + std::max(b, e)));
      }
      continue;
    }
    bool inputs_small = true;
    for (auto& in : ins) inputs_small &= !in.value || in.value->numel() <= kMaxEvalElements * 16;
    if (all_known && small && inputs_small && n->num_inputs() > 0) {
      std::vector<Tensor> outs;
      for (int i = 0; i < n->num_outputs(); ++i) {
        outs.emplace_back(ctx.output(i).dtype, ctx.output(i).dims);
      }
      std::vector<const Tensor*> tin;
      for (auto& in : ins) tin.push_back(in.value);
      ref::KernelContext k{n->op(), n->attrs, n->Label(), tin, outs};
      if (ref::GetKernel(n->op())(k).ok()) {
        for (int i = 0; i < n->num_outputs(); ++i) known[n->output(i)] = std::move(outs[i]);
      }
    }
  }
  return Status::Ok();
}

}  // namespace edgec
