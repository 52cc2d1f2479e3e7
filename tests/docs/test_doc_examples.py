# Every code example of docs/ is run by a test. A fenced block's info string says how:
#   ```sh run / ```python run  - run here, in a folder holding model.onnx (squeezenet 1.1 from
#                                the zoo), calib/ (4 generated samples) and input.npy, with the
#                                build's edgec on PATH and its Python module on PYTHONPATH;
#                                the block must exit 0 (sh: bash -e -o pipefail)
#   ```json target             - a target file: `edgec targets --show FILE` must accept it
#   ```cpp install / ```c install / ```python install
#                              - docs/api.md: built and run against an installed package by
#                                tests/api/install_test.sh
#   ```sh quickstart           - docs/quickstart.md: run by tests/docs/quickstart_test.sh
#   ```sh bench                - a benchmark command (minutes long; bench/ is not a test)
# Other blocks (text, json data formats, program output) are not code. test_every_code_block_is_marked
# fails on an unmarked sh/bash/python/cpp/c block, so no example escapes the tests.
import os
import shutil
import subprocess
import sys

import pytest

import conftest

RUN = [(os.path.relpath(path, conftest.ROOT), line, lang, body)
       for path in conftest.doc_files()
       for line, lang, marker, body in conftest.fenced_blocks(path)
       if (marker == "run" and lang in ("sh", "python")) or (marker == "target" and lang == "json")]
CODE_LANGS = {"sh", "bash", "shell", "console", "python", "py", "cpp", "c++", "c"}
MARKERS = {"run", "install", "quickstart", "bench", "target"}
MODEL = os.path.join(conftest.ZOO, "squeezenet1_1", "model.onnx")


@pytest.fixture(scope="session")
def workspace(tmp_path_factory):
    """The folder every example starts from (copied per example)."""
    if not os.path.exists(MODEL):
        pytest.fail(f"{MODEL} missing: export the zoo (tests/zoo/export_models.py)")
    d = tmp_path_factory.mktemp("doc-workspace")
    os.symlink(MODEL, d / "model.onnx")
    subprocess.run([sys.executable, os.path.join(conftest.ROOT, "scripts", "make_calib_data.py"), MODEL,
                    str(d / "calib"), "--count", "4", "--seed", "3"], check=True, capture_output=True)
    shutil.copy(d / "calib" / "sample_0000.npy", d / "input.npy")
    return d


def test_there_are_examples():
    assert len(RUN) >= 10, RUN


def test_every_code_block_is_marked():
    unmarked = [f"{os.path.relpath(p, conftest.ROOT)}:{line}: ```{lang}"
                for p in conftest.doc_files()
                for line, lang, marker, _ in conftest.fenced_blocks(p)
                if lang in CODE_LANGS and marker not in MARKERS]
    assert not unmarked, "code blocks no test runs (mark them, see this file's header):\n" + "\n".join(unmarked)


@pytest.mark.parametrize("doc,line,lang,body", RUN, ids=[f"{d}:{l}" for d, l, _, _ in RUN])
def test_doc_example(doc, line, lang, body, workspace, tmp_path):
    work = tmp_path / "work"
    shutil.copytree(workspace, work, symlinks=True)
    env = dict(os.environ)
    env["PATH"] = os.path.join(conftest.BUILD, "bin") + os.pathsep + env["PATH"]
    env["PYTHONPATH"] = os.path.join(conftest.BUILD, "python")
    env.pop("NO_COLOR", None)
    if lang == "sh":
        cmd = ["bash", "-e", "-o", "pipefail", "-c", body]
    elif lang == "python":
        cmd = [sys.executable, "-c", body]
    else:  # json target
        (work / "target.json").write_text(body)
        cmd = [conftest.EDGEC, "targets", "--show", str(work / "target.json")]
    r = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{doc}:{line}: exit {r.returncode}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
