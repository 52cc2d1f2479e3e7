# The module under test: build/python (or EDGEC_PYTHONPATH, e.g. an install prefix's
# dist-packages); the zoo model: build/zoo (or EDGEC_ZOO).
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("EDGEC_BUILD", os.path.join(ROOT, "build"))
sys.path.insert(0, os.environ.get("EDGEC_PYTHONPATH", os.path.join(BUILD, "python")))
ZOO = os.environ.get("EDGEC_ZOO", os.path.join(BUILD, "zoo"))
