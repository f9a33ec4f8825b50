"""--quantization methods whose own package SGLang imports only when the method is chosen (preflight.json
quant_packages, the gate's preflight check quant-package), read in the sglang wheels:

- humming (0.5.16-0.5.23): HummingConfig.__init__ calls _lazy_import_humming, which raises ImportError 'Humming
  quantization requires `humming-kernels`' without the package (sglang/srt/layers/quantization/humming.py:54-80), on
  a BF16 checkpoint under --quantization humming as on a checkpoint whose quant_method is humming.
- bitsandbytes (0.5.8-0.5.23): BitsAndBytesLinearMethod.__init__ imports bitsandbytes and raises ImportError 'Please
  install bitsandbytes>=0.46.1' without it or below 0.46.1 (0.5.19 on through require_bitsandbytes).

Absent: refused; listed and installed: ok (bitsandbytes from 0.46.1); not listed (a report from before the probe looked
for them) or no version: unknown. The registry half reads the wheels (marked registry).

The model configs are written for the tests in the shape of published Llama 3 8B ones."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box
from registry_wheels import fetch_wheel

from stackcheck.facts.versions import version_in
from stackcheck.knowledge.loader import load
from stackcheck.probes.packages import WANTED

CHECK = "quant-package"


def _box(tmp_path: Path, release: str, packages: dict[str, Any] | None) -> Path:
    box = release_box(tmp_path, release, "9.0")
    if packages is not None:
        doc = json.loads(box.read_text())
        doc["facts"]["packages"].update(packages)
        box.write_text(json.dumps(doc))
    return box


def _gate(box: Path, model: Path, *flags: str) -> dict[str, Any]:
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model), "--tp", "1", *flags]
    return cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])[1]


def _check(doc: dict[str, Any]) -> dict[str, Any] | None:
    found = [c for c in (doc.get("preflight") or {}).get("checks") or [] if c.get("check") == CHECK]
    return found[0] if found else None


def _status(doc: dict[str, Any]) -> str | None:
    found = _check(doc)
    return str(found["status"]) if found else None


HUMMING_CKPT: dict[str, Any] = {**LLAMA3, "quantization_config": {"quant_method": "humming", "bits": 4}}
ABSENT_HUMMING = {"humming-kernels": {"installed": False}}


def test_the_packages_probe_looks_for_both() -> None:
    assert "humming-kernels" in WANTED and "bitsandbytes" in WANTED


@pytest.mark.parametrize("release", ["0.5.16", "0.5.19", "0.5.23"])
def test_humming_on_a_bf16_checkpoint_without_humming_kernels_refused(tmp_path: Path, release: str) -> None:
    doc = _gate(_box(tmp_path, release, ABSENT_HUMMING), model_dir(tmp_path, "m", LLAMA3), "--quantization", "humming")
    assert doc["decision"] == "refuse" and _status(doc) == "fail"
    check = _check(doc)
    assert check is not None and "humming-kernels" in json.dumps(check) and "ImportError" in json.dumps(check)


def test_humming_checkpoint_without_humming_kernels_refused(tmp_path: Path) -> None:
    """No --quantization: the checkpoint's quant_method humming builds the same HummingConfig."""
    doc = _gate(_box(tmp_path, "0.5.23", ABSENT_HUMMING), model_dir(tmp_path, "m", HUMMING_CKPT))
    assert doc["decision"] == "refuse" and _status(doc) == "fail"


def test_humming_with_humming_kernels_installed_passes_the_check(tmp_path: Path) -> None:
    box = _box(tmp_path, "0.5.23", {"humming-kernels": {"installed": True, "version": "0.1.0"}})
    assert _status(_gate(box, model_dir(tmp_path, "m", LLAMA3), "--quantization", "humming")) == "ok"


def test_humming_with_the_package_not_listed_unknown(tmp_path: Path) -> None:
    """A report saved before the probe looked for humming-kernels: not decided, so not allowed."""
    doc = _gate(_box(tmp_path, "0.5.23", None), model_dir(tmp_path, "m", LLAMA3), "--quantization", "humming")
    assert doc["decision"] == "refuse" and _status(doc) == "unknown"


@pytest.mark.parametrize("release", ["0.5.8", "0.5.12", "0.5.19", "0.5.23"])
def test_bitsandbytes_without_bitsandbytes_refused(tmp_path: Path, release: str) -> None:
    box = _box(tmp_path, release, {"bitsandbytes": {"installed": False}})
    doc = _gate(box, model_dir(tmp_path, "m", LLAMA3), "--quantization", "bitsandbytes")
    assert doc["decision"] == "refuse" and _status(doc) == "fail"
    assert "bitsandbytes>=0.46.1" in json.dumps(_check(doc))


