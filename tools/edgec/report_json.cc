#include "tools/edgec/report_json.h"

#include <fstream>

namespace edgec::cli {

Status WriteJsonFile(const std::string& path, const nlohmann::json& j) {
  std::ofstream out(path);
  if (!out) return Status(StatusCode::kIo, path + ": cannot write");
  out << j.dump(2) << "\n";
  if (!out) return Status(StatusCode::kIo, path + ": write failed");
  return Status();
}

}  // namespace edgec::cli
