"""Implied facts (stackcheck/facts/implied.py): the versions a facts file lacks that a stated release pins exactly.

The safety rules are tested by generation: every facts file of the repository (the real-world corpus, the
cases, the examples), each with its versions removed one package at a time and all but one at a time, and a
matrix of SGLang releases on every GPU architecture with nothing else stated. For each one, and for every
feature and stack check, the verdict with implied facts is never ok unless the stated facts alone make it ok,
differs from the stated verdict only by being worse (blocked / failed / warning), and then names the implied
facts it rests on."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import pytest

from stackcheck.assembly.options import Options
from stackcheck.assembly.pipeline import build_report, load_manifests
from stackcheck.documents.types import Report
from stackcheck.facts.implied import BAD, apply, imply, marker_holds
from stackcheck.knowledge.loader import Manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_all

if TYPE_CHECKING:
    from stackcheck.facts.model import Facts

REPO = Path(__file__).resolve().parent.parent.parent
MANIFESTS = load_manifests([])


def _facts(packages: dict[str, Any], cc: str = "12.0", **system: str) -> Facts:
    gpus = [{"index": 0, "name": "GPU", "compute_capability": cc}]
    return cast("Facts", {"gpus": gpus, "packages": packages, "system": dict(system)})


def _implied(facts: Facts) -> dict[str, str]:
    return {i.package: i.version for i in imply(facts, MANIFESTS)[1]}


# ---- which facts are implied ---------------------------------------------------------------------------


def test_sglang_release_implies_its_exact_pins() -> None:
    got = _implied(_facts({"sglang": {"installed": True, "version": "0.5.9"}}))
    assert got == {"torch": "2.9.1", "sgl-kernel": "0.3.21", "flashinfer-python": "0.6.3", "flashinfer-cubin": "0.6.3"}


def test_stated_values_are_never_replaced_and_not_installed_stays_absent() -> None:
    facts = _facts(
        {
            "sglang": {"installed": True, "version": "0.5.9"},
            "torch": {"installed": True, "version": "2.8.0"},  # not what 0.5.9 pins: stated wins
            "flashinfer-python": {"installed": False},
            "sgl-kernel": {"installed": True},  # installed, version not given: implied
        }
    )
    filled, implied = imply(facts, MANIFESTS)
    assert {i.package for i in implied} == {"sgl-kernel", "flashinfer-cubin"}
    packages = filled["packages"]
    assert packages["torch"]["version"] == "2.8.0"
    assert packages["flashinfer-python"] == {"installed": False}
    assert packages["sgl-kernel"]["version"] == "0.3.21"
    assert facts["packages"]["sgl-kernel"] == {"installed": True}, "the stated facts are not modified"


def test_a_pin_under_an_extra_is_not_implied() -> None:
    # sglang 0.5.1 and 0.5.2 pin torch / sgl-kernel / flashinfer only under the 'srt' extra
    assert _implied(_facts({"sglang": {"installed": True, "version": "0.5.2"}})) == {}


def test_inferred_pins_are_not_used() -> None:
    # sgl-kernel's torch pairing is inferred (the wheel declares none): sglang#18203 ran sgl-kernel 0.3.21 with
    # torch >= 2.10 from the CUDA 13 index, where the inferred pairing would have said 2.9.1
    assert (
        _implied(_facts({"sgl-kernel": {"installed": True, "version": "0.3.21"}, "torch": {"installed": True}})) == {}
    )


@pytest.mark.parametrize(
    ("torch", "system", "triton"),
    [
        ("2.9.1+cu128", {"machine": "x86_64"}, "3.5.1"),  # PyPI build, x86_64: the marker holds
        ("2.9.1+cu128", {"machine": "aarch64"}, None),  # torch 2.9.1 pins Triton on x86_64 only
        ("2.9.1+cu128", {}, None),  # machine not known: the marker cannot be decided
        ("2.9.1+cu130", {"machine": "x86_64"}, None),  # not the build the pins were read from
        ("2.9.1+cpu", {"machine": "x86_64"}, None),  # a CPU build pins no Triton
        ("2.9.1", {"machine": "x86_64"}, None),  # build not stated
        ("2.11.0+cu130", {"machine": "aarch64"}, "3.6.0"),  # 2.11 pins Triton on every Linux
        ("2.4.0+cu121", {"machine": "x86_64", "python": "3.13"}, None),  # python_version < "3.13"
        ("2.4.0+cu121", {"machine": "x86_64", "python": "3.12"}, "3.0.0"),
        ("2.14.0+cu130", {"machine": "x86_64", "python": "3.12"}, None),  # ~=3.8.0 is not exact
    ],
)
def test_torch_implies_its_triton_only_where_the_pin_holds(
    torch: str, system: dict[str, str], triton: str | None
) -> None:
    got = _implied(_facts({"torch": {"installed": True, "version": torch}, "triton": {"installed": True}}, **system))
    assert got.get("triton") == triton


CU128 = {"installed": True, "version": "2.9.1+cu128", "cuda": "12.8"}
CUDNN = {"installed": True}  # named installed, version not given


def _cudnn_check(packages: dict[str, Any], **system: str) -> dict[str, Any]:
    """The cudnn-torch check as audit --facts judges it: on the stated facts, then with the implied ones."""
    facts = _facts({"sglang": {"installed": True, "version": "0.5.8"}, **packages}, **system)
    _stated, report = _judge(facts, MANIFESTS)
    return next(c for c in report["checks"] if c["id"] == "cudnn-torch")


def test_a_torch_build_implies_its_cudnn_pin_and_the_check_fails_with_it() -> None:
    # torch 2.9.1's PyPI (cu128) wheel pins nvidia-cudnn-cu12==9.10.2.21 on Linux x86_64 (read from its
    # METADATA): a facts file that names cuDNN installed without a version is judged with it, and says so
    check = _cudnn_check(
        {"torch": CU128, "nvidia-cudnn-cu12": CUDNN},
        machine="x86_64",
    )
    assert check["status"] == "failed"
    fail = next(r for r in check["reasons"] if r.get("result") == "fail")
    assert fail["rule"] == "torch291-cu12" and "9.10.2.21" in fail["message"]
    assert (
        "[implied: torch 2.9.1+cu128 pins nvidia-cudnn-cu12==9.10.2.21 (torch 2.9.1+cu128 wheel METADATA)"
        in (fail["message"])
    )
    # no cuDNN entry at all: pip installs the pinned wheel with torch, so it is implied installed too
    filled, implied = imply(
        _facts({"torch": {"installed": True, "version": "2.9.1+cu128"}}, machine="x86_64"), MANIFESTS
    )
    cudnn = next(i for i in implied if i.package == "nvidia-cudnn-cu12")
    assert cudnn.entry_missing and filled["packages"]["nvidia-cudnn-cu12"]["version"] == "9.10.2.21"


@pytest.mark.parametrize(
    ("packages", "system", "why"),
    [
        (
            {"torch": {"installed": True}, "nvidia-cudnn-cu12": CUDNN},
            {"machine": "x86_64"},
            "torch's version not known: no build, no pin",
        ),
        (
            {"torch": {**CU128, "version": "2.9.1"}, "nvidia-cudnn-cu12": CUDNN},
            {"machine": "x86_64"},
            "torch's build not stated",
        ),
        (
            {"torch": CU128, "nvidia-cudnn-cu12": CUDNN},
            {},
            "the machine not stated: the pin's x86_64 marker cannot be decided",
        ),
        (
            {"torch": CU128, "nvidia-cudnn-cu12": CUDNN},
            {"machine": "aarch64"},
            "torch pins no cuDNN wheel on ARM",
        ),
        (
            {"torch": {**CU128, "version": "2.9.1+cu130", "cuda": "13.0"}, "nvidia-cudnn-cu13": CUDNN},
            {"machine": "x86_64"},
            "the cu130 pin is recorded second-hand (its wheel's METADATA not read): never implied",
        ),
    ],
)
def test_the_cudnn_pin_does_not_decide_without_a_stated_build_it_was_read_from(
    packages: dict[str, Any], system: dict[str, str], why: str
) -> None:
    check = _cudnn_check(packages, **system)
    assert check["status"] == "unknown", why
    assert not check.get("implied") and not any(r.get("implied") for r in check["reasons"]), why


def test_a_stated_cudnn_version_is_never_replaced_by_the_pin() -> None:
    check = _cudnn_check(
        {
            "torch": CU128,
            "nvidia-cudnn-cu12": {"installed": True, "version": "9.16.0.29"},
        },
        machine="x86_64",
    )
    assert check["status"] == "ok" and not check.get("implied")


def test_chains_and_conflicts() -> None:
    # sglang 0.5.9 pins torch 2.9.1; sglang-kernel 0.4.7's (PyPI, cu130) wheel pins torch 2.13.0: two stated
    # releases disagree on torch, so torch is not implied at all
    got = _implied(
        _facts(
            {
                "sglang": {"installed": True, "version": "0.5.9"},
                "sglang-kernel": {"installed": True, "version": "0.4.7", "variant": "cu130"},
            },
            machine="x86_64",
        )
    )
    assert "torch" not in got and got["flashinfer-python"] == "0.6.3"
    # a chain: sglang 0.5.11 pins torch 2.11.0, whose build is not known, so no Triton follows from it; a
    # stated PyPI build does carry on (torch 2.11.0+cu130 pins triton 3.6.0 on Linux)
    chain = _implied(_facts({"sglang": {"installed": True, "version": "0.5.11"}}, machine="x86_64"))
    assert chain["torch"] == "2.11.0" and "triton" not in chain


def test_markers() -> None:
    facts = _facts({}, machine="x86_64", python="3.12")
    assert marker_holds('platform_system == "Linux" and platform_machine == "x86_64"', facts)
    assert not marker_holds('platform_machine == "aarch64"', facts)
    assert not marker_holds('extra == "srt"', facts)
    assert not marker_holds('implementation_name == "cpython"', facts)  # not stated
    assert not marker_holds("not a marker ==", facts)


def test_an_implied_version_says_nothing_of_its_build() -> None:
    # `sgl-kernel==0.3.21` is met by 0.3.21+cu130 too: the implied version is not taken as the PyPI (cu129) build
    facts, _ = imply(_facts({"sglang": {"installed": True, "version": "0.5.9"}}), MANIFESTS)
    ctx = Context(facts=facts, manifests=MANIFESTS)
    assert ctx.installed_version("sgl-kernel") == "0.3.21"
    assert ctx.package_variant("sgl-kernel") is None


# ---- the safety rules, generated ------------------------------------------------------------------------


def _repo_facts() -> list[tuple[str, Facts]]:
    out: list[tuple[str, Facts]] = []
    paths = [
        *sorted((REPO / "tests" / "realworld").glob("*/facts.json")),
        *sorted((REPO / "tests" / "cases").glob("*/facts.json")),
        *sorted((REPO / "examples").rglob("*.json")),
    ]
    for path in paths:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and isinstance(doc.get("facts"), dict):
            out.append((str(path.relative_to(REPO)), cast("Facts", doc["facts"])))
    return out


def _without_versions(name: str, facts: Facts) -> list[tuple[str, Facts]]:
    """The facts as stated, with each package's version removed, and with every version but one removed."""
    packages = facts.get("packages")
    out = [(name, facts)]
    if not isinstance(packages, dict):
        return out
    versioned = sorted(n for n, p in packages.items() if isinstance(p, dict) and isinstance(p.get("version"), str))
    for drop in versioned:
        out.append((f"{name} -{drop}", _drop(facts, [drop])))
    if len(versioned) > 1:
        for keep in versioned:
            out.append((f"{name} only {keep}", _drop(facts, [n for n in versioned if n != keep])))
    return out


