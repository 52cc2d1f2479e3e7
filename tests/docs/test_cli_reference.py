# docs/cli.md against the binary: every verb `edgec --help` lists has a section `## \`edgec VERB\``
# and no section names a verb that does not exist; in each section's flag table (rows whose first
# cell holds `-x`/`--name`), every flag of `edgec VERB --help` appears and no other. Generic: a
# verb or flag added to the CLI fails this test until docs/cli.md describes it. Also the
# conventions of docs/cli.md: exit codes, NO_COLOR, --quiet, --verbose, targets --json.
import json
import os
import re
import shutil
import subprocess

import pytest

import conftest

CLI_MD = os.path.join(conftest.DOCS, "cli.md")
FLAG = re.compile(r"`(--?[A-Za-z0-9][\w-]*)")


def edgec(*args, env=None):
    return subprocess.run([conftest.EDGEC, *args], capture_output=True, text=True, env=env, timeout=300)


def verbs_from_help():
    out = edgec("--help").stdout
    section = out.split("Subcommands:", 1)[1]
    return sorted(m.group(1) for m in re.finditer(r"^  (\w[\w-]*)\s", section, re.M))


def flags_from_help(verb):
    """Every flag name of the verb's Options section, but -h/--help."""
    out = edgec(verb, "--help").stdout
    flags = set()
    for line in out.split("Options:", 1)[1].splitlines():
        if re.match(r"^  -", line):
            flags.update(n for n in line.split()[0].split(",") if n.startswith("-"))
    return flags - {"-h", "--help"}


def doc_sections():
    """{verb: set of flags in its table}."""
    text = open(CLI_MD).read()
    parts = re.split(r"^## `edgec ([\w-]+)`[ \t]*$", text, flags=re.M)
    sections = {}
    for verb, body in zip(parts[1::2], parts[2::2]):
        flags = set()
        for row in re.findall(r"^\|([^|\n]*)\|", body, re.M):
            flags.update(FLAG.findall(row))
        sections[verb] = flags
    return sections


VERBS = verbs_from_help()


def test_the_cli_has_verbs():
    assert {"run", "compile", "quantize", "targets"} <= set(VERBS), VERBS


def test_every_verb_has_a_section_and_every_section_a_verb():
    sections = doc_sections()
    assert sorted(set(VERBS) - set(sections)) == [], "verbs missing from docs/cli.md"
    assert sorted(set(sections) - set(VERBS)) == [], "docs/cli.md describes verbs edgec does not have"


@pytest.mark.parametrize("verb", VERBS)
def test_flags_match_help(verb):
    documented = doc_sections().get(verb)
    assert documented is not None, f"docs/cli.md has no section for '{verb}'"
    actual = flags_from_help(verb)
    assert actual, f"edgec {verb} --help lists no flags"
    assert sorted(actual - documented) == [], f"flags of `edgec {verb}` missing from docs/cli.md"
    assert sorted(documented - actual) == [], f"docs/cli.md lists flags `edgec {verb}` does not have"


def test_exit_codes():
    assert edgec("targets").returncode == 0
    assert edgec("--version").returncode == 0
    bad = edgec("run", "/nonexistent/model.onnx")
    assert bad.returncode == 1
    assert bad.stderr.startswith("edgec: error: ") and "/nonexistent/model.onnx" in bad.stderr
    for args in (["run"], ["run", "m.onnx", "--no-such-flag"], ["no-such-verb"], ["bench", "m.onnx", "--runs", "x"]):
        r = edgec(*args)
        assert r.returncode == 2, (args, r.returncode, r.stderr)
    assert edgec().returncode == 2


@pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) for a terminal")
def test_error_colour_only_on_a_terminal_and_never_with_no_color():
    def on_tty(no_color):
        env = dict(os.environ)
        env.pop("NO_COLOR", None)
        if no_color:
            env["NO_COLOR"] = "1"
        cmd = f"{conftest.EDGEC} run /nonexistent/model.onnx"
        return subprocess.run(["script", "-qec", cmd, "/dev/null"], capture_output=True, text=True, env=env).stdout

    assert "\x1b[" in on_tty(no_color=False)
    assert "\x1b[" not in on_tty(no_color=True)
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    assert "\x1b[" not in edgec("run", "/nonexistent/model.onnx", env=env).stderr  # a pipe


