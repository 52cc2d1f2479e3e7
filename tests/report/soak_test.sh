#!/usr/bin/env bash
# A bounded soak (edgec soak): a small int8 CNN (made here with the onnx package: two 3x3
# convs, a residual add, a pool) compiled for edge-default, run RUNS times (default 2000) on
# the simulated NPU on one input: the outputs must be identical in every run and the resident
# memory may not grow by 1% or more after the warm-up.
# Usage: tests/report/soak_test.sh [BUILD] [RUNS]
set -euo pipefail
BUILD="${1:-build}"
RUNS="${2:-2000}"
WORK="$BUILD/soak_test"
mkdir -p "$WORK"
/usr/bin/python3 - "$WORK/tiny.onnx" <<'PY'
import sys
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto
rng = np.random.default_rng(3)
w1 = numpy_helper.from_array((rng.standard_normal((16, 8, 3, 3)) * 0.2).astype(np.float32), "w1")
b1 = numpy_helper.from_array((rng.standard_normal(16) * 0.1).astype(np.float32), "b1")
w2 = numpy_helper.from_array((rng.standard_normal((16, 16, 3, 3)) * 0.1).astype(np.float32), "w2")
b2 = numpy_helper.from_array((rng.standard_normal(16) * 0.1).astype(np.float32), "b2")
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
    helper.make_node("Relu", ["c1"], ["r1"], name="relu1"),
    helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
    helper.make_node("Add", ["c2", "r1"], ["s"], name="add"),
    helper.make_node("Relu", ["s"], ["r2"], name="relu2"),
    helper.make_node("MaxPool", ["r2"], ["y"], kernel_shape=[2, 2], strides=[2, 2], name="pool"),
]
g = helper.make_graph(nodes, "tiny", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 16, 16])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 8, 8])], [w1, b1, w2, b2])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, sys.argv[1])
PY
/usr/bin/python3 scripts/make_calib_data.py "$WORK/tiny.onnx" "$WORK/calib" --count 4 --seed 7 > /dev/null
"$BUILD/bin/edgec" quantize "$WORK/tiny.onnx" --calib "$WORK/calib" --dtype i8 -o "$WORK/tiny.qdq.onnx" > /dev/null
"$BUILD/bin/edgec" compile "$WORK/tiny.qdq.onnx" --target edge-default --cpu-gmacs 0.1 -q -o "$WORK/tiny.edgec"
"$BUILD/bin/edgec" soak "$WORK/tiny.edgec" --runs "$RUNS" --json > "$WORK/soak.json"
/usr/bin/python3 - "$WORK/soak.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"soak: {s['runs']} runs, median {s['latency_median_s']*1e3:.3f} ms, drift {100*s['latency_drift']:+.1f}%, "
      f"RSS {s['rss_after_warmup_bytes']/1e6:.1f} MB -> {s['rss_end_bytes']/1e6:.1f} MB ({100*s['rss_growth']:+.2f}%), "
      f"{s['outputs_changed']} output change(s)")
ok = s["outputs_changed"] == 0 and s["rss_growth"] < 0.01
print("soak: ok" if ok else "soak: FAIL")
sys.exit(0 if ok else 1)
PY
