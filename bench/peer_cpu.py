"""CPU peer benchmark: edgec's CPU plan against ONNX Runtime (CPU provider) over the model zoo.

usage: peer_cpu.py BUILD_DIR [--threads 1,2] [--runs 20] [--warmup 5] [--rounds 3]
                   [-O 3 | --passes LIST] [--json FILE] [--no-peak] [model ...]

For every thread count and model, both engines run the same inputs (BUILD_DIR/zoo/<model>/
inputs/*.npy) in separate processes, interleaved: each round runs `edgec bench --json` and
bench/ort_bench.js (graph optimization 'all', intraOpNumThreads = threads, interOp 1) one
after the other, the order swapped every round, so both see the same machine load. Each
process does WARMUP untimed runs and RUNS timed runs; the medians printed are over the timed
runs of all rounds. Peak RSS is each process's own maximum resident set (ORT's includes
Node, whose share before the session is made is printed beside it); compile is edgec's
import + optimize + plan, create is ORT's session creation.

The GEMM peak comes from `bench_cpu_kernels --benchmark_filter=GemmPeak` (oneDNN sgemm on a
large square problem) at each thread count; a model's GFLOP/s is 2 x MACs / median latency
and "peak%" is that as a share of the GEMM peak at the same thread count.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run_json(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({r.returncode}): {r.stderr.strip()[-400:]}")
    return json.loads(r.stdout)


def input_args(inputs_dir):
    args = []
    for f in sorted(os.listdir(inputs_dir)):
        if f.endswith(".npy"):
            args += ["--input", f"{f[:-4]}={os.path.join(inputs_dir, f)}"]
    return args


def edgec_once(build, model_dir, threads, runs, warmup, level, passes):
    cmd = [os.path.join(build, "bin", "edgec"), "bench", os.path.join(model_dir, "model.onnx"),
           "--threads", str(threads), "--runs", str(runs), "--warmup", str(warmup), "-O", str(level),
           "--json"] + input_args(os.path.join(model_dir, "inputs"))
    if passes:
        cmd += ["--passes", passes]
    return run_json(cmd)


def ort_once(model_dir, threads, runs, warmup):
    cmd = ["node", os.path.join(HERE, "ort_bench.js"), os.path.join(model_dir, "model.onnx"),
           os.path.join(model_dir, "inputs"), str(threads), str(runs), str(warmup)]
    return run_json(cmd)


def gemm_peak(build):
    """GFLOP/s of the GemmPeak benchmark per thread count ({} when the binary is missing)."""
    exe = os.path.join(build, "bin", "bench_cpu_kernels")
    if not os.path.exists(exe):
        return {}
    r = run_json([exe, "--benchmark_filter=GemmPeak", "--benchmark_format=json",
                  "--benchmark_repetitions=3", "--benchmark_report_aggregates_only=true"])
    peak = {}
    for b in r["benchmarks"]:
        if b.get("aggregate_name") != "median":
            continue
        threads = int(b["name"].split("threads:")[1].split("/")[0])
        peak[threads] = b["GFLOP"]
    return peak


def mib(b):
    return b / 1048576.0


def measure(build, model_dir, threads, args):
    e_samples, o_samples, e_runs, o_runs = [], [], [], []
    for r in range(args.rounds):
        order = ("edgec", "ort") if r % 2 == 0 else ("ort", "edgec")
        for who in order:
            if who == "edgec":
                j = edgec_once(build, model_dir, threads, args.runs, args.warmup, args.O, args.passes)
                e_runs.append(j)
                e_samples += j["samples_ms"]
            else:
                j = ort_once(model_dir, threads, args.runs, args.warmup)
                o_runs.append(j)
                o_samples += j["samples_ms"]
    e_med, o_med = statistics.median(e_samples), statistics.median(o_samples)
    return {
        "model": os.path.basename(model_dir), "threads": threads,
        "edgec_median_ms": e_med, "ort_median_ms": o_med, "ratio": e_med / o_med,
        "edgec_peak_rss_bytes": max(j["peak_rss_bytes"] for j in e_runs),
        "ort_peak_rss_bytes": max(j["peak_rss_bytes"] for j in o_runs),
        "ort_rss_before_session_bytes": max(j["rss_before_session_bytes"] for j in o_runs),
        "edgec_compile_ms": statistics.median(j["compile_ms"] for j in e_runs),
        "ort_session_create_ms": statistics.median(j["session_create_ms"] for j in o_runs),
        "edgec_threads_used": e_runs[0]["threads"],
        "macs": e_runs[0].get("macs", 0), "plan": e_runs[0]["plan"],
        "arena_bytes": e_runs[0]["arena_bytes"],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("models", nargs="*")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("-O", type=int, default=3)
    ap.add_argument("--passes", help="edgec's explicit pass pipeline instead of -O")
    ap.add_argument("--json", help="write every row as JSON to this file")
    ap.add_argument("--no-peak", action="store_true", help="skip the GEMM peak measurement")
    args = ap.parse_intermixed_args()

    zoo = os.path.join(args.build, "zoo")
    models = args.models or sorted(d for d in os.listdir(zoo)
                                   if os.path.exists(os.path.join(zoo, d, "model.onnx")))
    thread_counts = [int(t) for t in args.threads.split(",")]
    peak = {} if args.no_peak else gemm_peak(args.build)
    for t in thread_counts:
        if t in peak:
            print(f"GEMM peak (oneDNN sgemm, {t} thread(s)): {peak[t]:.1f} GFLOP/s")

    rows = []
    head = (f"{'model':<20} {'thr':>3} {'edgec ms':>9} {'ORT ms':>9} {'ratio':>6} "
            f"{'edgec RSS':>10} {'ORT RSS':>10} {'(node)':>7} {'compile':>8} {'create':>8} "
            f"{'GFLOP/s':>8} {'peak%':>6}")
    behind = []
    for t in thread_counts:
        what = f"--passes {args.passes}" if args.passes else f"-O{args.O}"
        print(f"\n{t} thread(s), {args.rounds} round(s) x {args.runs} runs ({args.warmup} warm-up), edgec {what}")
        print(head)
        ratios = []
        for m in models:
            try:
                row = measure(args.build, os.path.join(zoo, m), t, args)
            except (RuntimeError, json.JSONDecodeError, KeyError) as e:
                print(f"{m:<20} {t:>3} error: {e}")
                continue
            rows.append(row)
            ratios.append(row["ratio"])
            gflops = 2.0 * row["macs"] / (row["edgec_median_ms"] * 1e-3) * 1e-9
            share = f"{100.0 * gflops / peak[t]:.0f}%" if t in peak and row["macs"] else "-"
            row["edgec_gflops"] = gflops
            print(f"{m:<20} {t:>3} {row['edgec_median_ms']:>9.2f} {row['ort_median_ms']:>9.2f} "
                  f"{row['ratio']:>6.2f} {mib(row['edgec_peak_rss_bytes']):>7.1f}MiB "
                  f"{mib(row['ort_peak_rss_bytes']):>7.1f}MiB {mib(row['ort_rss_before_session_bytes']):>4.0f}MiB "
                  f"{row['edgec_compile_ms']:>6.0f}ms {row['ort_session_create_ms']:>6.0f}ms "
                  f"{gflops:>8.1f} {share:>6}", flush=True)
            if row["ratio"] > 0.8 or row["edgec_peak_rss_bytes"] >= row["ort_peak_rss_bytes"]:
                behind.append(f"{m} at {t} thread(s): ratio {row['ratio']:.2f}, RSS "
                              f"{mib(row['edgec_peak_rss_bytes']):.1f} vs {mib(row['ort_peak_rss_bytes']):.1f} MiB")
        if ratios:
            print(f"geomean ratio edgec/ORT at {t} thread(s): {statistics.geometric_mean(ratios):.2f}")
    print("\ngoal: ratio <= 0.80 and peak RSS below ORT's on every model at every thread count")
    print("not met: " + ("none" if not behind else "\n  " + "\n  ".join(behind)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"gemm_peak_gflops": peak, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    sys.exit(main())
