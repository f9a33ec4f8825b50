"""The transformers releases whose quantizers import torchao at module level, read in the real wheels (irev58;
stackcheck/verdicts/torchao_gate.py transformers_imports_torchao, TRANSFORMERS_SOURCE): the answer the rule gives for
each release against what the wheel's transformers/quantizers/quantizer_torchao.py and (ifc41: 4.51-4.56)
transformers/modeling_utils.py itself do at module level, and the modeling_utils -> quantizers import and
processing_utils -> modeling_utils import the chain rests on."""

from __future__ import annotations

import re
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.torchao_gate import transformers_imports_torchao

ROOT = Path(__file__).resolve().parent.parent.parent
MANIFESTS = load_manifests([])


def _module_level_torchao(source: str) -> str | None:
    """'any' where the module imports torchao at module level for any torchao, '>=0.15' where only past a version
    test on 0.15.0, None where torchao is imported only inside functions."""
    block = re.search(r"^if is_torchao_available\(\):\n((?:    .*\n|\n)+)", source, re.M)
    if block is None:
        return None
    body = block.group(1)
    if re.search(r"^    (?:import torchao|from torchao)", body, re.M):
        return "any"
    if re.search(r'^    if version\.parse\(.*"0\.15\.0"\)', body, re.M):
        return ">=0.15"
    return None


def _min_version(source: str) -> str:
    found = re.search(r'^TORCHAO_MIN_VERSION = "([\d.]+)"', source, re.M)
    assert found is not None
    return found.group(1)


RELEASES = ["4.50.3", "4.51.0", "4.55.2", "4.56.2", "4.57.0", "4.57.1", "5.0.0", "5.3.0", "5.6.0", "5.19.0"]


@pytest.mark.registry
@pytest.mark.parametrize("release", RELEASES)
def test_the_rule_follows_the_wheel(release: str) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from registry_wheels import fetch_wheel

    with zipfile.ZipFile(fetch_wheel("transformers", release)) as zf:
        quantizer = zf.read("transformers/quantizers/quantizer_torchao.py").decode()
        modeling = zf.read("transformers/modeling_utils.py").decode()
        processing = zf.read("transformers/processing_utils.py").decode()
        imports = zf.read("transformers/utils/import_utils.py").decode()
    assert re.search(r"^from \.quantizers(?:\.auto)? import", modeling, re.M), release
    if release not in ("4.50.3", "4.51.0"):  # (these two: SGLang's models import PreTrainedModel themselves)
        assert re.search(r"^    from \.modeling_utils import", processing, re.M), release
    kind = _module_level_torchao(quantizer) or _module_level_torchao(modeling)
    least = _min_version(imports)
    for torchao in ("0.12.0", "0.15.0"):
        packages: dict[str, Any] = {
            "sglang": {"installed": True, "version": "0.5.9"},
            "torchao": {"installed": True, "version": torchao},
            "transformers": {"installed": True, "version": release},
        }
        got, _ = transformers_imports_torchao(Context(facts={"packages": packages}, manifests=MANIFESTS))
        past_min = tuple(map(int, torchao.split("."))) >= tuple(map(int, least.split(".")))
        wheel = past_min and (kind == "any" or (kind == ">=0.15" and torchao == "0.15.0"))
        assert got is wheel, (release, torchao, kind, least)
