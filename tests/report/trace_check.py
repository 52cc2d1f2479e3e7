"""Checks a Chrome trace written by `edgec profile --trace` against the Trace Event Format, the
rules tests/report/profile_trace_test.cc's ValidateTrace applies to the traces it builds:
required fields, timestamps that never go back on a thread, every B closed by its E, flows
paired, counters with a value. Prints the tracks and their slice counts.
Usage: trace_check.py TRACE.json [--min-cpu-threads N] [--min-cores N]
  --min-cpu-threads N: at least N CPU thread tracks with slices
  --min-cores N: MATMUL slices of at least N NPU cores overlapping in time
Exit 0 when valid, 1 otherwise.
"""
import argparse
import json
import sys

CPU_PID, NPU_PID = 1, 2


def validate(trace):
    err = []
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        return ["no traceEvents array"]
    last_ts, open_, last_counter = {}, {}, {}
    starts, ends = {}, {}
    for e in trace["traceEvents"]:
        missing = [k for k in ("name", "ph", "pid") if k not in e]
        if missing:
            return [f"event without {missing[0]}: {e}"]
        ph = e["ph"]
        if ph == "M":
            continue
        if not isinstance(e.get("ts"), (int, float)) or "tid" not in e:
            err.append(f"event without ts/tid: {e}")
            continue
        thread = (e["pid"], e["tid"])
        if ph in ("B", "E"):
            if thread in last_ts and e["ts"] < last_ts[thread]:
                err.append(f"time goes back on a thread: {e}")
            last_ts[thread] = e["ts"]
            stack = open_.setdefault(thread, [])
            if ph == "B":
                stack.append(e["name"])
            elif not stack or stack[-1] != e["name"]:
                err.append(f"E without its B: {e}")
            else:
                stack.pop()
        elif ph == "C":
            key = (e["pid"], e["name"])
            if key in last_counter and e["ts"] < last_counter[key]:
                err.append(f"counter goes back: {e}")
            last_counter[key] = e["ts"]
            if not isinstance(e.get("args"), dict) or not e["args"]:
                err.append("counter without value")
        elif ph in ("s", "f"):
            if "id" not in e:
                err.append(f"flow without id: {e}")
            else:
                (starts if ph == "s" else ends)[e["id"]] = (starts if ph == "s" else ends).get(e["id"], 0) + 1
        else:
            err.append(f"unexpected phase {ph}")
    err += [f"B without E on tid {t[1]}" for t, s in open_.items() if s]
    err += [f"flow {i} not paired" for i, n in starts.items() if n != 1 or ends.get(i) != 1]
    err += [f"flow {i} ends without a start" for i in ends if i not in starts]
    return err


def tracks(trace):
    """{(pid, tid): (name, B count)} of the tracks with slices."""
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in trace["traceEvents"]
             if e["ph"] == "M" and e["name"] == "thread_name"}
    count = {}
    for e in trace["traceEvents"]:
        if e["ph"] == "B":
            count[(e["pid"], e["tid"])] = count.get((e["pid"], e["tid"]), 0) + 1
    return {k: (names.get(k, "?"), n) for k, n in sorted(count.items())}


def parallel_cores(trace):
    """The largest number of NPU cores whose MATMUL slices overlap one instant."""
    edges = []
    open_at = {}
    for e in trace["traceEvents"]:
        if e["pid"] != NPU_PID or e.get("cat") != "MATMUL" or e["ph"] not in ("B", "E"):
            continue
        core = (e["tid"] - 1) // 16
        if e["ph"] == "B":
            open_at[e["tid"]] = e["ts"]
        else:
            edges += [(open_at.pop(e["tid"]), 1, core), (e["ts"], -1, core)]
    busy, best = {}, 0
    for _, step, core in sorted(edges, key=lambda x: (x[0], x[1])):
        busy[core] = busy.get(core, 0) + step
        best = max(best, sum(1 for v in busy.values() if v > 0))
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--min-cpu-threads", type=int, default=0)
    ap.add_argument("--min-cores", type=int, default=0)
    a = ap.parse_args()
    trace = json.load(open(a.trace))
    err = validate(trace)
    t = tracks(trace)
    cpu = [name for (pid, _), (name, _) in t.items() if pid == CPU_PID]
    cores = parallel_cores(trace)
    print(f"{a.trace}: {len(trace['traceEvents'])} events, {len(t)} tracks with slices "
          f"({len(cpu)} CPU thread(s): {', '.join(cpu)}), up to {cores} NPU cores computing at once")
    if len(cpu) < a.min_cpu_threads:
        err.append(f"{len(cpu)} CPU thread track(s), expected >= {a.min_cpu_threads}")
    if cores < a.min_cores:
        err.append(f"{cores} NPU cores computing at once, expected >= {a.min_cores}")
    for e in err[:10]:
        print("FAIL:", e)
    print("trace: valid" if not err else f"trace: {len(err)} problem(s)")
    return 1 if err else 0


if __name__ == "__main__":
    sys.exit(main())
