"""The malformed-model corpus: every broken model file gets a clear one-line error, exit 1,
within a time limit, and nothing outside the model's folder is read.

usage: run.py EDGEC_BINARY WORK_DIR
The corpus is generated here (python3-onnx, numpy, and the binary itself for the `.edgec`
files); no model file is committed. Each case checks: exit code 1 (not a signal, not a hang
past TIMEOUT), exactly one stderr line starting "edgec: error:", the words naming the file and
what is wrong. The external-data cases run under strace and fail if the secret file outside the
model's folder was opened. tests/bad_input/test_bad_input.py holds the older 30 cases (inputs,
flags, targets); this corpus is about the model files themselves.
"""
import os
import shutil
import struct
import subprocess
import sys
import time
import zlib

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

EDGEC, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
TIMEOUT = 60  # seconds per case; the 10^6-node graph is the slowest (a few seconds)
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
rng = np.random.default_rng(33)
results = []


def path(name):
    return os.path.join(WORK, name)


def write(name, data):
    with open(path(name), "wb") as f:
        f.write(data)
    return path(name)


def save(model, name):
    onnx.save(model, path(name))
    return path(name)


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def model_of(nodes, inputs, outputs, inits=(), opset=13, domains=()):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in domains])
    m.ir_version = 8
    return m


def add_model(w, shape=(4,)):
    return model_of([helper.make_node("Add", ["x", "w"], ["y"], name="add1")],
                    [vi("x", list(shape))], [vi("y", list(shape))], inits=[w])


def case(name, args, must_contain, trace_secret=None):
    cmd = [EDGEC] + args
    if trace_secret:
        cmd = ["strace", "-f", "-qq", "-e", "trace=open,openat,openat2,stat,newfstatat,statx",
               "-o", path("strace.log")] + cmd
    env = dict(os.environ)
    if trace_secret:
        # The leak checker of a sanitized build cannot run under ptrace (strace): off for these.
        env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    t0 = time.time()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        results.append((name, [f"no answer within {TIMEOUT} s"], ""))
        return
    secs = time.time() - t0
    err = r.stderr.strip()
    problems = []
    if r.returncode < 0:
        problems.append(f"crashed with signal {-r.returncode}")
    elif r.returncode != 1:
        problems.append(f"exit code {r.returncode}, expected 1")
    if not err.startswith("edgec: error:"):
        problems.append("stderr does not start with 'edgec: error:'")
    if "\n" in err:
        problems.append(f"error spans {err.count(chr(10)) + 1} lines")
    for word in must_contain:
        if word not in err:
            problems.append(f"error does not mention {word!r}")
    if trace_secret:
        # Opening the secret file is reading outside the folder. A location that is outside by
        # its text (../, absolute) must not even be looked at (stat); a symlink has to be
        # resolved to be judged, so there only opening counts.
        lexical = "symlink" not in name
        touched = [l for l in open(path("strace.log"))
                   if trace_secret in l and (lexical or "open" in l.split("(")[0])]
        if touched:
            problems.append(f"touched the file outside the model's folder: {touched[0].strip()}")
    results.append((name, problems, f"{err}  [{secs:.1f}s]"))


good = model_of([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [vi("x", [1, 3])], [vi("y", [1, 3])])
good_bytes = good.SerializeToString()

# --- files that are not (whole) models ---
for frac in (1, 10, 50, 99):
    n = max(1, len(good_bytes) * frac // 100) if frac > 1 else 1
    f = write(f"truncated_{frac}.onnx", good_bytes[:n])
    case(f"truncated to {frac}%", ["run", f], [f"truncated_{frac}.onnx"])
f = write("random.onnx", rng.integers(0, 256, 4096, dtype=np.uint8).tobytes())
case("random bytes", ["inspect", f], ["random.onnx"])
f = write("header_garbage.onnx", good_bytes[:12] + rng.integers(0, 256, 2048, dtype=np.uint8).tobytes())
case("valid header, garbage after", ["run", f], ["header_garbage.onnx"])
os.makedirs(path("folder.onnx"), exist_ok=True)
case("a folder as model", ["run", path("folder.onnx")], ["folder.onnx", "folder"])
big = save(add_model(numpy_helper.from_array(np.zeros(4096, np.float32), "w"), (4096,)), "big.onnx")
case("file over --max-model-bytes", ["--max-model-bytes", "1K", "run", big],
     ["big.onnx", "over the model size limit of 1024 bytes", "--max-model-bytes"])

# --- dims and element counts ---
m = add_model(TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[-1, 4], raw_data=b""))
case("negative initializer dim", ["run", save(m, "neg_dim.onnx")], ["neg_dim.onnx", "'w'", "negative"])
m = add_model(TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40, 1 << 40, 1 << 40], raw_data=b""))
case("element count overflows int64", ["run", save(m, "overflow.onnx")], ["overflow.onnx", "'w'", "overflows"])
m = add_model(TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 20, 1 << 20], raw_data=b"\0" * 16))
case("huge dims, 16 bytes of data (init_huge_dims)", ["run", save(m, "init_huge_dims.onnx")],
     ["init_huge_dims.onnx", "'w'", "raw_data has 16 bytes", "4398046511104"])
