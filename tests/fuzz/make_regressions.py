"""Writes the fuzzers' regression inputs that are model or data files, so none is committed:
OUT/<target>/<name>, replayed by tests/fuzz/run.sh before fuzzing (with the committed text
inputs of tests/fuzz/regressions/). Each reproduces a crash a fuzzer found, now a clear error.
Usage: make_regressions.py OUT SEEDS (SEEDS: the corpora make_seeds.py wrote, whose compiled
`.edgec` seeds the `.edgec` cases start from)"""
import os
import struct
import sys
import zlib

import onnx
from onnx import TensorProto, helper

out, seeds = sys.argv[1], sys.argv[2]


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


# fuzz_edgec_load: a constant of the compiled graph whose dims claim 1.8 GB over a few bytes of
# data was allocated before its size was checked (runtime/graph_io.cc GetTensor). The compiled
# conv seed's int8 weight constant [4, 3, 3, 3] gets its third dim patched to 3 << 24
# (4 * 3 * 50331648 * 3 bytes = 1.8 GB) and the file its checksum trailer recomputed, so the
# loader's size check (not the CRC) is what must refuse it.
def table_field(buf, table, index):
    """The position of field `index` of the FlatBuffers table at `table`, None if absent."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    vtable_bytes = struct.unpack_from("<H", buf, vtable)[0]
    if 4 + 2 * index >= vtable_bytes:
        return None
    at = struct.unpack_from("<H", buf, vtable + 4 + 2 * index)[0]
    return table + at if at else None


def follow(buf, pos):
    return pos + struct.unpack_from("<I", buf, pos)[0]


def vector(buf, pos):
    """(first element's position, length) of the vector the offset at `pos` points to."""
    v = follow(buf, pos)
    return v + 4, struct.unpack_from("<I", buf, v)[0]


# Field indices: src/runtime/artifact.fbs (Artifact.graph_ir = 9) and src/runtime/graph.fbs
# (Graph.values = 1; Value.name = 0, Value.constant = 5; TensorData.dims = 1).
TRAILER = 16  # "EDGCSUM1" + CRC-32 in 8 bytes (runtime/artifact.cc)
with open(os.path.join(seeds, "edgec_load", "conv_relu.edge-mcu.edgec"), "rb") as f:
    edgec = bytearray(f.read())
body = memoryview(edgec)[:-TRAILER]
graph_at, _ = vector(body, table_field(body, struct.unpack_from("<I", body, 0)[0], 9))
graph = body[graph_at:]
values_at, num_values = vector(graph, table_field(graph, struct.unpack_from("<I", graph, 0)[0], 1))
patched = False
for i in range(num_values):
    value = follow(graph, values_at + 4 * i)
    name_at, name_len = vector(graph, table_field(graph, value, 0))
    constant = table_field(graph, value, 5)
    if constant is None or not bytes(graph[name_at:name_at + name_len]).startswith(b"w_quantized"):
        continue
    dims_at, rank = vector(graph, table_field(graph, follow(graph, constant), 1))
    assert struct.unpack_from("<4q", graph, dims_at) == (4, 3, 3, 3), "the conv seed's weight changed"
    struct.pack_into("<q", graph, dims_at + 16, 3 << 24)
    patched = True
assert patched, "no w_quantized constant in the compiled conv seed"
del body, graph
edgec[-8:] = struct.pack("<Q", zlib.crc32(edgec[:-TRAILER]))
write("edgec_load", "tensor_claims_1_8gb.edgec", bytes(edgec))

# fuzz_edgec_load: the compiled graph (a nested FlatBuffer) at an address 4 bytes off 8-byte
# alignment made FlatBuffers read int64 dims misaligned (undefined behaviour); its verifier
# checks alignment relative to the nested buffer's start only. The seed's graph is copied to
# the end of the file at such an offset and Artifact.graph_ir pointed at the copy.
with open(os.path.join(seeds, "edgec_load", "conv_relu.edge-mcu.edgec"), "rb") as f:
    edgec = f.read()
body = edgec[:-TRAILER]
root = struct.unpack_from("<I", body, 0)[0]
field = table_field(body, root, 9)
graph_at, graph_len = vector(body, field)
pad = (4 - (len(body) + 4) % 8) % 8
vec_at = len(body) + pad
moved = bytearray(body + bytes(pad) + struct.pack("<I", graph_len) + body[graph_at:graph_at + graph_len])
assert (vec_at + 4) % 8 == 4
struct.pack_into("<I", moved, field, vec_at - field)
write("edgec_load", "misaligned_graph.edgec",
      bytes(moved) + b"EDGCSUM1" + struct.pack("<Q", zlib.crc32(moved)))

# fuzz_onnx_import: a Reshape of an input of unknown shape to [335544322, 196608, 65527]
# (4.3e18 elements) gave static shapes whose byte count overflowed int64 in the -O3 cost
# model (ir/cost.cc NodeCopyBytes, signed overflow).
graph = helper.make_graph(
    [helper.make_node("Reshape", ["x", "s"], ["r"]),
     helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
     helper.make_node("Concat", ["t", "t"], ["c"], axis=1),
     helper.make_node("Slice", ["c", "st", "en", "ax"], ["y"])],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [helper.make_tensor("s", TensorProto.INT64, [3], [335544322, 196608, 65527]),
     helper.make_tensor("st", TensorProto.INT64, [1], [1]),
     helper.make_tensor("en", TensorProto.INT64, [1], [1069446856454]),
     helper.make_tensor("ax", TensorProto.INT64, [1], [1])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
write("onnx_import", "copy_bytes_past_int64.onnx", model.SerializeToString())

# fuzz_image: a JPEG header claiming 3.5 GB of pixels over a few bytes of data was allocated
# before decoding (support/image.cc); images over 64 Mpx are now refused. A small JPEG gets
# its frame header (SOF0: FF C0, length, precision, height, width) patched to 40000 x 30000.
import io  # noqa: E402
from PIL import Image  # noqa: E402
buf = io.BytesIO()
Image.new("RGB", (8, 8), (200, 30, 30)).save(buf, format="JPEG")
jpeg = bytearray(buf.getvalue())
sof = jpeg.index(b"\xff\xc0")
struct.pack_into(">HH", jpeg, sof + 5, 40000, 30000)
write("image", "huge_claimed_size.jpg", bytes(jpeg))

# fuzz_onnx_import: the same graph reshaped to [27215113778304258, 196608, 65527]: the element
# count itself passes int64 in shape binding (runtime/shape_binding.cc, NumElements).
model.graph.initializer[0].CopyFrom(helper.make_tensor("s", TensorProto.INT64, [3], [27215113778304258, 196608, 65527]))
write("onnx_import", "elements_past_int64.onnx", model.SerializeToString())

# fuzz_edgec_load: a Value's int64 dims vector 4 bytes off 8-byte alignment inside an aligned
# graph (FlatBuffers checks a vector's length word for 4-byte alignment only). The seed's
# graph gets a copy of w_quantized's dims appended at such an offset, the constant's dims
# field repointed, and the grown graph placed at the end of the file (32-byte aligned).
with open(os.path.join(seeds, "edgec_load", "conv_relu.edge-mcu.edgec"), "rb") as f:
    edgec = f.read()
body = edgec[:-TRAILER]
field = table_field(body, struct.unpack_from("<I", body, 0)[0], 9)
graph_at, graph_len = vector(body, field)
graph = bytearray(body[graph_at:graph_at + graph_len])
values_at, num_values = vector(graph, table_field(graph, struct.unpack_from("<I", graph, 0)[0], 1))
for i in range(num_values):
    value = follow(graph, values_at + 4 * i)
    name_at, name_len = vector(graph, table_field(graph, value, 0))
    constant = table_field(graph, value, 5)
    if constant is not None and bytes(graph[name_at:name_at + name_len]).startswith(b"w_quantized"):
        dims_field = table_field(graph, follow(graph, constant), 1)
graph += bytes((-len(graph)) % 8)  # the length word at 0 mod 8: the elements at 4 mod 8
dims_at = len(graph)
graph += struct.pack("<I4q", 4, 4, 3, 3, 3)
struct.pack_into("<I", graph, dims_field, dims_at - dims_field)
pad = (-(len(body) + 4)) % 32
vec_at = len(body) + pad
moved = bytearray(body + bytes(pad) + struct.pack("<I", len(graph)) + bytes(graph))
struct.pack_into("<I", moved, field, vec_at - field)
write("edgec_load", "misaligned_dims.edgec", bytes(moved) + b"EDGCSUM1" + struct.pack("<Q", zlib.crc32(moved)))

# fuzz_onnx_import: a Concat of two values whose dims along the axis are each 8.0e18 (an input
# of unknown shape reshaped to them): their sum overflowed int64 in shape inference
# (ir/infer_movement.cc Concat, signed overflow).
graph = helper.make_graph(
    [helper.make_node("Reshape", ["x", "s"], ["r"]),
     helper.make_node("Concat", ["r", "r"], ["y"], axis=0)],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [helper.make_tensor("s", TensorProto.INT64, [1], [8028792235694751747])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
write("onnx_import", "concat_dims_past_int64.onnx", model.SerializeToString())

# fuzz_onnx_import: an input of unknown shape reshaped to [2^31, 2^31, 2^31, 8] (2^96
# elements) and transposed: the views pass's density check (ir/physical_layout.cc
# IsDenseRowMajor) multiplied the dims past int64 (signed overflow).
big = 1 << 31
graph = helper.make_graph(
    [helper.make_node("Reshape", ["x", "s"], ["r"]),
     helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3]),
     helper.make_node("Relu", ["t"], ["y"])],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, None)],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    [helper.make_tensor("s", TensorProto.INT64, [4], [big, big, big, 8])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
model.ir_version = 8
write("onnx_import", "density_past_int64.onnx", model.SerializeToString())
