"""The upgrade planner: a constraint solver over the manifests' releases, then ordered steps. Pure.

A *stack* is one choice per component: SGLang release, torch release + CUDA variant, kernel package
(sgl-kernel / sglang-kernel) release + variant, flashinfer-python release, NVIDIA driver (the installed one
or a branch). A stack is consistent when
- torch's variant has a target for every GPU on the box (stackcheck.archs.coverage, per GPU model);
- the driver supports torch's CUDA (branch CUDA, or the CUDA minimum-driver table for the installed
  driver) and every GPU's architecture (architectures.json min_driver);
- the kernel release pins the chosen torch (`requires`) and its variant is built for torch's CUDA major
  (an exact CUDA match is preferred);
- SGLang's pins (`requires`) hold for torch, the kernel package and flashinfer-python.

Search: backtracking in dependency order (SGLang, whose pins bound everything else, then torch, kernel,
flashinfer, driver); each level's domain is pruned by the constraints with the levels already chosen, and
domains are ordered newest first (the installed driver first, then LTS/production branches, lowest that
suffices). Every consistent stack gets a preference key; the default target is the smallest key (newest),
`want` targets the fewest changed components, then the smallest key, among the stacks whose verdicts
(evaluated by the real engine on hypothetical facts) make the wanted features ok.

Steps are ordered driver, CUDA toolkit, torch, kernel, flashinfer, SGLang, manual patches; a step
`unblocks` the features blocked before the plan and ok after it and every earlier step."""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from stackcheck.archs import coverage, expand_arch_list
from stackcheck.context import Context
from stackcheck.errors import UsageError
from stackcheck.facts import Facts, cc_tuple
from stackcheck.verdicts import FeatureVerdict, evaluate_feature
from stackcheck.versions import (
    compare_numeric,
    cuda_from_tag,
    numeric_tuple,
    parse_version,
    public,
    variant_of,
)
from stackcheck.versions import version_in as _version_in


@lru_cache(maxsize=8192)
def version_in(version: str, spec: str) -> bool | None:
    """stackcheck.versions.version_in, memoised: the solver asks the same questions many times."""
    return _version_in(version, spec)


#: how many of the best stacks are tried for one that keeps every feature that is ok now
REGRESSION_SEARCH = 10

COMPONENTS = ("driver", "torch", "kernel", "flashinfer", "sglang")
ALIASES = {
    "driver": "driver",
    "nvidia-driver": "driver",
    "torch": "torch",
    "pytorch": "torch",
    "kernel": "kernel",
    "sgl-kernel": "kernel",
    "sglang-kernel": "kernel",
    "flashinfer": "flashinfer",
    "flashinfer-python": "flashinfer",
    "sglang": "sglang",
}
KERNEL_NAMES = ("sgl-kernel", "sglang-kernel")
KIND_RANK = {"lts": 0, "production": 1, "new-feature": 2, "eol": 3}
STEP_ORDER = ("driver", "toolkit", "torch", "kernel", "flashinfer", "sglang", "patch")


def component_name(text: str, option: str = "--hold") -> str:
    """A component as the user names it ('sgl-kernel', 'flashinfer', 'driver') -> the planner's name."""
    name = ALIASES.get(text.strip().lower())
    if name is None:
        raise UsageError(f"{option} {text!r}: unknown component (expected one of {', '.join(sorted(ALIASES))})")
    return name


@dataclass(frozen=True)
class Choice:
    """One value of one component."""

    component: str
    name: str  # package name, or "driver"
    version: str  # public version; for the driver: the installed version or the branch
    variant: str | None = None  # torch / kernel CUDA variant ("cu130")
    cuda: str | None = None  # CUDA of the build (torch, kernel), or the highest CUDA the driver supports
    rank: int = 0  # position in the component's preference order (0 = most preferred)
    current: bool = False  # what is installed now
    index_only: bool = False  # the variant is on the project's wheel index only, tagged +variant
    release: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def label(self) -> str:
        if self.component == "driver":
            if self.current:
                return self.version
            return f"{self.version} branch (CUDA {self.cuda})"
        if self.variant and self.component in ("torch", "kernel") and (self.component == "torch" or self.index_only):
            return f"{self.version}+{self.variant}"
        return self.version


@dataclass(frozen=True)
class Stack:
    sglang: Choice
    torch: Choice
    kernel: Choice | None
    flashinfer: Choice
    driver: Choice

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
        return sum(1 for c in COMPONENTS if (ch := self.get(c)) is not None and not ch.current)

    def describe(self) -> str:
        parts = [f"sglang {self.sglang.label}", f"torch {self.torch.label}"]
        if self.kernel is not None:
            parts.append(f"{self.kernel.name} {self.kernel.label}")
        parts.append(f"flashinfer-python {self.flashinfer.label}")
        parts.append(f"driver {self.driver.label}")
        return ", ".join(parts)


# ---- the box as it is -----------------------------------------------------------------------------


@dataclass
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
        from stackcheck.versions import tag_from_cuda

        return tag_from_cuda(str(p["cuda"]))
    rel = _find_release(ctx, name, version)
    pv = rel.get("pypi_variant") if rel else None
    return str(pv) if isinstance(pv, str) else None


def _find_release(ctx: Context, name: str, version: str) -> dict[str, Any] | None:
    want = public(version)
    if want is None:
        return None
    for rel in ctx.manifests.releases(name):
        if public(str(rel.get("version", ""))) == want:
            return rel
    return None


