"""imend4: since irev69 a clause `==V` (and `!=V`) does not take V.postN, so a post release of V was unknown wherever
a rule or a per-release entry was written for V alone. Each such clause on an SGLang release with post releases on
PyPI (0.5.1.post1-3, 0.5.3.post1-3, 0.5.4.post1-3, 0.5.5.post1-3, 0.5.6.post1-2, 0.5.8.post1, 0.5.10.post1,
0.5.12.post1, 0.5.13.post1, 0.5.15.post1) was read against the post wheels (pip download --no-deps, 2026-12-06):
where the code the entry cites is the same, the range now ends at the last post release read; the clauses whose post
releases run other code stay `==V` (unknown there, never V's answer) and are listed here, so a new one is seen."""

from __future__ import annotations

import json
from typing import Any

import pytest
from gate_cli import ROOT, rule_status

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.facts.versions import version_in
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import predicate_holds

MANIFESTS = load_manifests([])
LAUNCH: dict[str, Any] = json.loads((ROOT / "manifests" / "launch.json").read_text())
#: SGLang releases with post releases on PyPI, 0.5.x (pip index versions sglang, 2026-12-06)
POSTS = {"0.5.1": 3, "0.5.3": 3, "0.5.4": 3, "0.5.5": 3, "0.5.6": 2, "0.5.8": 1, "0.5.10": 1, "0.5.12": 1, "0.5.13": 1,
         "0.5.15": 1}  # fmt: skip
#: (file, place, clause) whose post releases no entry takes: they run other code than V (the cited functions differ)
LEFT = {
    ("launch.json", "refusals/eagle-topk-page-size", "==0.5.5"),
    ("launch.json", "refusals/deterministic-attention-backend", "==0.5.4"),
    ("launch.json", "auto/attention_backend", "==0.5.4"),
}


def _uncovered(place: str, entries: list[Any]) -> set[tuple[str, str, str]]:
    """The `==V` / `!=V` clauses (V of POSTS) of a per-release list some post release of V is in no entry of."""
    out = set()
    for entry in entries:
        for clause in (c.strip() for c in str(entry.get("versions", "")).split(",")):
            release = clause[2:]
            if clause[:2] not in ("==", "!=") or release not in POSTS:
                continue
            posts = [f"{release}.post{n}" for n in range(1, POSTS[release] + 1)]
            versions = [str(e.get("versions", "")) for e in entries]
            if not all(any(version_in(post, spec) is True for spec in versions) for post in posts):
                out.add(("launch.json", place, clause))
    return out


def _sglang_equal_clauses() -> set[tuple[str, str, str]]:
    """Every `==V` / `!=V` clause on an SGLang release V of POSTS whose post releases are left out: launch.json's
    per-release lists (where no entry takes them) and features' / checks' sglang version predicates and path hops."""
    out: set[tuple[str, str, str]] = set()
    for rule in LAUNCH["refusals"]["rules"]:
        out |= _uncovered(f"refusals/{rule['id']}", rule.get("releases") or [])
    out |= _uncovered("own_flag_choices", LAUNCH["own_flag_choices"])
    out |= _uncovered("draft_attention_backend", LAUNCH["draft_attention_backend"]["factory"])

    def clauses(spec: str) -> list[str]:
        return [c.strip() for c in spec.split(",") if c.strip()[:2] in ("==", "!=") and c.strip()[2:] in POSTS]

    def walk(node: Any, where: str) -> None:
        if isinstance(node, dict):
            if node.get("fact") == "pkg.sglang.version" and node.get("op") == "version":
                out.update(("features/checks", where, c) for c in clauses(str(node.get("value", ""))))
            for value in node.values():
                walk(value, where)
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    for entry in LAUNCH["refusals"]["auto"]["attention_backend"]["defaults"]:  # (entries of several features)
        out |= {("launch.json", "auto/attention_backend", c) for c in clauses(str(entry.get("versions", "")))}
    for item in [*MANIFESTS.features, *MANIFESTS.checks]:
        record: dict[str, Any] = dict(item)
        walk(record.get("rules"), str(record["id"]))
        for hop in record.get("path") or []:
            if hop.get("package") == "sglang":
                out |= {("features/checks", f"{record['id']} path", c) for c in clauses(str(hop.get("versions", "")))}
    return out


def test_only_the_listed_clauses_leave_a_post_release_out() -> None:
    assert _sglang_equal_clauses() == LEFT


@pytest.mark.parametrize(
    ("rule", "release", "architecture", "flags", "expected"),
    [
        (
            "deterministic-attention-backend",
            "0.5.3.post1",
            "LlamaForCausalLM",
            ("--attention-backend", "fa4"),
            "blocked",
        ),
        (
            "deterministic-attention-backend",
            "0.5.3.post3",
            "LlamaForCausalLM",
            ("--attention-backend", "fa4"),
            "blocked",
        ),
        ("deterministic-attention-backend", "0.5.3.post2", "LlamaForCausalLM", ("--attention-backend", "fa3"), "ok"),
        (
            "deterministic-attention-backend",
            "0.5.12.post1",
            "LlamaForCausalLM",
            ("--attention-backend", "fa4"),
            "blocked",
        ),
        (
            "gpt-oss-attention-backend",
            "0.5.10.post1",
            "GptOssForCausalLM",
            ("--attention-backend", "flashinfer"),
            "blocked",
        ),
    ],
)
def test_a_post_release_is_judged_as_its_release(
    rule: str, release: str, architecture: str, flags: tuple[str, ...], expected: str
) -> None:
    extra = ("--enable-deterministic-inference",) if rule.startswith("deterministic") else ()
    assert rule_status(LAUNCH, rule, release, {9}, architecture, {}, *extra, *flags) == expected


