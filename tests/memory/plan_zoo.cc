// Memory plan of every zoo model: loads each model (driver::LoadModel, default options, at
// each requested -O level), plans memory over g.nodes() and prints the greedy arena, the
// lower bound (largest total of bytes live at once), the naive sum (linear planner),
// arena / lower bound, and for comparison that ratio for the plain TFLite pass. A model
// fails when the ratio exceeds --max-ratio (default 1.02), when two buffers live at the
// same time overlap in the arena, or when it cannot be loaded or planned. --buffers lists
// every buffer; --then appends passes to each -O level's pipeline (e.g. "views").
//
// usage: memory_plan_zoo ZOO_DIR [-O LEVEL]... [--model NAME] [--max-ratio R] [--no-in-place] [--buffers]
//                        [--then PASSES]
#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "driver/load.h"
#include "memory/liveness.h"
#include "runtime/plan.h"

namespace fs = std::filesystem;
using namespace edgec;

namespace {

// Independent of the planner: every pair of buffers live at a common step is disjoint in
// memory, and every offset is aligned.
std::string CheckPlacement(const memory::MemoryPlan& plan) {
  const auto& b = plan.buffers;
  for (size_t i = 0; i < b.size(); ++i) {
    if (b[i].offset % memory::kArenaAlignment != 0) {
      return fmt::format("buffer {} at unaligned offset {}", i, b[i].offset);
    }
    for (size_t j = i + 1; j < b.size(); ++j) {
      if (!memory::LiveRangesIntersect(b[i].request, b[j].request)) continue;
      int64_t ei = b[i].offset + memory::AlignUp(b[i].request.bytes);
      int64_t ej = b[j].offset + memory::AlignUp(b[j].request.bytes);
      if (b[i].request.bytes > 0 && b[j].request.bytes > 0 && b[i].offset < ej &&
          b[j].offset < ei) {
        return fmt::format("buffers {} ('{}') and {} ('{}') overlap while both live", i,
                           b[i].owner->name(), j, b[j].owner->name());
      }
    }
  }
  return "";
}

// The classic TFLite pass alone (largest first, first fit), for comparison.
double TfliteRatio(const memory::MemoryPlan& plan) {
  memory::GreedyBySizePlanner tflite(/*only_tflite_order=*/true);
  for (const memory::Buffer& b : plan.buffers) {
    tflite.AddBuffer(b.request.bytes, b.request.first_use, b.request.last_use);
  }
  return plan.lower_bound > 0 ? static_cast<double>(tflite.GetArenaSize()) / plan.lower_bound : 1.0;
}

// Concats the views pass marked in place (the plan's count should match).
int MarkedConcats(const Graph& g) {
  int n = 0;
  for (const Node* node : g.nodes()) n += node->op() == OpKind::kConcat && node->output(0)->physical.is_view;
  return n;
}

std::string Mib(int64_t bytes) { return fmt::format("{:.3f}", bytes / 1048576.0); }

}  // namespace

