"""igap46 (issue 16): transformers' own huggingface-hub range (check sglang-start-imports, rules
transformers-huggingface-hub-range-*).

transformers checks huggingface-hub against its dependency table (the same range as its METADATA's Requires-Dist) as
it is imported (dependency_versions_check.py: require_version_core), so a hub below the floor (or above the ceiling)
stops `import transformers`, and with it every SGLang start. Nothing judged it: kernels-huggingface-hub-transformers4
read the 4.x ceiling only beside kernels. Measured in a venv with the real wheels: transformers 5.4.0 beside
huggingface-hub 1.4.1 and 4.57.1 beside 0.33.5 or 1.0.0 raise ImportError; 5.4.0 / 1.5.0 and 4.57.1 / 0.34.0 import."""

from __future__ import annotations

import copy
import re
import zipfile
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_check

MANIFESTS = load_manifests([])
CHECK = "sglang-start-imports"


def _results(transformers: str, hub: dict[str, Any] | None) -> dict[str, str]:
    packages: dict[str, Any] = {
        "sglang": {"installed": True, "version": "0.5.23"},
        "transformers": {"installed": True, "version": transformers},
        "kernels": {"installed": False},
    }
    if hub is not None:
        packages["huggingface-hub"] = hub
    facts: dict[str, Any] = {"packages": packages, "packages_complete": True}
    check = next(c for c in MANIFESTS.checks if c["id"] == CHECK)
    verdict: dict[str, Any] = dict(evaluate_check(check, Context(facts=copy.deepcopy(facts), manifests=MANIFESTS)))  # type: ignore[arg-type]
    return {
        str(r["rule"]): str(r["result"])
        for r in verdict["reasons"]
        if str(r.get("rule", "")).startswith("transformers-huggingface-hub-range")
    }


def _hub(version: str) -> dict[str, Any]:
    return {"installed": True, "version": version}


@pytest.mark.parametrize(
    ("transformers", "hub", "rule"),
    [
        ("5.4.0", "1.4.1", "transformers-huggingface-hub-range-5-4"),  # measured: ImportError
        ("4.57.1", "0.33.5", "transformers-huggingface-hub-range-4-54"),  # measured
        ("4.57.1", "1.0.0", "transformers-huggingface-hub-range-4-54"),  # measured: the ceiling
        ("5.0.0", "1.2.0", "transformers-huggingface-hub-range-5-0"),
        ("5.18.0", "1.30.0", "transformers-huggingface-hub-range-5-18"),  # measured: ImportError (httpx) first
        ("4.50.3", "0.25.2", "transformers-huggingface-hub-range-4-49"),
        ("4.48.3", "0.23.5", "transformers-huggingface-hub-range-4-48"),
    ],
)
def test_a_hub_outside_transformers_range_is_refused(transformers: str, hub: str, rule: str) -> None:
    # fails on the parent: no such rule, the check passed
    assert _results(transformers, _hub(hub)) == {rule: "fail"}


@pytest.mark.parametrize(
    ("transformers", "hub"),
    [("5.4.0", "1.5.0"), ("4.57.1", "0.34.0"), ("5.19.0", "2.1.0"), ("5.3.0", "1.3.0"), ("4.53.3", "0.30.0")],
)
def test_a_hub_in_range_passes(transformers: str, hub: str) -> None:
    assert set(_results(transformers, _hub(hub)).values()) == {"pass"}


def test_not_judged_where_not_read() -> None:
    assert _results("5.4.0", None) == {}  # a report that does not list huggingface-hub: the rule left out
    assert _results("5.20.0", _hub("1.0.0")) == {}  # a transformers release after those read
    assert _results("4.47.1", _hub("0.1.0")) == {}  # before them


BOUNDARIES = ("4.48.3", "4.49.0", "4.50.3", "4.51.0", "4.53.3", "4.54.0", "4.57.6", "5.0.0", "5.3.0", "5.4.0", "5.17.0",
              "5.18.0", "5.19.0")  # fmt: skip


@pytest.mark.registry
def test_the_real_wheels_ranges_are_the_rules() -> None:
    """Each cached transformers wheel's METADATA range for huggingface-hub equals its rule's, and the dependency check
    lists huggingface-hub."""
    from pathlib import Path

    from registry_wheels import CACHE, fetch_wheel

    # the first and last release of each rule's range (PyPI's transformers releases, pip index versions, 2026-12-06):
    # fetched here, so the test does not rest on the wheels other tests happened to cache (the hand-in CI of a fresh
    # machine's cache held 21 of the 60 it asked for); every other cached release in a range is read too
    for version in BOUNDARIES:
        fetch_wheel("transformers", version)

    rules = {
        str(r["id"]): r for c in MANIFESTS.checks if c["id"] == CHECK for r in c["rules"]
        if str(r["id"]).startswith("transformers-huggingface-hub-range")
    }  # fmt: skip
    from stackcheck.facts.versions import version_in

    wheels = sorted(Path(CACHE).glob("transformers-*-py3-none-any.whl"))
    if not wheels:
        pytest.skip("no transformers wheel cached")
    seen: set[str] = set()
    for wheel in wheels:
        version = wheel.name.split("-")[1]
        owners = [r for r in rules.values() if version_in(version, r["when"]["all"][0]["value"]) is True]
        if not owners:
            continue
        with zipfile.ZipFile(wheel) as z:
            meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
            line = next(x for x in z.read(meta).decode().splitlines() if x.startswith("Requires-Dist: huggingface-hub"))
            check = z.read("transformers/dependency_versions_check.py").decode()
        spec = sorted(s.strip() for s in re.sub(r"^Requires-Dist: huggingface-hub\s*", "", line).split(","))
        assert len(owners) == 1 and sorted(owners[0]["require"]["value"].split(",")) == spec, (version, line)
        assert '"huggingface-hub",' in check, version
        seen.add(version)
    assert set(BOUNDARIES) <= seen, sorted(set(BOUNDARIES) - seen)
