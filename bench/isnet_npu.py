#!/usr/bin/env python3
"""The trained ISNet compiled for an NPU target: `edgec run --device npu-sim` against `--device
cpu` of the same compiled file, bit for bit, and the int8 mask against fp32.

ISNet's export fixes its input at 1x3x1024x1024 and bakes the sizes of its 39 decoder Resizes
as constants; a functional simulation of its 160 GMAC at that size takes minutes, so by default
the script runs a copy at --size (a multiple of 32) with those sizes scaled to match: the same
trained weights, the same graph. Inputs are bench/isnet_int8.py's synthetic scenes at that
size. Steps: quantize (i8, --calib scenes), compile for --target, run the first scene with
npu-sim, cpu and the fp32 model; prints whether every output is byte-identical, the wall
time of each run, and the int8 (npu-sim) output's cosine and mask IoU (threshold 0.5) vs fp32.
Exit status 1 when npu-sim and cpu differ.

Usage: bench/isnet_npu.py BUILD [--size 256] [--target edge-default] [--calib 4] [--work DIR]
The model comes from scripts/fetch_trained_models.sh (BUILD/models/isnet.onnx).
"""
import argparse
import os
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import isnet_int8  # noqa: E402  (the synthetic scenes)

FULL = 1024


def run(cmd):
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return time.monotonic() - t0


def resized_copy(src, dst, size):
    """ISNet with input size x size: every Resize's target sizes (Concat of the input's N, C
    and a constant H, W) scaled by size / 1024."""
    m = onnx.load(src)
    producer = {o: n for n in m.graph.node for o in n.output}
    scaled = 0
    for n in m.graph.node:
        if n.op_type != "Resize" or len(n.input) < 4 or not n.input[3]:
            continue
        cat = producer.get(n.input[3])
        const = producer.get(cat.input[1]) if cat is not None and cat.op_type == "Concat" else None
        if const is None or const.op_type != "Constant":
            sys.exit(f"isnet_npu: Resize '{n.name}' does not take Concat(shape, Constant) sizes")
        t = numpy_helper.to_array(const.attribute[0].t)
        if np.any(t * size % FULL):
            sys.exit(f"isnet_npu: Resize '{n.name}' size {t.tolist()} does not scale to {size}")
        const.attribute[0].t.CopyFrom(numpy_helper.from_array((t * size // FULL).astype(t.dtype), const.attribute[0].t.name))
        scaled += 1
    for d, v in zip(m.graph.input[0].type.tensor_type.shape.dim, [1, 3, size, size]):
        d.dim_value = v
    for o in m.graph.output:
        for d in o.type.tensor_type.shape.dim[2:]:
            d.dim_value = size
    del m.graph.value_info[:]
    onnx.save(m, dst)
    return scaled


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--target", default="edge-default")
    ap.add_argument("--calib", type=int, default=4)
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    if a.size % 32 or not 32 <= a.size <= FULL:
        sys.exit(f"isnet_npu: --size {a.size}: a multiple of 32 in [32, {FULL}]")
    edgec = os.path.join(a.build, "bin", "edgec")
    model = os.path.join(a.build, "models", "isnet.onnx")
    if not os.path.exists(model):
        sys.exit(f"{model} missing: run scripts/fetch_trained_models.sh {os.path.join(a.build, 'models')}")
    work = a.work or os.path.join(a.build, "isnet_npu")
    calib = os.path.join(work, f"calib{a.size}")
    os.makedirs(calib, exist_ok=True)
    isnet_int8.SIZE = a.size
    for i in range(a.calib):
        np.save(os.path.join(calib, f"c{i}.npy"), isnet_int8.scene(1000 + i))
    x = os.path.join(work, f"x{a.size}.npy")
    np.save(x, isnet_int8.scene(0))
    if a.size != FULL:
        src = os.path.join(work, f"isnet{a.size}.onnx")
        scaled = resized_copy(model, src, a.size)
        print(f"ISNet at {a.size}x{a.size} ({scaled} Resize sizes scaled), target {a.target}")
    else:
        src = model
        print(f"ISNet at {FULL}x{FULL}, target {a.target}")
    qdq = os.path.join(work, f"isnet{a.size}.i8.qdq.onnx")
    compiled = os.path.join(work, f"isnet{a.size}.{a.target}.edgec")
    t_q = run([edgec, "quantize", src, "--calib", calib, "--dtype", "i8", "-o", qdq])
    t_c = run([edgec, "compile", qdq, "--target", a.target, "-q", "-o", compiled])
    outs, times = {}, {}
    for tag, args in (("npu-sim", [compiled, "--device", "npu-sim"]), ("cpu", [compiled, "--device", "cpu"]),
                      ("fp32", [src])):
        d = os.path.join(work, f"out{a.size}.{a.target}.{tag}")
        times[tag] = run([edgec, "run", *args, "--input", f"input={x}", "--output-dir", d, "-q"])
        outs[tag] = {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d)) if f.endswith(".npy")}
    differ = [f for f in outs["cpu"] if outs["npu-sim"].get(f) != outs["cpu"][f]]
    print(f"quantize {t_q:.1f} s, compile {t_c:.1f} s, run: npu-sim {times['npu-sim']:.1f} s, "
          f"cpu {times['cpu']:.1f} s, fp32 {times['fp32']:.1f} s (wall)")
    print(f"npu-sim vs cpu: {len(outs['cpu']) - len(differ)} of {len(outs['cpu'])} outputs byte-identical"
          + (f"; differ: {', '.join(differ)}" if differ else ""))
    d = os.path.join(work, f"out{a.size}.{a.target}")
    q = np.load(os.path.join(d + ".npu-sim", "output.npy")).astype(np.float64).ravel()
    f = np.load(os.path.join(d + ".fp32", "output.npy")).astype(np.float64).ravel()
    cos = float(f @ q / (np.linalg.norm(f) * np.linalg.norm(q) + 1e-30))
    mf, mq = f > 0.5, q > 0.5
    iou = float((mf & mq).sum() / max(1, (mf | mq).sum()))
    print(f"int8 (npu-sim) vs fp32: cosine {cos:.5f}, mask IoU {iou:.5f} ({int(mf.sum())} foreground px in fp32)")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
