"""The evaluation context: the fact paths that manifest rules read (see manifests/README.md), derived from
the facts, the manifests and the launch options. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stackcheck.facts.archs import TargetRules, rules_of
from stackcheck.facts.model import KERNEL_PACKAGES, cc_tuple
from stackcheck.facts.versions import (
    cuda_from_tag,
    local_tag,
    ngc_build,
    parse_version,
    public,
    pytorch_build_tag,
    torch_build_of,
    variant_of,
)
from stackcheck.knowledge.loader import Manifests, pypi_variant
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any, Final

    from stackcheck.facts.model import Facts, GpuFacts
    from stackcheck.knowledge.types import Release

#: the new name first: a box with both reads sglang-kernel
KERNELS_NEW_NAME_FIRST = KERNEL_PACKAGES[::-1]


class Missing(Exception):
    """A fact a rule needs is not known; `reason` says which and why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


class Unknown(Missing):
    """A fact that could not be read (a probe failed on it): unlike an absent fact, `exists` cannot say no."""


class GpuModel(NamedTuple):
    """One distinct kind of GPU on the box (rules over gpu.* are evaluated once per model). The small value
    types here are NamedTuples, not dataclasses: importing dataclasses costs ~8 ms of every start."""

    cc: str
    name: str | None
    indices: tuple[int, ...]

    @property
    def label(self) -> str:
        who = self.name or "GPU"
        return f"{who} (cc {self.cc}, GPU {','.join(map(str, self.indices))})"


class TableValue(NamedTuple):
    value: Any
    origin: str  # "probed" | "release" | "patched"
    detail: str  # file read, or the release range that supplied the value
    source: Any = None


#: Context.lookup's mark of a path not kept yet
_NOT_KEPT = object()


class _Raised:
    """A Missing (or Unknown) a fact path raised, kept as its value (Context.keep_lookups)."""

    __slots__ = ("exc",)

    def __init__(self, exc: Missing) -> None:
        self.exc = exc


class SharedOutcomes:
    """The outcomes of the predicates that read nothing which differs between a set of contexts, kept for all of
    them: the planner judges features on many hypothetical facts (the box with some components replaced), and
    most predicates read only what no choice replaces (the GPUs, the launch, the environment), so each is
    evaluated once per GPU model for the whole plan instead of once per stack. `fixed(pred)` says whether a
    predicate (by identity: the manifests keep it alive) is one of them; plan.hypothetical.Engine decides it from
    the fact paths and gates it reads (plan.deps), the same reading its verdict memo rests on."""

    __slots__ = ("_fixed", "_is_fixed", "_known", "_once", "outcomes")

    def __init__(self, is_fixed: Callable[[Any], bool], known: Callable[[Any], bool | None] | None = None) -> None:
        self._is_fixed = is_fixed
        #: is_fixed's answer where it is at hand without working it out (None: not at hand); given, a predicate whose
        #: answer is not at hand is asked only when it is evaluated a second time (see fixed)
        self._known = known
        self._fixed: dict[int, tuple[Any, bool]] = {}
        self._once: dict[int, Any] = {}  # predicates evaluated once, their answer not at hand (by identity -> it)
        #: (predicate by identity, GPU model) -> (the predicate, its engine.Outcome)
        self.outcomes: dict[tuple[int, GpuModel | None], tuple[Any, Any]] = {}

    def fixed(self, pred: Any) -> bool:
        """Whether the predicate's outcome is kept for every context. With `known`, one whose answer is not at hand
        says False the first time (its outcome is then not kept: evaluated afresh, the same outcome) and is worked out
        from the second on: most parts of a rule are evaluated once in a plan, and working the answer out walks the
        part's tree (plan/deps.py)."""
        got = self._fixed.get(id(pred))
        if got is not None and got[0] is pred:
            return got[1]
        answer = self._known(pred) if self._known is not None else None
        if answer is None:
            if self._known is not None and self._once.get(id(pred)) is not pred:
                self._once[id(pred)] = pred  # (kept alive with it: the id is not reused while it is there)
                return False
            answer = self._is_fixed(pred)
        self._fixed[id(pred)] = (pred, answer)
        return answer


#: launch facts read from the served model's config.json (launch.preflight.model.mla_dims): why one is missing
_MODEL_DIMS = {
    "mla_kv_rope": "the model's MLA dims (config.json kv_lora_rank and qk_rope_head_dim) were not read: its "
    "config.json was not read or does not state them",
    "mla_qk_nope_head_dim": "the model's qk_nope_head_dim was not read: its config.json was not read or does not "
    "state it",
    "mla_prefill_dims": "the model's prefill head dims (config.json qk_nope_head_dim, qk_rope_head_dim and "
    "v_head_dim) were not read: its config.json was not read or does not state them",
    "mla_heads_per_gpu": "the model's query heads per GPU were not read: its config.json was not read or states no "
    "num_attention_heads, or a flag that splits attention (attention CP, DCP) leaves the count open",
    "draft_mla_kv_rope": "the speculative draft model's MLA dims (config.json kv_lora_rank and qk_rope_head_dim) "
    "were not read: its config.json was not read or does not state them",
    "draft_mla_qk_nope_head_dim": "the speculative draft model's qk_nope_head_dim was not read: its config.json was "
    "not read or does not state it",
    "draft_mla_heads_per_gpu": "the speculative draft model's query heads per GPU were not read: its config.json was "
    "not read or states no num_attention_heads, or a flag that splits attention leaves the count open",
}


