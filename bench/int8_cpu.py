"""INT8 on the CPU: edgec FP32, edgec INT8, ONNX Runtime FP32 and ONNX Runtime on the QDQ
model, over the zoo CNNs, in one interleaved run.

usage: int8_cpu.py BUILD_DIR [--threads 1,2] [--runs 20] [--warmup 5] [--rounds 3]
                   [--calib 16] [--method entropy] [--json FILE] [model ...]

Per model, once: calibration inputs from scripts/make_calib_data.py (seed 1), then
`edgec quantize MODEL --calib DIR --method METHOD --per-channel` writes the QDQ model
(BUILD_DIR/int8_cpu/<model>/model.int8.onnx; u8 asymmetric activations, s8 per-channel
weights). For every thread count and model, each round runs four processes one after the
other, the order rotated every round so all see the same machine load:

  edgec fp32   `edgec bench model.onnx -O 3`
  edgec int8   `edgec bench model.int8.onnx --int8 -O 3` (Q/DQ folded into QLinearConv on
               the fast int8 kernels, float islands on the fast f32 kernels)
  ORT fp32     bench/ort_bench.js model.onnx (graph optimization 'all')
  ORT qdq      bench/ort_bench.js model.int8.onnx ('all' fuses the QDQ patterns into its
               int8 kernels)

on the zoo's inputs (BUILD_DIR/zoo/<model>/inputs), each with WARMUP untimed and RUNS timed
runs; the medians are over the timed runs of all rounds. Goal: edgec INT8 <= 0.5 x ORT FP32.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CNNS = ["resnet18", "resnet18_bn", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1",
        "shufflenet_v2_x1_0", "efficientnet_b0"]


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    return r.stdout


def input_args(inputs_dir):
    args = []
    for f in sorted(os.listdir(inputs_dir)):
        if f.endswith(".npy"):
            args += ["--input", f"{f[:-4]}={os.path.join(inputs_dir, f)}"]
    return args


def quantized_model(build, model, args):
    """The QDQ model of `model`, made once per edgec binary (calibration data and quantize)."""
    src = os.path.join(build, "zoo", model, "model.onnx")
    work = os.path.join(build, "int8_cpu", model)
    out = os.path.join(work, "model.int8.onnx")
    stamp = os.path.join(work, "made_with.txt")
    # The quantizer's own version counts too: what it quantizes changes (e.g. the
    # squeeze-excitation Muls), so a model made by an older edgec is made again.
    edgec = os.stat(os.path.join(build, "bin", "edgec"))
    how = f"calib {args.calib} seed 1 method {args.method} per-channel edgec {edgec.st_size} {edgec.st_mtime_ns}"
    if os.path.exists(out) and os.path.exists(stamp) and open(stamp).read() == how:
        return out
    os.makedirs(work, exist_ok=True)
    calib = os.path.join(work, "calib")
    run(["/usr/bin/python3", os.path.join(ROOT, "scripts", "make_calib_data.py"), src, calib,
         "--count", str(args.calib), "--seed", "1"])
    run([os.path.join(build, "bin", "edgec"), "quantize", src, "--calib", calib, "--method", args.method,
         "--per-channel", "-o", out])
    with open(stamp, "w") as f:
        f.write(how)
    return out


def once(who, build, model_dir, qdq, threads, args):
    inputs = os.path.join(model_dir, "inputs")
    fp32 = os.path.join(model_dir, "model.onnx")
    if who.startswith("edgec"):
        int8 = who == "edgec int8"
        cmd = [os.path.join(build, "bin", "edgec"), "bench", qdq if int8 else fp32, "--threads", str(threads),
               "--runs", str(args.runs), "--warmup", str(args.warmup), "-O", "3", "--json"] + input_args(inputs)
        if int8:
            cmd.append("--int8")
    else:
        cmd = ["node", os.path.join(HERE, "ort_bench.js"), qdq if who == "ORT qdq" else fp32, inputs, str(threads),
               str(args.runs), str(args.warmup)]
    return json.loads(run(cmd))


WHO = ["edgec fp32", "edgec int8", "ORT fp32", "ORT qdq"]


def measure(build, model, threads, args):
    model_dir = os.path.join(build, "zoo", model)
    qdq = quantized_model(build, model, args)
    samples = {w: [] for w in WHO}
    plans = {}
    for r in range(args.rounds):
        order = WHO[r % 4:] + WHO[:r % 4]
        for who in order:
            j = once(who, build, model_dir, qdq, threads, args)
            samples[who] += j["samples_ms"]
            if "plan" in j:
                plans[who] = j["plan"]
    med = {w: statistics.median(s) for w, s in samples.items()}
    return {"model": model, "threads": threads, "median_ms": med, "plans": plans,
            "int8_vs_ort_fp32": med["edgec int8"] / med["ORT fp32"],
            "int8_vs_ort_qdq": med["edgec int8"] / med["ORT qdq"],
            "int8_vs_edgec_fp32": med["edgec int8"] / med["edgec fp32"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("models", nargs="*")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calib", type=int, default=16, help="calibration inputs per model")
    ap.add_argument("--method", default="entropy")
    ap.add_argument("--json", help="write every row as JSON to this file")
    args = ap.parse_intermixed_args()
    models = args.models or CNNS
    rows, behind = [], []
    for t in [int(x) for x in args.threads.split(",")]:
        print(f"\n{t} thread(s), {args.rounds} round(s) x {args.runs} runs ({args.warmup} warm-up), medians in ms")
        print(f"{'model':<20} {'edgec fp32':>10} {'edgec int8':>10} {'ORT fp32':>9} {'ORT qdq':>8} "
              f"{'int8/ORTfp32':>12} {'int8/ORTqdq':>11} {'int8/fp32':>9}")
        ratios = []
        for m in models:
            try:
                row = measure(args.build, m, t, args)
            except (RuntimeError, json.JSONDecodeError, KeyError) as e:
                print(f"{m:<20} error: {e}")
                continue
            rows.append(row)
            med = row["median_ms"]
            ratios.append(row["int8_vs_ort_fp32"])
            print(f"{m:<20} {med['edgec fp32']:>10.2f} {med['edgec int8']:>10.2f} {med['ORT fp32']:>9.2f} "
                  f"{med['ORT qdq']:>8.2f} {row['int8_vs_ort_fp32']:>12.2f} {row['int8_vs_ort_qdq']:>11.2f} "
                  f"{row['int8_vs_edgec_fp32']:>9.2f}", flush=True)
            if row["int8_vs_ort_fp32"] > 0.5:
                behind.append(f"{m} at {t} thread(s): edgec int8 / ORT fp32 = {row['int8_vs_ort_fp32']:.2f}")
        if ratios:
            print(f"geomean edgec int8 / ORT fp32 at {t} thread(s): {statistics.geometric_mean(ratios):.2f}")
    print("\ngoal: edgec INT8 <= 0.50 x ORT FP32 on every model at every thread count")
    print("not met: " + ("none" if not behind else "\n  " + "\n  ".join(behind)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
