"""CUDA compilation targets and whether they run on a GPU of a given compute capability.

Rules (manifests/architectures.json carries them with their sources):
- SASS for sm_XY (plain) runs on X.Z for Z >= Y, same major X only (binary compatibility within a major).
- SASS for sm_XYa (architecture-specific) runs only on exactly X.Y.
- SASS for sm_XYf (family-specific, CUDA >= 12.9) runs on X.Z for Z >= Y, same major.
- PTX for compute_XY (also compute_XYa/f) is JIT-compiled by the driver for any GPU with capability >= X.Y
  (the `a`/`f` PTX flavours only within their exact capability / family).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Literal, NamedTuple

_TARGET = re.compile(r"^(sm|compute)_(\d+)(\d)([af]?)$")

Coverage = Literal["sass", "ptx", "none"]


class Target(NamedTuple):
    """One compiled target: kind 'sass' (sm_...) or 'ptx' (compute_...). Ordered and hashed by its fields,
    in this order (a NamedTuple, not a dataclass: importing dataclasses costs ~8 ms of every start)."""

    major: int
    minor: int
    suffix: str  # "", "a" or "f"
    kind: Literal["sass", "ptx"]

    @property
    def name(self) -> str:
        prefix = "sm" if self.kind == "sass" else "compute"
        return f"{prefix}_{self.major}{self.minor}{self.suffix}"


@lru_cache(maxsize=2048)
def parse_target(text: str) -> Target | None:
    """'sm_120a' -> Target(12, 0, 'a', 'sass'); 'compute_90' -> PTX; also accepts '12.0', '12.0a', '9.0+PTX'.
    Memoised (a Target is immutable): the engine reads the same arch lists for every candidate stack."""
    t = text.strip().lower()
    m = _TARGET.match(t)
    if m:
        kind: Literal["sass", "ptx"] = "sass" if m.group(1) == "sm" else "ptx"
        return Target(int(m.group(2)), int(m.group(3)), m.group(4), kind)
    # TORCH_CUDA_ARCH_LIST style: "12.0", "9.0a", "8.6+PTX" (the +PTX part is handled by expand_arch_list)
    m2 = re.match(r"^(\d+)\.(\d)([af]?)$", t)
    if m2:
        return Target(int(m2.group(1)), int(m2.group(2)), m2.group(3), "sass")
    return None


def expand_arch_list(items: list[str]) -> list[Target]:
    """Parse a list of targets; 'X.Y+PTX' yields both sm_XY and compute_XY. Unknown items are skipped."""
    out: list[Target] = []
    for item in items:
        base, plus, rest = item.strip().partition("+")
        t = parse_target(base)
        if t is None:
            continue
        out.append(t)
        if plus and rest.strip().lower() == "ptx":
            out.append(Target(t.major, t.minor, t.suffix, "ptx"))
    return out


def runs_on(target: Target, cc: tuple[int, int]) -> bool:
    major, minor = cc
    if target.kind == "sass":
        if target.suffix == "a":
            return (target.major, target.minor) == (major, minor)
        return target.major == major and minor >= target.minor
    # PTX: JIT-compiled forward; arch- and family-specific PTX keep their restriction
    if target.suffix == "a":
        return (target.major, target.minor) == (major, minor)
    if target.suffix == "f":
        return target.major == major and minor >= target.minor
    return (major, minor) >= (target.major, target.minor)


def coverage(targets: list[Target], cc: tuple[int, int]) -> Coverage:
    """'sass' if some SASS runs on cc, else 'ptx' if some PTX can be JIT-compiled for it, else 'none'."""
    if any(t.kind == "sass" and runs_on(t, cc) for t in targets):
        return "sass"
    if any(t.kind == "ptx" and runs_on(t, cc) for t in targets):
        return "ptx"
    return "none"


def covering(targets: list[Target], cc: tuple[int, int]) -> list[str]:
    """Names of the targets that serve cc (for a verdict's 'observed' text)."""
    return sorted({t.name for t in targets if runs_on(t, cc)})
