#!/usr/bin/env bash
# NPU time and DRAM traffic of the zoo CNNs (with the 1-d keyword spotter kws_tcresnet and the
# lraspp_mobilenet_v3_large segmentation net, 256x256, and the yolo_small detector, 128x128)
# against their lower bound, per target.
# For each model and target: simulated NPU latency, DRAM bytes moved, the lower bound
# max(MAC array at peak, vector cores at peak, (constants + segment inputs and outputs) /
# DRAM bandwidth) and NPU time / bound, DRAM bytes / (constants + inputs + outputs).
# With BEFORE=path/to/other/edgec it also runs that binary's compile + run on the same
# quantized model and prints its NPU time and DRAM bytes beside (the bound is this build's).
# Usage: bench/npu_residency.sh [BUILD] [MODELS...]   (TARGETS="edge-default edge-mcu" to choose;
# FLAGS="--all-npu" adds compile flags, e.g. every legal node on the NPU: one long segment)
set -euo pipefail
BUILD="${1:-build}"
shift || true
MODELS=("${@:-resnet18 mobilenet_v2 mobilenet_v3_small squeezenet1_1 shufflenet_v2_x1_0 efficientnet_b0 regnet_x_400mf kws_tcresnet lraspp_mobilenet_v3_large yolo_small}")
read -r -a MODELS <<< "${MODELS[*]}"
read -r -a TARGETS <<< "${TARGETS:-edge-default edge-mcu edge-large}"
EDGEC="$BUILD/bin/edgec"
WORK="$BUILD/npu_residency"
mkdir -p "$WORK"
field() {  # field FILE: "ms dram_bytes bound_ms ratio const_io_bytes"
  local f="$1"
  local ms dram bound ratio cio
  ms=$(sed -n 's/^NPU: [0-9]* cycles = \([0-9.]*\) ms.*/\1/p' "$f" | head -1)
  dram=$(sed -n 's/^NPU: .*DRAM \([0-9]*\) B read + \([0-9]*\) B written.*/\1 \2/p' "$f" | head -1 | awk '{print $1 + $2}')
  bound=$(sed -n 's/^NPU lower bound: \([0-9.]*\) ms.*/\1/p' "$f" | head -1)
  ratio=$(sed -n 's/^NPU lower bound: .*bound = \([0-9.]*\)$/\1/p' "$f" | head -1)
  cio=$(sed -n 's/^NPU lower bound: .* for \([0-9]*\) B of constants + \([0-9]*\) B in\/out.*/\1 \2/p' "$f" | head -1 | awk '{print $1 + $2}')
  echo "${ms:--} ${dram:--} ${bound:--} ${ratio:--} ${cio:--}"
}
printf "%-20s %-13s %10s %10s %12s %12s %10s %8s %9s\n" model target "before ms" "NPU ms" "before B" "DRAM B" \
  "bound ms" "t/bound" "B/bound"
for m in "${MODELS[@]}"; do
  onnx="$BUILD/zoo/$m/model.onnx"
  if [[ ! -f "$onnx" ]]; then echo "skip $m: $onnx missing"; continue; fi
  if [[ ! -f "$WORK/$m.qdq.onnx" ]]; then
    /usr/bin/python3 scripts/make_calib_data.py "$onnx" "$WORK/$m.calib" --count 4 --seed 7 > /dev/null
    "$EDGEC" quantize "$onnx" --calib "$WORK/$m.calib" --dtype i8 -o "$WORK/$m.qdq.onnx" > /dev/null 2>&1
  fi
  input="$WORK/$m.calib/$(ls "$WORK/$m.calib" | head -1)"
  iname="$(/usr/bin/python3 -c "import onnx,sys; print(onnx.load(sys.argv[1]).graph.input[0].name)" "$onnx")"
  for t in "${TARGETS[@]}"; do
    "$EDGEC" compile "$WORK/$m.qdq.onnx" --target "$t" ${FLAGS:-} -q -o "$WORK/$m.$t.edgec"
    "$EDGEC" run "$WORK/$m.$t.edgec" --device npu-sim --input "$iname=$input" > "$WORK/$m.$t.txt"
    read -r ms dram bound ratio cio <<< "$(field "$WORK/$m.$t.txt")"
    bms="-" bdram="-"
    if [[ -n "${BEFORE:-}" ]]; then
      "$BEFORE" compile "$WORK/$m.qdq.onnx" --target "$t" ${FLAGS:-} -q -o "$WORK/$m.$t.before.edgec"
      "$BEFORE" run "$WORK/$m.$t.before.edgec" --device npu-sim --input "$iname=$input" > "$WORK/$m.$t.before.txt"
      read -r bms bdram _ <<< "$(field "$WORK/$m.$t.before.txt")"
    fi
    bb=$(awk -v d="$dram" -v c="$cio" 'BEGIN { if (c > 0) printf "%.2f", d / c; else print "-" }')
    printf "%-20s %-13s %10s %10s %12s %12s %10s %8s %9s\n" "$m" "$t" "$bms" "$ms" "$bdram" "$dram" "$bound" \
      "$ratio" "$bb"
  done
done
