"""The solver: the candidate values of every component (`Space`), the consistent stacks among them
(`enumerate_stacks`, pruned backtracking), and why a stack does not hold together (`violations`). Pure.

A *stack* is one choice per component: SGLang release, torch release + CUDA variant, kernel package
(sgl-kernel / sglang-kernel) release + variant, flashinfer-python release, NVIDIA driver (the installed one
or a branch). A stack is consistent when
- torch's variant has a target for every GPU on the box (stackcheck.facts.archs.coverage, per GPU model);
- the driver supports torch's CUDA (branch CUDA, or the CUDA minimum-driver table for the installed
  driver) and every GPU's architecture (architectures.json min_driver);
- the kernel release pins the chosen torch (`requires`) and its variant is built for torch's CUDA major
  (an exact CUDA match is preferred);
- SGLang's pins (`requires`) hold for torch, the kernel package and flashinfer-python;
- an SGLang release to install has a file pip installs here: its Requires-Python admits the box's Python and
  its wheels' glibc floor (`wheel_glibc`) is not above the box's glibc (where the facts say them).

Search: backtracking in dependency order (SGLang, whose pins bound everything else, then torch, kernel,
flashinfer, driver); each level's domain is pruned by the constraints with the levels already chosen, and
domains are ordered newest first (the installed driver first, then LTS/production branches, lowest that
suffices). `Stack.key` is the preference order (smallest: newest)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache

from stackcheck.errors import UsageError
from stackcheck.facts.archs import coverage, expand_arch_list
from stackcheck.facts.model import KERNEL_PACKAGES, cc_tuple
from stackcheck.facts.versions import compare_numeric, numeric_tuple, parse_version, public, same_public, variant_of
from stackcheck.facts.versions import version_in as _version_in
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.record import Frozen, field, record
from stackcheck.verdicts.context import Context

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.knowledge.types import Release


@lru_cache(maxsize=8192)
def version_in(version: str, spec: str) -> bool | None:
    """stackcheck.facts.versions.version_in, memoised: the solver asks the same questions many times."""
    return _version_in(version, spec)


@lru_cache(maxsize=1024)
def exact_pin(spec: str) -> Any:
    """The version an `==V` specifier (one clause, no wildcard) names, else None. Such a pin is met exactly
    by the releases whose public version equals V (versions.version_in's `==`), so the solver looks those up
    in an index instead of testing every release: with years more releases, a scan per SGLang release made
    the search quadratic."""
    from stackcheck.facts.versions import parse_specifier

    clauses = parse_specifier(spec)
    if clauses is None or len(clauses) != 1:
        return None
    op, target = clauses[0]
    if op != "==" or target.endswith(".*"):
        return None
    return parse_version(target)


def _by_public(items: list[Any], version_of: Any) -> dict[Any, list[int]]:
    """public version -> the positions (in order) of the items of that version."""
    out: dict[Any, list[int]] = {}
    for i, item in enumerate(items):
        v = public(version_of(item))
        if v is not None:
            out.setdefault(v, []).append(i)
    return out


def _pinned(items: list[Any], index: dict[Any, list[int]], spec: str | None) -> list[tuple[int, Any]] | None:
    """(position, item) of the items an exact pin admits, in order; None when `spec` is not an exact pin."""
    pin = exact_pin(spec) if spec is not None else None
    if pin is None:
        return None
    return [(i, items[i]) for i in index.get(pin, [])]


COMPONENTS = ("driver", "torch", "kernel", "flashinfer", "sglang")
ALIASES = {
    "driver": "driver",
    "nvidia-driver": "driver",
    "torch": "torch",
    "pytorch": "torch",
    "kernel": "kernel",
    **dict.fromkeys(KERNEL_PACKAGES, "kernel"),
    "flashinfer": "flashinfer",
    "flashinfer-python": "flashinfer",
    "sglang": "sglang",
}
KIND_RANK = {"lts": 0, "production": 1, "new-feature": 2, "eol": 3}


def component_name(text: str, option: str = "--hold") -> str:
    """A component as the user names it ('sgl-kernel', 'flashinfer', 'driver') -> the planner's name."""
    name = ALIASES.get(text.strip().lower())
    if name is None:
        raise UsageError(f"{option} {text!r}: unknown component (expected one of {', '.join(sorted(ALIASES))})")
    return name


class Choice(Frozen):
    """One value of one component. (Frozen, compared and hashed without its `release`.)"""

    __slots__ = ("component", "cuda", "current", "index_only", "name", "rank", "release", "variant", "version")
    COMPARED = ("component", "name", "version", "variant", "cuda", "rank", "current", "index_only")
    component: str
    name: str  # package name, or "driver"
    version: str  # public version; for the driver: the installed version or the branch
    variant: str | None  # torch / kernel CUDA variant ("cu130")
    cuda: str | None  # CUDA of the build (torch, kernel), or the highest CUDA the driver supports
    rank: int  # position in the component's preference order (0 = most preferred)
    current: bool  # what is installed now
    index_only: bool  # the variant is on the project's wheel index only, tagged +variant
    #: the manifest record of the choice: a components.json release, or a driver branch (`driver.branches`)
    release: Release | dict[str, Any]

    def __init__(
        self,
        component: str,
        name: str,
        version: str,
        variant: str | None = None,
        cuda: str | None = None,
        rank: int = 0,
        current: bool = False,
        index_only: bool = False,
        release: Release | dict[str, Any] | None = None,
    ) -> None:
        setter = object.__setattr__
        setter(self, "component", component)
        setter(self, "name", name)
        setter(self, "version", version)
        setter(self, "variant", variant)
        setter(self, "cuda", cuda)
        setter(self, "rank", rank)
        setter(self, "current", current)
        setter(self, "index_only", index_only)
        setter(self, "release", {} if release is None else release)  # a fresh dict for each, as the factory

    @property
    def label(self) -> str:
        if self.component == "driver":
            if self.current:
                return self.version
            return f"{self.version} branch (CUDA {self.cuda})"
        if self.variant and self.component in ("torch", "kernel") and (self.component == "torch" or self.index_only):
            return f"{self.version}+{self.variant}"
        return self.version


class Stack(Frozen):
    """A candidate stack: one choice of each component (no kernel package for an SGLang without one)."""

    __slots__ = ("driver", "flashinfer", "kernel", "sglang", "torch")
    sglang: Choice
    torch: Choice
    kernel: Choice | None
    flashinfer: Choice
    driver: Choice

    def __init__(
        self, sglang: Choice, torch: Choice, kernel: Choice | None, flashinfer: Choice, driver: Choice
    ) -> None:
        setter = object.__setattr__
        setter(self, "sglang", sglang)
        setter(self, "torch", torch)
        setter(self, "kernel", kernel)
        setter(self, "flashinfer", flashinfer)
        setter(self, "driver", driver)

    def get(self, component: str) -> Choice | None:
        value: Choice | None = getattr(self, component)
        return value

    def key(self) -> tuple[int, ...]:
        mismatch = 0
        if self.kernel is not None and self.kernel.cuda and self.torch.cuda and self.kernel.cuda != self.torch.cuda:
            mismatch = 1
        return (
            self.sglang.rank,
            self.torch.rank // 100,
            # within a torch release, a build the installed driver already supports beats a newer CUDA build
            # that needs a driver upgrade (a node drain and a reboot)
            0 if self.driver.current else 1,
            mismatch,
            self.torch.rank % 100,
            self.kernel.rank if self.kernel else 0,
            self.flashinfer.rank,
            self.driver.rank,
        )

    def changes(self) -> int:
        """How many components the stack replaces (a choice that is not the box's current one); read by attribute, not
        through get: the planner sorts every candidate stack by it."""
        n = 0
        for ch in (self.driver, self.torch, self.kernel, self.flashinfer, self.sglang):  # COMPONENTS
            if ch is not None and not ch.current:
                n += 1
        return n

    def describe(self) -> str:
        parts = [f"sglang {self.sglang.label}", f"torch {self.torch.label}"]
        if self.kernel is not None:
            parts.append(f"{self.kernel.name} {self.kernel.label}")
        parts.append(f"flashinfer-python {self.flashinfer.label}")
        parts.append(f"driver {self.driver.label}")
        return ", ".join(parts)


# ---- the box as it is -----------------------------------------------------------------------------


# ---- the box as it is -----------------------------------------------------------------------------


@record
class Box:
    """What the planner reads from the facts once."""

    ccs: list[tuple[int, int]]
    aarch64: bool
    driver_version: str | None
    driver_cuda: str | None
    torch: tuple[str, str | None] | None  # (public version, variant)
    kernel: tuple[str, str, str | None] | None  # (name, public version, variant)
    flashinfer: str | None
    sglang: str | None
    min_driver: str | None  # the newest min_driver of the GPUs' architectures
    python: str | None = None  # system.python (the interpreter that runs SGLang)
    glibc: str | None = None  # system.glibc
    # components the facts say are installed without saying which version (torch, flashinfer, sglang): the
    # planner reads them as it reads nothing installed, a step's `from` says what is there
    unversioned: tuple[str, ...] = ()

    def installed_text(self, component: str) -> str | None:
        """What is installed of a component, as a step's `from` says it (None: nothing)."""
        if component in self.unversioned:
            return "installed, version not known"
        if component == "driver":
            return f"{self.driver_version} (CUDA {self.driver_cuda})" if self.driver_version else None
        if component == "torch":
            if self.torch is None:
                return None
            return f"{self.torch[0]}+{self.torch[1]}" if self.torch[1] else self.torch[0]
        if component == "kernel":
            if self.kernel is None:
                return None
            if not self.kernel[1]:
                return f"{self.kernel[0]}, version not known"
            return f"{self.kernel[0]} {self.kernel[1]}" + (f" ({self.kernel[2]})" if self.kernel[2] else "")
        if component == "flashinfer":
            return self.flashinfer
        if component == "sglang":
            return self.sglang
        return None


def _public_text(version: str | None) -> str | None:
    if version is None:
        return None
    p = public(version)
    return str(p) if p is not None else version


def _variant_for(ctx: Context, name: str, version: str) -> str | None:
    p = ctx.package(name) or {}
    if isinstance(p.get("variant"), str):
        return str(p["variant"])
    tagged = variant_of(version)
    if tagged:
        return tagged
    if isinstance(p.get("cuda"), str):
        from stackcheck.facts.versions import tag_from_cuda

        return tag_from_cuda(str(p["cuda"]))
    rel = find_release(ctx, name, version)
    pv = rel.get("pypi_variant") if rel else None
    return str(pv) if isinstance(pv, str) else None


def find_release(ctx: Context, name: str, version: str) -> Release | None:
    want = public(version)
    if want is None:
        return None
    return ctx.manifests.release_by_public(name, want)


def read_box(ctx: Context) -> Box:
    ccs = [t for m in ctx.gpu_models() if (t := cc_tuple(m.cc)) is not None]
    machine = str((ctx.facts.get("system") or {}).get("machine") or "")
    driver = dict(ctx.facts.get("driver") or {})
    dv = str(driver["version"]) if isinstance(driver.get("version"), str) else None
    dcuda = str(driver["cuda"]) if isinstance(driver.get("cuda"), str) else None
    if dv:
        table = ctx.manifests.driver_cuda(dv)
        if table and (dcuda is None or (compare_numeric(table, dcuda) or 0) > 0):
            dcuda = table
    tv = ctx.installed_version("torch")
    torch: tuple[str, str | None] | None = None
    if tv:
        torch = (_public_text(tv) or tv, ctx.torch_variant() or _variant_for(ctx, "torch", tv))
    kname = ctx.kernel_package()
    kernel = None
    if kname:
        kv = ctx.installed_version(kname) or ""
        kernel = (kname, _public_text(kv) or kv, _variant_for(ctx, kname, kv))
    min_driver = None
    for arch in ctx.manifests.architectures:
        t = cc_tuple(str(arch.get("compute_capability")))
        need = arch.get("min_driver")
        if t in ccs and isinstance(need, str) and (min_driver is None or (compare_numeric(need, min_driver) or 0) > 0):
            min_driver = need
    return Box(
        ccs=ccs,
        aarch64=machine in ("aarch64", "arm64"),
        driver_version=dv,
        driver_cuda=dcuda,
        torch=torch,
        kernel=kernel,
        flashinfer=_public_text(ctx.installed_version("flashinfer-python")),
        sglang=_public_text(ctx.installed_version("sglang")),
        min_driver=min_driver,
        python=_text((ctx.facts.get("system") or {}).get("python")),
        glibc=_text((ctx.facts.get("system") or {}).get("glibc")),
        unversioned=tuple(
            component
            for component, name in (("torch", "torch"), ("flashinfer", "flashinfer-python"), ("sglang", "sglang"))
            if not ctx.installed_version(name) and (ctx.package(name) or {}).get("installed") is True
        ),
    )


def _text(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def not_installable(rel: Release, box: Box) -> str | None:
    """Why pip finds no file of this SGLang release for the box (its Requires-Python, its wheels' glibc floor),
    or None. A fact the box does not say decides nothing here."""
    sv = str(rel.get("version"))
    spec = rel.get("requires_python")
    if isinstance(spec, str) and box.python and version_in(box.python, spec) is False:
        return f"sglang {sv} declares Requires-Python {spec}: pip finds no distribution of it for Python {box.python}"
    floor = (rel.get("wheel_glibc") or {}).get("min")
    if isinstance(floor, str) and box.glibc and (compare_numeric(box.glibc, floor) or 0) < 0:
        tag = "manylinux_" + floor.replace(".", "_")
        return f"sglang {sv} ships {tag} wheels only: pip finds none for glibc {box.glibc}"
    return None


# ---- domains ----------------------------------------------------------------------------------------


def _newest_first(releases: list[Release]) -> list[Release]:
    keyed = [(parse_version(str(r.get("version", ""))), i, r) for i, r in enumerate(releases)]
    known = [(v, i, r) for v, i, r in keyed if v is not None]
    known.sort(key=lambda x: (x[0], -x[1]), reverse=True)
    return [r for _, _, r in known]


def cuda_key(cuda: str | None) -> tuple[int, ...]:
    return numeric_tuple(cuda or "") or (0,)


def same_version(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    pa, pb = public(a), public(b)
    return pa is not None and pa == pb


@record
class Restrict:
    """Holds and pins: a component kept where it is, or pinned to a version (and maybe a variant)."""

    hold: set[str] = field(default_factory=set)
    pins: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # component -> (version, variant)


class Space:
    """The candidate values of every component, precomputed once per plan."""

    def __init__(self, ctx: Context, box: Box) -> None:
        self.ctx = ctx
        self.box = box
        m = ctx.manifests
        self.sglang = _newest_first(m.releases("sglang"))
        self.torch = _newest_first(m.releases("torch"))
        self.kernels = {name: _newest_first(m.releases(name)) for name in KERNEL_PACKAGES}
        self.flashinfer = _newest_first(m.releases("flashinfer-python"))
        self._kernel_index = {n: _by_public(rels, lambda r: str(r.get("version"))) for n, rels in self.kernels.items()}
        self._fi_index = _by_public(self.flashinfer, lambda r: str(r.get("version")))
        self._torch_index: dict[Any, list[int]] | None = None
        self.branches = [b for b in (m.components.get("driver") or {}).get("branches") or [] if isinstance(b, dict)]
        self.date = m.date
        self.target_rules = ctx.target_rules()
        self._torch_choices: dict[str, list[Choice]] = {}
        self._kernel_cache: dict[tuple[str, str, str, str | None], list[Choice]] = {}
        self._fi_cache: dict[str | None, list[Choice]] = {}
        self._drivers: list[Choice] | None = None
        #: (torch's CUDA, the restriction by identity) -> (it, drivers_for's answer)
        self._drivers_for: dict[tuple[str | None, int], tuple[Restrict, list[Choice]]] = {}
        self.arch_problem: str | None = None

    # torch ----------------------------------------------------------------------------------------
    def torch_choices(self) -> list[Choice]:
        """Every torch release × variant that covers every GPU, newest release first, newest CUDA first."""
        if "all" in self._torch_choices:
            return self._torch_choices["all"]
        out: list[Choice] = []
        # whether a GPU of the box runs none of a variant's targets, by its list of targets: torch's builds of one CUDA
        # share theirs from release to release, so each list is parsed and judged once
        uncovered: dict[tuple[str, ...], bool] = {}
        for r_i, rel in enumerate(self.torch):
            version = str(rel.get("version"))
            variants = [v for v in rel.get("variants") or [] if v.get("cuda")]
            variants.sort(key=lambda v: cuda_key(str(v.get("cuda"))), reverse=True)
            for v_i, var in enumerate(variants):
                archs = var.get("archs_aarch64") if self.box.aarch64 and var.get("archs_aarch64") else var.get("archs")
                names = tuple(str(a) for a in archs or [])
                missed = uncovered.get(names)
                if missed is None:
                    targets = expand_arch_list(list(names))
                    missed = uncovered[names] = bool(self.box.ccs) and any(
                        coverage(targets, cc, self.target_rules) == "none" for cc in self.box.ccs
                    )
                if missed:
                    continue
                variant = str(var.get("variant"))
                cur = self.box.torch is not None and self.box.torch == (version, variant)
                out.append(
                    Choice(
                        "torch",
                        "torch",
                        version,
                        variant,
                        str(var.get("cuda")),
                        rank=r_i * 100 + v_i,
                        current=cur,
                        release=rel,
                    )
                )
        self._torch_choices["all"] = out
        return out

    def torch_pinned(self, spec: str | None) -> list[tuple[int, Choice]]:
        """The torch choices a pin of SGLang admits (all without one), in order."""
        torches = self.torch_choices()
        if spec is None:
            return list(enumerate(torches))
        if self._torch_index is None:
            self._torch_index = _by_public(torches, lambda t: t.version)
        pinned = _pinned(torches, self._torch_index, spec)
        if pinned is not None:
            return pinned
        return [(i, t) for i, t in enumerate(torches) if version_in(t.version, spec)]

    # kernel ---------------------------------------------------------------------------------------
    def kernel_choices(self, name: str, spec: str, torch: Choice) -> list[Choice]:
        key = (name, spec, torch.version, torch.cuda)
        if key not in self._kernel_cache:
            self._kernel_cache[key] = self._kernel_choices(name, spec, torch)
        return self._kernel_cache[key]

    def _kernel_choices(self, name: str, spec: str, torch: Choice) -> list[Choice]:
        out: list[Choice] = []
        releases = self.kernels.get(name, [])
        pinned = _pinned(releases, self._kernel_index.get(name, {}), spec)
        for r_i, rel in pinned if pinned is not None else enumerate(releases):
            version = str(rel.get("version"))
            if pinned is None and not version_in(version, spec):
                continue
            tpin = (rel.get("requires") or {}).get("torch")
            if isinstance(tpin, str) and not version_in(torch.version, tpin):
                continue
            variants = list(rel.get("variants") or [])
            variants.sort(key=lambda v: cuda_key(str(v.get("cuda"))), reverse=True)
            for v_i, var in enumerate(variants):
                cuda = str(var.get("cuda")) if var.get("cuda") else None
                if cuda and torch.cuda and cuda_key(cuda)[0] != cuda_key(torch.cuda)[0]:
                    continue
                variant = str(var.get("variant")) if var.get("variant") else None
                cur = self.box.kernel is not None and self.box.kernel[0] == name and self.box.kernel[1] == version
                if cur and self.box.kernel is not None and self.box.kernel[2] not in (None, variant):
                    cur = False
                out.append(
                    Choice(
                        "kernel",
                        name,
                        version,
                        variant,
                        cuda,
                        rank=r_i * 10 + v_i,
                        current=cur,
                        index_only=bool(var.get("index_only")) or rel.get("pypi_variant") != variant,
                        release=rel,
                    )
                )
        return out

    # flashinfer -----------------------------------------------------------------------------------
    def flashinfer_choices(self, spec: str | None) -> list[Choice]:
        if spec not in self._fi_cache:
            self._fi_cache[spec] = self._flashinfer_choices(spec)
        return self._fi_cache[spec]

    def _flashinfer_choices(self, spec: str | None) -> list[Choice]:
        out: list[Choice] = []
        pinned = _pinned(self.flashinfer, self._fi_index, spec)
        for r_i, rel in pinned if pinned is not None else enumerate(self.flashinfer):
            version = str(rel.get("version"))
            if pinned is None and spec is not None and not version_in(version, spec):
                continue
            out.append(
                Choice(
                    "flashinfer",
                    "flashinfer-python",
                    version,
                    rank=r_i,
                    current=same_version(self.box.flashinfer, version),
                    release=rel,
                )
            )
        return out

    # driver ---------------------------------------------------------------------------------------
    def driver_choices(self) -> list[Choice]:
        if self._drivers is None:
            self._drivers = self._driver_choices()
        return self._drivers

    def drivers_for(self, torch: Choice, restrict: Restrict) -> list[Choice]:
        """The driver choices the holds and pins allow that run this torch build (driver_ok), in order: a function
        of the build's CUDA (and of the box) alone, so worked out once per CUDA and restriction."""
        key = (torch.cuda, id(restrict))
        got = self._drivers_for.get(key)
        if got is None or got[0] is not restrict:
            ds = [d for d in self.driver_choices() if allowed(d, restrict) and driver_ok(d, torch, self.box)]
            got = self._drivers_for[key] = (restrict, ds)
        return got[1]

    def _driver_choices(self) -> list[Choice]:
        out: list[Choice] = []
        cur_branch = self.box.driver_version.split(".")[0] if self.box.driver_version else None
        if self.box.driver_version:
            out.append(
                Choice("driver", "driver", self.box.driver_version, cuda=self.box.driver_cuda, rank=0, current=True)
            )

        def pref(b: dict[str, Any]) -> tuple[int, int]:
            kind = str(b.get("kind"))
            eol = b.get("eol")
            if isinstance(eol, str) and eol < self.date:
                kind = "eol"
            return (KIND_RANK.get(kind, 9), int(str(b.get("branch", "0")) or 0))

        for i, b in enumerate(sorted(self.branches, key=pref), 1):
            branch = str(b.get("branch"))
            if branch == cur_branch:
                continue
            first = b.get("first_version")
            if (
                self.box.min_driver
                and isinstance(first, str)
                and (compare_numeric(first, self.box.min_driver) or 0) < 0
            ):
                continue
            if self.box.min_driver and not isinstance(first, str):
                need = numeric_tuple(self.box.min_driver)
                if need is not None and int(branch) < need[0]:
                    continue
            out.append(Choice("driver", "driver", branch, cuda=str(b.get("cuda")), rank=i, release=b))
        return out


def driver_ok(driver: Choice, torch: Choice, box: Box) -> bool:
    if driver.current and box.min_driver and (compare_numeric(driver.version, box.min_driver) or 0) < 0:
        return False
    if torch.cuda is None:
        return True
    if driver.cuda is None:
        return False
    return (compare_numeric(driver.cuda, torch.cuda) or 0) >= 0


def allowed(choice: Choice, restrict: Restrict) -> bool:
    if choice.component in restrict.hold and not choice.current:
        return False
    pin = restrict.pins.get(choice.component)
    if pin is None:
        return True
    version, variant = pin
    if choice.component == "driver":
        return choice.version == version or choice.version.split(".")[0] == version.split(".")[0]
    if not same_version(choice.version, version):
        return False
    return variant is None or choice.variant == variant


def enumerate_stacks(space: Space, restrict: Restrict, why: list[str] | None = None) -> Iterator[Stack]:
    """Every consistent stack allowed by the holds and pins, in search order (pruned backtracking)."""
    for s_i, rel in enumerate(space.sglang):
        sv = str(rel.get("version"))
        sg = Choice("sglang", "sglang", sv, rank=s_i, current=same_version(space.box.sglang, sv), release=rel)
        if not allowed(sg, restrict):
            continue
        if not sg.current and (refused := not_installable(rel, space.box)) is not None:
            if why is not None:
                why.append(refused)
            continue
        req = {k: str(v) for k, v in (rel.get("requires") or {}).items()}
        kname = next((k for k in KERNEL_PACKAGES if k in req), None)
        t_ok = [t for _, t in space.torch_pinned(req.get("torch")) if allowed(t, restrict)]
        if not t_ok and why is not None:
            why.append(f"sglang {sv} pins torch{req.get('torch', '')}: no allowed torch build for these GPUs")
        # (the FlashInfer choices depend on the SGLang release alone, the drivers on torch's build alone: worked out
        # once per release and per build, not per kernel and FlashInfer choice below them)
        fis = [f for f in space.flashinfer_choices(req.get("flashinfer-python")) if allowed(f, restrict)]
        for t in t_ok:
            kernels: list[Choice | None]
            if kname is not None:
                kernels = [k for k in space.kernel_choices(kname, req[kname], t) if allowed(k, restrict)]
                if not kernels and why is not None:
                    why.append(
                        f"sglang {sv} pins {kname}{req[kname]}: no allowed build for torch {t.label} (CUDA {t.cuda})"
                    )
            else:
                kernels = [None]
            ds = space.drivers_for(t, restrict)
            for k in kernels:
                for fi in fis:
                    if not ds and why is not None:
                        why.append(f"torch {t.label} needs a driver for CUDA {t.cuda}")
                    for d in ds:
                        yield Stack(sg, t, k, fi, d)


def violations(stack: Stack, box: Box) -> list[str]:
    """Why a (possibly inconsistent) stack does not hold together, in words."""
    out: list[str] = []
    t, d = stack.torch, stack.driver
    if not driver_ok(d, t, box):
        if d.current and box.min_driver and (compare_numeric(d.version, box.min_driver) or 0) < 0:
            out.append(f"driver {d.version} is older than {box.min_driver}, the first driver for these GPUs")
        else:
            out.append(f"torch {t.label} needs a driver for CUDA {t.cuda}; driver {d.label} supports CUDA {d.cuda}")
    req = {k: str(v) for k, v in (stack.sglang.release.get("requires") or {}).items()}
    sv = stack.sglang.version
    if "torch" in req and not version_in(t.version, req["torch"]):
        out.append(f"sglang {sv} pins torch{req['torch']}")
    kname = next((k for k in KERNEL_PACKAGES if k in req), None)
    k = stack.kernel
    if kname and (k is None or k.name != kname or not version_in(k.version, req[kname])):
        out.append(f"sglang {sv} pins {kname}{req[kname]}")
    if k is not None:
        tpin = (k.release.get("requires") or {}).get("torch")
        if isinstance(tpin, str) and not version_in(t.version, tpin):
            out.append(f"{k.name} {k.version} pins torch{tpin}")
        if k.cuda and t.cuda and cuda_key(k.cuda)[0] != cuda_key(t.cuda)[0]:
            out.append(f"{k.name} {k.label} is built for CUDA {k.cuda}, torch {t.label} for CUDA {t.cuda}")
    fspec = req.get("flashinfer-python")
    if fspec and not version_in(stack.flashinfer.version, fspec):
        out.append(f"sglang {sv} pins flashinfer-python{fspec}")
    return out


#: SGLang's pins the planner's own components hold (their steps set them): the rest follow pip's resolution
_OWN_PINS = frozenset(
    {"torch", "sglang", "flashinfer-python", "flashinfer-cubin", "flashinfer-jit-cache", *KERNEL_PACKAGES}
)


def pinned_companions(release: Mapping[str, Any], packages: Mapping[str, Any]) -> dict[str, str]:
    """The installed packages an SGLang release pins exactly (components.json `requires`, '==V') at another
    version, other than the planner's own components: name -> the pinned version, which `pip install sglang==R`
    installs in their place (SGLang's Requires-Dist)."""
    out: dict[str, str] = {}
    for name, spec in (release.get("requires") or {}).items():
        text = str(spec).strip()
        if name in _OWN_PINS or not text.startswith("==") or "," in text or "*" in text:
            continue
        version = text[2:].strip()
        have = packages.get(name)
        if not version or not isinstance(have, Mapping) or not have.get("installed"):
            continue
        installed = str(have.get("dist_version") or have.get("version") or "")
        if not same_public(installed, version):
            out[str(name)] = version
    return out


def pinned_additions(release: Mapping[str, Any], packages: Mapping[str, Any]) -> dict[str, str]:
    """The packages an SGLang release pins exactly (components.json `requires`, '==V') that the packages probe listed
    as not installed, other than the planner's own components: name -> the pinned version, which `pip install
    sglang==R` installs (igap33: transformers and torchao, unconditional Requires-Dist of sglang 0.5.3-0.5.23). Left
    out: a pin under an environment marker (`requires_read.markers`: 0.5.1 and 0.5.2 keep transformers and torchao
    under the runtime-common extra, which the plain install does not pull), a release whose pins were not read
    (inferred with no `requires_read`, as stackcheck.facts.implied), and a package the facts do not name (not known
    to be absent)."""
    return {name: spec[2:].strip() for name, spec in _pins_not_installed(release, packages).items() if _exact(spec)}


def ranged_additions(release: Mapping[str, Any], packages: Mapping[str, Any]) -> dict[str, str]:
    """The packages an SGLang release requires with a range (components.json `requires`, not '==V': sglang 0.5.17's
    'quack-kernels>=0.6.1') that the packages probe listed as not installed, under pinned_additions' other conditions:
    name -> the specifier. `pip install sglang==R` installs one release of the range, which one is not known here
    (the newest on the index the day it runs): after the step it is installed, its version unknown (igap52)."""
    return {name: spec for name, spec in _pins_not_installed(release, packages).items() if not _exact(spec)}


def _exact(spec: str) -> bool:
    """'==V' with one version (no other clause, no wildcard)."""
    return spec.startswith("==") and "," not in spec and "*" not in spec and bool(spec[2:].strip())


def _pins_not_installed(release: Mapping[str, Any], packages: Mapping[str, Any]) -> dict[str, str]:
    """pinned_additions' and ranged_additions' common part: name -> the stripped specifier of each requirement of
    the release without a marker, other than the planner's own components, on a package listed as not installed."""
    if release.get("inferred") and "requires_read" not in release:
        return {}
    markers = (release.get("requires_read") or {}).get("markers") or {}
    out: dict[str, str] = {}
    for name, spec in (release.get("requires") or {}).items():
        text = str(spec).strip()
        if name in _OWN_PINS or name in markers or not text:
            continue
        have = packages.get(name)
        if isinstance(have, Mapping) and have.get("installed") is False:
            out[str(name)] = text
    return out
