"""The gate's advice (`stackcheck recommend`'s notes under a gate decision) knows the model: it never suggests a
launch line the gate itself refuses for that model on that box, and where no line can be advised it says so.

Before, the advice changed `--attention-backend` to flashinfer on SM12x boxes for GPT-OSS and Olmo2 models, which
SGLang asserts against at argument parsing (launch.json refusals gpt-oss-attention-backend, olmo2-attention-backend)
and the gate refuses. The property: for every case folder box (tests/cases, tests/recommend) × every model config of
tests/gate_cli.py (and a model whose config.json is not read) × every SGLang release of the manifests, the line the
advice leads to has no refusal from the model's own assertions on its attention backend, or the advice says that no
attention backend can be advised for the model there. One box per stack (GPUs, flashinfer-python, sgl-kernel, torch):
the release is replaced by each release anyway."""

from __future__ import annotations

import contextlib
import copy
import io
import json
from pathlib import Path
from typing import Any

import pytest
from gate_cli import MODELS, model_dir

from stackcheck.cli import main
from stackcheck.knowledge.loader import Manifests, load
from stackcheck.launch import gate
from stackcheck.launch.preflight.model import attention_keys
from stackcheck.launch.recommend import gate_advice
from stackcheck.launch.refusals import gpu_majors, refusal_problems
from stackcheck.verdicts.context import Context

ROOT = Path(__file__).resolve().parent.parent.parent


def _stack_key(path: Path) -> tuple[Any, ...]:
    """What the advice reads of a box beyond the SGLang release (which the test replaces by each release): its GPUs'
    compute capabilities and the kernel stack under SGLang (flashinfer-python, sgl-kernel, torch)."""
    doc = json.loads(path.read_text())
    facts = doc.get("facts", doc)
    packages = facts.get("packages") or {}
    return (
        tuple(sorted({str(g.get("compute_capability")) for g in facts.get("gpus") or []})),
        *((packages.get(name) or {}).get("version") for name in ("flashinfer-python", "sgl-kernel", "torch")),
    )


def _one_box_per_stack(paths: list[Path]) -> list[Path]:
    """The first case folder box of each stack key: 17 of 43 boxes (the other 26 repeated a stack another box has,
    ~9 s each of the suite's CI time: stop 59's CI ran past its limit)."""
    seen: dict[tuple[Any, ...], Path] = {}
    for path in paths:
        seen.setdefault(_stack_key(path), path)
    return list(seen.values())


BOXES = _one_box_per_stack(sorted([*ROOT.glob("tests/cases/*/facts.json"), *ROOT.glob("tests/recommend/*/facts.json")]))
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "M"]
NO_LINE = "recommend [attention]: no attention backend can be advised for this model here"


def _model_rule(rule: dict[str, Any]) -> bool:
    """A refusal rule of launch.json that is a model's own assertion on its attention backend."""
    facts = {str(c.get("fact")) for c in rule.get("when") or []}
    return (
        bool(facts & {"model_backend_refused", "hybrid_gdn_backend_refused"})
        or {
            "model_architecture",
            "attention_backend",
        }
        <= facts
    )


@pytest.fixture(scope="module")
def manifests() -> Manifests:
    return load([], env={})


def advised(command: list[str], lines: list[str]) -> list[str]:
    """The launch with the advice's flag changes applied ('recommend: change --attention-backend A -> B', 'add
    --attention-backend B', 'drop --attention-backend A')."""
    out = list(command)
    for line in lines:
        words = line.removeprefix("recommend: ").split(" (", 1)[0].split()
        if len(words) < 2 or not words[1].startswith("--") or words[0] not in ("add", "change", "drop"):
            continue
        flag = words[1]
        if flag in out:
            at = out.index(flag)
            del out[at : at + 2]
        if words[0] == "add":
            out += [flag, words[2]]
        elif words[0] == "change":
            out += [flag, words[-1]]
    return out


def model_refusals(manifests: Manifests, ctx: Context, command: list[str], arch: str | None, config: Any) -> list[str]:
    """The refusals of the model's own assertions on its attention backend the gate gives this launch."""
    mapping = manifests.launch
    rules = {str(r["id"]) for r in mapping["refusals"]["rules"] if _model_rule(r)}
    d = gate.derive(command, mapping, {})
    got = refusal_problems(d, mapping, ctx.installed_version("sglang"), gpu_majors(ctx.facts), arch, {"model": config})
    return [f"{p.subject}: {p.status}" for p in got if p.subject.removeprefix("refusal ") in rules]


def with_release(facts: dict[str, Any], version: str) -> dict[str, Any]:
    out = copy.deepcopy(facts)
    out.setdefault("packages", {})["sglang"] = {"installed": True, "version": version, "dist_version": version}
    return out


