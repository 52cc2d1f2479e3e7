#!/usr/bin/env bash
# The installed package from the outside: installs BUILD into a temporary prefix, then
#  - builds examples/cpp with find_package(edgec) and runs it (quantize, compile, npu-sim == cpu),
#  - builds examples/c/run_model.c with pkg-config and runs it,
#  - imports the Python module from the prefix and runs examples/python,
#  - compiles and runs every ```cpp, ```c and ```python block of docs/api.md against the prefix,
# each in a folder where model.onnx is a zoo model. Prints a line per check and the counts.
# Usage: tests/api/install_test.sh [BUILD]
set -uo pipefail
BUILD="$(cd "${1:-build}" && pwd)"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MODEL="$BUILD/zoo/squeezenet1_1/model.onnx"
PY=/usr/bin/python3
[[ -f "$MODEL" ]] || { echo "install test: $MODEL missing (the zoo is exported by tests/zoo)"; exit 1; }
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
PREFIX="$WORK/prefix"
pass=0
fail=0
check() {  # check NAME COMMAND...: runs it in $WORK/run.NAME with model.onnx there
  local name="$1"; shift
  local dir="$WORK/run.$name"
  mkdir -p "$dir" && ln -sf "$MODEL" "$dir/model.onnx"
  if (cd "$dir" && "$@") > "$dir/log" 2>&1; then
    pass=$((pass + 1)); echo "ok   $name"
  else
    fail=$((fail + 1)); echo "FAIL $name"; sed 's/^/     /' "$dir/log" | tail -20
  fi
}

if ! cmake --install "$BUILD" --prefix "$PREFIX" > "$WORK/install.log" 2>&1; then
  cat "$WORK/install.log"; echo "install test: cmake --install failed"; exit 1
fi
LIBDIR="$PREFIX/lib"
[[ -d "$LIBDIR/pkgconfig" ]] || LIBDIR="$(dirname "$(find "$PREFIX" -name edgec.pc | head -1)")/.."
export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
PYDIR="$LIBDIR/python3/dist-packages"

installed() {
  for f in bin/edgec include/edgec/edgec.h include/edgec/c_api.h include/edgec/status.h; do
    [[ -f "$PREFIX/$f" ]] || { echo "missing $f"; return 1; }
  done
  ls "$LIBDIR"/libedgec.so* && ls "$LIBDIR"/cmake/edgec/edgecConfig.cmake "$LIBDIR"/cmake/edgec/edgecTargets.cmake \
    && ls "$PYDIR"/edgec/__init__.py "$PYDIR"/edgec/_edgec*.so && ls "$PREFIX"/share/edgec/targets/*.json
  # The public headers stand alone: no fmt, protobuf, oneDNN or internal header.
  ! grep -rE '#include [<"](fmt|google|onnx|oneapi|ir/|runtime/|support/)' "$PREFIX/include/edgec"
  "$PREFIX/bin/edgec" --help > /dev/null
}
check installed installed

cmake_example() {
  cmake -S "$ROOT/examples/cpp" -B build -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release > /dev/null &&
    cmake --build build > /dev/null && ./build/compile_and_run model.onnx
}
check cpp-find-package cmake_example

c_example() {
  cc -std=c99 -Wall -Werror "$ROOT/examples/c/run_model.c" $(pkg-config --cflags --libs edgec) -lm \
    -Wl,-rpath,"$LIBDIR" -o run_model && ./run_model model.onnx
}
check c-pkg-config c_example

# libedgec_runtime: needs neither protobuf nor the ONNX libraries (oneDNN runs its CPU plans);
# an outside program on it alone runs a model the installed Python module compiled.
runtime_only() {
  ! readelf -d "$LIBDIR"/libedgec_runtime.so | grep -E 'NEEDED.*(protobuf|onnx)' &&
    PYTHONPATH="$PYDIR" $PY -c "
import edgec, numpy as np
m = edgec.load('model.onnx').quantize(calib=[{'input': np.ones((1, 3, 224, 224), np.float32)}], method='minmax')
m.compile().save('model.edgec')" &&
    c++ -std=c++20 "$ROOT/tests/api/runtime_test.cc" -I"$PREFIX/include" -L"$LIBDIR" -ledgec_runtime \
      -Wl,-rpath,"$LIBDIR" -o runtime_test && ! ldd runtime_test | grep -E 'protobuf|onnx' &&
    ./runtime_test model.edgec out.bin
}
check runtime-only runtime_only

python_import() {
  PYTHONPATH="$PYDIR" $PY -c "import edgec, sys; assert edgec.__file__.startswith(sys.argv[1]), edgec.__file__; print(edgec.__version__)" "$PREFIX"
}
check python-import python_import
check python-example env PYTHONPATH="$PYDIR" $PY "$ROOT/examples/python/int8_npu_walkthrough.py" model.onnx

# docs/api.md: every block marked ```cpp install, ```c install or ```python install.
$PY - "$ROOT/docs/api.md" "$WORK/doc" <<'PYEOF'
import os, re, sys
text = open(sys.argv[1]).read()
os.makedirs(sys.argv[2], exist_ok=True)
ext = {"cpp": "cc", "c": "c", "python": "py"}
for i, (lang, body) in enumerate(re.findall(r"^```(cpp|c|python) install\n(.*?)^```", text, re.S | re.M)):
    with open(os.path.join(sys.argv[2], f"example{i:02d}.{ext[lang]}"), "w") as f:
        f.write(body)
PYEOF
doc_example() {
  local src="$1"
  case "$src" in
    *.cc) c++ -std=c++20 -Wall -Werror "$src" $(pkg-config --cflags --libs edgec) -Wl,-rpath,"$LIBDIR" -o ex && ./ex ;;
    *.c) cc -std=c99 -Wall -Werror "$src" $(pkg-config --cflags --libs edgec) -Wl,-rpath,"$LIBDIR" -o ex && ./ex ;;
    *.py) PYTHONPATH="$PYDIR" $PY "$src" ;;
  esac
}
docs=0
for src in "$WORK"/doc/example*; do
  docs=$((docs + 1))
  check "docs/api.md-$(basename "$src")" doc_example "$src"
done
echo "install test: $pass passed, $fail failed ($docs examples from docs/api.md)"
[[ $fail == 0 && $docs -gt 0 ]]
