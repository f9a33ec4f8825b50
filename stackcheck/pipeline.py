"""Building the parts for a command: gather facts (probe, or read a saved file), apply --assume-*
options, evaluate, plan. The command modules call these; the core stays pure."""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from stackcheck.errors import ProbeFailedError, UsageError
from stackcheck.facts import Facts, ProbeOutcome, cc_tuple, load_facts_document

if TYPE_CHECKING:  # the engine is imported lazily: see evaluate()
    from stackcheck.context import Context
    from stackcheck.manifest_loader import Manifests

DEFAULT_PROBES = ["nvml", "toolkits", "packages", "system", "cuda_libs", "pcie"]
INTERCONNECTS = ("nvswitch", "nvlink", "pcie-switch", "pcie-host-bridge", "cross-socket", "pcie")


@dataclass
class Options:
    facts_file: str | None = None
    manifests_dirs: list[str] = field(default_factory=list)
    assume_gpu: str | None = None
    assume_driver: str | None = None
    assume_interconnect: str | None = None
    strict: bool = False
    deep: bool = False
    timeout_s: float = 8.0
    launch: dict[str, Any] = field(default_factory=dict)


def parse_assume_gpu(spec: str, default_count: int = 1) -> tuple[str, int]:
    """'12.0x8' -> ('12.0', 8); without xN, `default_count` (the box's own GPU count when it has GPUs)."""
    cc, _, count = spec.strip().lower().partition("x")
    if cc_tuple(cc) is None or (count and (not count.isdigit() or not 0 < int(count) <= 4096)):
        raise UsageError(f"--assume-gpu {spec!r}: expected CAPABILITY[xCOUNT], for example 12.0x8 or 9.0")
    return cc, int(count) if count else max(1, default_count)


def check_known_cc(manifests: Manifests, cc: str, option: str = "--assume-gpu") -> None:
    known = sorted(
        {str(a.get("compute_capability")) for a in manifests.architectures}, key=lambda c: cc_tuple(c) or (0, 0)
    )
    if known and cc not in known:
        raise UsageError(
            f"{option} {cc}: no architecture with compute capability {cc} in the manifests (known: {', '.join(known)})"
        )


def load_manifests(dirs: list[str]) -> Manifests:
    from stackcheck.manifest_loader import load

    return load(dirs)


