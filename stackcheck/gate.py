"""`stackcheck gate`, the pure part: an SGLang command line -> the features it needs and its launch facts,
then the verdicts -> allow or refuse. No I/O, no environment reads: the caller passes argv and env in.

How a command line is read (all of it data, manifests/launch.json):
- the command is an SGLang launch when it is `python[3[.x]] [python options] -m sglang.launch_server ...` or
  `sglang serve ...` (an `env [-i] [-u NAME] [NAME=VALUE]...` prefix is read for its assignments). Any
  other command (a wrapper script) is scanned too: if an SGLang flag of launch.json appears in it, it is
  treated as an SGLang launch; if none does, it needs no feature (only --require is checked).
- flags are read as SGLang's argparse reads them: `--flag VALUE` and `--flag=VALUE`, aliases
  (`--tensor-parallel-size`), and unique-prefix abbreviations of a listed flag (`--tp` for `--tp-size`);
  a prefix of several listed flags is reported as unknown. The last occurrence wins, as in argparse.
- each option maps values to features (`--attention-backend fa3` -> attention-fa3); a value that
  launch.json does not know is reported as unknown (it may be new, or SGLang may reject it). Flags
  launch.json does not list at all (it lists only those that gate features) pass through unchecked and are
  named in one note; `--config FILE` makes the launch facts unknown (its settings are not read).
- deepgemm, on by default, fails only with FP8 block-quantized models: its default entry says
  `"refuse": false`, so a blocked deepgemm warns; `--quantization fp8` requires fp8-block-gemm, which refuses.
- per SGLang release, an option says whether the installed release has the flag at all; a flag the
  installed release lacks is a refusal (SGLang exits with `unrecognized arguments`), a release no entry
  covers is unknown.

Decision policy:
- explicit features (from `--require`, or turned on by a flag or a value in the command) must be `ok`:
  `blocked` (any effect) refuses; `unknown` refuses unless --allow-unknown; `not-applicable` (a package it
  needs is not installed) refuses.
- default features (on without any flag: custom-allreduce when tp > 1 unless --disable-custom-all-reduce,
  cuda-graph unless --disable-cuda-graph, deepgemm unless SGLANG_ENABLE_JIT_DEEPGEMM is false,
  attention-flashinfer when FlashInfer is installed, as SGLang's default sampler unless --sampling-backend
  says otherwise and its default attention backend unless --attention-backend is given):
  `blocked` with effect `crash` refuses; `blocked` with `disabled` or `degraded` only warns (the server
  starts and falls back); `unknown` refuses (unless --allow-unknown) when any rule of the feature can
  crash, else warns; `not-applicable` is ignored.
- problems found while reading the command (unknown values, ambiguous abbreviations, flags the release
  lacks) are `unknown` (refuse unless --allow-unknown) or `blocked` with effect crash (refuse).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from stackcheck.errors import UsageError

EFFECT_ORDER = {"crash": 3, "disabled": 2, "degraded": 1}
_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
# python options that take a separate value (python -X dev -W error -m mod)
_PY_VALUE_OPTS = {"-X", "-W", "-Q", "--check-hash-based-pycs"}


@dataclass
class Requirement:
    feature: str
    kind: str  # "explicit" | "default"
    why: str  # the flag, value or rule that asks for it


@dataclass
class Problem:
    """Something about the command itself: an unknown value, an ambiguous flag, a flag the release lacks."""

    subject: str  # e.g. "--attention-backend=foo"
    status: str  # "unknown" | "blocked" | "note" (never refuses)
    effect: str | None
    message: str
    source: Any = None


@dataclass
class Derived:
    command: list[str]
    entrypoint: str | None  # launch.json entrypoint id, "wrapper" or None
    sglang_args: list[str]
    launch: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)  # canonical flag -> value (True for bool)
    env: dict[str, bool] = field(default_factory=dict)  # launch.json env names -> parsed values
    required: list[Requirement] = field(default_factory=list)
    off: list[str] = field(default_factory=list)  # default features turned off, with the reason
    problems: list[Problem] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "entrypoint": self.entrypoint,
            "launch": dict(self.launch),
            "options": dict(self.options),
            "env": dict(self.env),
            "required": [{"feature": r.feature, "kind": r.kind, "why": r.why} for r in self.required],
            "off": list(self.off),
            "problems": [problem_json(p) for p in self.problems],
        }


def problem_json(p: Problem) -> dict[str, Any]:
    return {"subject": p.subject, "status": p.status, "effect": p.effect, "message": p.message, "source": p.source}


# ---- reading the command --------------------------------------------------------------------------


def split_env_prefix(argv: Sequence[str], env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """`env [-i] [-u NAME] [NAME=VALUE]... CMD ARGS` -> (CMD ARGS, the environment CMD would see)."""
    args = list(argv)
    out = dict(env)
    if not args or os.path.basename(args[0]) != "env":
        return args, out
    i = 1
    while i < len(args):
        a = args[i]
        if a in ("-i", "--ignore-environment", "-"):
            out = {}
        elif a in ("-u", "--unset") and i + 1 < len(args):
            out.pop(args[i + 1], None)
            i += 1
        elif a.startswith("--unset="):
            out.pop(a.partition("=")[2], None)
        elif "=" in a and not a.startswith("-") and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", a):
            name, _, value = a.partition("=")
            out[name] = value
        else:
            break
        i += 1
    return args[i:], out


def find_entrypoint(argv: Sequence[str], mapping: Mapping[str, Any]) -> tuple[str | None, list[str]]:
    """(entrypoint id, SGLang arguments) for a recognised launch, else (None, all arguments after argv[0])."""
    if not argv:
        return None, []
    prog = os.path.basename(argv[0])
    entries = [e for e in mapping.get("entrypoints") or [] if isinstance(e, dict)]
    if _PYTHON.match(prog):
        i = 1
        while i < len(argv):
            a = argv[i]
            if a == "-m" and i + 1 < len(argv):
                module = argv[i + 1]
                for e in entries:
                    if e.get("python_module") == module:
                        return str(e.get("id")), list(argv[i + 2 :])
                break
            if a.startswith("-m") and len(a) > 2:
                for e in entries:
                    if e.get("python_module") == a[2:]:
                        return str(e.get("id")), list(argv[i + 1 :])
                break
            if a in _PY_VALUE_OPTS:
                i += 2
                continue
            if not a.startswith("-") or a in ("-c", "-"):
                break
            i += 1
    for e in entries:
        if e.get("program") == prog:
            sub = e.get("subcommand")
            if sub is None:
                return str(e.get("id")), list(argv[1:])
            if len(argv) > 1 and argv[1] == sub:
                return str(e.get("id")), list(argv[2:])
    return None, list(argv[1:])


def _options(mapping: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [o for o in mapping.get("options") or [] if isinstance(o, dict) and isinstance(o.get("flag"), str)]


def _names(opt: Mapping[str, Any]) -> list[str]:
    return [str(opt["flag"]), *[str(a) for a in opt.get("aliases") or []]]


def _choices(opt: Mapping[str, Any], by_flag: Mapping[str, dict[str, Any]]) -> dict[str, Any] | None:
    if isinstance(opt.get("choices"), dict):
        return dict(opt["choices"])
    other = opt.get("choices_of")
    if isinstance(other, str) and isinstance(by_flag.get(other, {}).get("choices"), dict):
        return dict(by_flag[other]["choices"])
    return None


# Flags whose presence means the launch settings come from somewhere the gate does not read.
CONFIG_FLAGS = ("--config",)


def _config_problem(name: str) -> Problem:
    """A config file makes the launch facts unknown: the gate fails closed (refuses unless --allow-unknown)."""
    return Problem(
        name,
        "unknown",
        None,
        f"{name}: settings in the config file (tp, backends, feature flags) are not read by the gate, "
        "so the features this launch needs are not known",
    )


def parse_flags(args: Sequence[str], mapping: Mapping[str, Any]) -> tuple[dict[str, Any], list[Problem], bool]:
    """The listed flags found in args: canonical flag -> value (True for a bool flag), problems, and
    whether any listed flag was found at all."""
    opts = _options(mapping)
    exact: dict[str, dict[str, Any]] = {}
    for o in opts:
        for n in _names(o):
            exact[n] = o
    found: dict[str, Any] = {}
    problems: list[Problem] = []
    unlisted: list[str] = []
    seen = False
    i = 0
    while i < len(args):
        tok = args[i]
        i += 1
        if tok == "--":
            break
        if not tok.startswith("--") or tok == "--":
            continue
        name, eq, inline = tok.partition("=")
        opt = exact.get(name)
        how = name
        if opt is None:
            hits = {id(o): o for n, o in exact.items() if n.startswith(name) and len(name) > 2}
            if len(hits) == 1:
                opt = next(iter(hits.values()))
                how = f"{name} (abbreviation of {opt['flag']})"
            elif len(hits) > 1:
                flags = sorted({str(o["flag"]) for o in hits.values()})
                problems.append(
                    Problem(
                        name,
                        "unknown",
                        None,
                        f"{name} is an abbreviation of several flags the gate reads ({', '.join(flags)}): "
                        "SGLang rejects it as ambiguous, or it is a flag the manifests do not know",
                    )
                )
                continue
            else:
                if name in CONFIG_FLAGS:
                    problems.append(_config_problem(name))
                else:
                    unlisted.append(name)
                continue
        seen = True
        flag = str(opt["flag"])
        kind = opt.get("value")
        if kind == "bool":
            if eq:
                raise UsageError(f"server command: {how} takes no value (got {tok!r})")
            found[flag] = True
            continue
        if eq:
            value = inline
        elif i < len(args) and not (args[i].startswith("--") and len(args[i]) > 2):
            value = args[i]
            i += 1
        else:
            raise UsageError(f"server command: {how} needs a value")
        if kind == "int":
            try:
                found[flag] = int(value)
            except ValueError:
                raise UsageError(f"server command: {how} {value!r}: expected an integer") from None
            if found[flag] < 1:
                raise UsageError(f"server command: {how} {value!r}: expected a positive integer")
        else:
            found[flag] = value
    if unlisted:
        names = ", ".join(dict.fromkeys(unlisted))
        problems.append(
            Problem("flags", "note", None, f"passed through unchecked (not in stackcheck's launch data): {names}")
        )
    return found, problems, seen


def parse_env(env: Mapping[str, str], mapping: Mapping[str, Any]) -> tuple[dict[str, bool], list[Problem]]:
    out: dict[str, bool] = {}
    problems: list[Problem] = []
    for spec in mapping.get("env") or []:
        if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
            continue
        name = str(spec["name"])
        default = bool(spec.get("default"))
        if name not in env:
            out[name] = default
            continue
        raw = env[name].lower()
        if raw in [str(x) for x in spec.get("true") or []]:
            out[name] = True
        elif raw in [str(x) for x in spec.get("false") or []]:
            out[name] = False
        else:
            out[name] = default
            problems.append(
                Problem(
                    f"{name}={env[name]}",
                    "unknown",
                    None,
                    f"{name}={env[name]!r} is neither true ({', '.join(spec.get('true') or [])}) nor false "
                    f"({', '.join(spec.get('false') or [])}): SGLang raises ValueError when it reads it",
                    spec.get("source"),
                )
            )
    return out, problems


def _cond(c: Mapping[str, Any], d: Derived, defaults: Mapping[str, Any]) -> bool:
    if "option" in c:
        flag = str(c["option"])
        value = d.options.get(flag, defaults.get(flag))
        return value in (c.get("in") or [])
    if "flag" in c:
        return (str(c["flag"]) in d.options) is bool(c.get("present"))
    if "env" in c:
        return d.env.get(str(c["env"])) in (c.get("in") or [])
    if "launch" in c:
        lhs = d.launch.get(str(c["launch"]))
        rhs = c.get("value")
        if not isinstance(lhs, int | float) or not isinstance(rhs, int | float):
            return False
        op = str(c.get("op"))
        return {
            "==": lhs == rhs,
            "!=": lhs != rhs,
            "<": lhs < rhs,
            "<=": lhs <= rhs,
            ">": lhs > rhs,
            ">=": lhs >= rhs,
        }.get(op, False)
    return False


def _conds(conds: Any, d: Derived, defaults: Mapping[str, Any]) -> bool:
    return all(_cond(c, d, defaults) for c in conds or [] if isinstance(c, dict))


def _add(d: Derived, feature: str, kind: str, why: str) -> None:
    for r in d.required:
        if r.feature == feature:
            if kind == "explicit" and r.kind in ("default", "default-warn"):
                r.kind, r.why = "explicit", why
            return
    d.required.append(Requirement(feature, kind, why))


def _add_requirements(d: Derived, reqs: Any, why: str, defaults: Mapping[str, Any]) -> None:
    for req in reqs or []:
        if isinstance(req, str):
            _add(d, req, "explicit", why)
        elif isinstance(req, dict) and isinstance(req.get("feature"), str):
            if _conds(req.get("when"), d, defaults):
                _add(d, str(req["feature"]), "explicit", why)


def derive(
    command: Sequence[str],
    mapping: Mapping[str, Any],
    env: Mapping[str, str],
    require: Sequence[str] = (),
) -> Derived:
    """The features a command needs and its launch facts, from launch.json. Pure."""
    argv, cmd_env = split_env_prefix(command, env)
    if not argv:
        raise UsageError("missing command after -- (expected, e.g., -- python -m sglang.launch_server ...)")
    entry, args = find_entrypoint(argv, mapping)
    found, problems, seen = parse_flags(args, mapping)
    d = Derived(command=list(command), entrypoint=entry, sglang_args=args, options=found, problems=problems)
    for feature in require:
        _add(d, feature, "explicit", "--require")
    if entry is None and not seen:
        return d
    if entry is None:
        d.entrypoint = "wrapper"
    d.env, env_problems = parse_env(cmd_env, mapping)
    d.problems.extend(env_problems)
    opts = _options(mapping)
    by_flag = {str(o["flag"]): o for o in opts}
    defaults = {str(o["flag"]): o.get("default") for o in opts if "default" in o}
    for o in opts:
        fact = o.get("fact")
        if isinstance(fact, str):
            if o["flag"] in found:
                d.launch[fact] = found[o["flag"]]
            elif "default" in o and o.get("value") == "int":
                d.launch[fact] = o["default"]
    for o in opts:
        flag = str(o["flag"])
        if flag not in found:
            continue
        value = found[flag]
        if o.get("value") == "bool":
            _add_requirements(d, o.get("requires"), flag, defaults)
            continue
        choices = _choices(o, by_flag)
        if choices is None:
            continue
        if str(value) not in choices:
            d.problems.append(
                Problem(
                    f"{flag}={value}",
                    "unknown",
                    None,
                    f"{flag} {value!r} is not a value the manifests know (known: {', '.join(sorted(choices))}): "
                    "it may be new, or SGLang rejects it",
                    o.get("source"),
                )
            )
            continue
        _add_requirements(d, choices[str(value)], f"{flag} {value}", defaults)
    for spec in mapping.get("defaults") or []:
        if not isinstance(spec, dict) or not isinstance(spec.get("feature"), str):
            continue
        feature = str(spec["feature"])
        if _conds(spec.get("when"), d, defaults):
            if spec.get("refuse", True):
                _add(d, feature, "default", "on by default")
            else:
                _add(d, feature, "default-warn", "on by default; fails only with some models, so it warns")
        else:
            d.off.append(f"{feature}: off ({_off_reason(spec.get('when'), d, defaults)})")
    # a feature that several default entries can turn on (FlashInfer: the sampler, the attention default) is
    # off only when none does
    needed = {r.feature for r in d.required}
    d.off = [o for o in d.off if o.split(":", 1)[0] not in needed]
    return d


def _off_reason(conds: Any, d: Derived, defaults: Mapping[str, Any]) -> str:
    for c in conds or []:
        if isinstance(c, dict) and not _cond(c, d, defaults):
            if "flag" in c:
                return f"{c['flag']} given" if not c.get("present") else f"{c['flag']} not given"
            if "env" in c:
                return f"{c['env']} is {str(d.env.get(str(c['env']))).lower()}"
            if "launch" in c:
                return f"launch.{c['launch']} = {d.launch.get(str(c['launch']))}"
            if "option" in c:
                return f"{c['option']} = {d.options.get(str(c['option']))}"
    return "condition not met"


def release_problems(
    d: Derived, mapping: Mapping[str, Any], sglang_version: str | None, declared: Mapping[str, Any] | None = None
) -> list[Problem]:
    """Flags the installed SGLang release does not have (blocked) or that no release entry covers (unknown).
    `declared`: for a release newer than the data, the flags read from its own server arguments (the facts
    section derived.sglang.flags): presence is then read, not taken from launch.json's ranges."""
    if sglang_version is None:
        return []
    from stackcheck.versions import version_in

    out: list[Problem] = []
    for o in _options(mapping):
        flag = str(o["flag"])
        releases = [r for r in o.get("releases") or [] if isinstance(r, dict)]
        if declared is not None and flag in d.options:
            if flag not in set(declared.get("declared") or []):
                out.append(
                    Problem(
                        flag,
                        "blocked",
                        "crash",
                        f"SGLang {sglang_version} (newer than the data) declares no {flag} in its server arguments: "
                        "the server exits with 'unrecognized arguments'",
                        {
                            "title": f"sglang {sglang_version} installed, "
                            + ", ".join(declared.get("files") or [])[:200],
                            "url": f"https://pypi.org/project/sglang/{sglang_version.split('+', 1)[0]}/",
                        },
                    )
                )
            continue
        if flag not in d.options or not releases:
            continue
        hit = next((r for r in releases if version_in(sglang_version, str(r.get("versions"))) is True), None)
        if hit is None:
            out.append(
                Problem(
                    flag,
                    "unknown",
                    None,
                    f"the manifests do not say whether SGLang {sglang_version} has {flag}",
                    o.get("source"),
                )
            )
        elif not hit.get("present"):
            out.append(
                Problem(
                    flag,
                    "blocked",
                    "crash",
                    f"SGLang {sglang_version} has no {flag} (releases {hit.get('versions')}): the server exits "
                    "with 'unrecognized arguments'",
                    hit.get("source"),
                )
            )
    return out