m = add_model(TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], raw_data=b"\0" * 12))
case("raw_data size disagrees with shape", ["run", save(m, "raw_short.onnx")],
     ["raw_short.onnx", "'w'", "raw_data has 12 bytes", "needs 16"])
m = add_model(TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4], float_data=[1, 2, 3, 4, 5]))
case("float_data count disagrees with shape", ["run", save(m, "float_long.onnx")],
     ["float_long.onnx", "'w'", "float_data has 5 elements"])
m = add_model(TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 16, 1 << 16]))
case("huge dims, no data at all", ["run", save(m, "no_data.onnx")], ["no_data.onnx", "'w'", "float_data has 0"])
m = add_model(numpy_helper.from_array(np.zeros(1024, np.float32), "w"), (1024,))
case("initializer over --max-tensor-bytes", ["--max-tensor-bytes", "1K", "run", save(m, "tensor_cap.onnx")],
     ["tensor_cap.onnx", "'w'", "4096 bytes", "--max-tensor-bytes"])
m = model_of([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [vi("x", [-3, 4])], [vi("y", None)])
case("negative input dim", ["run", save(m, "neg_input.onnx")], ["neg_input.onnx", "'x'"])
m = model_of([helper.make_node("Relu", ["x"], ["y"], name="relu1")], [vi("x", [1 << 31, 1 << 31, 1 << 31])],
             [vi("y", None)])
case("input of 2^93 elements", ["run", save(m, "huge_input.onnx")], ["huge_input.onnx", "'x'", "overflows"])
shape = numpy_helper.from_array(np.array([1 << 20, 1 << 20], np.int64), "shape")
m = model_of([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="fill")], [vi("x", [1])], [vi("y", None)],
             inits=[shape])
case("computed tensor of 4 TiB", ["run", save(m, "computed_huge.onnx")],
     ["computed_huge.onnx", "needs an arena of 4398046511168 bytes", "'y' of node 'fill'", "--max-arena-bytes"])
shape = numpy_helper.from_array(np.array([1 << 31, 1 << 31, 1 << 31, 8], np.int64), "shape")
m = model_of([helper.make_node("Reshape", ["x", "shape"], ["r"], name="grow"),
              helper.make_node("Transpose", ["r"], ["y"], name="swap", perm=[0, 2, 1, 3])],
             [vi("x", None)], [vi("y", None)], inits=[shape])
case("computed shape of 2^96 elements", ["optimize", "-O", "3", save(m, "computed_past_int64.onnx"), "-o", path("cp.onnx")],
     ["computed_past_int64.onnx", "Reshape 'grow'", "'r'", "overflows int64"])

# --- graph structure ---
m = model_of([helper.make_node("Relu", ["a"], ["a"], name="self")], [vi("x", [1])], [vi("a", [1])])
case("node reading its own output", ["run", save(m, "self_loop.onnx")], ["self_loop.onnx", "self"])
m = model_of([helper.make_node("Relu", ["c"], ["a"], name="n1"), helper.make_node("Relu", ["a"], ["b"], name="n2"),
              helper.make_node("Add", ["b", "x"], ["c"], name="n3")], [vi("x", [1])], [vi("a", [1])])
