# docs/api.md's Python, C and C++ references against the code: every public name of the Python
# module and of its classes, every function, type and constant of include/edgec/c_api.h, and
# every type, function and member function of the C++ headers (include/edgec/*.h), is named
# in docs/api.md.
import glob
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


def cpp_names():
    """Types, free functions and member functions declared in include/edgec/*.h (C++)."""
    names = set()
    for h in sorted(glob.glob(os.path.join(conftest.ROOT, "include", "edgec", "*.h"))):
        if os.path.basename(h) in ("c_api.h", "export.h"):
            continue
        text = re.sub(r"/\*.*?\*/|//[^\n]*", "", open(h).read(), flags=re.S)
        text = re.sub(r"^#.*$", "", text, flags=re.M)
        names |= set(re.findall(r"\b(?:struct|class|enum class)\s+(?:EDGEC_API\s+)?(?:\[\[\w+\]\]\s+)?(\w+)\s*[{:]", text))
        names |= set(re.findall(r"(?:EDGEC_API|inline)\s+[\w:<>,\s*&]*?\b(\w+)\s*\(", text))
        names |= set(re.findall(r"^ {2}(?:static\s+)?[\w:<>,*&]+(?:<[^;()]*>)?[\s*&]+(\w+)\s*\([^;{]*\)\s*"
                                r"(?:const\s*)?(?:noexcept\s*)?[;{]", text, flags=re.M))
    return sorted(n for n in names if n not in {"Impl", "impl", "operator"} and not n.startswith("_"))


def test_cpp_api_has_names():
    assert {"Model", "Session", "CompiledModel", "ReadNpyFile", "ProfileReport"} <= set(cpp_names())


@pytest.mark.parametrize("name", cpp_names())
def test_cpp_name_documented(name):
    assert re.search(rf"\b{re.escape(name)}\b", API_MD), f"{name} (include/edgec/*.h) is not in docs/api.md"
