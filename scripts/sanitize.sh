#!/usr/bin/env bash
# A sanitizer build and its run: `make test SANITIZE=address,undefined` or SANITIZE=thread.
#
#   bash scripts/sanitize.sh SANITIZERS [--subset]
#
# Configures build-san-<sanitizers> (its own folder; the Release build is untouched) with
# -fsanitize=SANITIZERS, builds the CLI and the unit/API tests, and runs the unit tests, the
# public API tests (with the concurrency test: 8 threads x 200 runs on one shared model) and
# the model zoo against ONNX Runtime. Any sanitizer report fails the run (-fno-sanitize-recover,
# halt_on_error). --subset (what scripts/test.sh runs, on the fuzz build's tree) builds only the
# CLI and runs the malformed-model corpus and two zoo models through it, so it fits the suite's
# time: the library is the one the fuzz targets already needed.
#
# Thread sanitizer: libgomp (OpenMP) and oneDNN are not instrumented, so their own
# synchronization is invisible to it; every session here runs its kernels on one thread
# (OMP_NUM_THREADS=1, EDGEC threads=1 in the concurrency test) and the races looked for are
# those between the application's threads sharing one model.
set -uo pipefail
SAN="${1:?usage: sanitize.sh address,undefined|thread [--subset]}"
SUBSET="${2:-}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
# SANITIZE_BUILD names another folder already configured with these sanitizers (scripts/test.sh
# passes the fuzz build, clang with address,undefined, so the suite builds one extra tree, not two).
SB="${SANITIZE_BUILD:-build-san-${SAN//,/-}}"

if [ ! -f "$SB/CMakeCache.txt" ]; then
  CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache \
    cmake -S . -B "$SB" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS=-g1 -DEDGEC_SANITIZE="$SAN" \
      -DEDGEC_PYTHON=OFF > /dev/null || exit 1
fi
echo "=== build ($SAN) in $SB ==="
targets=(edgec)
[ -z "$SUBSET" ] && targets+=(edgec_tests edgec_api_tests)
nice cmake --build "$SB" -j "${JOBS:-2}" --target "${targets[@]}" -- --no-print-directory 2>&1 \
  | grep -E 'error|FAILED' && exit 1
# The API tests and the zoo runner read the exported zoo (build/zoo) through links: the model,
# its inputs and ONNX Runtime's cached outputs; what edgec writes stays in this folder.
for d in "$ROOT"/build/zoo/*/; do
  m="$(basename "$d")"
  mkdir -p "$SB/zoo/$m"
  for f in model.onnx inputs ort; do
    [ -e "$d/$f" ] && [ ! -e "$SB/zoo/$m/$f" ] && ln -s "$(cd "$d" && pwd)/$f" "$SB/zoo/$m/$f"
  done
done

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1"
export OMP_NUM_THREADS=1
declare -a names=() codes=() secs=()
part() {
  local name="$1"; shift
  local t0=$(date +%s)
  echo "=== $name ==="
  "$@"
  local rc=$?
  names+=("$name"); codes+=("$rc"); secs+=("$(( $(date +%s) - t0 ))")
}

if [ -z "$SUBSET" ] && [ "$SAN" = thread ]; then
  # The unit tests are single-threaded; under the thread sanitizer the API tests are the point.
  part "API and concurrency tests ($SAN)" "$SB/bin/edgec_api_tests" --gtest_brief=1 --gtest_filter='Concurrency.*:ApiSession.*'
elif [ -z "$SUBSET" ]; then
  part "unit tests ($SAN)" "$SB/bin/edgec_tests" --gtest_brief=1
  part "API and concurrency tests ($SAN)" "$SB/bin/edgec_api_tests" --gtest_brief=1
fi
if [ -n "$SUBSET" ]; then
  part "bad models ($SAN)" /usr/bin/python3 tests/bad_models/run.py "$SB/bin/edgec" "$SB/bad_models"
  part "zoo vs ONNX Runtime, squeezenet1_1 and transformer ($SAN)" \
    env EDGEC_RUN_ARGS="-O 3" bash tests/zoo/run.sh "$SB" squeezenet1_1 transformer
else
  part "model zoo vs ONNX Runtime (-O3, $SAN)" env EDGEC_RUN_ARGS="-O 3" bash tests/zoo/run.sh "$SB"
fi

echo "=== summary ($SAN) ==="
failed=0
for i in "${!names[@]}"; do
  status=ok; [ "${codes[$i]}" != 0 ] && { status=FAILED; failed=$((failed + 1)); }
  printf "  %-60s %-7s %5ss\n" "${names[$i]}" "$status" "${secs[$i]}"
done
exit $(( failed > 0 ))
