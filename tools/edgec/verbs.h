// The CLI's verbs: one file each. Each verb registers its subcommand and flags on the app
// and returns the function that runs it (exit code).
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace edgec::cli {

using VerbMain = std::function<int()>;

VerbMain AddRunVerb(CLI::App& app);
VerbMain AddInspectVerb(CLI::App& app);
VerbMain AddExportVerb(CLI::App& app);
VerbMain AddOptimizeVerb(CLI::App& app);
VerbMain AddBenchVerb(CLI::App& app);
VerbMain AddTargetsVerb(CLI::App& app);

// Prints "edgec: error: <message>" to stderr and returns the exit code for it.
int ReportError(const std::string& message);

}  // namespace edgec::cli
