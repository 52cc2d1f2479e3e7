#!/usr/bin/env bash
# A sanitizer build and its run: `make test SANITIZE=address,undefined` or SANITIZE=thread.
#
#   bash scripts/sanitize.sh address,undefined|thread [--subset]
#
# address,undefined: the fuzz tree (build-fuzz, tests/fuzz/run.sh --build-only: clang, the whole
# library with -fsanitize=fuzzer-no-link,address,undefined), so `make fuzz` and this share one
# instrumented build. thread: build-san-thread (clang, -O1). SANITIZE_BUILD names another folder.
# address,undefined builds the CLI and the unit/API tests and runs the unit tests, the public API
# tests (with the concurrency test: 8 threads x 200 runs on one shared model) and the model zoo
# against ONNX Runtime; thread builds the CLI, the unit tests and the concurrency test and runs
# those and three zoo models. Any sanitizer report fails the run (-fno-sanitize-recover,
# halt_on_error, exit code 86). The build goes through scripts/build_targets.sh: a target the
# tree does not define, or any compile or link error, stops the run before any test.
#
# --subset is the part of `make test` (scripts/test.sh) that fits CI: it builds the fuzz tree's
# library, CLI and fuzz targets and edgec_san_tests (the unit tests of the importer, IR, CPU
# kernels, memory plans, NPU simulator and runtime, on the same instrumented library) and runs
# those tests, the malformed-model corpus and two zoo models through the sanitized CLI;
# scripts/test.sh then fuzzes on the same library.
#
# Thread sanitizer: libomp (OpenMP), oneDNN and protobuf are not instrumented, so what they do
# inside themselves is not checked (ignore_noninstrumented_modules); the OpenMP runs load
# libarcher, LLVM's OpenMP tool that reports OpenMP's barriers and tasks to the sanitizer
# (without it every parallel region of edgec's own kernels reports a false race). The
# concurrency test runs each session's kernels on one thread (threads=1): the races looked for
# there are those between the application's threads sharing one model. The unit tests and the
# zoo models run two OpenMP threads. What is suppressed, and why, goes in
# scripts/sanitize/<sanitizer>.supp (none so far).
set -uo pipefail
SAN="${1:?usage: sanitize.sh address,undefined|thread [--subset]}"
SUBSET="${2:-}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
case "$SAN" in
  address,undefined|undefined,address) SAN=address,undefined; SB="${SANITIZE_BUILD:-${FUZZ_BUILD:-build-fuzz}}" ;;
  thread) SB="${SANITIZE_BUILD:-build-san-thread}" ;;
  *) echo "sanitize.sh: SANITIZE must be address,undefined or thread, not '$SAN'" >&2; exit 2 ;;
esac

declare -a names=() codes=() secs=()
part() {
  local name="$1"; shift
  local t0=$(date +%s)
  echo "=== $name ==="
  "$@"
  local rc=$?
  names+=("$name"); codes+=("$rc"); secs+=("$(( $(date +%s) - t0 ))")
}

build() {
  if [ "$SAN" = address,undefined ]; then
    bash tests/fuzz/run.sh --build-only "$SB" || return 1
  elif [ ! -f "$SB/CMakeCache.txt" ]; then
    # RelWithDebInfo only to take -O1 (the project sets Release's flags itself); asserts stay on
    # as in Release.
    CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache \
      cmake -S . -B "$SB" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
        "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
        -DEDGEC_SANITIZE="$SAN" -DEDGEC_PYTHON=OFF > /dev/null || return 1
  fi
  local targets=(edgec edgec_tests edgec_api_tests)
  [ -n "$SUBSET" ] && targets=(edgec_san_tests)
  [ "$SAN" = thread ] && targets=(edgec edgec_tests edgec_concurrency_test)
  bash scripts/build_targets.sh "$SB" "${targets[@]}"
}
part "build ($SAN) in $SB" build
[ "${codes[0]}" = 0 ] || { echo "sanitize.sh: the build failed"; exit 1; }

