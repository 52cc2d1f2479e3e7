#!/usr/bin/env bash
# The demo: exports a zoo model (seeded weights, no download), shows what edgec sees in it
# optimizes it, runs it on the CPU plan and measures it. Later stages (quantize, NPU compile)
# join here as they land.
set -euo pipefail
BUILD="${BUILD:-build}"
MODEL="${MODEL:-resnet18}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
/usr/bin/python3 tests/zoo/export_models.py "$BUILD/zoo" --only "$MODEL"
M="$BUILD/zoo/$MODEL/model.onnx"
echo
echo "\$ edgec inspect $M"
"$BUILD/bin/edgec" inspect "$M"
echo
args=()
for f in "$BUILD/zoo/$MODEL/inputs/"*.npy; do
  n="$(basename "$f" .npy)"
  args+=(--input "$n=$f")
done
mkdir -p "$BUILD/demo"
echo "\$ edgec optimize $M -O 3 -o $BUILD/demo/model.O3.onnx"
"$BUILD/bin/edgec" optimize "$M" -O 3 -o "$BUILD/demo/model.O3.onnx"
echo
echo "\$ edgec run $M ${args[*]} --output-dir $BUILD/demo -v"
"$BUILD/bin/edgec" run "$M" "${args[@]}" --output-dir "$BUILD/demo" -v
echo
echo "\$ edgec bench $M --runs 20"
"$BUILD/bin/edgec" bench "$M" --runs 20
