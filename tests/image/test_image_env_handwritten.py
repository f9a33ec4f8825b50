"""A hand-written facts document may state an image by its Env alone (what `docker inspect` shows), without an
audited image file (path, format, layers): check image-nvidia-require then reads the NVIDIA_REQUIRE_* from `env`
as the image audit does (stackcheck/image/info.py), and judges them against the driver and the GPUs' brands.
Found re-reading tests/realworld/dashdot-1226 (iunc2): the image's requirement was known, and no facts document
could carry it."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.errors import BadInputError
from stackcheck.facts.model import load_facts_file

BRANDS = ["unknown", "grid", "tesla", "nvidia", "quadro", "quadrortx", "nvidiartx", "vapps", "vpc", "vcs", "vws"]


def requirement(cuda: str, branches: tuple[int, ...]) -> str:
    """The shape of NVIDIA's CUDA base images' NVIDIA_REQUIRE_CUDA (built here, not copied)."""
    return " ".join([f"cuda>={cuda}"] + [f"brand={w},driver>={b},driver<{b + 1}" for b in branches for w in BRANDS])


def facts(
    brand: str | None, env: dict[str, str] | None, driver: str = "535.247.01", started_by: str | None = None
) -> dict[str, Any]:
    gpu: dict[str, Any] = {"index": 0, "name": "NVIDIA GeForce RTX 4050 Laptop GPU", "compute_capability": "8.9"}
    if brand is not None:
        gpu["brand"] = brand
    doc: dict[str, Any] = {"gpus": [gpu], "driver": {"version": driver}}
    if env is not None:
        doc["image"] = {"reference": "example/serve:cuda12.8", "env": env}
        if started_by is not None:
            doc["image"]["started_by"] = started_by
    return {"schema_version": 1, "facts": doc}


ENV_12_8 = {"NVIDIA_REQUIRE_CUDA": requirement("12.8", (470, 535, 550, 560, 565)), "CUDA_VERSION": "12.8.1"}


def audit(tmp_path: Path, doc: dict[str, Any]) -> dict[str, Any]:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["audit", "--facts", str(path), "--format", "json"])
    report: dict[str, Any] = json.loads(out.getvalue())
    return next(c for c in report["checks"] if c["id"] == "image-nvidia-require")


def test_an_image_stated_by_its_env_is_read(tmp_path: Path) -> None:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(facts("GEFORCE", ENV_12_8)))
    loaded = load_facts_file(path)
    assert loaded["image"]["env"]["CUDA_VERSION"] == "12.8.1"


def test_geforce_on_r535_is_refused_by_a_cuda_12_8_image(tmp_path: Path) -> None:
    # started by Docker's device request, the hook checks it whatever the mode; how it starts not stated, a cdi host
    # would start it unchecked: unknown (irel4)
    assert audit(tmp_path, facts("GEFORCE", ENV_12_8))["status"] == "unknown"
    check = audit(tmp_path, facts("GEFORCE", ENV_12_8, started_by="docker-gpus"))
    assert check["status"] == "failed"
    (reason,) = [r for r in check["reasons"] if r["result"] == "fail"]
    assert "cuda>=12.8" in reason["message"]
    assert "GeForce" in reason["observed"] and "535.247.01" in reason["observed"]


def test_without_the_brand_the_r535_terms_leave_it_unknown(tmp_path: Path) -> None:
    # brand=tesla/nvidia/unknown,driver>=535,driver<536 start the image on R535: the brand decides
    check = audit(tmp_path, facts(None, ENV_12_8))
    assert check["status"] == "unknown"
    assert "brand" in json.dumps(check["reasons"])


@pytest.mark.parametrize("brand", ["TESLA", "NVIDIA"])
def test_a_listed_brand_on_r535_starts_it(tmp_path: Path, brand: str) -> None:
    assert audit(tmp_path, facts(brand, ENV_12_8))["status"] == "ok"


def test_a_driver_of_the_images_cuda_starts_it(tmp_path: Path) -> None:
    assert audit(tmp_path, facts("GEFORCE", ENV_12_8, driver="570.172.08"))["status"] == "ok"


def test_disable_require_in_the_env_turns_the_check_off(tmp_path: Path) -> None:
    env = {**ENV_12_8, "NVIDIA_DISABLE_REQUIRE": "true"}
    # no requirement is left to judge, as for an audited image with the same Env (image/require.py)
    assert audit(tmp_path, facts("GEFORCE", env))["status"] == "skipped"


def test_cuda_version_alone_is_the_legacy_requirement(tmp_path: Path) -> None:
    check = audit(tmp_path, facts("GEFORCE", {"CUDA_VERSION": "12.8.1"}, started_by="docker-gpus"))
    assert check["status"] == "failed"
    assert "cuda>=12.8" in json.dumps(check["reasons"])


def test_an_image_with_neither_a_file_nor_an_env_is_refused(tmp_path: Path) -> None:
    doc = facts("GEFORCE", None)
    doc["facts"]["image"] = {"reference": "example/serve:cuda12.8"}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(BadInputError) as err:
        load_facts_file(path)
    assert "$.facts.image" in str(err.value) and "\n" not in str(err.value)


def test_an_audited_image_still_has_its_integers_read(tmp_path: Path) -> None:
    # the anyOf beside the image's properties must not end the integer walk (stackcheck/facts/minischema.py)
    doc = facts("GEFORCE", ENV_12_8)
    doc["facts"]["image"].update(
        {"path": "serve.tar", "format": "docker-save", "layers": [{"size": 4096.0, "compression": "none"}]}
    )
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    size = load_facts_file(path)["image"]["layers"][0]["size"]
    assert size == 4096 and isinstance(size, int)
