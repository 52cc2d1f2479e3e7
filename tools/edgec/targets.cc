// edgec targets [--set FIELD=VALUE ...] [--show NAME]
// Lists the NPU targets (the built-in default and targets/*.json): name, cores, MACs, TOPS,
// SRAM, DRAM bandwidth (--json: the same rows as a JSON list). --show prints one target's full
// description as JSON (after --set).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "edgec/target.h"
#include "tools/edgec/verbs.h"

namespace edgec::cli {
namespace {

struct TargetsFlags {
  std::string show;
  std::vector<std::string> sets;
  bool json = false;
};

std::string Size(int64_t b) {
  if (b >= (1 << 20) && b % (1 << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b >= 1024 && b % 1024 == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}

Status ApplySets(Target& t, const std::vector<std::string>& sets) {
  for (const std::string& s : sets) EDGEC_RETURN_IF_ERROR(t.Set(s));
  return Status::Ok();
}

int TargetsMain(const TargetsFlags& f) {
  if (!f.show.empty()) {
    auto t = Target::Load(f.show);
    if (!t.ok()) return ReportError(t.status().message());
    if (Status st = ApplySets(*t, f.sets); !st.ok()) return ReportError(st.message());
    fmt::print("{}\n", t->ToJson());
    return 0;
  }
  auto shown = Target::All();
  if (!shown.ok()) return ReportError(shown.status().message());
  for (Target& t : *shown)
    if (Status st = ApplySets(t, f.sets); !st.ok()) return ReportError(st.message());
  if (f.json) {
    nlohmann::json rows = nlohmann::json::array();
    for (const Target& t : *shown)
      rows.push_back({{"name", t.name()}, {"description", t.description()}, {"cores", t.cores()},
                      {"mac_rows", t.mac_rows()}, {"mac_cols", t.mac_cols()},
                      {"macs_per_cycle", t.peak_int8_macs_per_cycle()}, {"clock_hz", t.clock_hz()},
                      {"tops_int8", t.tops_int8()}, {"sram_bytes", t.sram_bytes()},
                      {"dram_bytes_per_s", t.dram_bytes_per_s()}});
    fmt::print("{}\n", rows.dump(2));
    return 0;
  }
  fmt::print("{:<14} {:>5} {:>9} {:>11} {:>8} {:>7} {:>10} {:>9}\n", "name", "cores", "array",
             "MACs/cycle", "clock", "TOPS", "SRAM", "DRAM GB/s");
  for (const Target& t : *shown) {
    fmt::print("{:<14} {:>5} {:>9} {:>11} {:>5.2f}GHz {:>7.1f} {:>10} {:>9.1f}\n", t.name(), t.cores(),
               fmt::format("{}x{}", t.mac_rows(), t.mac_cols()), static_cast<int64_t>(t.peak_int8_macs_per_cycle()),
               t.clock_hz() / 1e9, t.tops_int8(), Size(t.sram_bytes()), t.dram_bytes_per_s() / 1e9);
  }
  return 0;
}

}  // namespace

VerbMain AddTargetsVerb(CLI::App& app) {
  auto flags = std::make_shared<TargetsFlags>();
  CLI::App* sub = app.add_subcommand("targets", "List the NPU targets (built-in and targets/*.json)");
  sub->add_option("--show", flags->show, "print one target (file or name) in full as JSON");
  sub->add_option("--set", flags->sets, "override a field: FIELD=VALUE (e.g. shared_sram.bytes=512K)");
  sub->add_flag("--json", flags->json, "print the list as JSON");
  return [flags] { return TargetsMain(*flags); };
}

}  // namespace edgec::cli
