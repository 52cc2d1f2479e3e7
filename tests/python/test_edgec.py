# The Python module `edgec` (python/edgec_module.cc, python/edgec/__init__.py).
import json
import os
import sys
import threading
import time

import numpy as np
import pytest

import conftest
import edgec

MODEL = os.path.join(conftest.ZOO, "squeezenet1_1", "model.onnx")


def image(seed):
    return np.random.default_rng(seed).uniform(-1, 1, (1, 3, 224, 224)).astype(np.float32)


@pytest.fixture(scope="module")
def compiled():
    m = edgec.load(MODEL)
    calib = ({"input": image(s)} for s in range(4))  # any iterable of dicts
    m.quantize(calib=calib, method="minmax", per_channel=True)
    assert m.quantized
    return m.compile(target="edge-default")


def test_load_describes_inputs_and_outputs():
    m = edgec.load(MODEL)
    assert m.inputs == [{"name": "input", "dtype": "f32", "shape": (1, 3, 224, 224)}]
    assert m.outputs[0]["shape"][-1] == 1000
    assert not m.quantized


def test_errors_are_exceptions_with_edgecs_message():
    with pytest.raises(edgec.Error, match="/nonexistent/model.onnx"):
        edgec.load("/nonexistent/model.onnx")
    s = edgec.load(MODEL).session()
    with pytest.raises(edgec.Error, match="pixels") as e:
        s.run({"pixels": image(0)})
    assert e.value.code == "not found" or e.value.code == "invalid argument"
    with pytest.raises(edgec.Error, match="quantize"):
        edgec.load(MODEL).compile()


def test_run_returns_arrays_over_edgecs_buffers():
    s = edgec.load(MODEL).optimize(level=3).session(threads=1)
    y = s.run({"input": image(0)})
    assert list(y) == ["output"] or len(y) == 1
    out = next(iter(y.values()))
    assert out.dtype == np.float32 and out.shape == (1, 1000)
    assert not out.flags.owndata  # a view of edgec's output buffer, not a copy
    # The same input as float64 is converted to the input's dtype: the same result.
    again = next(iter(s.run({"input": image(0).astype(np.float64)}).values()))
    assert np.array_equal(out, again)


def test_optimize_keeps_the_numbers():
    x = {"input": image(1)}
    r = edgec.compare(edgec.load(MODEL).session(opt_level=0), edgec.load(MODEL).optimize(3).session(), x)
    (stats,) = r.values()
    assert stats["cosine"] > 0.99999
    assert stats["max_abs"] < 1e-3


def test_profile_has_a_row_per_step():
    s = edgec.load(MODEL).session()
    s.run({"input": image(0)})
    p = s.profile()
    assert p["total_seconds"] > 0 and not p["simulated"]
    assert any(n["op"].endswith("Conv") for n in p["nodes"])
    assert sum(n["seconds"] for n in p["nodes"]) <= p["total_seconds"] * 1.01


def test_compiled_placements_and_npu_sim_equals_cpu(compiled):
    places = compiled.placements()
    assert any(p["unit"] == "npu" for p in places)
    assert all(p["reason"] and p["code"] for p in places)
    assert sum(p["macs"] for p in places if p["unit"] == "npu") > 0
    x = {"input": image(5)}
    r = edgec.compare(compiled.session("cpu"), compiled.session("npu-sim"), x)
    assert all(v["bit_equal"] for v in r.values()), r
    s = compiled.session("npu-sim")
    s.run(x)
    p = s.profile()
    assert p["simulated"] and p["npu_cycles"] > 0
    assert any(n["unit"] == "npu" and n["cycles"] > 0 for n in p["nodes"])
    report = s.run_report()
    assert report.count("\n") > len(places) // 2 and "npu" in report
    assert all(n["node"][-32:] in report for n in p["nodes"] if n["unit"] == "npu")  # long names: the tail
    assert compiled.session("cpu").run_report() == ""


def test_int8_stays_close_to_float(compiled):
    x = {"input": image(6)}
    r = edgec.compare(edgec.load(MODEL), compiled, x)
    (stats,) = r.values()
    assert stats["cosine"] > 0.9, stats


def test_save_and_load_compiled(compiled, tmp_path):
    path = tmp_path / "m.edgec"
    compiled.save(path.as_posix())
    again = edgec.load_compiled(path)
    x = {"input": image(7)}
    r = edgec.compare(compiled, again, x)
    assert all(v["bit_equal"] for v in r.values())
    with pytest.raises(edgec.Error):
        edgec.load_compiled(MODEL)


def test_compile_for_a_target_dict_and_overrides():
    m = edgec.load(MODEL).quantize(calib=[{"input": image(0)}], method="minmax")
    t = json.loads(edgec.target_json("edge-default"))
    t["name"] = "small-sram"
    t["shared_sram"]["bytes"] = 512 * 1024
    c = m.compile(target=t)
    assert c.target == "small-sram"
    c2 = m.compile(target="edge-default", set={"shared_sram.bytes": "512K"})
    assert c2.target == "edge-default"
    with pytest.raises(edgec.Error, match="no_such_field"):
        m.compile(set=["no_such_field=1"])
    with pytest.raises(edgec.Error):
        m.compile(target="no-such-target")


def test_quantize_rejects_bad_options():
    m = edgec.load(MODEL)
    with pytest.raises(edgec.Error, match="method"):
        m.quantize(calib=[{"input": image(0)}], method="nonsense")
    with pytest.raises(edgec.Error, match="calibration"):
        m.quantize(calib=[])
    # int16 names a node that must exist and be a norm or softmax (squeezenet has neither).
    with pytest.raises(edgec.Error, match="int16 names 'no_such_node'"):
        m.quantize(calib=[{"input": image(0)}], int16=["no_such_node"])


# While a run is inside edgec, other Python threads run: the GIL is released. With a switch
# interval far longer than the runs, a thread that held the GIL through the run would leave
# the main thread no step inside the run's window.
def test_run_releases_the_gil():
    s = edgec.load(MODEL).session(threads=1)
    x = {"input": image(0)}
    s.run(x)  # the plan is built
    windows = []

    def worker():
        for _ in range(3):
            t0 = time.perf_counter()
            s.run(x)
            windows.append((t0, time.perf_counter()))

    old = sys.getswitchinterval()
    sys.setswitchinterval(30)
    try:
        t = threading.Thread(target=worker)
        t.start()
        stamps = []
        while t.is_alive():
            stamps.append(time.perf_counter())
            time.sleep(0)
        t.join()
    finally:
        sys.setswitchinterval(old)
    inside = sum(1 for st in stamps for a, b in windows if a < st < b)
    assert inside > 0
