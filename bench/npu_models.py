#!/usr/bin/env python3
"""Whole models on the NPU: per model, the int8 compile's coverage, its simulated latency
split and its fidelity against fp32.

For each model of the zoo: calibration data from scripts/make_calib_data.py (4 samples,
seed 7), `edgec quantize --dtype i8`, `edgec compile --target T --json`, `edgec profile
--json` (NPU simulated, CPU share from the cost model) and `edgec compare --int8` on one
more sample. Prints one row per model and target: nodes and MACs on the NPU, latency =
NPU + CPU + copies + cache, the NPU's share of it, the output cosine vs fp32, and the CPU
nodes grouped by reason.

Usage: bench/npu_models.py [--build BUILD] [--targets edge-default,edge-mcu] [MODEL ...]
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
DEFAULT_MODELS = ["unet_small", "transformer", "bert_tiny", "sd_unet", "mnv3_fpn_db", "resnet18", "mobilenet_v2",
                  "mobilenet_v3_small", "efficientnet_b0", "squeezenet1_1", "shufflenet_v2_x1_0"]


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
    return r.stdout


def sample_inputs(onnx_path, sample):
    """--input flags for one calibration sample (a .npy, or a folder of NAME.npy)."""
    if os.path.isdir(sample):
        return [f"{os.path.splitext(f)[0]}={os.path.join(sample, f)}" for f in sorted(os.listdir(sample))]
    name = run([PY, "-c", "import onnx,sys; print(onnx.load(sys.argv[1]).graph.input[0].name)", onnx_path]).strip()
    return [f"{name}={sample}"]


def output_names(onnx_path):
    out = run([PY, "-c", "import onnx,sys; print('\\n'.join(o.name for o in onnx.load(sys.argv[1]).graph.output))",
               onnx_path])
    return set(out.split())


def measure(edgec, model, onnx_path, target, work):
    calib = os.path.join(work, model + ".calib")
    if not os.path.isdir(calib):
        run([PY, os.path.join(ROOT, "scripts/make_calib_data.py"), onnx_path, calib, "--count", "5", "--seed", "7"])
    samples = sorted(os.listdir(calib))
    # Calibrate on the first four, measure fidelity on the fifth.
    cal4 = os.path.join(work, model + ".calib4")
    if not os.path.isdir(cal4):
        os.makedirs(cal4)
        for s in samples[:4]:
            os.symlink(os.path.join(calib, s), os.path.join(cal4, s))
    qdq = os.path.join(work, model + ".qdq.onnx")
    if not os.path.exists(qdq):
        run([edgec, "quantize", onnx_path, "--calib", cal4, "--dtype", "i8", "-o", qdq, "-q"])
    art = os.path.join(work, f"{model}.{target}.edgec")
    placement = os.path.join(work, f"{model}.{target}.json")
    run([edgec, "compile", qdq, "--target", target, "--json", placement, "-o", art, "-q"])
    prof = json.loads(run([edgec, "profile", art, "--json"]))
    nodes = json.load(open(placement))["placements"]
    macs_total = sum(op["macs"] for op in prof["ops"])
    macs_npu = sum(op["macs"] for op in prof["ops"] if op["unit"] == "npu")
    flags = []
    for i in sample_inputs(onnx_path, os.path.join(calib, samples[-1])):
        flags += ["-i", i]
    cmp_json = os.path.join(work, model + ".compare.json")
    run([edgec, "compare", onnx_path, qdq, "--int8", "--json", cmp_json, "-q"] + flags)
    outs = output_names(onnx_path)
    cos = [l["cosine"] for l in json.load(open(cmp_json))["layers"] if l["a_value"] in outs]
    reasons = collections.Counter((n["op"], n["reason"].split(":")[0]) for n in nodes if n["unit"] != "npu")
    return {
        "model": model, "target": target,
        "npu_nodes": sum(1 for n in nodes if n["unit"] == "npu"), "nodes": len(nodes),
        "mac_share": macs_npu / macs_total if macs_total else 1.0,
        "latency_ms": prof["latency_s"] * 1e3, "npu_ms": prof["npu_s"] * 1e3, "cpu_ms": prof["cpu_s"] * 1e3,
        "copy_ms": prof["copy_s"] * 1e3, "cache_ms": prof["cache_s"] * 1e3,
        "cosine": min(cos) if cos else float("nan"),
        "cpu_reasons": reasons.most_common(6),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--build", default="build")
    ap.add_argument("--targets", default="edge-default")
    ap.add_argument("--json", help="also write the rows as JSON")
    a = ap.parse_args()
    edgec = os.path.join(a.build, "bin", "edgec")
    work = tempfile.mkdtemp(prefix="npu_models.")
    rows = []
    print(f"{'model':20} {'target':13} {'NPU nodes':>10} {'MACs':>7} {'latency ms':>10} "
          f"{'= NPU':>7} {'+ CPU':>7} {'+ copy':>7} {'+ cache':>7} {'NPU %':>6} {'cosine':>8}")
    for m in a.models or DEFAULT_MODELS:
        onnx_path = os.path.join(a.build, "zoo", m, "model.onnx")
        if not os.path.exists(onnx_path):
            print(f"{m:20} (not in {a.build}/zoo)")
            continue
        for t in a.targets.split(","):
            try:
                r = measure(edgec, m, onnx_path, t, work)
            except RuntimeError as e:
                print(f"{m:20} {t:13} failed: {e}")
                continue
            rows.append(r)
            print(f"{m:20} {t:13} {r['npu_nodes']:>4}/{r['nodes']:<5} {100 * r['mac_share']:6.1f}% "
                  f"{r['latency_ms']:10.3f} {r['npu_ms']:7.3f} {r['cpu_ms']:7.3f} {r['copy_ms']:7.3f} "
                  f"{r['cache_ms']:7.3f} {100 * r['npu_ms'] / r['latency_ms']:5.1f}% {r['cosine']:8.5f}")
            for (op, why), n in r["cpu_reasons"]:
                print(f"{'':36}cpu: {n} x {op}: {why}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
