"""Writes the ONNX backend node test cases with Debian's python3-onnx (1.12).

Usage: generate_data.py OUT_DIR
The generator uses numpy aliases removed in numpy 1.24 (np.float, np.int, ...); they are
restored as the builtins before onnx is imported.
"""
import builtins
import sys

import numpy as np

for alias, target in [("float", float), ("int", int), ("bool", bool), ("object", object),
                      ("complex", complex), ("str", str)]:
    if not hasattr(np, alias) or alias in ("float", "int", "bool", "object", "complex", "str"):
        try:
            getattr(np, alias)
        except AttributeError:
            setattr(np, alias, target)

from onnx.backend.test.cmd_tools import main  # noqa: E402

sys.argv = ["backend-test-tools", "generate-data", "-o", sys.argv[1]]
main()
