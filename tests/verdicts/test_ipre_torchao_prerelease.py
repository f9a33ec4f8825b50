"""ipre: torchao's two version edges judge no pre-release at the edge as the older side (issue 16).

torchao 0.14.0rc1 is not `>=0.14` by PEP 440, so on the parent --torchao-config int4wo-128 beside it was judged as
0.13's torch tinygemm (pass); 0.15.0rc1 is not `>=0.15`, so beside transformers 5.x it was taken for an older torchao
that transformers does not import. Which code a pre-release has is not known: each is judged as its release, or
unknown, never as the release before."""

from __future__ import annotations

from typing import Any

import pytest

from stackcheck.assembly.pipeline import load_manifests
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.torchao_config import torchao_config_reasons
from stackcheck.verdicts.torchao_gate import transformers_imports_torchao

MANIFESTS = load_manifests([])


def _ctx(**versions: str) -> Context:
    packages: dict[str, Any] = {name: {"installed": True, "version": v} for name, v in versions.items()}
    return Context(facts={"packages": packages}, manifests=MANIFESTS)


def _int4(torchao: str) -> list[str]:
    ctx = _ctx(sglang="0.5.9", torchao=torchao, torch="2.9.1+cu128")
    return [str(r["result"]) for r in torchao_config_reasons(ctx, "int4wo-128")]


@pytest.mark.parametrize("torchao", ["0.14.0rc1", "0.14.0.dev0"])
def test_int4wo_beside_a_pre_release_of_014_is_not_a_pass(torchao: str) -> None:
    assert _int4("0.13.0") == ["pass"]  # torch's own tinygemm
    assert _int4(torchao) == _int4("0.14.0") != ["pass"]


@pytest.mark.parametrize("torchao", ["0.15.0rc1", "0.15.0.dev0"])
def test_a_pre_release_of_015_is_not_taken_for_an_older_torchao_beside_transformers_5(torchao: str) -> None:
    assert transformers_imports_torchao(_ctx(sglang="0.5.9", transformers="5.2.0", torchao="0.14.1"))[0] is False
    imports, why = transformers_imports_torchao(_ctx(sglang="0.5.9", transformers="5.2.0", torchao=torchao))
    assert imports is True and "5.2.0" in why