def read_box(ctx: Context) -> Box:
    ccs = [t for m in ctx.gpu_models() if (t := cc_tuple(m.cc)) is not None]
    machine = str((ctx.facts.get("system") or {}).get("machine") or "")
    driver = dict(ctx.facts.get("driver") or {})
    dv = str(driver["version"]) if isinstance(driver.get("version"), str) else None
    dcuda = str(driver["cuda"]) if isinstance(driver.get("cuda"), str) else None
    if dv:
        from stackcheck.pipeline import driver_cuda

        table = driver_cuda(ctx.manifests, dv)
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
    )


# ---- domains ----------------------------------------------------------------------------------------


def _newest_first(releases: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keyed = [(parse_version(str(r.get("version", ""))), i, r) for i, r in enumerate(releases)]
    known = [(v, i, r) for v, i, r in keyed if v is not None]
    known.sort(key=lambda x: (x[0], -x[1]), reverse=True)
    return [r for _, _, r in known]


def _cuda_key(cuda: str | None) -> tuple[int, ...]:
    return numeric_tuple(cuda or "") or (0,)


def _same_version(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    pa, pb = public(a), public(b)
    return pa is not None and pa == pb


@dataclass
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
        self.kernels = {name: _newest_first(m.releases(name)) for name in KERNEL_NAMES}
        self.flashinfer = _newest_first(m.releases("flashinfer-python"))
        self.branches = [b for b in (m.components.get("driver") or {}).get("branches") or [] if isinstance(b, dict)]
        self.date = m.date
        self._torch_choices: dict[str, list[Choice]] = {}
        self._kernel_cache: dict[tuple[str, str, str, str | None], list[Choice]] = {}
        self._fi_cache: dict[str | None, list[Choice]] = {}
        self._drivers: list[Choice] | None = None
        self.arch_problem: str | None = None

    # torch ----------------------------------------------------------------------------------------
    def torch_choices(self) -> list[Choice]:
        """Every torch release × variant that covers every GPU, newest release first, newest CUDA first."""
        if "all" in self._torch_choices:
            return self._torch_choices["all"]
        out: list[Choice] = []
        for r_i, rel in enumerate(self.torch):
            version = str(rel.get("version"))
            variants = [v for v in rel.get("variants") or [] if isinstance(v, dict) and v.get("cuda")]
            variants.sort(key=lambda v: _cuda_key(str(v.get("cuda"))), reverse=True)
            for v_i, var in enumerate(variants):
                archs = var.get("archs_aarch64") if self.box.aarch64 and var.get("archs_aarch64") else var.get("archs")
                targets = expand_arch_list([str(a) for a in archs or []])
                if self.box.ccs and any(coverage(targets, cc) == "none" for cc in self.box.ccs):
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

    # kernel ---------------------------------------------------------------------------------------
    def kernel_choices(self, name: str, spec: str, torch: Choice) -> list[Choice]:
        key = (name, spec, torch.version, torch.cuda)
        if key not in self._kernel_cache:
            self._kernel_cache[key] = self._kernel_choices(name, spec, torch)
        return self._kernel_cache[key]

    def _kernel_choices(self, name: str, spec: str, torch: Choice) -> list[Choice]:
        out: list[Choice] = []
        for r_i, rel in enumerate(self.kernels.get(name, [])):
            version = str(rel.get("version"))
            if not version_in(version, spec):
                continue
            tpin = (rel.get("requires") or {}).get("torch")
            if isinstance(tpin, str) and not version_in(torch.version, tpin):
                continue
            variants = [v for v in rel.get("variants") or [] if isinstance(v, dict)]
            variants.sort(key=lambda v: _cuda_key(str(v.get("cuda"))), reverse=True)
            for v_i, var in enumerate(variants):
                cuda = str(var.get("cuda")) if var.get("cuda") else None
                if cuda and torch.cuda and _cuda_key(cuda)[0] != _cuda_key(torch.cuda)[0]:
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
        for r_i, rel in enumerate(self.flashinfer):
            version = str(rel.get("version"))
            if spec is not None and not version_in(version, spec):
                continue
            out.append(
                Choice(
                    "flashinfer",
                    "flashinfer-python",
                    version,
                    rank=r_i,
                    current=_same_version(self.box.flashinfer, version),
                    release=rel,
                )
            )
        return out

    # driver ---------------------------------------------------------------------------------------
    def driver_choices(self) -> list[Choice]:
        if self._drivers is None:
            self._drivers = self._driver_choices()
        return self._drivers

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


def _allowed(choice: Choice, restrict: Restrict) -> bool:
    if choice.component in restrict.hold and not choice.current:
        return False
    pin = restrict.pins.get(choice.component)
    if pin is None:
        return True
    version, variant = pin
    if choice.component == "driver":
        return choice.version == version or choice.version.split(".")[0] == version.split(".")[0]
    if not _same_version(choice.version, version):
        return False
    return variant is None or choice.variant == variant


def enumerate_stacks(space: Space, restrict: Restrict, why: list[str] | None = None) -> Iterator[Stack]:
    """Every consistent stack allowed by the holds and pins, in search order (pruned backtracking)."""
    torches = space.torch_choices()
    drivers = space.driver_choices()
    for s_i, rel in enumerate(space.sglang):
        sv = str(rel.get("version"))
        sg = Choice("sglang", "sglang", sv, rank=s_i, current=_same_version(space.box.sglang, sv), release=rel)
        if not _allowed(sg, restrict):
            continue
        req = {k: str(v) for k, v in (rel.get("requires") or {}).items()}
        kname = next((k for k in KERNEL_NAMES if k in req), None)
        t_ok = [
            t for t in torches if _allowed(t, restrict) and ("torch" not in req or version_in(t.version, req["torch"]))
        ]
        if not t_ok and why is not None:
            why.append(f"sglang {sv} pins torch{req.get('torch', '')}: no allowed torch build for these GPUs")
        for t in t_ok:
            kernels: list[Choice | None]
            if kname is not None:
                kernels = [k for k in space.kernel_choices(kname, req[kname], t) if _allowed(k, restrict)]
                if not kernels and why is not None:
                    why.append(
                        f"sglang {sv} pins {kname}{req[kname]}: no allowed build for torch {t.label} (CUDA {t.cuda})"
                    )
            else:
                kernels = [None]
            for k in kernels:
                fis = [f for f in space.flashinfer_choices(req.get("flashinfer-python")) if _allowed(f, restrict)]
                for fi in fis:
                    ds = [d for d in drivers if _allowed(d, restrict) and driver_ok(d, t, space.box)]
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
    kname = next((k for k in KERNEL_NAMES if k in req), None)
    k = stack.kernel
    if kname and (k is None or k.name != kname or not version_in(k.version, req[kname])):
        out.append(f"sglang {sv} pins {kname}{req[kname]}")
    if k is not None:
        tpin = (k.release.get("requires") or {}).get("torch")
        if isinstance(tpin, str) and not version_in(t.version, tpin):
            out.append(f"{k.name} {k.version} pins torch{tpin}")
        if k.cuda and t.cuda and _cuda_key(k.cuda)[0] != _cuda_key(t.cuda)[0]:
            out.append(f"{k.name} {k.label} is built for CUDA {k.cuda}, torch {t.label} for CUDA {t.cuda}")
    fspec = req.get("flashinfer-python")
    if fspec and not version_in(stack.flashinfer.version, fspec):
        out.append(f"sglang {sv} pins flashinfer-python{fspec}")
    return out


# ---- hypothetical facts and the engine -------------------------------------------------------------


def _pkg(version: str, variant: str | None, cuda: str | None) -> dict[str, Any]:
    p: dict[str, Any] = {"installed": True, "version": version, "dist_version": str(public(version) or version)}
    if variant:
        p["variant"] = variant
    if cuda:
        p["cuda"] = cuda
    return p


def apply_choice(facts: Facts, choice: Choice, ctx: Context) -> Facts:
    """A copy of the facts with one component replaced (shallow where nothing changes)."""
    out: dict[str, Any] = dict(facts)
    changed: list[str] = []
    if choice.component == "driver":
        first = choice.release.get("first_version") if choice.release else None
        out["driver"] = {
            "version": str(first) if first else f"{choice.version}.0",
            "cuda": choice.cuda,
            "source": "plan",
        }
        return out  # type: ignore[return-value]
    if choice.component == "toolkit":
        out["cuda_toolkits"] = [
            {"path": None, "version": choice.version, "source": "plan", "active_for_build": True},
            *[{**dict(t), "active_for_build": False} for t in facts.get("cuda_toolkits") or []],
        ]
        return out  # type: ignore[return-value]
    pkgs: dict[str, Any] = dict(facts.get("packages") or {})
    if choice.component == "torch":
        pkgs["torch"] = _pkg(f"{choice.version}+{choice.variant}", choice.variant, choice.cuda)
        changed.append("torch")
    elif choice.component == "kernel":
        for other in KERNEL_NAMES:
            if other != choice.name and isinstance(pkgs.get(other), dict) and pkgs[other].get("installed"):
                pkgs[other] = {"installed": False}
                changed.append(other)
        version = f"{choice.version}+{choice.variant}" if choice.variant else choice.version
        pkgs[choice.name] = _pkg(version, choice.variant, choice.cuda)
        changed.append(choice.name)
    elif choice.component == "flashinfer":
        pkgs["flashinfer-python"] = _pkg(choice.version, None, None)
        changed.append("flashinfer-python")
        for extra in ("flashinfer-cubin", "flashinfer-jit-cache"):
            p = pkgs.get(extra)
            if isinstance(p, dict) and p.get("installed"):
                pkgs[extra] = {**p, "version": choice.version, "dist_version": choice.version}
                changed.append(extra)
    elif choice.component == "sglang":
        pkgs["sglang"] = _pkg(choice.version, None, None)
        changed.append("sglang")
    out["packages"] = pkgs
    binaries = facts.get("binaries")
    if isinstance(binaries, dict) and any(n in binaries for n in changed):
        out["binaries"] = {k: v for k, v in binaries.items() if k not in changed}
    tables = facts.get("source_tables")
    if isinstance(tables, dict) and tables:
        gate_pkg = {str(g.get("id")): g.get("package") for g in ctx.manifests.gates}
        out["source_tables"] = {k: v for k, v in tables.items() if gate_pkg.get(k) not in changed}
    return out  # type: ignore[return-value]


def stack_facts(ctx: Context, stack: Stack) -> Facts:
    facts = ctx.facts
    for c in ("driver", "torch", "kernel", "flashinfer", "sglang"):
        ch = stack.get(c)
        if ch is not None and not ch.current:
            facts = apply_choice(facts, ch, ctx)
    return facts


class Engine:
    """Feature verdicts on hypothetical facts, cached per stack."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.features = {str(f.get("id")): f for f in ctx.manifests.features}
        self._cache: dict[tuple[Stack, str], FeatureVerdict] = {}

    def verdict_on(self, facts: Facts, fid: str) -> FeatureVerdict:
        return evaluate_feature(
            self.features[fid], Context(facts=facts, manifests=self.ctx.manifests, launch=self.ctx.launch)
        )

    def verdict(self, stack: Stack, fid: str) -> FeatureVerdict:
        key = (stack, fid)
        if key not in self._cache:
            self._cache[key] = self.verdict_on(stack_facts(self.ctx, stack), fid)
        return self._cache[key]

    def ok(self, stack: Stack, fid: str) -> bool:
        return self.verdict(stack, fid).get("status") == "ok"


def first_failure(v: FeatureVerdict) -> str:
    for r in v.get("reasons") or []:
        if r.get("result") in ("fail", "unknown"):
            return str(r.get("message", ""))
    return str(v.get("status"))


# ---- commands ---------------------------------------------------------------------------------------


def _q(text: str) -> str:
    return shlex.quote(text)


def _index(ctx: Context, name: str, variant: str | None) -> str | None:
    url = ctx.manifests.package(name).get("index_url")
    if not isinstance(url, str) or not variant:
        return None
    return url.replace("{variant}", variant)


def _os_family(ctx: Context) -> str:
    os_text = str((ctx.facts.get("system") or {}).get("os") or "").lower()
    if "ubuntu" in os_text or "debian" in os_text:
        return "debian"
    if any(x in os_text for x in ("red hat", "rhel", "rocky", "alma", "centos", "fedora", "oracle")):
        return "rhel"
    return "other"


def driver_step_text(ctx: Context, choice: Choice, box: Box) -> tuple[list[str], list[str]]:
    branch = choice.version
    family = _os_family(ctx)
    warnings = ["drain the node first (stop the serving processes; the GPUs are unavailable during the upgrade)"]
    if family == "debian":
        commands = ["sudo apt-get update", f"sudo apt-get install -y {_q(f'nvidia-driver-{branch}-server-open')}"]
        warnings.append(f"or, from NVIDIA's CUDA repository: sudo apt-get install -y {_q(f'cuda-drivers-{branch}')}")
    elif family == "rhel":
        commands = [f"sudo dnf module install -y {_q(f'nvidia-driver:{branch}-open')}"]
    else:
        commands = [f"# install the NVIDIA driver branch {_q(branch)} (open kernel modules) from your distribution"]
    notes = [str(choice.release.get("note") or "")] if choice.release else []
    blackwell = any(
        str(a.get("generation")) == "blackwell"
        for a in ctx.manifests.architectures
        if cc_tuple(str(a.get("compute_capability"))) in box.ccs
    )
    if blackwell:
        for a in ctx.manifests.architectures:
            if cc_tuple(str(a.get("compute_capability"))) in box.ccs:
                notes.extend(str(n) for n in a.get("notes") or [])
        if any("open kernel modules" in n.lower() for n in notes):
            warnings.append("open kernel modules are required for Blackwell (the -open driver packages)")
    if (ctx.facts.get("system") or {}).get("container"):
        warnings.append("this runs in a container: upgrade the driver on the host, not in the image")
    warnings.append("reboot required (or unload and reload the nvidia kernel modules)")
    return commands, warnings


def package_commands(ctx: Context, choice: Choice, box: Box, stack: Stack) -> tuple[list[str], list[str]]:
    warnings: list[str] = []
    if choice.component == "torch":
        url = _index(ctx, "torch", choice.variant)
        cmd = f"pip install {_q(f'torch=={choice.version}')}"
        return ([cmd + (f" --index-url {_q(url)}" if url else "")], warnings)
    if choice.component == "kernel":
        cmds: list[str] = []
        if box.kernel is not None and box.kernel[0] != choice.name:
            cmds.append(f"pip uninstall -y {_q(box.kernel[0])}")
            warnings.append(f"{box.kernel[0]} was renamed {choice.name}; the import name stays sgl_kernel")
        if choice.index_only and choice.variant:
            url = _index(ctx, choice.name, choice.variant)
            spec = f"{choice.name}=={choice.version}+{choice.variant}"
            cmds.append(f"pip install {_q(spec)}" + (f" --index-url {_q(url)}" if url else ""))
        else:
            cmds.append(f"pip install {_q(f'{choice.name}=={choice.version}')}")
        return cmds, warnings
    if choice.component == "flashinfer":
        # SGLang >= 0.5.14 pins flashinfer_python[cu13]: install the extra it names
        extras = (stack.sglang.release.get("requires_extras") or {}).get("flashinfer-python") or []
        extra = f"[{','.join(extras)}]" if extras else ""
        specs = [f"flashinfer-python{extra}=={choice.version}"]
        cubin_pinned = "flashinfer-cubin" in (stack.sglang.release.get("requires") or {})
        cubin_known = _find_release(ctx, "flashinfer-cubin", choice.version) is not None
        if cubin_pinned or (ctx.installed_version("flashinfer-cubin") and cubin_known):
            specs.append(f"flashinfer-cubin=={choice.version}")
        cmds = []
        if ctx.installed_version("flashinfer-cubin") and len(specs) == 1:
            cmds.append("pip uninstall -y flashinfer-cubin")
            warnings.append(
                f"the manifests know no flashinfer-cubin {choice.version} and SGLang {stack.sglang.version} does not "
                "pin it: the installed one is removed rather than left mismatched"
            )
        cmds.append("pip install " + " ".join(_q(s) for s in specs))
        if ctx.installed_version("flashinfer-jit-cache"):
            jit = _find_release(ctx, "flashinfer-jit-cache", choice.version)
            url = _index(ctx, "flashinfer-jit-cache", stack.torch.variant)
            if jit is not None and url:
                cmds.append(f"pip install {_q(f'flashinfer-jit-cache=={choice.version}')} --index-url {_q(url)}")
            else:
                warnings.append(
                    f"the manifests know no flashinfer-jit-cache {choice.version}: uninstall flashinfer-jit-cache"
                )
        return cmds, warnings
    return [f"pip install {_q(f'sglang=={choice.version}')}"], warnings


# ---- the plan ---------------------------------------------------------------------------------------


def _from_text(component: str, box: Box) -> str | None:
    if component == "driver":
        return f"{box.driver_version} (CUDA {box.driver_cuda})" if box.driver_version else None
    if component == "torch":
        return f"{box.torch[0]}+{box.torch[1]}" if box.torch and box.torch[1] else (box.torch[0] if box.torch else None)
    if component == "kernel":
        if box.kernel is None:
            return None
        return f"{box.kernel[0]} {box.kernel[1]}" + (f" ({box.kernel[2]})" if box.kernel[2] else "")
    if component == "flashinfer":
        return box.flashinfer
    if component == "sglang":
        return box.sglang
    return None


def _held_text(component: str, box: Box) -> str:
    if component == "driver":
        return f"--hold driver keeps driver {box.driver_version} (CUDA {box.driver_cuda})"
    return f"--hold {component} keeps {component} {_from_text(component, box) or 'not installed'}"


def parse_pins(pins: dict[str, str] | None, space: Space) -> dict[str, tuple[str, str | None]]:
    out: dict[str, tuple[str, str | None]] = {}
    for raw, value in (pins or {}).items():
        comp = component_name(raw, "--to")
        text = str(value).strip()
        if comp == "driver":
            if numeric_tuple(text) is None:
                raise UsageError(f"--to driver=={text}: expected a driver branch or version such as 580 or 580.95.05")
            branch = text.split(".")[0]
            known = {str(b.get("branch")) for b in space.branches}
            if branch not in known and not (space.box.driver_version or "").startswith(branch + "."):
                raise UsageError(f"--to driver=={text}: the manifests know no driver branch {branch}")
            out[comp] = (text, None)
            continue
        if parse_version(text) is None:
            raise UsageError(f"--to {raw}=={text}: not a version")
        variant = variant_of(text)
        version = str(public(text))
        names = {"torch": ["torch"], "kernel": list(KERNEL_NAMES), "flashinfer": ["flashinfer-python"]}.get(
            comp, [comp]
        )
        if raw.strip().lower() in KERNEL_NAMES:
            names = [raw.strip().lower()]
        if not any(_find_release(space.ctx, n, version) for n in names):
            raise UsageError(f"--to {raw}=={text}: the manifests know no {' or '.join(names)} {version}")
        out[comp] = (version, variant)
    return out


def make_plan(
    ctx: Context,
    features: list[FeatureVerdict],
    want: list[str] | None = None,
    hold: list[str] | None = None,
    pins: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The plan for this box: target stack, ordered steps, features still blocked; `error` when no stack
    satisfies the holds, pins and wanted features. Raises UsageError for unknown components/features."""
    return plan_and_facts(ctx, features, want, hold, pins)[0]


def plan_and_facts(
    ctx: Context,
    features: list[FeatureVerdict],
    want: list[str] | None = None,
    hold: list[str] | None = None,
    pins: dict[str, str] | None = None,
    upstream: bool = True,
) -> tuple[dict[str, Any], Facts | None]:
    """make_plan, and the hypothetical facts of the box after every step of the plan (None when no stack
    satisfies the request): what `stackcheck recommend` judges its launch against. With `upstream` False
    the still-blocked features do not say which other stack would unblock them (half the planner's time)."""
    box = read_box(ctx)
    space = Space(ctx, box)
    engine = Engine(ctx)
    held = {component_name(h) for h in hold or []}
    pinned = parse_pins(pins, space)
    for c in held & set(pinned):
        raise UsageError(f"--hold {c} and --to {c}==...: a component cannot be both held and pinned")
    wanted = list(dict.fromkeys(want or []))
    for fid in wanted:
        if fid not in engine.features:
            raise UsageError(f"--want {fid!r}: unknown feature (expected one of {', '.join(sorted(engine.features))})")
    restrict = Restrict(held, pinned)
    plan: dict[str, Any] = {"target": {}, "steps": [], "still_blocked": []}
    if not box.ccs:
        plan["note"] = (
            "no GPU is visible: the plan cannot check which builds cover the GPUs; "
            "give --assume-gpu CC[xN] (e.g. 12.0x8) to plan for the GPUs this image will run on"
        )
    if ctx.facts.get("packages") is None:
        plan["error"] = "installed packages are not known (not probed, not in the facts file): cannot plan"
        return plan, None
    from stackcheck.facts import serving_elsewhere

    elsewhere = serving_elsewhere(ctx.facts)
    if elsewhere and not wanted and not pinned:  # audit the environment that serves, do not install a new one
        plan["note"] = f"{elsewhere} (no fresh install planned)"
        others = ctx.facts.get("other_environments") or []
        plan["elsewhere"] = [str(o.get("select")) for o in others if isinstance(o, dict) and o.get("select")]
        return plan, None
    for c in sorted(held):
        if c == "driver" and not box.driver_version:
            plan["error"] = "--hold driver: no driver is installed (or its version was not read)"
            return plan, None
        if c != "driver" and _from_text(c, box) is None:
            plan["error"] = f"--hold {c}: {c} is not installed"
            return plan, None
    before = {str(f.get("id")): f for f in features}
    for fid in engine.features:
        if fid not in before:
            before[fid] = evaluate_feature(engine.features[fid], ctx)

    stacks = sorted(enumerate_stacks(space, restrict), key=Stack.key)
    target: Stack | None = None
    newest_lost: list[str] = []
    impossible: list[str] = []
    if not wanted:
        # the newest stack that keeps every feature that is ok now ok (among the best few); else the newest
        # (judged after the plan's own steps, the toolkit step included)
        ok_now = [fid for fid, v in before.items() if v.get("status") == "ok"]
        for s in stacks[:REGRESSION_SEARCH]:
            _, _, after = _steps(ctx, engine, s, box, before)
            lost = [f for f in ok_now if after.get(f, {}).get("status") != "ok"]
            if not lost:
                target = s
                break
            if s is stacks[0]:
                newest_lost = lost
        if target is None:
            target = stacks[0] if stacks else None
        elif stacks and target is not stacks[0]:
            plan["note"] = (
                (plan.get("note", "") + "; " if plan.get("note") else "")
                + f"a newer stack ({stacks[0].describe()}) would block what is ok now ({', '.join(newest_lost)}); "
                "this plan keeps them: `stackcheck plan --want FEATURE` trades them for a wanted feature"
            )
    else:
        free = stacks if not held and not pinned else sorted(enumerate_stacks(space, Restrict()), key=Stack.key)
        by_changes = sorted(free, key=lambda s: (s.changes(), s.key()))
        for fid in wanted:
            if not any(engine.ok(s, fid) for s in by_changes):
                impossible.append(fid)
        reachable = [f for f in wanted if f not in impossible]
        for s in sorted(stacks, key=lambda s: (s.changes(), s.key())):
            if all(engine.ok(s, f) for f in reachable):
                target = s
                break
        if target is None and stacks:
            plan["error"] = _blame(space, engine, restrict, box, reachable)
    if target is None:
        if "error" not in plan:
            plan["error"] = _no_stack_error(space, restrict, box)
        if impossible:
            plan["still_blocked"] = [_blocked_entry(engine, before, fid, None, True) for fid in impossible]
        return plan, None

    plan["target"] = _target_dict(target)
    steps, final_facts, final = _steps(ctx, engine, target, box, before)
    blocked_final = [fid for fid, v in final.items() if v.get("status") == "blocked"]
    ok_elsewhere = _upstream_ok(space, engine, restrict, stacks, blocked_final) if upstream else {}
    still = []
    for fid in blocked_final:
        entry = _blocked_entry(engine, final, fid, ok_elsewhere.get(fid), fid in wanted)
        still.append(entry)
    plan["still_blocked"] = still
    for fid in wanted:
        if fid in impossible and engine.features[fid].get("workaround"):
            steps.append(_patch_step(engine, fid))
    plan["steps"] = steps
    if impossible:
        names = ", ".join(impossible)
        prefix = "; ".join(_held_text(c, box) for c in sorted(held))
        plan["error"] = (prefix + "; " if prefix else "") + (
            f"{names}: no release in the manifests makes {'it' if len(impossible) == 1 else 'them'} ok on this box "
            f"({'; '.join(first_failure(engine.verdict_on(final_facts, f)) for f in impossible)})"
        )
    return plan, final_facts


def _target_dict(stack: Stack) -> dict[str, str]:
    out = {"driver": stack.driver.version}
    out["torch"] = f"{stack.torch.version}+{stack.torch.variant}" if stack.torch.variant else stack.torch.version
    if stack.kernel is not None:
        out[stack.kernel.name] = stack.kernel.label
    out["flashinfer-python"] = stack.flashinfer.version
    out["sglang"] = stack.sglang.version
    return out


def _steps(
    ctx: Context, engine: Engine, target: Stack, box: Box, before: dict[str, FeatureVerdict]
) -> tuple[list[dict[str, Any]], Facts, dict[str, FeatureVerdict]]:
    """The ordered steps; each step's `unblocks` from the engine on the facts after it and every earlier
    step. Also the facts and the verdicts of every feature after the whole plan."""
    blocked0 = {fid for fid, v in before.items() if v.get("status") == "blocked"}
    ok0 = {fid for fid, v in before.items() if v.get("status") == "ok"}
    facts = ctx.facts
    steps: list[dict[str, Any]] = []
    states: list[Facts] = []
    toolkit_needed = _toolkit_choice(ctx, target)
    order: list[Choice] = []
    for comp in STEP_ORDER:
        if comp == "toolkit":
            if toolkit_needed is not None:
                order.append(toolkit_needed)
            continue
        ch = target.get(comp) if comp in COMPONENTS else None
        if ch is not None and not ch.current:
            order.append(ch)
    unblocked: set[str] = set()
    final: dict[str, FeatureVerdict] = dict(before)
    for n, ch in enumerate(order):
        facts = apply_choice(facts, ch, ctx)
        states.append(facts)
        if n == len(order) - 1:
            final = {fid: engine.verdict_on(facts, fid) for fid in engine.features}
            status = {fid: str(v.get("status")) for fid, v in final.items()}
        else:
            status = {fid: str(engine.verdict_on(facts, fid).get("status")) for fid in blocked0 - unblocked}
        newly = sorted(fid for fid in blocked0 - unblocked if status.get(fid) == "ok")
        unblocked.update(newly)
        if ch.component == "driver":
            commands, warnings = driver_step_text(ctx, ch, box)
            reason = f"torch {target.torch.label} needs a driver for CUDA {target.torch.cuda}"
            if not box.driver_version:
                reason = f"no NVIDIA driver is installed (or it could not be read); {reason}"
            elif (
                box.driver_cuda
                and target.torch.cuda
                and (compare_numeric(box.driver_cuda, target.torch.cuda) or 0) >= 0
            ):
                reason = f"driver {box.driver_version} is older than these GPUs need ({box.min_driver})"
            to = f"{ch.version} branch (CUDA {ch.cuda})"
            component = "driver"
            frm = _from_text("driver", box)
        elif ch.component == "toolkit":
            tk = ch.version.replace(".", "-")
            commands = (
                [f"sudo apt-get install -y {_q(f'cuda-toolkit-{tk}')}"]
                if _os_family(ctx) == "debian"
                else [f"# install the CUDA {_q(ch.version)} toolkit"]
            )
            warnings = [f"point CUDA_HOME (and PATH) at the CUDA {ch.version} toolkit before building extensions"]
            reason = (
                f"the build toolkit is CUDA {ctx.toolkit_cuda()}, older than torch's CUDA {target.torch.cuda}: "
                "extensions built against it do not match torch"
            )
            to, component, frm = ch.version, "cuda-toolkit", ctx.toolkit_cuda()
        else:
            commands, warnings = package_commands(ctx, ch, box, target)
            component = ch.name
            frm = _from_text(ch.component, box)
            to = ch.label if ch.component != "torch" else f"{ch.version}+{ch.variant}"
            reason = _reason(ch, target, box)
        steps.append(
            {
                "component": component,
                "from": frm,
                "to": to,
                "commands": commands,
                "unblocks": newly,
                "reason": reason,
                "warnings": warnings,
            }
        )
    # regressions: ok before the plan, blocked after it; told at the step after which it stays blocked
    if states:
        for fid in sorted(ok0):
            if final[fid].get("status") != "blocked":
                continue
            at = len(states) - 1
            while at > 0 and engine.verdict_on(states[at - 1], fid).get("status") == "blocked":
                at -= 1
            steps[at]["warnings"].append(f"{fid} is ok now and blocked after this plan: {first_failure(final[fid])}")
    return steps, facts, final


def _reason(ch: Choice, target: Stack, box: Box) -> str:
    if ch.component == "sglang":
        return f"target SGLang release {ch.version}" if box.sglang else f"SGLang {ch.version} is not installed"
    req = target.sglang.release.get("requires") or {}
    pin = req.get(ch.name)
    base = f"sglang {target.sglang.version} pins {ch.name}{pin}" if pin else f"newest {ch.name} for this stack"
    if ch.component == "torch":
        if not box.ccs:
            return base + f"; the {ch.variant} build (CUDA {ch.cuda}); no GPU is visible, so coverage is unchecked"
        return base + f"; the {ch.variant} build (CUDA {ch.cuda}) covers these GPUs"
    if ch.component == "kernel":
        return base + f"; the {ch.variant} build matches torch's CUDA {target.torch.cuda}"
    return base


def _toolkit_choice(ctx: Context, target: Stack) -> Choice | None:
    tk = ctx.toolkit_cuda()
    if tk is None or target.torch.cuda is None:
        return None
    if _cuda_key(tk)[0] < _cuda_key(target.torch.cuda)[0]:
        return Choice("toolkit", "cuda-toolkit", target.torch.cuda)
    return None


def _upstream_ok(
    space: Space, engine: Engine, restrict: Restrict, stacks: list[Stack], fids: list[str]
) -> dict[str, Stack | None]:
    """For each feature blocked after the plan: a stack of the manifests (best one per SGLang release,
    ignoring holds and pins) where it is ok, or None."""
    if not fids:
        return {}
    pool = (
        stacks
        if not restrict.hold and not restrict.pins
        else sorted(enumerate_stacks(space, Restrict()), key=Stack.key)
    )
    best: dict[str, Stack] = {}
    for s in pool:
        best.setdefault(s.sglang.version, s)
    reps = list(best.values())
    return {fid: next((s for s in reps if engine.ok(s, fid)), None) for fid in fids}


def _blocked_entry(
    engine: Engine, verdicts: dict[str, FeatureVerdict], fid: str, ok_stack: Stack | None, wanted: bool
) -> dict[str, Any]:
    v = verdicts.get(fid)
    why = first_failure(v) if v is not None else "blocked"
    entry: dict[str, Any] = {"feature": fid, "why": why, "upstream_supported": ok_stack is not None}
    if ok_stack is not None:
        entry["why"] = f"{why} (ok with {ok_stack.describe()}: stackcheck plan --want {fid})"
    workaround = engine.features[fid].get("workaround")
    if workaround:
        entry["workaround"] = workaround
    return entry


def _patch_step(engine: Engine, fid: str) -> dict[str, Any]:
    w = engine.features[fid].get("workaround") or {}
    patch = w.get("patch") if isinstance(w, dict) else None
    text = str(w.get("text", "")) if isinstance(w, dict) else str(w)
    cmds: list[str] = []
    if isinstance(patch, dict):
        what = " ".join(f"{k}={patch[k]}" for k in sorted(patch))
        cmds.append(f"# manual edit, not done by stackcheck: {_q(what)}")
    return {
        "component": f"patch:{fid}",
        "from": None,
        "to": "locally patched",
        "commands": cmds,
        "unblocks": [],
        "reason": text or f"{fid}: local workaround",
        "warnings": [
            "unsupported upstream: no release has this change; re-apply after every upgrade of the patched package"
        ],
    }


def _no_stack_error(space: Space, restrict: Restrict, box: Box) -> str:
    """No consistent stack under the holds and pins: name the hold or pin that makes it so."""
    if box.ccs and not space.torch_choices():
        ccs = ", ".join(f"{a}.{b}" for a, b in box.ccs)
        return f"no torch build in the manifests has a target for GPU compute capability {ccs}"
    names = sorted(restrict.hold) + sorted(c for c in restrict.pins if c not in restrict.hold)
    for c in names:
        relaxed = Restrict(restrict.hold - {c}, {k: v for k, v in restrict.pins.items() if k != c})
        best = next(iter(sorted(enumerate_stacks(space, relaxed), key=Stack.key)), None)
        if best is None:
            continue
        label = _held_text(c, box) if c in restrict.hold else f"--to {c}=={restrict.pins[c][0]}"
        problems = _problems_if_kept(space, best, c, box, restrict)
        return f"{label}; the closest consistent stack is {best.describe()}" + (
            f", and with {c} kept: {'; '.join(problems)}" if problems else ""
        )
    why: list[str] = []
    for _ in enumerate_stacks(space, restrict, why):
        break
    detail = why[0] if why else "no release combination satisfies the pins"
    prefix = "; ".join(_held_text(c, box) for c in sorted(restrict.hold))
    return (prefix + "; " if prefix else "") + f"no consistent stack in the manifests: {detail}"


def _problems_if_kept(space: Space, best: Stack, comp: str, box: Box, restrict: Restrict) -> list[str]:
    kept: Choice | None = None
    if comp == "driver":
        kept = next((d for d in space.driver_choices() if d.current), None)
    elif comp == "torch":
        kept = next((t for t in space.torch_choices() if _allowed(t, restrict) and t.component == "torch"), None)
    elif comp == "sglang":
        kept = next(
            (
                Choice("sglang", "sglang", str(r.get("version")), release=r, current=True)
                for r in space.sglang
                if _same_version(box.sglang, str(r.get("version")))
            ),
            None,
        )
    elif comp == "flashinfer":
        kept = next((f for f in space.flashinfer_choices(None) if f.current), None)
    elif comp == "kernel" and box.kernel is not None:
        rel = _find_release(space.ctx, box.kernel[0], box.kernel[1]) or {}
        variant = box.kernel[2]
        cuda = cuda_from_tag(variant)
        kept = Choice("kernel", box.kernel[0], box.kernel[1], variant, cuda, current=True, release=rel)
    if kept is None:
        return []
    fields = {c: best.get(c) for c in COMPONENTS}
    fields[comp] = kept
    try:
        alt = Stack(**fields)  # type: ignore[arg-type]
    except TypeError:
        return []
    return violations(alt, box)


def _blame(space: Space, engine: Engine, restrict: Restrict, box: Box, wanted: list[str]) -> str:
    """Wanted features reachable without the holds/pins but not with them: which hold or pin, and why."""
    names = sorted(restrict.hold) + sorted(c for c in restrict.pins if c not in restrict.hold)
    for c in names:
        relaxed = Restrict(restrict.hold - {c}, {k: v for k, v in restrict.pins.items() if k != c})
        cands = sorted(enumerate_stacks(space, relaxed), key=lambda s: (s.changes(), s.key()))
        best = next((s for s in cands if all(engine.ok(s, f) for f in wanted)), None)
        if best is None:
            continue
        label = _held_text(c, box) if c in restrict.hold else f"--to {c}=={restrict.pins[c][0]}"
        problems = _problems_if_kept(space, best, c, box, restrict)
        return f"{label}; {', '.join(wanted)} needs a stack such as {best.describe()}" + (
            f", but {'; '.join(problems)}" if problems else ""
        )
    prefix = "; ".join(
        [_held_text(c, box) for c in sorted(restrict.hold)]
        + [f"--to {c}=={v[0]}" for c, v in sorted(restrict.pins.items())]
    )
    return f"{prefix}; no stack allowed by these makes {', '.join(wanted)} ok together"