class Context:
    """The facts and manifests one evaluation reads, with the lookups the engine and the planner share."""

    def __init__(self, facts: Facts, manifests: Manifests, launch: dict[str, Any] | None = None) -> None:
        self.facts = facts
        self.manifests = manifests
        self.launch: dict[str, Any] = launch if launch is not None else {}
        self._models: list[GpuModel] | None = None
        self._not_read: list[str | None] = []  # gpus_not_read's answer, once worked out
        self._target_rules: TargetRules | None = None
        self._filled: bool | None = None  # any_filled's answer, once worked out
        #: outcomes shared with other contexts (SharedOutcomes), set by the planner on the
        #: hypothetical contexts of one plan; None: every predicate is evaluated on these facts
        self.shared_outcomes: SharedOutcomes | None = None
        #: (fact path, GPU model) -> its value, or the Missing it raised: kept only where the caller says the facts,
        #: the launch and the manifests stay as they are for this context's life (keep_lookups); None: not kept
        self._lookups: dict[tuple[str, GpuModel | None], Any] | None = None

    def keep_lookups(self) -> None:
        """From now on, each fact path's value (or the Missing it raises) is worked out once per GPU model and kept:
        for a context whose facts, launch and manifests nobody changes while it is read (the planner's hypothetical
        contexts, plan.hypothetical.Engine._context: ~1,500 lookups of ~300 paths a first run of `plan --want`;
        iperf27). tests/plan/test_plan_kept_lookups.py holds the kept values equal to a fresh context's."""
        if self._lookups is None:
            self._lookups = {}

    def kept_lookups(self) -> bool:
        """Whether keep_lookups was called: the caller said these facts, launch and manifests stay as they are."""
        return self._lookups is not None

    def __repr__(self) -> str:
        return f"Context(facts={self.facts!r}, manifests={self.manifests!r}, launch={self.launch!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Context):
            return NotImplemented
        return (self.facts, self.manifests, self.launch) == (other.facts, other.manifests, other.launch)

    __hash__ = None  # type: ignore[assignment]

    def target_rules(self) -> TargetRules:
        """architectures.json's binary-compatibility rules of these manifests, indexed once per context."""
        if self._target_rules is None:
            self._target_rules = rules_of(self.manifests.list_of("architectures.json", "rules"))
        return self._target_rules

    # ---- GPUs -------------------------------------------------------------------------------

    def share_gpu_models(self, other: Context) -> None:
        """Take another context's GPU models (its facts hold the very same `gpus` list as these)."""
        self._models = other.gpu_models()
        self._not_read = [other.gpus_not_read()]

    def gpu_models(self) -> list[GpuModel]:
        if self._models is None:
            self._models = self._gpu_models()
        return self._models

    def _gpu_models(self) -> list[GpuModel]:
        models: dict[tuple[str, str | None], list[int]] = {}
        for i, g in enumerate(self.facts.get("gpus") or []):
            cc = g.get("compute_capability")
            if not isinstance(cc, str) or cc_tuple(cc) is None:
                continue
            idx = g.get("index")
            models.setdefault((cc, g.get("name")), []).append(idx if isinstance(idx, int) else i)
        return [GpuModel(cc, name, tuple(ix)) for (cc, name), ix in sorted(models.items(), key=lambda kv: kv[1])]

    def filled_marks(self, gpu: GpuModel | None, driver_cuda: bool) -> list[str]:
        """The texts of the filled facts (stackcheck.facts.filled: absent from a facts file, filled from the
        manifests' tables) that a rule reads: the compute capability of `gpu` (a GPU model with a filled one), the
        driver's CUDA where `driver_cuda` (the rule reads driver.cuda); empty for probed facts."""
        texts: list[str] = []
        if gpu is not None:
            gpus = self.facts.get("gpus") or []
            for i, g in enumerate(gpus):
                idx = g.get("index") if isinstance(g, dict) else None
                mark = g.get("filled") if isinstance(g, dict) else None
                if (idx if isinstance(idx, int) else i) in gpu.indices and isinstance(mark, dict):
                    record = mark.get("compute_capability")
                    if isinstance(record, dict) and str(record.get("text")) not in texts:
                        texts.append(str(record.get("text")))
        if driver_cuda:
            mark = (self.facts.get("driver") or {}).get("filled")
            record = mark.get("cuda") if isinstance(mark, dict) else None
            if isinstance(record, dict):
                texts.append(str(record.get("text")))
        return texts

    def any_filled(self) -> bool:
        """Whether these facts hold a filled value at all (the engine marks nothing otherwise)."""
        if self._filled is None:
            driver = self.facts.get("driver")
            self._filled = (isinstance(driver, dict) and "filled" in driver) or any(
                isinstance(g, dict) and "filled" in g for g in self.facts.get("gpus") or []
            )
        return self._filled

    def gpus_not_read(self) -> str | None:
        """Why a GPU listed in the facts has no compute capability read (NVML or nvidia-smi failed on it, or the
        value is not one), naming the first such GPU; None when every GPU listed has one. gpu_models leaves such
        a GPU out, and a per-GPU rule is then unknown for it: it may be of any architecture."""
        if not self._not_read:
            self._not_read.append(self._gpus_not_read())
        return self._not_read[0]

    def _gpus_not_read(self) -> str | None:
        gpus = self.facts.get("gpus") or []
        for i, g in enumerate(gpus):
            cc = g.get("compute_capability") if isinstance(g, dict) else None
            if isinstance(cc, str) and cc_tuple(cc) is not None:
                continue
            idx = g.get("index") if isinstance(g, dict) else None
            error = g.get("error") if isinstance(g, dict) else None
            why = f": {error}" if isinstance(error, str) and error else ""
            return f"GPU {idx if isinstance(idx, int) else i}'s compute capability was not read{why}"
        return None

    def gpus_unknown_reason(self) -> str:
        if "gpus" not in self.facts:
            return "GPUs not known (not probed, not in the facts file)"
        errors = [g.get("error") for g in self.facts.get("gpus") or [] if g.get("error")]
        if errors:
            return f"GPU facts could not be read: {errors[0]}"
        driver = self.facts.get("driver") or {}
        if driver.get("error"):
            return f"no GPU visible: {driver.get('error')}"
        return "no GPU visible"

    # ---- packages ---------------------------------------------------------------------------
    def package(self, name: str) -> dict[str, Any] | None:
        p = self._entry(name)
        return dict(p) if p is not None else None

    def _entry(self, name: str) -> Mapping[str, Any] | None:
        """The facts' own entry of a package, not copied (package() gives a copy): for reading only."""
        pkgs = self.facts.get("packages")
        if pkgs is None:
            return None
        p = pkgs.get(name)
        return p if isinstance(p, dict) else None

    def package_state(self, name: str) -> str:
        """ "installed", "absent" or "unknown". An entry with neither `installed` nor a version (a failed or
        timed-out packages probe writes `{"error": ...}`) is unknown, never "not installed", so nothing that
        needs it reads as not applicable. `installed: true` with a version that could not be read is installed:
        the facts that are there (torch's CUDA build, say) are used, and what reads the version is unknown
        (`version_unknown`)."""
        pkgs = self.facts.get("packages")
        if pkgs is None:
            return "unknown"
        p: Any = pkgs.get(name)
        if p is None:
            # a probed list names every package it looked for; a hand-written one names some, and the rest are
            # unknown (facts.packages_complete, set when the document is read: stackcheck.facts.model)
            return "absent" if self.facts.get("packages_complete", True) is not False else "unknown"
        if not isinstance(p, dict):  # a hand-written facts document of another shape
            return "unknown"
        installed = p.get("installed")
        if installed is True:
            return "installed"
        if installed is False:
            return "absent"
        return "installed" if isinstance(p.get("version"), str) else "unknown"

    def version_unknown(self, name: str) -> bool:
        """Not known whether it is installed, or installed with a version that could not be read: the checks
        that need the release (pins, kernel coverage) are unknown then, never skipped."""
        if self.package_state(name) == "unknown":
            return True
        return self.is_installed(name) and self.installed_version(name) is None

    def package_unknown_reason(self, name: str) -> str:
        p = (self.facts.get("packages") or {}).get(name)
        error = p.get("error") if isinstance(p, dict) else None
        if p is None and self.facts.get("packages") is not None:
            error = "not in the facts file"
        return f"{name}: not known whether or which version is installed" + (f" ({error})" if error else "")

    def no_version(self, name: str, path: str) -> Missing:
        """The error for a rule that needs the installed version of `name` and finds none: not installed, or
        installed with a version not known, or `Unknown` when it is not known whether it is installed at all
        (a hand-written facts file that does not mention it): then `exists` cannot say no either."""
        if self.package_state(name) == "unknown":
            return Unknown(path, self.package_unknown_reason(name))
        return Missing(path, f"{name} version not known" if self.is_installed(name) else f"{name} is not installed")

    def installed_version(self, name: str) -> str | None:
        p = self._entry(name)
        if p and p.get("installed") and isinstance(p.get("version"), str):
            return str(p["version"])
        return None

    def is_installed(self, name: str) -> bool:
        """Installed, whether or not its version is known: `installed: true`, or (a hand-written facts
        document) a version without `installed`. A `needs` is met by it; rules that read the version still
        see it as unknown."""
        p = self._entry(name)
        if not p:
            return False
        if "installed" in p:
            return p.get("installed") is True
        return isinstance(p.get("version"), str)

    def triton_package(self) -> str | None:
        """The installed Triton distribution: `triton`, else PyTorch's nightly build `pytorch-triton`."""
        for name in ("triton", "pytorch-triton"):
            if self.is_installed(name):
                return name
        return None

    def no_triton(self, path: str) -> Missing:
        """Neither Triton distribution is installed, or (Unknown) neither is and one is not known to be absent."""
        unknown = [n for n in ("triton", "pytorch-triton") if self.package_state(n) == "unknown"]
        if unknown:
            return Unknown(path, "; ".join(self.package_unknown_reason(n) for n in unknown))
        return Missing(path, "neither triton nor pytorch-triton is installed")

    def kernel_package(self) -> str | None:
        for name in KERNELS_NEW_NAME_FIRST:
            if self.installed_version(name):
                return name
        return None

    def newest_known(self, name: str) -> str | None:
        return self.manifests.newest_release(name)

    def newer_than_manifests(self, name: str) -> str | None:
        """The installed version if it is newer than every release the manifests know, else None."""
        installed = self.installed_version(name)
        iv = public(installed) if installed is not None else None
        # (Manifests.newer_than_every_release: newest_known's comparison without parsing every release)
        if iv is not None and self.manifests.newer_than_every_release(name, iv):
            return installed
        return None

    def release(self, name: str) -> Release | None:
        """The manifest's record of the installed release (local tag ignored)."""
        installed = self.installed_version(name)
        if installed is None:
            return None
        iv = public(installed)
        return self.manifests.release_by_version(name, iv) if iv is not None else None

    def _release_of(self, name: str, version: str) -> Release | None:
        iv = public(version)
        return self.manifests.release_by_version(name, iv) if iv is not None else None

    def package_variant(self, name: str) -> str | None:
        """A package's CUDA variant: its local version tag (+cu130), else the variant the manifests say the
        untagged (PyPI) wheel of that release is built for."""
        p = self.package(name) or {}
        if isinstance(p.get("variant"), str):
            return str(p["variant"])
        tagged = variant_of(p.get("version"))
        if tagged:
            return tagged
        if p.get("implied"):  # a version implied by a pin (stackcheck/facts/implied.py): `==0.3.21` is met by any build
            return None
        return pypi_variant(self.release(name))

    def package_archs(self, name: str) -> tuple[list[str], str]:
        """Compiled targets of an installed package: the binary probe if it ran, else the manifest's
        record of that release and variant (the aarch64 list on an aarch64 box)."""
        binaries = (self.facts.get("binaries") or {}).get(name)
        if isinstance(binaries, dict) and (binaries.get("sass") or binaries.get("ptx")):
            return [*binaries.get("sass", []), *binaries.get("ptx", [])], f"binary probe of the installed {name}"
        version = self.installed_version(name)
        if version is None:
            raise self.no_version(name, f"pkg.{name}.archs")
        derived = self.derived_archs(name)
        if derived is not None:
            return derived
        variant = self.package_variant(name)
        rel = self.release(name)
        if rel is None or variant is None:
            raise Missing(
                f"pkg.{name}.archs", f"the manifests do not know the build of {name} {version}{self._unread(name)}"
            )
        for v in rel.get("variants") or []:
            if v.get("variant") == variant:
                found = self._machine_archs(f"pkg.{name}.archs", f"{name} {rel.get('version')} {variant}", v)
                if found is not None:
                    return found
        raise Missing(f"pkg.{name}.archs", f"the manifests list no {variant} build of {name} {rel.get('version')}")

    def _unread(self, name: str) -> str:
        """Why the binary probe gave no targets of `name`, as a clause for a reason: not run (--deep), skipped, or
        no GPU code in the files it read."""
        section = self.facts.get("binaries")
        if not isinstance(section, dict):
            return " (--deep reads the installed binaries)"
        entry = section.get(name)
        if not isinstance(entry, dict):
            return ""
        if entry.get("skipped"):
            return f" (its binaries were not read: {entry['skipped']})"
        return " (the binary probe found no GPU code in its files)"

    def derived_archs(self, name: str) -> tuple[list[str], str] | None:
        """The targets read from the installed binaries of a release newer than the data (facts.derived)."""
        if self.newer_than_manifests(name) is None:
            return None
        section = self.facts.get("derived")
        entry = section.get(name) if isinstance(section, dict) else None
        archs = entry.get("archs") if isinstance(entry, dict) else None
        if isinstance(entry, dict) and isinstance(archs, dict) and (archs.get("sass") or archs.get("ptx")):
            return [*archs.get("sass", []), *archs.get("ptx", [])], (
                f"the installed {name} {entry.get('version')}'s binaries (newer than the data of {self.manifests.date})"
            )
        return None

    def package_lib_missing_symbols(self, path: str, name: str, lib: str) -> int:
        """How many of the symbols one extension module of the kernel package (`flash_ops`) needs the loader does
        not find: its torch names missing from torch's libraries, and its driver API calls missing from the
        driver's libcuda.so.1 (the kernel symbol probe's `modules`, readers/kernelsymbols.py). Missing (the rule
        does not apply) without that section, for another package, without an entry for the module, or where
        neither half was judged (an unreadable file, torch's libraries not found): the other rules decide then.
        The driver half counts only for the box's own driver (not an assumed or planned one)."""
        ks = self.facts.get("kernel_symbols")
        if not isinstance(ks, dict) or ks.get("error") or not isinstance(ks.get("modules"), list):
            raise Missing(path, "the kernel symbol probe did not read the package's extension modules")
        if ks.get("package") not in (None, name):
            raise Missing(path, f"the kernel symbol probe read {ks.get('package')}, not {name}")
        entry = next((m for m in ks["modules"] if isinstance(m, dict) and m.get("module") == lib), None)
        if entry is None:
            raise Missing(path, f"the kernel symbol probe found no module {lib} in {name}")
        driver = self.facts.get("driver")
        own_driver = not (isinstance(driver, dict) and driver.get("source") in ("assumed", "plan"))
        counts = [entry.get("torch_missing_count"), entry.get("driver_missing_count") if own_driver else None]
        judged = [c for c in counts if isinstance(c, int) and not isinstance(c, bool)]
        if not judged:
            raise Missing(path, f"{entry.get('path')}: its symbols were not looked up")
        return sum(judged)

    def package_lib_archs(self, name: str, lib: str) -> tuple[list[str], str]:
        """Compiled targets of one shared library of a package (`flashmla_ops` for sgl_kernel/flashmla_ops.abi3.so;
        the per-architecture copies sm90/ and sm100/ of one name together): the binary probe's files when it
        ran, else the manifest's `libs` of that release and variant."""
        path = f"pkg.{name}.lib.{lib}.archs"
        binaries = (self.facts.get("binaries") or {}).get(name)
        files = binaries.get("files") if isinstance(binaries, dict) else None
        if isinstance(files, list) and files:
            hits = [f for f in files if isinstance(f, dict) and _lib_stem(f.get("path")) == lib]
            if hits:
                targets = sorted({t for f in hits for t in [*(f.get("sass") or []), *(f.get("ptx") or [])]})
                return targets, f"binary probe of the installed {name}: {', '.join(str(f.get('path')) for f in hits)}"
            if isinstance(binaries, dict) and not binaries.get("truncated"):
                return [], f"binary probe: the installed {name} has no library {lib}"
        derived = self.derived_archs(name)
        if derived is not None:  # a release newer than the data: its binaries were read (facts.derived)
            entry = (self.facts.get("derived") or {}).get(name) or {}
            files = [f for f in (entry.get("archs") or {}).get("files") or [] if isinstance(f, dict)]
            hits = [f for f in files if _lib_stem(f.get("path")) == lib]
            targets = sorted({t for f in hits for t in [*(f.get("sass") or []), *(f.get("ptx") or [])]})
            where = ", ".join(str(f.get("path")) for f in hits) or f"no library {lib}"
            return targets, f"{derived[1]}: {where}"
        version = self.installed_version(name)
        if version is None:
            raise self.no_version(name, path)
        variant = self.package_variant(name)
        rel = self.release(name)
        if rel is None or variant is None:
            raise Missing(path, f"the manifests do not know the build of {name} {version}{self._unread(name)}")
        # an aarch64 wheel is another build: it can lack a library the x86_64 wheel has (sglang-kernel 0.4.4+
        # ship no flash_ops on aarch64), so an aarch64 box is judged only by the libraries read from that wheel
        machine = self.machine()
        aarch64 = machine == "aarch64"
        key, build = ("libs_aarch64", f"{variant} aarch64") if aarch64 else ("libs", variant)
        for v in rel.get("variants") or []:
            if v.get("variant") == variant:
                libs = v.get(key)
                if machine is None and isinstance(libs, dict):
                    # a box whose machine the facts do not give: the x86_64 wheel's answer stands only where the
                    # aarch64 wheel, read too, gives the same one
                    arm = v.get("libs_aarch64")
                    if not isinstance(arm, dict):
                        raise Missing(
                            path,
                            f"the facts do not say which machine this is (system.machine), and the manifests list "
                            f"the libraries of the x86_64 wheel of {name} {rel.get('version')} {variant} only",
                        )
                    if (lib in libs) != (lib in arm) or not self.same_on_gpus(libs.get(lib) or [], arm.get(lib) or []):
                        raise Missing(
                            path,
                            f"the x86_64 and aarch64 wheels of {name} {rel.get('version')} {variant} differ in "
                            f"{lib}, and the facts do not say which machine this is (system.machine)",
                        )
                if isinstance(libs, dict):
                    if isinstance(libs.get(lib), list):
                        return list(libs[lib]), f"manifest: {lib} in {name} {rel.get('version')} {build}"
                    return [], f"manifest: {name} {rel.get('version')} {build} has no library {lib}"
                if aarch64 and v.get("libs") is not None:
                    raise Missing(
                        path,
                        f"the manifests list the libraries of the x86_64 wheel of {name} {rel.get('version')} "
                        f"{variant} only; its aarch64 wheel can ship others (run with --deep to read the installed "
                        "binaries)",
                    )
        raise Missing(path, f"the manifests do not list the targets of {lib} in {name} {rel.get('version')} {build}")

    def _machine_archs(
        self, path: str, build: str, variant: Mapping[str, Any], by_coverage: bool = False
    ) -> tuple[list[str], str] | None:
        """A build's compiled targets for this box's machine (components.json `archs`, `archs_aarch64`) and where
        they come from; None when the build lists none. An Arm box is judged by the aarch64 list, unknown without
        one; a box whose machine the facts do not give only where both lists serve its GPUs alike."""
        x86, arm = variant.get("archs"), variant.get("archs_aarch64")
        if x86 is None and arm is None:
            return None
        machine = self.machine()
        if machine == "aarch64":
            if arm is None:  # an Arm build has its own targets (cu124's torch: sm_90 only)
                raise Missing(
                    path,
                    f"the manifests list the targets of {build}'s x86_64 wheel only; its aarch64 build can carry "
                    "others (run with --deep to read the installed binaries)",
                )
            return list(arm), f"manifest: {build} aarch64"
        if x86 is None:
            return None
        if machine is None and arm is not None and not self.same_on_gpus(list(x86), list(arm), by_coverage):
            raise Missing(
                path,
                f"the x86_64 and aarch64 wheels of {build} carry different targets, and the facts do not say which "
                "machine this is (system.machine)",
            )
        return list(x86), f"manifest: {build}"

    def same_on_gpus(self, targets: list[str], others: list[str], by_coverage: bool = False) -> bool:
        """Whether two lists of compiled targets serve every GPU model of the box alike: the same targets run on
        each, or with `by_coverage` the same coverage (SASS, PTX only, none: what the `covered_by` rules on
        torch.archs read); with no GPU known, the same lists. Where they do, the machine whose wheel they came
        from does not change a verdict on this box."""
        models = self.gpu_models()
        if not models:
            return sorted(targets) == sorted(others)
        from stackcheck.facts.archs import coverage, expand_arch_list, runs_on

        rules = self.target_rules()
        mine, theirs = expand_arch_list(list(targets)), expand_arch_list(list(others))

        def seen(found: list[Any], cc: tuple[int, int]) -> object:
            return coverage(found, cc, rules) if by_coverage else {t.name for t in found if runs_on(t, cc, rules)}

        for m in models:
            cc = cc_tuple(m.cc)
            if cc is None or seen(mine, cc) != seen(theirs, cc):
                return False
        return True

    def machine(self) -> str | None:
        """ "aarch64" or "x86_64" (facts.system.machine; an Arm box's wheels are other builds than the x86_64 ones),
        None when the facts do not say or name another machine: a compiled-targets lookup then answers only
        where both wheels agree."""
        said = (self.facts.get("system") or {}).get("machine")
        if said in ("aarch64", "arm64"):
            return "aarch64"
        if said in ("x86_64", "amd64", "AMD64"):
            return "x86_64"
        return None

    # ---- torch ------------------------------------------------------------------------------
    def torch_cuda(self) -> str | None:
        p = self.package("torch") or {}
        if isinstance(p.get("cuda"), str):
            return str(p["cuda"])
        return cuda_from_tag(self.torch_variant())

    def torch_variant(self) -> str | None:
        p = self.package("torch") or {}
        if isinstance(p.get("variant"), str):
            return str(p["variant"])
        return variant_of(p.get("version"))

    def torch_archs(self) -> tuple[list[str], str]:
        """Compiled targets of the installed torch: from the binary probe if it ran, else the manifest."""
        binaries = (self.facts.get("binaries") or {}).get("torch")
        if isinstance(binaries, dict) and (binaries.get("sass") or binaries.get("ptx")):
            return [*binaries.get("sass", []), *binaries.get("ptx", [])], "binary probe of the installed torch"
        if not self.is_installed("torch"):
            raise self.no_version("torch", "torch.archs")
        derived = self.derived_archs("torch")
        if derived is not None:
            return derived
        variant = self.torch_variant()
        if variant is None:
            raise Missing("torch.archs", "torch's CUDA build is not known (torch/version.py not read)")
        if variant == "cpu":
            return [], "CPU-only build of torch"
        rel = self.release("torch")
        if rel is None:
            version = self.installed_version("torch")
            raise Missing(
                "torch.archs", f"torch {version} is not in the manifests" if version else "torch version not known"
            )
        # torch's aarch64 wheels are other builds (build_cuda.sh's aarch64 arch lists: no sm_75 or sm_86 in cu130,
        # only sm_90 in cu124): an Arm box is judged by them, and a box of unknown machine only where both cover its
        # GPUs alike (what the covered_by rules on torch.archs read)
        for v in rel.get("variants") or []:
            if v.get("variant") == variant and "archs" in v:
                found = self._machine_archs("torch.archs", f"torch {rel.get('version')} {variant}", v, by_coverage=True)
                if found is not None:
                    return found
        raise Missing("torch.archs", f"the manifests list no {variant} build of torch {rel.get('version')}")

    # ---- toolkits ---------------------------------------------------------------------------
    def toolkit_cuda(self) -> str | None:
        for tk in self.facts.get("cuda_toolkits") or []:
            if tk.get("active_for_build") and isinstance(tk.get("version"), str):
                v = str(tk["version"]).split(".")
                return ".".join(v[:2])
        return None

    def toolkit_found(self, path: str) -> bool:
        """`toolkit.found`: whether the toolkit directory a build (and sgl-kernel's _find_cuda_home) picks exists:
        $CUDA_HOME or $CUDA_PATH, else the parent of the nvcc on PATH, else /usr/local/cuda. False when the
        toolkits probe marked none for builds (none of them exists) or the one it marked is missing or not a
        directory; Missing when the toolkits were not probed, or a hand-written list marks none of them either
        way (`active_for_build` absent: which one a build picks is not stated)."""
        toolkits = self.facts.get("cuda_toolkits")
        if not isinstance(toolkits, list):
            raise Missing(path, "the CUDA toolkits were not probed (not in the facts)")
        if toolkits and not any(isinstance(t, dict) and "active_for_build" in t for t in toolkits):
            raise Missing(path, "the facts list CUDA toolkits but not which one a build picks (no active_for_build)")
        tk = next((t for t in toolkits if isinstance(t, dict) and t.get("active_for_build")), None)
        return tk is not None and not tk.get("error")

    # ---- lookups ----------------------------------------------------------------------------
    def lookup(self, path: str, gpu: GpuModel | None) -> Any:
        """The value of a fact path (manifests/README.md "Fact paths"): its first part picks the resolver in
        FACT_PREFIXES; Missing (or Unknown) when the fact is not known, naming why. Kept per (path, GPU model) after
        keep_lookups."""
        kept = self._lookups
        if kept is None:
            return self._lookup(path, gpu)
        key = (path, gpu)
        got = kept.get(key, _NOT_KEPT)
        if got is _NOT_KEPT:
            try:
                got = kept[key] = self._lookup(path, gpu)
            except Missing as exc:
                kept[key] = _Raised(exc)
                raise
            return got
        if type(got) is _Raised:
            raise got.exc.with_traceback(None)
        return got

    def _lookup(self, path: str, gpu: GpuModel | None) -> Any:
        head, _, rest = path.partition(".")
        prefix = FACT_PREFIXES.get(head)
        if prefix is None:
            raise Missing(path, f"unknown fact path {path}")
        return prefix(self, path, rest, gpu)

    # ---- the resolvers of FACT_PREFIXES: (path, the path after its first part, the GPU model) ------------
    def _gpu_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        if rest == "count":
            if "gpus" not in self.facts:
                raise Missing(path, self.gpus_unknown_reason())
            return len(self.facts.get("gpus") or [])
        if rest == "fabric":
            return self.gpu_fabric(path)
        if gpu is None:
            raise Missing(path, self.gpus_unknown_reason())
        t = cc_tuple(gpu.cc)
        assert t is not None
        if rest == "cc":
            return gpu.cc
        if rest == "cc_major":
            return t[0]
        if rest == "sm":
            return t[0] * 10 + t[1]
        if rest == "name":
            return gpu.name
        if rest == "min_cuda":
            return self.gpu_min_cuda(gpu)
        if rest == "proprietary_kmod":
            return self.gpu_proprietary_kmod(gpu)
        raise Missing(path, f"unknown fact path {path}")

    def gpu_fabric(self, path: str) -> str:
        """`gpu.fabric`, the box's NVSwitch fabric registration, worst GPU first: a GPU not registered (its state
        not completed, or completed with an error status: `in-progress (GPU 0)`, `completed, status
        no-permission (GPU 1)`); else Missing where a Hopper-or-newer GPU's state was not read; else `completed`
        where one GPU is registered, `not-supported` where none has a fabric (NVML says so, or the GPU is older
        than Hopper: NVML's fabric info is for Hopper and newer); `assumed` for --assume-gpu's GPUs. A GPU whose
        read failed (the probe asked NVML and got an error: `fabric.error`) raises Unknown, before a state not read
        (Missing: a facts file from before the probe read it, an nvidia-ml-py or driver without the call): an
        `exists` is then unknown, not false, so rule fabric-completed is unknown and the gate refuses (fail closed),
        where a state not read is rule fabric-not-read's unknown, which the gate does not require."""
        gpus = self.facts.get("gpus")
        if not isinstance(gpus, list) or not gpus:
            raise Missing(path, self.gpus_unknown_reason() if not gpus else "GPUs not known")
        if any(str(a).startswith("gpus=") for a in self.facts.get("assumed") or []):
            return "assumed"  # --assume-gpu: GPUs that are not here have no fabric state to read
        unread: list[str] = []
        failed: list[str] = []
        states: set[str] = set()
        for item in gpus:
            g = item if isinstance(item, dict) else {}
            kind, value = _fabric_of(g)
            if kind == "bad":
                return value
            (states.add if kind == "state" else failed.append if kind == "failed" else unread.append)(value)
        if failed:
            raise Unknown(path, "the GPU fabric state could not be read (" + "; ".join(failed) + ")")
        if unread:
            raise Missing(path, "the GPU fabric state was not read (" + "; ".join(unread) + ")")
        return "completed" if "completed" in states else "not-supported"

    def _driver_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        d = self.facts.get("driver") or {}
        value: Any = dict(d).get(rest)
        if value is None:
            raise Missing(path, f"driver {rest} not known" + (f": {d.get('error')}" if d.get("error") else ""))
        return value

    def _pkg_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        if ".lib." in rest:
            name, _, lib_attr = rest.partition(".lib.")
            lib, _, lib_field = lib_attr.rpartition(".")
            if lib_field not in ("archs", "missing_symbols") or not lib:
                raise Missing(path, f"unknown fact path {path}")
            if lib_field == "missing_symbols":
                return self.package_lib_missing_symbols(path, name, lib)
            if self.facts.get("packages") is None:
                raise Missing(path, "installed packages not known")
            return self.package_lib_archs(name, lib)[0]
        name, _, attr = rest.rpartition(".")
        if self.facts.get("packages") is None:
            raise Missing(path, "installed packages not known")
        p = self._entry(name)
        if attr == "listed":
            # whether the list names the package at all. The packages probe lists every package it looks for,
            # installed or not, so a complete list without the entry was saved by a stackcheck that did not look for
            # it (false: a rule on it does not apply, and the gate does not refuse every old report); a hand-written
            # list that leaves it out says nothing (unknown)
            if p is not None:
                return True
            if self.facts.get("packages_complete", True) is not False:
                return False
            raise Missing(path, self.package_unknown_reason(name))  # "not known whether ... (not in the facts file)"
        if self.package_state(name) == "unknown":
            raise Unknown(path, self.package_unknown_reason(name))
        if attr == "installed":
            return self.is_installed(name)
        if not p or not self.is_installed(name):
            raise Missing(path, f"{name} is not installed")
        if attr == "cuda" and not p.get("cuda"):
            tagged = cuda_from_tag(self.package_variant(name))
            if tagged:
                return tagged
        if attr == "variant" and not p.get("variant"):
            tag = self.package_variant(name)
            if tag:
                return tag
        if attr == "archs":
            return self.package_archs(name)[0]
        if attr == "torch_build":
            # the torch release an AOT wheel was compiled against, from its local tag (0.2.2.post1+cu124torch2.5),
            # else from a hand-written `variant` that states the tag; a build without one (PyPI's) has none
            version = p.get("version")
            built = torch_build_of(local_tag(version) if isinstance(version, str) else None)
            built = built or torch_build_of(p.get("variant") if isinstance(p.get("variant"), str) else None)
            if built is None:
                raise Missing(path, f"{name} is not a build for one torch release (no +cuXXXtorchX.Y tag)")
            return built
        attr_value = p.get(attr)
        if attr_value is None:
            raise Missing(path, f"{name} {attr} not known")
        return attr_value

    def _kernel_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        kernel = self.kernel_package()
        if kernel is None and any(self.version_unknown(k) for k in KERNELS_NEW_NAME_FIRST):
            raise Unknown(path, "; ".join(self.package_unknown_reason(k) for k in KERNELS_NEW_NAME_FIRST))
        if kernel is None:
            raise Missing(path, "neither sglang-kernel nor sgl-kernel is installed")
        return self.lookup(f"pkg.{kernel}.{rest}", gpu)

    def _torch_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        if self.package_state("torch") == "unknown":
            raise Unknown(path, self.package_unknown_reason("torch"))
        if rest == "archs":
            return self.torch_archs()[0]
        if not self.is_installed("torch"):
            raise Missing(path, "torch is not installed")
        if rest == "version":
            v = self.installed_version("torch")
            if v is None:
                raise Missing(path, "torch version not known")
            return v
        if rest == "cuda":
            c = self.torch_cuda()
            if c is None:
                if self.torch_variant() == "cpu":
                    return "none"
                raise Missing(path, "torch's CUDA build not known")
            return c
        if rest == "variant":
            v = self.torch_variant()
            if v is None:
                raise Missing(path, "torch's CUDA variant not known")
            return v
        if rest == "minor":
            pv = public(self.installed_version("torch") or "")
            if pv is None:
                raise Missing(path, "torch version not known")
            return ".".join(str(n) for n in (*pv.release, 0)[:2])
        if rest == "ngc":
            ngc = ngc_build(self.installed_version("torch"))
            if ngc is None:
                raise Missing(path, "torch version not known")
            return ngc
        if rest == "build_tag":
            tag = pytorch_build_tag(self.installed_version("torch"))
            if tag is None:
                raise Missing(path, "torch version not known")
            return tag or "none"
        if rest in ("nccl", "nccl_minor"):
            pin = self.torch_nccl_pin(path)
            return pin if rest == "nccl" else ".".join(pin.split(".")[:2])
        raise Missing(path, f"unknown fact path {path}")

    def torch_nccl_pin(self, path: str) -> str:
        """`torch.nccl`: the nvidia-nccl wheel release the installed torch's CUDA build pins (components.json, the
        release's variant's `nccl`: its METADATA Requires-Dist nvidia-nccl-cuNN==V); Missing where the release or its
        variant is not in the manifests or states none."""
        variant = self.torch_variant()
        if variant is None:
            raise Missing(path, "torch's CUDA variant not known")
        rel = self.release("torch")
        if rel is None:
            raise Missing(path, "torch's release is not in the manifests")
        for v in rel.get("variants") or []:
            if v.get("variant") == variant and isinstance(v.get("nccl"), str):
                return str(v["nccl"])
        raise Missing(path, f"the manifests state no NCCL pin for torch {rel.get('version')} {variant}")

    def _system_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        if rest == "python":
            python = (self.facts.get("system") or {}).get("python")
            if not isinstance(python, str) or not python:
                raise Missing(path, "the Python version is not known (facts.system.python)")
            return python
        if rest != "machine":
            raise Missing(path, f"unknown fact path {path}")
        machine = self.machine()
        if machine is None:
            raise Missing(path, "the machine (x86_64, aarch64) is not known")
        return machine

    def _toolkit_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        if rest == "found":
            return self.toolkit_found(path)
        if rest != "cuda":
            raise Missing(path, f"unknown fact path {path}")
        c = self.toolkit_cuda()
        if c is None:
            raise Missing(path, "no CUDA toolkit found for builds")
        return c

    def _topology_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        topo = self.facts.get("topology") or {}
        value = dict(topo).get(rest)
        if value is None:
            if rest == "interconnect" and len(self.facts.get("gpus") or []) == 1:
                return "single-gpu"
            raise Missing(path, f"topology {rest} not known" + (f": {topo.get('error')}" if topo.get("error") else ""))
        return value

    def _launch_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        if rest in self.launch and self.launch[rest] is not None:
            return self.launch[rest]
        if rest == "tp":
            gpus = self.facts.get("gpus")
            if gpus:
                return len(gpus)
            raise Missing(path, "tensor-parallel size not known (no launch command, no GPUs)")
        env_value = self.launch_env_fact(rest)
        if env_value is not None:
            return env_value
        if rest in _MODEL_DIMS:  # read from the model's config.json, not from a flag
            raise Missing(path, _MODEL_DIMS[rest])
        raise Missing(path, f"launch option {rest} not given")

    def _image_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        return self.image_fact(path, rest)

    def _env_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        env = (self.facts.get("system") or {}).get("env")
        if env is None:
            raise Missing(path, "environment not recorded")
        if rest.startswith("SGLANG_") and isinstance(env, dict) and f"SGL_{rest[7:]}" in env:
            # (SGLang 0.5.3+ copies SGL_X over SGLANG_X at import: facts/sgl_prefix.py; imend5)
            from stackcheck.facts.sgl_prefix import sglang_environ

            env, undecided = sglang_environ({str(k): str(v) for k, v in env.items()}, self.installed_version("sglang"))
            if rest in undecided:
                raise Missing(
                    path,
                    f"SGL_{rest[7:]} is set to another value than {rest}, and whether the installed SGLang copies it "
                    "over (0.5.3 and later do) is not known: its release was not read",
                )
        if rest in env:
            return env[rest]
        raise Missing(path, f"{rest} is not set")

    def _jit_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        return self._section_value("jit", rest, path)

    def _flashinfer_cubins_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        """`flashinfer_cubins.ready.FAMILY`, `.no_download`, `.dir_source`: the cubin probe's section, read only where
        its release is the installed flashinfer-python's (a plan's other release, a facts file edited by hand:
        Missing); a null value is Unknown with the probe's reason, never true."""
        data = self.facts.get("flashinfer_cubins")
        if not isinstance(data, dict):
            raise Missing(path, "FlashInfer's cubin directory not read (not probed, not in the facts file)")
        if "error" in data:
            raise Unknown(path, f"FlashInfer's cubin directory not read: {data['error']}")
        installed = self.installed_version("flashinfer-python")
        if installed is None or data.get("release") != installed:
            raise Missing(
                path,
                f"FlashInfer's cubins were read for flashinfer-python {data.get('release')}, not the installed "
                f"{installed}",
            )
        head, _, family = rest.partition(".")
        if head == "ready" and family:
            family = self._cubin_family_for(family, installed, gpu)
            ready = data.get("ready")
            value = ready.get(family) if isinstance(ready, dict) else None
            if value is None:
                reasons = data.get("ready_reason")
                why = reasons.get(family) if isinstance(reasons, dict) else None
                raise Unknown(
                    path, f"FlashInfer's {family} cubins: " + (why or "not read") + _cubins_fix(installed, family)
                )
            return value
        if rest in ("no_download", "dir_source") and data.get(rest) is not None:
            return data[rest]
        raise Missing(path, f"{path} not known")

    @staticmethod
    def _cubin_family_for(family: str, release: str, gpu: GpuModel | None) -> str:
        """The family a GPU loads: FlashInfer 0.6.16-0.6.17 load `<F>_RUBIN` of TRTLLM_GEN_BMM / _GEMM / DEEPGEMM on
        10.7 (stackcheck/probes/flashinfer_cubins.py RUBIN_SPLIT), so a 10.7 GPU (or one not known) is judged on
        that family; a section read without it has no value for it (unknown, never the B200 family's)."""
        from stackcheck.facts.cubin_releases import RUBIN_SPLIT, RUBIN_SPLIT_RELEASES, release_tuple

        first, last = RUBIN_SPLIT_RELEASES
        version = release_tuple(release)
        if family not in RUBIN_SPLIT or version is None or not first <= version <= last:
            return family
        return f"{family}_RUBIN" if gpu is None or gpu.cc == "10.7" else family

    def _pcie_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        return self._section_value("pcie", rest, path)

    def _cudalib_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        return self.cuda_lib_found(rest, path)

    def _release_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        return self.release_field(rest, path)

    def _known_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        return self.known_release(rest, path)

    def _transfer_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        """`transfer.BACKEND.package`: true where the gate's check transfer-package passes for a prefill or decode
        launch with --disaggregation-transfer-backend BACKEND on these facts (preflight.json transfer_packages,
        judged by the gate's own function: one reading of the entry, not two), what the check observed where it
        fails (the library the loader does not find); Unknown where the gate says unknown."""
        backend, _, field = rest.rpartition(".")
        if field != "package" or not backend:
            raise Missing(path, f"unknown fact path {path}")
        from stackcheck.verdicts.package_checks import check_transfer_package

        subject = f"--disaggregation-mode prefill --disaggregation-transfer-backend {backend}"
        got = check_transfer_package("transfer_backend", backend, subject, self.facts,
                                     self.manifests.preflight, self.installed_version("sglang"))  # fmt: skip
        if got is None:
            raise Missing(path, f"preflight.json transfer_packages judges no {backend} entry for this SGLang release")
        if got.status == "unknown":
            raise Unknown(path, got.message)
        if got.status == "fail":  # what the check observed, the library the loader does not find: the cause
            return str(got.observed or "fails")
        return True

    def _triton_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        if rest == "ptxas_cuda":
            return self.triton_ptxas_cuda(gpu, path)
        if rest == "version":
            triton = self.triton_package()
            if triton is None:
                raise self.no_triton(path)
            return self.lookup(f"pkg.{triton}.version", gpu)
        raise Missing(path, f"unknown fact path {path}")

    def launch_env_fact(self, fact: str) -> bool | None:
        """A launch fact that an environment variable sets (launch.json `env` entries with a `fact`), outside a
        launch command: the server inherits the environment it is started from, so this (probed) environment's
        value, else SGLang's default. None when no variable sets that fact."""
        spec = self._launch_env_spec(fact)
        if spec is None:
            return None
        env = (self.facts.get("system") or {}).get("env") or {}
        if isinstance(env, dict) and any(str(n).startswith("SGL_") for n in env):
            # (SGLang 0.5.3+ copies each SGL_X over SGLANG_X at import: facts/sgl_prefix.py; imend5)
            from stackcheck.facts.sgl_prefix import sglang_environ

            release = self.installed_version("sglang")
            env, undecided = sglang_environ({str(k): str(v) for k, v in env.items()}, release)
            if spec["name"] in undecided:
                raise Missing(
                    f"launch.{fact}",
                    f"SGL_{spec['name'][7:]} is set to another value than {spec['name']}, and whether the installed "
                    "SGLang copies it over (0.5.3 and later do) is not known: its release was not read",
                )
        raw = env.get(spec["name"])
        if spec.get("set_fact") == fact:  # (its `set_fact`: whether the variable is set at all)
            return isinstance(raw, str)
        if isinstance(raw, str):
            raw = raw.strip() if spec.get("strip") else raw
            if raw.lower() in [str(x) for x in spec.get("true") or []]:
                return True
            if raw.lower() in [str(x) for x in spec.get("false") or []]:
                return False
            if isinstance(spec.get("otherwise"), bool):  # any other value is one value, as gate.parse_env reads it
                return bool(spec["otherwise"])
        return bool(spec.get("default"))

    def _launch_env_spec(self, fact: str) -> dict[str, Any] | None:
        """The first launch.json `env` entry that sets `fact` and names its variable (Manifests.launch_env: not the
        whole of launch.json), from an index by fact made once per list of entries and kept with the manifests (every
        launch fact not given is asked here: ~100 times on a plan's first run, each a walk of the entries)."""
        entries = self.manifests.launch_env()
        memo = self.manifests.derived("launch-env-by-fact")
        got = memo.get(None)
        if got is None or got[0] is not entries:
            index: dict[str, dict[str, Any]] = {}
            for spec in entries:
                if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
                    continue
                for key in ("fact", "set_fact"):  # (set_fact: whether the variable is set at all)
                    if isinstance(spec.get(key), str):
                        index.setdefault(spec[key], spec)
            got = memo[None] = (entries, index)  # (the entries kept with it: compared by identity)
        found: dict[str, Any] | None = got[1].get(fact)
        return found

    # ---- images -----------------------------------------------------------------------------
    def image_fact(self, path: str, rest: str) -> Any:
        """image.nvidia_require_text: the image's NVIDIA_REQUIRE_* texts (absent: it states none);
        image.nvidia_require: "met", or "unmet: <requirement> (<why>)", as nvidia-container-toolkit judges it
        against facts.driver and facts.gpus (stackcheck/image/require.py). A section without `nvidia_require`
        (hand-written: the image's Env only) has its requirements read from `env`."""
        given = self.facts.get("image")
        if not isinstance(given, dict):
            raise Missing(path, "not an image audit (no facts.image)")
        image: dict[str, Any] = dict(given)
        raw: Any = image.get("nvidia_require")
        env = image.get("env")
        if raw is None and isinstance(env, dict):
            # a hand-written image section states the Env only (`docker inspect`): read its requirements as
            # the image audit does (stackcheck/image/info.py)
            from stackcheck.image.require import parse_nvidia_require

            raw = image["nvidia_require"] = parse_nvidia_require({str(k): str(v) for k, v in env.items()}).to_facts()
        if rest == "started_by":
            how = image.get("started_by")
            if not isinstance(how, str) or not how:
                raise Missing(path, "how the image's container starts is not stated (--started-by)")
            return how
        section: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
        texts = [str(r.get("text")) for r in section.get("requirements") or [] if isinstance(r, dict)]
        if rest == "nvidia_require_text":
            if not texts and not section.get("errors"):
                raise Missing(path, "the image states no NVIDIA_REQUIRE_* requirement")
            return " AND ".join(texts) or "invalid"
        if rest == "nvidia_require":
            from stackcheck.image.require import judge_facts

            drv = self.manifests.components.get("driver") or {}
            brands = drv.get("container_brands") if isinstance(drv, dict) else None
            verdict = judge_facts(
                image,
                dict(self.facts.get("driver") or {}),
                list(self.facts.get("gpus") or []),
                brands if isinstance(brands, dict) else {},
                self.facts.get("container_toolkit"),
            )
            if verdict.satisfied is None:
                raise Missing(path, f"NVIDIA_REQUIRE_* cannot be judged: {verdict.reason}")
            return "met" if verdict.satisfied else f"unmet: {verdict.failed} ({verdict.reason})"
        raise Missing(path, f"unknown fact path {path}")

    # ---- the host's Docker daemon (stackcheck/probes/docker_daemon.py) -------------------------------
    def _docker_fact(self, path: str, rest: str, gpu: GpuModel | None) -> Any:
        return self.docker_fact(path, rest)

    def docker_fact(self, path: str, rest: str) -> str:
        """docker.read: "read" where the section holds a Docker daemon (Missing where there is none or no section).
        docker.runtime.NAME: "registered" where the host's dockerd has an OCI runtime NAME (stock, its config
        file's `runtimes`, an --add-runtime flag; a name from the file only where dockerd's flags were read, since a
        --config-file names another file, or where a hand-written section does not say they were not), "not
        registered: ..." where the list read is the daemon's whole list (runtimes_complete), else Unknown naming
        what was not read. docker.cdi_kind.VENDOR.CLASS: "found" where a
        CDI spec of the spec directories names device kind VENDOR/CLASS, "none: ..." where every spec directory was read
        (cdi_complete), else Unknown."""
        daemon = self.facts.get("docker_daemon")
        if not isinstance(daemon, dict):
            raise Missing(
                path,
                "the host's Docker daemon was not read (no docker_daemon facts: audit the image on the host that "
                "starts it, or give --host-facts a report of such an audit)",
            )

        def names(key: str) -> list[str]:
            value = daemon.get(key)
            return [str(v) for v in value] if isinstance(value, list) else []

        kind, _, name = rest.partition(".")
        if rest == "read":
            if daemon.get("installed") is False or daemon.get("error"):
                raise Missing(path, str(daemon.get("error") or "no Docker daemon found on the box audited"))
            return "read"
        other = daemon.get("other_daemon")
        if isinstance(other, str) and other and kind in ("runtime", "gpu_request", "cdi_kind"):
            raise Unknown(path, f"docker talks to another daemon than the one read ({other}), which is not read")
        if kind == "runtime" and name:
            flags = names("flag_runtimes")
            config_error = daemon.get("config_error")
            missing = daemon.get("runtime_binary_missing")
            binary = missing.get(name) if isinstance(missing, dict) else None
            if isinstance(binary, str) and (name in flags or name in names("registered") or name in names("runtimes")):
                # registered, but the binary it names is not there: the runc shim's exec of it fails the container
                raise Unknown(
                    path,
                    f"runtime {name} is registered with the binary {binary}, which is not on the host: the container's "
                    "runc shim runs that path as the OCI runtime, and a path that is not there fails the container "
                    "as it is created (not judged further: the host's view read may differ from dockerd's)",
                )
            if name in flags or name in ("runc", "io.containerd.runc.v2"):
                return "registered"
            if isinstance(config_error, str) and config_error:
                raise Unknown(path, f"the Docker daemon's config file was not read: {config_error}")
            listed = sorted({*names("runtimes"), *names("registered"), "runc", "io.containerd.runc.v2"})
            config = daemon.get("config") if isinstance(daemon.get("config"), str) else "its config file"
            if name in listed:
                if daemon.get("flags_read") is False:
                    raise Unknown(
                        path,
                        f"{config} names runtime {name}, but dockerd's flags were not read "
                        f"({daemon.get('flags_reason') or 'no reason given'}): a --config-file may name another file",
                    )
                if daemon.get("config_newer_than_daemon") is True:
                    raise Unknown(
                        path,
                        f"{config} names runtime {name} but changed after dockerd started: the running daemon has "
                        "it only after a restart or reload, which is not visible here",
                    )
                if (
                    daemon.get("flags_read") is True
                    and daemon.get("config_state") == "read"
                    and "config_newer_than_daemon" in daemon
                    and daemon.get("config_newer_than_daemon") is None
                ):
                    raise Unknown(
                        path,
                        f"{config} names runtime {name}, but when dockerd started was not read: a file changed since "
                        "(nvidia-ctk runtime configure without a restart) is not the running daemon's",
                    )
                return "registered"
            if daemon.get("runtimes_complete") is True:
                where = [str(w) for w in (daemon.get("sources") or {}).values()] if daemon.get("sources") else []
                return f"not registered: the daemon registers {', '.join(listed)}" + (
                    f" ({'; '.join(where)})" if where else ""
                )
            why = daemon.get("runtimes_reason") or daemon.get("error") or "the daemon's whole list was not read"
            raise Unknown(path, f"runtime {name} is not among those read ({', '.join(listed)}), but {why}")
        if kind == "gpu_request" and not name:
            return self._default_runtime_runs(path, daemon, self._docker_gpu_request(path, daemon))
        if kind == "cdi_kind" and "." in name:
            vendor, _, device_class = name.rpartition(".")
            name = f"{vendor}/{device_class}"  # docker.cdi_kind.nvidia.com.gpu: kind nvidia.com/gpu
            specs = [s for s in daemon.get("cdi_specs") or [] if isinstance(s, dict)]
            if daemon.get("features_cdi") is False:
                raise Unknown(path, "daemon.json turns CDI off (features.cdi false): Docker injects no CDI device")
            found = [str(s.get("file") or "a spec") for s in specs if s.get("kind") == name]
            if found and daemon.get("installed") is True and daemon.get("flags_read") is False:
                raise Unknown(
                    path,
                    f"{found[0]} names {name}, but dockerd's flags were not read "
                    f"({daemon.get('flags_reason') or 'no reason given'}): a --cdi-spec-dir may replace the "
                    "directories",
                )
            if found and daemon.get("installed") is not False and daemon.get("features_cdi") is not True:
                raise Unknown(
                    path,
                    f"{found[0]} names {name}, but daemon.json does not set features.cdi true: a Docker before "
                    "28.2.0 injects no CDI device without it (on by default from 28.2.0), and dockerd's release is "
                    "not read",
                )
            if found:
                return self._default_runtime_runs(path, daemon, "found")
            # an empty list is dockerd's (cdi-spec-dirs [] or --cdi-spec-dir ""): no directory at all
            listed_dirs = daemon.get("cdi_spec_dirs")
            spec_dirs = ", ".join(
                names("cdi_spec_dirs") if isinstance(listed_dirs, list) else ["/etc/cdi", "/var/run/cdi"]
            )
            held = sorted({str(s.get("kind")) for s in specs})
            if daemon.get("cdi_complete") is True:
                if not spec_dirs:
                    return "none: dockerd reads no CDI spec directory (cdi-spec-dirs empty)"
                return f"none in {spec_dirs}" + (f" (kinds there: {', '.join(held)})" if held else "")
            why = daemon.get("cdi_reason") or "the spec directories were not all read"
            raise Unknown(path, f"no CDI spec read names {name} ({spec_dirs or 'no spec directory'}), but {why}")
        raise Missing(path, f"unknown fact path {path}")

    @staticmethod
    def _default_runtime_runs(path: str, daemon: Mapping[str, Any], value: str) -> str:
        """`value` (a --gpus or CDI container's device path that passes), unless the daemon's default runtime is
        registered with an absolute binary that is not on the host (runtime_binary_missing): a container started
        without --runtime runs under the default runtime (moby daemon/start_unix.go:14-16 at b985e231 sets
        HostConfig.Runtime to Runtimes.Default; runtime_unix.go:203-206 Get("") takes Default), and the runc shim's
        exec of that path fails it as it is created (irev56). Unknown then, as for docker.runtime.NAME."""
        default = daemon.get("default_runtime")
        missing = daemon.get("runtime_binary_missing")
        binary = missing.get(default) if isinstance(default, str) and isinstance(missing, dict) else None
        if isinstance(binary, str):
            raise Unknown(
                path,
                f"the daemon's default runtime {default} is registered with the binary {binary}, which is not on the "
                "host: a container started without --runtime runs under the default runtime, whose runc shim runs that "
                "path as the OCI runtime, and a path that is not there fails the container as it is created (not "
                "judged further: the host's view read may differ from dockerd's)",
            )
        return value

    @staticmethod
    def _docker_gpu_request(path: str, daemon: Mapping[str, Any]) -> str:
        """docker.gpu_request: "served" where dockerd found nvidia-container-runtime-hook on its PATH as it started;
        "not served: ..." where neither that hook nor nvidia-cdi-hook is on its PATH read from /proc/PID/environ;
        else Unknown (the CDI hook alone serves it from Docker 29.2.0 only, whose release is not read; a hook newer
        than dockerd; the PATH not read and no hook in systemd's service PATH)."""
        hooks = daemon.get("gpu_hooks")
        if not isinstance(hooks, dict):
            raise Missing(path, "dockerd's GPU hooks were not looked for (docker_daemon.gpu_hooks)")
        newer = [str(h) for h in daemon.get("gpu_hooks_newer_than_daemon") or []]
        where = str(daemon.get("gpu_hooks_path") or "a PATH not named")
        runtime_hook, cdi_hook = hooks.get("nvidia-container-runtime-hook"), hooks.get("nvidia-cdi-hook")
        if isinstance(runtime_hook, str) and "nvidia-container-runtime-hook" not in newer:
            if isinstance(daemon.get("pid"), int) and "started_at" in daemon and daemon.get("started_at") is None:
                raise Unknown(
                    path,
                    f"{runtime_hook} is on dockerd's PATH, but when dockerd started was not read: a hook installed "
                    "since is not the running daemon's (it looks hooks up as it starts)",
                )
            return "served"
        if newer:
            raise Unknown(path, f"{', '.join(newer)} installed after dockerd started (it looks hooks up as it starts)")
        if isinstance(cdi_hook, str):
            raise Unknown(
                path,
                f"only nvidia-cdi-hook is on dockerd's PATH ({cdi_hook}): it serves --gpus from Docker 29.2.0 only, "
                "and dockerd's release is not read",
            )
        if where.startswith("/proc/"):
            return f"not served: neither nvidia-container-runtime-hook nor nvidia-cdi-hook on dockerd's PATH ({where})"
        raise Unknown(
            path,
            "neither nvidia-container-runtime-hook nor nvidia-cdi-hook in systemd's service PATH, but dockerd's own "
            f"PATH was not read ({where})",
        )

    # ---- probes of issue 16: JIT toolchain, CUDA libraries, PCIe, release records -------------------
    def _section_value(self, section: str, key: str, path: str) -> Any:
        """A value of the `jit` or `pcie` facts section; null or absent is Missing with the probe's reason.
        Without a `jit` section, `jit.cuda` and `jit.nvcc_found` come from the toolkit the toolkits probe
        marked for builds (the jit probe derives them from it the same way)."""
        data = self.facts.get(section)
        if not isinstance(data, dict) and section == "jit" and key in ("cuda", "nvcc_found"):
            tk = next((t for t in self.facts.get("cuda_toolkits") or [] if t.get("active_for_build")), None)
            if tk is not None and key == "cuda" and self.toolkit_cuda() is not None:
                return self.toolkit_cuda()
            if tk is not None and key == "nvcc_found" and isinstance(tk.get("nvcc"), str):
                return True
        if not isinstance(data, dict):
            raise Missing(path, f"{section} facts not known (not probed, not in the facts file)")
        value = data.get(key)
        if value is None or (section == "pcie" and value == "unknown"):
            why = (
                data.get(f"{key}_reason")
                or (data.get("headers_reason") if key.endswith("_header") else None)
                or data.get("error")
            )
            # a jit key the probe wrote as null was looked for and not made out (a wrapper nvcc, a failed
            # probe): Unknown, which `exists` cannot read as absent; a key the facts lack (saved before the
            # probe recorded it) stays Missing
            # (a jit section that is an error alone, a failed probe or a launch's own JIT variables under gate --facts:
            # none of its keys was read, so none is absent: Unknown, which `exists` cannot read as absent: irev70)
            raise (Unknown if section == "jit" and (key in data or "error" in data) else Missing)(
                path, f"{section} {key} not known" + (f": {why}" if why else "")
            )
        return value

    def cuda_lib_found(self, rest: str, path: str) -> bool:
        """`cudalib.NAME.MAJOR` (cudalib.cudart.12): whether the loader finds libNAME.so.MAJOR on this box."""
        name, _, major = rest.rpartition(".")
        libs = self.facts.get("cuda_libs")
        if not isinstance(libs, dict):
            raise Missing(path, "CUDA libraries on the loader's path not known (not probed)")
        soname = f"lib{name}.so.{major}"
        if soname not in libs:
            raise Missing(path, f"{soname} was not looked for")
        unreadable = libs.get("unreadable")
        if isinstance(unreadable, dict) and soname in unreadable:
            why = str(unreadable[soname])
            # (gate --facts: the launch's own loader path, facts_loader_path; a relative LD_LIBRARY_PATH element read
            # from a working directory not known: readers.ldpath.ld_library_path)
            if why.startswith(("the launch sets", "LD_LIBRARY_PATH's element")):
                raise Unknown(path, f"{soname}: {why}")
            raise Unknown(path, f"{soname}: the loader's copy could not be read ({why})")
        return libs.get(soname) is not None

    def release_field(self, rest: str, path: str) -> Any:
        """`release.NAME.FIELD`: a field of the manifests' record of the installed release of NAME."""
        name, _, field_name = rest.rpartition(".")
        if self.facts.get("packages") is None:
            raise Missing(path, "installed packages not known")
        version = self.installed_version(name)
        if version is None:
            raise self.no_version(name, path)
        rel = self.release(name)
        if rel is None and name == "pytorch-triton":  # PyTorch's nightly Triton: 3.5.0+git... is Triton 3.5.0
            rel = self._release_of("triton", version)
        if rel is None:
            newer = self.newer_than_manifests(name)
            read = self.derived_pin(name, field_name) if newer else None
            if read is not None:  # a pin the installed METADATA states (facts.derived), e.g. its Requires-Python
                return read
            if newer:
                raise Missing(path, f"{name} {version} is newer than the manifests (data of {self.manifests.date})")
            raise Missing(path, f"{name} {version} is not in the manifests")
        record: Mapping[str, Any] = rel  # FIELD is any key of the release record
        if record.get(field_name) is None:
            raise Missing(path, f"the manifests record no {field_name} for {name} {rel.get('version')}")
        return record[field_name]

    def derived_pin(self, name: str, field_name: str) -> str | None:
        """A release field that the installed METADATA of a release newer than the data states, read by the derived
        probe (facts.derived[name].pins): only `requires_python`, the one such field a rule reads as it is."""
        if field_name != "requires_python":
            return None
        section = self.facts.get("derived")
        entry = section.get(name) if isinstance(section, dict) else None
        if not isinstance(entry, dict) or entry.get("error") or entry.get("version") != self.installed_version(name):
            return None
        pins = entry.get("pins")
        value = pins.get(field_name) if isinstance(pins, dict) else None
        return value if isinstance(value, str) and value else None

    def known_release(self, name: str, path: str) -> str:
        """`known.NAME`: where the installed release of NAME stands against the manifests' releases:
        "known" (recorded), "older" (older than every one), "newer" (newer than every one), or "unlisted"
        (between recorded releases)."""
        if self.facts.get("packages") is None:
            raise Missing(path, "installed packages not known")
        version = self.installed_version(name)
        if version is None:
            raise self.no_version(name, path)
        if self.release(name) is not None:
            return "known"
        iv = public(version)
        known = [v for v in (parse_version(str(r.get("version", ""))) for r in self.manifests.releases(name)) if v]
        if iv is None or not known:
            raise Missing(path, f"cannot place {name} {version} among the manifests' releases")
        if iv < min(known):
            return "older"
        if iv > max(known):
            return "newer"
        return "unlisted"

    def gpu_min_cuda(self, gpu: GpuModel) -> str:
        """The first CUDA toolkit that compiles for this GPU's architecture (architectures.json `min_cuda`)."""
        for arch in self.manifests.architectures:
            if arch.get("compute_capability") == gpu.cc and "min_cuda" in arch:
                return arch["min_cuda"]
        raise Missing("gpu.min_cuda", f"the manifests record no architecture for compute capability {gpu.cc}")

    def gpu_proprietary_kmod(self, gpu: GpuModel) -> str:
        """Whether NVIDIA's proprietary kernel modules run this GPU: `yes`, `no` or `unknown`
        (architectures.json `proprietary_kernel_modules`: the architecture's `runs`, `no` for a GPU whose name
        holds one of its `gpus_open_only`); Missing where the architecture or its entry is not recorded."""
        for arch in self.manifests.architectures:
            if arch.get("compute_capability") != gpu.cc:
                continue
            entry = arch.get("proprietary_kernel_modules")
            if not isinstance(entry, dict):
                break
            name = gpu.name or ""
            if any(part in name for part in entry.get("gpus_open_only") or ()):
                return "no"
            return str(entry["runs"])
        raise Missing(
            "gpu.proprietary_kmod",
            f"the manifests record no proprietary-kernel-module support for compute capability {gpu.cc}",
        )

    def triton_ptxas_cuda(self, gpu: GpuModel | None, path: str) -> str:
        """The CUDA release of the ptxas that Triton runs for this GPU: the file a TRITON_*_PTXAS variable
        names (its probed --version), else the one bundled with the installed Triton release (components.json
        `tools`: ptxas, or the tool `tool_min_sm` names for this GPU's SM where the release ships it)."""
        if gpu is None:
            raise Missing(path, self.gpus_unknown_reason())
        triton = self.triton_package()
        if triton is None:
            raise self.no_triton(path)
        tools = self.release_field(f"{triton}.tools", path)
        spec = self.manifests.package("triton")
        rel = self.release(triton) or self._release_of("triton", str(self.installed_version(triton)))
        tool_env = (rel or {}).get("tool_env") or spec.get("tool_env")
        env_of: dict[str, Any] = dict(tool_env or {})
        t = cc_tuple(gpu.cc)
        assert t is not None
        min_sm: dict[str, Any] = dict((rel or {}).get("tool_min_sm") or spec.get("tool_min_sm") or {})
        sm = t[0] * 10 + t[1]
        tool = next((name for name, least in min_sm.items() if sm >= least and name in tools), "ptxas")
        var = env_of.get(tool)
        jit = self.facts.get("jit")
        env = (self.facts.get("system") or {}).get("env") or {}
        overrides = jit.get("triton_ptxas") if isinstance(jit, dict) else None
        probed = overrides.get(var) if isinstance(overrides, dict) and var else None
        if isinstance(probed, dict):
            version = probed.get("version")
            if not isinstance(version, str):
                raise Missing(path, f"{var}={probed.get('path')}: version not known: {probed.get('error')}")
            return ".".join(version.split(".")[:2])
        if var and var in env:
            raise Missing(path, f"{var} is set to {env[var]} but its ptxas was not probed")
        bundled = tools.get(tool) if isinstance(tools, dict) else None
        if not isinstance(bundled, str):
            raise Missing(path, f"the manifests record no bundled {tool} for this Triton release")
        return ".".join(bundled.split(".")[:2])

    # ---- gates ------------------------------------------------------------------------------
    def source_table(self, gate_id: str) -> TableValue:
        spec = self.manifests.source_table(gate_id)
        if spec is None:
            raise Missing(f"gate {gate_id}", f"gate {gate_id} is not in the manifests")
        package = spec.get("package")
        release_value: TableValue | None = None
        version = self.installed_version(package) if isinstance(package, str) else None
        if isinstance(package, str):
            if version is None:
                raise self.no_version(package, f"gate {gate_id}")
            rel = self.manifests.source_table_row(gate_id, version)
            if rel is not None:
                release_value = TableValue(
                    rel.get("value"), "release", f"{package} {rel.get('versions')}", rel.get("source")
                )
        probed = (self.facts.get("source_tables") or {}).get(gate_id)
        if isinstance(probed, dict) and probed.get("status") == "ok":
            value = probed.get("value")
            if release_value is not None and _differs(value, release_value.value):
                return TableValue(value, "patched", str(probed.get("file")), release_value.source)
            return TableValue(value, "probed", str(probed.get("file")), spec.get("source"))
        if release_value is not None:
            return release_value
        newest = self.newer_than_manifests(package) if isinstance(package, str) else None
        if newest:
            raise Missing(
                f"gate {gate_id}",
                f"{package} {version} is newer than the manifests (data of {self.manifests.date})",
            )
        raise Missing(f"gate {gate_id}", f"the manifests have no value of {gate_id} for {package} {version}")


