#!/usr/bin/env python3
"""No zoo model has a step on a reference kernel (issue 30).

Usage: tests/zoo/fast_steps.py BUILD_DIR [model ...]

For every model of BUILD_DIR/zoo, `edgec bench --profile --top 0 --json` (fp32, -O3, one
thread, a few runs) lists every step it ran: the static steps, the dynamic part (NMS tails,
If/Loop/Scan) and, inside a control-flow step, its subgraph plans. A step whose kernel says
"reference" fails the model, naming the step and the reason. The models with a dynamic part
(refine_loop, detector_nms) also run `edgec run` on the CPU plan and with --reference on the
same seeded inputs, and their outputs must agree within 1e-5 of each output's scale.
Exits non-zero when any model fails.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

DYNAMIC = ["refine_loop", "detector_nms"]


def bench_steps(edgec, model):
    out = subprocess.run(
        [edgec, "bench", model, "--profile", "--top", "0", "--json", "--threads", "1", "--runs", "3",
         "--warmup", "1"],
        capture_output=True, text=True)
    if out.returncode != 0:
        return None, out.stderr.strip().splitlines()[-1:] or ["exit %d" % out.returncode]
    steps = json.loads(out.stdout)["profile"]["steps"]
    return steps, []


def run_outputs(edgec, model, extra):
    with tempfile.TemporaryDirectory() as d:
        out = subprocess.run([edgec, "run", model, "-q", "--seed", "3", "-o", d] + extra, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip())
        return {f: np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))}


def main():
    if len(sys.argv) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    build = sys.argv[1]
    edgec = os.path.join(build, "bin", "edgec")
    zoo = os.path.join(build, "zoo")
    models = sys.argv[2:] or sorted(m for m in os.listdir(zoo) if os.path.isfile(os.path.join(zoo, m, "model.onnx")))
    failed = 0
    for name in models:
        model = os.path.join(zoo, name, "model.onnx")
        steps, errors = bench_steps(edgec, model)
        problems = list(errors)
        for s in steps or []:
            if s["kernel"].startswith("reference"):
                problems.append("step %d %s '%s': %s" % (s["step"], s["op"], s["node"], s["kernel"]))
        if name in DYNAMIC and not errors:
            fast = run_outputs(edgec, model, [])
            ref = run_outputs(edgec, model, ["--reference"])
            if fast.keys() != ref.keys():
                problems.append("outputs %s vs reference %s" % (sorted(fast), sorted(ref)))
            for k in sorted(set(fast) & set(ref)):
                a, b = fast[k].astype(np.float64), ref[k].astype(np.float64)
                if a.shape != b.shape:
                    problems.append("%s: shape %s vs reference %s" % (k, a.shape, b.shape))
                    continue
                scale = max(1.0, float(np.abs(b).max()) if b.size else 1.0)
                err = float(np.abs(a - b).max()) / scale if b.size else 0.0
                if err > 1e-5:
                    problems.append("%s: error %.3g vs reference" % (k, err))
        status = "ok" if not problems else "FAIL"
        print("%-20s %4s  %d step(s)%s" % (name, status, len(steps or []), "" if not problems else ""))
        for p in problems:
            print("    " + p)
        failed += bool(problems)
    print("%d passed, %d failed" % (len(models) - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
