"""`NVIDIA_REQUIRE_CUDA` and the other `NVIDIA_REQUIRE_*` variables of an image: parsed, and judged against
a driver and its GPUs the way nvidia-container-toolkit judges them when the container starts.

What the toolkit does (read from the code that runs):
- nvidia-container-toolkit `internal/config/image/cuda_image.go` (`GetRequirements`): every variable named
  `NVIDIA_REQUIRE_*` except `NVIDIA_REQUIRE_JETPACK` is one requirement; `NVIDIA_DISABLE_REQUIRE` set to a
  true value turns them all off; an image with `CUDA_VERSION` and no `NVIDIA_REQUIRE_CUDA` ("legacy") gets
  `cuda>=MAJOR.MINOR` from `CUDA_VERSION`. Each requirement is passed to `nvidia-container-cli --require`.
- libnvidia-container `src/cli/dsl.c` (`dsl_evaluate`): space-separated terms are alternatives (any one
  suffices), comma-separated constraints inside a term must all hold; a constraint is `NAME OP VALUE` with
  OP one of `= != < <= > >=`; versions compare numerically component by component (`13.0` equals `13`);
  strings (brand) compare case-insensitively with `=`/`!=` only; an unknown NAME or a malformed constraint
  is "invalid expression" and the container does not start.
- libnvidia-container `src/cli/configure.c`: NAME is `cuda` (the driver's CUDA version), `driver` (the
  driver version), `arch` (the GPU's compute capability) or `brand` (the GPU's brand); requirements are
  checked for every visible GPU, or once without a GPU (then arch and brand hold).
Where the toolkit would assume "true" for a value it cannot read, this module says unknown (None): the
audit must not pass what it did not see.

Which checker runs depends on the host's toolkit (facts.container_toolkit, stackcheck/probes/container_toolkit.py;
components.json driver.container_brands runtime_modes): nvidia-container-cli in legacy mode, with the brand words of
its libnvidia-container release; no check at all in cdi / jit-cdi mode (nvidia-container-toolkit up to 1.20.0 calls
its own check in csv mode only, internal/modifier/csv.go); auto resolves per release (jit-cdi for the runtime from
1.18.0, legacy for the hook). `select_checkers` keeps the checkers the facts leave possible; an outcome counts only
where they agree.

How the container is started (facts.image.started_by, STARTED_BY) may decide the checker whatever the mode:
Docker's device request (`docker run --gpus`, compose `deploy.resources.reservations.devices` with driver nvidia)
under runc runs nvidia-container-runtime-hook itself, which checks in legacy mode and refuses to run in any other
(`docker-gpus`); nvidia-container-runtime as the OCI runtime resolves the mode itself (`nvidia-runtime`); CDI
devices the engine injects are not checked by anything (`cdi-device`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from stackcheck.digits import whole_number

SOURCES = (
    {"repo": "NVIDIA/nvidia-container-toolkit", "path": "internal/config/image/cuda_image.go", "ref": "main"},
    {"repo": "NVIDIA/libnvidia-container", "path": "src/cli/dsl.c", "ref": "main"},
    {"repo": "NVIDIA/libnvidia-container", "path": "src/cli/configure.c", "ref": "main"},
)
#: how the container is started (facts.image.started_by): what runs on the host, read from the code that runs
STARTED_BY: dict[str, dict[str, Any]] = {
    "docker-gpus": {
        "what": "Docker's device request (docker run --gpus, compose deploy.resources.reservations.devices with "
        "driver nvidia) under Docker's own runtime (runc)",
        "runs": "nvidia-container-runtime-hook as a prestart hook, which checks with nvidia-container-cli in legacy "
        "mode and refuses to run in any other mode (unless its skip-mode-detection = true, then it checks as in "
        "legacy): an unmet requirement never starts the container, whatever the mode",
        "source": [
            {
                "repo": "moby/moby",
                "path": "daemon/nvidia_linux.go (setNvidiaGPUs: the prestart hook "
                "nvidia-container-runtime-hook prestart for a device request of driver nvidia)",
                "ref": "18a2f3f0",
            },
            {
                "repo": "NVIDIA/nvidia-container-toolkit",
                "path": "cmd/nvidia-container-toolkit/main.go:77-78 at "
                "v1.10.0; cmd/nvidia-container-runtime-hook/main.go:77-78 at v1.11.0-v1.13.5 (skip-mode-detection "
                "from v1.13.0, internal/config/hook.go), :85-86 at v1.14.0-v1.17.8 (mode resolved with the image: "
                "CDI device names in NVIDIA_VISIBLE_DEVICES are cdi); hook_config.go:127-143 assertModeIsLegacy at "
                "v1.18.0 (auto resolves to legacy: WithDefaultMode), :115-131 at v1.19.0, v1.20.0 and main d34b3046; "
                "main.go:80-87 (the check runs for a GPU container)",
                "ref": "v1.10.0..d34b3046",
            },
            {
                "repo": "NVIDIA/nvidia-container-toolkit",
                "path": "cmd/nvidia-container-runtime-hook/main.go:136-138 "
                "at v1.11.0 and v1.13.5 (--require per requirement unless disable-require or NVIDIA_DISABLE_REQUIRE)",
                "ref": "v1.11.0",
            },
        ],
    },
    "nvidia-runtime": {
        "what": "nvidia-container-runtime as the OCI runtime (docker run --runtime=nvidia, compose runtime: nvidia, "
        "daemon.json default-runtime nvidia, Kubernetes runtimeClass nvidia), with or without a device request",
        "runs": "the runtime's mode: legacy injects the hook (checked by nvidia-container-cli); auto resolves to "
        "legacy before 1.18.0 and to jit-cdi from 1.18.0 (csv on Tegra); cdi / jit-cdi / csv remove a device "
        "request's hook (from 1.17.5; csv always)",
        "source": [
            {
                "repo": "NVIDIA/nvidia-container-toolkit",
                "path": "internal/info/auto.go:87-90 NewRuntimeModeResolver "
                "(default mode jit-cdi), :132-133 (Tegra: csv) and internal/runtime/runtime_factory.go:85-86, 163-171 "
                "(the hook remover in cdi / jit-cdi / csv mode) at v1.18.0",
                "ref": "v1.18.0",
            },
            {
                "repo": "NVIDIA/nvidia-container-toolkit",
                "path": "internal/runtime/runtime_factory.go:128 at v1.17.5 "
                "(cdi mode removes the hook; not at v1.17.0-v1.17.4, where only csv.go's modifier does)",
                "ref": "v1.17.5",
            },
        ],
    },
    "cdi-device": {
        "what": "CDI devices injected by the container engine under its own runtime (docker or podman --device "
        "nvidia.com/gpu=..., containerd or CRI-O from the Kubernetes device plugin's CDI names)",
        "runs": "nothing of the NVIDIA toolkit that evaluates NVIDIA_REQUIRE_*: the CDI spec's edits and hooks "
        "(nvidia-ctk / nvidia-cdi-hook) mount devices and libraries only",
        "source": [
            {
                "repo": "moby/moby",
                "path": "daemon/cdi.go (injectCDIDevices: the CDI registry's edits only)",
                "ref": "01c4288c",
            },
            {
                "repo": "NVIDIA/nvidia-container-toolkit",
                "path": "internal/modifier/csv.go:39 at v1.20.0 (the only "
                "call of checkRequirements, in the runtime's csv mode)",
                "ref": "v1.20.0",
            },
        ],
    },
}
#: the runtime's own resolution of `auto` from 1.18.0 (the manifest's rule holds the hook's legacy beside it)
RUNTIME_AUTO_FROM = "1.18.0"
OPERATORS = ("=", "!=", "<", "<=", ">", ">=")
NAMES = ("cuda", "driver", "arch", "brand")
_OP_CHARS = "<>=!"


@dataclass(frozen=True)
class Constraint:
    name: str  # cuda | driver | arch | brand (lower case)
    op: str
    value: str

    def text(self) -> str:
        return f"{self.name}{self.op}{self.value}"


@dataclass(frozen=True)
class Requirement:
    variable: str  # NVIDIA_REQUIRE_CUDA, or CUDA_VERSION for a legacy image
    text: str
    alternatives: tuple[tuple[Constraint, ...], ...]


@dataclass
class RequireSet:
    requirements: list[Requirement] = field(default_factory=list)
    disabled: bool = False  # NVIDIA_DISABLE_REQUIRE is true: the toolkit checks nothing
    legacy: bool = False  # derived from CUDA_VERSION
    errors: list[str] = field(default_factory=list)  # "invalid expression": the container would not start

    def to_facts(self) -> dict[str, Any]:
        return {
            "requirements": [
                {
                    "variable": r.variable,
                    "text": r.text,
                    "alternatives": [[c.text() for c in alt] for alt in r.alternatives],
                }
                for r in self.requirements
            ],
            "disabled": self.disabled,
            "legacy": self.legacy,
            "errors": list(self.errors),
        }


def from_facts(section: Mapping[str, Any]) -> RequireSet:
    """A RequireSet from `facts.image.nvidia_require` (re-parsed from the texts the image states)."""
    out = RequireSet(disabled=bool(section.get("disabled")), legacy=bool(section.get("legacy")))
    for item in section.get("requirements") or []:
        if isinstance(item, Mapping) and isinstance(item.get("text"), str):
            req, errors = parse_requirement(str(item.get("variable") or "NVIDIA_REQUIRE_CUDA"), item["text"])
            out.requirements.append(req)
            out.errors += errors
    out.errors += [str(e) for e in section.get("errors") or [] if str(e) not in out.errors]
    return out


def judge_facts(
    image: Mapping[str, Any],
    driver: Mapping[str, Any],
    gpus: Sequence[Mapping[str, Any]],
    brand_table: Mapping[str, Any] | None = None,
    toolkit: Mapping[str, Any] | None = None,
) -> Judgement:
    """`judge` over facts sections: facts.image, facts.driver, facts.gpus, facts.container_toolkit. A GPU's `brand`
    (NVML's name, read by the NVML probe) becomes the word each checker that may run on the box compares
    (`brand_table`: components.json driver.container_brands, the shipped one when not given; `select_checkers`
    picks the checkers from the toolkit's mode and libnvidia-container's version); no brand: the brand terms are
    unknown. Where one possible checker refuses the container and another does not check, the answer is unknown."""
    section = image.get("nvidia_require")
    reqs = from_facts(section) if isinstance(section, Mapping) else RequireSet()
    if brand_table is None:
        brand_table = shipped_brand_table()
    started = image.get("started_by")
    if started == "cdi-device":
        if reqs.disabled or (not reqs.requirements and not reqs.errors):
            return judge(reqs, None, None, [])
        return Judgement(
            True,
            reason="started with CDI devices the container engine injects (image.started_by cdi-device): nothing "
            "evaluates NVIDIA_REQUIRE_*, the container starts",
        )
    if started == "docker-gpus":
        return _judge_hook(reqs, driver, gpus, brand_table, toolkit)
    chosen = select_checkers(brand_table, toolkit, runtime=started == "nvidia-runtime")
    read = f" ({chosen.read})" if chosen.read else ""
    if chosen.invalid:
        return Judgement(
            None, reason=f"not known: the container toolkit's mode {chosen.invalid} is not one it knows{read}"
        )
    if reqs.disabled or (not reqs.requirements and not reqs.errors):
        return judge(reqs, None, None, [])
    if chosen.unmodelled:
        return Judgement(None, reason=f"not known: {'; '.join(chosen.unmodelled)}{read}")
    if chosen.unread:
        # which checker runs decides: legacy mode checks (nvidia-container-cli), cdi / jit-cdi of the releases read
        # start the container unchecked: a refusal is not certain (unknown, never failed); met by every modelled
        # checker stands, saying so (csv mode, a Tegra host's, is not modelled)
        verdict = judge(reqs, *_judge_args(driver, gpus, {**brand_table, "toolkit_words": list(chosen.entries)}))
        if verdict.satisfied is True:
            return replace(
                verdict,
                reason=f"{verdict.reason} by every checker modelled ({chosen.unread}; csv mode, a Tegra host's, is "
                f"not modelled): to judge the host's own, {PROVIDE_TOOLKIT}",
            )
        outcome = (
            f"unmet where nvidia-container-cli checks it ({verdict.reason}), and cdi / jit-cdi mode start the "
            "container without checking"
            if verdict.satisfied is False
            else verdict.reason.removeprefix("not known: ")
        )
        return Judgement(None, verdict.failed, f"not known: {outcome}; {chosen.unread}: {PROVIDE_TOOLKIT}")
    if not chosen.entries and chosen.unchecked:
        return Judgement(True, reason=f"{chosen.unchecked[0]}: NVIDIA_REQUIRE_* is not evaluated{read}")
    verdict = judge(reqs, *_judge_args(driver, gpus, {**brand_table, "toolkit_words": list(chosen.entries)}))
    if verdict.satisfied is False and chosen.unchecked:
        return Judgement(
            None,
            verdict.failed,
            f"not known: {verdict.reason}, where nvidia-container-cli or the toolkit checks it; "
            f"{chosen.unchecked[0]} does not check it, and which one starts the container is not read{read}",
        )
    return replace(verdict, reason=verdict.reason + read) if read else verdict


def _judge_hook(
    reqs: RequireSet,
    driver: Mapping[str, Any],
    gpus: Sequence[Mapping[str, Any]],
    table: Mapping[str, Any],
    toolkit: Mapping[str, Any] | None,
) -> Judgement:
    """Docker's device request (image.started_by docker-gpus): nvidia-container-runtime-hook runs whatever the mode.
    In legacy mode (auto resolves to legacy for the hook, Tegra aside) it runs nvidia-container-cli --require; in
    any other mode it refuses to run (unless skip-mode-detection = true, not read, then it checks as in legacy). So
    an unmet requirement never starts the container; a met one starts it in legacy mode only. disable-require =
    true (config.toml) turns the check off: not read (no toolkit facts) it is taken at its default, false, and the
    reason says so; read as unknown (null), a refusal is not certain."""
    via = "started by Docker's device request (image.started_by docker-gpus): nvidia-container-runtime-hook"
    if reqs.disabled or (not reqs.requirements and not reqs.errors):
        return judge(reqs, None, None, [])
    entries = [e for e in table.get("toolkit_words") or [] if isinstance(e, Mapping)]
    legacy = [e for e in entries if list(e.get("modes") or ()) == ["legacy"] and e.get("checks") is not False]
    read = isinstance(toolkit, Mapping) and isinstance(toolkit.get("mode"), str) and not toolkit.get("other_installs")
    tk: Mapping[str, Any] = toolkit if isinstance(toolkit, Mapping) else {}
    lib = tk.get("libnvidia_container") if read else None
    lib = lib if isinstance(lib, str) and _is_version(lib) else None
    if lib is not None:
        legacy = [
            e
            for e in legacy
            if not isinstance(e.get("libnvidia_container"), str) or _version_in(lib, e["libnvidia_container"])
        ]
    mode = str(tk.get("mode")) if read else None
    modes = table.get("runtime_modes") if isinstance(table.get("runtime_modes"), Mapping) else {}
    if mode is not None and mode not in ((modes or {}).get("known") or ()):
        return Judgement(None, reason=f"not known: the container toolkit's mode {_mode_label(mode)} is not one known")
    # the hook resolves auto to legacy (csv on Tegra); another mode makes it refuse to run
    refuses = mode is not None and mode != "legacy" and not (mode == "auto" and tk.get("tegra") is not True)
    # no toolkit facts: the default (false); facts without the key (an older probe) or null (not read): unknown
    disabled = tk.get("disable_require") if isinstance(toolkit, Mapping) else False
    where = f"container toolkit mode {_mode_label(mode)}" if mode is not None else "the toolkit not read"
    if lib is not None:
        where += f", libnvidia-container {lib}"
    verdict = judge(reqs, *_judge_args(driver, gpus, {**table, "toolkit_words": legacy}))
    assumed = (
        ""
        if isinstance(toolkit, Mapping)
        else "; config.toml's disable-require not read, taken at its default, false (--host-facts with a report of "
        "that host's audit reads it)"
    )
    refusal = (
        f"in mode {_mode_label(str(mode))} the hook refuses to run (a device request is not supported there) unless "
        "its skip-mode-detection = true (not read), when it checks as in legacy mode"
    )
    if disabled is True:
        if refuses:
            return Judgement(None, reason=f"not known: {via}; disable-require = true, and {refusal} ({where})")
        return Judgement(True, reason=f"{via} with disable-require = true: NVIDIA_REQUIRE_* is not evaluated ({where})")
    if verdict.satisfied is False:
        if disabled is None:
            return Judgement(
                None,
                verdict.failed,
                f"not known: {verdict.reason}, where {via} checks it; config.toml's disable-require was not read "
                f"(it may turn the check off) ({where})",
            )
        also = f"; {refusal}" if refuses else ""
        return Judgement(
            False,
            verdict.failed,
            f"{verdict.reason}; {via} checks it in legacy mode and refuses to run in any other: the container does "
            f"not start whatever the mode ({where}{also}){assumed}",
        )
    if verdict.satisfied is True and refuses:
        return Judgement(None, reason=f"not known: met where nvidia-container-cli checks; {via}: {refusal} ({where})")
    if verdict.satisfied is True:
        return replace(verdict, reason=f"{verdict.reason} ({via}, {where}){assumed}")
    return replace(verdict, reason=f"{verdict.reason} ({via}, {where})")


def _judge_args(
    driver: Mapping[str, Any], gpus: Sequence[Mapping[str, Any]], table: Mapping[str, Any]
) -> tuple[str | None, str | None, list[Device]]:
    """judge's driver version, driver CUDA and devices from facts.driver and facts.gpus, with `table`'s words."""
    devices: list[Device] = []
    for g in gpus:
        arch = g.get("compute_capability") if isinstance(g.get("compute_capability"), str) else None
        name = g.get("brand") if isinstance(g.get("brand"), str) else None
        if name is None:
            devices.append(Device(arch, None))
            continue
        first = g.get("index") == 0 if isinstance(g.get("index"), int) else not devices
        label = name if len(name) <= 40 and all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in name) else "?"
        devices.append(Device(arch, None, brand_words(name, table), label, first=first))
    version = driver.get("version") if isinstance(driver.get("version"), str) else None
    cuda = driver.get("cuda") if isinstance(driver.get("cuda"), str) else None
    return version, cuda, devices


@dataclass(frozen=True)
class Checkers:
    """The entries of driver.container_brands.toolkit_words that may check an image's requirements on the box."""

    entries: tuple[Mapping[str, Any], ...]  # checkers that evaluate NVIDIA_REQUIRE_* (their brand words)
    unchecked: tuple[str, ...] = ()  # checkers that may run and evaluate nothing (the container starts)
    unmodelled: tuple[str, ...] = ()  # checks that may run and stackcheck does not model (unknown)
    read: str = ""  # what was read of the toolkit, for reasons ("" when nothing)
    invalid: str = ""  # a mode the toolkit does not know
    unread: str = ""  # why the checker that runs is not known (the toolkit's mode not read); "" when it is


#: what to give where the toolkit was not read (reasons of judge_facts)
PROVIDE_TOOLKIT = (
    "audit the image on the host that starts its containers (`stackcheck audit --image IMAGE` there reads the "
    "toolkit's /etc/nvidia-container-runtime/config.toml), or give --host-facts a JSON report of such an audit of "
    "that host (its container_toolkit section)"
)


def _version_in(version: str, spec: str) -> bool:
    op, bound = (">=", spec[2:]) if spec.startswith(">=") else ("<", spec[1:])
    return compare_versions(version, op, bound)


def _mode_label(mode: str) -> str:
    return mode if len(mode) <= 32 and all(ch.isascii() and (ch.isalnum() or ch == "-") for ch in mode) else "?"


def select_checkers(table: Mapping[str, Any], toolkit: Mapping[str, Any] | None, runtime: bool = False) -> Checkers:
    """The checkers that may run where facts.container_toolkit (`toolkit`) was read: the runtime mode in
    config.toml (auto resolved per components.json runtime_modes) and libnvidia-container's version, which bounds
    the toolkit's (its packages require libnvidia-container-tools of its own version or newer). Without a mode
    read (no section, a second toolkit installed, an unreadable config), every checker that evaluates the
    requirements and is modelled, with `unread` saying why: judge_facts then leaves a refusal unknown (cdi /
    jit-cdi start the container unchecked) and says what to provide. `runtime`: the container is started by
    nvidia-container-runtime (image.started_by nvidia-runtime), whose own `auto` from RUNTIME_AUTO_FROM is jit-cdi
    (csv on Tegra), not the hook's legacy. A top-level
    `disable-require = true` (facts `disable_require`) turns the legacy hook's check off; not read (null, absent),
    the hook may check nothing."""
    entries = [e for e in table.get("toolkit_words") or [] if isinstance(e, Mapping)]
    checking = tuple(e for e in entries if e.get("checks") is not False and e.get("modelled") is not False)

    def not_read(why: str) -> Checkers:
        return Checkers(checking, unread=why)

    if not isinstance(toolkit, Mapping):
        return not_read("the host's container toolkit was not read (no container_toolkit facts)")
    mode, lib = toolkit.get("mode"), toolkit.get("libnvidia_container")
    lib = lib if isinstance(lib, str) and _is_version(lib) else None
    if toolkit.get("other_installs"):
        return not_read("a second container toolkit is installed (the GPU operator's), whose config is not read")
    if not isinstance(mode, str):
        said = toolkit.get("mode_error") or toolkit.get("error")
        return not_read(f"the container toolkit's mode was not read{f' ({said})' if isinstance(said, str) else ''}")
    modes = table.get("runtime_modes")
    modes = modes if isinstance(modes, Mapping) else {}
    version = f", libnvidia-container {lib}" if lib else ""
    read = f"container toolkit mode {_mode_label(mode)}{version}"
    if mode not in (modes.get("known") or ()):
        return Checkers((), read=read, invalid=_mode_label(mode))
    first = (modes.get("known_from") or {}).get(mode) if isinstance(modes.get("known_from"), Mapping) else None
    if isinstance(first, str) and lib is not None and not _version_in(lib, f">={first}"):
        # the toolkit is never newer than libnvidia-container here, so it does not know this mode yet
        return Checkers((), read=read, invalid=f"{_mode_label(mode)} (known from toolkit {first})")

    def possible(spec: Any) -> bool:  # a toolkit in `spec` may be installed beside libnvidia-container `lib`
        return not isinstance(spec, str) or lib is None or spec.startswith("<") or _version_in(lib, spec)

    resolved: set[str] = {mode}
    if mode == "auto":
        resolved = set()
        for rule in modes.get("auto") or ():
            if isinstance(rule, Mapping) and possible(rule.get("toolkit")):
                found = set(rule.get("tegra" if toolkit.get("tegra") is True else "resolves") or ())
                if runtime and rule.get("toolkit") == f">={RUNTIME_AUTO_FROM}":
                    found = {"csv" if toolkit.get("tegra") is True else "jit-cdi"}  # the runtime's own default
                resolved |= found
        if not resolved:
            return not_read(f"mode auto does not resolve to a mode read for libnvidia-container {lib or '?'}")
        read = f"container toolkit mode auto, here {' or '.join(sorted(resolved))}{version}"
    chosen = [
        e
        for e in entries
        if resolved & set(e.get("modes") or ())
        and possible(e.get("toolkit"))
        and (
            lib is None
            or not isinstance(e.get("libnvidia_container"), str)
            or _version_in(lib, e["libnvidia_container"])
        )
    ]
    # `disable-require = true` at config.toml's top level: the hook (legacy mode) sets NVIDIA_DISABLE_REQUIRE and
    # nvidia-container-cli checks nothing (cmd/nvidia-container-runtime-hook/container_config.go); not read (facts of
    # an older probe, an unreadable file): it may be set, so legacy mode may check nothing either
    disabled = toolkit.get("disable_require")
    hook = f"nvidia-container-runtime-hook with disable-require {'= true' if disabled is True else 'not read'}"

    def hook_skips(e: Mapping[str, Any]) -> bool:
        return disabled is not False and list(e.get("modes") or ()) == ["legacy"] and e.get("checks") is not False

    skipped = [hook] if any(hook_skips(e) for e in chosen) else []
    if disabled is True:  # the hook checks nothing: its checkers are gone, not merely possibly absent
        chosen = [e for e in chosen if not hook_skips(e)]
    return Checkers(
        tuple(e for e in chosen if e.get("checks") is not False and e.get("modelled") is not False),
        tuple(str(e.get("checker")) for e in chosen if e.get("checks") is False) + tuple(skipped),
        tuple(
            f"{e.get('checker')} may run, and its check is not modelled" for e in chosen if e.get("modelled") is False
        ),
        read,
    )


def _parse_bool(text: str) -> bool:
    # Go's strconv.ParseBool: 1 t T TRUE true True are true; anything unparsable is false
    return text in ("1", "t", "T", "TRUE", "true", "True")


def _is_version(text: str) -> bool:
    # (ASCII digits: what Go's strconv reads; a Unicode digit is no number there, and int() refuses '²')
    return bool(text) and all(ch in "0123456789." for ch in text) and any(ch != "." for ch in text)


def parse_constraint(expr: str) -> Constraint | str:
    """A Constraint, or the reason the toolkit would call `expr` an invalid expression."""
    n = 0
    while n < len(expr) and expr[n] not in _OP_CHARS:
        n += 1
    name, rest = expr[:n], expr[n:]
    m = 0
    while m < len(rest) and rest[m] in _OP_CHARS:
        m += 1
    op, value = rest[:m], rest[m:]
    if not name or not op:
        return f"{expr!r}: no NAME OP VALUE"
    if op not in OPERATORS:
        return f"{expr!r}: operator {op!r} is not one of {' '.join(OPERATORS)}"
    if not value:
        return f"{expr!r}: no value"
    lname = name.lower()
    if lname not in NAMES:
        return f"{expr!r}: unknown constraint {name!r} (known: {', '.join(NAMES)})"
    if lname == "brand":
        if op not in ("=", "!="):
            return f"{expr!r}: brand compares with = or != only"
    elif not _is_version(value):
        return f"{expr!r}: {value!r} is not a version"
    return Constraint(lname, op, value)


def parse_requirement(variable: str, text: str) -> tuple[Requirement, list[str]]:
    alternatives: list[tuple[Constraint, ...]] = []
    errors: list[str] = []
    for term in text.split(" "):
        if not term:
            continue
        parts: list[Constraint] = []
        for expr in term.split(","):
            if not expr:
                continue
            got = parse_constraint(expr)
            if isinstance(got, str):
                errors.append(f"{variable}: {got}")
            else:
                parts.append(got)
        if parts:
            alternatives.append(tuple(parts))
    return Requirement(variable, text, tuple(alternatives)), errors


def parse_nvidia_require(env: Mapping[str, str]) -> RequireSet:
    """The requirements an image's Env states (the config's Env, as a mapping)."""
    out = RequireSet()
    if "NVIDIA_DISABLE_REQUIRE" in env and _parse_bool(env["NVIDIA_DISABLE_REQUIRE"]):
        out.disabled = True
        return out
    for name in sorted(env):
        if name.startswith("NVIDIA_REQUIRE_") and not name.startswith("NVIDIA_REQUIRE_JETPACK"):
            req, errors = parse_requirement(name, env[name])
            out.requirements.append(req)
            out.errors += errors
    cuda_version = env.get("CUDA_VERSION", "")
    if cuda_version and not env.get("NVIDIA_REQUIRE_CUDA"):
        numbers = [whole_number(p) for p in cuda_version.lstrip("v").split(".")[:2]]
        if len(numbers) == 2 and numbers[0] is not None and numbers[1] is not None:
            out.legacy = True
            req, errors = parse_requirement("CUDA_VERSION", f"cuda>={numbers[0]}.{numbers[1]}")
            out.requirements.append(req)
            out.errors += errors
        else:
            out.errors.append(f"CUDA_VERSION: {cuda_version!r} is not a version")
    return out


def compare_versions(a: str, op: str, b: str) -> bool:
    """Numeric component comparison, trailing zero components ignored ("13.0" == "13"). The parts are ASCII digits
    (_is_version) compared as numbers by their digits, (count, digits) without leading zeros: int() refuses more
    than 4,300 (igap26: an image's NVIDIA_REQUIRE_CUDA 'cuda>=' and 5,000 digits was an internal error)."""

    def parts(v: str) -> list[tuple[int, str]]:
        out = [(len(t), t) for t in (x.lstrip("0") for x in v.split(".") if x)]
        while out and out[-1] == (0, ""):
            out.pop()
        return out

    pa, pb = parts(a), parts(b)
    width = max(len(pa), len(pb))
    ta, tb = tuple(pa + [(0, "")] * (width - len(pa))), tuple(pb + [(0, "")] * (width - len(pb)))
    return {
        "=": ta == tb,
        "!=": ta != tb,
        "<": ta < tb,
        "<=": ta <= tb,
        ">": ta > tb,
        ">=": ta >= tb,
    }[op]


@dataclass(frozen=True)
class BrandWord:
    """The word one toolkit (release range or mode) compares for a GPU's brand."""

    word: str | None  # None: not known (a later release, not read, may name this brand)
    exact: bool = False  # compared case-sensitively (nvidia-container-toolkit's Go check), else case-insensitively
    first_only: bool = False  # that toolkit reads the brand of GPU 0 only; the other GPUs' brands are not checked


@dataclass(frozen=True)
class Device:
    """One visible GPU as the requirement language sees it."""

    arch: str | None  # compute capability, "9.0"
    brand: str | None  # the brand word the toolkit compares ("Tesla", "GeForce", ...); None when not known
    # where the word depends on the toolkit on the box (not read): each toolkit's word; judged with each, the
    # outcome counts only when they agree
    words: tuple[BrandWord, ...] = ()
    label: str = ""  # the brand as NVML names it (GEFORCE), for messages
    exact: bool = False  # `brand` compares case-sensitively
    first: bool = True  # GPU 0 (the one a first_only toolkit reads)

    def variants(self) -> list[Device | None]:
        """This GPU as each toolkit sees it; None where that toolkit does not check this GPU's brand or arch."""
        if not self.words:
            return [self]
        return [
            None if w.first_only and not self.first else replace(self, brand=w.word, exact=w.exact, words=())
            for w in self.words
        ]


def brand_words(nvml_name: str | None, table: Mapping[str, Any]) -> tuple[BrandWord, ...]:
    """The words the toolkits give a GPU of NVML brand `nvml_name` (components.json driver.container_brands):
    one per toolkit entry, deduplicated; a word None where not known (no brand read, a name NVML's enum table does
    not hold, or a brand an entry with `later_unread` does not name, which a later release may)."""
    if not nvml_name:
        return (BrandWord(None),)
    name = nvml_name.upper()
    known = {str(v) for v in ((table.get("nvml_enum") or {}).get("codes") or {}).values()}
    entries = [
        e
        for e in table.get("toolkit_words") or []
        if isinstance(e, Mapping) and e.get("checks") is not False and e.get("modelled") is not False
    ]  # a mode that checks nothing, or a check not modelled, has no words (select_checkers decides about them)
    if name not in known or not entries:
        return (BrandWord(None),)
    out: list[BrandWord] = []
    for entry in entries:
        words = entry.get("words") or {}
        word = words.get(name, entry.get("default"))
        exact, first = bool(entry.get("case_sensitive")), entry.get("gpus") == "first"
        found = [BrandWord(word if isinstance(word, str) else None, exact, first)]
        if entry.get("later_unread") and name not in words and name != "UNKNOWN":
            found.append(BrandWord(None, exact, first))
        out += [w for w in found if w not in out]
    return tuple(out)


def shipped_brand_table() -> Mapping[str, Any]:
    """components.json driver.container_brands of the manifests in use (shipped, with the user's)."""
    from stackcheck.knowledge.loader import load

    driver = load().components.get("driver") or {}
    table = driver.get("container_brands") if isinstance(driver, Mapping) else None
    return table if isinstance(table, Mapping) else {}


def _check(c: Constraint, driver: str | None, cuda: str | None, device: Device | None) -> bool | None:
    if c.name == "cuda":
        return None if not cuda or not _is_version(cuda) else compare_versions(cuda, c.op, c.value)
    if c.name == "driver":
        return None if not driver or not _is_version(driver) else compare_versions(driver, c.op, c.value)
    if device is None:
        return True  # no GPU visible: the toolkit does not check arch or brand
    if c.name == "arch":
        return None if not device.arch or not _is_version(device.arch) else compare_versions(device.arch, c.op, c.value)
    if device.brand is None:
        return None
    same = device.brand == c.value if device.exact else device.brand.lower() == c.value.lower()
    return same if c.op == "=" else not same


def _all(values: Sequence[bool | None]) -> bool | None:
    if any(v is False for v in values):
        return False
    return None if any(v is None for v in values) else True


def _any(values: Sequence[bool | None]) -> bool | None:
    if any(v is True for v in values):
        return True
    return None if any(v is None for v in values) else False


def _where(device: Device | None) -> str:
    if device is None:
        return ""
    parts = [f"cc {device.arch}"] if device.arch else []
    if device.label or device.brand:
        words = sorted({w.word for w in device.words if w.word}) or ([device.brand] if device.brand else [])
        said = f" (toolkit word {' / '.join(words)})" if words and device.label else ""
        parts.append(f"brand {device.label or device.brand}{said}")
    return f" on a GPU of {', '.join(parts)}" if parts else ""


def _driver(version: str | None, cuda: str | None) -> str:
    return f"driver {version or '?'} (CUDA {cuda or '?'})"


@dataclass(frozen=True)
class Judgement:
    satisfied: bool | None  # None: unknown (a value the constraints need was not known)
    failed: str | None = None  # the requirement text that fails (as the toolkit's message shows it)
    reason: str = ""


def judge(
    reqs: RequireSet,
    driver_version: str | None,
    driver_cuda: str | None,
    devices: Sequence[Device] = (),
) -> Judgement:
    """Would the toolkit start this image on this driver and these GPUs?"""
    if reqs.disabled:
        return Judgement(True, reason="NVIDIA_DISABLE_REQUIRE is set: the toolkit checks nothing")
    if reqs.errors:
        return Judgement(False, reqs.errors[0], "invalid expression: the toolkit refuses to start the container")
    if not reqs.requirements:
        return Judgement(True, reason="the image states no NVIDIA_REQUIRE_* requirement")
    targets: list[Device | None] = list(dict.fromkeys(devices)) or [None]  # identical GPUs judged once
    results: list[bool | None] = []
    undecided_brand = False
    for device in targets:
        variants = device.variants() if device is not None else [None]
        for req in reqs.requirements:
            if not req.alternatives:
                continue  # an empty requirement holds (dsl_evaluate starts from true)
            values = [
                _any([_all([_check(c, driver_version, driver_cuda, v) for c in alt]) for alt in req.alternatives])
                for v in variants
            ]
            value = values[0] if all(x is values[0] for x in values) else None
            if value is False:
                return Judgement(
                    False, req.text, f"unsatisfied condition{_where(device)}: {_driver(driver_version, driver_cuda)}"
                )
            undecided_brand = undecided_brand or (value is None and len(set(values)) > 1)
            results.append(value)
    if any(v is None for v in results):
        missing = [n for n, v in (("driver version", driver_version), ("driver CUDA version", driver_cuda)) if not v]
        what = ", ".join(missing) or (
            "the GPU brand's word: the toolkits name it differently (libnvidia-container before and from 1.9.0, "
            "nvidia-container-toolkit's own check in CDI/CSV mode), and which one runs on this box is not read"
            if undecided_brand
            else "the GPU brand"
        )
        return Judgement(None, reason=f"not known: {what}")
    return Judgement(True, reason=f"driver {driver_version} (CUDA {driver_cuda}) meets every requirement")