# ---- deciding -------------------------------------------------------------------------------------


@dataclass
class Blocker:
    feature: str
    kind: str  # explicit | default | command
    status: str
    effect: str | None
    reasons: list[dict[str, Any]]
    fix: str | None = None


@dataclass
class Decision:
    allow: bool
    blocking: list[Blocker]
    warnings: list[Blocker]
    checked: list[dict[str, Any]]  # feature id, kind, status, effect


def worst_rule_effect(feature: Mapping[str, Any] | None) -> str | None:
    if not feature:
        return None
    effects = [str(r.get("effect", "crash")) for r in feature.get("rules") or [] if isinstance(r, dict)]
    return max(effects, key=lambda e: EFFECT_ORDER.get(e, 0)) if effects else None


def decide(
    d: Derived,
    verdicts: Sequence[Mapping[str, Any]],
    features: Sequence[Mapping[str, Any]],
    allow_unknown: bool,
    extra_problems: Sequence[Problem] = (),
) -> Decision:
    """Apply the policy of the module docstring."""
    by_id = {str(v.get("id")): v for v in verdicts}
    spec = {str(f.get("id")): f for f in features}
    blocking: list[Blocker] = []
    warnings: list[Blocker] = []
    checked: list[dict[str, Any]] = []
    for p in [*d.problems, *extra_problems]:
        b = Blocker(p.subject, "command", p.status, p.effect, [{"message": p.message, "source": p.source}])
        if p.status == "note" or (p.status == "unknown" and allow_unknown):
            warnings.append(b)
        else:
            blocking.append(b)
    for r in d.required:
        v = by_id.get(r.feature)
        if v is None:
            blocking.append(
                Blocker(r.feature, r.kind, "unknown", None, [{"message": f"feature {r.feature} not in the manifests"}])
            )
            checked.append({"feature": r.feature, "kind": r.kind, "status": "unknown", "effect": None})
            continue
        status = str(v.get("status"))
        effect = v.get("effect")
        checked.append({"feature": r.feature, "kind": r.kind, "why": r.why, "status": status, "effect": effect})
        reasons = [dict(x) for x in v.get("reasons") or [] if x.get("result") in ("fail", "unknown")]
        if status == "not-applicable":
            reasons = [dict(x) for x in v.get("reasons") or []]
        b = Blocker(r.feature, r.kind, status, effect if isinstance(effect, str) else None, reasons)
        if status == "ok":
            continue
        if r.kind == "explicit":
            if status == "unknown" and allow_unknown:
                warnings.append(b)
            else:
                blocking.append(b)
            continue
        # default features
        if r.kind == "default-warn":
            if status in ("blocked", "unknown"):
                warnings.append(b)
            continue
        if status == "blocked":
            (blocking if effect == "crash" else warnings).append(b)
        elif status == "unknown":
            can_crash = worst_rule_effect(spec.get(r.feature)) == "crash"
            (blocking if can_crash and not allow_unknown else warnings).append(b)
    return Decision(not blocking, blocking, warnings, checked)
