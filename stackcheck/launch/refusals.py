"""Flag combinations SGLang refuses while it reads its own arguments (manifests/launch.json `refusals`). Pure.

SGLang checks some combinations of its settings before it loads a model (ServerArgs.__post_init__, and from 0.5.13
the hooks of arg_groups/): EAGLE tree drafting (top-k > 1) with pages larger than one token on a backend that
cannot page the tree, trtllm_mha with top-k > 1, STANDALONE or NGRAM with DP attention, Flex Attention with
speculative decoding, --speculative-eagle-topk without --speculative-num-steps (an assert) and the reverse (the
unset top-k compared with 1). Such a launch never serves, so the gate refuses it.

Each rule is a list of conditions on the values SGLang holds when it checks, read from the command:
- a value the flags give (`--speculative-eagle-topk 4`, `--page-size 16`, `--attention-backend fa3`) is known;
- a value SGLang sets itself from a flag is derived here, from launch.json's data (`refusals.auto`): the page size
  an attention backend forces (trtllm_mla: 64), the top-k of STANDALONE (1), the default page size (1);
- SGLang's own top-k follows the model's first architecture (config.json), which the gate's preflight reads when
  it finds the model; the attention backend SGLang picks for the GPU and the model (from 0.5.5) is unknown, except
  that it never is a backend it picks only on other GPUs (trtllm_mha off SM100-SM120) or never picks at all;
- a value SGLang chooses from what the gate does not see is unknown.
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


def _for_release(entries: Any, version: str) -> Mapping[str, Any] | None:
    """The first entry of a per-release list whose `versions` take `version` (None: no entry covers it)."""
    return next(
        (e for e in entries or [] if isinstance(e, dict) and _version_in(version, str(e.get("versions", ""))) is True),
        None,
    )


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


def _auto_topk(spec: Mapping[str, Any], version: str, algorithm: Any, architecture: str | None) -> Any:
    """The top-k SGLang picks when the command gives none (launch.json refusals.auto.speculative_topk)."""
    entry = _for_release(spec.get("by_release"), version)
    if entry is None:
        return _UNKNOWN
    if algorithm == "STANDALONE" and isinstance(entry.get("standalone"), int):
        return int(entry["standalone"])
    if architecture is None:
        return _UNKNOWN
    picked = (entry.get("architectures") or {}).get(architecture, entry.get("otherwise"))
    return int(picked) if isinstance(picked, int) else _UNKNOWN


def launch_values(
    d: Derived,
    mapping: Mapping[str, Any],
    version: str,
    entry: Mapping[str, Any],
    majors: set[int] | None = None,
    architecture: str | None = None,
) -> dict[str, Any]:
    """The values SGLang's argument checks read, for the release range `entry`: known, derived or unknown (SGLang
    chooses it at start). `majors`: the GPU majors of the box (None: not known); `architecture`: the model's first
    architecture (config.json), when the gate could read it."""
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
    # top-k: given, or SGLang's own choice (STANDALONE's, or the one for the model's architecture)
    topk = opts.get("--speculative-eagle-topk")
    if topk is None and "--speculative-num-steps" not in opts:  # SGLang picks all three only when no steps given
        topk = _auto_topk(auto.get("speculative_topk") or {}, version, algorithm, architecture)
    values["speculative_topk"] = topk
    # page size: forced by a backend, given, or the default (launch.json says why that default is taken)
    page = auto.get("page_size") or {}
    forced = _forced_page_size(opts, page, version)
    given = opts.get("--page-size")
    values["page_size"] = forced if forced is not None else given if isinstance(given, int) else page.get("default", 1)
    # which of the three speculative settings the command gives (SGLang picks them together only when none is)
    for flag in ("--speculative-num-steps", "--speculative-eagle-topk", "--speculative-num-draft-tokens"):
        values[flag.removeprefix("--").replace("-", "_") + "_given"] = flag in opts
    values["speculative_adaptive"] = bool(opts.get("--speculative-adaptive"))
    values["model_architecture"] = architecture if architecture is not None else _UNKNOWN
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


def _shown(value: Any, fact: str = "") -> str:
    if _unknown(value):
        return "not read (the model was not found)" if fact == "model_architecture" else "chosen by SGLang at start"
    if value == "unset":
        return "none given"
    return str(value)


def _observed(conds: Sequence[Any], values: Mapping[str, Any]) -> str:
    """The values the conditions read, in the order of launch.json's facts."""
    parts = []
    for fact, value in values.items():
        if not any(_mentions(c, fact) for c in conds):
            continue
        if fact.endswith("_given"):  # --speculative-num-steps given / not given
            flag = "--" + fact.removesuffix("_given").replace("_", "-")
            parts.append(f"{flag} {'given' if value else 'not given'}")
        else:
            parts.append(f"{fact.replace('speculative_', '')} {_shown(value, fact)}")
    return ", ".join(parts)


def _mentions(cond: Any, fact: str) -> bool:
    if not isinstance(cond, dict):
        return False
    if "any" in cond:
        return any(_mentions(c, fact) for c in cond.get("any") or [])
    return cond.get("fact") == fact


