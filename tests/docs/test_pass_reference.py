# docs/passes.md against src/passes/passes.def: one section `## \`name\`` per pass, in the
# def's order, stating the def's level ("Level N"), with a Before and an After block; and the
# binary accepts every documented name in an explicit pipeline.
import os
import re
import subprocess

import pytest

import conftest

PASSES_MD = os.path.join(conftest.DOCS, "passes.md")
MODEL = os.path.join(conftest.ZOO, "squeezenet1_1", "model.onnx")


def passes_def():
    text = open(os.path.join(conftest.ROOT, "src", "passes", "passes.def")).read()
    return [(name, int(level)) for name, level in re.findall(r'^EDGEC_PASS\(\w+, "([\w-]+)", (\d+),', text, re.M)]


def doc_sections():
    parts = re.split(r"^## `([\w-]+)`[ \t]*$", open(PASSES_MD).read(), flags=re.M)
    return list(zip(parts[1::2], parts[2::2]))


def test_one_section_per_pass_in_order():
    assert [n for n, _ in doc_sections()] == [n for n, _ in passes_def()]


@pytest.mark.parametrize("name,level", passes_def())
def test_section_states_level_before_and_after(name, level):
    body = dict(doc_sections())[name]
    assert re.search(rf"^Level {level}\b", body, re.M), f"{name}: the section must say 'Level {level}'"
    blocks = [lang for lang, _ in re.findall(r"^```(\w*)\n(.*?)^```", body, re.S | re.M)]
    assert "Before:" in body and "After:" in body and blocks.count("text") >= 2, name


def test_every_documented_pass_runs(tmp_path):
    names = ",".join(n for n, _ in doc_sections())
    r = subprocess.run([conftest.EDGEC, "optimize", MODEL, "--passes", names, "-q", "-o", str(tmp_path / "o.onnx")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


@pytest.mark.parametrize("level", [1, 2, 3])
def test_documented_levels_are_the_named_pipelines(level, tmp_path):
    """`edgec optimize -O N` prints its pipeline: it runs exactly the passes this page gives a
    level of 1..N, but those it says are "in no named pipeline"."""
    out = subprocess.run([conftest.EDGEC, "optimize", MODEL, "-O", str(level), "-o", str(tmp_path / "o.onnx")],
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("pipeline: "))
    ran = {re.sub(r"\{.*\}", "", p) for p in line[len("pipeline: "):].split(",")}
    documented = {name for name, body in doc_sections()
                  if 1 <= int(re.search(r"^Level (\d)", body, re.M).group(1)) <= level
                  and "in no named pipeline" not in body}
    assert ran == documented
