# scripts/install-deps.sh (what `make deps`/`make demo`/`make test` run first) prints one
# summary line, not apt's log; a failing apt step prints the log's tail and a one-line error.
# apt-get, dpkg-query and sudo are stand-ins on PATH (nothing is installed, no network).
import os
import stat
import subprocess

import conftest

SCRIPT = os.path.join(conftest.ROOT, "scripts", "install-deps.sh")


def fake_tools(d, apt_rc):
    tools = {
        # every package installed but python3-pytest
        "dpkg-query": 'case "$*" in *python3-pytest*) exit 1;; esac; echo "install ok installed"',
        "apt-get": f'for i in $(seq 200); do echo "Unpacking package $i ..."; done; exit {apt_rc}',
        "sudo": 'exec "$@"',
    }
    for name, body in tools.items():
        p = d / name
        p.write_text("#!/bin/sh\n" + body + "\n")
        p.chmod(p.stat().st_mode | stat.S_IEXEC)


def run(tmp_path, apt_rc):
    fake_tools(tmp_path, apt_rc)
    env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}", EDGEC_DEPS_LOG=str(tmp_path / "log"))
    return subprocess.run(["bash", SCRIPT], capture_output=True, text=True, env=env, timeout=120)


def test_one_summary_line_when_a_package_is_installed(tmp_path):
    r = run(tmp_path, apt_rc=0)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 1, r.stdout
    assert lines[0].startswith("install-deps: installed 1 Debian package(s) (python3-pytest)"), lines[0]
    assert "Unpacking" not in r.stdout + r.stderr
    assert "Unpacking package 200" in (tmp_path / "log").read_text()  # apt's output is in the log


def test_a_failing_step_shows_the_logs_tail_and_fails(tmp_path):
    r = run(tmp_path, apt_rc=100)
    assert r.returncode != 0
    assert "Unpacking package 200" in r.stderr and "Unpacking package 100" not in r.stderr
    assert "install-deps: apt-get update failed" in r.stderr