def _drop(facts: Facts, names: list[str]) -> Facts:
    out: dict[str, Any] = copy.deepcopy(dict(facts))
    for n in names:
        out["packages"][n] = {"installed": True}
    return cast("Facts", out)


def _matrix() -> list[tuple[str, Facts]]:
    ccs = sorted({str(a["compute_capability"]) for a in MANIFESTS.architectures})
    releases = [str(r["version"]) for r in MANIFESTS.releases("sglang")]
    out = []
    for cc in ccs:
        for sglang in releases:
            packages = {"sglang": {"installed": True, "version": sglang}, "torch": {"installed": True}}
            out.append((f"sglang {sglang} on {cc}", _facts(packages, cc, machine="x86_64", python="3.12")))
    return out


INPUTS = [v for name, facts in _repo_facts() for v in _without_versions(name, facts)] + _matrix()


def _judge(facts: Facts, manifests: Manifests) -> tuple[dict[str, Any], dict[str, Any]]:
    ctx = Context(facts=facts, manifests=manifests)
    features, checks = evaluate_all(ctx)
    stated: dict[str, Any] = {"features": copy.deepcopy(features), "checks": copy.deepcopy(checks)}
    report: Report = {"schema_version": 1, "features": features, "checks": checks}
    apply(report, ctx)
    return stated, dict(report)