int main(int argc, char** argv) {
  std::string zoo, only_model;
  std::vector<int> levels;
  double max_ratio = 1.02;
  bool print_buffers = false;
  std::string extra_passes;
  memory::PlanOptions options;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-O" && i + 1 < argc) levels.push_back(std::atoi(argv[++i]));
    else if (a.size() == 3 && a.starts_with("-O")) levels.push_back(a[2] - '0');
    else if (a == "--model" && i + 1 < argc) only_model = argv[++i];
    else if (a == "--max-ratio" && i + 1 < argc) max_ratio = std::atof(argv[++i]);
    else if (a == "--no-in-place") options.in_place = false;
    else if (a == "--buffers") print_buffers = true;
    else if (a == "--then" && i + 1 < argc) extra_passes = argv[++i];
    else zoo = a;
  }
  if (levels.empty()) levels.push_back(0);
  if (zoo.empty() || !fs::is_directory(zoo)) {
    fmt::print(stderr,
               "usage: memory_plan_zoo ZOO_DIR [-O LEVEL]... [--model NAME] [--max-ratio R] "
               "[--no-in-place] [--buffers] [--then PASSES]\n");
    return 2;
  }
  std::vector<fs::path> models;
  for (auto& e : fs::directory_iterator(zoo)) {
    if (fs::exists(e.path() / "model.onnx") &&
        (only_model.empty() || e.path().filename() == only_model)) {
      models.push_back(e.path());
    }
  }
  std::sort(models.begin(), models.end());

  int passed = 0, failed = 0;
  fmt::print("{:<20} {:>3} {:>6} {:>8} {:>6} {:>8} {:>11} {:>11} {:>11} {:>7} {:>7} {:>7} {:>6}\n", "model",
             "-O", "nodes", "buffers", "views", "in-place", "arena MiB", "bound MiB", "naive MiB",
             "ratio", "tflite", "concat", "");
  for (int level : levels) {
    for (const fs::path& dir : models) {
      std::string name = dir.filename().string();
      driver::LoadOptions load;
      load.opt_level = level;
      if (!extra_passes.empty()) {
        std::string base = passes::NamedPipelineText(level);
        load.pipeline = base.empty() ? extra_passes : base + "," + extra_passes;
      }
      auto g = driver::LoadModel((dir / "model.onnx").string(), load);
      if (!g.ok()) {
        fmt::print("{:<20} {:>3} FAIL load: {}\n", name, level, g.status().message());
        ++failed;
        continue;
      }
      auto plan = memory::PlanMemory(*g, {}, options);
      // Shapes known only after running (NonMaxSuppression, NonZero): the CPU plan keeps those
      // nodes in a dynamic part outside the arena; check the arena of its static part.
      std::unique_ptr<Plan> cpu;
      std::string part;
      if (!plan.ok()) {
        PlanOptions po;
        po.fast_kernels = false;
        po.in_place = options.in_place;
        auto built = Plan::Build(g->Clone(), po);
        if (built.ok() && !(*built)->dynamic_nodes().empty()) {
          cpu = std::move(built).value();
          plan = cpu->memory();
          part = fmt::format("static part; {} dynamic nodes", cpu->dynamic_nodes().size());
        }
      }
      if (!plan.ok()) {
        fmt::print("{:<20} {:>3} FAIL plan: {}\n", name, level, plan.status().message());
        ++failed;
        continue;
      }
      double ratio = plan->lower_bound > 0
                         ? static_cast<double>(plan->arena_bytes) / plan->lower_bound
                         : 1.0;
      std::string problem = CheckPlacement(*plan);
      if (problem.empty() && ratio > max_ratio) {
        problem = fmt::format("ratio {:.4f} > {}", ratio, max_ratio);
      }
      fmt::print("{:<20} {:>3} {:>6} {:>8} {:>6} {:>8} {:>11} {:>11} {:>11} {:>7.4f} {:>7.4f} {:>7} {:>6}  {}\n",
                 name, level, g->num_nodes(), plan->buffers.size(), plan->view_count,
                 plan->in_place_count, Mib(plan->arena_bytes), Mib(plan->lower_bound),
                 Mib(plan->naive_bytes), ratio, TfliteRatio(*plan),
                 fmt::format("{}/{}", plan->concat_in_place_count, MarkedConcats(*g)), problem.empty() ? "ok" : "FAIL",
                 problem.empty() ? part : problem);
      (problem.empty() ? passed : failed)++;
      if (print_buffers) {
        for (const memory::Buffer& b : plan->buffers) {
          fmt::print("  buffer {:>10} bytes  steps [{:>4}, {:>4}]  offset {:>10}  {} ({} members)\n",
                     b.request.bytes, b.request.first_use, b.request.last_use, b.offset,
                     b.owner->name(), b.members.size());
        }
      }
    }
  }
  fmt::print("{} passed, {} failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
