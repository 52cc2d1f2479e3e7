#!/usr/bin/python3
"""Writes seeded calibration / evaluation inputs for a model from the distribution the zoo
uses (standard normal float inputs), since nothing may be downloaded.

Usage: make_calib_data.py MODEL.onnx OUT_DIR --count N [--seed S] [--images]

For a model with one input it writes OUT_DIR/sample_0000.npy ...; with several inputs one
subfolder per sample holding <input>.npy each (the layout `edgec quantize --calib` reads).
Integer inputs (token ids) are uniform in [0, 1000). Dynamic dims become 1. --images
writes PNGs instead (uniform random pixels, 256x256) to exercise the image path.
Different seeds give disjoint sample streams (calibrate with one, evaluate with another).
"""
import argparse
import os
import re

import numpy as np
import onnx

DTYPES = {1: np.float32, 7: np.int64, 6: np.int32}


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model")
    ap.add_argument("out")
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--images", action="store_true")
    a = ap.parse_args()
    m = onnx.load(a.model, load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    inputs = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") and d.dim_value > 0 else 1 for d in t.shape.dim]
        if t.elem_type not in DTYPES:
            raise SystemExit(f"{a.model}: input {i.name} has an unsupported element type {t.elem_type}")
        inputs.append((i.name, dims, DTYPES[t.elem_type]))
    os.makedirs(a.out, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    if a.images:
        import zlib, struct
        for k in range(a.count):
            px = rng.integers(0, 256, size=(256, 256, 3), dtype=np.uint8)
            raw = b"".join(b"\x00" + px[y].tobytes() for y in range(256))
            def chunk(tag, data):
                return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
            png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0)) +
                   chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))
            with open(os.path.join(a.out, f"sample_{k:04d}.png"), "wb") as f:
                f.write(png)
        return
    for k in range(a.count):
        values = {}
        for name, dims, dt in inputs:
            if dt == np.float32:
                values[name] = rng.standard_normal(dims).astype(np.float32)
            else:
                values[name] = rng.integers(0, 1000, size=dims).astype(dt)
        if len(inputs) == 1:
            np.save(os.path.join(a.out, f"sample_{k:04d}.npy"), next(iter(values.values())))
        else:
            d = os.path.join(a.out, f"sample_{k:04d}")
            os.makedirs(d, exist_ok=True)
            for name, v in values.items():
                np.save(os.path.join(d, sanitize(name) + ".npy"), v)


if __name__ == "__main__":
    main()
