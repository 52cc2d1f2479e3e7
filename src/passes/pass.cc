#include "passes/pass.h"

#include <chrono>

#include "ir/infer.h"

namespace edgec::passes {

void PassContext::Explain(const std::string& pattern, const Node& at, const std::string& reason) {
  if (!explain) return;
  explanations_.push_back(fmt::format("{}: {}: {}", pattern, at.Label(), reason));
}

void PassContext::Print(const std::string& text) const {
  if (sink) sink(text);
  else fmt::print(stderr, "{}", text);
}

const std::vector<PassInfo>& AllPasses() {
  static const std::vector<PassInfo> passes = {
#define EDGEC_PASS(id, name, level, summary) {name, level, summary, &Run##id},
#include "passes/passes.def"
  };
  return passes;
}

const PassInfo* FindPass(std::string_view name) {
  for (const PassInfo& p : AllPasses()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

std::string Pipeline::ToString() const {
  std::string s;
  for (const auto& st : steps) {
    if (!s.empty()) s += ",";
    s += st.pass->name;
    if (!st.options.map().empty()) {
      s += "{";
      bool first = true;
      for (auto& [k, v] : st.options.map()) {
        s += (first ? "" : ";") + k + "=" + v;
        first = false;
      }
      s += "}";
    }
  }
  return s;
}

StatusOr<Pipeline> ParsePipeline(std::string_view text) {
  Pipeline p;
  size_t i = 0;
  auto trim = [](std::string s) {
    size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
    return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
  };
  while (i < text.size()) {
    size_t j = i;
    while (j < text.size() && text[j] != ',' && text[j] != '{') ++j;
    std::string name = trim(std::string(text.substr(i, j - i)));
    PassOptions opts;
    if (j < text.size() && text[j] == '{') {
      size_t close = text.find('}', j);
      if (close == std::string_view::npos) {
        return InvalidArgument("pipeline '{}': '{{' after '{}' is not closed", text, name);
      }
      std::string body(text.substr(j + 1, close - j - 1));
      size_t k = 0;
      while (k <= body.size()) {
        size_t e = body.find(';', k);
        if (e == std::string::npos) e = body.size();
        std::string kv = trim(body.substr(k, e - k));
        if (!kv.empty()) {
          size_t eq = kv.find('=');
          if (eq == std::string::npos) {
            return InvalidArgument("pipeline '{}': option '{}' of '{}' must be key=value", text, kv, name);
          }
          opts.Set(trim(kv.substr(0, eq)), trim(kv.substr(eq + 1)));
        }
        k = e + 1;
      }
      j = close + 1;
      while (j < text.size() && text[j] == ' ') ++j;
    }
    if (!name.empty()) {
      const PassInfo* info = FindPass(name);
      if (!info) {
        std::string known;
        for (const PassInfo& q : AllPasses()) known += (known.empty() ? "" : ", ") + std::string(q.name);
        return InvalidArgument("unknown pass '{}' in pipeline (passes: {})", name, known);
      }
      p.steps.push_back({info, std::move(opts)});
    } else if (j < text.size() && text[j] != ',') {
      return InvalidArgument("pipeline '{}': empty pass name", text);
    }
    if (j < text.size() && text[j] == ',') ++j;
    i = j;
  }
  return p;
}

std::string NamedPipelineText(int level) {
  const std::string o1 = "widen-fp16,eliminate-dead,fold-constants,canonicalize,cse,merge-chains,eliminate-dead";
  const std::string o2 = o1 +
      ",fold-pad,fuse-channel-shuffle,fuse-conv-bn,fuse-layernorm,fuse-rmsnorm,fuse-gelu,fuse-hard-activation,fuse-attention,"
      "fuse-matmul-add,fuse-activation,fuse-residual-add,cse,eliminate-dead";
  // -O3 adds what changes memory rather than math: wider ops from parallel ones, NHWC
  // regions, zero-copy views (views last: it reads the layouts the others chose). NHWC
  // regions may give up in-place Concats up to 0.066 bytes per MAC (a row-major region
  // pays oneDNN's reorders around every conv instead; measured in layout.cc's comment),
  // and convert at their boundary up to 0.001 bytes per MAC (a small head output of a
  // large CNN; docs/optimizer_layout.md).
  const std::string o3 = o2 +
      ",horizontal-fusion,cse,eliminate-dead,dissolve-concat,layout{max_concat_copy_per_mac=0.066;max_copy_per_mac=0.001},"
      "views";
  switch (level) {
    case 0: return "";
    case 1: return o1;
    case 2: return o2;
    default: return o3;
  }
}

Pipeline NamedPipeline(int level) {
  auto p = ParsePipeline(NamedPipelineText(level));
  EDGEC_CHECK(p.ok());
  return std::move(p).value();
}

Status RunPipeline(Graph& g, const Pipeline& p, PassContext& ctx) {
  bool print_all = ctx.print_after.count("all") != 0;
  for (const PipelineStep& step : p.steps) {
    ctx.current_ = PassStats();
    PassRecord rec;
    rec.pass = std::string(step.pass->name);
    rec.nodes_before = g.num_nodes();
    auto t0 = std::chrono::steady_clock::now();
    Status st = step.pass->run(g, ctx, step.options);
    auto t1 = std::chrono::steady_clock::now();
    if (!st.ok()) return st.WithContext(fmt::format("pass {}", step.pass->name));
    Status sorted = g.TopoSort();
    if (!sorted.ok()) return Internal("pass {} left a cycle: {}", step.pass->name, sorted.message());
    Status v = Verify(g);
    if (!v.ok()) return Internal("pass {} broke the graph: {}", step.pass->name, v.message());
    if (ctx.verify_each) {
      for (Node* n : g.nodes()) {
        auto types = InferNodeTypes(*n);
        if (!types.ok()) {
          return Internal("after pass {}: {}", step.pass->name, types.status().message());
        }
        for (int i = 0; i < n->num_outputs(); ++i) {
          const TensorType& want = (*types)[i];
          const TensorType& have = n->output(i)->type;
          bool agree = want.dtype == have.dtype &&
                       (!want.rank_known || !have.rank_known || want.rank() == have.rank());
          for (int d = 0; agree && want.rank_known && have.rank_known && d < want.rank(); ++d) {
            agree = want.dims[d] < 0 || have.dims[d] < 0 || want.dims[d] == have.dims[d];
          }
          if (!agree) {
            return Internal("after pass {}: {} output {} is typed {} but infers to {}",
                            step.pass->name, n->Label(), i, have.ToString(), want.ToString());
          }
        }
      }
    }
    rec.milliseconds = std::chrono::duration<double, std::milli>(t1 - t0).count();
    rec.nodes_after = g.num_nodes();
    rec.stats = ctx.current_;
    ctx.records_.push_back(rec);
    if (print_all || ctx.print_after.count(std::string(step.pass->name))) {
      ctx.Print(fmt::format("// ----- after {} -----\n{}", step.pass->name, PrintGraph(g)));
    }
  }
  return Status::Ok();
}

}  // namespace edgec::passes
