"""Flag combinations SGLang refuses while it reads its own arguments (manifests/launch.json `refusals`). Pure.

SGLang checks some combinations of its settings before it loads a model (ServerArgs.__post_init__, and from 0.5.13
the hooks of arg_groups/): EAGLE tree drafting (top-k > 1) with pages larger than one token on a backend that
cannot page the tree, trtllm_mha with top-k > 1, STANDALONE or NGRAM with DP attention, Flex Attention with
speculative decoding. Such a launch never serves, so the gate refuses it.

Each rule is a list of conditions on the values SGLang holds when it checks, read from the command:
- a value the flags give (`--speculative-eagle-topk 4`, `--page-size 16`, `--attention-backend fa3`) is known;
- a value SGLang sets itself from a flag is derived here, from launch.json's data (`refusals.auto`): the page size
  an attention backend forces (trtllm_mla: 64), the top-k of STANDALONE (1), the default page size (1);
- a value SGLang chooses at start from what the gate does not see here (the top-k it picks from the model's
  architecture, the attention backend it picks for the GPU from 0.5.5) is unknown.
A rule whose conditions all hold is `blocked` (effect crash); one where none fails and some are unknown is
`unknown` (refused unless --allow-unknown); a release no range of the rule covers is not judged (the rule is
silent rather than guess: the flags themselves are judged by release_problems).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stackcheck.launch.gate import Derived, Problem

_UNKNOWN = object()  # a value SGLang chooses at start that the command does not give


class _AutoBackend:
    """The attention backend SGLang chooses at start: which values it can take on this box (launch.json
    refusals.auto.attention_backend), for the conditions that ask whether it is one backend."""

    def __init__(self, spec: Mapping[str, Any], majors: set[int] | None) -> None:
        self.never = {str(x) for x in spec.get("never_picks") or []}
        self.only_on = {str(k): {int(m) for m in v} for k, v in (spec.get("picks_only_on_majors") or {}).items()}
        self.majors = majors

    def can_be(self, backend: str) -> bool:
        if backend in self.never:
            return False
        on = self.only_on.get(backend)
        return on is None or self.majors is None or bool(on & self.majors)


# the flags whose values the rules read, by fact name
_FLAG_FACTS = {
    "speculative_algorithm": "--speculative-algorithm",
    "attention_backend": "--attention-backend",
    "decode_attention_backend": "--decode-attention-backend",
    "prefill_attention_backend": "--prefill-attention-backend",
}


def _version_in(version: str, spec: str) -> bool | None:
    from stackcheck.facts.versions import version_in

    return version_in(version, spec)


def _forced_page_size(options: Mapping[str, Any], page: Mapping[str, Any], version: str) -> int | None:
    """The page size an attention backend of the command sets before SGLang's checks run (None: none does)."""
    given = options.get("--page-size")
    forced: int | None = None
    for backend, spec in (page.get("forced_by") or {}).items():
        if not isinstance(spec, dict) or _version_in(version, str(spec.get("versions", ""))) is not True:
            continue
        if not any(options.get(str(flag)) == backend for flag in spec.get("flags") or []):
            continue
        keeps = [int(x) for x in spec.get("keeps") or []]
        value = given if isinstance(given, int) and given in keeps else int(spec["value"])
        forced = value if forced is None else forced  # the first backend that forces decides (all force > 1)
    return forced


def launch_values(
    d: Derived, mapping: Mapping[str, Any], version: str, entry: Mapping[str, Any], majors: set[int] | None = None
) -> dict[str, Any]:
    """The values SGLang's argument checks read, for the release range `entry`: known, derived or unknown (SGLang
    chooses it at start). `majors`: the GPU majors of the box (None: not known)."""
    auto = (mapping.get("refusals") or {}).get("auto") or {}
    opts = d.options
    values: dict[str, Any] = {fact: opts.get(flag) for fact, flag in _FLAG_FACTS.items()}
    values["dp_attention"] = bool(opts.get("--enable-dp-attention"))
    algorithm = values["speculative_algorithm"]
    # the attention backend when the check runs: given, or not yet chosen (0.5.2-0.5.4), or chosen at start
    if values["attention_backend"] is None:
        if entry.get("attention_backend_auto") == "unset":
            values["attention_backend"] = "unset"
        else:
            values["attention_backend"] = _AutoBackend(auto.get("attention_backend") or {}, majors)
    # top-k: given, or SGLang's own choice: known for STANDALONE, from the model's architecture otherwise
    topk = opts.get("--speculative-eagle-topk")
    if topk is None:
        spec = auto.get("speculative_topk") or {}
        by_algo = spec.get("by_algorithm") or {}
        first = str(spec.get("from") or "")
        if algorithm in by_algo and (not first or _version_in(version, f">={first}") is True):
            topk = int(by_algo[algorithm])
        else:
            topk = _UNKNOWN
    values["speculative_topk"] = topk
    # page size: forced by a backend, given, or the default (launch.json says why that default is taken)
    page = auto.get("page_size") or {}
    forced = _forced_page_size(opts, page, version)
    given = opts.get("--page-size")
    values["page_size"] = forced if forced is not None else given if isinstance(given, int) else page.get("default", 1)
    return values