def test_fa4_mla_decode_rule_takes_0_5_8_post1() -> None:
    feature = next(f for f in MANIFESTS.features if f["id"] == "attention-fa4")
    rule = next(r for r in feature["rules"] if r["id"] == "mla-decode-fa3-kernel")
    clause = rule["when"]["all"][0]
    ctx = Context(facts={"packages": {"sglang": {"installed": True, "version": "0.5.8.post1"}}}, manifests=MANIFESTS)
    assert predicate_holds(clause, ctx, None) is True


@pytest.mark.parametrize("release", ["0.5.1.post1", "0.5.1.post3"])
def test_trtllm_mla_prefill_hop_covers_0_5_1_posts(release: str) -> None:
    feature = next(f for f in MANIFESTS.features if f["id"] == "attention-trtllm-mla")
    hops = [
        h for h in feature["path"] if h.get("package") == "sglang" and "trtllm_mla_backend.py" in str(h.get("file"))
    ]
    assert any(version_in(release, str(h["versions"])) is True for h in hops)


@pytest.mark.parametrize("release", ["0.5.3.post1", "0.5.3.post3"])
def test_nsa_flag_choices_cover_0_5_3_posts(release: str) -> None:
    got = [e for e in LAUNCH["own_flag_choices"] if version_in(release, str(e["versions"])) is True]
    assert {e["flag"] for e in got} >= {"--nsa-prefill", "--nsa-decode"}


def test_draft_factory_covers_0_5_12_post1() -> None:
    got = [e for e in LAUNCH["draft_attention_backend"]["factory"] if version_in("0.5.12.post1", str(e["versions"]))]
    assert len(got) == 1 and "tokenspeed_mla" in got[0]["backends"] and "dsa" not in got[0]["backends"]


QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_attention_heads": 16,
              "num_key_value_heads": 2, "head_dim": 256, "hidden_size": 2048}  # fmt: skip


@pytest.mark.parametrize(
    ("release", "major", "backend", "expected"),
    [
        ("0.5.3.post1", 10, "trtllm_mha", "blocked"),  # 0.5.4's code: triton only on SM10x (0.5.3 took trtllm_mha)
        ("0.5.3.post3", 10, "triton", "ok"),
        ("0.5.4.post1", 12, "fa3", "ok"),  # is_blackwell() is major 10 alone up to 0.5.4.post1
        ("0.5.4.post2", 12, "fa3", "blocked"),  # 0.5.5's code: majors 10 and 12
        ("0.5.5.post1", 10, "trtllm_mha", "blocked"),
        ("0.5.5.post2", 10, "trtllm_mha", "ok"),  # 0.5.6's wrapper
        ("0.5.5.post3", 12, "fa3", "blocked"),
    ],
)
def test_hybrid_gdn_post_releases_are_judged_by_their_code(
    release: str, major: int, backend: str, expected: str
) -> None:
    from stackcheck.launch import gate
    from stackcheck.launch.refusals import refusal_problems

    d = gate.derive(
        ["python", "-m", "sglang.launch_server", "--model", "q", "--attention-backend", backend], LAUNCH, {}
    )
    models: dict[str, Any] = {"model": QWEN3_NEXT}
    got = [p for p in refusal_problems(d, LAUNCH, release, {major}, "Qwen3NextForCausalLM", models)
           if p.subject == "refusal hybrid-gdn-blackwell-backend"]  # fmt: skip
    assert (str(got[0].status) if got else "ok") == expected


@pytest.mark.parametrize(
    ("package", "version", "read"),
    [
        ("sgl-kernel", "0.3.7", True),
        ("sgl-kernel", "0.3.7.post1", False),
        ("sglang-kernel", "0.4.1", True),
        ("sglang-kernel", "0.4.1.post1", False),
        ("sglang-kernel", "0.4.2.post1", False),
        ("sglang-kernel", "0.4.2.post2", True),
    ],
)
def test_fp8_scaled_mm_post_releases_not_read_are_the_not_read_rules(package: str, version: str, read: bool) -> None:
    """fp8-block-gemm's online-fp8-scaled-mm rules list the kernel releases read; a post release not read is
    unknown by online-fp8-scaled-mm-not-read (its `when` holds), not by the engine's reading of `==V`."""
    feature = next(f for f in MANIFESTS.features if f["id"] == "fp8-block-gemm")
    rule = next(r for r in feature["rules"] if r["id"] == "online-fp8-scaled-mm-not-read")
    listed = rule["when"]["all"][4]["not"]
    ctx = Context(facts={"packages": {package: {"installed": True, "version": version}}}, manifests=MANIFESTS)
    assert predicate_holds(listed, ctx, None) is read
