# The CLI is a program on the public API (issue 31): every file of tools/edgec includes the
# public headers (edgec/...), its own (tools/edgec/...) and system/third-party headers
# (<...>) only. The verbs not yet moved onto the API are listed in CMakeLists.txt
# (EDGEC_CLI_INTERNAL, the only CLI files the build gives src/ as include path); the list may
# only shrink: a listed file that no longer includes an internal header is an error too, and
# so is a file that includes a listed one's header.
import glob
import os
import re

import conftest

CLI = os.path.join(conftest.ROOT, "tools", "edgec")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def internal_list():
    text = open(os.path.join(conftest.ROOT, "CMakeLists.txt")).read()
    m = re.search(r"set\(EDGEC_CLI_INTERNAL\b(.*?)\)", text, re.S)
    assert m, "CMakeLists.txt has no set(EDGEC_CLI_INTERNAL ...)"
    return {os.path.basename(p) for p in m.group(1).split()}


def internal_includes(path):
    text = open(path).read()
    return [h for h in INCLUDE.findall(text) if not (h.startswith("edgec/") or h.startswith("tools/edgec/"))]


def cli_files():
    return sorted(glob.glob(os.path.join(CLI, "*.cc")) + glob.glob(os.path.join(CLI, "*.h")))


def test_the_cli_has_files():
    assert len(cli_files()) > 20


def stem(path):
    return os.path.basename(path).rsplit(".", 1)[0]


def test_only_listed_files_include_internal_headers():
    # A listed file's header (same stem) is part of the exception.
    listed = {stem(f) for f in internal_list()}
    bad = {os.path.basename(f): internal_includes(f) for f in cli_files()
           if stem(f) not in listed and internal_includes(f)}
    assert not bad, f"tools/edgec files include headers of src/ (use include/edgec/, or extend the API): {bad}"


def test_listed_files_still_need_the_exception():
    listed = internal_list()
    stale = [f for f in listed if not internal_includes(os.path.join(CLI, f))]
    assert not stale, f"remove from EDGEC_CLI_INTERNAL (they are on the public API now): {stale}"


def test_public_files_do_not_include_a_listed_files_header():
    listed = {stem(f) for f in internal_list()}
    for f in cli_files():
        if stem(f) in listed:
            continue
        for h in INCLUDE.findall(open(f).read()):
            if h.startswith("tools/edgec/"):
                assert stem(h) not in listed or not internal_includes(os.path.join(conftest.ROOT, h)), \
                    f"{os.path.basename(f)} includes {h}, which includes src/ headers"
