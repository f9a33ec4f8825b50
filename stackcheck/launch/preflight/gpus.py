"""GPU count: which CUDA devices the server will use, and which are visible to it.

The layout (which CUDA ordinals SGLang's ranks take on this node) follows SGLang's scheduler launch
(manifests/preflight.json `gpu_layout`, with its sources); the visible devices follow CUDA's reading of
CUDA_VISIBLE_DEVICES over the GPUs NVML lists (`visible_devices`). Both are pure functions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stackcheck.errors import UsageError
from stackcheck.launch.preflight.result import CheckResult, int_option
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.launch.preflight.result import Status

_INT = _lazy(r"^[+-]?\d+$")
_UUID_PREFIX = _lazy(r"^GPU-[0-9a-fA-F-]+$")
_MIG = _lazy(r"^MIG-[0-9A-Za-z/-]+$")


#: the check ids this module's results carry (imend15: gate_preflight.preflight_checks derives --allow's from them)
CHECK_IDS = ("gpu-count", "parallel-layout")


class Layout(NamedTuple):
    """The parallel layout of a launch, from its flags (SGLang's defaults when absent)."""

    tp: int = 1
    pp: int = 1
    dp: int = 1
    dp_attention: bool = False
    nnodes: int = 1
    node_rank: int = 0
    base_gpu_id: int = 0
    gpu_id_step: int = 1

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Layout:
        return Layout(
            tp=int_option(options, "--tp-size", 1),
            pp=int_option(options, "--pp-size", 1),
            dp=int_option(options, "--dp-size", 1),
            dp_attention=options.get("--enable-dp-attention") is True,
            nnodes=int_option(options, "--nnodes", 1),
            node_rank=int_option(options, "--node-rank", 0),
            base_gpu_id=int_option(options, "--base-gpu-id", 0),
            gpu_id_step=int_option(options, "--gpu-id-step", 1),
        )

    def describe(self) -> str:
        parts = [f"tp {self.tp}"]
        if self.pp > 1:
            parts.append(f"pp {self.pp}")
        if self.dp > 1:
            parts.append(f"dp {self.dp}" + (" (DP attention: inside the TP group)" if self.dp_attention else ""))
        text = " × ".join(parts)
        if self.nnodes > 1:
            text += f", node {self.node_rank} of {self.nnodes}"
        if self.base_gpu_id:
            text += f", --base-gpu-id {self.base_gpu_id}"
        if self.gpu_id_step != 1:
            text += f", --gpu-id-step {self.gpu_id_step}"
        return text


def layout_problems(layout: Layout, source: Any = None) -> list[CheckResult]:
    """SGLang's own assertions on the layout (check_server_args): the server stops at start when they fail."""
    out = []
    if (layout.tp * layout.pp) % layout.nnodes:
        out.append(
            CheckResult(
                "parallel-layout",
                "fail",
                {"tp_x_pp": layout.tp * layout.pp, "nnodes": layout.nnodes},
                "tp × pp divisible by --nnodes",
                f"tp × pp = {layout.tp * layout.pp} is not divisible by --nnodes {layout.nnodes}: SGLang asserts "
                "'tp_size must be divisible by number of nodes' at start",
                source,
            )
        )
    if layout.dp > 1 and layout.nnodes > 1 and not layout.dp_attention:
        out.append(
            CheckResult(
                "parallel-layout",
                "fail",
                {"dp": layout.dp, "nnodes": layout.nnodes, "dp_attention": False},
                "--enable-dp-attention for dp > 1 over several nodes",
                "dp > 1 across nodes without --enable-dp-attention: SGLang asserts 'multi-node data parallel is not "
                "supported unless dp attention'",
                source,
            )
        )
    if layout.dp > 1 and layout.dp_attention and layout.tp % layout.dp:
        out.append(
            CheckResult(
                "parallel-layout",
                "fail",
                {"tp": layout.tp, "dp": layout.dp},
                "tp divisible by dp with --enable-dp-attention",
                f"--enable-dp-attention with tp {layout.tp} not divisible by dp {layout.dp}: SGLang asserts at start",
                source,
            )
        )
    return out


#: more ranks on one node than any node has GPUs: the checks answer from the count (ranks_on_node) instead of
#: listing each rank's ordinal, which for `--tp 100000000` took minutes and gigabytes
MAX_NODE_RANKS = 4096


def _per_node(layout: Layout) -> tuple[int, int, int, int]:
    """(pipeline stages per node, nodes per pipeline stage, tensor ranks per node, DP groups) as SGLang splits a
    launch over its nodes."""
    nnodes = max(1, layout.nnodes)
    nnodes_per_pp_rank = max(nnodes // layout.pp, 1)
    groups = layout.dp if layout.dp > 1 and not layout.dp_attention else 1
    return max(layout.pp // nnodes, 1), nnodes_per_pp_rank, max(layout.tp // nnodes_per_pp_rank, 1), groups


def ranks_on_node(layout: Layout) -> int:
    """How many ranks SGLang starts on this node: the length of gpu_ordinals' list, without building it."""
    pp_per_node, _, tp_per_node, groups = _per_node(layout)
    return groups * pp_per_node * tp_per_node


def gpu_ordinals(layout: Layout, dp_offset_includes_pp: bool = True) -> list[int]:
    """The CUDA device ordinals SGLang's ranks take on this node, in launch order (SGLang 0.5.x:
    engine.py `_launch_scheduler_processes` and data_parallel_controller.py; see preflight.json)."""
    tp, pp = layout.tp, layout.pp
    pp_per_node, nnodes_per_pp_rank, tp_per_node, groups = _per_node(layout)
    node = layout.node_rank
    pp_ranks = range(pp_per_node * (node // nnodes_per_pp_rank), pp_per_node * (node // nnodes_per_pp_rank + 1))
    tp_ranks = range(tp_per_node * (node % nnodes_per_pp_rank), tp_per_node * (node % nnodes_per_pp_rank + 1))
    per_group = tp * (pp if dp_offset_includes_pp else 1) * layout.gpu_id_step
    out: list[int] = []
    for g in range(groups):
        for pp_rank in pp_ranks:
            for tp_rank in tp_ranks:
                out.append(
                    layout.base_gpu_id
                    + g * per_group
                    + (pp_rank % pp_per_node) * tp_per_node
                    + (tp_rank % tp_per_node) * layout.gpu_id_step
                )
    return out


# ---- visible devices ------------------------------------------------------------------------------------


class Visible(NamedTuple):
    """The CUDA devices a process started with `env` sees: ordinal -> NVML index (None: a MIG device)."""

    nvml: list[int | None]
    setting: str  # "unset" | "empty" | "list"
    notes: tuple[str, ...] = ()
    mig: bool = False

    @property
    def size(self) -> int:
        return len(self.nvml)


def visible_devices(value: str | None, gpus: Sequence[Mapping[str, Any]]) -> Visible:
    """CUDA's view of CUDA_VISIBLE_DEVICES over the GPUs NVML lists (NVML itself ignores the variable).

    Entries are indices, GPU UUIDs (a unique prefix of `GPU-...` is enough) or MIG UUIDs. CUDA stops at the
    first entry it cannot use (an index out of range or repeated, -1, an unknown UUID) and shows only the
    devices before it; that is recorded in `notes`. An entry that is none of those shapes (`abc`, `0;1`)
    is a usage error: it is the user's input, and a typo there would otherwise silently hide GPUs.
    """
    indices = [int(g["index"]) for g in gpus if isinstance(g.get("index"), int)]
    if value is None:
        return Visible(list(indices), "unset")
    if not value.strip():
        return Visible([], "empty", ("CUDA_VISIBLE_DEVICES is set and empty: CUDA shows no GPU",))
    out: list[int | None] = []
    notes: list[str] = []
    mig = False
    entries = [e.strip() for e in value.split(",")]
    for pos, entry in enumerate(entries, 1):
        stop = None
        if _INT.match(entry) and len(entry.lstrip("+-")) > 9:  # a number int() may refuse (igap26: exit 4)
            stop = f"index {entry[:12]}... ({len(entry)} characters) is not a GPU here (NVML lists {len(indices)})"
        elif _INT.match(entry):
            n = int(entry)
            if n < 0 or n not in indices:
                stop = f"index {n} is not a GPU here (NVML lists {len(indices)})"
            elif n in out:
                stop = f"index {n} is repeated"
            else:
                out.append(n)
        elif _UUID_PREFIX.match(entry):
            hits = [int(g["index"]) for g in gpus if str(g.get("uuid") or "").lower().startswith(entry.lower())]
            if len(hits) != 1:
                stop = f"{entry} matches {'no' if not hits else len(hits)} GPU{'s' if len(hits) != 1 else ''}"
            elif hits[0] in out:
                stop = f"{entry} is repeated"
            else:
                out.append(hits[0])
        elif _MIG.match(entry):
            if any(g.get("mig_mode") is True for g in gpus):
                out.append(None)
                mig = True
            else:
                stop = f"{entry} is a MIG device, and no GPU here has MIG mode on"
        else:
            raise UsageError(
                f"CUDA_VISIBLE_DEVICES={value!r}: entry {pos} {entry!r} is not a GPU index, GPU-UUID or MIG-UUID "
                "(CUDA would hide it and every entry after it)"
            )
        if stop is not None:
            rest = len(entries) - pos
            notes.append(
                f"CUDA_VISIBLE_DEVICES entry {pos}: {stop}; CUDA ignores it"
                + (f" and the {rest} entr{'y' if rest == 1 else 'ies'} after it" if rest else "")
            )
            break
    return Visible(out, "list", tuple(notes), mig)


def container_note(env: Mapping[str, str], container: str | None, nvml_count: int) -> str | None:
    """Inside a container the runtime applied NVIDIA_VISIBLE_DEVICES when it started: say so when it explains
    why NVML sees fewer GPUs than the launch needs."""
    value = env.get("NVIDIA_VISIBLE_DEVICES")
    if value is None or not container:
        return None
    if value.strip().lower() in ("", "void", "none"):
        return f"NVIDIA_VISIBLE_DEVICES={value!r} in this {container} container: the runtime gave it no GPU"
    return f"NVIDIA_VISIBLE_DEVICES={value!r} in this {container} container: the runtime mounted {nvml_count} GPU(s)"


def check_gpu_count(
    layout: Layout,
    visible: Visible,
    gpus: Sequence[Mapping[str, Any]],
    nvml_error: str | None,
    env: Mapping[str, str],
    container: str | None,
    data: Mapping[str, Any],
    sglang_version: str | None,
) -> tuple[CheckResult, list[int | None]]:
    """The GPU-count check, and the NVML indices of the GPUs the server will use (for the memory check)."""
    from stackcheck.facts.versions import version_in

    layout_data = data.get("gpu_layout") or {}
    includes_pp = True
    layout_source: Any = layout_data.get("source")
    for entry in layout_data.get("dp_offset") or []:
        if sglang_version and version_in(sglang_version, str(entry.get("versions"))) is True:
            includes_pp = bool(entry.get("includes_pp"))
            if layout.dp > 1 and not layout.dp_attention:
                layout_source = entry.get("source")
    ranks = ranks_on_node(layout)
    if ranks > MAX_NODE_RANKS:
        msg = (
            f"the launch starts {ranks} ranks on this node ({layout.describe()}), one GPU each: more GPUs than a "
            f"node holds; {visible.size} visible"
        )
        required_n = {"gpus": ranks, "layout": layout.describe()}
        return CheckResult("gpu-count", "fail", {"visible": visible.size}, required_n, msg, layout_source), []
    ordinals = gpu_ordinals(layout, includes_pp)
    need = max(ordinals) + 1
    distinct = len(set(ordinals))
    cvd = env.get("CUDA_VISIBLE_DEVICES")
    cvd_text = "unset" if cvd is None else repr(cvd)
    observed = {
        "visible": visible.size,
        "nvml_gpus": len(gpus),
        "CUDA_VISIBLE_DEVICES": cvd,
    }
    if env.get("NVIDIA_VISIBLE_DEVICES") is not None:
        observed["NVIDIA_VISIBLE_DEVICES"] = env["NVIDIA_VISIBLE_DEVICES"]
    required = {"gpus": distinct, "highest_ordinal": need - 1, "layout": layout.describe()}
    where = f"ordinals {min(ordinals)}-{max(ordinals)}" if distinct > 1 else f"ordinal {ordinals[0]}"
    uses = (
        f"the launch uses {distinct} GPU{'s' if distinct != 1 else ''} on this node ({layout.describe()}; CUDA {where})"
    )
    seen = f"{visible.size} visible (CUDA_VISIBLE_DEVICES {cvd_text}; NVML lists {len(gpus)})"
    extra = "; ".join(visible.notes)
    mapping = [visible.nvml[o] if o < visible.size else None for o in ordinals]
    if not gpus and nvml_error and cvd is None:
        note = container_note(env, container, 0)
        msg = f"{uses}; the GPUs could not be listed: {nvml_error}" + (f"; {note}" if note else "")
        status: Status = "fail" if note and "no GPU" in note else "unknown"
        return CheckResult("gpu-count", status, observed, required, msg, layout_source), mapping
    if need > visible.size:
        note = container_note(env, container, len(gpus))
        msg = f"{uses}, and {seen}"
        if extra:
            msg += f"; {extra}"
        if note:
            msg += f"; {note}"
        if visible.size == 0:
            msg += ": the ranks find no CUDA device ('no CUDA-capable device is detected')"
        else:
            msg += ": CUDA reports 'invalid device ordinal' when a rank starts"
        return CheckResult("gpu-count", "fail", observed, required, msg, layout_source), mapping
    if visible.mig and distinct > 1:
        mig = (data.get("visible_devices") or {}).get("mig_multi_device") or {}
        msg = f"{uses} out of MIG devices: {mig.get('note', 'several MIG devices in one launch are not known to work')}"
        return CheckResult("gpu-count", "unknown", observed, required, msg, layout_source), mapping
    if distinct < len(ordinals):
        # (ifc61) two ranks on one CUDA device: SGLang 0.5.1-0.5.2 move each DP group by tp x --gpu-id-step alone
        # (0.5.1 data_parallel_controller.py:150), so with --pp-size the groups overlap (`--tp 1 --pp-size 4 --dp-size
        # 2`: 0-3 and 1-4), and --gpu-id-step with --pp-size lands two pipeline stages on one ordinal. Each rank sizes
        # its static pool as --mem-fraction-static of the whole GPU (model_runner.py: rest = available - total x (1 -
        # fraction)), so the second rank on a GPU finds that memory taken: not known to start (inferred from the
        # source, not run)
        shared = sorted({o for o in ordinals if ordinals.count(o) > 1})
        listed = ", ".join(map(str, shared[:8])) + (", ..." if len(shared) > 8 else "")
        msg = (
            f"{uses}, but its {len(ordinals)} ranks land on {distinct} GPUs: two or more ranks share CUDA ordinal "
            f"{listed} (as this release lays the ranks out), and each rank sizes its memory pool as "
            "--mem-fraction-static of the whole GPU, so a rank that finds its GPU taken by another is not known to "
            "start (fail closed); give the layout a GPU per rank (--gpu-id-step 1, no --pp-size with --dp-size on "
            "SGLang 0.5.1-0.5.2)"
        )
        return CheckResult("gpu-count", "unknown", observed, required, msg, layout_source), mapping
    msg = f"{uses}; {seen}" + (f"; {extra}" if extra else "")
    return CheckResult("gpu-count", "ok", observed, required, msg, layout_source), mapping
