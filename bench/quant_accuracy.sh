#!/usr/bin/env bash
# INT8 accuracy vs FP32 on the zoo CNNs: per-channel weights, entropy calibration on 64
# seeded calibration inputs, evaluated on 200 different inputs from the same distribution
# (standard normal, as the zoo's own inputs), with edgec's own int8 execution (Q/DQ folded
# into QLinearConv on the reference kernels). Prints output cosine and top-1 agreement.
#
# Usage: bench/quant_accuracy.sh [BUILD_DIR] [MODELS...]   (CALIB=64 EVAL=200 METHOD=entropy)
# Takes a few minutes: the int8 path runs on the reference kernels.
set -euo pipefail
BUILD="${1:-build}"; shift || true
MODELS=("$@"); [ ${#MODELS[@]} -eq 0 ] && MODELS=(resnet18 mobilenet_v2 squeezenet1_1)
CALIB="${CALIB:-64}"; EVAL="${EVAL:-200}"; METHOD="${METHOD:-entropy}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
WORK="$BUILD/quant_accuracy"
mkdir -p "$WORK"
for m in "${MODELS[@]}"; do
  model="$BUILD/zoo/$m/model.onnx"
  d="$WORK/$m"
  rm -rf "$d"; mkdir -p "$d"
  /usr/bin/python3 "$ROOT/scripts/make_calib_data.py" "$model" "$d/calib" --count "$CALIB" --seed 1
  /usr/bin/python3 "$ROOT/scripts/make_calib_data.py" "$model" "$d/eval" --count "$EVAL" --seed 2
  echo "=== $m ($METHOD, per-channel, $CALIB calibration / $EVAL evaluation inputs)"
  "$BUILD/bin/edgec" quantize "$model" --calib "$d/calib" --method "$METHOD" --per-channel \
    --scales-out "$d/scales.json" -o "$d/model.int8.onnx" --eval "$d/eval" 2>/dev/null | grep -v '^  float:'
done
