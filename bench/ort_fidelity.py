#!/usr/bin/python3
"""Output cosine of a quantized (QDQ) model vs its float source, both run by ONNX Runtime
(tests/zoo/ort_run.js) on every sample of an evaluation folder (the layout
scripts/make_calib_data.py writes). Prints "cosine min X mean Y" of the first output.

Usage: ort_fidelity.py FLOAT.onnx QDQ.onnx EVAL_DIR
"""
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def run(model, inputs, out):
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run(["node", os.path.join(ROOT, "tests", "zoo", "ort_run.js"), model, inputs, out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"ort_fidelity: {model}: {r.stdout + r.stderr}".strip())
    first = onnx.load(model, load_external_data=False).graph.output[0].name
    name = "".join(c if c.isalnum() or c in "._-" else "_" for c in first)
    return np.load(os.path.join(out, name + ".npy")).astype(np.float64).ravel()


def main():
    fp32, qdq, eval_dir = sys.argv[1:4]
    first_input = onnx.load(fp32, load_external_data=False).graph.input[0].name
    cosines = []
    with tempfile.TemporaryDirectory() as tmp:
        for s in sorted(os.listdir(eval_dir)):
            src = os.path.join(eval_dir, s)
            if os.path.isdir(src):
                inputs = src
            else:
                inputs = os.path.join(tmp, "in")
                shutil.rmtree(inputs, ignore_errors=True)
                os.makedirs(inputs)
                shutil.copy(src, os.path.join(inputs, first_input + ".npy"))
            a = run(fp32, inputs, os.path.join(tmp, "a"))
            b = run(qdq, inputs, os.path.join(tmp, "b"))
            cosines.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-30)))
    print(f"cosine min {min(cosines):.6f} mean {np.mean(cosines):.6f}")


if __name__ == "__main__":
    main()
