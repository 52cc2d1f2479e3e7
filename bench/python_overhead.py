#!/usr/bin/python3
"""What the Python module adds to a run: Session.run from Python (numpy in, dict of arrays
out) against the time the C++ Session::Run measured for the same call (profile()
["total_seconds"]), on a tiny model (one Add of two [1, 64] tensors, made here with
onnx.helper) where the overhead is not hidden by compute, and on a zoo model.

Usage: bench/python_overhead.py [BUILD] [--runs N]
"""
import argparse
import os
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper


def tiny_model(path):
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [1, 64])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [1, 64])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])
    g = helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "tiny", [a, b], [y])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), path)


def measure(edgec, path, feeds, runs):
    s = edgec.load(path).session(threads=1)
    for _ in range(10):
        s.run(feeds)
    py, cpp = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        s.run(feeds)
        py.append(time.perf_counter() - t0)
        cpp.append(s.profile()["total_seconds"])
    py, cpp = np.median(py) * 1e6, np.median(cpp) * 1e6
    return py, cpp


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--runs", type=int, default=2000)
    args = ap.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python"))
    import edgec

    with tempfile.TemporaryDirectory() as d:
        tiny = os.path.join(d, "tiny.onnx")
        tiny_model(tiny)
        x = np.ones((1, 64), np.float32)
        cases = [("tiny Add [1,64]", tiny, {"a": x, "b": x}, args.runs)]
        zoo = os.path.join(args.build, "zoo", "squeezenet1_1", "model.onnx")
        if os.path.exists(zoo):
            img = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
            cases.append(("squeezenet1_1", zoo, {"input": img}, max(20, args.runs // 100)))
        print(f"{'model':<18} {'python run':>12} {'C++ Run':>12} {'overhead':>10} {'ratio':>7}  (median µs)")
        for name, path, feeds, runs in cases:
            py, cpp = measure(edgec, path, feeds, runs)
            print(f"{name:<18} {py:>12.1f} {cpp:>12.1f} {py - cpp:>10.1f} {py / cpp:>6.2f}x")


if __name__ == "__main__":
    main()