def _unknown_facts(conds: Sequence[Any], values: Mapping[str, Any]) -> list[str]:
    return [f for f, v in values.items() if _unknown(v) and any(_mentions(c, f) for c in conds)]


_AUTO_WORDS = {
    "speculative_topk": "the top-k SGLang picks from the model's architecture, which the gate could not read (give "
    "--speculative-eagle-topk, or make the model's config.json readable)",
    "attention_backend": "the attention backend SGLang picks for the GPU and the model (give --attention-backend)",
    "model_architecture": "the model's architecture, which the gate could not read (make its config.json readable)",
}


def gpu_majors(facts: Mapping[str, Any]) -> set[int] | None:
    """The GPU majors of the box from its facts (None when no GPU's compute capability is known)."""
    from stackcheck.facts.model import cc_tuple

    ccs = [cc_tuple(g.get("compute_capability")) for g in facts.get("gpus") or [] if isinstance(g, dict)]
    return {t[0] for t in ccs if t is not None} or None


def model_architecture(pre: Any) -> str | None:
    """The target model's first architecture (config.json `architectures[0]`, what SGLang's auto choices read), from
    the gate's preflight; None when it did not read the model."""
    for info in getattr(pre, "models", None) or []:
        if getattr(info, "role", None) == "model" and getattr(info, "architectures", None):
            return str(info.architectures[0])
    return None


def refusal_problems(
    d: Derived,
    mapping: Mapping[str, Any],
    sglang_version: str | None,
    majors: set[int] | None = None,
    architecture: str | None = None,
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
        entry = _for_release(rule.get("releases"), sglang_version)
        if entry is None or not entry.get("applies"):
            continue
        values = launch_values(d, mapping, sglang_version, entry, majors, architecture)
        conds = [c for c in [*(rule.get("when") or []), *(entry.get("also") or [])] if isinstance(c, dict)]
        results = [_holds(c, values, entry) for c in conds]
        if not results or any(r is False for r in results):
            continue
        allowed = [str(a) for a in entry.get("allowed") or []]
        observed_fact = str(rule.get("observe") or "")
        observed = _shown(values.get(observed_fact), observed_fact) if observed_fact else _observed(conds, values)
        required = ", ".join(allowed) if allowed else str(rule.get("required_value", "")) or None
        message = str(rule.get("message", "")).format(
            required=required or "", observed=observed, first=allowed[0] if allowed else ""
        )
        sources = [*(entry.get("source") or []), *(rule.get("issues") or [])]
        subject = f"refusal {rule.get('id')}"
        if all(r is True for r in results):
            out.append(Problem(subject, "blocked", "crash", message, sources, observed, required))
            continue
        missing = "; ".join(_AUTO_WORDS.get(f, f) for f in _unknown_facts(conds, values))
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


def auto_backend_features(
    d: Derived,
    mapping: Mapping[str, Any],
    sglang_version: str | None,
    majors: set[int] | None,
    torch_cuda: str | None,
    mla: bool | None,
) -> list[tuple[str, str]]:
    """The attention features SGLang's own choice of backend needs on this box (launch.json
    refusals.auto.attention_backend.defaults): (feature, why) for each entry whose release, GPU majors, torch CUDA,
    model kind (`mla`: the model's attention, None when the gate could not read it) and speculative flags match a
    launch that names no attention backend. What is unknown counts as a match (the requirement is then judged by
    the feature's verdict: fail closed)."""
    if sglang_version is None or d.entrypoint is None or not majors:
        return []
    if any(f in d.options for f in _FLAG_FACTS.values() if f != "--speculative-algorithm"):
        return []
    from stackcheck.facts.versions import version_in

    auto = ((mapping.get("refusals") or {}).get("auto") or {}).get("attention_backend") or {}
    cuda = numeric(torch_cuda)
    spec = "--speculative-algorithm" in d.options
    topk = numeric(d.options.get("--speculative-eagle-topk"))
    out: list[tuple[str, str]] = []
    for entry in auto.get("defaults") or []:
        if not isinstance(entry, dict) or version_in(sglang_version, str(entry.get("versions") or "")) is not True:
            continue
        if not majors <= {int(m) for m in entry.get("majors") or []}:
            continue
        need = numeric(entry.get("torch_cuda_min"))
        if cuda is not None and need is not None and cuda < need:
            continue
        if mla is not None and entry.get("model") in ("mla", "mha") and (entry["model"] == "mla") is not mla:
            continue
        limit = entry.get("unless_topk_above")
        if spec and isinstance(limit, int) and topk is not None and topk > (limit,):
            continue
        if spec and entry.get("needs_topk_with_speculation") and topk is None:
            continue
        out.append((str(entry["feature"]), str(entry.get("why") or "the attention backend SGLang picks here")))
    return out


def numeric(text: Any) -> tuple[int, ...] | None:
    """'12.3' -> (12, 3); '4' -> (4,); None for anything else."""
    parts = str(text).split(".")[:2] if text is not None else []
    return tuple(int(x) for x in parts) if parts and all(x.isdigit() for x in parts) else None
