#!/usr/bin/python3
"""QDQ export vs ONNX Runtime: for each zoo CNN (and the 1-d keyword spotter kws_tcresnet;
not yolo_small: its scores differ from ONNX Runtime's by up to 10 steps, and the first
difference is not edgec's. Traced value by value through every intermediate of the QDQ graph:
the first quantized value that differs is the QuantizeLinear after the SiLU of stem.4's first
bottleneck conv, on 18 of 8192 elements, all from the conv value x = -2.0995903 that both
engines hold bit for bit; x * sigmoid(x) / scale is -13.5000035 exactly (float64), edgec's
Sigmoid (std::exp, within 2 ulp) gives -13.500004 and rounds to 2, ORT's approximate Sigmoid
(up to 61 ulp off on this model) gives -13.499999 and rounds to 3. The detector widens that one
step to 10 by its scores; with every Sigmoid written as 1/(1+exp(-x)) in both engines the
scores agree bit for bit and single conv ties (a 6-ulp summation-order difference at x.5) still
widen to 2-3 steps. A one-step check cannot hold for it; --models yolo_small shows it),
`edgec quantize` (entropy, per-channel) writes a QDQ model; ONNX Runtime runs it, edgec runs
its own int8 execution of it (`edgec run --int8`: Q/DQ folded into QLinearConv/QLinearMatMul
on the reference kernels); every output element must agree within one quantization step of
that output.

The step is the scale of the DequantizeLinear the output comes from (through Flatten,
Reshape or a global average pool, which cannot widen a one-step difference).

Usage: ort_agreement.py BUILD_DIR [--models a,b] [--calib N] [--inputs N]
Needs BUILD_DIR/zoo (the exported zoo) and tools/ort (onnxruntime-node).
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PASS_THROUGH = {"Flatten", "Reshape", "GlobalAveragePool", "Squeeze", "Identity"}


def output_steps(model_path):
    m = onnx.load(model_path)
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    producer = {o: n for n in m.graph.node for o in n.output}
    steps = {}
    for out in m.graph.output:
        v = out.name
        while v in producer and producer[v].op_type in PASS_THROUGH:
            v = producer[v].input[0]
        n = producer.get(v)
        if n is None or n.op_type != "DequantizeLinear":
            raise SystemExit(f"{model_path}: output {out.name} does not come from a DequantizeLinear")
        steps[out.name] = float(inits[n.input[1]].max())
    return steps


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.stderr.write(f"FAILED: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        raise SystemExit(1)
    return r.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--models", default="resnet18,mobilenet_v2,squeezenet1_1,efficientnet_b0,mobilenet_v3_small,"
                                        "kws_tcresnet,tf_same_pad")
    ap.add_argument("--calib", type=int, default=16)
    ap.add_argument("--inputs", type=int, default=2)
    a = ap.parse_args()
    edgec = os.path.join(a.build, "bin", "edgec")
    work = os.path.join(a.build, "quant_ort")
    shutil.rmtree(work, ignore_errors=True)
    failures = 0
    for name in a.models.split(","):
        model = os.path.join(a.build, "zoo", name, "model.onnx")
        d = os.path.join(work, name)
        gen = [sys.executable, os.path.join(ROOT, "scripts", "make_calib_data.py"), model]
        run(gen + [os.path.join(d, "calib"), "--count", str(a.calib), "--seed", "1"])
        run(gen + [os.path.join(d, "eval"), "--count", str(a.inputs), "--seed", "2"])
        qmodel = os.path.join(d, "model.int8.onnx")
        run([edgec, "quantize", model, "--calib", os.path.join(d, "calib"), "--method", "entropy",
             "--per-channel", "-o", qmodel, "-q"])
        steps = output_steps(qmodel)
        input_name = onnx.load(model).graph.input[0].name
        worst = 0.0
        for k, f in enumerate(sorted(os.listdir(os.path.join(d, "eval")))):
            in_dir = os.path.join(d, f"in{k}")
            os.makedirs(in_dir)
            shutil.copy(os.path.join(d, "eval", f), os.path.join(in_dir, input_name + ".npy"))
            run(["node", os.path.join(ROOT, "tests", "zoo", "ort_run.js"), qmodel, in_dir,
                 os.path.join(d, f"ort{k}")])
            run([edgec, "run", qmodel, "--int8", "--input", f"{input_name}={in_dir}/{input_name}.npy",
                 "-o", os.path.join(d, f"edgec{k}"), "-q"])
            for out, step in steps.items():
                fn = out.replace("/", "_") + ".npy"
                want = np.load(os.path.join(d, f"ort{k}", fn)).astype(np.float64)
                got = np.load(os.path.join(d, f"edgec{k}", fn)).astype(np.float64)
                diff = np.abs(want - got) / step
                worst = max(worst, float(diff.max()))
                off = int(np.count_nonzero(diff > 1e-3))
                print(f"{name} input {k} output {out}: max |ORT - edgec int8| = {diff.max():.3f} steps "
                      f"(step {step:.4g}); {off}/{diff.size} elements differ")
        ok = worst <= 1.0 + 1e-3
        failures += not ok
        print(f"{name}: {'ok' if ok else 'FAILED'} (worst {worst:.3f} steps)")
    print(f"{len(a.models.split(',')) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