@pytest.mark.parametrize(
    ("version", "status"),
    [("0.46.1", "ok"), ("0.48.2", "ok"), ("0.45.5", "fail"), ("0.44.1", "fail"), (None, "unknown")],
)
def test_bitsandbytes_version_floor(tmp_path: Path, version: str | None, status: str) -> None:
    pkg: dict[str, Any] = {"installed": True} if version is None else {"installed": True, "version": version}
    box = _box(tmp_path, "0.5.23", {"bitsandbytes": pkg})
    doc = _gate(box, model_dir(tmp_path, "m", LLAMA3), "--quantization", "bitsandbytes")
    assert _status(doc) == status
    if status != "ok":
        assert doc["decision"] == "refuse"


def test_bitsandbytes_checkpoint_without_bitsandbytes_refused(tmp_path: Path) -> None:
    """A checkpoint saved by bitsandbytes (quant_method bitsandbytes), no --quantization: SGLang takes its method."""
    config = {**LLAMA3, "quantization_config": {"quant_method": "bitsandbytes", "load_in_4bit": True}}
    doc = _gate(_box(tmp_path, "0.5.23", {"bitsandbytes": {"installed": False}}), model_dir(tmp_path, "m", config))
    assert doc["decision"] == "refuse" and _status(doc) == "fail"


def test_bitsandbytes_installed_allows(tmp_path: Path) -> None:
    # with its loader: without it the launch is refusal bnb-quantization-without-bnb-loader's (igap14)
    box = _box(tmp_path, "0.5.23", {"bitsandbytes": {"installed": True, "version": "0.48.2"}})
    flags = ("--quantization", "bitsandbytes", "--load-format", "bitsandbytes")
    assert _gate(box, model_dir(tmp_path, "m", LLAMA3), *flags)["decision"] == "allow"


@pytest.mark.parametrize(
    ("release", "flags"),
    [("0.5.23", []), ("0.5.23", ["--quantization", "fp8"]), ("0.5.15", ["--quantization", "humming"]),
     ("0.5.7", ["--quantization", "fp8"])],
)  # fmt: skip
def test_guard_no_check_outside_the_entries(tmp_path: Path, release: str, flags: list[str]) -> None:
    """No quantization, another method, or a release outside the entry's range (0.5.15 has no humming): no
    quant-package check. (bitsandbytes on 0.5.1-0.5.7 has entries of its own: test_gate_igap11_bnb_old.py.)"""
    box = _box(tmp_path, release, {**ABSENT_HUMMING, "bitsandbytes": {"installed": False}})
    assert _check(_gate(box, model_dir(tmp_path, "m", LLAMA3), *flags)) is None


# ---- registry: the wheels say what the entries say -------------------------------------------------------------


def _entry(method: str, release: str = "0.5.23") -> dict[str, Any]:
    # the entry for the method whose range holds the release (bitsandbytes has one per range of releases)
    entries = load().preflight["quant_packages"]["entries"]
    return next(e for e in entries if e.get("method") == method and version_in(release, e["versions"]))


def _read(release: str, path: str) -> str | None:
    wheel = fetch_wheel("sglang", release)
    with zipfile.ZipFile(wheel) as zf:
        return zf.read(path).decode() if path in zf.namelist() else None


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.15", "0.5.16", "0.5.19", "0.5.23"])
def test_registry_humming_releases(release: str) -> None:
    text = _read(release, "sglang/srt/layers/quantization/humming.py")
    in_range = version_in(release, _entry("humming")["versions"])
    assert (text is not None) == in_range
    if text is not None:
        init = text[text.index("class HummingConfig") :]
        assert "requires `humming-kernels`" in text and "_lazy_import_humming()" in init.split("def ", 2)[1]


@pytest.mark.registry
@pytest.mark.parametrize("release", ["0.5.8", "0.5.12", "0.5.19", "0.5.23"])
def test_registry_bitsandbytes_floor(release: str) -> None:
    text = _read(release, "sglang/srt/layers/quantization/bitsandbytes.py")
    assert text is not None and version_in(release, _entry("bitsandbytes", release)["versions"])
    assert f'version.parse("{_entry("bitsandbytes", release)["min_version"]}")' in text
    assert "Please install bitsandbytes>=0.46.1" in text
