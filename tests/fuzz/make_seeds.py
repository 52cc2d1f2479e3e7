"""Writes the fuzz targets' seed corpora (small, valid inputs of each format) into OUT_DIR.

usage: make_seeds.py EDGEC_BINARY OUT_DIR
One folder per target (onnx_import, edgec_load, target_json, scale_json, npy, image). The
`.edgec` seeds are compiled from the tiny ONNX seeds with EDGEC_BINARY (quantize + compile),
so no model file is kept in the repository.
"""
import io
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from PIL import Image

EDGEC, OUT = sys.argv[1], sys.argv[2]
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
rng = np.random.default_rng(7)


def folder(name):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    return d


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def init(name, a):
    return numpy_helper.from_array(np.asarray(a), name)


def model(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def w(shape):
    return rng.standard_normal(shape).astype(np.float32) * 0.1


# --- ONNX: one small graph per common pattern ---
onnx_dir = folder("onnx_import")
models = {
    "relu": model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [1, 3])], [vi("y", [1, 3])]),
    "conv_relu": model([helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
                        helper.make_node("Relu", ["c"], ["y"])],
                       [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 8, 8])],
                       [init("w", w((4, 3, 3, 3))), init("b", w((4,)))]),
    "conv_bn_pool": model([helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2]),
                           helper.make_node("BatchNormalization", ["c", "s", "o", "m", "v"], ["n"]),
                           helper.make_node("MaxPool", ["n"], ["p"], kernel_shape=[2, 2]),
                           helper.make_node("GlobalAveragePool", ["p"], ["y"])],
                          [vi("x", [1, 3, 16, 16])], [vi("y", None)],
                          [init("w", w((8, 3, 3, 3))), init("s", np.ones(8, np.float32)),
                           init("o", np.zeros(8, np.float32)), init("m", np.zeros(8, np.float32)),
                           init("v", np.ones(8, np.float32))]),
    "matmul_add_softmax": model([helper.make_node("MatMul", ["x", "w"], ["m"]),
                                 helper.make_node("Add", ["m", "b"], ["a"]),
                                 helper.make_node("Softmax", ["a"], ["y"], axis=-1)],
                                [vi("x", ["batch", 4, 8])], [vi("y", None)],
                                [init("w", w((8, 8))), init("b", w((8,)))]),
    "reshape_transpose_concat": model(
        [helper.make_node("Reshape", ["x", "s"], ["r"]),
         helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
         helper.make_node("Concat", ["t", "t"], ["c"], axis=1),
         helper.make_node("Slice", ["c", "st", "en", "ax"], ["y"])],
        [vi("x", [2, 12])], [vi("y", None)],
        [init("s", np.array([2, 3, 4], np.int64)), init("st", np.array([1], np.int64)),
         init("en", np.array([6], np.int64)), init("ax", np.array([1], np.int64))]),
    "gemm_shape_gather": model(
        [helper.make_node("Gemm", ["x", "w"], ["g"], transB=1),
         helper.make_node("Shape", ["g"], ["s"]),
         helper.make_node("Gather", ["s", "i"], ["d"], axis=0),
         helper.make_node("Cast", ["d"], ["y"], to=TensorProto.FLOAT)],
        [vi("x", [3, 5])], [vi("y", None)],
        [init("w", w((6, 5))), init("i", np.array(1, np.int64))]),
}
for name, m in models.items():
    onnx.save(m, os.path.join(onnx_dir, name + ".onnx"))

# --- .edgec: the conv seeds quantized and compiled for the default target ---
edgec_dir = folder("edgec_load")
work = os.path.join(OUT, "work")
os.makedirs(os.path.join(work, "calib"), exist_ok=True)
for i in range(2):
    np.save(os.path.join(work, "calib", f"x{i}.npy"), rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
for name in ["conv_relu"]:
    src, qdq = os.path.join(onnx_dir, name + ".onnx"), os.path.join(work, name + ".qdq.onnx")
    subprocess.run([EDGEC, "quantize", src, "--calib", os.path.join(work, "calib"), "--dtype", "i8",
                    "-o", qdq, "-q"], check=True, capture_output=True)
    for target in ["edge-default", "edge-mcu"]:
        subprocess.run([EDGEC, "compile", qdq, "--target", target, "-q", "-o",
                        os.path.join(edgec_dir, f"{name}.{target}.edgec")], check=True, capture_output=True)

# --- target files: the shipped ones ---
target_dir = folder("target_json")
for f in sorted(os.listdir(os.path.join(ROOT, "targets"))):
    shutil.copy(os.path.join(ROOT, "targets", f), os.path.join(target_dir, f))

# --- scale tables ---
scale_dir = folder("scale_json")
tables = {
    "scales_u8": {"format": "edgec-quant-scales/1", "method": "entropy", "dtype": "u8", "symmetric": False,
                  "samples": 4, "activations": {"x": {"scale": 0.03, "zero_point": 128, "min": -4, "max": 3.9,
                                                      "lo": -3.8, "hi": 3.7},
                                                "y": {"lo": 0, "hi": 6}}},
    "scales_i8": {"format": "edgec-quant-scales/1", "method": "minmax", "dtype": "i8", "symmetric": True,
                  "activations": {"a": {"scale": 0.5, "zero_point": 0}, "b": {"min": -1, "max": 1}}},
}
for name, t in tables.items():
    with open(os.path.join(scale_dir, name + ".json"), "w") as f:
        json.dump(t, f)

# --- .npy: every dtype the reader takes, a few shapes, format versions 1 and 2 ---
npy_dir = folder("npy")
arrays = {"f32": np.arange(6, dtype=np.float32).reshape(2, 3), "i64": np.array([1, -2, 3], np.int64),
          "u8": np.arange(8, dtype=np.uint8).reshape(2, 2, 2), "bool": np.array([True, False]),
          "f16": np.ones((1, 2), np.float16), "i8": np.array([-1, 1], np.int8), "scalar": np.float32(2.5),
          "empty": np.zeros((0, 3), np.float32), "i32": np.array([[7]], np.int32), "f64": np.array([0.5])}
for name, a in arrays.items():
    np.save(os.path.join(npy_dir, name + ".npy"), a)
with open(os.path.join(npy_dir, "v2.npy"), "wb") as f:
    np.lib.format.write_array(f, np.ones(3, np.float32), version=(2, 0))

# --- images: PNG (RGB, gray, palette, RGBA, 16-bit gray) and JPEG (RGB, gray, progressive) ---
img_dir = folder("image")
rgb = Image.fromarray((rng.random((5, 7, 3)) * 255).astype(np.uint8), "RGB")
rgb.save(os.path.join(img_dir, "rgb.png"))
rgb.convert("L").save(os.path.join(img_dir, "gray.png"))
rgb.convert("P").save(os.path.join(img_dir, "palette.png"))
rgb.convert("RGBA").save(os.path.join(img_dir, "rgba.png"))
Image.fromarray((rng.random((3, 4)) * 65535).astype(np.uint16)).save(os.path.join(img_dir, "gray16.png"))
rgb.save(os.path.join(img_dir, "rgb.jpg"), quality=80)
rgb.convert("L").save(os.path.join(img_dir, "gray.jpg"))
rgb.save(os.path.join(img_dir, "progressive.jpg"), progressive=True)

shutil.rmtree(work)
for d in sorted(os.listdir(OUT)):
    n = len(os.listdir(os.path.join(OUT, d)))
    print(f"  seeds {d}: {n} files")
