"""A ComfyUI custom node that runs one UNet step through edgec, on the CPU or the simulated NPU.

The node compiles the UNet once per (model, target, calibration) for the NPU target — quantize to
INT8 on generated calibration samples, fold Q/DQ into integer ops, partition CPU|NPU by cost,
lower the NPU segments — and keeps the compiled model in a process-wide cache, so every later
call of the graph only runs it. Each call takes a ComfyUI IMAGE (a float tensor [B, H, W, C] with
values in 0..1), maps it to the UNet's input ([1, C, h, w] in -1..1, resized to the model's h x w
when the image has another size), runs one denoising step x - strength * unet(x) per batch item
and returns the result as an IMAGE of the input's size, with a text summary of where the nodes
ran and why.

tests/python/test_comfyui_node.py drives this class the way the app does.
"""
import os
import threading
from collections import Counter

import numpy as np

import edgec

try:  # ComfyUI hands IMAGE over as a torch tensor; plain numpy arrays work as well.
    import torch
except ImportError:  # pragma: no cover - torch is a dependency of ComfyUI, not of edgec
    torch = None

DEFAULT_MODEL = os.environ.get("EDGEC_UNET", "unet_small/model.onnx")
DEVICES = ["npu-sim", "cpu"]

_cache = {}  # (model path, target, calibration samples, seed) -> _Compiled
_cache_lock = threading.Lock()


class _Compiled:
    """A compiled UNet and one session per device (sessions are made on first use)."""

    def __init__(self, compiled):
        self.compiled = compiled
        self.input = compiled.inputs[0]
        self.sessions = {}
        self.lock = threading.Lock()  # a session runs one call at a time

    def session(self, device):
        if device not in self.sessions:
            self.sessions[device] = self.compiled.session(device)
        return self.sessions[device]


def _compile_unet(model_path, target, samples, seed):
    """Quantizes the float UNet to INT8 on `samples` seeded inputs (uniform in -1..1, the range
    the node feeds it) and compiles it for `target`."""
    model = edgec.load(model_path)
    info = model.inputs[0]
    rng = np.random.default_rng(seed)
    calib = ({info["name"]: rng.uniform(-1, 1, info["shape"]).astype(np.float32)} for _ in range(samples))
    model.quantize(calib=calib, method="minmax", per_channel=True, dtype="i8")
    return _Compiled(model.compile(target=target))


def compiled_unet(model_path, target="edge-default", samples=4, seed=0):
    """The cached compiled model for these settings; compiles it on the first request."""
    key = (os.path.abspath(model_path), target, int(samples), int(seed))
    with _cache_lock:
        if key not in _cache:
            _cache[key] = _compile_unet(model_path, target, int(samples), int(seed))
        return _cache[key]


def placement_summary(compiled, device, profile):
    """One paragraph: node counts per unit, the CPU nodes' reasons (grouped), the run's figures."""
    places = compiled.placements()
    units = Counter(p["unit"] for p in places)
    lines = [f"target {compiled.target}: {units['npu']} node(s) on the NPU, {units['cpu']} on the CPU"]
    reasons = Counter((p["op"], p["reason"]) for p in places if p["unit"] == "cpu")
    for (op, reason), n in reasons.most_common(5):
        lines.append(f"  cpu x{n} {op}: {reason}")
    if device == "npu-sim":
        lines.append(f"ran on npu-sim: {profile['npu_cycles']:.0f} NPU cycles, "
                     f"{profile['total_seconds'] * 1e3:.3f} ms simulated")
    else:
        lines.append(f"ran on cpu (int8 kernels): {profile['total_seconds'] * 1e3:.3f} ms")
    return "\n".join(lines)


def _resize_nearest(x, h, w):
    """[C, H, W] -> [C, h, w], nearest neighbour."""
    rows = (np.arange(h) * x.shape[1]) // h
    cols = (np.arange(w) * x.shape[2]) // w
    return x[:, rows][:, :, cols]


class EdgecUNetStep:
    """One UNet denoising step compiled by edgec for an NPU target."""

    @classmethod
    def INPUT_TYPES(cls):
        return {
            "required": {
                "image": ("IMAGE",),
                "model_path": ("STRING", {"default": DEFAULT_MODEL}),
                "target": ("STRING", {"default": "edge-default"}),
                "device": (DEVICES, {"default": "npu-sim"}),
                "strength": ("FLOAT", {"default": 0.1, "min": 0.0, "max": 1.0, "step": 0.01}),
            },
            "optional": {
                "calibration_samples": ("INT", {"default": 4, "min": 1, "max": 64}),
            },
        }

    RETURN_TYPES = ("IMAGE", "STRING")
    RETURN_NAMES = ("image", "placement")
    FUNCTION = "step"
    CATEGORY = "edgec"
    DESCRIPTION = "Runs one UNet step compiled by edgec (INT8) on the CPU or the simulated NPU."

    def step(self, image, model_path, target, device, strength, calibration_samples=4):
        if device not in DEVICES:
            raise ValueError(f"EdgecUNetStep: device '{device}' is not one of {DEVICES}")
        as_torch = torch is not None and isinstance(image, torch.Tensor)
        pixels = image.detach().cpu().numpy() if as_torch else np.asarray(image)
        if pixels.ndim != 4:
            raise ValueError(f"EdgecUNetStep: IMAGE must be [B, H, W, C], got shape {pixels.shape}")
        unet = compiled_unet(model_path, target, calibration_samples)
        _, c, h, w = unet.input["shape"]
        if pixels.shape[3] != c:
            raise ValueError(f"EdgecUNetStep: IMAGE has {pixels.shape[3]} channels, "
                             f"{model_path} takes {c}")
        out = np.empty(pixels.shape, np.float32)
        with unet.lock:
            session = unet.session(device)
            for b in range(pixels.shape[0]):
                chw = pixels[b].transpose(2, 0, 1).astype(np.float32) * 2 - 1  # 0..1 -> -1..1
                x = _resize_nearest(chw, h, w)
                (eps,) = session.run({unet.input["name"]: x[None]}).values()
                y = x - strength * eps[0]
                y = _resize_nearest(y, pixels.shape[1], pixels.shape[2])
                out[b] = np.clip((y.transpose(1, 2, 0) + 1) / 2, 0, 1)
            summary = placement_summary(unet.compiled, device, session.profile())
        result = torch.from_numpy(out) if as_torch else out
        return (result, summary)


NODE_CLASS_MAPPINGS = {"EdgecUNetStep": EdgecUNetStep}
NODE_DISPLAY_NAME_MAPPINGS = {"EdgecUNetStep": "UNet step (edgec, NPU)"}
