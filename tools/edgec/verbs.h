// The CLI's verbs: one file each. Each verb registers its subcommand and flags on the app
// and returns the function that runs it (exit code).
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "npu/estimate.h"

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
int RunCompiled(const std::string& file, const std::string& device, const std::vector<std::string>& inputs,
                const std::string& output_dir, uint64_t seed, bool quiet, const std::string& report, bool reference,
                int threads, bool measure_cpu);

// Shared by estimate and sweep (estimate.cc): the NPU layers of an ONNX model (shapes
// only; layers the NPU cannot take are listed in `fallbacks` with the reason) or of a
// generated decoder, and a target with overrides.
StatusOr<std::vector<npu::RepeatedLayer>> LayersFor(const std::string& model, const std::string& decoder,
                                                    const std::vector<std::string>& shapes, bool fp16,
                                                    std::vector<std::string>* fallbacks);
StatusOr<npu::Target> TargetFor(const std::string& name, const std::vector<std::string>& sets);

// Before anything runs: when every core already has another runnable task, re-executes the
// program with OMP_WAIT_POLICY=passive (libgomp reads it only at load). EDGEC_WAIT_POLICY=
// auto (default), active or passive; OMP_WAIT_POLICY or GOMP_SPINCOUNT set by the user win.
// Returns when the process goes on as it is.
void ChooseOmpWaitPolicy(char** argv);
// "active (default)", "passive (3 other runnable task(s) on 2 core(s) at start)", ...
std::string OmpWaitPolicyNote();

// Prints "edgec: error: <message>" to stderr and returns the exit code for it.
int ReportError(const std::string& message);

}  // namespace edgec::cli
