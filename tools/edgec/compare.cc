// edgec compare A B [--input name=x.npy] [--int8] [--json F] [--csv F]
// Runs two forms of a model on the same inputs and prints, per layer matched through
// provenance, max abs error, cosine similarity and SQNR, marking where the error jumps.
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/compare.h"
#include "edgec/model.h"
#include "tools/edgec/inputs.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct CompareFlags {
  std::string a, b, json, csv;
  std::vector<std::string> inputs, shapes;
  uint64_t seed = 0;
  bool int8 = false;
  double jump_db = 10;
};

int CompareMain(const CompareFlags& f) {
  auto ga = Model::Load(f.a);
  if (!ga.ok()) return ReportError(ga.status().message());
  auto gb = Model::Load(f.b);
  if (!gb.ok()) return ReportError(gb.status().message());
  if (f.int8) {
    for (Model* m : {&*ga, &*gb}) {
      Status s = m->FoldQdq({}, nullptr);
      if (!s.ok()) return ReportError(s.message());
    }
  }
  auto inputs = GatherInputs(ga->inputs(), f.inputs, f.shapes, f.seed, nullptr);
  if (!inputs.ok()) return ReportError(fmt::format("{}: {}", f.a, inputs.status().message()));
  auto r = CompareLayers(*ga, *gb, *inputs, f.jump_db);
  if (!r.ok()) return ReportError(r.status().message());
  fmt::print("{} layer(s) matched between {} and {}\n", r->layers.size(), f.a, f.b);
  fmt::print("  {:<48} {:<18} {:>11} {:>10} {:>9}\n", "layer (A)", "B op", "max abs", "cosine", "SQNR dB");
  for (const auto& l : r->layers) {
    fmt::print("  {:<48} {:<18} {:>11.4g} {:>10.6f} {:>9.1f}{}\n", l.source, l.b_op, l.max_abs, l.cosine,
               l.sqnr_db, l.jump ? "  <- error jumps here" : "");
  }
  if (!f.json.empty()) {
    nlohmann::json j;
    j["a"] = f.a, j["b"] = f.b, j["first_jump"] = r->first_jump;
    for (const auto& l : r->layers) {
      j["layers"].push_back({{"source", l.source}, {"a_value", l.a_value}, {"b_value", l.b_value},
                             {"b_op", l.b_op}, {"elements", l.elements}, {"max_abs", l.max_abs},
                             {"cosine", l.cosine},
                             {"sqnr_db", std::isfinite(l.sqnr_db) ? nlohmann::json(l.sqnr_db) : nlohmann::json()},
                             {"jump", l.jump}});
    }
    std::ofstream out(f.json);
    out << j.dump(2) << "\n";
    if (!out) return ReportError(fmt::format("cannot write '{}'", f.json));
  }
  if (!f.csv.empty()) {
    std::ofstream out(f.csv);
    out << "index,source,b_op,elements,max_abs,cosine,sqnr_db,jump\n";
    for (size_t i = 0; i < r->layers.size(); ++i) {
      const auto& l = r->layers[i];
      out << fmt::format("{},\"{}\",{},{},{},{},{},{}\n", i, l.source, l.b_op, l.elements, l.max_abs, l.cosine,
                         l.sqnr_db, l.jump ? 1 : 0);
    }
    if (!out) return ReportError(fmt::format("cannot write '{}'", f.csv));
  }
  return 0;
}

}  // namespace

VerbMain AddCompareVerb(CLI::App& app) {
  auto f = std::make_shared<CompareFlags>();
  CLI::App* sub = app.add_subcommand("compare", "Per-layer error between two forms of a model (float, optimized, QDQ)");
  sub->add_option("a", f->a, "reference model (ONNX)")->required();
  sub->add_option("b", f->b, "model to compare (ONNX: optimized, QDQ, ...)")->required();
  sub->add_option("--input,-i", f->inputs, "NAME=FILE.npy (repeatable); others get seeded random data");
  sub->add_option("--shape", f->shapes, "NAME=1x3x224x224 for random inputs with symbolic dims");
  sub->add_option("--seed", f->seed, "seed for random inputs")->capture_default_str();
  sub->add_flag("--int8", f->int8, "fold QDQ models into integer ops first (edgec's int8 execution)");
  sub->add_option("--jump-db", f->jump_db, "an SQNR drop larger than this marks the jump")->capture_default_str();
  sub->add_option("--json", f->json, "also write the table as JSON");
  sub->add_option("--csv", f->csv, "also write the table as CSV (for plotting)");
  return [f] { return CompareMain(*f); };
}

}  // namespace edgec::cli
