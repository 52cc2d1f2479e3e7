"""Writes the ONNX backend node test cases with Debian's python3-onnx (1.12).

usage: generate_data.py OUT_DIR
The generator uses numpy aliases removed in numpy 1.24 (np.float, np.int, ...); they are
restored as the builtins before onnx is imported.
"""
import sys
import warnings

import numpy as np

warnings.simplefilter("ignore")
for alias, builtin in [("float", float), ("int", int), ("bool", bool), ("object", object),
                       ("complex", complex), ("str", str)]:
    if alias not in np.__dict__:
        setattr(np, alias, builtin)

from onnx.backend.test.cmd_tools import main  # noqa: E402

sys.argv = ["backend-test-tools", "generate-data", "-o", sys.argv[1]]
main()
