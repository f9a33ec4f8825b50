"""Filled facts: what a facts file leaves out that the manifests' own sourced tables decide exactly. Pure.

A hand-written inventory often names the GPU without its compute capability (`nvidia-smi
--query-gpu=name,driver_version` on an old driver has no `compute_cap`) or gives the driver version without the
CUDA version it supports. The manifests hold both tables with their sources: architectures.json lists NVML's
exact GPU names per compute capability (`gpus`, `gpu_name_sources`), components.json each CUDA release with its
minimum driver (`cuda.releases[].min_driver`, CUDA-RN Table 3). This step fills such an absent value from them
and marks it where it lies: the GPU (or driver) entry gets `filled: {KEY: {text, source, table}}`, the rules
that read it are marked `inferred` with the text (stackcheck.verdicts.engine), and the report's text says it
under the box line ("filled from the manifests, not stated: ...").

The rules that keep it exact (a false pass is the worst bug):
- only an absent key is filled (`compute_capability` or `cuda` missing from its entry): a value the file gives,
  even `null` (a probed report writes `null` with the section's `error` where the probe could not read it), is
  never replaced, and an entry with an `error` is left as it is; live probes never reach this step (the pipeline
  calls it for `--facts` input only);
- a compute capability only from a name written exactly as architectures.json lists it, and only where that name
  maps to exactly one capability (a shortened name, "NVIDIA H100", names several cards: nothing is filled);
- a driver's CUDA only where the table brackets the driver: the newest CUDA release whose minimum driver the
  version reaches, and the next release by version has a known minimum driver above it, neither row marked
  inferred (a driver newer than every row, or below a release whose driver row was not read, such as 12.7's
  R565, which reports a CUDA that no toolkit shipped, or 13.4's inferred R616, fills nothing). The value is the
  driver's own CUDA: a forward-compatibility package (cuda-compat, as NGC images ship it) makes the box report a
  newer one, never an older one (tests/realworld/flashinfer-911: driver 550, CUDA 12.6). Every driver.cuda rule
  reads "at least", so the filled value can fail a check the compat package would pass (the reason says inferred
  and names the filled value), never pass one that the box's real value fails.

Torch's CUDA build from a PEP 440 local tag (2.9.1+cu130 -> cu130, CUDA 13.0; +cpu; +rocm6.3) is not done here:
the lookups read it from the version itself (stackcheck.verdicts.context: Context.torch_variant, torch_cuda,
pkg.NAME.variant / cuda), as the packages probe writes it from torch/version.py.
"""

from __future__ import annotations

from collections.abc import Mapping

from stackcheck.lean_typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.facts.model import Facts
    from stackcheck.knowledge.loader import Manifests

#: the key of a GPU or driver entry that records what was filled in it, and from what
MARK = "filled"


def fill(facts: Facts, manifests: Manifests) -> tuple[Facts, list[str]]:
    """The facts with every value the tables decide filled in (copied where changed), and the texts of what was
    filled ("compute capability 12.0 of GPU 0 (NVIDIA GeForce RTX 5090): from its name, per architectures.json
    (XINF-3603)"); the facts themselves, and no text, when nothing is filled."""
    texts: list[str] = []
    out: dict[str, Any] = dict(facts)
    gpus = facts.get("gpus")
    if isinstance(gpus, list):
        new_gpus: list[Any] = []
        for i, gpu in enumerate(gpus):
            mark = _gpu_cc(gpu, i, manifests)
            if mark is None:
                new_gpus.append(gpu)
                continue
            cc, record = mark
            entry: dict[str, Any] = dict(cast("Mapping[str, Any]", gpu))
            entry["compute_capability"] = cc
            entry[MARK] = {**dict(entry.get(MARK) or {}), "compute_capability": record}
            new_gpus.append(entry)
            texts.append(record["text"])
        if texts:
            out["gpus"] = new_gpus
    driver = facts.get("driver")
    mark_d = _driver_cuda(driver, manifests) if isinstance(driver, dict) else None
    if mark_d is not None:
        cuda, record = mark_d
        entry_d = dict(cast("dict[str, Any]", driver))
        entry_d["cuda"] = cuda
        entry_d[MARK] = {**dict(entry_d.get(MARK) or {}), "cuda": record}
        out["driver"] = entry_d
        texts.append(record["text"])
    if not texts:
        return facts, []
    return cast("Facts", out), texts


def _gpu_cc(gpu: Any, index: int, manifests: Manifests) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(gpu, dict) or "compute_capability" in gpu or gpu.get("error"):
        return None
    name = gpu.get("name")
    if not isinstance(name, str) or not name.strip():
        return None
    found = gpu_name_capability(manifests, name)
    if found is None:
        return None
    cc, source, inferred = found
    idx = gpu.get("index")
    which = f"GPU {idx if isinstance(idx, int) else index}"
    record = {
        "text": f"compute capability {cc} of {which} ({name}): from its name, per architectures.json "
        f"({_source_text(source)})",
        "from": {"gpu_name": name},
        "table": "architectures.json",
        "source": source,
    }
    if inferred:
        record["inferred"] = True
    return cc, record


