"""The gate's decision kept between runs (stackcheck.assembly.gate_cache): what a kept decision prints is what a
fresh gate prints, over generated command lines and recorded boxes; a change of any input of the key, of the facts
or of anything the decision read is a miss; an entry that is corrupt, foreign or of another shape is a miss, never
an error; nothing secret is written."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from gate_cli import LLAMA3, MODELS, QWEN3_MOE, model_dir
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stackcheck.assembly import gate_cache, plan_cache
from stackcheck.cli import main
from stackcheck.commands import gate as gate_command

ROOT = Path(__file__).resolve().parent.parent.parent
H200 = ROOT / "tests/cases/h200-newest/facts.json"
BOXES = [
    "tests/cases/h200-newest/facts.json",
    "tests/cases/b200/facts.json",
    "tests/cases/writeup-after/facts.json",
    "tests/cases/gb10-no-sm121a/facts.json",
    "tests/cases/rtx4090-pcie-sglang044/facts.json",
    "tests/cases/no-driver/facts.json",
    "examples/facts/h200-cu130.json",
]
LAUNCH = ["python3", "-m", "sglang.launch_server"]


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    return tmp_path / "c" / "gate"


class Served:
    """Counts the decisions served from the gate cache (gate_command.Kept.serve)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        serve = gate_command.Kept.serve

        def spy(kept: Any, command: Any) -> int:
            self.count += 1
            return serve(kept, command)

        monkeypatch.setattr(gate_command.Kept, "serve", spy)


def gate(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["gate", *argv])
    out = capsys.readouterr()
    return code, out.out, out.err


def facts_gate(capsys: pytest.CaptureFixture[str], facts: Path | str, *launch: str, fmt: str = "text") -> Any:
    return gate(capsys, "--dry-run", "--facts", str(facts), "--format", fmt, "--", *LAUNCH, *launch)


def fresh(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *argv: str) -> tuple[int, str, str]:
    with monkeypatch.context() as m:
        m.setenv("STACKCHECK_PLAN_CACHE", "0")
        return gate(capsys, *argv)


# ---- the property: kept == fresh ---------------------------------------------------------------------------------

FLAGS = st.lists(
    st.sampled_from(
        [
            ["--tp", "1"],
            ["--tp", "2"],
            ["--tp", "8"],
            ["--attention-backend", "fa3"],
            ["--attention-backend", "flashinfer"],
            ["--attention-backend", "trtllm_mla"],
            ["--attention-backend", "fa4"],
            ["--quantization", "fp8"],
            ["--kv-cache-dtype", "fp8_e4m3"],
            ["--disable-cuda-graph"],
            ["--speculative-algorithm", "EAGLE"],
            ["--enable-dp-attention"],
            ["--api-key", "sk-live-3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c"],
            ["--no-such-flag"],
            ["--mem-fraction-static", "0.8"],
        ]
    ),
    max_size=4,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    box=st.sampled_from(BOXES),
    model=st.sampled_from([None, "x", *sorted(MODELS)]),
    flags=FLAGS,
    fmt=st.sampled_from(["text", "json"]),
    options=st.lists(st.sampled_from(["--allow-unknown", "--advise", "-v", "--strict-features"]), max_size=2),
)
def test_kept_decision_prints_what_a_fresh_one_does(
    box: str,
    model: str | None,
    flags: list[list[str]],
    fmt: str,
    options: list[str],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    served = Served(monkeypatch)
    with tempfile.TemporaryDirectory() as tmp:
        monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
        monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(Path(tmp) / "c"))
        launch = [w for f in flags for w in f]
        if model is not None:
            path = "x" if model == "x" else str(model_dir(Path(tmp), model, MODELS[model]))
            launch = ["--model-path", path, *launch]
        facts = str(ROOT / box)
        argv = [*dict.fromkeys(options), "--dry-run", "--facts", facts, "--format", fmt, "--", *LAUNCH, *launch]
        expected = fresh(capsys, monkeypatch, *argv)
        first = gate(capsys, *argv)
        assert served.count == 0
        second = gate(capsys, *argv)
        assert first == expected
        assert second == expected
        if expected[2] == "" and expected[0] in (0, 1):  # (a decision that warned on stderr is not kept)
            assert served.count == 1
        stored = "".join(p.read_text() for p in (Path(tmp) / "c" / "gate").glob("*.json"))
        assert "3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c" not in stored  # the api key: masked in the output, never kept


