"""GPU memory already taken: what SGLang will find free on each GPU it uses, against what it needs.

SGLang measures each GPU's free memory after its distributed init, before loading weights, and gives the
weights and the KV cache `mem_fraction_static` of *that* free memory; the rest stays for activations and
CUDA graphs. With `W` the weights per GPU and `F` the free memory now, the server stops with "Not enough
memory" unless W < mem_fraction_static × F (manifests/preflight.json `memory`, with its sources). So:

- weights known (a local model: the weight files' sizes over tp × pp): W ≥ fraction × F refuses, naming the
  processes that hold the memory;
- weights unknown: another process holding memory is a warning with the figures (the launch may still fit);
- activations: when other processes hold memory, (1 − fraction) × F is smaller than the headroom SGLang's own
  default leaves on an idle GPU: a warning (CUDA graph capture or a long prefill may run out);
- a GPU in compute mode "prohibited", or "exclusive process" with a process on it, refuses;
- with tp > 1, free memory that differs by more than 10 % between the GPUs refuses (SGLang's balance check),
  unless the environment turns that check off.

The default fraction is computed from the release's formula with the smallest reserve it can take, so it is
never below SGLang's: a refusal on the default is certain, an allow is the best that can be said.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stackcheck.launch.preflight.gpus import Layout
from stackcheck.launch.preflight.result import CheckResult, gib, truthy
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.launch.preflight.result import Status
    from stackcheck.probes.gpu_usage import GpuProcess, GpuUsage, UsageReading

MIB = 1 << 20


#: the check ids this module's results carry (imend15: gate_preflight.preflight_checks derives --allow's from them)
CHECK_IDS = ("gpu-memory", "gpu-memory-balance", "gpu-compute-mode")


class Weights(NamedTuple):
    """The model's weight files: total bytes, how many files, and where (for the message)."""

    total_bytes: int
    files: int
    where: str


class Fraction(NamedTuple):
    value: float
    how: str  # "--mem-fraction-static 0.9" or "SGLang 0.5.9's default for this GPU (at most 0.929)"
    explicit: bool
    reserve_mb: float | None = None  # the default's reserve (MB) when computed
    source: Any = None


def default_fraction(
    data: Mapping[str, Any], sglang_version: str | None, total_bytes: int, layout: Layout
) -> Fraction | None:
    """An upper bound of the release's default mem_fraction_static on a GPU of `total_bytes`."""
    from stackcheck.facts.versions import version_in

    entries = ((data.get("memory") or {}).get("default_mem_fraction")) or []
    entry = None
    if sglang_version:
        entry = next((e for e in entries if version_in(sglang_version, str(e.get("versions"))) is True), None)
    if entry is None:
        return None
    gpu_mb = total_bytes / MIB
    tiers = [t for t in entry.get("tiers") or [] if isinstance(t, dict)]
    tier = next((t for t in tiers if t.get("below_mb") is None or gpu_mb < float(t["below_mb"])), None)
    if tier is None or gpu_mb <= 0:
        return None
    parallel = layout.tp * layout.pp
    reserve = float(tier.get("reserve_mb", 0)) + float(tier.get("per_parallel_mb", 0)) * parallel
    reserve = max(reserve, float(tier.get("floor_mb", 0)))
    value = round((gpu_mb - reserve) / gpu_mb, 3)
    how = f"SGLang {sglang_version}'s default for this GPU (at most {value})"
    return Fraction(value, how, False, reserve, entry.get("source"))


def _holders(procs: Sequence[GpuProcess], limit: int = 4) -> str:
    if not procs:
        return "no process listed by NVML (memory held by another container or the driver)"
    ranked = sorted(procs, key=lambda p: -(p.used_bytes or 0))
    parts = [f"pid {p.pid} ({p.name or 'name not given by NVML'}) {gib(p.used_bytes)}" for p in ranked[:limit]]
    if len(ranked) > limit:
        parts.append(f"{len(ranked) - limit} more")
    return ", ".join(parts)


def _procs_json(procs: Sequence[GpuProcess]) -> list[dict[str, Any]]:
    return [{"pid": p.pid, "name": p.name, "used_bytes": p.used_bytes, "kind": p.kind} for p in procs]


def _gpu_label(g: GpuUsage) -> str:
    return f"GPU {g.index}" + (f" ({g.name})" if g.name else "")


