# Python's quantize and `edgec quantize` are one pipeline (Model::Quantize and
# QuantizeFromDirectory, src/api/quantize.cc): the same samples give the same QDQ file. The
# report, the accuracy budget and edgec.estimate, as the C++ API gives them.
import os
import subprocess

import numpy as np
import pytest

import conftest
import edgec

MODEL = os.path.join(conftest.ZOO, "squeezenet1_1", "model.onnx")
EDGEC = os.path.join(conftest.BUILD, "bin", "edgec")


def image(seed):
    return np.random.default_rng(seed).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)


def test_python_quantize_equals_the_cli(tmp_path):
    calib = tmp_path / "calib"
    calib.mkdir()
    for s in range(3):
        np.save(calib / f"s{s}.npy", image(100 + s))
    cli = tmp_path / "cli.onnx"
    subprocess.run([EDGEC, "quantize", MODEL, "--calib", str(calib), "--dtype", "i8", "--method", "minmax",
                    "-o", str(cli), "-q"], check=True)
    m = edgec.load(MODEL).quantize(calib=[{"input": image(100 + s)} for s in range(3)], method="minmax", dtype="i8")
    py = tmp_path / "py.onnx"
    m.save_onnx(str(py))
    assert py.read_bytes() == cli.read_bytes()
    r = m.quantize_report
    assert r["samples"] == 3 and r["method"] == "minmax" and r["activation_dtype"] == "i8"
    assert r["quantized_nodes"] > 20 and "budget" not in r
    # One float_nodes line per node the float_ops lines count ("2 Sub: no integer form").
    assert len(r["float_nodes"]) == sum(int(line.split()[0]) for line in r["float_ops"])
    assert r["shapes_from_samples"] == [] and r["symmetric"] is False


def test_accuracy_budget_keeps_layers_in_float():
    m = edgec.load(MODEL)
    m.quantize(calib=[{"input": image(s)} for s in range(2)], method="minmax", accuracy_budget=0.99999,
               error_samples=1)
    r = m.quantize_report
    b = r["budget"]
    assert b["budget"] == 0.99999 and b["target"] == "edge-default"
    assert b["mean_cosine"] >= b["int8_cosine"]
    assert b["kept_float"], f"all int8 already reaches {b['int8_cosine']}"
    for layer in b["kept_float"]:
        assert any(layer["node"] in s for s in r["skipped"]), layer
    sqnr = [layer["sqnr_db"] for layer in r["sensitivity"]]
    assert sqnr == sorted(sqnr)
    with pytest.raises(edgec.Error, match="no_such_target"):
        edgec.load(MODEL).quantize(calib=[{"input": image(0)}], accuracy_budget=0.9, target="no_such_target")


def test_estimate_float_model_and_decoder():
    e = edgec.estimate(MODEL, set={"shared_sram.bytes": "1M"})
    assert e["target"] == "edge-default" and "segments" not in e
    p = e["per_layer"]
    assert p["ms"] > 0 and p["macs"] == sum(l["macs"] * l["count"] for l in p["layers"])
    d8 = edgec.estimate(decoder="tiny")["per_layer"]
    assert d8["weight_bytes"] > 0
    with pytest.raises(edgec.Error, match="model path or a decoder"):
        edgec.estimate()
    with pytest.raises(edgec.Error, match="no_such_field"):
        edgec.estimate(MODEL, set=["no_such_field=1"])