case("cycle of three nodes", ["run", save(m, "cycle3.onnx")], ["cycle3.onnx", "cycle"])
m = model_of([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add1")], [vi("x", [1])], [vi("y", [1])])
case("dangling input name", ["run", save(m, "dangling.onnx")], ["dangling.onnx", "add1", "'nowhere'", "not defined"])
m = model_of([helper.make_node("Relu", ["x"], ["y"], name="r1"), helper.make_node("Neg", ["x"], ["y"], name="r2")],
             [vi("x", [1])], [vi("y", [1])])
case("two nodes write one output", ["run", save(m, "dup_output.onnx")], ["dup_output.onnx", "'y'", "already defined"])
m = model_of([helper.make_node("Relu", ["x"], ["y"], name="r1")], [vi("x", [1])], [vi("y", [1]), vi("z", [1])])
case("graph output nobody produces", ["run", save(m, "missing_output.onnx")], ["missing_output.onnx", "'z'"])
m = add_model(numpy_helper.from_array(np.zeros(4, np.float32), "w"))
m.graph.initializer.append(numpy_helper.from_array(np.ones(4, np.float32), "w"))
case("initializer defined twice", ["run", save(m, "dup_init.onnx")], ["dup_init.onnx", "'w'", "twice"])
m = model_of([helper.make_node("Relu", ["x"], ["y"], name="r1", domain="com.nowhere")], [vi("x", [1])],
             [vi("y", [1])], domains=[("com.nowhere", 1)])
case("unknown domain", ["run", save(m, "domain.onnx")], ["domain.onnx", "com.nowhere.Relu"])
m = model_of([helper.make_node("Relu", ["x"], ["y"], name="r1")], [vi("x", [1])], [vi("y", [1])], opset=99)
case("unknown opset", ["run", save(m, "opset99.onnx")], ["opset99.onnx", "opset 99"])
m = model_of([helper.make_node("Relu", ["x"], ["y"], name="r1")], [vi("x", [1])], [vi("y", [1])])
del m.opset_import[:]
case("no opset import", ["run", save(m, "no_opset.onnx")], ["no_opset.onnx", "opset"])
conv_w = numpy_helper.from_array(np.zeros((2, 3, 3, 3), np.float32), "w")
bad_strides = helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")
bad_strides.attribute.append(helper.make_attribute("strides", [1.5, 1.5]))
m = model_of([bad_strides], [vi("x", [1, 3, 8, 8])], [vi("y", None)], inits=[conv_w])
case("attribute of the wrong type (floats for ints)", ["run", save(m, "attr_type.onnx")],
     ["attr_type.onnx", "conv1", "strides", "type FLOATS, expected INTS"])
bad_perm = helper.make_node("Transpose", ["x"], ["y"], name="tr1")
bad_perm.attribute.append(helper.make_attribute("perm", "0,1"))
m = model_of([bad_perm], [vi("x", [2, 3])], [vi("y", None)])
case("attribute of the wrong type (string for ints)", ["run", save(m, "attr_str.onnx")], ["attr_str.onnx", "tr1", "perm", "type STRING, expected INTS"])
bad_perm = helper.make_node("Transpose", ["x"], ["y"], name="tr1", perm=[0, 7])
m = model_of([bad_perm], [vi("x", [2, 3])], [vi("y", None)])
case("attribute value out of range", ["run", save(m, "attr_range.onnx")], ["attr_range.onnx", "tr1"])


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def field(num, payload):  # a length-delimited protobuf field
    return varint(num << 3 | 2) + varint(len(payload)) + payload


# A chain of 10^6 Relu nodes, written as protobuf directly (fields merge: a second `graph`
# field after the model's own adds its nodes to the same graph).
N = 1_000_000
base = model_of([], [vi("v0", [1])], [vi(f"v{N}", [1])]).SerializeToString()
nodes = b"".join(field(1, field(1, b"v%d" % i) + field(2, b"v%d" % (i + 1)) + field(4, b"Relu"))
                 for i in range(N))
f = write("million.onnx", base + field(7, nodes))
case("graph of 10^6 nodes", ["run", f], ["million.onnx", "1000000 nodes", "--max-nodes"])

# --- external data: nothing outside the model's folder is opened ---
outside = path("outside")
os.makedirs(outside, exist_ok=True)
secret = os.path.join(outside, "secret.bin")
with open(secret, "wb") as fh:
    fh.write(np.arange(4, dtype=np.float32).tobytes())  # exactly what the tensor needs
mdir = path("model_dir")
os.makedirs(mdir, exist_ok=True)
os.symlink(secret, os.path.join(mdir, "link.bin"))
with open(os.path.join(mdir, "weights.bin"), "wb") as fh:
    fh.write(np.ones(4, np.float32).tobytes())


def external(name, location, offset="0", length="16"):
    t = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
    t.data_location = TensorProto.EXTERNAL
    for k, v in [("location", location), ("offset", offset), ("length", length)]:
        if v is not None:
            e = t.external_data.add()
            e.key, e.value = k, v
    m = add_model(t)
    p = os.path.join(mdir, name)
    onnx.save(m, p)
    return p


case("external data through ../", ["run", external("up.onnx", "../outside/secret.bin")],
     ["up.onnx", "'w'", "leaves the model's folder"], trace_secret="secret.bin")
case("external data at an absolute path", ["run", external("abs.onnx", secret)],
     ["abs.onnx", "'w'", "absolute"], trace_secret="secret.bin")
case("external data through a symlink out", ["run", external("link.onnx", "link.bin")],
     ["link.onnx", "'w'", "leaves the model's folder"], trace_secret="secret.bin")
case("external data offset past the end", ["run", external("off.onnx", "weights.bin", offset="8")],
     ["off.onnx", "'w'", "weights.bin", "at offset 8"])
case("external data offset near 2^63", ["run", external("off_huge.onnx", "weights.bin", offset="9223372036854775800")],
     ["off_huge.onnx", "'w'", "weights.bin"])
case("external data negative offset", ["run", external("off_neg.onnx", "weights.bin", offset="-4")],
     ["off_neg.onnx", "'w'", "at offset -4"])
case("external data length disagrees", ["run", external("len.onnx", "weights.bin", length="12")],
     ["len.onnx", "'w'", "length 12"])
case("external data file missing", ["run", external("gone.onnx", "gone.bin")], ["gone.onnx", "'w'", "gone.bin"])
case("external data location is a folder", ["run", external("dir.onnx", ".")], ["dir.onnx", "'w'"])

# --- compiled models (.edgec): checksum, offsets, version ---
calib = path("calib")
os.makedirs(calib, exist_ok=True)
for i in range(2):
    np.save(os.path.join(calib, f"x{i}.npy"), rng.standard_normal((1, 3, 8, 8)).astype(np.float32))
conv = model_of([helper.make_node("Conv", ["x", "w"], ["c"], name="conv1", pads=[1, 1, 1, 1]),
                 helper.make_node("Relu", ["c"], ["y"], name="relu1")],
                [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 8, 8])],
                inits=[numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.1, "w")])