# The API tests and the zoo runner read the exported zoo (ZOO, default build/zoo) through links:
# the model, its inputs and ONNX Runtime's cached outputs; what edgec writes stays in this folder.
for d in "${ZOO:-$ROOT/build/zoo}"/*/; do
  [ -d "$d" ] || continue
  m="$(basename "$d")"
  mkdir -p "$SB/zoo/$m"
  for f in model.onnx inputs ort; do
    [ -e "$d/$f" ] && [ ! -e "$SB/zoo/$m/$f" ] && ln -s "$(cd "$d" && pwd)/$f" "$SB/zoo/$m/$f"
  done
done

# A suppression file per sanitizer (scripts/sanitize/<name>.supp) when there is one.
supp() { [ -f "$ROOT/scripts/sanitize/$1.supp" ] && printf ':suppressions=%s' "$ROOT/scripts/sanitize/$1.supp"; }
export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:exitcode=86"
export LSAN_OPTIONS="exitcode=86$(supp lsan)"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86"
# ignore_noninstrumented_modules: what libomp, oneDNN, protobuf and libstdc++'s compiled part
# do inside themselves is not checked (they are not built with the sanitizer; their own
# locks and atomics would show as races); every access by edgec's code still is.
export TSAN_OPTIONS="halt_on_error=1:exitcode=86:second_deadlock_stack=1:ignore_noninstrumented_modules=1$(supp tsan)"
export OMP_NUM_THREADS=1

# The thread trace of the own kernels' regions hooks libgomp's entry, GOMP_parallel, which only
# gcc's `#pragma omp parallel` calls (clang's calls libomp's __kmpc_fork_call): in these clang
# builds a recording sees oneDNN's regions only, so the three tests of the own regions' shares
# run in the gcc build of `make test` alone.
notrace="--gtest_filter=-CpuThreadTrace.EveryTeamMemberOfTheOwnRegions:CpuThreadTrace.OnlyTheRecordingThreadsRegions"
notrace+=":ProfileTrace.PerThreadCpuTracks"

# A test binary in two GoogleTest shards side by side (each test on one OpenMP thread above,
# so the two halves take a core each); their outputs in order, failing if either fails.
sharded() {
  local out="$SB/shard" rc=0 p0 p1
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=0 "$@" > "$out.0" 2>&1 & p0=$!
  GTEST_TOTAL_SHARDS=2 GTEST_SHARD_INDEX=1 "$@" > "$out.1" 2>&1 & p1=$!
  wait "$p0" || rc=$?
  wait "$p1" || rc=$?
  cat "$out.0" "$out.1"
  return "$rc"
}

if [ -n "$SUBSET" ]; then
  part "unit tests: importer, IR, CPU kernels, memory, NPU, runtime ($SAN)" sharded "$SB/bin/edgec_san_tests" --gtest_brief=1 "$notrace"
  part "bad models ($SAN)" /usr/bin/python3 tests/bad_models/run.py "$SB/bin/edgec" "$SB/bad_models"
  part "zoo vs ONNX Runtime, squeezenet1_1 and transformer ($SAN)" \
    env EDGEC_RUN_ARGS="-O 3" bash tests/zoo/run.sh "$SB" squeezenet1_1 transformer
elif [ "$SAN" = thread ]; then
  # OpenMP under the thread sanitizer: clang's libomp (oneDNN's GNU OpenMP calls land there
  # too) with LLVM's OpenMP tool for it, libarcher, which tells the sanitizer about OpenMP's
  # barriers, locks and tasks; without it every parallel region reports false races.
  archer=$(ls /usr/lib/llvm-*/lib/libarcher.so 2>/dev/null | head -1)
  [ -n "$archer" ] || { echo "sanitize.sh: libarcher.so not found (Debian: libomp-14-dev)"; exit 1; }
  omp=(env OMP_NUM_THREADS=2 OMP_TOOL_LIBRARIES="$archer")
  part "unit tests, 2 OpenMP threads ($SAN)" "${omp[@]}" "$SB/bin/edgec_tests" --gtest_brief=1 "$notrace"
  part "concurrency test: 8 threads sharing one model ($SAN)" "$SB/bin/edgec_concurrency_test" --gtest_brief=1
  part "zoo vs ONNX Runtime, 2 OpenMP threads: squeezenet1_1, transformer, speech_lstm ($SAN)" \
    "${omp[@]}" EDGEC_RUN_ARGS="-O 3 --threads 2" bash tests/zoo/run.sh "$SB" squeezenet1_1 transformer speech_lstm
else
  part "unit tests ($SAN)" "$SB/bin/edgec_tests" --gtest_brief=1 "$notrace"
  part "API and concurrency tests ($SAN)" "$SB/bin/edgec_api_tests" --gtest_brief=1
  part "model zoo vs ONNX Runtime (-O3, $SAN)" env EDGEC_RUN_ARGS="-O 3" bash tests/zoo/run.sh "$SB"
fi

echo "=== summary ($SAN) ==="
failed=0
for i in "${!names[@]}"; do
  status=ok; [ "${codes[$i]}" != 0 ] && { status=FAILED; failed=$((failed + 1)); }
  printf "  %-60s %-7s %5ss\n" "${names[$i]}" "$status" "${secs[$i]}"
done
exit $(( failed > 0 ))
