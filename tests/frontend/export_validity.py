#!/usr/bin/python3
"""Every ONNX file edgec writes is a valid model: for each export path (`export`,
`optimize -O0..3`, `quantize`) and each model (the zoo and a generated model with several
attention, LayerNorm and GELU blocks whose nodes have no names), the written file

  - passes onnx.checker.check_model(full_check=True) (types and shapes inferred too),
  - has unique node names and keeps the source model's graph output names, in order,
  - loads and runs in ONNX Runtime (tests/zoo/ort_run.js); the float paths must agree
    with ONNX Runtime on the source model within 1e-3 of each output's largest magnitude.

Usage: export_validity.py BUILD_DIR [--models a,b] [--paths export,O0,...] [--keep]
Needs BUILD_DIR/bin/edgec, BUILD_DIR/zoo (the exported zoo) and tools/ort.
"""
import argparse
import collections
import concurrent.futures
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PATHS = ["export", "O0", "O1", "O2", "O3", "quantize", "quantize-int16"]
# quantize-int16: every Softmax / LayerNorm / InstanceNorm with int16 activations (com.microsoft
# QuantizeLinear / DequantizeLinear in the file); only models that have one.
INT16_OPS = {"Softmax", "LayerNormalization", "InstanceNormalization"}
MULTI_BLOCK = "multi_block"
RTOL = 1e-3


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def multi_block_model(path, blocks=3, seq=16, d=32, heads=4, ff=64, seed=7):
    """A pre-norm transformer as an exporter without module names writes it: decomposed
    LayerNorm, attention with K transposed by [0, 2, 3, 1], erf GELU, every node unnamed;
    plus a Constant node that is a graph output."""
    rng = np.random.default_rng(seed)
    nodes, inits = [], []
    counter = collections.Counter()

    def name(base):
        counter[base] += 1
        return f"{base}_{counter[base]}"

    def const(base, arr):
        n = name(base)
        inits.append(numpy_helper.from_array(np.asarray(arr), n))
        return n

    def op(op_type, inputs, **attrs):
        out = name(op_type.lower())
        nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def weight(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    def layernorm(x):
        mean = op("ReduceMean", [x], axes=[-1])
        dx = op("Sub", [x, mean])
        var = op("ReduceMean", [op("Pow", [dx, const("two", np.float32(2.0))])], axes=[-1])
        std = op("Sqrt", [op("Add", [var, const("eps", np.float32(1e-5))])])
        y = op("Div", [dx, std])
        y = op("Mul", [y, const("gamma", (1 + 0.1 * rng.standard_normal(d)).astype(np.float32))])
        return op("Add", [y, const("beta", (0.1 * rng.standard_normal(d)).astype(np.float32))])

    def linear(x, cin, cout):
        y = op("MatMul", [x, const("w", weight(cin, cout))])
        return op("Add", [y, const("b", (0.1 * rng.standard_normal(cout)).astype(np.float32))])

    dh = d // heads
    split = const("split_shape", np.array([1, seq, heads, dh], np.int64))
    merge = const("merge_shape", np.array([1, seq, d], np.int64))
    x = "x"
    for _ in range(blocks):
        h = layernorm(x)
        q = op("Transpose", [op("Reshape", [linear(h, d, d), split])], perm=[0, 2, 1, 3])
        k = op("Transpose", [op("Reshape", [linear(h, d, d), split])], perm=[0, 2, 3, 1])
        v = op("Transpose", [op("Reshape", [linear(h, d, d), split])], perm=[0, 2, 1, 3])
        s = op("Div", [op("MatMul", [q, k]), const("scale", np.float32(np.sqrt(dh)))])
        ctx = op("MatMul", [op("Softmax", [s], axis=-1), v])
        ctx = op("Reshape", [op("Transpose", [ctx], perm=[0, 2, 1, 3]), merge])
        x = op("Add", [x, linear(ctx, d, d)])
        h = linear(layernorm(x), d, ff)
        erf = op("Erf", [op("Div", [h, const("sqrt2", np.float32(1.4142135))])])
        g = op("Mul", [op("Mul", [h, op("Add", [erf, const("one", np.float32(1.0))])]),
                       const("half", np.float32(0.5))])
        x = op("Add", [x, linear(g, ff, d)])
    nodes.append(helper.make_node("Identity", [x], ["y"]))
    nodes.append(helper.make_node("Constant", [], ["values"],
                                  value=numpy_helper.from_array(np.arange(4, dtype=np.float32))))
    for n in nodes:
        n.name = ""
    graph = helper.make_graph(
        nodes, "multi_block",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, seq, d])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, seq, d]),
         helper.make_tensor_value_info("values", TensorProto.FLOAT, [4])],
        inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    onnx.checker.check_model(m, full_check=True)
    onnx.save(m, path)
    os.makedirs(os.path.join(os.path.dirname(path), "inputs"), exist_ok=True)
    np.save(os.path.join(os.path.dirname(path), "inputs", "x.npy"),
            rng.standard_normal((1, seq, d)).astype(np.float32))


def ort(model, inputs, out):
    shutil.rmtree(out, ignore_errors=True)
    return run(["node", os.path.join(ROOT, "tests", "zoo", "ort_run.js"), model, inputs, out])


