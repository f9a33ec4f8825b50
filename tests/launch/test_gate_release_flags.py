"""stackcheck gate against every flag of the installed SGLang release (launch.json `release_flags`, written by
tools/sglang_flags.py from the release wheels): a flag the release neither declares nor abbreviates uniquely
ends the server at once, so the gate refuses it, as argparse would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import run_stackcheck
from packaging.version import Version
from registry_wheels import fetch_wheel

from stackcheck.derive.flags import scan_flags
from stackcheck.derive.tree import WheelTree
from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

ROOT = Path(__file__).resolve().parent.parent.parent
SM120 = ROOT / "tests" / "cases" / "writeup-after" / "facts.json"  # SGLang 0.5.9
SERVER = ["python", "-m", "sglang.launch_server", "--model-path", "m"]


@pytest.fixture(scope="module")
def shipped() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def _mapping(shipped: dict[str, Any]) -> dict[str, Any]:
    """The shipped entry points and options with a small flag table of two releases."""
    return {
        **shipped,
        "release_flags": {
            "releases": ["1.0", "1.1"],
            "builtin": ["--help"],
            "source": [{"title": "test table", "url": "https://example.invalid/"}],
            "flags": {
                "--model-path": ["1.0-1.1"],  # (every release declares it; a listed flag is checked too since ifc49)
                "--context-length": ["1.0-1.1"],
                "--served-model-name": ["1.0-1.1"],
                "--cuda-graph-max-bs": ["1.0"],
                "--cuda-graph-max-bs-decode": ["1.1"],
                "--cuda-graph-max-bs-prefill": ["1.1"],
                "--no-lora-strict": ["1.1"],
            },
        },
    }


def _judge(mapping: dict[str, Any], version: str | None, *args: str, cmd: list[str] | None = None) -> Any:
    d = gate.derive([*(cmd or SERVER), *args], mapping, {})
    problems, covered = gate.undeclared_problems(d, mapping, version)
    return {p.subject: p.message for p in problems}, covered


def test_a_flag_the_release_does_not_declare_is_refused_with_the_nearest_name(shipped: dict[str, Any]) -> None:
    m = _mapping(shipped)
    got, covered = _judge(m, "1.0", "--context-lenght", "4096", "--served", "x", "--cuda-graph-max-bs", "8")
    assert covered
    assert list(got) == ["--context-lenght"]  # --served is a unique prefix; the old flag exists in 1.0
    assert "declares no --context-lenght" in got["--context-lenght"]
    assert "unrecognized arguments" in got["--context-lenght"]
    assert "did you mean --context-length?" in got["--context-lenght"]


def test_a_flag_renamed_into_two_is_an_ambiguous_prefix(shipped: dict[str, Any]) -> None:
    got, _ = _judge(_mapping(shipped), "1.1", "--cuda-graph-max-bs=8", "--no-lora-strict")
    assert list(got) == ["--cuda-graph-max-bs"]
    assert "ambiguous option" in got["--cuda-graph-max-bs"]
    assert "--cuda-graph-max-bs-decode, --cuda-graph-max-bs-prefill" in got["--cuda-graph-max-bs"]


def test_from_a_release_that_loads_plugins_an_undeclared_flag_is_unknown(shipped: dict[str, Any]) -> None:
    """SGLang 0.5.11+ load plugins (entry points) before they parse the command line, and a plugin may add
    flags: an undeclared flag is then unknown (refused unless --allow-unknown), an ambiguous prefix still
    blocked; a release before that keeps the refusal."""
    m = _mapping(shipped)
    m["release_flags"] = {**m["release_flags"], "plugins": ["1.1"], "plugins_source": [{"title": "plugins"}]}
    d = gate.derive([*SERVER, "--from-a-plugin", "1", "--cuda-graph-max-bs", "8"], m, {})
    problems, _ = gate.undeclared_problems(d, m, "1.1")
    by = {p.subject: p for p in problems}
    assert by["--from-a-plugin"].status == "unknown" and "unless an installed SGLang plugin adds it" in (
        by["--from-a-plugin"].message
    )
    assert {"title": "plugins"} in by["--from-a-plugin"].source
    assert by["--cuda-graph-max-bs"].status == "blocked"
    d = gate.derive([*SERVER, "--from-a-plugin", "1"], m, {})
    (old,), _ = gate.undeclared_problems(d, m, "1.0")
    assert old.status == "blocked" and old.effect == "crash"
    # newer than the data: judged as the newest listed release (which loads plugins)
    (newer,), _ = gate.undeclared_problems(d, m, "9.9", {"declared": ["--model-path"], "files": []})
    assert newer.status == "unknown"


def test_the_shipped_table_says_which_releases_load_plugins(shipped: dict[str, Any]) -> None:
    table = shipped["release_flags"]
    assert table["plugins"] == ["0.5.11-0.5.23"]  # read from sglang/launch_server.py of each wheel


def test_what_is_not_judged(shipped: dict[str, Any]) -> None:
    m = _mapping(shipped)
    # a release between or beyond the listed ones is not covered: nothing is said, the note stays
    assert _judge(m, "1.0.post1", "--bogus") == ({}, False)
    assert _judge(m, None, "--bogus") == ({}, False)
    # `sglang serve` hands the flag to the same parser unless the model is a diffusion model (ireal1): unknown
    got, covered = _judge(m, "1.0", "--bogus", cmd=["sglang", "serve", "--model-path", "m"])
    assert covered and list(got) == ["--bogus"] and "diffusion" in got["--bogus"]
    # after `--`, values with a space, single-dash tokens and flags launch.json lists are left alone
    got, covered = _judge(m, "1.0", "--tp", "2", "-x", "--help", "--", "--bogus", cmd=[*SERVER, "--chat", "--a b"])
    assert covered and got == {"--chat": got["--chat"]}
    assert "declares no --chat" in got["--chat"]


def test_a_release_newer_than_the_data_is_judged_on_its_own_flags(shipped: dict[str, Any]) -> None:
    m = _mapping(shipped)
    d = gate.derive([*SERVER, "--context-length", "5", "--brand-new"], m, {})
    declared = {"declared": ["--model-path", "--context-length"], "files": ["sglang/srt/server_args.py"]}
    problems, covered = gate.undeclared_problems(d, m, "9.9", declared)
    assert covered and [p.subject for p in problems] == ["--brand-new"]
    assert "sglang 9.9 installed" in str(problems[0].source)


def _accepts(table: dict[str, Any], release: str, name: str) -> bool:
    names = gate._declared_in({"release_flags": table}, release) or set()
    return name in names or len([n for n in names if n.startswith(name)]) == 1


def test_the_table_agrees_with_the_hand_read_release_ranges(shipped: dict[str, Any]) -> None:
    """Two readings of the same wheels: launch.json's per-release presence of the flags it lists (read by hand)
    and the generated table must agree on every release the table covers, exact name or unique prefix."""
    from stackcheck.facts.versions import version_in

    table = shipped["release_flags"]
    disagree = []
    for o in shipped["options"]:
        for entry in o.get("releases") or []:
            for release in table["releases"]:
                if version_in(release, str(entry["versions"])) is not True:
                    continue
                for name in [o["flag"], *(o.get("aliases") or [])]:
                    if _accepts(table, release, name) is not bool(entry["present"]):
                        disagree.append(f"{name} in {release}: hand-read present={entry['present']}")
    assert not disagree


def test_the_table_covers_every_sglang_release_of_the_data(shipped: dict[str, Any]) -> None:
    components = load([], env={}).components
    known = [str(r["version"]) for r in components["packages"]["sglang"]["releases"]]
    assert shipped["release_flags"]["releases"] == sorted(known, key=Version)


def test_gate_refuses_an_unknown_flag_and_keeps_the_known_ones_quiet() -> None:
    base = ["gate", "--facts", str(SM120), "--dry-run", "--allow-unknown"]
    cmd = [*base, "--format", "json", "--", *SERVER, "--context-lenght", "4096", "--served-model-name", "x"]
    proc = run_stackcheck(*cmd, timeout=60)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1
    refused = {b["feature"]: b for b in doc["reasons"]}
    assert "did you mean --context-length?" in json.dumps(refused["--context-lenght"])
    assert "--served-model-name" not in refused
    (note,) = [w["reasons"][0]["message"] for w in doc["warnings"] if w["feature"] == "flags"]
    assert note == "declared by SGLang 0.5.9, not read for features: --served-model-name"


@pytest.mark.registry
@pytest.mark.parametrize("version", ["0.5.9", "0.5.20"])
def test_the_table_is_what_the_wheel_declares(shipped: dict[str, Any], version: str) -> None:
    """Regenerated from the real wheel, the release's flags are the table's (0.5.20 renamed --cuda-graph-max-bs
    into -decode/-prefill: the old spelling is an ambiguous prefix there)."""
    tree = WheelTree(fetch_wheel("sglang", version))
    try:
        scan = scan_flags(tree)
    finally:
        tree.close()
    assert not scan.problems
    names = {n for f in scan.flags.values() for n in [f.flag, *f.aliases]}
    table = shipped["release_flags"]
    assert (gate._declared_in({"release_flags": table}, version) or set()) - set(table["builtin"]) == names
    if version == "0.5.20":
        assert "--cuda-graph-max-bs" not in names and not _accepts(table, version, "--cuda-graph-max-bs")


@pytest.mark.parametrize(
    ("line", "signature"),
    [
        ("launch_server.py: error: unrecognized arguments: --context-lenght 4096", "argparse-unrecognized-arguments"),
        (
            "sglang serve: error: ambiguous option: --cuda-graph-max-bs could match --cuda-graph-max-bs-decode, "
            "--cuda-graph-max-bs-prefill",
            "argparse-ambiguous-option",
        ),
        (
            "launch_server.py: error: argument --attention-backend: invalid choice: 'x' (choose from 'a')",
            "argparse-invalid-choice",
        ),
        ("launch_server.py: error: the following arguments are required: --model-path", "argparse-bad-value"),
    ],
)
def test_triage_names_a_command_line_the_parser_rejected(tmp_path: Path, line: str, signature: str) -> None:
    """The server's only output is argparse's usage and one error line, with no Error or Traceback in it: the
    log is not 'without errors', its root cause is the rejected command line."""
    log = tmp_path / "server.log"
    log.write_text(
        "usage: launch_server.py [-h] --model-path MODEL_PATH [--tokenizer-path TOKENIZER_PATH]\n"
        "                        [--tp-size TP_SIZE] [--context-length CONTEXT_LENGTH]\n" + line + "\n"
    )
    proc = run_stackcheck("triage", str(log), "--format", "json", timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["root_cause"]["signature"]["id"] == signature


def test_a_usage_block_without_an_error_leaves_the_reader_as_it_was(tmp_path: Path) -> None:
    """`--help` output (usage, no error line) is not an error, and what follows it is read as usual."""
    from stackcheck.launch.triage import triage_file

    log = tmp_path / "server.log"
    log.write_text(
        "usage: launch_server.py [-h] --model-path MODEL_PATH\n"
        "                        [--tp-size TP_SIZE]\n"
        "\n"
        "options:\n"
        "  -h, --help            show this help message and exit\n"
        "[2026-01-01 10:00:00] server started\n"
        "Traceback (most recent call last):\n"
        '  File "/x/all_reduce_utils.py", line 10, in f\n'
        "KeyError: 12\n"
    )
    result = triage_file(log)
    assert result.root_cause is not None and result.root_cause.line == 7
