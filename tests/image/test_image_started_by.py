"""How the container is started (facts.image.started_by) decides what checks NVIDIA_REQUIRE_*
(stackcheck/image/require.py STARTED_BY): Docker's device request runs nvidia-container-runtime-hook, which checks in
legacy mode and refuses to run in any other, so an unmet requirement never starts the container;
nvidia-container-runtime uses its mode; CDI devices the engine injects are checked by nothing. Each invocation x
toolkit state x requirement met / unmet."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.image.require import STARTED_BY, judge_facts, parse_nvidia_require, select_checkers, shipped_brand_table

R535 = {"version": "535.247.01", "cuda": "12.2"}
UNMET = "cuda>=12.8 brand=tesla,driver>=535,driver<536"  # a GeForce GPU on R535: refused where checked
MET = "cuda>=12.0"
GEFORCE = [{"index": 0, "compute_capability": "8.9", "brand": "GEFORCE"}]


def image(text: str, started_by: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"nvidia_require": parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": text}).to_facts()}
    if started_by is not None:
        out["started_by"] = started_by
    return out


def toolkit(mode: str | None, lib: str | None = "1.17.8", **more: Any) -> dict[str, Any]:
    return {"mode": mode, "mode_source": "config", "libnvidia_container": lib, "disable_require": False, **more}


def no_disable_key(mode: str) -> dict[str, Any]:
    tk = toolkit(mode)
    del tk["disable_require"]  # facts of an older probe: disable-require not read
    return tk


# (toolkit facts, outcome unmet, outcome met) per invocation; True ok, False refused, None unknown
TOOLKITS: dict[str, Any] = {
    "none": None,
    "legacy": toolkit("legacy"),
    "auto-1.17": toolkit("auto", "1.17.8"),
    "auto-1.18": toolkit("auto", "1.18.0"),
    "auto-tegra": toolkit("auto", "1.17.8", tegra=True),
    "cdi": toolkit("cdi"),
    "jit-cdi": toolkit("jit-cdi", "1.18.0"),
    "legacy-disable-require": toolkit("legacy", disable_require=True),
    "cdi-disable-require": toolkit("cdi", disable_require=True),
    "legacy-disable-not-read": no_disable_key("legacy"),
    "mode-not-read": {"mode": None, "mode_error": "config.toml: not UTF-8"},
}
EXPECTED: dict[str, dict[str, tuple[bool | None, bool | None]]] = {
    "docker-gpus": {
        "none": (False, True),  # the hook checks in legacy mode, refuses in any other: never started
        "legacy": (False, True),
        "auto-1.17": (False, True),
        "auto-1.18": (False, True),  # the hook resolves auto to legacy (the runtime's jit-cdi does not apply)
        "auto-tegra": (False, None),  # the hook resolves csv: it refuses (skip-mode-detection not read)
        "cdi": (False, None),  # refused either way; met: the hook refuses the device request
        "jit-cdi": (False, None),
        "legacy-disable-require": (True, True),  # the hook checks nothing
        "cdi-disable-require": (None, None),  # the hook refuses, or (skip-mode-detection) checks nothing
        "legacy-disable-not-read": (None, True),
        "mode-not-read": (None, True),  # disable-require unreadable with the file
    },
    "nvidia-runtime": {
        "none": (None, True),  # the runtime's mode decides: not read
        "legacy": (False, True),
        "auto-1.17": (False, True),
        "auto-1.18": (None, True),  # a toolkit before 1.18.0 (legacy) may sit beside libnvidia-container 1.18.0
        "auto-tegra": (None, None),  # csv: not modelled
        "cdi": (True, True),
        "jit-cdi": (True, True),
        "legacy-disable-require": (True, True),
        "cdi-disable-require": (True, True),
        "legacy-disable-not-read": (None, True),
        "mode-not-read": (None, True),
    },
    "cdi-device": {name: (True, True) for name in TOOLKITS},  # nothing evaluates NVIDIA_REQUIRE_*
}
CASES = [(how, name, met) for how, table in EXPECTED.items() for name in table for met in (False, True)]


@pytest.mark.parametrize(("how", "name", "met"), CASES)
def test_invocation_toolkit_and_requirement(how: str, name: str, met: bool) -> None:
    expected = EXPECTED[how][name][1 if met else 0]
    j = judge_facts(image(MET if met else UNMET, how), R535, GEFORCE, toolkit=TOOLKITS[name])
    assert j.satisfied is expected, j.reason
    if j.satisfied is False:
        assert j.failed == UNMET
    if how == "docker-gpus" and j.satisfied is not True:
        assert "docker-gpus" in j.reason


def test_docker_gpus_without_toolkit_facts_says_what_it_assumed() -> None:
    j = judge_facts(image(UNMET, "docker-gpus"), R535, GEFORCE)
    assert j.satisfied is False and "whatever the mode" in j.reason
    assert "disable-require not read, taken at its default" in j.reason and "--host-facts" in j.reason
    # read: nothing assumed
    read = judge_facts(image(UNMET, "docker-gpus"), R535, GEFORCE, toolkit=toolkit("cdi"))
    assert read.satisfied is False and "taken at its default" not in read.reason and "refuses to run" in read.reason


def test_not_stated_is_unchanged() -> None:
    # without started_by an unmet requirement and no toolkit facts stays unknown (a cdi host starts it unchecked)
    assert judge_facts(image(UNMET, None), R535, GEFORCE).satisfied is None


def test_disable_require_in_the_image_holds_for_every_invocation() -> None:
    off = {
        "nvidia_require": parse_nvidia_require({"NVIDIA_REQUIRE_CUDA": UNMET, "NVIDIA_DISABLE_REQUIRE": "1"}).to_facts()
    }
    for how in STARTED_BY:
        assert judge_facts({**off, "started_by": how}, R535, GEFORCE).satisfied is True


def test_an_invalid_expression_is_refused_by_the_hook_not_by_cdi() -> None:
    bad = "cuda>=12.8 colour=blue"
    assert judge_facts(image(bad, "docker-gpus"), R535, GEFORCE).satisfied is False
    assert judge_facts(image(bad, "cdi-device"), R535, GEFORCE).satisfied is True


def test_the_runtime_resolves_auto_to_jit_cdi_from_1_18() -> None:
    # the manifest's rule from 1.18.0 holds the runtime's jit-cdi and the hook's legacy; the runtime alone: jit-cdi
    table = dict(shipped_brand_table())
    modes = dict(table["runtime_modes"])
    modes["auto"] = [r for r in modes["auto"] if r.get("toolkit") == ">=1.18.0"]
    table["runtime_modes"] = modes
    tk = toolkit("auto", "1.18.0")
    assert "legacy" in select_checkers(table, tk).read
    runtime = select_checkers(table, tk, runtime=True)
    assert "jit-cdi" in runtime.read and "legacy" not in runtime.read and not runtime.entries
    assert "csv" in select_checkers(table, {**tk, "tegra": True}, runtime=True).read


def audit(tmp_path: Path, started_by: Any) -> tuple[int, str, str]:
    doc = {
        "schema_version": 1,
        "facts": {
            "gpus": GEFORCE,
            "driver": {"version": "535.247.01"},
            "image": {
                "reference": "example/serve:cuda12.8",
                "env": {"NVIDIA_REQUIRE_CUDA": UNMET},
                "started_by": started_by,
            },
        },
    }
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", "--facts", str(path), "--format", "json"])
    return code, out.getvalue(), err.getvalue()


def test_a_facts_document_states_it(tmp_path: Path) -> None:
    code, out, _ = audit(tmp_path, "docker-gpus")
    check = next(c for c in json.loads(out)["checks"] if c["id"] == "image-nvidia-require")
    assert check["status"] == "failed" and code == 1
    assert json.loads(out)["facts"]["image"]["started_by"] == "docker-gpus"


@pytest.mark.parametrize("bad", ["docker-gpu", "--gpus", 1, None, "Docker-GPUs"])
def test_a_bad_value_is_a_one_line_error(tmp_path: Path, bad: Any) -> None:
    code, out, err = audit(tmp_path, bad)
    assert code == 2 and out == ""
    line = err.strip()
    assert "\n" not in line and "facts.json" in line and "$.facts.image.started_by" in line
