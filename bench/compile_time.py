#!/usr/bin/python3
"""Time of `edgec compile` (quantized zoo models, NPU targets), with the CLI's heap policy
(tools/edgec/heap_policy.cc: freed memory kept for reuse) and with glibc's default one.

The default is what the CLI gets when GLIBC_TUNABLES sets any malloc parameter: here
`glibc.malloc.perturb=0`, which changes nothing else. Both variants run interleaved, ROUNDS
times each; the table gives medians of the wall time, of the CPU time (user + system) and of
the page faults (minor + major, from /usr/bin/time), and the ratio default / kept. The two
compiled files must be identical (the policy changes no result).

Usage: bench/compile_time.py [BUILD] [--models a,b] [--targets t1,t2] [--rounds N]
Quantized models come from BUILD/npu_residency (bench/npu_residency.sh writes them); a
missing one is quantized here with generated calibration data.
"""
import argparse
import filecmp
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def quantized(build, edgec, model):
    work = os.path.join(build, "npu_residency")
    qdq = os.path.join(work, f"{model}.qdq.onnx")
    if os.path.exists(qdq):
        return qdq
    onnx = os.path.join(build, "zoo", model, "model.onnx")
    if not os.path.exists(onnx):
        sys.exit(f"compile_time: {onnx} missing (tests/zoo/export_models.py writes the zoo)")
    os.makedirs(work, exist_ok=True)
    calib = os.path.join(work, f"{model}.calib")
    subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "make_calib_data.py"), onnx, calib, "--count", "4",
                    "--seed", "7"], check=True, capture_output=True)
    subprocess.run([edgec, "quantize", onnx, "--calib", calib, "--dtype", "i8", "-o", qdq], check=True,
                   capture_output=True)
    return qdq


def timed(cmd, env):
    """(wall s, user + system s, page faults) of one run."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as t:
        r = subprocess.run(["/usr/bin/time", "-o", t.name, "-f", "%e %U %S %R %F"] + cmd, env=env,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"compile_time: {' '.join(cmd)} failed: {r.stderr.strip()}")
        wall, user, sys_s, minor, major = t.read().split()[-5:]
    return float(wall), float(user) + float(sys_s), int(minor) + int(major)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--models", default="mobilenet_v2,resnet18,efficientnet_b0")
    ap.add_argument("--targets", default="edge-default,edge-mcu")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    edgec = os.path.join(build, "bin", "edgec")
    kept_env = {k: v for k, v in os.environ.items() if k != "GLIBC_TUNABLES"}
    default_env = dict(kept_env, GLIBC_TUNABLES="glibc.malloc.perturb=0")
    print(f"{'model':<18} {'target':<13} {'kept s':>7} {'default s':>9} {'ratio':>6} {'kept cpu':>8} "
          f"{'dflt cpu':>8} {'ratio':>6} {'kept faults':>11} {'dflt faults':>11}")
    with tempfile.TemporaryDirectory() as tmp:
        for model in [m for m in a.models.split(",") if m]:
            qdq = quantized(build, edgec, model)
            for target in [t for t in a.targets.split(",") if t]:
                runs = {"kept": [], "default": []}
                for _ in range(a.rounds):
                    for name, env in (("kept", kept_env), ("default", default_env)):
                        out = os.path.join(tmp, f"{name}.edgec")
                        runs[name].append(timed([edgec, "compile", qdq, "--target", target, "-q", "-o", out], env))
                if not filecmp.cmp(os.path.join(tmp, "kept.edgec"), os.path.join(tmp, "default.edgec"), shallow=False):
                    sys.exit(f"compile_time: {model} on {target}: the two compiled files differ")
                k = [statistics.median(x) for x in zip(*runs["kept"])]
                d = [statistics.median(x) for x in zip(*runs["default"])]
                print(f"{model:<18} {target:<13} {k[0]:7.2f} {d[0]:9.2f} {d[0] / k[0]:6.2f} {k[1]:8.2f} {d[1]:8.2f} "
                      f"{d[1] / k[1]:6.2f} {k[2]:11.0f} {d[2]:11.0f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
