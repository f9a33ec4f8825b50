"""irev40's attacks on the gate's kept decision (stackcheck.assembly.gate_cache) and on the stamps of the caches
it rests on: each input the decision depends on is changed between two runs, and the second run must judge again
(or be provably the same). The defects found: a file rewritten in place at the same size with its modification
time put back (`cp -p`, `rsync -a`, `touch -r`, an image layer with fixed timestamps) kept the stamp of the SGLang
model registry's cache (so a kept decision's registry read answered as before), of the derive cache and of the
code stamp. The others are guards: what was found sound stays so."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, model_dir

from stackcheck.assembly import gate_cache
from stackcheck.readers.fsview import HostView

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests/cases/h200-newest/facts.json"

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
    from stackcheck.paths import forget_code_stamps

    package = tmp_path / "stackcheck"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "rule.py").write_text("ALLOW = True\n")
    monkeypatch.setattr(stackcheck, "__file__", str(package / "__init__.py"))
    before = plan_cache._code_stamp()
    assert plan_cache._code_stamp() == before
    rewrite_in_place(package / "rule.py", "ALLOW = 0000\n")
    assert plan_cache._code_stamp() == before  # (this process runs the code it stamped: each file stat'ed once)
    forget_code_stamps()  # the next run
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


# ---- guards: the kept decision against changes of the box (each passes on a0d01cf unless said) ----------------------

LAUNCH = ["-m", "sglang.launch_server"]


class Served:
    """Counts the decisions served from the gate cache."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from stackcheck.commands import gate as gate_command

        self.count = 0
        serve = gate_command.Kept.serve

        def spy(kept: Any, command: Any) -> int:
            self.count += 1
            return serve(kept, command)

        monkeypatch.setattr(gate_command.Kept, "serve", spy)


