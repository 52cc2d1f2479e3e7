#!/usr/bin/env bash
# int8 vs mixed precision (int16 activations at every Softmax / LayerNorm / GroupNorm /
# InstanceNorm, quantization.md "int16 activations") on the zoo models where int8 is weakest:
# output cosine vs FP32 of edgec's integer execution on held-out inputs, the same for ONNX
# Runtime on the written QDQ files, and the simulated latency of each compiled for a target.
#
# Usage: bench/mixed_precision.sh [BUILD_DIR] [MODELS...]   (CALIB=16 EVAL=16 TARGET=edge-default)
set -euo pipefail
BUILD="${1:-build}"; shift || true
MODELS=("$@"); [ ${#MODELS[@]} -eq 0 ] && MODELS=(bert_tiny transformer unet_small sd_unet)
CALIB="${CALIB:-16}"; EVAL="${EVAL:-16}"; TARGET="${TARGET:-edge-default}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
EDGEC="$BUILD/bin/edgec"
WORK="$BUILD/mixed_precision"
mkdir -p "$WORK"
for m in "${MODELS[@]}"; do
  model="$BUILD/zoo/$m/model.onnx"
  [ -f "$model" ] || { echo "skip $m: $model missing"; continue; }
  d="$WORK/$m"
  rm -rf "$d"; mkdir -p "$d"
  /usr/bin/python3 "$ROOT/scripts/make_calib_data.py" "$model" "$d/calib" --count "$CALIB" --seed 1 >/dev/null
  /usr/bin/python3 "$ROOT/scripts/make_calib_data.py" "$model" "$d/eval" --count "$EVAL" --seed 2 >/dev/null
  echo "=== $m ($CALIB calibration / $EVAL evaluation inputs, i8 activations, target $TARGET)"
  for mode in int8 mixed; do
    extra=()
    [ "$mode" = mixed ] && extra=(--int16 all)
    out="$("$EDGEC" quantize "$model" --calib "$d/calib" --dtype i8 "${extra[@]}" -o "$d/$mode.onnx" --eval "$d/eval" 2>/dev/null)"
    pairs="$(grep -o '[0-9]* of them int16' <<<"$out" || echo "0 of them int16")"
    cos="$(grep -m1 -o 'cosine min [0-9.]* mean [0-9.]*' <<<"$out")"
    "$EDGEC" compile "$d/$mode.onnx" --target "$TARGET" -q -o "$d/$mode.edgec"
    lat="$("$EDGEC" profile "$d/$mode.edgec" 2>/dev/null | grep -m1 -o 'latency .*' || true)"
    ortcos="$(/usr/bin/python3 "$ROOT/bench/ort_fidelity.py" "$model" "$d/$mode.onnx" "$d/eval" 2>&1 | tail -1)"
    printf '  %-5s edgec %s (%s); ONNX Runtime on the QDQ file: %s; %s\n' "$mode" "$cos" "$pairs" "$ortcos" "$lat"
  done
done
