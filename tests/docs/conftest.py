# The docs' tests: the build under test is EDGEC_BUILD (default build/), the model zoo
# EDGEC_ZOO (default BUILD/zoo).
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.abspath(os.environ.get("EDGEC_BUILD", os.path.join(ROOT, "build")))
ZOO = os.environ.get("EDGEC_ZOO", os.path.join(BUILD, "zoo"))
EDGEC = os.path.join(BUILD, "bin", "edgec")
DOCS = os.path.join(ROOT, "docs")

FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.S | re.M)


def fenced_blocks(path):
    """[(line, language, marker, body)] of every fenced block of a Markdown file: the info
    string's first word is the language, the second (if any) the marker."""
    text = open(path).read()
    out = []
    for m in FENCE.finditer(text):
        words = m.group(1).split()
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, words[0] if words else "", words[1] if len(words) > 1 else "", m.group(2)))
    return out


def doc_files():
    return sorted(os.path.join(DOCS, f) for f in os.listdir(DOCS) if f.endswith(".md"))
