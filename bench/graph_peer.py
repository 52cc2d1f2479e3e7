"""Graph benchmark: node count and copy bytes per inference of edgec -O3 against ONNX
Runtime's own optimized graph (levels `all` and `extended`), over the model zoo.

usage: graph_peer.py BUILD_DIR [model ...]
Copy bytes use one rule for both: output bytes of Transpose, Concat, Pad, Cast and of layout
conversions (ORT's ReorderInput/ReorderOutput, edgec's relayout nodes); a Reshape of a
row-major buffer is a view for both. edgec reports its own count (it knows which nodes
became views); ORT's graph is run with every intermediate as an output to learn the sizes.
Nodes are counted twice: all graph nodes, and the nodes that run: edgec's zero-copy views
(nodes whose outputs the views pass placed in memory that exists: reshape-likes, Split and
Slice views, in-place Concats, folded Pads) do not run; ORT's Reshape/Flatten/Squeeze/
Unsqueeze/Identity alias their input in ORT's CPU allocation planner and do not run either.
Prints ratios edgec/ORT: below 1 means edgec's graph is smaller.
"""
import json
import os
import subprocess
import sys
import tempfile

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
COPY_OPS = {"Transpose", "Concat", "Pad", "Cast", "ReorderInput", "ReorderOutput"}
ALIAS_OPS = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity"}
DTYPE_BYTES = {"float32": 4, "float64": 8, "float16": 2, "int64": 8, "int32": 4, "int8": 1,
               "uint8": 1, "bool": 1, "int16": 2, "uint16": 2}


def ort_graph(model, level, inputs, tmp):
    out = os.path.join(tmp, f"ort_{level}.onnx")
    subprocess.run(["node", os.path.join(HERE, "ort_graph.js"), "optimize", model, level, out],
                   check=True, capture_output=True)
    m = onnx.load(out)
    nodes = len(m.graph.node)
    run = sum(1 for n in m.graph.node if n.op_type not in ALIAS_OPS)
    # Every intermediate as an output, to learn its size.
    names = {o.name for o in m.graph.output}
    for n in m.graph.node:
        for o in n.output:
            if o and o not in names:
                vi = onnx.ValueInfoProto()
                vi.name = o
                m.graph.output.append(vi)
                names.add(o)
    dbg = os.path.join(tmp, f"ort_{level}_dbg.onnx")
    onnx.save(m, dbg)
    r = subprocess.run(["node", os.path.join(HERE, "ort_graph.js"), "shapes", dbg, inputs],
                       check=True, capture_output=True, text=True)
    shapes = json.loads(r.stdout)
    copy = 0
    for n in m.graph.node:
        if n.op_type in COPY_OPS:
            s = shapes[n.output[0]]
            count = 1
            for d in s["dims"]:
                count *= d
            copy += count * DTYPE_BYTES[s["type"]]
    return nodes, run, copy


def ratio(a, b):
    if b == 0:
        return "-" if a == 0 else "inf"
    return f"{a / b:.2f}"


def main():
    build = sys.argv[1]
    zoo = os.path.join(build, "zoo")
    models = sys.argv[2:] or sorted(d for d in os.listdir(zoo) if os.path.exists(os.path.join(zoo, d, "model.onnx")))
    edgec = os.path.join(build, "bin", "edgec")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            model = os.path.join(zoo, name, "model.onnx")
            inputs = os.path.join(zoo, name, "inputs")
            js = os.path.join(tmp, f"{name}.json")
            subprocess.run([edgec, "optimize", model, "-O", "3", "--json", js, "-q"], check=True)
            e = json.load(open(js))
            all_nodes, all_run, all_copy = ort_graph(model, "all", inputs, tmp)
            ext_nodes, ext_run, ext_copy = ort_graph(model, "extended", inputs, tmp)
            en = e["nodes_after"]
            rows.append((name, e["nodes_before"], en, all_nodes, ext_nodes, en - e.get("views_after", 0),
                         all_run, ext_run, e["copy_bytes_after"], all_copy, ext_copy))
    print(f"{'':<20} {'nodes':^38} | {'nodes that run':^38} | {'copy bytes per inference (KiB)':^44}")
    print(f"{'model':<20} {'orig':>5} {'edgec':>6} {'ORT all':>7} {'ORT ext':>7} {'/all':>5} {'/ext':>5}"
          f" | {'edgec':>6} {'ORT all':>7} {'ORT ext':>7} {'/all':>5} {'/ext':>5}"
          f" | {'edgec':>9} {'ORT all':>9} {'ORT ext':>9} {'/all':>5} {'/ext':>5}")
    for name, orig, en, an, xn, er, ar, xr, ec, ac, xc in rows:
        print(f"{name:<20} {orig:>5} {en:>6} {an:>7} {xn:>7} {ratio(en, an):>5} {ratio(en, xn):>5}"
              f" | {er:>6} {ar:>7} {xr:>7} {ratio(er, ar):>5} {ratio(er, xr):>5}"
              f" | {ec / 1024:>9.1f} {ac / 1024:>9.1f} {xc / 1024:>9.1f} {ratio(ec, ac):>5} {ratio(ec, xc):>5}")
    fewer_nodes = sum(1 for r in rows if r[2] < min(r[3], r[4]))
    fewer_run = sum(1 for r in rows if r[5] < min(r[6], r[7]))
    fewer_copies = sum(1 for r in rows if r[8] <= min(r[9], r[10]))
    print(f"edgec has fewer nodes than ORT (both levels) on {fewer_nodes}/{len(rows)} models, fewer nodes "
          f"that run on {fewer_run}/{len(rows)}, no more copy bytes on {fewer_copies}/{len(rows)}")


if __name__ == "__main__":
    main()
