// The CLI's verbs: one file each. Each verb registers its subcommand and flags on the app
// and returns the function that runs it (exit code).
#pragma once

#include <functional>
#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace edgec::cli {

using VerbMain = std::function<int()>;

VerbMain AddRunVerb(CLI::App& app);
VerbMain AddInspectVerb(CLI::App& app);
VerbMain AddExportVerb(CLI::App& app);
VerbMain AddOptimizeVerb(CLI::App& app);
VerbMain AddBenchVerb(CLI::App& app);
VerbMain AddQuantizeVerb(CLI::App& app);
VerbMain AddCompareVerb(CLI::App& app);
VerbMain AddTargetsVerb(CLI::App& app);
VerbMain AddEstimateVerb(CLI::App& app);
VerbMain AddSweepVerb(CLI::App& app);
VerbMain AddCompileVerb(CLI::App& app);
VerbMain AddProfileVerb(CLI::App& app);
VerbMain AddDiffVerb(CLI::App& app);
VerbMain AddSoakVerb(CLI::App& app);

// Before anything runs: when every core already has another runnable task, re-executes the
// program with OMP_WAIT_POLICY=passive (libgomp reads it only at load). EDGEC_WAIT_POLICY=
// auto (default), active or passive; OMP_WAIT_POLICY or GOMP_SPINCOUNT set by the user win.
// Returns when the process goes on as it is.
void ChooseOmpWaitPolicy(char** argv);
// Freed memory stays in the process for reuse (heap_policy.cc): no trimming, mmap only for
// blocks above 32 MiB, unless GLIBC_TUNABLES sets malloc's parameters.
void KeepFreedMemory();
// "active (default)", "passive (3 other runnable task(s) on 2 core(s) at start)", ...
std::string OmpWaitPolicyNote();

// Prints "edgec: error: <message>" to stderr and returns the exit code for it.
int ReportError(const std::string& message);

}  // namespace edgec::cli
