#include "tools/edgec/report_json.h"

#include <fstream>

#include "support/status.h"

namespace edgec::cli {

nlohmann::json PlacementsJson(const std::vector<partition::NodePlacement>& placements) {
  nlohmann::json rows = nlohmann::json::array();
  for (const partition::NodePlacement& p : placements) {
    rows.push_back({{"node", p.node ? p.node->name() : ""},
                    {"op", p.node ? std::string(OpName(p.node->op())) : ""},
                    {"unit", p.unit == artifact_io::Unit::kNpu ? "npu" : "cpu"},
                    {"reason", p.reason},
                    {"macs", p.macs},
                    {"npu_ms", p.npu_s * 1e3},
                    {"cpu_ms", p.cpu_s * 1e3},
                    {"transfer_ms", p.transfer_s * 1e3}});
  }
  return rows;
}

Status WriteJsonFile(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  if (!out) return IoError("{}: cannot write", path);
  out << j.dump(2) << "\n";
  if (!out) return IoError("{}: write failed", path);
  return Status();
}

}  // namespace edgec::cli