@pytest.mark.parametrize("box", BOXES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}")
def test_the_advice_never_leads_to_a_line_the_gate_refuses_for_the_model(box: Path, manifests: Manifests) -> None:
    facts = json.loads(box.read_text())
    facts = facts.get("facts", facts)
    models: dict[str, tuple[str | None, Any]] = {
        name: (str(config["architectures"][0]), attention_keys(config)) for name, config in MODELS.items()
    }
    models["unread"] = (None, None)
    releases = [str(r.get("version")) for r in manifests.releases("sglang")]
    failures = []
    for version in releases:
        ctx = Context(facts=with_release(facts, version), manifests=manifests, launch={"tp": 1})  # type: ignore[arg-type]
        for name, (arch, config) in models.items():
            # the launch on flashinfer, which SGLang refuses for GPT-OSS, Olmo2 and Llama 4 (the advice's choice of
            # backend does not depend on the one given; with none given it is added instead of changed)
            command = [*LAUNCH, "--attention-backend", "flashinfer"]
            d = gate.derive(command, manifests.launch, {})
            lines = gate_advice(ctx, command, d.sglang_args, [], {}, False, arch, config)
            line = advised(command, lines)
            refused = model_refusals(manifests, ctx, line, arch, config)
            suggested = any(w.startswith("recommend: change --attention") for w in lines)
            if refused and (suggested or not any(w.startswith(NO_LINE) for w in lines)):
                failures.append((version, name, line[len(LAUNCH) :], refused, lines))
    assert not failures, failures[:3]


# ---- end to end: the advice of `stackcheck gate`, followed, through `stackcheck gate` again ----------------------

E2E = {  # a few boxes whose GPUs and releases differ: SM120 0.5.11, SM121 0.5.9, SM100 and SM90
    "rtxpro6000": ROOT / "tests" / "cases" / "rtxpro6000-pcie-iommu-translated" / "facts.json",
    "gb10": ROOT / "tests" / "cases" / "gb10-cu130-pypi-kernel" / "facts.json",
    "b200": ROOT / "tests" / "cases" / "b200" / "facts.json",
    "h200": ROOT / "tests" / "cases" / "h200-newest" / "facts.json",
}


def gate_doc(facts: Path, *args: str) -> dict[str, Any]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *LAUNCH[:3], *args])
    doc: dict[str, Any] = json.loads(out.getvalue())
    return doc


@pytest.mark.parametrize("box", sorted(E2E))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_the_gate_follows_its_own_advice(box: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "SGLANG_ENABLE_JIT_DEEPGEMM", "NCCL_P2P_DISABLE"):
        monkeypatch.delenv(var, raising=False)
    model = model_dir(tmp_path, name, MODELS[name])
    command = ["--model-path", str(model), "--attention-backend", "flashinfer"]
    doc = gate_doc(E2E[box], *command)
    line = advised(command, list(doc.get("advice") or []))
    again = gate_doc(E2E[box], *line)
    rules = {f"refusal {r['id']}" for r in load([], env={}).launch["refusals"]["rules"] if _model_rule(r)}
    refused = [r for r in again["reasons"] if r["feature"] in rules]
    if refused:  # no line avoids them here: the advice said so
        assert any(a.startswith(NO_LINE) for a in doc["advice"]), (doc["advice"], refused)
    # the attention feature the advice chose is not what refuses the followed line
    chosen = line[line.index("--attention-backend") + 1] if "--attention-backend" in line else None
    if chosen != "flashinfer" and chosen is not None:
        blocked = [r for r in again["reasons"] if r["feature"].startswith("attention-") and r["status"] == "blocked"]
        assert not [r for r in blocked if "--attention-backend" in json.dumps(r)], blocked


def test_the_advice_says_when_no_backend_holds_for_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Olmo2 on the GB10 case (SGLang 0.5.9) with no attention flag: its override picks fa3, which SM121 lacks;
    flashinfer is refused for Olmo2, triton cannot assemble for sm_121a: no line passes, and the advice says so."""
    for var in ("SGLANG_ENABLE_PCIE_IPC_ALLREDUCE", "SGLANG_ENABLE_JIT_DEEPGEMM", "NCCL_P2P_DISABLE"):
        monkeypatch.delenv(var, raising=False)
    model = model_dir(tmp_path, "olmo2", MODELS["olmo2"])
    doc = gate_doc(E2E["gb10"], "--model-path", str(model))
    assert doc["decision"] == "refuse"
    assert any(a.startswith(NO_LINE) for a in doc["advice"]), doc["advice"]
    assert not any("--attention-backend" in a for a in doc["advice"] if a.startswith("recommend: "))
