"""The facts about a box: typed shapes of the `facts` object of a report, and loading saved facts.

Facts are plain JSON-compatible dicts, described by TypedDicts so that the whole pipeline is typed and a
saved report needs no conversion. In a probed report a value that could not be read is `None` and its
section carries `"error"`; in a hand-written or partial facts document anything may be absent, and absent
means unknown.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

from stackcheck.errors import BadInputError

SCHEMA_VERSION = 1

Interconnect = Literal["nvlink", "pcie-switch", "pcie-host-bridge", "cross-socket", "single-gpu"]


class DriverFacts(TypedDict, total=False):
    version: str | None  # "580.159.04"
    cuda: str | None  # highest CUDA the driver supports, "13.0"
    nvml_version: str | None
    source: str  # nvml | nvidia-smi | proc | assumed
    error: str


class GpuFacts(TypedDict, total=False):
    index: int
    name: str | None
    uuid: str | None
    pci_bus_id: str | None
    compute_capability: str | None  # "12.0"
    memory_bytes: int | None
    persistence_mode: bool | None
    mig_mode: bool | None
    error: str


class GpuPair(TypedDict, total=False):
    a: int
    b: int
    link: str | None  # nvlink | pcie-switch | pcie-host-bridge | cross-socket | same-board
    nvlink_count: int | None
    common_ancestor: str | None  # internal | single | multiple | hostbridge | node | system
    p2p_read: str | None  # ok | chipset-not-supported | gpu-not-supported | ... | unknown
    error: str


class TopologyFacts(TypedDict, total=False):
    interconnect: Interconnect | None
    same_model: bool | None
    gpu_count: int | None
    p2p: Literal["all", "some", "none"] | None
    nvswitch: bool | None  # every GPU has an active NVLink to an NVSwitch (NVLink multicast possible)
    pairs: list[GpuPair]
    error: str


class ToolkitFacts(TypedDict, total=False):
    path: str | None
    version: str | None  # "13.0.88"
    source: str  # CUDA_HOME | CUDA_PATH | /usr/local/cuda | nvcc | pip
    nvcc: str | None
    active_for_build: bool
    active_for_torch: bool
    error: str


class PackageFacts(TypedDict, total=False):
    installed: bool
    version: str | None  # the package's own version; for torch from torch/version.py ("2.11.0+cu130")
    dist_version: str | None  # the distribution metadata's version ("2.11.0")
    location: str | None
    editable: bool
    copies: int
    other_locations: list[str]
    cuda: str | None  # torch: "13.0"
    variant: str | None  # torch: "cu130" | "cpu"; sgl-kernel: from the local version tag
    git_version: str | None
    error: str


class SystemFacts(TypedDict, total=False):
    os: str | None
    kernel: str | None
    glibc: str | None
    python: str | None
    python_implementation: str | None
    machine: str | None
    container: str | None
    env: dict[str, str]
    error: str


class Facts(TypedDict, total=False):
    driver: DriverFacts
    gpus: list[GpuFacts]
    topology: TopologyFacts
    cuda_toolkits: list[ToolkitFacts]
    packages: dict[str, PackageFacts]
    system: SystemFacts
    binaries: dict[str, Any]  # --deep: CUDA targets compiled into each package's binaries
    libs: dict[str, Any]  # --deep: which libcudart/libnccl/... each package's libraries would load
    source_tables: dict[str, Any]
    derived: dict[str, Any]  # read from installed releases newer than the data (stackcheck.derive.installed)
    jit: dict[str, Any]  # the toolkit a JIT build uses, its headers, TRITON_PTXAS_* (stackcheck/probes/jit.py)
    cuda_libs: dict[str, Any]  # CUDA sonames the loader finds (stackcheck/probes/cudalibs.py)
    pcie: dict[str, Any]  # IOMMU mode and ACS redirect bits above the GPUs (stackcheck/probes/pcie.py)
    assumed: list[str]  # which facts came from --assume-* options


class ProbeOutcome(TypedDict, total=False):
    name: str
    status: Literal["ok", "partial", "failed", "timeout", "skipped"]
    reason: str | None
    duration_ms: float


def _reject_constant(value: str) -> Any:
    raise ValueError(f"non-standard JSON constant {value}")


def parse_json_text(text: str, origin: str) -> Any:
    """Parse JSON strictly (no NaN/Infinity), turning every failure into a one-line BadInputError."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise BadInputError(f"{origin}: line {exc.lineno} column {exc.colno}: not valid JSON: {exc.msg}") from None
    except ValueError as exc:
        raise BadInputError(f"{origin}: not valid JSON: {exc}") from None
    except RecursionError:
        raise BadInputError(f"{origin}: JSON nested too deeply") from None


MAX_FACTS_BYTES = 64 * 1024 * 1024  # a real report is tens of kilobytes


def read_text_file(path: Path, limit: int = MAX_FACTS_BYTES) -> str:
    try:
        if path.stat().st_size > limit:
            raise BadInputError(f"{path}: larger than {limit // 2**20} MiB: not a stackcheck facts file")
        data = path.read_bytes()
    except FileNotFoundError:
        raise BadInputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise BadInputError(f"{path}: is a directory, expected a file") from None
    except OSError as exc:
        raise BadInputError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadInputError(f"{path}: byte {exc.start}: not UTF-8 text") from None


def facts_from_document(doc: Any, origin: str) -> Facts:
    """Take the facts out of a saved report or a `{schema_version, facts}` document, checking its shape."""
    if not isinstance(doc, dict):
        raise BadInputError(f"{origin}: $: expected a JSON object with 'schema_version' and 'facts'")
    version = doc.get("schema_version")
    if isinstance(version, bool) or not isinstance(version, int):
        raise BadInputError(f"{origin}: $.schema_version: expected an integer, got {json.dumps(version)}")
    if version > SCHEMA_VERSION:
        raise BadInputError(
            f"{origin}: $.schema_version: {version} is newer than this stackcheck understands ({SCHEMA_VERSION})"
        )
    if version < 1:
        raise BadInputError(f"{origin}: $.schema_version: {version} is not a valid schema version")
    facts = doc.get("facts")
    if not isinstance(facts, dict):
        raise BadInputError(f"{origin}: $.facts: expected an object")
    from stackcheck.schemas_check import check_facts

    check_facts(facts, origin)
    return cast(Facts, facts)


def load_facts_file(path: Path | str) -> Facts:
    """Read facts from a saved report or facts document; `-` reads standard input."""
    return load_facts_document(path)[0]


def load_facts_document(path: Path | str) -> tuple[Facts, dict[str, Any] | None]:
    """The facts and the saved report's `host` block (None when the document has none); `-` is stdin."""
    if str(path) == "-":
        import sys

        text = sys.stdin.read(MAX_FACTS_BYTES + 1)
        origin = "<stdin>"
        if len(text) > MAX_FACTS_BYTES:
            raise BadInputError(f"{origin}: larger than {MAX_FACTS_BYTES // 2**20} MiB: not a stackcheck facts file")
    else:
        p = Path(path)
        text = read_text_file(p)
        origin = str(p)
    doc = parse_json_text(text, origin)
    facts = facts_from_document(doc, origin)
    host = doc.get("host")
    return facts, (host if isinstance(host, dict) else None)


def cc_tuple(cc: str | None) -> tuple[int, int] | None:
    """ "12.0" -> (12, 0); None for anything that is not a compute capability."""
    if not isinstance(cc, str):
        return None
    major, sep, minor = cc.partition(".")
    if not sep or not major.isdigit() or not minor.isdigit():
        return None
    return int(major), int(minor)


def finite_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
