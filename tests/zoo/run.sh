#!/usr/bin/env bash
# The model zoo: runs each model in edgec and compares its outputs with ONNX Runtime's.
#
# Usage: tests/zoo/run.sh BUILD_DIR [model ...]
#
#   1. exports the models into BUILD_DIR/zoo (cached; export_models.py --force re-exports),
#   2. runs ONNX Runtime into BUILD_DIR/zoo/<name>/ort/ (cached while newer than the model),
#   3. runs BUILD_DIR/bin/edgec run into BUILD_DIR/zoo/<name>/edgec/,
#   4. compares (error relative to each output's scale, tolerance ZOO_RTOL, default 1e-4),
#   5. round trip: `edgec export` writes the imported graph back as ONNX, ONNX Runtime runs
#      that file, and its outputs must match ORT's on the original within 1e-5.
# Prints a table and "N passed, N failed"; exits non-zero if any model fails.
# EDGEC_RUN_ARGS adds options to every `edgec run` (e.g. an optimization level).
# EDGEC_ROUNDTRIP replaces the `export` of step 5 by another verb writing ONNX, e.g.
# "optimize -O 3": ONNX Runtime must then run the optimized model within the zoo tolerance.
set -uo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PYTHON=/usr/bin/python3
RTOL="${ZOO_RTOL:-1e-4}"
read -r -a EXTRA_ARGS <<< "${EDGEC_RUN_ARGS:-}"
read -r -a ROUNDTRIP <<< "${EDGEC_ROUNDTRIP:-export}"
RT_RTOL=1e-5
[ "${ROUNDTRIP[0]}" = export ] || RT_RTOL="$RTOL"

if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [model ...]" >&2
  exit 2
fi
if [ ! -d "$1" ]; then
  echo "zoo: build directory $1 does not exist" >&2
  exit 2
fi
BUILD="$(cd "$1" && pwd)"
shift
ZOO="$BUILD/zoo"
EDGEC="$BUILD/bin/edgec"

if [ ! -x "$EDGEC" ]; then
  echo "zoo: $EDGEC not found; build the edgec target first" >&2
  exit 2
fi
mapfile -t known < <("$PYTHON" "$HERE/export_models.py" --list)
if [ "${#known[@]}" = 0 ]; then
  echo "zoo: cannot list the models (is $PYTHON with torch installed?)" >&2
  exit 2
fi
if [ $# -gt 0 ]; then
  models=("$@")
  for name in "${models[@]}"; do
    if ! printf '%s\n' "${known[@]}" | grep -qx -- "$name"; then
      echo "zoo: unknown model '$name'; known: ${known[*]}" >&2
      exit 2
    fi
  done
else
  models=("${known[@]}")
fi

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# 1. Export (torch's warnings go to a log, shown only when the export fails).
mkdir -p "$ZOO"
only="$(IFS=,; echo "${models[*]}")"
if ! "$PYTHON" "$HERE/export_models.py" "$ZOO" --only "$only" 2> "$ZOO/export.log"; then
  grep -v -E 'Warning|^\s' "$ZOO/export.log" >&2 || true
  echo "zoo: export failed for some models (full log: $ZOO/export.log)" >&2
fi

passed=0
failed=0
rows=()
for name in "${models[@]}"; do
  dir="$ZOO/$name"
  model="$dir/model.onnx"
  error="-"
  seconds="-"
  roundtrip="-"
  status="FAIL"
  echo "== $name"
  if [ ! -f "$model" ]; then
    echo "zoo: $name: no exported model" >&2
    status="FAIL (export)"
  else
    # 2. ONNX Runtime, cached while its stamp is newer than the model.
    ort_ok=1
    if [ ! -f "$dir/ort/.done" ] || [ ! "$dir/ort/.done" -nt "$model" ]; then
      rm -rf "$dir/ort"
      if node "$HERE/ort_run.js" "$model" "$dir/inputs" "$dir/ort"; then
        touch "$dir/ort/.done"
      else
        ort_ok=0
        status="FAIL (ort)"
      fi
    fi

    # 3. edgec.
    if [ "$ort_ok" = 1 ]; then
      input_args=()
      for f in "$dir"/inputs/*.npy; do
        input_args+=(--input "$(basename "$f" .npy)=$f")
      done
      rm -rf "$dir/edgec"
      mkdir -p "$dir/edgec"
      start="$(now)"
      "$EDGEC" run "$model" "${input_args[@]}" --output-dir "$dir/edgec" \
        "${EXTRA_ARGS[@]+"${EXTRA_ARGS[@]}"}" > "$dir/edgec.log" 2>&1
      rc=$?
      seconds="$(elapsed "$start" "$(now)")"
      if [ "$rc" != 0 ]; then
        echo "zoo: $name: edgec run exited with $rc:" >&2
        tail -n 20 "$dir/edgec.log" >&2
        status="FAIL (edgec)"
      else
        # 4. Compare.
        "$PYTHON" "$HERE/compare.py" "$dir/ort" "$dir/edgec" --rtol "$RTOL" \
          > "$dir/compare.log" 2>&1
        rc=$?
        cat "$dir/compare.log"
        error="$(sed -n 's/^compare: max_error=\([^ ]*\).*/\1/p' "$dir/compare.log")"
        [ -n "$error" ] || error="-"
        if [ "$rc" = 0 ]; then status="ok"; else status="FAIL (compare)"; fi
      fi
      # 5. Export round trip through ONNX Runtime.
      if [ "$status" = "ok" ]; then
        rt="$dir/roundtrip"
        rm -rf "$rt"
        mkdir -p "$rt"
        if ! "$EDGEC" "${ROUNDTRIP[@]}" "$model" -o "$rt/model.onnx" > "$rt/export.log" 2>&1; then
          cat "$rt/export.log" >&2
          status="FAIL (export round trip)"
        elif ! node "$HERE/ort_run.js" "$rt/model.onnx" "$dir/inputs" "$rt/ort" > "$rt/ort.log" 2>&1; then
          cat "$rt/ort.log" >&2
          status="FAIL (ORT on exported model)"
        elif ! "$PYTHON" "$HERE/compare.py" "$dir/ort" "$rt/ort" --rtol "$RT_RTOL" > "$rt/compare.log" 2>&1; then
          cat "$rt/compare.log" >&2
          status="FAIL (round trip compare)"
        fi
        roundtrip="$(sed -n 's/^compare: max_error=\([^ ]*\).*/\1/p' "$rt/compare.log" 2>/dev/null)"
      fi
    fi
  fi
  if [ "$status" = "ok" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
  rows+=("$(printf '%-20s %14s %10s %16s  %s' "$name" "$error" "$seconds" "${roundtrip:--}" "$status")")
done

echo
printf '%-20s %14s %10s %16s  %s\n' "model" "error vs ORT" "edgec s" "round trip err" "status"
for row in "${rows[@]}"; do echo "$row"; done
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
