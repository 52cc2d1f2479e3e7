#include "tools/edgec/output_options.h"

#include <sys/resource.h>

#include <cstdlib>
#include <set>
#include <string>
#include <unistd.h>

#include <fmt/format.h>

namespace edgec::cli {
namespace {

// The generic flags; a verb's own flags of the same name are left to the verb.
const char* const kGenericQuiet = "--quiet";
const char* const kGenericVerbose = "--verbose";

// The verbs whose --quiet is the generic one (by name).
std::set<std::string>& GenericQuietVerbs() {
  static std::set<std::string> verbs;
  return verbs;
}

bool Given(CLI::App& verb, const char* name) {
  const CLI::Option* o = verb.get_option_no_throw(name);
  return o && o->count() > 0;
}

}  // namespace

bool UseColor(std::FILE* stream) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color && *no_color) return false;
  return stream && isatty(fileno(stream));
}

void AddOutputFlags(CLI::App& app) {
  for (CLI::App* verb : app.get_subcommands({})) {
    if (!verb->get_option_no_throw(kGenericQuiet)) {
      GenericQuietVerbs().insert(verb->get_name());
      const std::string name = std::string(kGenericQuiet) + (verb->get_option_no_throw("-q") ? "" : ",-q");
      verb->add_flag(name)->description("print nothing on stdout (errors still go to stderr)");
    }
    if (!verb->get_option_no_throw(kGenericVerbose)) {
      const std::string name = std::string(kGenericVerbose) + (verb->get_option_no_throw("-v") ? "" : ",-v");
      verb->add_flag(name)->description("at the end, print the wall time, CPU time and peak memory to stderr");
    }
  }
}

void ApplyOutputFlags(CLI::App& verb) {
  if (Given(verb, kGenericQuiet) && GenericQuietVerbs().count(verb.get_name()))
    if (!std::freopen("/dev/null", "w", stdout)) std::perror("edgec: --quiet");
}

void ReportVerbose(CLI::App& verb, double wall_seconds) {
  if (!Given(verb, kGenericVerbose)) return;
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  const double cpu = u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
  fmt::print(stderr, "edgec {}: {:.3f} s wall, {:.3f} s CPU, peak memory {:.1f} MiB\n", verb.get_name(), wall_seconds,
             cpu, u.ru_maxrss / 1024.0);
}

}  // namespace edgec::cli
