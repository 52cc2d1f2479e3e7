#!/usr/bin/python3
"""QLinearAdd / QLinearMul vs ONNX Runtime on every pair of operand values.

For each case a model DQ(a), DQ(b) -> Add|Mul -> Q with seeded random scales and zero
points (uint8 and int8) is run by ONNX Runtime (which fuses it into its QLinearAdd /
QLinearMul) and by `edgec run --int8` (which folds it into its own QLinearAdd / QLinearMul:
the fast kernel, and with --reference the reference kernel; `-v` says the node was folded
and, on the CPU plan, ran on a fast kernel). The inputs hold all 256 x 256
pairs of values, as two tensors of one shape [1, 256, 16, 16], and as a tensor and a gate
[1, 256, 1, 1] (one value per channel) in both orders; every output byte must be equal.

Usage: ort_binary_ops.py BUILD_DIR [--cases N]
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FULL, GATE = [1, 256, 16, 16], [1, 256, 1, 1]


def model(op, qtype, a_dims, b_dims, params):
    np_t = np.uint8 if qtype == TensorProto.UINT8 else np.int8
    inits = []
    for name, v in params.items():
        inits.append(numpy_helper.from_array(np.array(v, dtype=np.float32 if name[0] == "s" else np_t), name))
    nodes = [helper.make_node("DequantizeLinear", ["a", "sa", "za"], ["fa"]),
             helper.make_node("DequantizeLinear", ["b", "sb", "zb"], ["fb"]),
             helper.make_node(op, ["fa", "fb"], ["f"]),
             helper.make_node("QuantizeLinear", ["f", "sy", "zy"], ["y"])]
    g = helper.make_graph(nodes, f"{op.lower()}", [helper.make_tensor_value_info("a", qtype, a_dims),
                                                    helper.make_tensor_value_info("b", qtype, b_dims)],
                          [helper.make_tensor_value_info("y", qtype, FULL)], inits)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def operand(dims, np_t):
    """All 256 values: along the pixels of each channel (FULL) or along the channels (GATE)."""
    v = np.arange(256, dtype=np.int32) - (128 if np_t == np.int8 else 0)
    if dims == GATE:
        return v.astype(np_t).reshape(GATE)
    return np.broadcast_to(v.reshape(1, 1, 16, 16), FULL).astype(np_t)


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(f"FAILED: {' '.join(cmd)}\n{r.stdout}{r.stderr}")
        raise SystemExit(1)
    return r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--cases", type=int, default=6)
    a = ap.parse_args()
    edgec = os.path.join(a.build, "bin", "edgec")
    work = os.path.join(a.build, "ort_binary_ops")
    shutil.rmtree(work, ignore_errors=True)
    rng = np.random.default_rng(7)
    failures = total = 0
    for op in ("Add", "Mul"):
        for k in range(a.cases):
            qtype = TensorProto.UINT8 if k % 2 == 0 else TensorProto.INT8
            np_t = np.uint8 if qtype == TensorProto.UINT8 else np.int8
            a_dims, b_dims = [(FULL, FULL), (FULL, GATE), (GATE, FULL)][k % 3]
            zr = (0, 256) if np_t == np.uint8 else (-128, 128)
            sa, sb = (float(rng.uniform(0.002, 0.05)) for _ in range(2))
            # The mul's output scale from "most products saturate" to "fine steps".
            sy = sa * sb * float(np.exp(rng.uniform(np.log(20), np.log(4000)))) if op == "Mul" \
                else float(rng.uniform(0.004, 0.08))
            params = {"sa": sa, "sb": sb, "sy": sy, "za": int(rng.integers(*zr)), "zb": int(rng.integers(*zr)),
                      "zy": int(rng.integers(*zr))}
            d = os.path.join(work, f"{op.lower()}{k}")
            os.makedirs(os.path.join(d, "in"))
            path = os.path.join(d, "model.onnx")
            onnx.save(model(op, qtype, a_dims, b_dims, params), path)
            np.save(os.path.join(d, "in", "a.npy"), operand(a_dims, np_t))
            np.save(os.path.join(d, "in", "b.npy"), operand(b_dims, np_t))
            run(["node", os.path.join(ROOT, "tests", "zoo", "ort_run.js"), path, os.path.join(d, "in"),
                 os.path.join(d, "ort")])
            want = np.load(os.path.join(d, "ort", "y.npy")).astype(np.int32)
            inputs = ["--input", f"a={d}/in/a.npy", "--input", f"b={d}/in/b.npy"]
            for mode, extra in (("cpu", []), ("reference", ["--reference"])):
                out = os.path.join(d, mode)
                log = run([edgec, "run", path, "--int8", "-v", "-o", out, "--top", "0"] + extra + inputs)
                got = np.load(os.path.join(out, "y.npy")).astype(np.int32)
                off = int(np.count_nonzero(got != want))
                total += 1
                what = (f"{op} {np_t.__name__} {'x'.join(map(str, a_dims))} {'x'.join(map(str, b_dims))} "
                        f"sa={sa:.4g} za={params['za']} sb={sb:.4g} zb={params['zb']} sy={sy:.4g} zy={params['zy']} "
                        f"({mode})")
                # The one node was folded (into QLinearAdd / QLinearMul) and, on the CPU plan,
                # runs on the fast kernel.
                folded = "1 node(s) folded into integer ops" in log and (mode == "reference" or "1 steps: 1 fast" in log)
                bad = off > 0 or not folded
                failures += bad
                print(f"{'FAILED' if bad else 'ok    '} {what}: {off}/{want.size} bytes differ"
                      + ("" if folded else f"; not one folded QLinear{op} on the {mode} kernel:\n{log}"))
    print(f"{total - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
