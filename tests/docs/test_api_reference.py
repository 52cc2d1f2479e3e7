# docs/api.md's Python and C references against the code: every public name of the Python
# module and of its classes, and every function, type and constant of include/edgec/c_api.h,
# is named in docs/api.md.
import os
import re
import sys

import pytest

import conftest

sys.path.insert(0, os.path.join(conftest.BUILD, "python"))
import edgec  # noqa: E402

API_MD = open(os.path.join(conftest.DOCS, "api.md")).read()


def python_names():
    names = set(edgec.__all__)
    for cls in (edgec.Model, edgec.CompiledModel, edgec.Session):
        names |= {f"{cls.__name__}.{n}" for n in dir(cls) if not n.startswith("_")}
    return sorted(names)


def c_names():
    header = open(os.path.join(conftest.ROOT, "include", "edgec", "c_api.h")).read()
    header = re.sub(r"/\*.*?\*/|//[^\n]*", "", header, flags=re.S)  # not the comments
    return sorted(set(re.findall(r"\b(edgec_\w+|EDGEC_[A-Z0-9_]+)\b", header))
                  - {"EDGEC_C_API_H", "EDGEC_C_API_H_", "EDGEC_API", "EDGEC_EXTERN_C"})


@pytest.mark.parametrize("name", python_names())
def test_python_name_documented(name):
    member = name.split(".")[-1]
    assert re.search(rf"[`.]{re.escape(member)}\b", API_MD), f"edgec.{name} is not in docs/api.md"


def test_c_api_has_names():
    assert len(c_names()) > 20


@pytest.mark.parametrize("name", c_names())
def test_c_name_documented(name):
    assert re.search(rf"\b{re.escape(name)}\b", API_MD), f"{name} (c_api.h) is not in docs/api.md"
