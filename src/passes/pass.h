// Pass infrastructure: a pass is a function over the Graph with a name and an opt level,
// listed in passes.def. Pipelines are text ("eliminate-dead,fold-constants,layout{to=nhwc}")
// or the named levels -O0..-O3. PassContext carries the options every pass sees
// (--print-after, --verify-each, --explain), collects per-pass statistics and time, and
// gives constant folding an evaluator (passes never include kernels: the driver injects it).
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "support/status.h"
#include "ir/graph.h"

namespace edgec::passes {

struct PassStats {
  int64_t nodes_removed = 0;
  int64_t nodes_added = 0;
  int64_t nodes_fused = 0;        // nodes absorbed into another node
  int64_t copy_bytes_removed = 0;  // per inference
  std::map<std::string, int64_t> rewrites;  // pattern or kind -> count ("Conv+Relu": 16)
  bool changed() const {
    return nodes_removed || nodes_added || nodes_fused || copy_bytes_removed || !rewrites.empty();
  }
};

// Evaluates one node on given input tensors (nullptr = absent), returning its outputs.
using Evaluator =
    std::function<StatusOr<std::vector<Tensor>>(const Node&, const std::vector<const Tensor*>&)>;

class PassOptions {
 public:
  void Set(const std::string& k, const std::string& v) { map_[k] = v; }
  std::string Get(const std::string& k, const std::string& def = "") const {
    auto it = map_.find(k);
    return it == map_.end() ? def : it->second;
  }
  bool Has(const std::string& k) const { return map_.count(k) != 0; }
  const std::map<std::string, std::string>& map() const { return map_; }

 private:
  std::map<std::string, std::string> map_;
};

struct PassRecord {
  std::string pass;
  double milliseconds = 0;
  int nodes_before = 0;
  int nodes_after = 0;
  PassStats stats;
};

class PassContext {
 public:
  int opt_level = 3;
  bool verify_each = false;
  bool explain = false;
  std::set<std::string> print_after;  // pass names; "all" prints after every pass
  Evaluator evaluator;                // required by fold-constants
  // Where --print-after and --explain text goes (stderr when unset).
  std::function<void(const std::string&)> sink;

  // The statistics of the pass that is running.
  PassStats& stats() { return current_; }
  // Records why a pattern did not match at a node (kept only with `explain`).
  void Explain(const std::string& pattern, const Node& at, const std::string& reason);
  void ExplainLine(std::string line) {
    if (explain) explanations_.push_back(std::move(line));
  }
  void Print(const std::string& text) const;

  const std::vector<PassRecord>& records() const { return records_; }
  const std::vector<std::string>& explanations() const { return explanations_; }

 private:
  friend Status RunPipeline(Graph&, const struct Pipeline&, PassContext&);
  PassStats current_;
  std::vector<PassRecord> records_;
  std::vector<std::string> explanations_;
};

using PassFn = Status (*)(Graph&, PassContext&, const PassOptions&);

struct PassInfo {
  std::string_view name;
  int opt_level;
  std::string_view summary;
  PassFn run;
};

const std::vector<PassInfo>& AllPasses();
const PassInfo* FindPass(std::string_view name);

struct PipelineStep {
  const PassInfo* pass;
  PassOptions options;
};
struct Pipeline {
  std::vector<PipelineStep> steps;
  std::string ToString() const;
};

// "a,b{key=value;key2=value2},c"; fails naming an unknown pass (and listing the known ones).
StatusOr<Pipeline> ParsePipeline(std::string_view text);
// The named pipelines: -O0 runs nothing; -O1 cleans up (dead nodes, constants, CSE, chains);
// -O2 adds the fusions; -O3 adds horizontal fusion, layout assignment and views.
std::string NamedPipelineText(int level);
Pipeline NamedPipeline(int level);

// Runs the steps in order. After each: topological order and Verify are checked (always:
// they are cheap and a pass that breaks them is a bug), --print-after, statistics; with
// verify_each also re-runs shape inference and compares it to the recorded types.
Status RunPipeline(Graph& g, const Pipeline& p, PassContext& ctx);

}  // namespace edgec::passes

namespace edgec::passes {
#define EDGEC_PASS(id, name, level, summary) Status Run##id(Graph& g, PassContext& ctx, const PassOptions& options);
#include "passes/passes.def"
}  // namespace edgec::passes
