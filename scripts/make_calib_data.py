#!/usr/bin/python3
"""Writes seeded calibration / evaluation inputs for a model from the distribution the zoo
uses (standard normal float inputs), since nothing may be downloaded.

Usage: make_calib_data.py MODEL.onnx OUT_DIR --count N [--seed S] [--images]

For a model with one input it writes OUT_DIR/sample_0000.npy ...; with several inputs one
subfolder per sample holding <input>.npy each (the layout `edgec quantize --calib` reads).
Integer inputs (token ids) are uniform in [0, 1000). Dynamic dims become 1. --images
writes PNGs instead (uniform random pixels, 256x256) to exercise the image path.
Different seeds give disjoint sample streams (calibrate with one, evaluate with another).

A float input of shape [1, 40, T] is taken as a log-mel spectrogram (40 mel coefficients as
channels, T frames of 10 ms at 16 kHz: the keyword spotters kws_tcresnet and speech_lstm):
it gets the log-mel features of a synthetic speech-like signal computed here (a pitch that
glides, its harmonics under three moving formant envelopes, voiced and unvoiced stretches,
noise), standardized per sample to zero mean and unit variance, instead of noise.
"""
import argparse
import os
import re

import numpy as np
import onnx

DTYPES = {1: np.float32, 7: np.int64, 6: np.int32}


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9._-]", "_", name)


MEL_BANDS, SAMPLE_RATE, HOP, WINDOW, FFT = 40, 16000, 160, 400, 512


def is_log_mel(dims):
    return len(dims) == 3 and dims[0] == 1 and dims[1] == MEL_BANDS and dims[2] > 1


def mel_filters():
    """HTK-style triangular filters, [MEL_BANDS, FFT // 2 + 1], 20 Hz to 8 kHz."""
    mel = lambda f: 2595 * np.log10(1 + f / 700)
    edges = 700 * (10 ** (np.linspace(mel(20), mel(SAMPLE_RATE / 2), MEL_BANDS + 2) / 2595) - 1)
    freqs = np.linspace(0, SAMPLE_RATE / 2, FFT // 2 + 1)
    f = np.zeros((MEL_BANDS, freqs.size))
    for m in range(MEL_BANDS):
        lo, mid, hi = edges[m:m + 3]
        f[m] = np.clip(np.minimum((freqs - lo) / (mid - lo), (hi - freqs) / (hi - mid)), 0, None)
    return f


def speech_like_log_mel(rng, frames):
    """Log-mel features [1, MEL_BANDS, frames] of a synthetic utterance."""
    n = (frames - 1) * HOP + WINDOW
    t = np.arange(n) / SAMPLE_RATE
    # A pitch gliding between two random values, harmonics up to 4 kHz.
    swing = 0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(0.5, 3) * t)
    f0 = rng.uniform(90, 140) + rng.uniform(20, 110) * swing
    phase = 2 * np.pi * np.cumsum(f0) / SAMPLE_RATE
    # Three formants moving between vowel-like positions.
    centres = [(rng.uniform(300, 800), rng.uniform(250, 850)),
               (rng.uniform(900, 2200), rng.uniform(850, 2300)),
               (rng.uniform(2300, 3200), rng.uniform(2200, 3300))]
    glide = 0.5 + 0.5 * np.sin(2 * np.pi * rng.uniform(1, 4) * t + rng.uniform(0, 2 * np.pi))
    voiced = np.zeros(n)
    for h in range(1, int(4000 / 90) + 1):
        fh = h * f0
        env = sum(np.exp(-0.5 * ((fh - (a + (b - a) * glide)) / (80 + 40 * k)) ** 2) / (k + 1)
                  for k, (a, b) in enumerate(centres))
        voiced += np.where(fh < SAMPLE_RATE / 2, env, 0) * np.sin(h * phase)
    # Syllables: voiced stretches, a noise burst (a fricative) between some, silence at the ends.
    gate = np.clip(np.sin(np.pi * rng.uniform(2, 5) * t / t[-1] + rng.uniform(0, 0.5)), 0, None) ** 0.5
    fricative = rng.standard_normal(n) * (1 - gate) * rng.uniform(0.05, 0.3)
    x = voiced * gate + fricative + rng.standard_normal(n) * rng.uniform(0.005, 0.03)
    frames_of = np.lib.stride_tricks.sliding_window_view(x, WINDOW)[::HOP][:frames]
    power = np.abs(np.fft.rfft(frames_of * np.hanning(WINDOW), FFT)) ** 2
    logmel = np.log(power @ mel_filters().T + 1e-6).T  # [MEL_BANDS, frames]
    logmel = (logmel - logmel.mean()) / (logmel.std() + 1e-6)
    return np.ascontiguousarray(logmel[None], dtype=np.float32)


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
            if dt == np.float32 and is_log_mel(dims):
                values[name] = speech_like_log_mel(rng, dims[2])
            elif dt == np.float32:
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