@functools.cache
def _judged() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [(name, *_judge(facts, MANIFESTS)) for name, facts in INPUTS]


def test_implied_facts_never_make_a_verdict_ok() -> None:
    implied_inputs = 0
    turned_bad = 0
    for name, stated, report in _judged():
        if report.get("implied"):
            implied_inputs += 1
        for kind in ("features", "checks"):
            before = {v["id"]: v for v in stated[kind]}
            assert [v["id"] for v in report[kind]] == [v["id"] for v in stated[kind]], name
            for v in report[kind]:
                a = before[v["id"]]
                if v["status"] == a["status"]:
                    continue
                where = f"{name}: {kind} {v['id']} {a['status']} -> {v['status']}"
                assert v["status"] in BAD and a["status"] not in BAD, where
                turned_bad += 1
                assert v.get("implied") and all(t.startswith("implied: ") for t in v["implied"]), where
                new_fails = [r for r in v["reasons"] if r.get("result") == "fail" and r.get("implied")]
                assert new_fails, f"{where}: no failing reason marked implied"
                assert all("[implied: " in r["message"] for r in new_fails), where
    # the generation exercises the feature: many inputs imply something, and some verdicts turn on it
    print(f"{len(INPUTS)} inputs, {implied_inputs} with implied facts, {turned_bad} verdicts turned bad by them")
    assert implied_inputs >= 50, implied_inputs
    assert turned_bad >= 20, turned_bad


