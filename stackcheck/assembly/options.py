"""What a command asked for (`Options`), and the --assume-gpu / --assume-driver values as people write them
read against the manifests (`gpu_spec`, `driver_spec`). Below the command line: the pipeline reads these,
and stackcheck.commands.arguments fills an Options from argparse."""

from __future__ import annotations

import re

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.knowledge.loader import Manifests


class Options:
    """What a command asked for. (A plain class, not a dataclass: importing dataclasses costs ~8 ms of
    every start, through inspect.)"""

    def __init__(
        self,
        facts_file: str | None = None,
        manifests_dirs: list[str] | None = None,
        assume_gpu: str | None = None,
        assume_driver: str | None = None,
        assume_interconnect: str | None = None,
        strict: bool = False,
        deep: bool = False,
        timeout_s: float = 8.0,
        launch: dict[str, Any] | None = None,
        python: str | None = None,
        env_dir: str | None = None,
        root: str | None = None,
        image: str | None = None,
        platform: str | None = None,
        host_facts: str | None = None,
        command: list[str] | None = None,
        cwd: str | None = None,
        cache_dir: str | None = None,
        launch_dir: str | None = None,
    ) -> None:
        self.facts_file = facts_file
        self.manifests_dirs: list[str] = manifests_dirs if manifests_dirs is not None else []
        self.assume_gpu = assume_gpu
        self.assume_driver = assume_driver
        self.assume_interconnect = assume_interconnect
        self.strict = strict
        self.deep = deep
        self.timeout_s = timeout_s
        self.launch: dict[str, Any] = launch if launch is not None else {}
        # the target (stackcheck.assembly.target): which box, which interpreter's packages
        self.python = python  # --python PATH
        self.env_dir = env_dir  # --env DIR
        self.root = root  # --root DIR
        self.image = image  # --image PATH
        self.platform = platform  # --platform OS/ARCH[/VARIANT]: which image of a multi-platform file
        self.host_facts = host_facts  # --host-facts FILE: driver and GPUs from a saved report
        self.command = command  # the gated command: its interpreter is the target
        self.cwd = cwd  # where the gated command starts (uv run finds its project from there)
        self.cache_dir = cache_dir  # interpreter answers; None: the user cache dir, "": none
        # where a gate of this host's launch starts without --cwd: the gate's own working directory (igap45; never for
        # --facts, --image or --root), which the probes read a relative LD_LIBRARY_PATH / PATH entry from
        self.launch_dir = launch_dir

    def __repr__(self) -> str:
        return f"Options({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"

    def __eq__(self, other: object) -> bool:
        return vars(self) == vars(other) if isinstance(other, Options) else NotImplemented

    __hash__ = None  # type: ignore[assignment]


def _norm_gpu(text: str) -> str:
    words = [w for w in re.split(r"[\s_]+", text.strip().lower()) if w not in ("nvidia", "geforce", "")]
    return " ".join(words)


def _arch_ccs(manifests: Manifests) -> list[str]:
    return [str(a.get("compute_capability")) for a in manifests.architectures if a.get("compute_capability")]


def gpu_spec(spec: str, manifests: Manifests, default_count: int = 1) -> tuple[str, int, str | None]:
    """--assume-gpu as people write it -> (compute capability, count, model name or None).

    Accepted: `12.0`, `12.0x8`, `8x12.0`, `sm120`, `sm_120`, `120` (with `xN` or `Nx` too), and a GPU name
    that manifests/architectures.json knows (`"RTX 5090"`, `B200`, `"NVIDIA H200x8"`, `8x"RTX PRO 6000"`).
    The model is named from the given name (a capability alone names the architecture, never one card);
    `12.0x` and unknown capabilities or names are usage errors that list what is known."""
    from stackcheck.errors import UsageError

    text = spec.strip()
    example = "for example 12.0x8, 8x12.0, sm_120, 120 or 'RTX 5090'"
    if not text:
        raise UsageError(f"--assume-gpu {spec!r}: empty; {example}")
    if re.search(r"(?i)[\d\s'\"][x×*]\s*$", text) or re.match(r"(?i)^[x×*]\s*\d", text):
        raise UsageError(f"--assume-gpu {spec!r}: the count after x is missing; {example}")
    # NAMExN or NxNAME: the x must follow a digit, a space or a quote ("RTX 5090" has an X of its own)
    candidates: list[tuple[str, int | None]] = []
    m = re.match(r"(?i)^(.*?[\d'\")\s])\s*[x×*]\s*(\d+)$", text)
    if m:
        candidates.append((m.group(1), _count(m.group(2))))
    m = re.match(r"(?i)^(\d+)\s*[x×*]\s*(\S.*)$", text)
    if m:
        candidates.append((m.group(2), _count(m.group(1))))
    candidates.append((text, None))
    for base, count in candidates:
        found = _gpu_base(base.strip().strip("'\"").strip(), manifests)
        if found is None:
            continue
        if count is not None and not 0 < count <= 4096:
            raise UsageError(f"--assume-gpu {spec!r}: a count of 1 to 4096 GPUs; {example}")
        cc, name = found
        known = _arch_ccs(manifests)
        if known and cc not in known:
            ordered = sorted(known, key=lambda c: tuple(int(x) for x in c.split(".")))
            raise UsageError(
                f"--assume-gpu {spec!r}: no architecture with compute capability {cc} in the manifests "
                f"(known: {', '.join(ordered)})"
            )
        return cc, count if count is not None else max(1, default_count), name
    base = candidates[0][0] if len(candidates) > 1 else text
    ambiguous = _gpu_matches(base.strip().strip("'\""), manifests)[1]
    if len({cc for cc, _ in ambiguous}) > 1:
        names = ", ".join(sorted({name for _, name in ambiguous})[:6])
        raise UsageError(f"--assume-gpu {spec!r}: several GPUs match ({names}); name one, or give its capability")
    raise UsageError(
        f"--assume-gpu {spec!r}: neither a compute capability nor a GPU that manifests/architectures.json knows; "
        + example
    )