class Background:
    """Run a function in a thread now and take its result (or its exception) later. Used to load the
    manifests and import the engine while the probes wait on the driver (NVML calls release the GIL)."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._fn = fn
        self._result: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True, name="stackcheck-preload")
        self._thread.start()

    def _run(self) -> None:
        try:
            self._result = self._fn()
        except BaseException as exc:  # re-raised in the caller's thread by get()
            self._error = exc

    def get(self) -> Any:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._result


def gather(
    opts: Options, manifests: Callable[[], Manifests] | None = None
) -> tuple[Facts, list[ProbeOutcome], dict[str, Any] | None]:
    """Facts from a saved file, or from the probes; the host block of a saved report is kept."""
    if opts.facts_file:
        facts, host = load_facts_document(opts.facts_file)
        return facts, [ProbeOutcome(name="facts-file", status="ok", reason=str(opts.facts_file), duration_ms=0.0)], host
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.runner import run_probes

    names = list(DEFAULT_PROBES)
    facts, outcomes = run_probes(names, ProbeContext(), budget_s=opts.timeout_s)
    post_probes(facts, outcomes, opts, manifests or (lambda: load_manifests(opts.manifests_dirs)))
    scrub_home(facts)
    if opts.strict:
        bad = [o for o in outcomes if o.get("status") in ("failed", "timeout")]
        if bad:
            raise ProbeFailedError(
                "; ".join(f"probe {o.get('name')} {o.get('status')}: {o.get('reason')}" for o in bad)
            )
    return facts, outcomes, None


def scrub_home(value: Any, home: str | None = None) -> Any:
    """Replace the home directory in every path of the facts with "~" (in place), once the probes that need
    the real paths have run: a report names no user where a path is not needed."""
    import os

    home = (home if home is not None else os.path.expanduser("~")).rstrip("/")
    if not home or home == "~":
        return value
    if isinstance(value, dict):
        for k, v in value.items():
            value[k] = scrub_home(v, home)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            value[i] = scrub_home(v, home)
    elif isinstance(value, str) and home in value:
        return value.replace(home + "/", "~/") if value != home else "~"
    return value


def post_probes(facts: Facts, outcomes: list[ProbeOutcome], opts: Options, manifests: Callable[[], Manifests]) -> None:
    """Probes that read what the first round found (package locations): the gate tables in the installed
    sources always; for a release newer than the data, the facts its own files hold (stackcheck.derive,
    cached per file); with --deep, the CUDA targets in the binaries and the shared-library resolution."""

    def source_tables() -> Any:
        from stackcheck.probes.source_tables import probe_source_tables

        return probe_source_tables(facts, manifests().gates)

    def jit() -> Any:
        import os

        from stackcheck.probes.fsview import HostView
        from stackcheck.probes.jit import probe_jit

        # the toolkit a JIT build picks follows the environment the server will be started from: this one
        return probe_jit(facts, dict(os.environ), HostView("/"))

    def binaries() -> Any:
        from stackcheck.deep.binaries import probe_binaries

        return probe_binaries(facts)

    def libs() -> Any:
        import os

        from stackcheck.deep.libs import probe_libs

        # the loader's search follows the environment the server will be started from: this one
        return probe_libs(facts, {"LD_LIBRARY_PATH": os.environ.get("LD_LIBRARY_PATH", "")})

    def derived() -> Any:
        from stackcheck.derive.installed import derive_installed

        return derive_installed(facts, manifests()) or None  # nothing newer than the data: no section

    steps: list[tuple[str, Callable[[], Any]]] = [("source_tables", source_tables), ("derived", derived), ("jit", jit)]
    if opts.deep:
        steps += [("binaries", binaries), ("libs", libs)]
    for name, fn in steps:
        start = time.perf_counter()
        status: Literal["ok", "failed"] = "ok"
        reason: str | None = None
        try:
            value = fn()
            if value is None:
                continue
            facts[name] = value  # type: ignore[literal-required]
        except Exception as exc:  # a probe never crashes the audit
            from stackcheck.probes.interface import one_line

            status, reason = "failed", one_line(exc)[:300]
        outcomes.append(
            ProbeOutcome(
                name=name,
                status=status,
                reason=reason,
                duration_ms=round((time.perf_counter() - start) * 1000, 2),
            )
        )


def apply_interconnect(topo: dict[str, Any], link: str) -> None:
    """An assumed interconnect: `nvswitch` is NVLink through an NVSwitch (NVLink multicast), `nvlink` says
    nothing about a switch; PCIe kinds have no NVLink at all, so no multicast either."""
    if link == "nvswitch":
        topo.update(interconnect="nvlink", nvswitch=True, p2p="all")
    elif link == "nvlink":
        topo.update(interconnect="nvlink", p2p="all")
    else:
        topo.update(interconnect=link, nvswitch=False)


def apply_assumptions(facts: Facts, opts: Options, manifests: Manifests) -> Facts:
    """--assume-gpu / --assume-driver / --assume-interconnect: evaluate for hardware that is not here."""
    if not (opts.assume_gpu or opts.assume_driver or opts.assume_interconnect):
        return facts
    out: Facts = copy.deepcopy(facts)
    assumed = list(out.get("assumed") or [])
    if opts.assume_gpu:
        from stackcheck.context import assumed_gpus

        cc, n = parse_assume_gpu(opts.assume_gpu, len(out.get("gpus") or []))
        check_known_cc(manifests, cc)
        out["gpus"] = assumed_gpus(manifests, f"{cc}x{n}")
        topo = dict(out.get("topology") or {})
        topo.update({"gpu_count": n, "same_model": True, "pairs": []})
        topo["interconnect"] = "single-gpu" if n == 1 else None
        topo["p2p"] = None
        topo.pop("error", None)
        out["topology"] = topo  # type: ignore[typeddict-item]
        assumed.append(f"gpus={cc}x{n}")
    if opts.assume_interconnect:
        link = opts.assume_interconnect
        if link not in INTERCONNECTS:
            raise UsageError(f"--assume-interconnect {link!r}: expected one of {', '.join(INTERCONNECTS)}")
        if link == "pcie":
            link = "pcie-host-bridge"
        topo = dict(out.get("topology") or {})
        apply_interconnect(topo, link)
        out["topology"] = topo  # type: ignore[typeddict-item]
        assumed.append(f"interconnect={opts.assume_interconnect}")
    if opts.assume_driver:
        from stackcheck.versions import numeric_tuple

        if numeric_tuple(opts.assume_driver) is None or len(opts.assume_driver.split(".")) < 2:
            raise UsageError(f"--assume-driver {opts.assume_driver!r}: expected a driver version such as 580.95.05")
        out["driver"] = {
            "version": opts.assume_driver,
            "cuda": driver_cuda(manifests, opts.assume_driver),
            "source": "assumed",
        }
        assumed.append(f"driver={opts.assume_driver}")
    out["assumed"] = assumed
    return out


def driver_cuda(manifests: Manifests, version: str) -> str | None:
    """The highest CUDA a driver supports, from the manifests' driver branches and CUDA minimums."""
    from stackcheck.versions import compare_numeric

    best: tuple[tuple[int, ...], str] | None = None
    cuda = manifests.components.get("cuda") or {}
    for rel in cuda.get("releases") or []:
        if not isinstance(rel, dict):
            continue
        need = rel.get("min_driver")
        if isinstance(need, str) and (compare_numeric(version, need) or 0) >= 0:
            from stackcheck.versions import numeric_tuple

            t = numeric_tuple(str(rel.get("version")))
            if t is not None and (best is None or t > best[0]):
                best = (t, str(rel.get("version")))
    return best[1] if best else None


