#!/usr/bin/env bash
# scripts/build_targets.sh on a throw-away CMake project: a target that builds passes; a target
# the folder does not define, and a target whose source does not compile, each stop with exit
# 1 and a line naming it (the sanitizer and fuzz builds rely on this: scripts/sanitize.sh,
# tests/fuzz/run.sh).
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/src"
cat > "$work/src/CMakeLists.txt" <<'EOF'
cmake_minimum_required(VERSION 3.25)
project(build_targets_test LANGUAGES CXX)
add_executable(good good.cc)
add_executable(broken broken.cc)
EOF
echo 'int main() { return 0; }' > "$work/src/good.cc"
echo 'int main() { return not_declared; }' > "$work/src/broken.cc"
cmake -S "$work/src" -B "$work/b" > /dev/null || { echo "FAIL: cannot configure the test project"; exit 1; }

failed=0
# expect NAME WANT_RC WANT_TEXT TARGET...: the exit status, and a text stderr must contain.
expect() {
  local name="$1" want_rc="$2" want_text="$3"; shift 3
  local err rc
  err="$(JOBS=1 bash "$ROOT/scripts/build_targets.sh" "$work/b" "$@" 2>&1 >/dev/null)"
  rc=$?
  if [ "$rc" != "$want_rc" ] || ! grep -qF -- "$want_text" <<< "$err"; then
    echo "FAIL $name: exit $rc (want $want_rc), stderr:"; echo "$err" | sed 's/^/  /'
    failed=$((failed + 1))
  else
    echo "ok   $name"
  fi
}
expect "a target that builds" 0 "" good
expect "an unknown target" 1 "defines no target 'no_such_target'" good no_such_target
expect "a compile error" 1 "building good broken in $work/b failed" good broken
expect "the compiler's own line is shown" 1 "not_declared" broken
expect "no target at all" 2 "no target named" 
[ "$failed" = 0 ]