def _lib_stem(path: Any) -> str | None:
    """`sgl_kernel/sm100/common_ops.abi3.so` -> `common_ops`."""
    if not isinstance(path, str) or not path:
        return None
    return path.replace("\\", "/").rsplit("/", 1)[-1].split(".", 1)[0]


def _differs(a: Any, b: Any) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        try:
            return sorted(a) != sorted(b)
        except TypeError:
            return a != b
    return bool(a != b)


def _fabric_of(g: Mapping[str, Any]) -> tuple[str, str]:
    """One GPU's fabric registration for `gpu.fabric`: ("bad", what is wrong), ("state", completed or
    not-supported), ("failed", why: the probe's read failed), or ("unread", why)."""
    label = f"GPU {g.get('index', '?')}"
    fabric = g.get("fabric")
    if isinstance(fabric, dict) and fabric.get("state") is None and isinstance(fabric.get("error"), str):
        return "failed", f"{label}: {fabric['error']}"
    if isinstance(fabric, dict) and isinstance(fabric.get("state"), str):
        state, status = str(fabric["state"]), fabric.get("status")
        if state not in ("completed", "not-supported"):
            return "bad", f"{state} ({label})"
        if state == "completed" and status is None:
            return "unread", f"{label}: completed without a status"
        if state == "completed" and status != "success":
            return "bad", f"completed, status {status} ({label})"
        return "state", state
    t = cc_tuple(str(g.get("compute_capability") or ""))
    if t is not None and t[0] < 9:  # NVML's fabric info is for Hopper and newer: no fabric state to read
        return "state", "not-supported"
    return "unread", f"{label}: {g.get('error') if isinstance(g.get('error'), str) else 'not read'}"


