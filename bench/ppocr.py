#!/usr/bin/env python3
"""The trained PaddleOCR PP-OCRv4 models (detector, recognizer, orientation classifier) in fp32
on the CPU: `edgec bench` against ONNX Runtime on the same input, same thread count, in the
same run, alternated ROUNDS times; prints each side's median of medians and the ratio
edgec / ORT (below 1: edgec is faster).

Inputs are one rendered page (det, 320x320) and one rendered text line (rec 48x320, cls
48x192) from tests/zoo/ppocr.py's renderer, preprocessed as PaddleOCR does.

Usage: bench/ppocr.py BUILD [--threads 1,2] [--rounds 3] [--runs 30]
The models come from scripts/fetch_trained_models.sh (BUILD/models/ppocr_*.onnx; fetched when
missing).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "zoo"))
import ppocr  # noqa: E402  (the renderer and the preprocessing)
import trained  # noqa: E402  (the fetch)


def edgec_ms(build, model, shape, threads, runs):
    r = subprocess.run([os.path.join(build, "bin", "edgec"), "bench", model, "--shape", shape, "--threads",
                        str(threads), "--runs", str(runs), "--json"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["latency_ms"]["median"]


def ort_ms(model, inputs, threads, runs):
    r = subprocess.run(["node", os.path.join(ROOT, "bench", "ort_bench.js"), model, inputs, str(threads), str(runs),
                        "5"], capture_output=True, text=True, check=True)
    return json.loads(r.stdout)["latency_ms"]["median"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=30)
    a = ap.parse_args()
    models = trained.fetch(a.build, "ppocr")
    page = ppocr.det_input(ppocr.page(np.random.default_rng(1))[0])
    line = ppocr.text_crop("Invoice 1284", ppocr.FONTS[0])
    cases = {"det": page, "rec": ppocr.line_input(line, ppocr.REC_W), "cls": ppocr.line_input(line, ppocr.CLS_W)}
    print(f"{'model':<6} {'input':<14} {'threads':>7} {'edgec ms':>9} {'ORT ms':>9} {'edgec/ORT':>9}")
    with tempfile.TemporaryDirectory() as tmp:
        for name, x in cases.items():
            x = x[None].astype(np.float32)
            d = os.path.join(tmp, name)
            os.makedirs(d)
            np.save(os.path.join(d, "x.npy"), x)
            model = os.path.join(models, f"ppocr_{name}.onnx")
            shape = "x=" + "x".join(str(v) for v in x.shape)
            for t in (int(v) for v in a.threads.split(",")):
                e, o = [], []
                for _ in range(a.rounds):  # alternated, so that load on the machine hits both
                    e.append(edgec_ms(a.build, model, shape, t, a.runs))
                    o.append(ort_ms(model, d, t, a.runs))
                em, om = statistics.median(e), statistics.median(o)
                print(f"{name:<6} {shape[2:]:<14} {t:>7} {em:>9.3f} {om:>9.3f} {em / om:>9.2f}")


if __name__ == "__main__":
    main()
