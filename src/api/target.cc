// edgec::Target and its overrides (include/edgec/target.h), over npu/target.h.
#include <dlfcn.h>

#include <filesystem>
#include <set>

#include "api/handle.h"
#include "api/impl.h"

namespace edgec {
inline namespace v1 {
namespace {

namespace fs = std::filesystem;

// Where an application's edgec keeps its targets besides npu::TargetDirs() (which looks
// beside the executable, and an application is not edgec's executable): the installed
// <prefix>/share/edgec/targets next to libedgec, and the source tree libedgec was built from.
std::vector<fs::path> LibraryTargetDirs() {
  std::vector<fs::path> dirs;
  Dl_info info;
  if (dladdr(reinterpret_cast<void*>(&LibraryTargetDirs), &info) && info.dli_fname) {
    std::error_code ec;
    fs::path lib = fs::weakly_canonical(fs::path(info.dli_fname), ec).parent_path();
    for (fs::path p = lib; !p.empty() && p != p.root_path(); p = p.parent_path())
      if (fs::is_directory(p / "share/edgec/targets", ec)) {
        dirs.push_back(p / "share/edgec/targets");
        break;
      }
  }
  dirs.push_back(EDGEC_SOURCE_TARGETS);
  return dirs;
}

}  // namespace

Target::Target() : impl_(std::make_unique<Impl>()) { impl_->target = npu::DefaultTarget(); }
Target::Target(const Target& o) : impl_(std::make_unique<Impl>(*o.impl_)) {}
Target& Target::operator=(const Target& o) {
  if (this != &o) impl_ = std::make_unique<Impl>(*o.impl_);
  return *this;
}
EDGEC_HANDLE_MOVES(Target)

StatusOr<Target> Target::Load(const std::string& name_or_path) {
  auto t = npu::LoadTarget(name_or_path);
  if (!t.ok() && t.status().code() == StatusCode::kNotFound && name_or_path.find('/') == std::string::npos) {
    std::error_code ec;
    for (const fs::path& dir : LibraryTargetDirs())
      if (fs::is_regular_file(dir / (name_or_path + ".json"), ec)) {
        t = npu::LoadTarget((dir / (name_or_path + ".json")).string());
        break;
      }
  }
  if (!t.ok()) return t.status();
  Target r;
  r.impl_->target = std::move(t).value();
  return r;
}

StatusOr<Target> Target::FromJson(const std::string& json_text) {
  ASSIGN_OR_RETURN(npu::Target t, npu::ParseTargetText(json_text, "target JSON"));
  Target r;
  r.impl_->target = std::move(t);
  return r;
}

StatusOr<std::vector<std::string>> Target::Available() {
  ASSIGN_OR_RETURN(auto all, npu::ListTargets());
  std::vector<std::string> names;
  std::set<std::string> seen;
  for (const auto& t : all)
    if (seen.insert(t.name).second) names.push_back(t.name);
  std::error_code ec;
  for (const fs::path& dir : LibraryTargetDirs())
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.path().extension() == ".json" && seen.insert(e.path().stem().string()).second)
        names.push_back(e.path().stem().string());
  return names;
}

StatusOr<std::vector<Target>> Target::All() {
  ASSIGN_OR_RETURN(auto names, Available());
  ASSIGN_OR_RETURN(auto listed, npu::ListTargets());
  std::vector<Target> all;
  for (const std::string& name : names) {
    Target t;
    bool found = false;
    for (const npu::Target& l : listed)
      if (!found && l.name == name) {
        t.impl_->target = l;
        found = true;
      }
    if (!found) {
      ASSIGN_OR_RETURN(t, Load(name));
    }
    all.push_back(std::move(t));
  }
  return all;
}

Status Target::Set(const std::string& assignment) {
  ASSIGN_OR_RETURN(npu::Target t, npu::ApplyOverride(impl_->target, assignment));
  impl_->target = std::move(t);
  return Status::Ok();
}

const std::string& Target::name() const { return impl_->target.name; }
std::string Target::ToJson() const { return npu::TargetToJson(impl_->target).dump(2); }
double Target::clock_hz() const { return impl_->target.clock_hz; }
const std::string& Target::description() const { return impl_->target.description; }
int64_t Target::cores() const { return impl_->target.ai_cores.count; }
int64_t Target::mac_rows() const { return impl_->target.ai_cores.mac_rows; }
int64_t Target::mac_cols() const { return impl_->target.ai_cores.mac_cols; }
double Target::peak_int8_macs_per_cycle() const { return impl_->target.peak_int8_macs_per_cycle(); }
double Target::tops_int8() const { return impl_->target.tops_int8(); }
int64_t Target::sram_bytes() const { return impl_->target.shared_sram.bytes; }
double Target::dram_bytes_per_s() const { return impl_->target.dram.bandwidth_bytes_per_s; }

}  // namespace v1
}  // namespace edgec