def _count(digits: str) -> int:
    """A GPU count's digits (a `\\d+` match) as a number; 0 (out of range: the caller's usage error) where
    whole_number reads none (igap26: `--assume-gpu 12.0x` and 5,000 digits was an internal error, exit 4)."""
    from stackcheck.digits import whole_number

    return whole_number(digits) or 0


def _gpu_base(text: str, manifests: Manifests) -> tuple[str, str | None] | None:
    """(cc, model name or None) for a capability (`12.0`, `sm_120`, `120`) or a known GPU name; None when
    it is neither. A capability that is not in the manifests still parses (the caller says it is unknown)."""
    if re.fullmatch(r"\d+\.\d+", text):
        return text, None
    m = re.fullmatch(r"(?i)(?:sm|compute)?[_-]?(\d{2,3})[af]?", text)
    if m:
        digits = m.group(1)
        return f"{int(digits[:-1])}.{digits[-1]}", None
    exact, partial = _gpu_matches(text, manifests)
    if exact:
        return exact[0]
    ccs = sorted({cc for cc, _ in partial})
    if len(ccs) == 1:  # a family name ("H100"): its capability, and the name as it was given
        return ccs[0], text if text.lower().startswith("nvidia") else f"NVIDIA {text}"
    return None


def _gpu_matches(text: str, manifests: Manifests) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(exact, partial) matches of a GPU name against architectures.json: [(cc, full name)]."""
    wanted = _norm_gpu(text)
    exact: list[tuple[str, str]] = []
    partial: list[tuple[str, str]] = []
    for arch in manifests.architectures:
        cc = str(arch.get("compute_capability"))
        for g in arch.get("gpus") or []:
            name = g if isinstance(g, str) else str(g.get("name"))
            norm = _norm_gpu(name)
            if norm == wanted:
                exact.append((cc, name))
            elif wanted and re.search(rf"(^|\s){re.escape(wanted)}(\s|$)", norm):
                partial.append((cc, name))
    return exact, partial


def driver_spec(text: str, manifests: Manifests) -> tuple[str, str]:
    """--assume-driver -> (version, how it reads in `assumed`). A full version (`580.95.05`) is taken as it is;
    a branch (`580`) is judged as the branch's first release, as the plan speaks of branches; a CUDA version
    copied from nvidia-smi's header (`13.0`) is a usage error that shows both right forms."""
    from stackcheck.errors import UsageError

    value = text.strip()
    branches = [b for b in (manifests.components.get("driver") or {}).get("branches") or [] if isinstance(b, dict)]
    if re.fullmatch(r"\d{3,}(\.\d+){1,2}", value):
        return value, f"driver={value}"
    if re.fullmatch(r"\d{3,}", value):
        hit = next((b for b in branches if str(b.get("branch")) == value), None)
        if hit is None or not hit.get("first_version"):
            known = ", ".join(str(b.get("branch")) for b in branches)
            raise UsageError(f"--assume-driver {value}: no driver branch {value} in the manifests (known: {known})")
        first = str(hit["first_version"])
        return first, f"driver={first} (branch {value}, judged as its first release)"
    if re.fullmatch(r"\d{1,2}\.\d+(\.\d+)?", value):
        fits = [b for b in branches if str(b.get("cuda")) == ".".join(value.split(".")[:2])]
        branch = str(fits[0]["branch"]) if fits else "580"
        first = str(fits[0].get("first_version")) if fits else "580.65.06"
        raise UsageError(
            f"--assume-driver {value}: that is a CUDA version (nvidia-smi's header shows the newest CUDA the "
            f"driver supports), not a driver; give the driver version, e.g. --assume-driver {first}, "
            f"or its branch, --assume-driver {branch}"
        )
    raise UsageError(f"--assume-driver {text!r}: expected a driver version such as 580.95.05 or a branch such as 580")