def test_quiet_and_verbose_on_every_verb():
    listing = edgec("targets")
    assert "edge-default" in listing.stdout
    quiet = edgec("targets", "-q")
    assert quiet.returncode == 0 and quiet.stdout == ""
    verbose = edgec("targets", "--verbose")
    assert verbose.stdout == listing.stdout
    assert re.search(r"^edgec targets: [0-9.]+ s wall, [0-9.]+ s CPU, peak memory [0-9.]+ MiB$", verbose.stderr, re.M)
    for verb in VERBS:
        flags = flags_from_help(verb)
        assert {"-q", "--quiet", "-v", "--verbose"} <= flags, verb


def test_targets_json_lists_what_the_table_lists():
    rows = json.loads(edgec("targets", "--json").stdout)
    table = edgec("targets").stdout.splitlines()[1:]
    assert [r["name"] for r in rows] == [line.split()[0] for line in table]
    default = next(r for r in rows if r["name"] == "edge-default")
    assert default["cores"] * default["mac_rows"] * default["mac_cols"] == default["macs_per_cycle"]


MODEL = os.path.join(conftest.ZOO, "squeezenet1_1", "model.onnx")


def test_inspect_json_agrees_with_the_table():
    j = json.loads(edgec("inspect", MODEL, "--json").stdout)
    table = edgec("inspect", MODEL, "--all-layers").stdout
    assert f"total MACs: {j['total_macs']} " in table
    assert f"MACs per layer ({len(j['layers'])} layers)" in table
    assert sum(max(r["macs"], 0) for r in j["layers"]) == j["total_macs"] > 0
    assert j["inputs"][0]["name"] == "input" and sum(j["ops"].values()) > len(j["layers"])


def test_run_json_agrees_with_the_table():
    j = json.loads(edgec("run", MODEL, "--json", "--top", "3", "--seed", "4").stdout)
    text = edgec("run", MODEL, "--top", "3", "--seed", "4").stdout
    assert j["device"] == "cpu" and j["inputs"][0]["source"] == "random" and j["inputs"][0]["seed"] == 4
    assert f"input '{j['inputs'][0]['name']}': seeded random {j['inputs'][0]['type']}" in text
    assert j["outputs"] and j["timings"]["run_ms"] > 0
    for o in j["outputs"]:
        assert f"output '{o['name']}': {o['type']}  min {o['min']:.6g}  max {o['max']:.6g}  mean {o['mean']:.6g}" in text
        assert len(o["top"]) == 3 and o["top"][0]["value"] == o["max"]
        assert "  ".join(f"[{t['index']}] {t['value']:.6g}" for t in o["top"]) in text


def test_sweep_json_has_a_row_per_value(tmp_path):
    r = edgec("sweep", MODEL, "--set", "shared_sram.bytes=256K,1M,4M", "--json", str(tmp_path / "s.json"))
    assert r.returncode == 0, r.stderr
    j = json.loads((tmp_path / "s.json").read_text())
    assert [row["value"] for row in j["rows"]] == ["256K", "1M", "4M"]
    for row in j["rows"]:
        assert f"{row['npu_ms']:.3f}" in r.stdout