def gpu_name_for_cc(manifests: Manifests, cc: str) -> str | None:
    for arch in manifests.architectures:
        if arch.get("compute_capability") == cc:
            gpus = arch.get("gpus")
            if isinstance(gpus, list) and gpus:
                first = gpus[0]
                return first if isinstance(first, str) else str(first.get("name"))
    return None


def assumed_gpus(manifests: Manifests, spec: str, name: str | None = None) -> list[GpuFacts]:
    """'12.0x8' -> eight GPUs of capability 12.0 (for --assume-gpu). `name`: the model the user named; else
    the architecture's name ("Blackwell (RTX PRO / GeForce RTX 50)"), never one card picked for them."""
    cc, _, count = spec.lower().partition("x")
    n = int(count) if count else 1
    if name is None:
        arch = next((a for a in manifests.architectures if a.get("compute_capability") == cc), None)
        name = f"any {arch['name']} GPU" if arch and arch.get("name") else None
    return [
        {"index": i, "name": name, "compute_capability": cc, "uuid": None, "pci_bus_id": None, "memory_bytes": None}
        for i in range(n)
    ]


def _cubins_fix(release: str, family: str = "") -> str:
    """How to have a release's trtllm-gen cubins on the box before the launch (irev77): `download-cubin` is in the
    `flashinfer` CLI of every release read (flashinfer/__main__.py 0.6.0 :193, 0.6.16 :212, 0.7.2 :677, 0.7.4 :680;
    it fills the directory `_get_cubin_dir` picks in the process that runs it), `download-kernels` from 0.7.1
    (0.7.1 :794, 0.7.2 :801: pip-installs flashinfer-cubin and flashinfer-jit-cache of the release from
    https://flashinfer.ai/whl). CUDNN_SDPA is in neither (download_artifacts fetches FMHA, BMM, GEMM, DEEPGEMM and
    DSL_FMHA: 0.7.2 flashinfer/artifacts.py:254-261): installing nvidia-cudnn-frontend avoids the cubins."""
    if family == "CUDNN_SDPA":
        return ("; to avoid them install nvidia-cudnn-frontend (FlashInfer then runs the cuDNN graph), or run the "
                "first cuDNN prefill online as the server's user: download-cubin and flashinfer-cubin do not carry "
                "them")  # fmt: skip
    return (f"; to have them before the launch, run `python -m flashinfer download-cubin` online, as the server's "
            f"user with its environment (it fills the same directory), or install flashinfer-cubin=={release} "
            "(`flashinfer download-kernels` from 0.7.1)")  # fmt: skip


