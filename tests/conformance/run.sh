#!/usr/bin/env bash
# Generates the ONNX backend node tests with Debian's python3-onnx into BUILD/onnx-node-tests
# (once) and runs the conformance runner over the whole suite.
set -euo pipefail
BUILD="${1:-build}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA="$BUILD/onnx-node-tests"
if [ ! -f "$DATA/.complete" ]; then
  rm -rf "$DATA"
  echo "generating ONNX backend node tests into $DATA"
  /usr/bin/python3 -W ignore "$ROOT/tests/conformance/generate_data.py" "$DATA" > "$BUILD/onnx-node-tests.log" 2>&1 \
    || { cat "$BUILD/onnx-node-tests.log"; exit 1; }
  touch "$DATA/.complete"
fi
exec "$BUILD/bin/conformance" "$DATA/node"
