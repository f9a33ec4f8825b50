"""irev79: the plan's `python -m flashinfer download-cubin` step (icubin2) fetches from FLASHINFER_CUBINS_REPOSITORY as
the server's FlashInfer does (0.7.2 flashinfer/artifacts.py get_checksums :210-224 and get_subdir_file_list :249-266:
safe_urljoin(FLASHINFER_CUBINS_REPOSITORY, ...) through jit/cubin_loader.py download_file; read in the wheel). Where
the box's section says that repository is a file:// URL (`unfetchable`: requests has no adapter for it) or a local
directory (its copy of the new release's families not read), the planned section said every family ready: the plan's
facts passed fp8-block-gemm's and trtllm's cubin rules on a download that cannot succeed. Now unknown there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from stackcheck.facts.model import load_facts_file
from stackcheck.knowledge.loader import load as load_manifests
from stackcheck.plan.hypothetical import apply_choice
from stackcheck.plan.solver import Choice
from stackcheck.verdicts.context import Context

CASES = Path(__file__).resolve().parent.parent / "cases"


def _after(repository: str | None) -> Any:
    facts: Any = load_facts_file(str(CASES / "b200-cubins-offline" / "facts.json"))
    cubins = dict(facts["flashinfer_cubins"])
    if repository is None:
        cubins.pop("repository", None)
    else:
        cubins["repository"] = repository
    facts = {**facts, "flashinfer_cubins": cubins}
    ctx = Context(facts=facts, manifests=load_manifests())
    return apply_choice(facts, Choice("flashinfer", "flashinfer-python", "0.7.2"), ctx)["flashinfer_cubins"]


@pytest.mark.parametrize("repository", ["unfetchable", "local"])
def test_a_download_from_a_repository_that_cannot_serve_it_is_not_planned_ready(repository: str) -> None:
    after = _after(repository)
    assert after["release"] == "0.7.2" and after["planned"] is True
    assert all(v is None for v in after["ready"].values()), after["ready"]
    assert all("FLASHINFER_CUBINS_REPOSITORY" in after["ready_reason"][f] for f in after["ready"])


@pytest.mark.parametrize("repository", ["default", "url", None])
def test_the_default_or_an_http_repository_is_planned_ready(repository: str | None) -> None:
    after = _after(repository)
    assert after["ready"] and all(v is True for v in after["ready"].values())
