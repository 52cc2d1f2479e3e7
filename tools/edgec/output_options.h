// Conventions every verb shares (docs/cli.md, "Conventions"): exit codes, colour, and the
// --quiet/--verbose flags a verb gets when it does not define its own.
// tests/docs/test_cli_reference.py checks the exit codes, NO_COLOR and the generic flags.
#pragma once

#include <cstdio>

#include <CLI/CLI.hpp>

namespace edgec::cli {

// 0: done; 1: the verb failed (bad input, a failed check, an I/O error: one "edgec: error:"
// line on stderr); 2: the command line could not be parsed (unknown verb or flag, a missing
// or ill-typed argument).
enum ExitCode : int { kExitOk = 0, kExitFailure = 1, kExitUsage = 2 };

// Colour only on a terminal, and never when NO_COLOR is set to a non-empty value
// (https://no-color.org).
bool UseColor(std::FILE* stream);

// Gives every verb of `app` -q,--quiet and -v,--verbose unless it has them already.
void AddOutputFlags(CLI::App& app);

// After parsing, before the verb runs. Generic --quiet: the verb's stdout goes to /dev/null
// (errors still reach stderr).
void ApplyOutputFlags(CLI::App& verb);

// After the verb ran, with --verbose (its own or the generic one): one stderr line with the
// verb's wall time, CPU time and peak memory.
void ReportVerbose(CLI::App& verb, double wall_seconds);

}  // namespace edgec::cli
