"""The profile's HTML report rendered in headless Chromium (Debian `chromium`).

Compiles a zoo CNN (int8, edge-default), writes `edgec profile --html`, then:
  - the trace written beside it validates (trace_check.py);
  - the DOM Chromium built has the plots: the timeline, roofline, occupancy and placement
    SVGs, one roofline point per NPU layer with MACs and DRAM bytes (from `profile --json`);
    the placement graph's boxes hold every node once, one edge path per pair of connected
    boxes (the graph's edges from `profile --json`) and a dashed copy edge for each pair on
    different units;
  - a screenshot shows every plot drawn: the timeline's execute and load bars, the roof, the
    placement boxes and the occupancy areas each cover pixels of their colour;
  - the console logged no error.
Usage: html_render_test.py BUILD [MODEL]   (MODEL default squeezenet1_1)
"""
import json
import os
import re
import shutil
import subprocess
import sys

from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import trace_check  # noqa: E402

BUILD = sys.argv[1] if len(sys.argv) > 1 else "build"
MODEL = sys.argv[2] if len(sys.argv) > 2 else "squeezenet1_1"
EDGEC = os.path.join(BUILD, "bin", "edgec")
WORK = os.path.join(BUILD, "html_render")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def main():
    if not CHROMIUM:
        print("FAIL: chromium not installed (scripts/install-deps.sh installs it)")
        return 1
    onnx = os.path.join(BUILD, "zoo", MODEL, "model.onnx")
    if not os.path.exists(onnx):
        print(f"FAIL: {onnx} missing (tests/zoo/export_models.py)")
        return 1
    os.makedirs(WORK, exist_ok=True)
    calib = os.path.join(WORK, "calib")
    run("/usr/bin/python3", "scripts/make_calib_data.py", onnx, calib, "--count", "2", "--seed", "7")
    qdq = os.path.join(WORK, "model.qdq.onnx")
    run(EDGEC, "quantize", onnx, "--calib", calib, "--dtype", "i8", "-o", qdq)
    compiled = os.path.join(WORK, "model.edgec")
    # Every node of the model may go to the NPU; the report must draw both units, so the
    # classifier's global pool is pinned to the CPU (a user's pin, shown as such).
    plan = os.path.join(WORK, "placement.json")
    run(EDGEC, "compile", qdq, "--target", "edge-default", "-q", "--json", plan, "-o", compiled)
    pool = [p["node"] for p in json.load(open(plan))["placements"] if p["op"].endswith("GlobalAveragePool")]
    pins = ["--pin", f"{pool[-1]}=cpu"] if pool else []
    run(EDGEC, "compile", qdq, "--target", "edge-default", "-q", *pins, "-o", compiled)
    html = os.path.abspath(os.path.join(WORK, "report.html"))
    trace = os.path.join(WORK, "trace.json")
    prof = json.loads(run(EDGEC, "profile", compiled, "--html", html, "--trace", trace, "--json"))
    npu_points = sum(1 for o in prof["ops"] if o["simulated"] and o["macs"] > 0 and o["cycles"] > 0 and o["dram_bytes"] > 0)

    src = open(html).read()
    failures = []
    if re.search(r"<script|https?://(?!www\.w3\.org/2000/svg)|@import|url\(", src):
        failures.append("the report loads something from outside or runs a script")

    chrome = [CHROMIUM, "--headless=new", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
              "--enable-logging=stderr", "--v=0", "--window-size=1280,2600"]
    png = os.path.join(WORK, "report.png")
    shot = subprocess.run(chrome + [f"--screenshot={png}", "file://" + html], capture_output=True, text=True, timeout=180)
    dom = subprocess.run(chrome + ["--dump-dom", "file://" + html], capture_output=True, text=True, timeout=180)
    console = [l for l in (shot.stderr + dom.stderr).splitlines() if "CONSOLE" in l or "Uncaught" in l]
    if console:
        failures.append("console messages: " + " | ".join(console[:3]))

    d = dom.stdout
    for cls in ("timeline", "roofline", "occupancy", "placement"):
        if f'<svg class="{cls}"' not in d:
            failures.append(f"the DOM has no {cls} plot")
    points = d.count('<circle class="layer"')
    if points != npu_points or points == 0:
        failures.append(f"roofline: {points} points, expected {npu_points} (NPU layers with MACs)")
    trace_errors = trace_check.validate(json.load(open(trace)))
    if trace_errors:
        failures.append(f"trace: {len(trace_errors)} problem(s), first: {trace_errors[0]}")
    members = [int(m) for m in re.findall(r'<rect class="node (?:npu|cpu)" data-ops="(\d+)"', d)]
    boxes = len(members)
    if sum(members) != len(prof["ops"]) or boxes == 0:
        failures.append(f"placement: boxes hold {sum(members)} nodes, expected {len(prof['ops'])}")
    if boxes == len(prof["ops"]):  # nothing collapsed: the edges are the graph's
        units = [o["unit"] for o in prof["ops"]]
        pairs = {(a, b) for a, b in prof["edges"]}
        want_copies = sum(1 for a, b in pairs if units[a] != units[b])
        edges, copies = d.count('<path class="edge'), d.count('<path class="edge copy"')
        if edges != len(pairs) or edges == 0:
            failures.append(f"placement: {edges} edges, expected {len(pairs)}")
        if copies != want_copies or d.count('<circle class="copy"') != want_copies:
            failures.append(f"placement: {copies} copy edges, expected {want_copies}")
        print(f"  placement graph: {boxes} boxes, {edges} edges, {copies} copies between the units")
    if d.count('<polygon class="series"') != 3:
        failures.append("occupancy: expected 3 series")

    img = Image.open(png).convert("RGB")
    counts = {}
    for px in img.getdata():
        counts[px] = counts.get(px, 0) + 1

    def near(rgb, tol=6):
        return sum(n for c, n in counts.items() if all(abs(c[i] - rgb[i]) <= tol for i in range(3)))

    units = [o["unit"] for o in prof["ops"]]
    box_px = 96 * 20 * 4 // 5
    if "cpu" not in units:
        failures.append("the compiled model has no CPU node: the CPU box colour is not checked")
    expect = {
        "timeline execute bars": ((0x2E, 0x9E, 0x5B), 300),
        "timeline load bars": ((0x5A, 0xA9, 0xE6), 300),
        "roof line and limits": ((0xC0, 0x39, 0x2B), 150),
        # A box is 96 x 20 px, of which its label's glyphs take up to a fifth.
        "placement boxes (NPU)": ((0x2F, 0x6F, 0xB0), box_px * min(5, units.count("npu"))),
        "placement boxes (CPU)": ((0xD9, 0x82, 0x2B), box_px * min(1, units.count("cpu"))),
        "SRAM occupancy area": ((0xB5, 0xCB, 0xE2), 500),   # #2f6fb0 at 35% over white
        "DRAM bandwidth area": ((0xB5, 0xDD, 0xC5), 500),   # #2e9e5b at 35% over white
    }
    for what, (rgb, least) in expect.items():
        n = near(rgb)
        print(f"  {what}: {n} px")
        if n < least:
            failures.append(f"{what}: {n} pixels of {rgb}, expected >= {least}")
    white = counts.get((255, 255, 255), 0) / (img.width * img.height)
    print(f"  screenshot {img.width}x{img.height}, {100 * white:.1f}% white; {points} roofline points, {boxes} nodes")
    for f in failures:
        print("FAIL:", f)
    print("html render: ok" if not failures else f"html render: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
