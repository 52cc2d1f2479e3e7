# A notebook-style walk through edgec from Python: load, optimize, run on the CPU, quantize,
# compile for an NPU target, see where each node runs and why, run on the simulated NPU,
# compare with the float model. Usage: python3 int8_npu_walkthrough.py MODEL.onnx
import sys
from collections import Counter

import numpy as np

import edgec

path = sys.argv[1] if len(sys.argv) > 1 else "model.onnx"

# %% Load and look at the model
model = edgec.load(path)
inp = model.inputs[0]
print("inputs:", model.inputs, "outputs:", model.outputs)

# %% Float on the CPU (-O3), with a profile
rng = np.random.default_rng(0)
x = {inp["name"]: rng.uniform(-1, 1, inp["shape"]).astype(np.float32)}
cpu = edgec.load(path).optimize(level=3).session()
y = cpu.run(x)
prof = cpu.profile()
print(f"CPU: {prof['total_seconds'] * 1e3:.2f} ms over {len(prof['nodes'])} steps")

# %% INT8: calibrate on a few samples (any iterable of dicts of arrays)
calib = ({inp["name"]: rng.uniform(-1, 1, inp["shape"]).astype(np.float32)} for _ in range(4))
model.quantize(calib=calib, method="entropy", per_channel=True)

# %% Compile for the default NPU target and see the placement
compiled = model.compile(target="edge-default")
units = Counter(p["unit"] for p in compiled.placements())
print(f"placement: {units['npu']} node(s) on the NPU, {units['cpu']} on the CPU")
for p in compiled.placements()[:3]:
    print(f"  {p['unit']}  {p['op']} '{p['node']}': {p['reason']}")

# %% Run on the simulated NPU
npu = compiled.session("npu-sim")
npu.run(x)
p = npu.profile()
print(f"npu-sim: {p['total_seconds'] * 1e3:.3f} ms simulated, {p['npu_cycles']:.0f} NPU cycles")

# %% How far is INT8 from float, and is the NPU bit exact with the CPU's int8 kernels?
for name, s in edgec.compare(cpu, npu, x).items():
    print(f"{name}: cosine {s['cosine']:.4f}, SQNR {s['sqnr_db']:.1f} dB")
exact = all(s["bit_equal"] for s in edgec.compare(compiled.session("cpu"), npu, x).values())
print("npu-sim == cpu bit for bit:", exact)
assert exact
