# examples/comfyui/edgec_unet: the custom node, driven the way ComfyUI drives it (no ComfyUI
# install): load the package from its folder, read NODE_CLASS_MAPPINGS, check the declared
# interface, validate the widget values against INPUT_TYPES, instantiate the class and call the
# method named by FUNCTION with keyword arguments; IMAGE is a torch float tensor [B, H, W, C].
import importlib.util
import os
import sys

import numpy as np
import pytest
import torch

import conftest

NODE_DIR = os.path.join(conftest.ROOT, "examples", "comfyui", "edgec_unet")
UNET = os.path.join(conftest.ZOO, "unet_small", "model.onnx")


def load_custom_node_package(path):
    """As ComfyUI's loader does: import custom_nodes/<dir>/__init__.py as module <dir>."""
    name = os.path.basename(path)
    spec = importlib.util.spec_from_file_location(name, os.path.join(path, "__init__.py"),
                                                  submodule_search_locations=[path])
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def widget_values(node_class, **given):
    """The app's side: every required input gets a value (given, else the widget default);
    combos must hold one of their choices, numbers lie in min..max."""
    types = node_class.INPUT_TYPES()
    values = {}
    for section in ("required", "optional"):
        for name, spec in types.get(section, {}).items():
            kind, opts = spec[0], (spec[1] if len(spec) > 1 else {})
            if name in given:
                values[name] = given[name]
            elif "default" in opts:
                values[name] = opts["default"]
            elif section == "required":
                raise AssertionError(f"required input '{name}' has no value")
            else:
                continue
            v = values[name]
            if isinstance(kind, list):
                assert v in kind, f"{name}: {v!r} not in {kind}"
            elif kind in ("INT", "FLOAT"):
                assert opts.get("min", v) <= v <= opts.get("max", v), f"{name}: {v} out of range"
    return values


def call(node_class, **given):
    node = node_class()
    return getattr(node, node_class.FUNCTION)(**widget_values(node_class, **given))


@pytest.fixture(scope="module")
def package():
    if not os.path.exists(UNET):
        pytest.fail(f"{UNET} missing: export the zoo (tests/zoo/export_models.py)")
    return load_custom_node_package(NODE_DIR)


def image(batch, h, w, seed):
    return torch.from_numpy(np.random.default_rng(seed).uniform(0, 1, (batch, h, w, 3)).astype(np.float32))


def test_declares_the_node_interface(package):
    cls = package.NODE_CLASS_MAPPINGS["EdgecUNetStep"]
    assert set(package.NODE_DISPLAY_NAME_MAPPINGS) <= set(package.NODE_CLASS_MAPPINGS)
    types = cls.INPUT_TYPES()
    assert types["required"]["image"] == ("IMAGE",)
    assert cls.RETURN_TYPES == ("IMAGE", "STRING") and len(cls.RETURN_NAMES) == len(cls.RETURN_TYPES)
    assert callable(getattr(cls(), cls.FUNCTION)) and cls.CATEGORY


def test_runs_a_unet_step_on_the_npu_and_reuses_the_compiled_model(package, monkeypatch):
    nodes = sys.modules[package.__name__ + ".nodes"]
    nodes._cache.clear()
    compiles = []
    real = nodes._compile_unet
    monkeypatch.setattr(nodes, "_compile_unet", lambda *a: compiles.append(a) or real(*a))
    cls = package.NODE_CLASS_MAPPINGS["EdgecUNetStep"]

    x = image(2, 64, 64, seed=1)
    out, summary = call(cls, image=x, model_path=UNET, device="npu-sim")
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float32
    assert tuple(out.shape) == (2, 64, 64, 3)
    assert float(out.min()) >= 0 and float(out.max()) <= 1
    assert not torch.equal(out, x)  # the step changed the image
    assert "node(s) on the NPU" in summary and "NPU cycles" in summary
    npu_nodes = int(summary.split(": ")[1].split(" node")[0])
    assert npu_nodes > 0
    assert len(compiles) == 1

    # A second call (another image size, the CPU): no new compile; the app gets its size back.
    out2, summary2 = call(cls, image=image(1, 48, 80, seed=2), model_path=UNET, device="cpu")
    assert tuple(out2.shape) == (1, 48, 80, 3)
    assert "ran on cpu" in summary2
    assert len(compiles) == 1

    # The compiled model is bit exact across devices: npu-sim and cpu give the same image.
    out_cpu, _ = call(cls, image=x, model_path=UNET, device="cpu")
    assert torch.equal(out, out_cpu)
    assert len(compiles) == 1

    # Another target is another compile.
    call(cls, image=x[:1], model_path=UNET, device="npu-sim", target="edge-large")
    assert len(compiles) == 2


def test_numpy_images_and_strength_zero_returns_the_image(package):
    cls = package.NODE_CLASS_MAPPINGS["EdgecUNetStep"]
    x = image(1, 64, 64, seed=3).numpy()
    out, _ = call(cls, image=x, model_path=UNET, device="cpu", strength=0.0)
    assert isinstance(out, np.ndarray)
    np.testing.assert_allclose(out, x, atol=1e-6)


def test_bad_inputs_raise_clear_errors(package):
    cls = package.NODE_CLASS_MAPPINGS["EdgecUNetStep"]
    with pytest.raises(ValueError, match="channels"):
        call(cls, image=torch.zeros(1, 64, 64, 4), model_path=UNET)
    with pytest.raises(ValueError, match=r"\[B, H, W, C\]"):
        call(cls, image=torch.zeros(64, 64, 3), model_path=UNET)
    with pytest.raises(Exception, match="missing.onnx"):
        call(cls, image=image(1, 64, 64, 0), model_path="/nonexistent/missing.onnx")
