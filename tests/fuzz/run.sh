#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, address+undefined sanitizers) in their own build folder,
# writes the seed corpora, replays every regression input, then fuzzes each target.
#
#   bash tests/fuzz/run.sh [--build-only] [FUZZ_BUILD [SECONDS_PER_TARGET]]
#
# Fails on any crash, leak, timeout (-timeout, seconds per input) or memory blow-up
# (-rss_limit_mb); the failing input is kept in FUZZ_BUILD/crashes/. Each such input goes into
# tests/fuzz/regressions/<target>/ (text) or tests/fuzz/make_regressions.py (model and data
# files) with its fix. Prints the executions per target.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
build_only=0
if [ "${1:-}" = "--build-only" ]; then build_only=1; shift; fi
FB="${1:-build-fuzz}"
SECONDS_PER="${2:-60}"
TARGETS=(onnx_import edgec_load target_json scale_json npy image)
declare -A DICT=([onnx_import]=onnx [target_json]=json [scale_json]=json [npy]=npy [image]=image)

if [ -n "${FUZZ_QUICK:-}" ]; then
  # Quick mode (FUZZ_QUICK=RELEASE_BUILD): only the harnesses are compiled with clang and the
  # sanitizers, linked to that build's libedgec_core.a (gcc, no coverage). It builds in a
  # minute where the full fuzz build takes an hour on a busy machine, but its feedback is
  # the harness's own coverage only: a smoke run, not a substitute.
  RB="$FUZZ_QUICK"
  mkdir -p "$FB/bin"
  libs=$(sed -n 's/.* -o bin\/edgec *//p' "$RB/CMakeFiles/edgec.dir/link.txt" | sed "s|libedgec_core.a|$RB/libedgec_core.a|")
  for t in "${TARGETS[@]}"; do
    [ "$FB/bin/fuzz_$t" -nt "tests/fuzz/fuzz_$t.cc" ] && [ "$FB/bin/fuzz_$t" -nt "$RB/libedgec_core.a" ] && continue
    nice clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -I include -I src -I . -I "$RB/generated" \
      -DONNX_NAMESPACE=onnx -DONNX_ML=1 "tests/fuzz/fuzz_$t.cc" $libs -o "$FB/bin/fuzz_$t" || exit 1
  done
  ln -sf "$(cd "$RB" && pwd)/bin/edgec" "$FB/bin/edgec"
elif [ ! -f "$FB/CMakeCache.txt" ]; then
  # -O1 (RelWithDebInfo only to take the flags given here; asserts stay on): the instrumented
  # tree builds about a fifth faster than at -O2 and its runs are fixed counts, not timed.
  CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache \
    cmake -S . -B "$FB" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -gline-tables-only" \
      -DEDGEC_FUZZ=ON -DEDGEC_PYTHON=OFF > /dev/null || exit 1
fi
if [ -z "${FUZZ_QUICK:-}" ]; then
  bash scripts/build_targets.sh "$FB" fuzz_all edgec || exit 1
fi
[ "$build_only" = 1 ] && exit 0

seeds="$FB/seeds"
if [ ! -d "$seeds/edgec_load" ] || [ tests/fuzz/make_seeds.py -nt "$seeds" ]; then
  rm -rf "$seeds"
  ASAN_OPTIONS=detect_leaks=0 /usr/bin/python3 tests/fuzz/make_seeds.py "$FB/bin/edgec" "$seeds" || exit 1
fi

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
mkdir -p "$FB/crashes"
rm -rf "$FB/regressions"
/usr/bin/python3 tests/fuzz/make_regressions.py "$FB/regressions" "$seeds" || exit 1
failed=0
for t in "${TARGETS[@]}"; do
  bin="$FB/bin/fuzz_$t"
  dict=(); [ -n "${DICT[$t]:-}" ] && dict=(-dict="tests/fuzz/dict/${DICT[$t]}.dict")
  common=(-timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024 "${dict[@]}" -artifact_prefix="$FB/crashes/$t-")
  # Every regression input once (a crash fixed once stays fixed): the committed text ones and
  # those make_regressions.py writes.
  reg=()
  for d in "tests/fuzz/regressions/$t" "$FB/regressions/$t"; do
    [ -d "$d" ] && reg+=("$d"/*)
  done
  if [ ${#reg[@]} -gt 0 ]; then
    if ! "$bin" "${common[@]}" "${reg[@]}" > "$FB/$t.regress.log" 2>&1; then
      echo "FAIL $t: a regression input fails again (log: $FB/$t.regress.log)"; failed=$((failed + 1)); continue
    fi
  fi
  corpus="$FB/corpus/$t"; mkdir -p "$corpus"
  # FUZZ_RUNS (make test): a fixed seed and run count, so a run is the same on every machine
  # and a red suite means a change, not a new random find; otherwise explore for SECONDS_PER.
  if [ -n "${FUZZ_RUNS:-}" ]; then budget=(-seed=1 -runs="$FUZZ_RUNS"); else budget=(-max_total_time="$SECONDS_PER"); fi
  "$bin" "${common[@]}" "${budget[@]}" -print_final_stats=1 "$corpus" "$seeds/$t" \
    > "$FB/$t.log" 2>&1
  rc=$?
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$FB/$t.log" | grep -oE '[0-9]+$')
  cov=$(grep -oE 'cov: [0-9]+' "$FB/$t.log" | tail -1)
  if [ "$rc" != 0 ]; then
    echo "FAIL $t (exit $rc, ${runs:-?} runs): $(grep -E 'ERROR|SUMMARY|deadly|leak' "$FB/$t.log" | head -2 | tr '\n' ' ')"
    echo "     log: $FB/$t.log; input: $(ls -t "$FB/crashes/$t-"* 2>/dev/null | head -1)"
    failed=$((failed + 1))
  else
    how=" in ${SECONDS_PER}s"; [ -n "${FUZZ_RUNS:-}" ] && how=" (seed 1)"
    printf "ok   %-12s %9s runs%s, %s, corpus %s files\n" "$t" "${runs:-?}" "$how" "$cov" "$(ls "$corpus" | wc -l)"
  fi
done
echo "$(( ${#TARGETS[@]} - failed )) passed, $failed failed"
exit $(( failed > 0 ))