src = save(conv, "conv.onnx")
subprocess.run([EDGEC, "quantize", src, "--calib", calib, "--dtype", "i8", "-o", path("conv.qdq.onnx"), "-q"],
               check=True, capture_output=True)
subprocess.run([EDGEC, "compile", path("conv.qdq.onnx"), "-q", "-o", path("conv.edgec")], check=True,
               capture_output=True)
blob = open(path("conv.edgec"), "rb").read()
body = blob[:-16]


def with_crc(b):  # the trailer of runtime/artifact.cc: "EDGCSUM1" + CRC-32, 8 bytes little-endian
    return b + b"EDGCSUM1" + struct.pack("<Q", zlib.crc32(b))


assert with_crc(body) == blob, "the .edgec trailer is not EDGCSUM1 + CRC-32"
flip = bytearray(blob)
flip[len(body) // 2] ^= 0x10
case("flipped bit (CRC mismatch)", ["run", write("flipped.edgec", bytes(flip))], ["flipped.edgec", "checksum"])
case("truncated compiled model", ["run", write("cut.edgec", blob[: len(blob) // 2])], ["cut.edgec", "truncated"])
case("checksum trailer missing", ["run", write("no_crc.edgec", body)], ["no_crc.edgec", "checksum trailer"])
root = struct.unpack_from("<I", body, 0)[0]
bad = bytearray(body)
struct.pack_into("<I", bad, 0, len(body) + 4096)  # the root table beyond the end
case("root offset outside the file", ["run", write("bad_root.edgec", with_crc(bytes(bad)))], ["bad_root.edgec", "damaged"])
bad = bytearray(body)
vt = root - struct.unpack_from("<i", body, root)[0]
struct.pack_into("<i", bad, root, -0x7FFFFFF0)  # the root table's vtable far beyond the end
case("vtable offset corrupted", ["run", write("bad_vtable.edgec", with_crc(bytes(bad)))], ["bad_vtable.edgec", "damaged"])
version_at = root + struct.unpack_from("<H", body, vt + 4)[0]  # Artifact field 0: format_version
bad = bytearray(body)
struct.pack_into("<I", bad, version_at, 99)
case("wrong format version", ["run", write("v99.edgec", with_crc(bytes(bad)))], ["v99.edgec", "format version 99"])
case("ONNX file named .edgec", ["run", write("onnx_inside.edgec", good_bytes)],
     ["onnx_inside.edgec", "not an edgec compiled model"])
case("compile: plan over --max-arena-bytes", ["--max-arena-bytes", "1K", "compile", path("conv.qdq.onnx"), "-q",
                                              "-o", path("arena.edgec")],
     ["conv.qdq.onnx", "needs an arena of", "over the arena limit of 1024 bytes", "--max-arena-bytes"])
if os.path.exists(path("arena.edgec")):
    results[-1][1].append("a refused compile still wrote its output")

failed = 0
for name, problems, err in results:
    if problems:
        failed += 1
        print(f"FAIL {name}: {'; '.join(problems)}\n     stderr: {err}")
    else:
        print(f"ok   {name}: {err}")
print(f"{len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