# ---- fact paths: one resolver per first part ----------------------------------------------------------

if TYPE_CHECKING:
    Resolver = Callable[[Context, str, str, GpuModel | None], Any]

#: first part of a fact path -> its resolver (Context.lookup); stackcheck/verdicts/fact_paths.py documents the paths of
#: each, under the same keys in the same order (tests/verdicts/test_fact_paths.py), and generates manifests/README.md's
#: table from them
FACT_PREFIXES: Final[dict[str, Resolver]] = {
    "gpu": Context._gpu_fact,
    "driver": Context._driver_fact,
    "pkg": Context._pkg_fact,
    "kernel": Context._kernel_fact,
    "torch": Context._torch_fact,
    "toolkit": Context._toolkit_fact,
    "topology": Context._topology_fact,
    "launch": Context._launch_fact,
    "env": Context._env_fact,
    "image": Context._image_fact,
    "docker": Context._docker_fact,
    "jit": Context._jit_fact,
    "cudalib": Context._cudalib_fact,
    "pcie": Context._pcie_fact,
    "release": Context._release_fact,
    "known": Context._known_fact,
    "triton": Context._triton_fact,
    "system": Context._system_fact,
    "transfer": Context._transfer_fact,
    "flashinfer_cubins": Context._flashinfer_cubins_fact,
}
