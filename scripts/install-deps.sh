#!/usr/bin/env bash
# Installs everything edgec needs on Debian 12. Idempotent: a second run does nothing
# that is already done. Run as root (CI and the dev machines are root) or with sudo.
# Prints one summary line (what was installed or found, and the time); apt's and npm's own
# output goes to a log file, whose last lines are printed only when a step fails.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ORT_VERSION="1.30.0"

APT_PACKAGES=(
  build-essential cmake pkg-config
  libonnx-dev libprotobuf-dev protobuf-compiler
  libdnnl-dev
  nlohmann-json3-dev libcli11-dev libfmt-dev
  libflatbuffers-dev flatbuffers-compiler
  libpng-dev libjpeg-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-onnx python3-numpy python3-torch python3-torchvision python3-pil
  pybind11-dev python3-dev python3-pytest
  nodejs npm
  chromium fonts-dejavu-core clang libclang-rt-14-dev libomp-14-dev strace
)

LOG="${EDGEC_DEPS_LOG:-${TMPDIR:-/tmp}/edgec-install-deps.log}"
: > "$LOG"
START=$(date +%s)
summary=()
quiet_run() {  # quiet_run WHAT COMMAND...: the command's output to the log; on failure its tail
  local what="$1"; shift
  if ! "$@" >> "$LOG" 2>&1; then
    tail -25 "$LOG" >&2
    echo "install-deps: $what failed (full log: $LOG)" >&2
    exit 1
  fi
}

SUDO=""
if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# node/npm may come from elsewhere than Debian (the dev image ships its own); accept them.
if command -v node >/dev/null && command -v npm >/dev/null; then
  filtered=()
  for p in "${missing[@]}"; do
    case "$p" in nodejs|npm) ;; *) filtered+=("$p") ;; esac
  done
  missing=("${filtered[@]+"${filtered[@]}"}")
fi

if [ "${#missing[@]}" -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  quiet_run "apt-get update" $SUDO apt-get update -qq
  quiet_run "apt-get install ${missing[*]}" $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
  summary+=("installed ${#missing[@]} Debian package(s) (${missing[*]}), $(( ${#APT_PACKAGES[@]} - ${#missing[@]} )) present")
else
  summary+=("${#APT_PACKAGES[@]} Debian packages present")
fi

# ONNX Runtime (oracle and peer) from npm, pinned, into tools/ort (ignored by git).
# --ignore-scripts: its postinstall reaches a host this network cannot reach; the CPU
# binaries for linux-x64 ship inside the package itself.
ORT_DIR="$ROOT/tools/ort"
# A symlink here (a worktree pointing at another checkout's install) that leads nowhere is
# replaced by a real install.
if [ -L "$ORT_DIR" ] && [ ! -d "$ORT_DIR/node_modules" ]; then rm -f "$ORT_DIR"; fi
have=""
if [ -f "$ORT_DIR/node_modules/onnxruntime-node/package.json" ]; then
  have="$(node -p "require('$ORT_DIR/node_modules/onnxruntime-node/package.json').version" 2>/dev/null || true)"
fi
if [ "$have" != "$ORT_VERSION" ]; then
  mkdir -p "$ORT_DIR"
  if [ ! -f "$ORT_DIR/package.json" ]; then
    echo '{ "name": "edgec-ort", "private": true }' > "$ORT_DIR/package.json"
  fi
  quiet_run "npm install onnxruntime-node@$ORT_VERSION" \
    bash -c "cd '$ORT_DIR' && npm install --ignore-scripts --no-audit --no-fund --save-exact onnxruntime-node@$ORT_VERSION"
  summary+=("installed onnxruntime-node $ORT_VERSION into tools/ort")
else
  summary+=("onnxruntime-node $ORT_VERSION present")
fi

joined="$(printf '%s; ' "${summary[@]}")"
echo "install-deps: ${joined%; } ($(( $(date +%s) - START )) s; log: $LOG)"
