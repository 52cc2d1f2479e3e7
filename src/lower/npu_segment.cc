// Building one NPU program per segment (see npu_segment.h).
#include "lower/npu_segment.h"

#include <map>
#include <set>

#include <fmt/format.h>

#include "lower/npu_compile.h"
#include "npu/sim.h"

namespace edgec::lower {
namespace {

int64_t Elements(const Value& v) {
  int64_t n = 1;
  for (int64_t d : v.type.dims) n *= d;
  return n;
}

}  // namespace

StatusOr<NpuSegmentBuild> BuildNpuSegment(const std::vector<const partition::NodePlacement*>& run,
                                          const npu::Target& t, const std::string& name) {
  NpuSegmentBuild b;
  std::set<const Node*> in_run;
  for (const partition::NodePlacement* p : run) in_run.insert(p->node);
  std::vector<npu::SegmentTensor> tensors;
  std::map<const Value*, int> tensor_of;
  std::map<int, std::vector<std::string>> names_of;  // every value name of a tensor (views)
  auto tensor = [&](const Value* v) {
    auto it = tensor_of.find(v);
    if (it != tensor_of.end()) return it->second;
    const int x = static_cast<int>(tensors.size());
    tensors.push_back({v->name(), Elements(*v), false, 0, -1});
    tensor_of[v] = x;
    names_of[x].push_back(v->name());
    b.inputs.push_back(v->name());  // not produced in the run: a segment input
    return x;
  };
  std::vector<npu::SegmentLayer> layers;
  std::vector<std::string> dram_reason;
  for (const partition::NodePlacement* p : run) {
    const Node& n = *p->node;
    b.nodes.push_back(n.name());
    if (partition::IsDramView(n)) {
      const int x = tensor(n.input(0));
      tensor_of[n.output(0)] = x;
      names_of[x].push_back(n.output(0)->name());
      continue;
    }
    ASSIGN_OR_RETURN(npu::Program prog, LowerNode(n, t, *p));
    npu::SegmentLayer l;
    l.name = n.name();
    for (const Value* v : n.inputs())
      if (v && !v->is_constant()) l.inputs.push_back(tensor(v));
    for (const Value* v : n.outputs()) {
      if (!v) continue;
      const int x = static_cast<int>(tensors.size());
      tensors.push_back({v->name(), Elements(*v), false, 0, static_cast<int>(layers.size())});
      tensor_of[v] = x;
      names_of[x].push_back(v->name());
      l.outputs.push_back(x);
    }
    b.listing += fmt::format(";   layer {} {}: {}\n", layers.size(), n.Label(), p->plan);
    l.program = std::move(prog);
    layers.push_back(std::move(l));
  }
  // The plan's view of the tensors: lifetimes over the layer order, and which must stay in DRAM.
  b.plan_tensors.resize(tensors.size());
  for (size_t x = 0; x < tensors.size(); ++x) {
    npu::SramPlanTensor& pt = b.plan_tensors[x];
    pt.name = tensors[x].name;
    pt.bytes = tensors[x].bytes;
    pt.first = tensors[x].producer;
    if (tensors[x].producer < 0) pt.dram_reason = "segment input";
  }
  for (size_t i = 0; i < layers.size(); ++i)
    for (int x : layers[i].inputs) b.plan_tensors[x].last = std::max(b.plan_tensors[x].last, static_cast<int>(i));
  std::set<std::string> outs;
  for (auto& [v, x] : tensor_of) {
    if (!v->producer() || !in_run.count(v->producer())) continue;
    bool outside = v->is_graph_output();
    for (const auto& u : v->uses()) outside |= !in_run.count(u.node);
    if (!outside) continue;
    if (b.plan_tensors[x].dram_reason.empty())
      b.plan_tensors[x].dram_reason = v->is_graph_output() ? "graph output" : "read outside the segment";
    outs.insert(v->name());
  }
  // Outputs in graph order (the order the run produced them).
  for (const partition::NodePlacement* p : run)
    for (const Value* v : p->node->outputs())
      if (v && outs.count(v->name())) b.outputs.push_back(v->name());
  for (const npu::SegmentLayer& l : layers) b.plan_layers.push_back({l.name, npu::SramFootprint(l.program)});
  b.plan = npu::PlanSram(b.plan_layers, b.plan_tensors, t.shared_sram.bytes, t.shared_sram.alignment);
  for (size_t x = 0; x < tensors.size(); ++x) {
    tensors[x].in_sram = b.plan.tensors[x].in_sram;
    if (tensors[x].in_sram) tensors[x].addr = b.plan.tensors[x].addr;
  }
  for (size_t i = 0; i < layers.size(); ++i) layers[i].sram_base = b.plan.work_base[i];
  if (!layers.empty()) {
    auto prog = npu::AssembleSegment(layers, tensors, t, fmt::format("{} ({} layers)", name, layers.size()));
    if (!prog.ok()) return prog.status();
    b.program = std::move(*prog);
    // A view's name for its tensor's DRAM region (the runtime finds values by name).
    for (auto& [x, names] : names_of)
      for (size_t k = 1; k < names.size(); ++k)
        if (!tensors[x].in_sram) b.program.regions.push_back({names[k], tensors[x].addr, tensors[x].bytes});
  }
  b.listing = npu::FormatSramPlan(b.plan, b.plan_layers, b.plan_tensors) + b.listing;
  return b;
}

}  // namespace edgec::lower