Gathered = tuple[Facts, list[ProbeOutcome], dict[str, Any] | None]


def evaluate(
    opts: Options,
    want_plan: bool = True,
    manifests: Manifests | None = None,
    gathered: Callable[[], Gathered] | None = None,
) -> tuple[dict[str, Any], Context]:
    """The whole audit: facts -> verdicts -> plan, as a report document. `manifests`, when the caller has
    loaded them already, are not read again; `gathered`, when the caller started the probes earlier (the
    gate starts them before it reads the command line), gives their result."""
    loaded = manifests

    def preload() -> Manifests:
        m = loaded if loaded is not None else load_manifests(opts.manifests_dirs)
        import stackcheck.report
        import stackcheck.verdicts

        if want_plan:
            import stackcheck.plan  # noqa: F401
        return m

    later = Background(preload)
    facts, outcomes, host = gathered() if gathered is not None else gather(opts, later.get)
    manifests = later.get()
    assert manifests is not None
    from stackcheck.context import Context
    from stackcheck.report import base_report, summarize
    from stackcheck.verdicts import evaluate_all

    facts = apply_assumptions(facts, opts, manifests)
    ctx = Context(facts=facts, manifests=manifests, launch=dict(opts.launch))
    features, checks = evaluate_all(ctx)
    report = base_report(facts, outcomes, manifests, host)
    report["features"] = features
    report["checks"] = checks
    report["summary"] = summarize(list(map(dict, features)), list(map(dict, checks)))
    if want_plan:
        from stackcheck.plan import make_plan

        report["plan"] = make_plan(ctx, features)
    return report, ctx