def test_unknown_that_only_implied_facts_would_make_ok_says_so() -> None:
    found = 0
    for _name, stated, report in _judged():
        for kind in ("features", "checks"):
            for a, v in zip(stated[kind], report[kind], strict=True):
                extra = [r for r in v["reasons"] if r.get("rule") == "implied-facts"]
                if extra:
                    found += 1
                    assert a["status"] == v["status"] == "unknown"
                    assert "only implied facts" in extra[0]["message"] and extra[0]["result"] == "unknown"
    assert found > 0


def test_the_shortcuts_give_the_straightforward_merge(monkeypatch: pytest.MonkeyPatch) -> None:
    # apply(checks=False) (`stackcheck plan`'s text, which shows no check) merges the features as the full apply
    # does and leaves the checks as stated; the blame of a single implied fact, which judges nothing, names what
    # judging that fact alone names: on every generated input that implies something
    from stackcheck.facts import implied as module

    def judged_alone(self: Any, kind: str, item: str, key: tuple[str, str], implied: list[Any]) -> list[Any]:
        alone = [f for i, f in enumerate(implied) if key in self._failing_with(i, kind).get(item, set())]
        return alone or list(implied)

    compared = singles = 0
    for (name, facts), (_, stated, full) in zip(INPUTS, _judged(), strict=True):
        if not full.get("implied"):
            continue
        compared += 1
        singles += len(full["implied"]) == 1
        ctx = Context(facts=facts, manifests=MANIFESTS)
        features_only: Report = cast("Report", copy.deepcopy(stated))
        apply(features_only, ctx, checks=False)
        assert features_only["features"] == full["features"], name
        assert features_only["checks"] == stated["checks"], name
        assert features_only.get("implied") == full["implied"], name
        with monkeypatch.context() as m:
            m.setattr(module._Blame, "of", judged_alone)
            reference: Report = cast("Report", copy.deepcopy(stated))
            apply(reference, ctx)
        for part in ("features", "checks", "implied"):
            assert reference.get(part) == full[part], (name, part)
    assert compared >= 50 and singles > 0, (compared, singles)


