#!/usr/bin/env bash
# Compiled zoo models (the seven CNNs, regnet_x_400mf (grouped convs), pool_branches (average pools), unet_small,
# transformer, bert_tiny, sd_unet, the mnv3_fpn_db detector exported at 256x256 here, since
# its 640x640 copy takes minutes to simulate on every target, lraspp_mobilenet_v3_large (dilated
# depthwise convs on the vector cores) exported at 128x128 here, detector_nms, whose
# NonMaxSuppression tail runs on the CPU with outputs of data-dependent size, and kws_tcresnet
# and speech_lstm, whose 1-d convolutions and pools run as 2-d with H = 1, and yolo_small (C2f
# Split/Concat, SPPF max pools, nearest upsample, the DFL softmax moved to the last axis), and
# tf_same_pad (a TensorFlow-style MobileNet whose explicit "same" Pads fold into its convs)):
# `edgec run --device npu-sim` must equal `--device cpu` bit for bit, for
# every target in targets/ (double buffering) and on the default target with single
# buffering. Each model is quantized once (i8 activations) with generated calibration data;
# a model with norms or softmaxes also once with them in int16 (`--int16 all`, the ".int16"
# cases: 2-byte values through NPU segments, the int16 layers placed by cost), and that file
# once more on edge-default with every legal node on the NPU (".int16.all": the int16 norms,
# softmaxes and requantizes run by the simulator and handed over to the CPU's islands).
# The models are checked NPU_CHECK_JOBS at a time (default: the machine's cores; compiling and
# simulating are single-threaded), each into its own log, printed in the models' order.
# Usage: scripts/npu_zoo_check.sh [BUILD] [MODELS...]
set -euo pipefail
BUILD="${1:-build}"
shift || true
MODELS=("${@:-resnet18 resnet18_bn mobilenet_v2 mobilenet_v3_small squeezenet1_1 shufflenet_v2_x1_0 efficientnet_b0 regnet_x_400mf pool_branches unet_small transformer bert_tiny sd_unet mnv3_fpn_db lraspp_mobilenet_v3_large detector_nms kws_tcresnet speech_lstm yolo_small tf_same_pad}")
read -r -a MODELS <<< "${MODELS[*]}"
EDGEC="$BUILD/bin/edgec"
WORK="$BUILD/npu_zoo_check"
mkdir -p "$WORK"
# One model: every target and variant; prints "ok   TAG" or "FAIL TAG: ..." per case.
check_model() {
  local m="$1" onnx
  onnx="$BUILD/zoo/$m/model.onnx"
  if [[ $m == mnv3_fpn_db ]]; then  # the same seeded model at 256x256
    /usr/bin/python3 tests/zoo/export_models.py "$WORK/zoo" --only "$m" --image-size 256 > /dev/null 2>&1 ||
      { echo "FAIL $m: export at 256x256"; return 1; }
    onnx="$WORK/zoo/$m/model.onnx"
  fi
  if [[ $m == lraspp_mobilenet_v3_large ]]; then  # the same seeded model at 128x128
    /usr/bin/python3 tests/zoo/export_models.py "$WORK/zoo" --only "$m" --image-size 128 > /dev/null 2>&1 ||
      { echo "FAIL $m: export at 128x128"; return 1; }
    onnx="$WORK/zoo/$m/model.onnx"
  fi
  if [[ ! -f "$onnx" ]]; then echo "skip $m: $onnx missing"; return 0; fi
  /usr/bin/python3 scripts/make_calib_data.py "$onnx" "$WORK/$m.calib" --count 4 --seed 7 > /dev/null ||
    { echo "FAIL $m: calibration data"; return 1; }
  "$EDGEC" quantize "$onnx" --calib "$WORK/$m.calib" --dtype i8 -o "$WORK/$m.qdq.onnx" > /dev/null 2>&1 ||
    { echo "FAIL $m: quantize"; return 1; }
  variants=("")
  if "$EDGEC" quantize "$onnx" --calib "$WORK/$m.calib" --dtype i8 --int16 all -o "$WORK/$m.int16.qdq.onnx" 2>/dev/null |
      grep -q 'of them int16'; then
    variants+=(".int16")
  fi
  # The first calibration sample: one .npy (a single input) or a folder of NAME.npy.
  sample="$WORK/$m.calib/$(ls "$WORK/$m.calib" | head -1)"
  inputs=()
  if [[ -d "$sample" ]]; then
    for f in "$sample"/*.npy; do inputs+=(--input "$(basename "$f" .npy)=$f"); done
  else
    iname="$(/usr/bin/python3 -c "import onnx,sys; print(onnx.load(sys.argv[1]).graph.input[0].name)" "$onnx")"
    inputs=(--input "$iname=$sample")
  fi
  cases=()
  for t in targets/*.json; do cases+=("$(basename "$t" .json):"); done
  cases+=("edge-default:--single-buffer")
  [[ ${#variants[@]} -gt 1 ]] && cases+=("edge-default:--all-npu")
  for c in "${cases[@]}"; do
   for v in "${variants[@]}"; do
    t="${c%%:*}"
    flag="${c#*:}"
    [[ $flag == --all-npu && -z $v ]] && continue
    suffix=""
    [[ $flag == --single-buffer ]] && suffix=.single
    [[ $flag == --all-npu ]] && suffix=.all
    tag="$m$v.$t$suffix"
    rm -rf "$WORK/$tag.npu" "$WORK/$tag.cpu"
    "$EDGEC" compile "$WORK/$m$v.qdq.onnx" --target "$t" $flag -q -o "$WORK/$tag.edgec" ||
      { echo "FAIL $tag: compile"; continue; }
    "$EDGEC" run "$WORK/$tag.edgec" --device npu-sim "${inputs[@]}" --output-dir "$WORK/$tag.npu" -q ||
      { echo "FAIL $tag: run on npu-sim"; continue; }
    "$EDGEC" run "$WORK/$tag.edgec" --device cpu "${inputs[@]}" --output-dir "$WORK/$tag.cpu" -q ||
      { echo "FAIL $tag: run on cpu"; continue; }
    same=1
    for f in "$WORK/$tag.cpu/"*.npy; do cmp -s "$f" "$WORK/$tag.npu/$(basename "$f")" || same=0; done
    if [[ $same == 1 ]]; then echo "ok   $tag"; else echo "FAIL $tag: npu-sim != cpu"; fi
   done
  done
}

# Every step of check_model handles its own failure (set -e does not hold inside `||`).
run_model() {
  check_model "$1" > "$WORK/$1.log" 2>&1 || echo "FAIL $1: the check stopped early" >> "$WORK/$1.log"
}
JOBS="${NPU_CHECK_JOBS:-$(nproc)}"
for m in "${MODELS[@]}"; do
  while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n || true; done
  run_model "$m" &
done
wait
pass=0
fail=0
for m in "${MODELS[@]}"; do
  cat "$WORK/$m.log"
  pass=$((pass + $(grep -c '^ok ' "$WORK/$m.log" || true)))
  fail=$((fail + $(grep -c '^FAIL ' "$WORK/$m.log" || true)))
done
echo "npu zoo check: $pass passed, $fail failed"
[[ $fail == 0 ]]