def gpu_name_capability(manifests: Manifests, name: str) -> tuple[str, Any, bool] | None:
    """(compute capability, source, whether the name's listing is marked inferred) of a GPU named exactly as an
    architecture of architectures.json lists it in `gpus`; None when no architecture, or more than one
    capability, lists the name."""
    text = name.strip()
    ccs: dict[str, tuple[Any, bool]] = {}
    for arch in manifests.architectures:
        names = [g if isinstance(g, str) else (g or {}).get("name") for g in arch.get("gpus") or []]
        cc = arch.get("compute_capability")
        if text not in names or not isinstance(cc, str):
            continue
        # the source that saw this exact name, and the table of cards per capability (CUDA-GPUS) where the
        # architecture cites it
        named: Any = None
        inferred = False
        for listing in arch.get("gpu_name_sources") or []:
            if isinstance(listing, Mapping) and text in (listing.get("names") or []):
                named, inferred = listing.get("source"), bool(listing.get("inferred"))
                break
        table = [s for s in _as_list(arch.get("source")) if s == "CUDA-GPUS"] or _as_list(arch.get("source"))
        source = [*_as_list(named), *(s for s in table if s not in _as_list(named))]
        ccs.setdefault(cc, (source, inferred))
    if len(ccs) != 1:
        return None
    cc, (source, inferred) = next(iter(ccs.items()))
    return cc, source, inferred


def _driver_cuda(driver: Mapping[str, Any], manifests: Manifests) -> tuple[str, dict[str, Any]] | None:
    if "cuda" in driver or driver.get("error"):
        return None
    version = driver.get("version")
    if not isinstance(version, str):
        return None
    found = driver_cuda_bracketed(manifests, version)
    if found is None:
        return None
    cuda, need, above, source = found
    record = {
        "text": f"driver CUDA {cuda} of driver {version}: per components.json's CUDA releases (CUDA {cuda} needs "
        f"driver >= {need}, {above[0]} needs >= {above[1]}; {_source_text(source)}); the driver's own, a "
        "cuda-compat package would raise it",
        "from": {"driver_version": version},
        "table": "components.json cuda.releases",
        "source": source,
    }
    return cuda, record


def driver_cuda_bracketed(manifests: Manifests, version: str) -> tuple[str, str, tuple[str, str], Any] | None:
    """(CUDA version, its minimum driver, (the next CUDA release, its minimum driver), source) for a driver the
    table brackets (the module's rules); None otherwise."""
    from stackcheck.facts.versions import compare_numeric, numeric_tuple

    if numeric_tuple(version) is None:
        return None
    rows = [
        r
        for r in (manifests.components.get("cuda") or {}).get("releases") or []
        if isinstance(r, Mapping) and numeric_tuple(str(r.get("version"))) is not None
    ]
    rows.sort(key=lambda r: numeric_tuple(str(r.get("version"))) or ())
    best = None
    for i, row in enumerate(rows):
        need = row.get("min_driver")
        if isinstance(need, str) and (compare_numeric(version, need) or 0) >= 0:
            best = i
    if best is None or best + 1 >= len(rows) or rows[best].get("inferred"):
        return None
    row, above = rows[best], rows[best + 1]
    above_need = above.get("min_driver")
    if not isinstance(above_need, str) or above.get("inferred") or (compare_numeric(version, above_need) or 0) >= 0:
        return None  # (a bound marked inferred is no bound: tests/cases/rubin-sm107 has a 615 driver on CUDA 13.4)
    # the minimum drivers are CUDA-RN's Table 3 where the row cites it
    source = [s for s in _as_list(row.get("source")) if s == "CUDA-RN"] or _as_list(row.get("source"))
    return str(row.get("version")), str(row.get("min_driver")), (str(above.get("version")), above_need), source


def _as_list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, list) else [value] if value else []


def _source_text(source: Any) -> str:
    items = [s if isinstance(s, str) else str((s or {}).get("id") or "source") for s in _as_list(source)]
    return ", ".join(items) or "no source"


def filled_texts(facts: Mapping[str, Any]) -> list[str]:
    """The texts of what was filled in these facts (the `filled` marks of the GPUs and the driver), in order."""
    marks: list[Any] = [g.get(MARK) for g in facts.get("gpus") or [] if isinstance(g, Mapping)]
    driver = facts.get("driver")
    if isinstance(driver, Mapping):
        marks.append(driver.get(MARK))
    return [
        str(r["text"])
        for m in marks
        if isinstance(m, Mapping)
        for r in m.values()
        if isinstance(r, Mapping) and isinstance(r.get("text"), str)
    ]