def check_memory(
    usage: UsageReading | None,
    indices: Sequence[int | None],
    explicit_fraction: float | None,
    layout: Layout,
    weights: Weights | None,
    env: Mapping[str, str],
    data: Mapping[str, Any],
    sglang_version: str | None,
    own_pids: Sequence[int] = (),
) -> list[CheckResult]:
    mem = data.get("memory") or {}
    source = mem.get("source")
    if usage is None:
        return []
    wanted = sorted({i for i in indices if i is not None})
    if usage.error is not None or not wanted:
        why = usage.error or "the GPUs the server will use are not known"
        return [
            CheckResult(
                "gpu-memory",
                "unknown",
                None,
                "free memory on each GPU the server uses",
                f"GPU memory in use could not be read: {why}",
                source,
            )
        ]
    by_index = usage.by_index()
    per_gpu = weights.total_bytes // max(1, layout.tp * layout.pp) if weights else None
    out: list[CheckResult] = []
    frees: list[tuple[GpuUsage, int]] = []
    modes = {str(k): v for k, v in (mem.get("compute_modes") or {}).items()}
    for index in wanted:
        g = by_index.get(index)
        if g is None or g.free is None or g.total is None:
            out.append(
                CheckResult(
                    "gpu-memory",
                    "unknown",
                    None,
                    "free memory",
                    f"GPU {index}: memory could not be read: {(g.error if g else None) or 'not listed by NVML'}",
                    source,
                    subject=f"GPU {index}",
                )
            )
            continue
        others = [p for p in g.processes if p.pid not in own_pids]
        out.extend(_compute_mode(g, others, modes, mem.get("compute_modes")))
        frees.append((g, g.free))
        default = default_fraction(data, sglang_version, g.total, layout)
        if explicit_fraction is not None:
            fraction: Fraction | None = Fraction(
                explicit_fraction, f"--mem-fraction-static {explicit_fraction:g}", True
            )
        else:
            fraction = default
        idle_reserve = int(default.reserve_mb * MIB) if default and default.reserve_mb is not None else None
        out.append(_memory_result(g, others, fraction, idle_reserve, per_gpu, weights, layout, source))
    # SGLang compares free memory within one TP group (its world): with dp > 1 and no DP attention each DP
    # rank is its own group of consecutive ordinals (gpu_ordinals' order), else all the GPUs form one
    free_by_index = {g.index: (g, free) for g, free in frees}
    size = len(indices) // layout.dp if layout.dp > 1 and not layout.dp_attention else len(indices)
    for start in range(0, len(indices), max(1, size)):
        chunk = [free_by_index[i] for i in dict.fromkeys(indices[start : start + size]) if i in free_by_index]
        out.extend(_balance(chunk, layout, env, mem.get("imbalance") or {}))
    return out


def _compute_mode(g: GpuUsage, others: Sequence[GpuProcess], names: Mapping[str, Any], spec: Any) -> list[CheckResult]:
    mode = g.compute_mode
    if mode is None:
        return []
    name = str(names.get(str(mode), f"mode {mode}"))
    src = spec.get("source") if isinstance(spec, Mapping) else None
    if name == "prohibited":
        msg = f"{_gpu_label(g)} is in compute mode prohibited: no process can create a CUDA context on it"
        return [CheckResult("gpu-compute-mode", "fail", name, "default", msg, src, subject=f"GPU {g.index}")]
    if name == "exclusive-process" and others:
        msg = (
            f"{_gpu_label(g)} is in compute mode exclusive-process and already runs {_holders(others)}: "
            "CUDA refuses a second process (all CUDA-capable devices are busy or unavailable)"
        )
        return [
            CheckResult(
                "gpu-compute-mode",
                "fail",
                name,
                "default, or no other process",
                msg,
                src,
                subject=f"GPU {g.index}",
                details={"processes": _procs_json(others)},
            )
        ]
    return []