def run_gate(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str, str]:
    from stackcheck.cli import main

    code = main(["gate", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def target_env(root: Path) -> Path:
    """A virtual environment (no pip) with SGLang 0.5.9's dist-info requiring `irevdep`, irevdep 1.0 installed, and
    a models directory registering LlamaForCausalLM (our own small files)."""
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    (site / "sglang-0.5.9.dist-info").mkdir(parents=True)
    (site / "sglang-0.5.9.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\nRequires-Dist: irevdep>=1.0\n\n"
    )
    (site / "irevdep-1.0.dist-info").mkdir()
    (site / "irevdep-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: irevdep\nVersion: 1.0\n\n")
    (site / "sglang" / "srt" / "models").mkdir(parents=True)
    (site / "sglang" / "__init__.py").write_text("")
    (site / "sglang" / "srt" / "models" / "llama.py").write_text(
        "class LlamaForCausalLM:\n    pass\n\n\nEntryClass = LlamaForCausalLM\n"
    )
    return site


def steady_host(path: str = "/dev/shm") -> Any:
    """/dev/shm as a fixed reading (64 GiB, all free): the kept decision reads statvfs of the real /dev/shm again
    before it serves (host_readers.read_shm), and another process on the box writing there between the runs changed
    its free bytes, so the guards below failed with 'not kept' though no attack had been made (imend6)."""
    from stackcheck.launch.host_readers import ShmReading

    return ShmReading(path, 64 << 30, 64 << 30)


@pytest.fixture
def kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in list(os.environ):
        if name.startswith(("SGLANG_", "STACKCHECK_")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "cache"))
    # the host readings other processes change (both the preflight and the cache's replay look them up at call time):
    # /dev/shm's free bytes, and whether the server's port is free
    monkeypatch.setattr("stackcheck.launch.host_readers.read_shm", steady_host)
    monkeypatch.setattr("stackcheck.launch.host_readers.port_free", lambda host, port: (True, "free"))
    return tmp_path / "cache" / "gate"


def _judged_again(
    change: Any, argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    served = Served(monkeypatch)
    run_gate(capsys, argv)  # (a first live run learns the interpreter's sys.path; facts.python.learned differs after)
    first = run_gate(capsys, argv)
    count = served.count
    assert run_gate(capsys, argv) == first and served.count == count + 1, "not kept: the attack would prove nothing"
    change()
    again = run_gate(capsys, argv)
    assert served.count == count + 1, "served after a change of what the decision depends on"
    with monkeypatch.context() as m:
        m.setenv("STACKCHECK_PLAN_CACHE", "0")
        assert run_gate(capsys, argv) == again
    return again


@pytest.mark.parametrize("attack", ["removed", "downgraded", "metadata"])
def test_a_dependency_changed_in_the_target_environment(
    attack: str, kept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live gate of a command run by a target environment's python: the dependency check's reads (listing of
    each search directory, each dist-info's METADATA) are made again; a removed, downgraded or rewritten
    distribution is judged again."""
    site = target_env(tmp_path)
    model = model_dir(tmp_path, "llama", LLAMA3)
    argv = [
        "--dry-run",
        "--format",
        "json",
        "--",
        str(tmp_path / "venv/bin/python"),
        *LAUNCH,
        "--model-path",
        str(model),
    ]
    dist = site / "irevdep-1.0.dist-info"

    def change() -> None:
        if attack == "removed":
            shutil.rmtree(dist)
        elif attack == "downgraded":
            dist.rename(site / "irevdep-0.9.dist-info")
            (site / "irevdep-0.9.dist-info" / "METADATA").write_text(
                "Metadata-Version: 2.1\nName: irevdep\nVersion: 0.9\n\n"
            )
        else:  # the same size, its mtime put back: the content is compared
            rewrite_in_place(dist / "METADATA", "Metadata-Version: 2.1\nName: irevdep\nVersion: 0.1\n\n")

    _, out, _ = _judged_again(change, argv, capsys, monkeypatch)
    deps = next(c for c in json.loads(out)["preflight"]["checks"] if c["check"] == "dependencies")
    assert deps["status"] == "fail" and "irevdep" in deps["message"]


def test_a_new_snapshot_in_the_hugging_face_cache(
    kept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """refs/main moved to a snapshot whose config.json is another model: read again."""
    hub = tmp_path / "hub"
    repo = hub / "models--org--model"
    for rev, config in (("a" * 40, LLAMA3), ("b" * 40, {**LLAMA3, "architectures": ["Qwen3MoeForCausalLM"]})):
        (repo / "snapshots" / rev).mkdir(parents=True)
        (repo / "snapshots" / rev / "config.json").write_text(json.dumps(config))
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("a" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    argv = [
        "--dry-run",
        "--format",
        "json",
        "--facts",
        str(H200),
        "--",
        "python3",
        *LAUNCH,
        "--model-path",
        "org/model",
    ]
    _, out, _ = _judged_again(lambda: (repo / "refs" / "main").write_text("b" * 40), argv, capsys, monkeypatch)
    model = next(c for c in json.loads(out)["preflight"]["checks"] if c["check"] == "model")
    assert model["observed"]["architectures"] == ["Qwen3MoeForCausalLM"]


def test_cuda_visible_devices_is_part_of_the_key(
    kept: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["--dry-run", "--facts", str(H200), "--", "python3", *LAUNCH, "--model-path", "x", "--tp", "2"]
    _judged_again(lambda: monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0"), argv, capsys, monkeypatch)


def test_an_entry_is_private_and_a_planted_link_is_not_followed(
    kept: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry is a 0600 file in a 0700 directory; a link planted at its name (to a file that says allow) is
    neither read nor written through; an entry others may write is not read."""
    served = Served(monkeypatch)
    argv = ["--dry-run", "--facts", str(H200), "--", "python3", *LAUNCH, "--model-path", "x", "--tp", "16"]
    first = run_gate(capsys, argv)
    (entry,) = kept.glob("*.json")
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600 and stat.S_IMODE(kept.stat().st_mode) == 0o700
    forged = json.loads(entry.read_text())
    forged.update(out="allowed\n", code=0)
    planted = tmp_path / "planted.json"
    planted.write_text(json.dumps(forged))
    planted.chmod(0o600)
    entry.unlink()
    entry.symlink_to(planted)
    assert run_gate(capsys, argv) == first and served.count == 0  # judged again, the link replaced
    assert not entry.is_symlink() and json.loads(planted.read_text())["out"] == "allowed\n"
    entry.write_text(json.dumps(forged))
    entry.chmod(0o620)
    assert run_gate(capsys, argv) == first and served.count == 0
