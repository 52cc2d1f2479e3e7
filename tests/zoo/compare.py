#!/usr/bin/python3
"""Compares the .npy outputs of two runs of a model.

Usage: compare.py EXPECTED_DIR ACTUAL_DIR [--rtol 1e-4]

For every EXPECTED_DIR/<name>.npy, ACTUAL_DIR/<name>.npy must exist with the same shape and
dtype. The error of an output is max|actual - expected| / max(max|expected|, 1e-6): the
largest deviation relative to the output's scale. Prints one line per output and a summary
line "compare: max_error=<e> outputs=<n> failed=<n>"; exits 1 if any output fails.
"""

import argparse
import os
import sys

import numpy as np


def output_error(expected, actual):
    """Returns (error, reason): reason is None when the error is a plain number."""
    if expected.shape != actual.shape:
        return None, f"shape {actual.shape}, expected {expected.shape}"
    if expected.dtype != actual.dtype:
        return None, f"dtype {actual.dtype}, expected {expected.dtype}"
    e = expected.astype(np.float64)
    a = actual.astype(np.float64)
    # A NaN or infinity in the same place on both sides agrees; anywhere else it fails.
    e_special = ~np.isfinite(e)
    a_special = ~np.isfinite(a)
    same_special = e_special & a_special & ((e == a) | (np.isnan(e) & np.isnan(a)))
    if np.any((e_special | a_special) & ~same_special):
        return None, "non-finite values where the expected output differs"
    finite = ~e_special
    if not np.any(finite):
        return 0.0, None
    scale = max(float(np.abs(e[finite]).max()), 1e-6)
    return float(np.abs(a[finite] - e[finite]).max()) / scale, None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("expected_dir")
    parser.add_argument("actual_dir")
    parser.add_argument("--rtol", type=float, default=1e-4,
                        help="largest error allowed, relative to the output's scale")
    args = parser.parse_args()

    for d in (args.expected_dir, args.actual_dir):
        if not os.path.isdir(d):
            print(f"compare: {d} is not a directory", file=sys.stderr)
            return 2
    names = sorted(f for f in os.listdir(args.expected_dir) if f.endswith(".npy"))
    if not names:
        print(f"compare: no .npy files in {args.expected_dir}", file=sys.stderr)
        return 2

    failed = 0
    worst = 0.0
    for name in names:
        label = name[: -len(".npy")]
        actual_path = os.path.join(args.actual_dir, name)
        if not os.path.isfile(actual_path):
            print(f"  {label:32s} FAIL missing {actual_path}")
            failed += 1
            worst = float("inf")
            continue
        expected = np.load(os.path.join(args.expected_dir, name), allow_pickle=False)
        try:
            actual = np.load(actual_path, allow_pickle=False)
        except Exception as e:  # a malformed file is a failure of the run, not of compare
            print(f"  {label:32s} FAIL cannot read {actual_path}: {e}")
            failed += 1
            worst = float("inf")
            continue
        error, reason = output_error(expected, actual)
        shape = "x".join(str(d) for d in expected.shape) or "scalar"
        if reason is not None:
            print(f"  {label:32s} FAIL {reason}")
            failed += 1
            worst = float("inf")
            continue
        ok = error <= args.rtol
        failed += 0 if ok else 1
        worst = max(worst, error)
        print(f"  {label:32s} {shape:>16s} {str(expected.dtype):8s} error {error:.3e} "
              f"{'ok' if ok else 'FAIL (rtol %.1e)' % args.rtol}")

    print(f"compare: max_error={worst:.3e} outputs={len(names)} failed={failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
