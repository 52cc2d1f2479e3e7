#!/usr/bin/env bash
# Builds the named targets of a configured build folder and fails loudly: a target the folder
# does not define, or any compile or link error, stops with the failing lines, one line naming
# the folder and target, and exit 1. Used by scripts/sanitize.sh and tests/fuzz/run.sh.
#
#   bash scripts/build_targets.sh BUILD_DIR TARGET...
#
# JOBS sets the parallel jobs (default 2); the build runs under nice. The whole output goes to
# BUILD_DIR/build.log.
set -uo pipefail
BD="${1:?usage: build_targets.sh BUILD_DIR TARGET...}"
shift
[ $# -gt 0 ] || { echo "build_targets.sh: no target named for $BD" >&2; exit 2; }
[ -f "$BD/CMakeCache.txt" ] || { echo "build_targets.sh: $BD is not a configured build folder" >&2; exit 1; }

# Every target must be one the folder defines: the Makefile generator's `help` lists them all
# ("... name"); with another generator the build's own exit status says so.
native=()
if grep -qx 'CMAKE_GENERATOR:INTERNAL=Unix Makefiles' "$BD/CMakeCache.txt"; then
  native=(-- --no-print-directory)
  known="$(env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS cmake --build "$BD" --target help 2>/dev/null \
    | sed -n 's/^\.\.\. \([^ ]*\).*/\1/p')"
  for t in "$@"; do
    if ! grep -qxF -- "$t" <<< "$known"; then
      echo "build_targets.sh: $BD defines no target '$t' (asked for: $*)" >&2
      exit 1
    fi
  done
fi

log="$BD/build.log"
# Under `make test` the caller's make flags (jobserver, command-line variables) stay out.
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS nice cmake --build "$BD" -j "${JOBS:-2}" --target "$@" "${native[@]}" > "$log" 2>&1
rc=$?
# A compiler or linker error, or a failing step, is a failure even if the exit status said
# otherwise; warnings are not.
if [ "$rc" != 0 ] || grep -qE 'error:|undefined reference|\*\*\* ' "$log"; then
  grep -E 'error:|undefined reference|\*\*\* |Error [0-9]' "$log" | head -n 30 >&2
  echo "build_targets.sh: building $* in $BD failed (exit $rc; full log: $log)" >&2
  exit 1
fi
exit 0