def test_compile_json_lists_every_placement(tmp_path):
    calib = tmp_path / "calib"
    subprocess.run(["/usr/bin/python3", os.path.join(conftest.ROOT, "scripts", "make_calib_data.py"), MODEL,
                    str(calib), "--count", "2"], check=True, capture_output=True)
    r = edgec("compile", MODEL, "--calib", str(calib), "--method", "minmax", "-o", str(tmp_path / "m.edgec"),
              "--json", str(tmp_path / "p.json"))
    assert r.returncode == 0, r.stderr
    j = json.loads((tmp_path / "p.json").read_text())
    rows = j["placements"]
    assert j["target"] == "edge-default" and rows and all(p["reason"] for p in rows)
    assert {p["unit"] for p in rows} <= {"npu", "cpu"} and any(p["unit"] == "npu" for p in rows)
    for p in rows:  # every node of the JSON is in the printed table
        assert p["node"] in r.stdout, p["node"]
    # run --json on the compiled model: npu-sim and cpu agree bit for bit, so their output
    # figures are equal; npu-sim has a row per node with the simulated cycles of the NPU ones.
    sim = json.loads(edgec("run", str(tmp_path / "m.edgec"), "--json", "--top", "3").stdout)
    cpu = json.loads(edgec("run", str(tmp_path / "m.edgec"), "--device", "cpu", "--json", "--top", "3").stdout)
    assert sim["device"] == "npu-sim" and cpu["device"] == "cpu" and sim["target"] == "edge-default"
    assert sim["outputs"] == cpu["outputs"] and sim["outputs"][0]["top"]
    assert sim["timings"]["latency_ms"] >= sim["timings"]["cpu_ms"] >= 0 and sim["timings"]["npu_cycles"] > 0
    # CPU time exactly when some node runs there (the float boundary reads the caller's buffers).
    assert (sim["timings"]["cpu_ms"] > 0) == any(p["unit"] == "cpu" for p in rows)
    assert "latency_ms" not in cpu["timings"]
    npu_rows = [layer for layer in sim["layers"] if layer["unit"] == "npu"]
    assert npu_rows and all(layer["cycles"] > 0 or layer["op"] in ("Reshape", "Flatten") for layer in npu_rows)
    assert {layer["node"] for layer in npu_rows} <= {p["node"] for p in rows if p["unit"] == "npu"}
    table = edgec("run", str(tmp_path / "m.edgec")).stdout
    assert f"{sim['timings']['npu_cycles']:.0f}" in table
    # inspect reads the same placement back from the file: unit, reason and reason code per node,
    # MACs, the CPU nodes grouped, one segment row per segment.
    ins = json.loads(edgec("inspect", str(tmp_path / "m.edgec"), "--json").stdout)
    assert ins["compiled"] and ins["target"] == "edge-default" and ins["source_model"].endswith("model.onnx")
    assert [(p["node"], p["unit"], p["reason"], p["code"]) for p in ins["placements"]] == \
        [(p["node"], p["unit"], p["reason"], p["code"]) for p in rows]
    assert [p["macs"] for p in ins["placements"]] == [p["macs"] for p in rows]
    assert sum(len(s["nodes"]) for s in ins["segments"]) == len(rows)
    npu_segs = [s for s in ins["segments"] if s["unit"] == "npu"]
    assert npu_segs and all(s["layers"] > 0 and s["program_bytes"] > 0 and 0 < s["sram_peak"] for s in npu_segs)
    text = edgec("inspect", str(tmp_path / "m.edgec")).stdout
    npu = sum(p["unit"] == "npu" for p in rows)
    assert f"placement: {len(rows)} node(s): {npu} on the NPU, {len(rows) - npu} on the CPU" in text
    assert f"segments: {len(ins['segments'])} ({len(npu_segs)} on the NPU)" in text
    assert all(f" {p['op']} ({p['code']})" in text for p in rows if p["unit"] == "cpu")
    per_node = edgec("inspect", str(tmp_path / "m.edgec"), "--all-layers").stdout
    assert all(p["node"] in per_node for p in rows)


def test_quantize_sensitivity_json_is_the_table(tmp_path):
    calib = tmp_path / "calib"
    subprocess.run(["/usr/bin/python3", os.path.join(conftest.ROOT, "scripts", "make_calib_data.py"), MODEL,
                    str(calib), "--count", "2"], check=True, capture_output=True)
    r = edgec("quantize", MODEL, "--calib", str(calib), "--method", "minmax", "--sensitivity", "--sensitivity-samples",
              "2", "--json", str(tmp_path / "s.json"), "-o", str(tmp_path / "q.onnx"))
    assert r.returncode == 0, r.stderr
    rows = json.loads((tmp_path / "s.json").read_text())["sensitivity"]
    table = [line.split() for line in r.stdout.splitlines() if line.startswith("  Conv ")]
    assert len(rows) == len(table) > 0
    for row, cells in zip(rows, table):
        assert " ".join(cells[:-2]) == row["layer"] and f"{row['sqnr_db']:.1f}" == cells[-2]
    bad = edgec("quantize", MODEL, "--calib", str(calib), "--json", str(tmp_path / "x.json"))
    assert bad.returncode == 1 and "--json" in bad.stderr


def test_inspect_leaves_symbolic_dims_open_where_one_fails(tmp_path):
    # A text recognizer's width: bound to 1 it is narrower than the 2x2 pool, so inspect keeps
    # the dim open (and says so) instead of failing; with --shape it is bound.
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, "width"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    pool = helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    model = helper.make_model(helper.make_graph([pool], "recognizer", [x], [y]),
                              opset_imports=[helper.make_opsetid("", 13)])
    path = str(tmp_path / "width.onnx")
    onnx.save(model, path)
    text = edgec("inspect", path).stdout
    assert "symbolic dims left open: bound to 1 they fail" in text and "AveragePool" in text, text
    j = json.loads(edgec("inspect", path, "--json").stdout)
    assert "kernel 2" in j["symbolic_dims_open"], j
    bound = edgec("inspect", path, "--shape", "x=1x3x8x32").stdout
    assert "f32[1, 3, 4, 16]" in bound and "left open" not in bound, bound
