"""edgec: compile ONNX models for edge NPUs and run them on the CPU or the simulated NPU.

    import edgec, numpy as np
    m = edgec.load("resnet18.onnx").optimize(3)
    y = m.session().run({"input": np.zeros((1, 3, 224, 224), np.float32)})

docs/api.md is the reference.
"""
import numpy as _np

from ._edgec import (CompiledModel, Error, Model, Session, __version__, estimate, load, load_bytes,  # noqa: F401
                     load_compiled, target_json, targets)

__all__ = ["CompiledModel", "Error", "Model", "Session", "compare", "estimate", "load", "load_bytes", "load_compiled",
           "target_json", "targets", "__version__"]


def _session(x):
    if isinstance(x, Session):
        return x
    if isinstance(x, CompiledModel):
        return x.session("npu-sim")
    if isinstance(x, Model):
        return x.session()
    raise TypeError(f"compare: expected a Session, Model or CompiledModel, got {type(x).__name__}")


def compare(a, b, inputs):
    """Runs `a` and `b` (Session, Model or CompiledModel: a CompiledModel on npu-sim) on the same
    inputs ({name: ndarray}) and returns, per output of `a`, how far `b`'s output is from it:
    {"max_abs", "mean_abs", "cosine", "sqnr_db", "bit_equal"}. Outputs are matched by name,
    else by position."""
    ya = _session(a).run(inputs)
    yb = _session(b).run(inputs)
    if len(ya) != len(yb):
        raise Error(f"compare: {len(ya)} outputs against {len(yb)}")
    out = {}
    for i, (name, x) in enumerate(ya.items()):
        y = yb[name] if name in yb else list(yb.values())[i]
        if x.shape != y.shape:
            raise Error(f"compare: output '{name}' has shape {x.shape} against {y.shape}")
        xf = x.astype(_np.float64).ravel()
        yf = y.astype(_np.float64).ravel()
        err = xf - yf
        signal = float(_np.dot(xf, xf))
        noise = float(_np.dot(err, err))
        norm = float(_np.linalg.norm(xf) * _np.linalg.norm(yf))
        out[name] = {
            "max_abs": float(_np.max(_np.abs(err))) if err.size else 0.0,
            "mean_abs": float(_np.mean(_np.abs(err))) if err.size else 0.0,
            "cosine": float(_np.dot(xf, yf) / norm) if norm > 0 else float(signal == noise == 0),
            "sqnr_db": float("inf") if noise == 0 else 10 * _np.log10(signal / noise) if signal > 0 else float("-inf"),
            "bit_equal": x.dtype == y.dtype and x.tobytes() == y.tobytes(),
        }
    return out
