"""Bad input gets a clear one-line error, a non-zero exit and no crash.

usage: test_bad_input.py EDGEC_BINARY WORK_DIR
Each case builds a broken model or input with python3-onnx / numpy, runs the CLI and checks:
exit code 1 (not a signal), exactly one line on stderr starting with "edgec: error:", and
the words that say which file, node and value were wrong.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

EDGEC, WORK = sys.argv[1], sys.argv[2]
os.makedirs(WORK, exist_ok=True)
results = []


def path(name):
    return os.path.join(WORK, name)


def save(model, name):
    p = path(name)
    onnx.save(model, p)
    return p


def model_of(nodes, inputs, outputs, inits=(), opset=13):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])


def vi(name, shape, t=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, t, shape)


def good_model():
    return model_of([helper.make_node("Relu", ["x"], ["y"], name="relu1")],
                    [vi("x", [1, 3])], [vi("y", [1, 3])])


def case(name, args, must_contain):
    r = subprocess.run([EDGEC] + args, capture_output=True, text=True, timeout=120)
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
    results.append((name, problems, err))


# --- model files that are not models ---
good = save(good_model(), "good.onnx")
data = open(good, "rb").read()
open(path("truncated.onnx"), "wb").write(data[: len(data) // 2])
case("truncated model", ["run", path("truncated.onnx")], ["truncated.onnx"])
open(path("text.onnx"), "w").write("this is not a model\n" * 10)
case("text file as model", ["inspect", path("text.onnx")], ["text.onnx", "not an ONNX model"])
open(path("empty.onnx"), "wb").close()
case("empty file", ["run", path("empty.onnx")], ["empty.onnx", "empty"])
case("missing file", ["run", path("does_not_exist.onnx")], ["does_not_exist.onnx", "no such file"])
np.save(path("array.npy"), np.zeros(3, np.float32))
case("npy file as model", ["run", path("array.npy")], ["array.npy"])

# --- unsupported and malformed graphs ---
m = model_of([helper.make_node("StringNormalizer", ["x"], ["a"], name="norm1"),
              helper.make_node("Relu", ["x"], ["b"], name="relu1"),
              helper.make_node("Frobnicate", ["b"], ["c"], name="frob", domain="com.example")],
             [vi("x", [2, 2])], [vi("a", []), vi("c", [2, 2])],
             opset=13)
m.opset_import.append(helper.make_opsetid("com.example", 1))
case("two unsupported ops listed at once", ["run", save(m, "unknown_ops.onnx")],
     ["unknown_ops.onnx", "2 unsupported ops in 2 nodes (opset 13)", "StringNormalizer 'norm1'", "com.example.Frobnicate 'frob'"])

m = model_of([helper.make_node("Frobnicate", ["x"], [f"f{i}"], name=f"frob{i}", domain="com.example")
              for i in range(119)] + [helper.make_node("Relu", ["x"], ["r"], name="relu1")],
             [vi("x", [2, 2])], [vi("f118", [2, 2])], opset=13)
m.opset_import.append(helper.make_opsetid("com.example", 1))
case("unsupported ops grouped by op type", ["run", save(m, "many_unknown.onnx")],
     ["1 unsupported op in 119 nodes", "com.example.Frobnicate \u00d7119, first 'frob0'"])

m = model_of([helper.make_node("Add", ["x", "bias"], ["y"], name="add1")],
             [vi("x", [1, 3])], [vi("y", [1, 3])])
case("missing initializer", ["run", save(m, "missing_init.onnx")],
     ["missing_init.onnx", "add1", "'bias'", "not defined"])

m = model_of([helper.make_node("Relu", ["b"], ["a"], name="first"),
              helper.make_node("Relu", ["a"], ["b"], name="second")],
             [vi("x", [1])], [vi("a", [1])])
case("cyclic graph", ["run", save(m, "cycle.onnx")], ["cycle.onnx", "cycle"])

big = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[1 << 40, 1 << 40], raw_data=b"")
m = model_of([helper.make_node("Add", ["x", "w"], ["y"], name="add1")],
             [vi("x", [1])], [vi("y", None)], inits=[big])
case("initializer dims overflow", ["run", save(m, "overflow.onnx")], ["overflow.onnx", "'w'", "overflow"])

shape = numpy_helper.from_array(np.array([1 << 31, 1 << 31, 1 << 31], np.int64), "shape")
m = model_of([helper.make_node("ConstantOfShape", ["shape"], ["y"], name="huge")],
             [vi("x", [1])], [vi("y", None)], inits=[shape])
case("runtime tensor too large", ["run", save(m, "huge.onnx")], ["huge.onnx", "huge"])

ext = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[4])
ext.data_location = TensorProto.EXTERNAL
for k, v in [("location", "../../etc/passwd"), ("offset", "0"), ("length", "16")]:
    e = ext.external_data.add()
    e.key, e.value = k, v
m = model_of([helper.make_node("Add", ["x", "w"], ["y"], name="add1")],
             [vi("x", [4])], [vi("y", [4])], inits=[ext])
case("external data leaving the model folder", ["run", save(m, "escape.onnx")],
     ["escape.onnx", "'w'", "leaves the model's folder"])

m = model_of([helper.make_node("Conv", ["x", "w"], ["y"], name="conv1")],
             [vi("x", [1, 3, 8, 8])], [vi("y", None)],
             inits=[numpy_helper.from_array(np.zeros((4, 5, 3, 3), np.float32), "w")])
case("conv channel mismatch", ["run", save(m, "conv_bad.onnx")], ["conv_bad.onnx", "conv1"])

# --- wrong inputs at run time ---
np.save(path("x13.npy"), np.ones((1, 3), np.float32))
np.save(path("x14.npy"), np.ones((1, 4), np.float32))
np.save(path("x13_i64.npy"), np.ones((1, 3), np.int64))
case("unknown input name", ["run", good, "--input", "nosuch=" + path("x13.npy")], ["'nosuch'", "'x'"])
case("wrong input shape", ["run", good, "--input", "x=" + path("x14.npy")], ["good.onnx", "'x'", "dim 1 is 4"])
case("wrong input dtype", ["run", good, "--input", "x=" + path("x13_i64.npy")], ["'x'", "i64", "f32"])
open(path("bad.npy"), "wb").write(b"\x93NUMPY\x01\x00garbage")
case("malformed npy", ["run", good, "--input", "x=" + path("bad.npy")], ["bad.npy"])
case("missing npy", ["run", good, "--input", "x=" + path("nope.npy")], ["nope.npy"])
case("input flag without =", ["run", good, "--input", "x"], ["--input", "NAME=VALUE"])

# --- --freeze (an input made a constant) ---
m = model_of([helper.make_node("Cast", ["sr"], ["srf"], to=TensorProto.FLOAT, name="cast1"),
              helper.make_node("Mul", ["x", "srf"], ["y"], name="mul1")],
             [vi("x", [1, 3]), vi("sr", [], TensorProto.INT64)], [vi("y", [1, 3])])
rate = save(m, "rate.onnx")
case("--freeze an unknown input", ["run", rate, "--freeze", "rate=16000"], ["rate.onnx", "'rate'", "'x', 'sr'"])
case("--freeze a value that is no number", ["compile", rate, "--freeze", "sr=16k", "--calib", path("no_calib"),
                                            "-o", path("r.edgec")], ["rate.onnx", "--freeze sr", "'16k'"])
case("--freeze a fraction for an integer input", ["quantize", rate, "--freeze", "sr=16000.5", "-o", path("r.onnx")],
     ["--freeze sr", "16000.5", "i64"])
case("--freeze two values for a scalar", ["optimize", rate, "--freeze", "sr=1,2"], ["--freeze sr", "2 value(s)"])
case("--freeze with a wrong-dtype .npy", ["run", rate, "--freeze", "sr=" + path("x13.npy")], ["'sr'", "i64", "f32[1, 3]"])

# --- value-dependent errors inside kernels ---
m = model_of([helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape1")],
             [vi("x", [2, 3])], [vi("y", None)],
             inits=[numpy_helper.from_array(np.array([4, 2], np.int64), "s")])
case("reshape element count", ["run", save(m, "reshape_bad.onnx")], ["reshape1"])
m = model_of([helper.make_node("Gather", ["x", "i"], ["y"], name="gather1")],
             [vi("x", [3, 2])], [vi("y", None)],
             inits=[numpy_helper.from_array(np.array([0, 7], np.int64), "i")])
case("gather index out of range", ["run", save(m, "gather_bad.onnx")], ["gather1", "7"])

# --- compiled models, targets, quantization ---
with open(path("foreign.edgec"), "w") as f:
    f.write("hello world, not a model")
case("foreign file as compiled model", ["run", path("foreign.edgec")], ["foreign.edgec", "not an edgec compiled model"])
with open(path("damaged.edgec"), "wb") as f:  # the right identifier, offsets pointing outside
    f.write(b"\x10\x00\x00\x00EDGC\x00\x00\x00\x00\xff\xff\xff\x7f" + bytes(range(1, 9)))
case("damaged compiled model", ["run", path("damaged.edgec")], ["damaged.edgec", "damaged"])
case("damaged compiled model (inspect)", ["inspect", path("damaged.edgec")], ["damaged.edgec", "damaged"])
for verb in ("estimate", "bench"):  # verbs that take an ONNX model name the mix-up
    case(f"compiled model given to {verb}", [verb, path("damaged.edgec")],
         ["damaged.edgec", "a compiled edgec model", "edgec run"])
case("unknown target field", ["estimate", good, "--set", "dram.colour=1"], ["dram.colour", "unknown"])
case("impossible target value", ["estimate", good, "--set", "shared_sram.bytes=0"], ["shared_sram.bytes", "got 0"])
case("unknown target", ["estimate", good, "--target", "nosuch"], ["'nosuch'"])
case("missing calibration folder", ["quantize", good, "--calib", path("no_calib"), "-o", path("q.onnx")],
     ["no_calib"])
case("--int8 on a float model (run)", ["run", good, "--int8"], ["good.onnx", "QDQ", "edgec quantize"])
case("--int8 on a float model (bench)", ["bench", good, "--int8", "--runs", "1"], ["good.onnx", "QDQ", "edgec quantize"])
case("compile a float model without calibration", ["compile", good, "-o", path("g.edgec")], ["good.onnx", "--calib"])

# --- a failed run loses nothing the user had ---
out_dir = path("outdir")
os.makedirs(out_dir, exist_ok=True)
keep = os.path.join(out_dir, "y.npy")
np.save(keep, np.full(3, 42, np.float32))
case("failed run keeps existing outputs", ["run", good, "--input", "x=" + path("x14.npy"), "--output-dir", out_dir], ["'x'"])
if not np.array_equal(np.load(keep), np.full(3, 42, np.float32)):
    results[-1][1].append("existing output file was overwritten")

failed = 0
for name, problems, err in results:
    if problems:
        failed += 1
        print(f"FAIL {name}: {'; '.join(problems)}\n     stderr: {err}")
    else:
        print(f"ok   {name}: {err}")
print(f"{len(results) - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
