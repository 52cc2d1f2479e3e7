"""Writes the fuzzers' regression inputs that are model or data files, so none is committed:
OUT/<target>/<name>, replayed by tests/fuzz/run.sh before fuzzing (with the committed text
inputs of tests/fuzz/regressions/). Each reproduces a crash a fuzzer found, now a clear error.
Usage: make_regressions.py OUT"""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]


def write(target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)


# fuzz_npy: a 'shape' value of one character made the header parser's substr throw.
header = b"{'descr': '|u1', 'fortran_order': False, 'shape': 7, }"
header += b" " * (63 - len(header) % 64) + b"\n"
write("npy", "shape_one_char.npy", b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(8))

# fuzz_onnx_import: a Transpose with no output crashed shape inference (SEGV).
graph = helper.make_graph(
    [helper.make_node("Reshape", ["x", "s"], ["r"]),
     helper.make_node("Transpose", ["r"], [], perm=[0, 2, 1]),
     helper.make_node("Relu", ["r"], ["y"])],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 12])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [helper.make_tensor("s", TensorProto.INT64, [3], [2, 3, 2])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
write("onnx_import", "transpose_without_output.onnx", model.SerializeToString())