def _holds(cond: Mapping[str, Any], values: Mapping[str, Any], entry: Mapping[str, Any]) -> bool | None:
    """One condition, three-valued: None when it reads a value SGLang chooses at start."""
    if "any" in cond:
        parts = [_holds(c, values, entry) for c in cond.get("any") or [] if isinstance(c, dict)]
        if any(p is True for p in parts):
            return True
        return None if any(p is None for p in parts) else False
    value = values.get(str(cond.get("fact")))
    if isinstance(value, _AutoBackend):
        if "in" in cond and not any(value.can_be(str(x)) for x in cond.get("in") or []):
            return False  # SGLang never picks any of them here by itself
        return None
    if value is _UNKNOWN:
        return None
    if "in" in cond:
        return value in (cond.get("in") or [])
    if "not_in" in cond:
        allowed = entry.get("allowed") if cond["not_in"] == "allowed" else cond["not_in"]
        return value is not None and value not in (allowed or [])
    if "op" in cond:
        rhs = cond.get("value")
        if not isinstance(value, int | float) or isinstance(value, bool) or not isinstance(rhs, int | float):
            return False
        return {
            "==": value == rhs,
            "!=": value != rhs,
            "<": value < rhs,
            "<=": value <= rhs,
            ">": value > rhs,
            ">=": value >= rhs,
        }.get(str(cond["op"]), False)
    return False


def _unknown(value: Any) -> bool:
    return value is _UNKNOWN or isinstance(value, _AutoBackend)


def _shown(value: Any) -> str:
    if _unknown(value):
        return "chosen by SGLang at start"
    if value == "unset":
        return "none given"
    return str(value)


def _observed(rule: Mapping[str, Any], values: Mapping[str, Any]) -> str:
    parts = []
    for fact in ("speculative_algorithm", "speculative_topk", "page_size", "attention_backend", "dp_attention"):
        if any(_mentions(c, fact) for c in rule.get("when") or []):
            parts.append(f"{fact.replace('speculative_', '')} {_shown(values.get(fact))}")
    return ", ".join(parts)


def _mentions(cond: Any, fact: str) -> bool:
    if not isinstance(cond, dict):
        return False
    if "any" in cond:
        return any(_mentions(c, fact) for c in cond.get("any") or [])
    return cond.get("fact") == fact


def _unknown_facts(rule: Mapping[str, Any], values: Mapping[str, Any]) -> list[str]:
    return [f for f, v in values.items() if _unknown(v) and any(_mentions(c, f) for c in rule.get("when") or [])]


_AUTO_WORDS = {
    "speculative_topk": "the top-k SGLang picks from the model's architecture (give --speculative-eagle-topk)",
    "attention_backend": "the attention backend SGLang picks for the GPU and the model (give --attention-backend)",
}


def gpu_majors(facts: Mapping[str, Any]) -> set[int] | None:
    """The GPU majors of the box from its facts (None when no GPU's compute capability is known)."""
    out: set[int] = set()
    for g in facts.get("gpus") or []:
        cc = g.get("compute_capability") if isinstance(g, dict) else None
        if isinstance(cc, str) and cc.split(".", 1)[0].isdigit():
            out.add(int(cc.split(".", 1)[0]))
    return out or None


def refusal_problems(
    d: Derived, mapping: Mapping[str, Any], sglang_version: str | None, majors: set[int] | None = None
) -> list[Problem]:
    """The launch's flag combinations that the installed SGLang refuses at argument parsing (blocked, effect
    crash), or may refuse depending on a value it chooses at start (unknown). Nothing without a release, for a
    command that is no SGLang launch, or for a release no range of a rule covers."""
    if sglang_version is None or d.entrypoint is None:
        return []
    table = mapping.get("refusals") or {}
    out: list[Problem] = []
    for rule in table.get("rules") or []:
        if not isinstance(rule, dict):
            continue
        entries: Sequence[Any] = rule.get("releases") or []
        entry = next(
            (
                e
                for e in entries
                if isinstance(e, dict) and _version_in(sglang_version, str(e.get("versions", ""))) is True
            ),
            None,
        )
        if entry is None or not entry.get("applies"):
            continue
        values = launch_values(d, mapping, sglang_version, entry, majors)
        results = [_holds(c, values, entry) for c in rule.get("when") or [] if isinstance(c, dict)]
        if not results or any(r is False for r in results):
            continue
        allowed = [str(a) for a in entry.get("allowed") or []]
        observed_fact = str(rule.get("observe") or "")
        observed = _shown(values.get(observed_fact)) if observed_fact else _observed(rule, values)
        required = ", ".join(allowed) if allowed else str(rule.get("required_value", "")) or None
        message = str(rule.get("message", "")).format(
            required=required or "", observed=observed, first=allowed[0] if allowed else ""
        )
        sources = [*(entry.get("source") or []), *(rule.get("issues") or [])]
        subject = f"refusal {rule.get('id')}"
        if all(r is True for r in results):
            out.append(Problem(subject, "blocked", "crash", message, sources, observed, required))
            continue
        missing = "; ".join(_AUTO_WORDS.get(f, f) for f in _unknown_facts(rule, values))
        out.append(
            Problem(
                subject,
                "unknown",
                None,
                f"SGLang {sglang_version} refuses this combination at argument parsing when {missing} makes it "
                f"hold: {message}",
                sources,
                observed,
                required,
            )
        )
    return out
