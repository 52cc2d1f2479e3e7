#!/usr/bin/env bash
# The whole test suite: unit tests, the ONNX conformance runner, bad-input tests and the
# model zoo against ONNX Runtime. Prints each part's counts and a final summary; exits
# non-zero if any part fails.
set -uo pipefail
BUILD="${1:-build}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

start=$(date +%s)
declare -a names=() codes=() secs=()
part() {
  local name="$1"; shift
  local t0=$(date +%s)
  echo "=== $name ==="
  "$@"
  local rc=$?
  names+=("$name"); codes+=("$rc"); secs+=("$(( $(date +%s) - t0 ))")
  echo
}

# The zoo first: the API, Python and install parts load its models (the zoo runner below
# reuses the export, which is cached).
part "export the model zoo (seeded torch models)" /usr/bin/python3 tests/zoo/export_models.py "$BUILD/zoo"
part "unit tests" "$BUILD/bin/edgec_tests" --gtest_brief=1
part "public C++ and C API (include/edgec only, libedgec)" "$BUILD/bin/edgec_api_tests" --gtest_brief=1
part "Python module (pytest)" env EDGEC_BUILD="$BUILD" /usr/bin/python3 -m pytest -q tests/python
part "docs: CLI reference vs --help, conventions, references, every doc example" env EDGEC_BUILD="$BUILD" /usr/bin/python3 -m pytest -q tests/docs
part "quickstart: docs/quickstart.md's five commands from a fresh clone and HOME" bash tests/docs/quickstart_test.sh "$BUILD"
part "installed package: outside C++/C programs, Python, docs/api.md examples" bash tests/api/install_test.sh "$BUILD"
part "conformance" bash tests/conformance/run.sh "$BUILD"
part "bad input" /usr/bin/python3 tests/bad_input/test_bad_input.py "$BUILD/bin/edgec" "$BUILD/bad_input"
part "malformed models: one-line errors, nothing read outside" /usr/bin/python3 tests/bad_models/run.py "$BUILD/bin/edgec" "$BUILD/bad_models"
part "build step of the sanitizer and fuzz trees: unknown target, compile error" bash tests/scripts/build_targets_test.sh
# The sanitizers' share of the suite (scripts/sanitize.sh --subset): the library, the CLI and
# the fuzz targets built with clang and address+undefined+fuzzer coverage in $BUILD-fuzz (the
# tree `make fuzz` uses); the unit tests of the importer, IR, CPU kernels, memory plans, NPU
# simulator and runtime (edgec_san_tests) on that library; the malformed-model corpus and two
# zoo models through that CLI; then every fuzz target for FUZZ_RUNS runs from seed 1 (its
# regression inputs first) on the same library: the same runs on every machine, so a red part
# means a change, not a random find.
part "sanitizers (address,undefined): build, unit subset, bad models, 2 zoo" \
  env FUZZ_BUILD="$BUILD-fuzz" ZOO="$BUILD/zoo" bash scripts/sanitize.sh address,undefined --subset
part "fuzz: 6 libFuzzer targets, ${FUZZ_RUNS:-30000} runs each (seed 1)" env FUZZ_RUNS="${FUZZ_RUNS:-30000}" bash tests/fuzz/run.sh "$BUILD-fuzz"
part "model zoo vs ONNX Runtime (reference, -O0)" env EDGEC_RUN_ARGS="--reference" bash tests/zoo/run.sh "$BUILD"
part "model zoo vs ONNX Runtime (CPU plan, -O3; ORT on optimize -O3)" env EDGEC_RUN_ARGS="-O 3" EDGEC_ROUNDTRIP="optimize -O 3" bash tests/zoo/run.sh "$BUILD"
part "every ONNX export valid: checker + ONNX Runtime" /usr/bin/python3 tests/frontend/export_validity.py "$BUILD"
part "every pass and -O level on the zoo" "$BUILD/bin/pass_diff" "$BUILD/zoo"
part "INT8 QLinearAdd/QLinearMul vs ONNX Runtime on every operand pair" /usr/bin/python3 tests/quant/ort_binary_ops.py "$BUILD" --cases 24
part "INT8 QDQ: ONNX Runtime vs edgec int8 on zoo CNNs" /usr/bin/python3 tests/quant/ort_agreement.py "$BUILD"
part "memory plan vs lower bound on the zoo" "$BUILD/bin/memory_plan_zoo" "$BUILD/zoo" -O0 -O3
part "profile HTML report in headless Chromium (plots drawn, no console errors)" /usr/bin/python3 tests/report/html_render_test.py "$BUILD"
part "bounded soak: 2000 runs, outputs identical, RSS growth < 1%" bash tests/report/soak_test.sh "$BUILD" 2000
part "NPU: compiled zoo CNNs, npu-sim == cpu bit for bit on every target" bash scripts/npu_zoo_check.sh "$BUILD"
part "trained silero VAD (npm): float vs ORT, --freeze sr, int8 npu-sim == cpu" /usr/bin/python3 tests/zoo/silero_vad.py "$BUILD"
part "trained PaddleOCR det/rec/cls (npm): float vs ORT, task, int8 npu-sim == cpu" /usr/bin/python3 tests/zoo/ppocr.py "$BUILD"
part "no zoo step on a reference kernel (dynamic parts and subgraphs too)" /usr/bin/python3 tests/zoo/fast_steps.py "$BUILD"

echo "=== summary ==="
failed=0
for i in "${!names[@]}"; do
  status=ok; [ "${codes[$i]}" != 0 ] && { status=FAILED; failed=$((failed + 1)); }
  printf "  %-48s %-7s %5ss\n" "${names[$i]}" "$status" "${secs[$i]}"
done
echo "  total wall time: $(( $(date +%s) - start ))s"
echo "$(( ${#names[@]} - failed )) passed, $failed failed"
exit $(( failed > 0 ))
