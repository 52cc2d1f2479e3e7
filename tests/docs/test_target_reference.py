# docs/targets.md against the parser: the field table lists exactly the leaf fields of a target
# (as `edgec targets --show` prints them, which is what src/npu/target.cc reads), each with the
# built-in edge-default's value; every row has a type, and units for the numbers.
import json
import re
import subprocess

import conftest

TARGETS_MD = conftest.DOCS + "/targets.md"


def leaves(j, prefix=""):
    out = {}
    for k, v in j.items():
        path = f"{prefix}{k}"
        if isinstance(v, dict):
            out.update(leaves(v, path + "."))
        else:
            out[path] = v
    return out


def doc_rows():
    text = open(TARGETS_MD).read()
    table = text.split("## Fields", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.fullmatch(r"`([\w.]+)`", cells[0]) if len(cells) == 6 else None
        if m:
            rows[m.group(1)] = dict(zip(["type", "unit", "allowed", "default", "meaning"], cells[1:]))
    return rows


def default_target():
    out = subprocess.run([conftest.EDGEC, "targets", "--show", "edge-default"], capture_output=True, text=True,
                         check=True).stdout
    return leaves(json.loads(out))


def test_every_field_is_documented_and_no_other():
    actual, documented = set(default_target()), set(doc_rows())
    assert len(actual) > 40
    assert sorted(actual - documented) == [], "target fields missing from docs/targets.md"
    assert sorted(documented - actual) == [], "docs/targets.md documents fields a target does not have"


def test_documented_defaults_are_edge_defaults():
    rows = doc_rows()
    for path, value in default_target().items():
        cell = rows[path]["default"].strip("`")
        if isinstance(value, bool):
            assert cell == str(value).lower(), path
        elif isinstance(value, (int, float)):
            assert float(cell) == float(value), f"{path}: documented {cell}, edge-default has {value}"
        elif isinstance(value, list):
            assert [s.strip() for s in cell.split(",")] == value, path
        else:
            assert cell == value, path


def test_rows_have_a_type_and_numbers_a_unit():
    for path, row in doc_rows().items():
        assert row["type"] in ("int", "real", "bool", "text", "list"), path
        if row["type"] in ("int", "real"):
            assert row["unit"] and row["allowed"], f"{path}: a number needs its unit and range"
        assert row["meaning"], path
