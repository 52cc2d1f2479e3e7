#!/usr/bin/env bash
# docs/quickstart.md, as a new user runs it: the block marked ```sh quickstart is extracted from
# the page and run by bash in a fresh temporary HOME and folder, with two substitutions only:
# step 1 clones this checkout (its committed HEAD) instead of the public URL, and the clone gets
# the build under test and the ONNX Runtime install as symlinks (so step 2's `make deps build`
# finds everything present and installs the build under test). Then checks that the CLI made
# a profiled INT8 NPU compile (placements with reasons, the per-layer table, report.html) and
# that the Python step ran the same chain with npu-sim == cpu bit for bit.
# Usage: tests/docs/quickstart_test.sh [BUILD]
set -uo pipefail
BUILD="$(cd "${1:-build}" && pwd)"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

/usr/bin/python3 - "$ROOT/docs/quickstart.md" "$WORK/quickstart.sh" "$ROOT" "$BUILD" <<'PYEOF'
import re, shlex, sys
doc, out, root, build = sys.argv[1:]
blocks = re.findall(r"^```sh quickstart\n(.*?)^```", open(doc).read(), re.S | re.M)
assert len(blocks) == 1, f"{doc}: expected one ```sh quickstart block, found {len(blocks)}"
body = blocks[0]
steps = re.findall(r"^# (\d)\.", body, re.M)
assert steps == ["1", "2", "3", "4", "5"], f"{doc}: the block must hold steps 1-5, has {steps}"
clone = "git clone <edgec repository URL> edgec && cd edgec"
assert clone in body, f"{doc}: step 1 is not '{clone}'"
local = (f"git clone -q {shlex.quote(root)} edgec && cd edgec && ln -s {shlex.quote(build)} build && "
         f"ln -s {shlex.quote(root)}/tools/ort tools/ort")
open(out, "w").write("set -euo pipefail\n" + body.replace(clone, local))
PYEOF
[[ -f "$WORK/quickstart.sh" ]] || exit 1

mkdir -p "$WORK/home"
cd "$WORK"
echo "quickstart: running the five commands of docs/quickstart.md in $WORK"
if ! HOME="$WORK/home" bash "$WORK/quickstart.sh" > "$WORK/log" 2>&1; then
  tail -40 "$WORK/log"
  echo "quickstart: FAILED (the commands above did not all succeed)"
  exit 1
fi

fail=0
check() {  # check DESCRIPTION COMMAND...
  local what="$1"; shift
  if "$@"; then echo "ok   $what"; else echo "FAIL $what"; fail=1; fi
}
has() { grep -qE "$1" "$WORK/log"; }
Q="$WORK/edgec"
check "CLI installed under \$HOME/.local" test -x "$WORK/home/.local/bin/edgec"
check "compile wrote resnet18.edgec" test -s "$Q/resnet18.edgec"
check "compile printed NPU placements with reasons" has '^ *npu .*'
check "compile printed why nodes stay on the CPU or the cost comparison" has '(cpu|npu) .*(unsupported|not supported|transfers [0-9.]+ ms (<=|<|>) (cpu|npu) )'
check "run printed the simulated NPU cycles" has '^NPU: [0-9.]+ cycles'
check "run wrote report.html" test -s "$Q/report.html"
check "Python: placement counts" has '^placement: [1-9][0-9]* node\(s\) on the NPU'
check "Python: npu-sim == cpu bit for bit" has '^npu-sim == cpu bit for bit: True$'
[[ $fail == 0 ]] || { echo "--- log"; tail -60 "$WORK/log"; }
echo "quickstart: $([[ $fail == 0 ]] && echo passed || echo FAILED)"
exit $fail