def _memory_result(
    g: GpuUsage,
    others: Sequence[GpuProcess],
    fraction: Fraction | None,
    idle_reserve: int | None,
    per_gpu: int | None,
    weights: Weights | None,
    layout: Layout,
    source: Any,
) -> CheckResult:
    assert g.free is not None and g.total is not None
    label = _gpu_label(g)
    held = g.total - g.free
    details: dict[str, Any] = {"total_bytes": g.total, "free_bytes": g.free, "processes": _procs_json(others)}
    observed: dict[str, Any] = {"free_bytes": g.free, "total_bytes": g.total, "used_bytes": held}
    have = f"{label}: {gib(g.free)} free of {gib(g.total)}"
    if others:
        have += f", held by {_holders(others)}"
    if fraction is None:
        msg = f"{have}; the default --mem-fraction-static of this SGLang release is not known to stackcheck"
        plain: Status = "warn" if others else "ok"
        return CheckResult("gpu-memory", plain, observed, None, msg, source, subject=f"GPU {g.index}", details=details)
    budget = int(fraction.value * g.free)
    observed["fraction"] = fraction.value
    required: dict[str, Any] = {"weights_and_kv_cache_bytes": budget, "fraction": fraction.value}
    rule = f"{fraction.how} × {gib(g.free)} free = {gib(budget)} for weights and KV cache"
    if per_gpu is not None and weights is not None:
        observed["weights_per_gpu_bytes"] = per_gpu
        required["weights_per_gpu_below_bytes"] = budget
        wtext = (
            f"the model's weights, {gib(weights.total_bytes)} in {weights.files} file(s) at {weights.where}, "
            f"come to about {gib(per_gpu)} per GPU over tp × pp = {layout.tp * layout.pp}"
        )
        if per_gpu >= budget:
            msg = (
                f"{have}; {rule}, and {wtext}: SGLang stops with 'Not enough memory. Please try to increase "
                "--mem-fraction-static'"
            )
            if not fraction.explicit and fraction.value < 0.95:
                msg += " (a larger --mem-fraction-static, or freeing the GPU, would fit it)"
            return CheckResult(
                "gpu-memory", "fail", observed, required, msg, [source, fraction.source] if fraction.source else source,
                subject=f"GPU {g.index}", details=details,
            )  # fmt: skip
        msg = f"{have}; {rule}; {wtext}"
    else:
        msg = f"{have}; {rule}; the model's weight size is not known here (not a local model, or not read)"
    headroom = int((1 - fraction.value) * g.free)
    observed["activation_headroom_bytes"] = headroom
    if others:
        # SGLang's default leaves `reserve` MB on an idle GPU for activations and CUDA graphs; with other
        # processes holding memory, (1 - fraction) of what is free is less than that.
        if idle_reserve is not None and headroom < idle_reserve:
            msg += (
                f"; only {gib(headroom)} stays for activations and CUDA graphs, less than the {gib(idle_reserve)} "
                "SGLang's default leaves on an idle GPU of this size (CUDA graph capture or a long prefill may run out)"
            )
    status: Status = "warn" if others else "ok"
    return CheckResult("gpu-memory", status, observed, required, msg, source, subject=f"GPU {g.index}", details=details)


def _balance(
    frees: Sequence[tuple[GpuUsage, int]], layout: Layout, env: Mapping[str, str], spec: Mapping[str, Any]
) -> list[CheckResult]:
    if layout.tp <= 1 or len(frees) < 2:
        return []
    ratio = float(spec.get("ratio", 0.9))
    lo_gpu, lo = min(frees, key=lambda x: x[1])
    hi_gpu, hi = max(frees, key=lambda x: x[1])
    observed = {f"GPU {g.index}": free for g, free in frees}
    required = f"the least free at least {ratio:g} × the most free"
    if lo >= ratio * hi:
        return []
    off = [name for name in spec.get("disable_env") or [] if truthy(env.get(str(name)))]
    enable = spec.get("enable_env")
    if isinstance(enable, str) and truthy(env.get(enable)) is False:
        off.append(f"{enable}={env.get(enable)}")
    msg = (
        f"free memory is unbalanced across the GPUs: {_gpu_label(lo_gpu)} has {gib(lo)} free, {_gpu_label(hi_gpu)} "
        f"{gib(hi)}; SGLang stops with 'The memory capacity is unbalanced. Some GPUs may be occupied by other "
        f"processes.' when the least is below {ratio:g} × the most"
    )
    holders = [p for g, _ in frees for p in g.processes]
    if holders:
        msg += f" (held by {_holders(holders)})"
    if off:
        return [
            CheckResult(
                "gpu-memory-balance", "warn", observed, required, msg + f"; the check is off here ({', '.join(off)})",
                spec.get("source"),
            )
        ]  # fmt: skip
    return [CheckResult("gpu-memory-balance", "fail", observed, required, msg, spec.get("source"))]
