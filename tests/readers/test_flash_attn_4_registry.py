"""flash-attn-4's gates and probe against its real wheels (registry tests, cached, skipped offline).

SGLang 0.5.10-0.5.15 run FA4 from the flash-attn-4 package. For a few releases (every one with
STACKCHECK_REGISTRY_ALL=1) the test reads the wheel's flash_attn/cute/interface.py and flash_fwd_sm100.py
itself and compares with gates.json: the majors the forward entry point admits, the majors whose branch
refuses a paged KV cache, and the form of FlashAttentionForwardSm100's architecture check (the range
sm_100..sm_110f up to 4.0.0b14, the SM 10.x/11.x family check from 4.0.0b15). The packages probe reads the
wheel's own dist-info as installed. nvidia-cutlass-dsl's Arch (the range's meaning) is read in 4.4.2 and 4.5.0.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from packaging.specifiers import SpecifierSet
from packaging.version import Version
from registry_wheels import extract, fetch_wheel, read_texts, run_all

from stackcheck.probes.interface import ProbeContext
from stackcheck.probes.packages import PackagesProbe

REPO = Path(__file__).resolve().parent.parent.parent
IFACE = "flash_attn/cute/interface.py"
SM100 = "flash_attn/cute/flash_fwd_sm100.py"
#: spread over the gates' rows: the first majors list, the last range check, the first family check, the newest
FEW = ("4.0.0b4", "4.0.0b5", "4.0.0b14", "4.0.0b15", "4.0.0b36")

pytestmark = pytest.mark.registry


def _releases() -> list[str]:
    comp = json.loads((REPO / "manifests" / "components.json").read_text(encoding="utf-8"))
    return [str(r["version"]) for r in comp["packages"]["flash-attn-4"]["releases"]]


VERSIONS = _releases() if run_all() else list(FEW)


def _gate_value(gate_id: str, version: str) -> Any:
    gates = json.loads((REPO / "manifests" / "gates.json").read_text(encoding="utf-8"))["gates"]
    gate = next(g for g in gates if g["id"] == gate_id)
    rows = [r for r in gate["releases"] if Version(version) in SpecifierSet(r["versions"], prereleases=True)]
    assert len(rows) == 1, (gate_id, version, rows)
    return rows[0]["value"]


def _forward_majors(text: str) -> list[int]:
    """The list of the first 'Unsupported compute capability' assert on `arch // 10` (the forward entry point
    comes before the backward one in every release)."""
    m = re.search(r"assert arch // 10 in \[([\d, ]+)\],\s*\"Unsupported compute capability", text)
    assert m, "no forward majors assert"
    return [int(x) for x in m.group(1).split(",")]


def _paged_refusals(text: str) -> list[int]:
    """Majors named by an `assert page_table is None, '... paged KV not supported on SM N.0 ...'`."""
    found = re.findall(r"assert page_table is None,\s*\"[Pp]aged KV not supported on SM (\d+)\.0", text)
    return sorted({int(x) for x in found})


def _arch_check(text: str) -> str:
    """'range' (sm_100 <= arch <= sm_110f) or 'family' (is_family_of sm_100f / sm_110f) in the SM100 kernel."""
    at = text.index("Only SM 10.x and 11.x are supported")
    head = text[max(0, at - 300) : at]
    if "Arch.sm_100 and self.arch <= Arch.sm_110f" in head:
        return "range"
    if "is_family_of(Arch.sm_100f)" in head and "is_family_of(Arch.sm_110f)" in head:
        return "family"
    return "other"


@pytest.mark.parametrize("version", VERSIONS)
def test_gates_agree_with_the_wheel(version: str) -> None:
    texts = read_texts(fetch_wheel("flash-attn-4", version), {IFACE, SM100}.__contains__)
    assert _forward_majors(texts[IFACE]) == _gate_value("flash-attn-4.fwd_majors", version)
    assert _paged_refusals(texts[IFACE]) == _gate_value("flash-attn-4.paged_kv_refused_majors", version)
    check = _arch_check(texts[SM100])
    refused = _gate_value("flash-attn-4.sm100_fwd_refused_sms", version)
    assert check == ("range" if Version(version) < Version("4.0.0b15") else "family"), version
    assert refused == ([103] if check == "range" else [])


def test_the_probe_reads_the_wheels_dist_info(tmp_path: Path) -> None:
    """The wheel installed as pip lays it out (its dist-info and flash_attn/ under site-packages): the
    packages probe reports its version from METADATA, without importing flash_attn."""
    wheel = fetch_wheel("flash-attn-4", "4.0.0b13")
    site = extract(wheel, tmp_path / "site-packages", lambda n: n.startswith(("flash_attn_4-", "flash_attn/cute/__")))
    assert (site / "flash_attn_4-4.0.0b13.dist-info" / "METADATA").is_file()
    result = PackagesProbe().run(ProbeContext(env={}, path_dirs=[str(site)]))
    entry = result.facts["packages"]["flash-attn-4"]
    assert entry["installed"] is True and entry["version"] == "4.0.0b13" and entry["location"] == str(site)


def _arch_py(version: str) -> str:
    wheel = fetch_wheel("nvidia-cutlass-dsl-libs-base", version)
    name = "nvidia_cutlass_dsl/python_packages/cutlass/base_dsl/arch.py"
    return read_texts(wheel, name.__eq__)[name]


def test_cutlass_dsl_4_5_names_sm_110f_as_sm_101f_below_cuda_13() -> None:
    """The range check's meaning: Arch compares (major, minor); 4.5.0 resolves sm_110f to sm_101f = (10, 1)
    when the DSL's CUDA major is below 13, so sm_103 = (10, 3) lies past it; 4.4.2 has no alias and
    sm_110f = (11, 0) (SGLang 0.5.11 pins 4.4.2, 0.5.12 pins 4.5.0)."""
    old, new = _arch_py("4.4.2"), _arch_py("4.5.0")
    for text in (old, new):
        assert re.search(r"return \(self\.major, self\.minor\) <= \(other\.major, other\.minor\)", text)
        assert 'sm_103 = (10, 3, "")' in text and 'sm_101f = (10, 1, "f")' in text
        assert 'sm_110f = (11, 0, "f")' in text
    assert "_arch_aliases" not in old
    assert re.search(r"CUDA_VERSION\.major >= 13", new)
    assert re.search(r'"sm_110f":\s*"sm_101f"', new)
