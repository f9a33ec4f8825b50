"""irev40's attacks on the gate's kept decision (stackcheck.assembly.gate_cache) and on the stamps of the caches
it rests on: each input the decision depends on is changed between two runs, and the second run must judge again
(or be provably the same). The defects found: a file rewritten in place at the same size with its modification
time put back (`cp -p`, `rsync -a`, `touch -r`, an image layer with fixed timestamps) kept the stamp of the SGLang
model registry's cache (so a kept decision's registry read answered as before), of the derive cache and of the
code stamp. The others are guards: what was found sound stays so."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from stackcheck.assembly import gate_cache
from stackcheck.readers.fsview import HostView

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests/cases/h200-newest/facts.json"
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def rewrite_in_place(path: Path, text: str) -> None:
    """`text` written over `path` at the same size, with its access and modification times put back (ns)."""
    before = path.stat()
    assert len(text.encode()) == before.st_size, "the attack keeps the size"
    path.write_text(text)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)


# ---- the model registry's stamp (the kept decision's "registry" read) ------------------------------------------


OMEGA = "class OmegaForCausalLM:\n    pass\n\n\nEntryClass = OmegaForCausalLM\n"  # (as long as Alpha's)


def _site(tmp_path: Path, name: str) -> Path:
    models = tmp_path / "site" / "sglang" / "srt" / "models"
    models.mkdir(parents=True, exist_ok=True)
    (models / "llama.py").write_text(f"class {name}:\n    pass\n\n\nEntryClass = {name}\n")
    return tmp_path / "site"


def test_a_model_module_rewritten_at_the_same_size_and_mtime_is_read_again(tmp_path: Path) -> None:
    """Fails on the parent: the registry's cache kept the old names (its stamp was name, size, mtime)."""
    from stackcheck.readers.entryclasses import read_registry_cached

    site = _site(tmp_path, "AlphaForCausalLM")
    env = {"STACKCHECK_CACHE_DIR": str(tmp_path / "cache")}
    assert "AlphaForCausalLM" in read_registry_cached(HostView(), str(site), env).names
    rewrite_in_place(site / "sglang/srt/models/llama.py", OMEGA)
    assert set(read_registry_cached(HostView(), str(site), env).names) == {"OmegaForCausalLM"}


def test_a_kept_registry_read_misses_after_an_in_place_rewrite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The kept decision's read of the registry (gate_cache.note "registry", made again by `unchanged`) gives
    another answer once a model module registers another class: fails on the parent (served as before)."""
    from stackcheck.readers.entryclasses import read_registry_cached

    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    site = _site(tmp_path, "AlphaForCausalLM")
    slot = gate_cache.Slot(str(tmp_path), "k", None)
    monkeypatch.setattr(gate_cache, "ACTIVE", [slot])
    gate_cache.note("registry", (str(site),), lambda s: read_registry_cached(HostView(), s, os.environ))
    live = {"usage": lambda: None}
    assert gate_cache.unchanged(slot.reads, live)
    rewrite_in_place(site / "sglang/srt/models/llama.py", OMEGA)
    assert not gate_cache.unchanged(slot.reads, live)


# ---- the derive cache (a release newer than the data, read from its files: part of the facts) --------------------


def test_the_derive_cache_misses_after_an_in_place_rewrite(tmp_path: Path) -> None:
    """Fails on the parent: derive's per-file cache served what it read before (its key: path, size, mtime)."""
    from stackcheck.derive.cache import Cache, current_key

    f = tmp_path / "server_args.py"
    f.write_text("--enable-old-thing\n")
    key = current_key(f)
    assert key is not None
    cache = Cache(tmp_path / "c")
    cache.put("flags", [key], {"declared": ["--enable-old-thing"]})
    assert cache.get("flags", [key]) == {"declared": ["--enable-old-thing"]}
    rewrite_in_place(f, "--enable-new-thing\n")
    now = current_key(f)
    assert now is not None and cache.get("flags", [now]) is None
    assert cache.get("other", [key]) is None  # (another key: a miss as before)


# ---- the code stamp (a part of the gate cache's key and of the plan cache's) ---------------------------------------


def test_the_code_stamp_sees_a_source_file_rewritten_in_place(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Fails on the parent: stackcheck's own source edited at the same size with its mtime put back (a checkout
    tool or `cp -p` of a patched file) kept the code stamp, and with it every kept decision of the old code."""
    import stackcheck
    from stackcheck.assembly import plan_cache

    package = tmp_path / "stackcheck"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rule.py").write_text("ALLOW = True\n")
    monkeypatch.setattr(stackcheck, "__file__", str(package / "__init__.py"))
    before = plan_cache._code_stamp()
    assert plan_cache._code_stamp() == before
    rewrite_in_place(package / "rule.py", "ALLOW = 0000\n")
    assert plan_cache._code_stamp() != before


def test_the_python_answer_key_sees_an_interpreter_replaced_in_place(tmp_path: Path) -> None:
    """Fails on the parent: the python probe's cached sys.path was kept for an interpreter rewritten at its size
    with its mtime put back (its key: path, size, mtime)."""
    from stackcheck.probes.python_env import cache_key

    exe = tmp_path / "bin" / "python3"
    exe.parent.mkdir()
    exe.write_bytes(b"\x7fELF one build")
    before = cache_key(str(exe), {})
    assert before is not None and cache_key(str(exe), {}) == before
    rewrite_in_place(exe, "\x7fELF two build")
    assert cache_key(str(exe), {}) not in (None, before)
