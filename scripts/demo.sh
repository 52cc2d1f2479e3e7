#!/usr/bin/env bash
# The demo: exports a zoo model (seeded weights, no download), shows what edgec sees in it,
# optimizes it, runs it on the CPU plan and measures it; then the whole NPU chain: quantize
# with generated calibration data, compile for the default target, run the compiled file on
# the CPU and on the simulated NPU, check the two agree bit for bit, and print the per-layer
# table and the totals (and the same with single buffering, for the speedup).
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

echo
echo "# The NPU chain"
CALIB="$BUILD/demo/calib"
/usr/bin/python3 scripts/make_calib_data.py "$M" "$CALIB" --count 8 --seed 1
IN="$(ls "$CALIB"/*.npy | head -1)"
NAME="$(/usr/bin/python3 -c "import onnx,sys; print(onnx.load(sys.argv[1]).graph.input[0].name)" "$M")"
echo "\$ edgec compile $M --target edge-default --calib $CALIB -o $BUILD/demo/model.edgec --emit=asm $BUILD/demo/model.asm"
"$BUILD/bin/edgec" compile "$M" --target edge-default --calib "$CALIB" -o "$BUILD/demo/model.edgec" \
  --emit=asm "$BUILD/demo/model.asm"
echo
echo "\$ edgec run $BUILD/demo/model.edgec --device cpu --input $NAME=$IN --output-dir $BUILD/demo/cpu"
"$BUILD/bin/edgec" run "$BUILD/demo/model.edgec" --device cpu --input "$NAME=$IN" --output-dir "$BUILD/demo/cpu"
echo
echo "\$ edgec run $BUILD/demo/model.edgec --device npu-sim --input $NAME=$IN --output-dir $BUILD/demo/npu --report $BUILD/demo/report.html"
"$BUILD/bin/edgec" run "$BUILD/demo/model.edgec" --device npu-sim --input "$NAME=$IN" --output-dir "$BUILD/demo/npu" \
  --report "$BUILD/demo/report.html" \
  | tee "$BUILD/demo/npu.txt"
for f in "$BUILD/demo/cpu/"*.npy; do
  cmp "$f" "$BUILD/demo/npu/$(basename "$f")"
done
echo "npu-sim and cpu outputs agree bit for bit"
echo
echo "\$ edgec compile ... --single-buffer; edgec run ... --device npu-sim"
"$BUILD/bin/edgec" compile "$M" --target edge-default --calib "$CALIB" --single-buffer -q -o "$BUILD/demo/model.single.edgec"
"$BUILD/bin/edgec" run "$BUILD/demo/model.single.edgec" --device npu-sim --input "$NAME=$IN" > "$BUILD/demo/npu1.txt"
/usr/bin/python3 - "$BUILD/demo/npu.txt" "$BUILD/demo/npu1.txt" <<'PY'
import re, sys
def cycles(path):
    return float(re.search(r"^NPU: ([0-9.]+) cycles", open(path).read(), re.M).group(1))
d, s = cycles(sys.argv[1]), cycles(sys.argv[2])
print(f"NPU cycles: double buffering {d:.0f}, single buffering {s:.0f}: double buffering is {s / d:.2f}x faster")
PY
