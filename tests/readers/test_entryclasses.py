"""The model registry reader (stackcheck/readers/entryclasses.py) on model directories written here in the shape of
SGLang's sglang/srt/models (our own small files: a class with EntryClass naming it, a list, an import renamed with
`as`, a module-level alias, an indented or repeated assignment, an expression, a compiled module, a BOM), and its
cache (kept per file set, read again when a file changes)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pytest

from stackcheck.readers import entryclasses
from stackcheck.readers.entryclasses import entry_names, read_registry, read_registry_cached
from stackcheck.readers.fsview import HostView

MODULES = {
    "alpha.py": "import torch\n\n\nclass AlphaForCausalLM:\n    pass\n\n\nEntryClass = AlphaForCausalLM\n",
    "beta.py": (
        "class BetaModel:\n    pass\n\n\nclass BetaForCausalLM(BetaModel):\n    pass\n\n\n"
        "EntryClass = [\n    BetaForCausalLM,  # the text model\n    BetaModel,\n]\n"
    ),
    "gamma.py": "from pkg.other import GammaImpl as GammaForCausalLM\n\nEntryClass = [GammaForCausalLM]\n",
    "delta.py": "class DeltaBase:\n    pass\n\n\nDeltaForCausalLM = DeltaBase\nEntryClass = (DeltaForCausalLM,)\n",
    "epsilon.py": "from pkg.other import (\n    EpsilonForCausalLM,\n)\n\nEntryClass = EpsilonForCausalLM\n",
    "helpers.py": "# no registration here; EntryClass is a word in this comment only\nX = 1\n",
    "_private.py": "class Hidden:\n    pass\n\n\nEntryClass: type = Hidden\n",
    "__init__.py": "class Init:\n    pass\n\n\nEntryClass = Init\n",
}


def write(root: Path, files: Mapping[str, str | bytes]) -> Path:
    models = root / "sglang" / "srt" / "models"
    models.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (models / name).write_bytes(text if isinstance(text, bytes) else text.encode())
    return root


def test_names_are_class_names_as_python_binds_them(tmp_path: Path) -> None:
    reg = read_registry(HostView(), str(write(tmp_path, MODULES)))
    assert reg.error is None and reg.unresolved == []
    assert reg.names == {
        "AlphaForCausalLM": "alpha",
        "BetaForCausalLM": "beta",
        "BetaModel": "beta",
        "GammaImpl": "gamma",  # registered under the class's own __name__, not the name it is imported as
        "DeltaBase": "delta",
        "EpsilonForCausalLM": "epsilon",
        "Hidden": "_private",
    }
    assert reg.files == 7  # __init__ is not a module of the package listing


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("class A:\n    pass\n\n\nif True:\n    EntryClass = A\n", "inside a block"),
        ("class A:\n    pass\n\n\nEntryClass = A\nEntryClass = [A]\n", "2 EntryClass assignments"),
        ("class A:\n    pass\n\n\nEntryClass = make(A)\n", "an expression"),
        ("EntryClass = Missing\n", "neither defines nor imports"),
        ("EntryClass = [\n", "does not parse"),
    ],
)
def test_what_cannot_be_read_is_listed_never_guessed(text: str, why: str) -> None:
    _, reason = entry_names(text.encode(), "m.py")
    assert reason is not None and why in reason and reason.startswith("m.py: ")


def test_bom_compiled_module_and_subpackage(tmp_path: Path) -> None:
    root = write(tmp_path, {"bom.py": b"\xef\xbb\xbfclass BomModel:\n    pass\n\n\nEntryClass = BomModel\n"})
    models = root / "sglang" / "srt" / "models"
    (models / "fast.cpython-312-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (models / "sub").mkdir()
    (models / "sub" / "x.py").write_text("class Sub:\n    pass\n\n\nEntryClass = Sub\n")
    (models / "latin.py").write_bytes(b"# \xff\nEntryClass = X\n")
    reg = read_registry(HostView(), str(root))
    assert reg.names == {"BomModel": "bom"}
    assert sorted(u.split(":")[0] for u in reg.unresolved) == ["fast.cpython-312-x86_64-linux-gnu.so", "latin.py"]


def test_a_missing_directory_is_an_error_not_an_empty_registry(tmp_path: Path) -> None:
    reg = read_registry(HostView(), str(tmp_path))
    assert reg.error is not None and "cannot list" in reg.error and reg.names == {}


def test_cache_is_kept_per_file_set(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = write(tmp_path / "site", MODULES)
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache")}
    first = read_registry_cached(HostView(), str(site), env)
    assert first.names["AlphaForCausalLM"] == "alpha"
    assert len(list((tmp_path / "cache" / "registry").glob("*.json"))) == 1

    def boom(*_: object) -> None:
        raise AssertionError("read again although nothing changed")

    monkeypatch.setattr(entryclasses, "read_registry", boom)
    assert read_registry_cached(HostView(), str(site), env) == first
    monkeypatch.undo()
    new = site / "sglang" / "srt" / "models" / "zeta.py"
    new.write_text("class ZetaForCausalLM:\n    pass\n\n\nEntryClass = ZetaForCausalLM\n")
    os.utime(new, ns=(1, 1))
    assert "ZetaForCausalLM" in read_registry_cached(HostView(), str(site), env).names


def test_a_cache_entry_others_may_write_is_not_read(tmp_path: Path) -> None:
    site = write(tmp_path / "site", MODULES)
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache")}
    read_registry_cached(HostView(), str(site), env)
    (entry,) = (tmp_path / "cache" / "registry").glob("*.json")
    entry.write_text(entry.read_text().replace("AlphaForCausalLM", "ForgedForCausalLM"))
    entry.chmod(0o666)
    assert "AlphaForCausalLM" in read_registry_cached(HostView(), str(site), env).names


def test_another_root_is_read_without_the_cache(tmp_path: Path) -> None:
    site = write(tmp_path / "root" / "site", MODULES)
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache")}
    reg = read_registry_cached(HostView(str(tmp_path / "root")), "/site", env)
    assert reg.names["BetaModel"] == "beta" and site.is_dir()
    assert not (tmp_path / "cache").exists()


def test_a_link_planted_at_an_entry_is_neither_read_nor_written_through(tmp_path: Path) -> None:
    site = write(tmp_path / "site", MODULES)
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache")}
    read_registry_cached(HostView(), str(site), env)
    (entry,) = (tmp_path / "cache" / "registry").glob("*.json")
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's own file\n")
    entry.unlink()
    entry.symlink_to(victim)  # before: read (ours, not JSON), then the new entry written over the victim
    assert read_registry_cached(HostView(), str(site), env).names["AlphaForCausalLM"] == "alpha"
    assert victim.read_text() == "the user's own file\n"
    assert not entry.is_symlink()  # the link itself was replaced by the entry


def test_a_cache_directory_others_may_write_is_not_used(tmp_path: Path) -> None:
    site = write(tmp_path / "site", MODULES)
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache")}
    read_registry_cached(HostView(), str(site), env)
    (entry,) = (tmp_path / "cache" / "registry").glob("*.json")
    entry.write_text(entry.read_text().replace("AlphaForCausalLM", "ForgedForCausalLM"))
    entry.chmod(0o600)
    entry.parent.chmod(0o777)  # anyone could have swapped or linked the entry
    try:
        names = read_registry_cached(HostView(), str(site), env).names
        assert "AlphaForCausalLM" in names and "ForgedForCausalLM" not in names
        assert "ForgedForCausalLM" in entry.read_text()  # nor written there
    finally:
        entry.parent.chmod(0o700)


@pytest.mark.parametrize(
    "text", ["[" * 100_000, '{"key": ', b"\xff\xfe{}", '{"value": {"names": {}, "unresolved": [], "files": 1e999}}']
)
def test_a_corrupt_entry_is_no_entry(tmp_path: Path, text: str | bytes) -> None:
    site = write(tmp_path / "site", MODULES)
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache")}
    read_registry_cached(HostView(), str(site), env)
    (entry,) = (tmp_path / "cache" / "registry").glob("*.json")
    key = entry.name[:-5]
    if isinstance(text, str) and text.startswith('{"value"'):
        directory = str(site / "sglang" / "srt" / "models")
        text = text.replace('{"value"', f'{{"key": "{key}", "directory": "{directory}", "value"')
    entry.write_bytes(text if isinstance(text, bytes) else text.encode())
    assert read_registry_cached(HostView(), str(site), env).names["AlphaForCausalLM"] == "alpha"


def test_a_hostile_module_costs_linear_time() -> None:
    import time

    # unclosed `from m import (` lines: each bracket searched to the end of the file made this quadratic (128 KiB:
    # ~15 s before, a 4 MiB module hours)
    data = b"EntryClass = X\n" + b"from a import (\n" * 8000 + b"\n" * 8000
    start = time.process_time()  # CPU time: quadratic work shows there, a loaded box's waiting does not
    _, why = entry_names(data, "h.py")
    assert time.process_time() - start < 2.0
    assert why is not None and "neither defines nor imports" in why


def test_a_fifo_at_an_entry_is_not_waited_on(tmp_path: Path) -> None:
    import subprocess
    import sys

    site = write(tmp_path / "site", MODULES)
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache")}
    read_registry_cached(HostView(), str(site), env)
    (entry,) = (tmp_path / "cache" / "registry").glob("*.json")
    entry.unlink()
    os.mkfifo(entry)  # before: opened for reading, which waits for a writer forever
    code = (
        "import sys; from stackcheck.readers.entryclasses import read_registry_cached as r; "
        "from stackcheck.readers.fsview import HostView; "
        "print(sorted(r(HostView(), sys.argv[1], {'STACKCHECK_CACHE_DIR': sys.argv[2]}).names)[0])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(site), str(tmp_path / "cache")], capture_output=True, text=True, timeout=20
    )
    assert done.returncode == 0 and done.stdout.strip() == "AlphaForCausalLM", done.stderr