# ---- the pipeline: --facts only, marked in the report and the text ---------------------------------------


def _write(tmp_path: Path, facts: Facts) -> str:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}), encoding="utf-8")
    return str(path)


PARTIAL = _facts(
    {"sglang": {"installed": True, "version": "0.5.9"}, "torch": {"installed": True, "variant": "cu130"}},
    "12.0",
    machine="x86_64",
    python="3.12",
)


def test_audit_facts_marks_implied_values_and_validates(tmp_path: Path) -> None:
    from jsonschema import Draft202012Validator

    from stackcheck.knowledge.sources import normalize
    from stackcheck.knowledge.validate import _registry

    report = normalize(
        build_report(Options(facts_file=_write(tmp_path, PARTIAL)), want_plan=False)[0], MANIFESTS.sources
    )
    registry, schemas = _registry()
    Draft202012Validator(schemas["report.schema.json"], registry=registry).validate(report)
    fi = next(i for i in report["implied"] if i["fact"] == "pkg.flashinfer-python.version")
    assert fi["value"] == "0.6.3" and fi["installed_implied"] is True and fi["from"]["package"] == "sglang"
    assert fi["text"].startswith("implied: sglang 0.5.9 pins flashinfer-python==0.6.3 (")
    assert report["facts"]["packages"].get("flashinfer-python") is None, "the facts are reported as stated"
    # SGLang 0.5.9 sends trtllm_mla prefill to FlashInfer's TllmGenFmhaRunner (SM100 only): blocked on the
    # RTX 5090 through the implied FlashInfer, and said so
    mla = next(f for f in report["features"] if f["id"] == "attention-trtllm-mla")
    assert mla["status"] == "blocked"
    assert any("[implied: sglang 0.5.9 pins flashinfer-python==0.6.3" in r["message"] for r in mla["reasons"])


def test_text_output_says_implied(tmp_path: Path) -> None:
    from stackcheck.render.text import render_plain

    report, _ = build_report(Options(facts_file=_write(tmp_path, PARTIAL)), want_plan=False)
    text = render_plain(report, 200)
    assert "implied, not stated" in text and "[implied: sglang 0.5.9 pins flashinfer-python==0.6.3" in text


def test_probed_facts_never_imply(tmp_path: Path) -> None:
    report, _ = build_report(Options(), want_plan=False, gathered=lambda: (PARTIAL, [], None))
    assert "implied" not in report
    assert not any(v.get("implied") for kind in ("features", "checks") for v in report[kind])


def test_simple_markers_agree_with_packaging() -> None:
    """implied.simple_marker decides the shipped wheels' markers without packaging; on every marker
    components.json records, and a few shapes it must leave to packaging, over Linux boxes of both
    machines and Python 3.8-3.15 (and none), it agrees with packaging.markers or declines (None)."""
    from packaging.markers import Marker

    from stackcheck.facts.implied import simple_marker

    docs = json.loads((REPO / "manifests" / "components.json").read_text())
    shipped: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "markers" and isinstance(value, dict):
                    shipped.update(str(v) for v in value.values())
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(docs)
    assert 'platform_system == "Linux" and platform_machine == "x86_64"' in shipped
    shapes = {
        'python_version >= "3.10"',
        'python_version == "3.12"',
        'platform_machine != "aarch64"',
        'platform_system == "Linux" or python_version < "3.9"',
        'python_version < "3.13.1"',
        'platform_release >= "5"',
    }
    decided = 0
    for marker in sorted(shipped | shapes):
        for machine in ("x86_64", "aarch64", None):
            for python in [f"3.{minor}" for minor in range(8, 16)] + [None]:
                env = {"platform_system": "Linux", "sys_platform": "linux", "os_name": "posix", "extra": ""}
                if machine:
                    env["platform_machine"] = machine
                if python:
                    env["python_version"] = python
                got = simple_marker(marker, env)
                if got is None:
                    continue
                decided += 1
                assert got == Marker(marker).evaluate(env), (marker, env)
    assert decided > 100