def problems_in(path, source):
    """What makes `path` an invalid export of `source` (empty list when none)."""
    m = onnx.load(path)
    try:
        onnx.checker.check_model(m, full_check=True)
    except Exception as e:  # the checker raises several types
        return [f"ONNX checker: {str(e).strip().splitlines()[0]}"]
    found = []
    names = collections.Counter(n.name for n in m.graph.node if n.name)
    dup = [n for n, c in names.items() if c > 1]
    if dup:
        found.append(f"{len(dup)} node name(s) used twice, e.g. '{dup[0]}'")
    want = [o.name for o in source.graph.output]
    got = [o.name for o in m.graph.output]
    if got != want:
        found.append(f"graph outputs {got} != source's {want}")
    return found


def compare(ref_dir, got_dir):
    """Largest error relative to each output's largest magnitude, or a message."""
    worst = 0.0
    for f in sorted(os.listdir(ref_dir)):
        want = np.load(os.path.join(ref_dir, f))
        path = os.path.join(got_dir, f)
        if not os.path.exists(path):
            return f"output {f} missing"
        got = np.load(path)
        if got.shape != want.shape:
            return f"output {f}: shape {got.shape} != {want.shape}"
        scale = max(float(np.max(np.abs(want.astype(np.float64)))), 1e-6) if want.size else 1.0
        err = float(np.max(np.abs(got.astype(np.float64) - want))) / scale if want.size else 0.0
        worst = max(worst, err)
    return worst


def check_model(a, edgec, work, name, model):
    """Every export path on one model: (lines to print, files checked, failures)."""
    lines = []
    failures = 0
    checked = 0
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    inputs = os.path.join(os.path.dirname(model), "inputs")
    source = onnx.load(model)
    ref = os.path.join(d, "ort_source")
    rc, out = ort(model, inputs, ref)
    if rc != 0:
        lines.append(f"FAIL {name}: ONNX Runtime cannot run the source model: {out.strip()}")
        return lines, checked, failures + 1
    for p in a.paths.split(","):
        written = os.path.join(d, f"{p}.onnx")
        if p == "export":
            cmd = [edgec, "export", model, "-o", written]
        elif p in ("O0", "O1", "O2", "O3"):
            cmd = [edgec, "optimize", model, "-O", p[1], "-o", written, "-q"]
        elif p == "quantize-int16" and not INT16_OPS & {n.op_type for n in source.graph.node}:
            continue
        elif p in ("quantize", "quantize-int16"):
            calib = os.path.join(d, "calib")
            rc, out = (0, "") if os.path.isdir(calib) else run(
                [sys.executable, os.path.join(ROOT, "scripts", "make_calib_data.py"), model, calib, "--count", "2",
                 "--seed", "1"])
            if rc != 0:
                lines.append(f"FAIL {name} {p}: calibration data: {out.strip()}")
                failures += 1
                continue
            cmd = [edgec, "quantize", model, "--calib", calib, "-o", written, "-q"]
            if p == "quantize-int16":
                cmd += ["--int16", "all"]
        else:
            sys.exit(f"export_validity: unknown path '{p}' (known: {', '.join(PATHS)})")
        rc, out = run(cmd)
        checked += 1
        if rc != 0:
            lines.append(f"FAIL {name} {p}: {' '.join(cmd[1:3])} failed: {out.strip()}")
            failures += 1
            continue
        found = problems_in(written, source)
        got = os.path.join(d, f"ort_{p}")
        rc, out = ort(written, inputs, got)
        if rc != 0:
            found.append(out.strip())
        elif not p.startswith("quantize"):
            err = compare(ref, got)
            if isinstance(err, str):
                found.append(err)
            elif err > RTOL:
                found.append(f"ONNX Runtime's outputs differ from the source model's by {err:.2e} (> {RTOL})")
        if found:
            failures += 1
            lines.append(f"FAIL {name} {p}: " + "; ".join(found))
        else:
            lines.append(f"ok   {name} {p}")
    return lines, checked, failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--models", default="")
    ap.add_argument("--paths", default=",".join(PATHS))
    ap.add_argument("--keep", action="store_true", help="keep the written files")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    edgec = os.path.join(build, "bin", "edgec")
    zoo = os.path.join(build, "zoo")
    work = os.path.join(build, "export_validity")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)

    models = {}
    wanted = [m for m in a.models.split(",") if m]
    if not wanted or MULTI_BLOCK in wanted:
        path = os.path.join(work, MULTI_BLOCK, "model.onnx")
        os.makedirs(os.path.dirname(path))
        multi_block_model(path)
        models[MULTI_BLOCK] = path
    for name in sorted(os.listdir(zoo)) if os.path.isdir(zoo) else []:
        if (not wanted or name in wanted) and os.path.exists(os.path.join(zoo, name, "model.onnx")):
            models[name] = os.path.join(zoo, name, "model.onnx")
    if wanted and set(wanted) - set(models):
        sys.exit(f"export_validity: unknown model(s) {sorted(set(wanted) - set(models))}")

    unknown = [p for p in a.paths.split(",") if p not in PATHS]
    if unknown:
        sys.exit(f"export_validity: unknown path(s) {unknown} (known: {', '.join(PATHS)})")
    # The models side by side (each path is a subprocess of edgec or ONNX Runtime), printed in order.
    failures = 0
    checked = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        jobs = [pool.submit(check_model, a, edgec, work, name, model) for name, model in models.items()]
        for job in jobs:
            lines, c, f = job.result()
            for line in lines:
                print(line, flush=True)
            checked += c
            failures += f
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"export validity: {checked - failures} passed, {failures} failed "
          f"({len(models)} models x {len(a.paths.split(','))} paths)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