def test_a_hit_prepares_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A second run of the same gate is served before the rules are prepared: the refusal rules' module, the
    engine and the pipeline's rule texts are never imported (a fresh interpreter, as a user runs it)."""
    env = {**os.environ, "STACKCHECK_PLAN_CACHE": "1", "STACKCHECK_CACHE_DIR": str(tmp_path / "c")}
    env["PYTHONPATH"] = str(ROOT)
    code = (
        "import sys\nfrom stackcheck.cli import main\nrc = main(sys.argv[1:])\n"
        "print(sorted(m for m in ('stackcheck.launch.refusals', 'stackcheck.verdicts.engine',"
        " 'stackcheck.assembly.pipeline', 'stackcheck.launch.recommend') if m in sys.modules), file=sys.stderr)\n"
    )
    argv = ["gate", "--dry-run", "--facts", str(H200), "--", *LAUNCH, "--model-path", "x", "--tp", "1"]
    runs = [subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, env=env, cwd=ROOT)
            for _ in range(2)]  # fmt: skip
    assert runs[0].stdout == runs[1].stdout
    assert "stackcheck.verdicts.engine" in runs[0].stderr
    assert runs[1].stderr.strip() == "['stackcheck.assembly.pipeline']"  # (Background, imported before the lookup)


# ---- every input of the key, the facts and each read: a change is a miss ------------------------------------------


def _miss_after(
    change: Any, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, argv: list[str] | None = None
) -> None:
    served = Served(monkeypatch)
    argv = argv or ["--dry-run", "--facts", str(H200), "--", *LAUNCH, "--model-path", "x"]
    first = gate(capsys, *argv)
    assert gate(capsys, *argv) == first and served.count == 1  # kept, and served unchanged
    new_argv = change() or argv
    expected = fresh(capsys, monkeypatch, *new_argv)
    assert gate(capsys, *new_argv) == expected
    assert served.count == 1, "served after a change of what the decision depends on"


KEY_CHANGES: dict[str, Callable[[pytest.MonkeyPatch, Path], Any]] = {
    "arguments": lambda m, tmp: ["--dry-run", "--facts", str(H200), "--", *LAUNCH, "--model-path", "x", "-tp", "1"],
    "raw command line": lambda m, tmp: m.setattr(sys, "argv", [*sys.argv, "again"]),
    "environment": lambda m, tmp: m.setenv("SGLANG_SOMETHING_NEW", "1"),
    "working directory": lambda m, tmp: m.chdir(tmp),
    "home directory": lambda m, tmp: m.setattr(os.path, "expanduser", lambda p: str(tmp)),
    "interpreter": lambda m, tmp: m.setattr(sys, "executable", str(tmp / "python3")),
    "sys.path": lambda m, tmp: m.setattr(sys, "path", [*sys.path, str(tmp)]),
    "user": lambda m, tmp: m.setattr(os, "geteuid", lambda: 4242),
    "kernel": lambda m, tmp: m.setattr(os, "uname", lambda: ("Linux", "h", "9.9", "#1", "x86_64")),
    "output": lambda m, tmp: m.setattr(plan_cache, "_output_state", lambda: [0, True, [80, 24], True, [80, 24]]),
    "stackcheck's code": lambda m, tmp: m.setattr(plan_cache, "_code_stamp", lambda: ["another"]),
    "shipped manifests": lambda m, tmp: m.setattr(
        "stackcheck.knowledge.package_data.shipped_files", lambda: {"meta.json": ("m", "p", "\0file 1 2 3 4 5")}
    ),
}


