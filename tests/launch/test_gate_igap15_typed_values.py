"""igap15: a value that SGLang's parser converts with argparse type=int or type=float and that int() or float()
rejects (`--ep-size abc`, `--ep 2.5`, `--watchdog-timeout soon`, a word among `--cuda-graph-bs` batch sizes) ends
the launch with 'invalid int value' / 'invalid float value' (exit status 2); the gate allowed every flag launch.json
does not list as an option with value int or float. launch.json release_types (tools/sglang_types.py, read from the
wheels 0.5.1-0.5.23) names each typed flag per run of releases; the registry test reads it again.

On the parent (5e61616) 19 of these 28 fail: the nine blocked values, the refusal, the gate, the long values and
the seven registry readings (no typed-value check, no release_types). The options launch.json lists with value int or
float (--tp, --port, --mem-fraction-static, ...) were already refused by derive (a usage error) and are not read
here."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from gate_cli import ROOT, choice_problems
from packaging.version import Version
from registry_wheels import fetch_wheel, run_all


def _mapping() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ROOT / "manifests" / "launch.json").read_text())
    return data


@pytest.mark.parametrize(
    ("version", "flags", "subject", "value"),
    [
        ("0.5.23", ("--ep-size", "abc"), "--ep-size", "abc"),
        ("0.5.23", ("--ep", "2.5"), "--ep-size", "2.5"),  # int() reads no fraction
        ("0.5.9", ("--ep=1e3",), "--expert-parallel-size", "1e3"),  # nor an exponent
        ("0.5.9+cu128", ("--expert-parallel", "4."), "--expert-parallel-size", "4."),  # abbreviated; a local build
        ("0.5.23", ("--watchdog-timeout", "soon"), "--watchdog-timeout", "soon"),
        ("0.5.9", ("--cuda-graph-bs", "1", "2", "x"), "--cuda-graph-bs", "x"),  # nargs='+': each value
        ("0.5.23", ("--cuda-graph-bs-decode", "8", "y"), "--cuda-graph-bs-decode", "y"),  # list[int] field
        ("0.5.23", ("--ep", "2", "--ep", "two"), "--ep-size", "two"),  # every occurrence is converted
        ("0.5.23", ("--ep=",), "--ep-size", ""),
    ],
)
def test_a_value_the_type_rejects_is_blocked(version: str, flags: tuple[str, ...], subject: str, value: str) -> None:
    assert choice_problems(_mapping(), version, *flags) == [(subject, "blocked", value)]


@pytest.mark.parametrize(
    ("version", "flags"),
    [
        ("0.5.23", ("--ep", "+2")),  # int() takes a sign,
        ("0.5.23", ("--ep", " 2 ")),  # surrounding whitespace,
        ("0.5.23", ("--ep", "1_6")),  # underscores between digits,
        ("0.5.23", ("--ep", "\u0664")),  # and any script's decimal digits (ARABIC-INDIC FOUR)
        ("0.5.23", ("--watchdog-timeout", "inf")),  # float() takes inf, nan and exponents
        ("0.5.23", ("--watchdog-timeout", "1e3")),
        ("0.5.23", ("--cuda-graph-bs-decode", "1", "2", "--ep", "3")),  # the list ends at the next option
        ("0.5.24", ("--ep", "x")),  # a release release_types does not list is not judged here
        ("0.5.23", ("--served-model-name", "x")),  # a str flag
    ],
)
def test_a_value_the_type_takes_passes(version: str, flags: tuple[str, ...]) -> None:
    assert choice_problems(_mapping(), version, *flags) == []


def test_the_refusal_names_flag_value_and_declaration() -> None:
    from stackcheck.launch import gate

    mapping = _mapping()
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", "--ep-size", "abc"], mapping, {})
    (problem,) = gate.release_choice_problems(d, mapping, "0.5.23")
    assert "--ep-size" in problem.message and "'abc'" in problem.message and "invalid int value" in problem.message
    assert problem.required == "type=int" and problem.effect == "crash"
    assert "sglang/srt/arg_groups/fields/parallel.py" in problem.source[0]["title"]


def test_the_gate_refuses_it(tmp_path: Path) -> None:
    from gate_cli import LLAMA3, gate_tp8, model_dir, reason_status, release_box

    llama = model_dir(tmp_path, "llama3", LLAMA3)
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = gate_tp8(box, llama, "--ep-size", "abc")
    assert doc["decision"] == "refuse" and reason_status(doc)["--ep-size"] == ("blocked", "crash"), doc["reasons"]
    assert gate_tp8(box, llama, "--ep-size", "8")["decision"] == "allow"


# ---- the table against the wheels -------------------------------------------------------------------------------


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sglang_types", ROOT / "tools" / "sglang_types.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("sglang_types", module)
    spec.loader.exec_module(module)
    return module


#: a few releases, each side of the changes (0.5.14's annotated fields, 0.5.20's arg_groups/fields); every
#: release of the table with STACKCHECK_REGISTRY_ALL=1
FEW = ["0.5.1", "0.5.9", "0.5.13", "0.5.14", "0.5.19", "0.5.20", "0.5.23"]
READ = [
    str(r)
    for r in json.loads((ROOT / "manifests" / "launch.json").read_text()).get("release_types", {}).get("releases", FEW)
]


@pytest.mark.registry
@pytest.mark.parametrize("release", READ if run_all() else FEW)
def test_release_types_is_what_the_wheel_declares(release: str) -> None:
    table = _mapping()["release_types"]
    releases = table["releases"]
    read = _tool().typed(fetch_wheel("sglang", release))
    at = releases.index(release)

    def holds(spans: list[str]) -> bool:
        for span in spans:
            first, _, last = span.partition("-")
            if releases.index(first) <= at <= releases.index(last or first):
                return True
        return False

    stored = {
        flag: (e["type"], e.get("nargs"), sorted(e.get("names") or [flag]), e["file"])
        for flag, entries in table["flags"].items()
        for e in entries
        if holds(e["releases"])
    }
    assert stored == {f: (v["type"], v["nargs"], v["names"], v["file"]) for f, v in read.items()}
    assert read["--ep-size" if Version(release) >= Version("0.5.14") else "--expert-parallel-size"]["type"] == "int"


def test_a_long_value_is_cut_in_the_message_and_an_int_over_the_digit_limit_is_unknown() -> None:
    from stackcheck.launch import gate

    mapping = _mapping()
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", "--ep-size", "x" * 5000], mapping, {})
    (problem,) = gate.release_choice_problems(d, mapping, "0.5.23")
    assert problem.status == "blocked" and len(problem.message) < 400
    if not hasattr(sys, "get_int_max_str_digits"):
        pytest.skip("this Python's int() has no digit limit")
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", "--ep-size", "1" * 5000], mapping, {})
    (problem,) = gate.release_choice_problems(d, mapping, "0.5.23")
    assert problem.status == "unknown" and len(problem.message) < 400