@pytest.mark.parametrize("name", sorted(KEY_CHANGES))
def test_a_change_of_a_key_input_misses(
    name: str, cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _miss_after(lambda: KEY_CHANGES[name](monkeypatch, tmp_path), capsys, monkeypatch)


def test_changed_facts_miss(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    facts = tmp_path / "facts.json"
    facts.write_text(H200.read_text())
    doc = json.loads(H200.read_text())

    def change() -> None:
        box = doc.get("facts", doc)
        box["driver"]["version"] = "550.54.15"  # an older driver: another decision
        facts.write_text(json.dumps(doc))

    _miss_after(change, capsys, monkeypatch, ["--dry-run", "--facts", str(facts), "--", *LAUNCH, "--tp", "1"])


@pytest.mark.parametrize("edit", ["config", "remove", "quant"])
def test_a_changed_model_file_misses(
    edit: str, cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """config.json (and hf_quant_config.json) are read by the preflight: an edit, a removal, a new file."""
    model = model_dir(tmp_path, "m", LLAMA3)

    def change() -> None:
        if edit == "config":
            (model / "config.json").write_text(json.dumps(QWEN3_MOE))
        elif edit == "remove":
            (model / "config.json").unlink()
        else:
            (model / "hf_quant_config.json").write_text(json.dumps({"quantization": {"quant_algo": "FP8"}}))

    argv = ["--dry-run", "--facts", str(H200), "--format", "json", "--", *LAUNCH, "--model-path", str(model)]
    _miss_after(change, capsys, monkeypatch, argv)


def test_a_changed_config_file_misses(
    cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "server.yaml"
    config.write_text("tp: 1\n")
    argv = ["--dry-run", "--facts", str(H200), "--", *LAUNCH, "--model-path", "x", "--config", str(config)]
    _miss_after(lambda: config.write_text("tp: 8\n") and None, capsys, monkeypatch, argv)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_live_port_in_use_misses(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The live gate (this box's facts): its port's bind is read again on lookup."""
    port = _free_port()
    argv = ["--dry-run", "--", *LAUNCH, "--model-path", "x", "--port", str(port)]
    listener = socket.socket()
    try:

        def change() -> None:
            listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            listener.bind(("127.0.0.1", port))
            listener.listen(1)

        _miss_after(change, capsys, monkeypatch, argv)
    finally:
        listener.close()


LIVE_CHANGES = {
    "shm": ("stackcheck.launch.host_readers.read_shm", lambda path: gate_cache_shm(path)),
    "memlock": ("stackcheck.launch.host_readers.read_memlock", lambda: (12345, None)),
}


def gate_cache_shm(path: str) -> Any:
    from stackcheck.launch.host_readers import ShmReading

    return ShmReading(path, 1 << 20, 1 << 19)


@pytest.mark.parametrize("name", sorted(LIVE_CHANGES))
def test_a_changed_live_reading_misses(
    name: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    target, reader = LIVE_CHANGES[name]
    argv = ["--dry-run", "--", *LAUNCH, "--model-path", "x", "--tp", "2"]
    _miss_after(lambda: monkeypatch.setattr(target, reader), capsys, monkeypatch, argv)


def test_changed_gpu_usage_misses(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from stackcheck.launch import gate_preflight
    from stackcheck.probes.gpu_usage import GpuProcess, GpuUsage, UsageReading

    class Usage:
        def __init__(self, reading: Any) -> None:
            self.reading = reading

        def get(self) -> Any:
            return self.reading

    idle = UsageReading([GpuUsage(0, "H200", 150 << 30, 149 << 30, 1 << 30, 0)], None, 1.0)
    held = [GpuProcess(7, "x", 141 << 30, "compute")]
    busy = UsageReading([GpuUsage(0, "H200", 150 << 30, 9 << 30, 141 << 30, 0, held)])
    from stackcheck.launch import usage

    def reads(reading: Any) -> None:  # (the usual path's gate_preflight.start_usage, and a hit's launch.usage's)
        for module in (gate_preflight, usage):
            monkeypatch.setattr(module, "start_usage", lambda *a: Usage(reading))

    reads(idle)
    argv = ["--dry-run", "--", *LAUNCH, "--model-path", "x"]
    busier = lambda: reads(busy)  # noqa: E731
    _miss_after(busier, capsys, monkeypatch, argv)


def test_usage_duration_and_own_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """The usage reading's duration is not compared (it differs on every run); a GPU process of the gate's own
    pid is not kept (the memory check leaves that pid out, and the pid is this run's)."""
    from stackcheck.probes.gpu_usage import GpuUsage, UsageReading

    a = UsageReading([GpuUsage(0, "H200", 10, 5, 5, 0)], None, 1.0)
    b = UsageReading([GpuUsage(0, "H200", 10, 5, 5, 0)], None, 9.0)
    assert gate_cache._answer("usage", a) == gate_cache._answer("usage", b)
    assert gate_cache._answer("usage", a) != gate_cache._answer("usage", UsageReading([GpuUsage(0, "H200", 10, 4, 6)]))


def test_reads_made_again_on_lookup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each kind of read, recorded under a slot and made again by `unchanged`: the same answer holds, another
    answer (or an error where there was none) is a miss; the model registry is read whole."""
    import stackcheck.launch.host_readers as host
    import stackcheck.readers.entryclasses as entryclasses

    slot = gate_cache.Slot(str(tmp_path), "k", None)
    monkeypatch.setattr(gate_cache, "ACTIVE", [slot])
    f = tmp_path / "f"
    f.write_text("one")
    view = gate_cache.host_view()
    assert isinstance(view, gate_cache.Recording)
    view.read_bytes(str(f), 100)
    view.stat(str(f))
    view.listdir(str(tmp_path))
    monkeypatch.setattr(entryclasses, "read_registry_cached", lambda v, s, e: ("registry", s))
    gate_cache.note("registry", ("/site",), lambda s: entryclasses.read_registry_cached(view, s, {}))
    gate_cache.note("port", ("127.0.0.1", 1), lambda h, p: (True, "free"))
    monkeypatch.setattr(host, "port_free", lambda h, p: (True, "free"))
    live = {"usage": lambda: None}
    assert [r[0] for r in slot.reads] == ["view.read_bytes", "view.stat", "view.listdir", "registry", "port"]
    assert gate_cache.unchanged(slot.reads, live)
    steps: list[tuple[Callable[[], Any], Callable[[], Any]]] = [
        (lambda: f.write_text("one"), lambda: f.write_text("two")),
        (lambda: None, lambda: (tmp_path / "g").write_text("")),  # (the listing: kept changed from here)
    ]
    for undo, do in steps:
        undo()
        do()
        assert not gate_cache.unchanged(slot.reads, live)
    (tmp_path / "g").unlink()
    f.write_text("one")
    os.utime(f, (1, 1))
    assert not gate_cache.unchanged(slot.reads[1:2], live)  # its stat
    assert gate_cache.unchanged(slot.reads[2:], live)
    monkeypatch.setattr(entryclasses, "read_registry_cached", lambda v, s, e: ("another registry", s))
    assert not gate_cache.unchanged(slot.reads[3:4], live)
    monkeypatch.setattr(host, "port_free", lambda h, p: (False, "in use"))
    assert not gate_cache.unchanged(slot.reads[4:5], live)
    assert not gate_cache.unchanged([["no-such-read", [], "x"]], live)


def test_facts_digest() -> None:
    """The probe outcomes' durations and the facts' per-run measurements are not compared; their status and
    everything else, the host block too, are."""
    facts = {"driver": {"version": "580"}, "kernel_symbols": {"ms": 1.0, "x": 1}}
    out = [{"name": "nvml", "status": "ok", "reason": None, "duration_ms": 3.0}]
    base = gate_cache.facts_digest((facts, out, None))
    assert base == gate_cache.facts_digest(({**facts, "kernel_symbols": {"ms": 9.0, "x": 1}}, out, None))
    assert base == gate_cache.facts_digest((facts, [{**out[0], "duration_ms": 5.0}], None))
    assert base != gate_cache.facts_digest((facts, [{**out[0], "status": "timeout"}], None))
    assert base != gate_cache.facts_digest(({**facts, "kernel_symbols": {"ms": 1.0, "x": 2}}, out, None))
    assert base != gate_cache.facts_digest((facts, out, {"hostname": "b"}))
    assert gate_cache.facts_digest(({"x": object()}, out, None)) is None


# ---- what is not kept, and what is never read ---------------------------------------------------------------------


def test_nothing_secret_is_written(
    cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "hf_Zx8Kq2Lm9Pn4Rt6Vw1Ys3Ab5Cd7Ef0Gh"
    monkeypatch.setenv("HF_TOKEN", secret)
    gate(capsys, "--dry-run", "--facts", str(H200), "--", *LAUNCH, "--model-path", "x", "--api-key", secret)
    kept = list(cache.glob("*.json"))
    assert kept and all(secret not in p.read_text() for p in kept)
    # a path the output would mask (a token in it) is a read that cannot be kept: nothing is
    for p in kept:
        p.unlink()
    gate(capsys, "--dry-run", "--facts", str(H200), "--", *LAUNCH, "--model-path", f"/models/{secret}")
    assert not list(cache.glob("*.json"))


@pytest.mark.parametrize("option", [["--watch"], ["--root", "/"], ["--manifests", "manifests"]])
def test_not_kept(option: list[str], cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stackcheck.cli import build_parser

    args = build_parser("gate").parse_args(["gate", *option, "--dry-run", "--", *LAUNCH])
    assert gate_cache.slot_for(args) is None
    plain = build_parser("gate").parse_args(["gate", "--dry-run", "--", *LAUNCH])
    assert gate_cache.slot_for(plain) is not None
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "0")
    assert gate_cache.slot_for(plain) is None


def _entry_file(cache: Path) -> Path:
    (entry,) = list(cache.glob("*.json"))
    return entry


def _corrupt(kind: str, entry: Path) -> None:
    data = json.loads(entry.read_text())
    if kind == "truncated":
        entry.write_text(entry.read_text()[:50])
    elif kind == "not json":
        entry.write_bytes(b"\xff\x00garbage")
    elif kind == "another key":
        entry.write_text(json.dumps({**data, "key": "0" * 64}))
    elif kind == "another format":
        entry.write_text(json.dumps({**data, "format": 99}))
    elif kind == "another output":  # same shape: a foreign entry whose facts digest is not this run's
        entry.write_text(json.dumps({**data, "facts": "0" * 64, "out": "allowed\n"}))
    elif kind == "bad code":
        entry.write_text(json.dumps({**data, "code": 4}))
    elif kind == "exec refused":
        entry.write_text(json.dumps({**data, "code": 1, "exec": True}))
    elif kind == "bad reads":
        entry.write_text(json.dumps({**data, "reads": [["view.stat", "x", "y"]]}))
    elif kind == "unknown read":
        entry.write_text(json.dumps({**data, "reads": [["rm -rf", [], "y"]]}))
    elif kind == "not a list of reads":
        entry.write_text(json.dumps({**data, "reads": {}}))
    elif kind == "others may write":
        entry.chmod(0o666)
    elif kind == "a link":
        target = entry.with_suffix(".elsewhere")
        target.write_text(entry.read_text())
        entry.unlink()
        entry.symlink_to(target)
    elif kind == "a directory":
        entry.unlink()
        entry.mkdir()
    elif kind == "too large":
        entry.write_text(json.dumps({**data, "pad": "x" * (gate_cache.MAX_ENTRY_BYTES + 1)}))


CORRUPT = [
    "truncated", "not json", "another key", "another format", "another output", "bad code", "exec refused",
    "bad reads", "unknown read", "not a list of reads", "others may write", "a link", "a directory", "too large",
]  # fmt: skip


@pytest.mark.parametrize("kind", CORRUPT)
def test_a_corrupt_entry_is_a_miss(
    kind: str, cache: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    served = Served(monkeypatch)
    argv = ["--dry-run", "--facts", str(H200), "--", *LAUNCH, "--model-path", "x", "--tp", "8"]
    expected = fresh(capsys, monkeypatch, *argv)
    assert gate(capsys, *argv) == expected
    _corrupt(kind, _entry_file(cache))
    assert gate(capsys, *argv) == expected
    assert served.count == 0


def test_an_unwritable_cache_is_no_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(blocker))
    argv = ["--dry-run", "--facts", str(H200), "--", *LAUNCH, "--model-path", "x"]
    expected = fresh(capsys, monkeypatch, *argv)
    assert gate(capsys, *argv) == expected
    assert gate(capsys, *argv) == expected


def test_an_allowed_launch_is_run_again(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without --dry-run an allowed launch is exec'd after its warnings: kept, the same warnings and the same exec."""
    ran: list[list[str]] = []

    def fake_exec(command: list[str]) -> int:
        ran.append(command)
        return 0

    monkeypatch.setattr(gate_command, "_exec", fake_exec)
    served = Served(monkeypatch)
    errs = []
    argv = ["gate", "--facts", str(H200), "--allow-unknown", "--", *LAUNCH, "--model-path", "x", "--tp", "1"]
    for _ in range(2):
        import io

        err = io.StringIO()
        monkeypatch.setattr(sys, "stderr", err)
        assert main(argv) == 0
        errs.append(err.getvalue())
    assert served.count == 1
    assert ran == [[*LAUNCH, "--model-path", "x", "--tp", "1"]] * 2
    assert errs[0] == errs[1]


def test_the_output_state_reads_stderr_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """An allowed launch's warnings go to stderr: its terminal, size and encoding are part of the key."""

    class Stream:
        def __init__(self, encoding: str) -> None:
            self.encoding = encoding
            self.errors = "strict"

        def isatty(self) -> bool:
            return False

    monkeypatch.setattr(sys, "stderr", Stream("utf-8"))
    utf8 = gate_cache._output_state()
    monkeypatch.setattr(sys, "stderr", Stream("latin-1"))
    assert utf8 is not None and gate_cache._output_state() != utf8
