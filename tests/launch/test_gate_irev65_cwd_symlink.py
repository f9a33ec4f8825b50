"""irev65 (a review of igap38's gate --cwd): a DIR given through a symbolic link. The server's process starts in
the directory the link points to (chdir follows it; the kernel keeps the resolved directory), so a relative
`--model-path ../models/m` is DIR's real parent's models/m there. The gate joined the path to the link's own name
and normalised `..` lexically: it read the link's parent's models/m, found a model the server does not find, and said
`model` ok (a false pass). DIR is now taken resolved, as the server's working directory is."""

from __future__ import annotations

from pathlib import Path

import pytest
from gate_cli import LLAMA3, cli_json, model_dir

REPO = Path(__file__).parent.parent.parent
LINE = ["python3", "-m", "sglang.launch_server", "--model-path", "../models/m", "--attention-backend", "fa3"]


def _model_check(cwd: Path) -> dict[str, object]:
    facts = str(REPO / "tests/cases/h200-newest/facts.json")
    _, doc = cli_json(["gate", "--facts", facts, "--dry-run", "--format", "json", "--cwd", str(cwd), "--", *LINE])
    (found,) = [c for c in doc["preflight"]["checks"] if c["check"] == "model"]
    return dict(found)


def test_a_symlinked_cwd_reads_dotdot_from_the_real_directory(tmp_path: Path) -> None:
    # links/serve -> real/serve; links/models/m holds a model, real/models/m does not
    (tmp_path / "real/serve").mkdir(parents=True)
    (tmp_path / "links").mkdir()
    (tmp_path / "links/serve").symlink_to(tmp_path / "real/serve", target_is_directory=True)
    (tmp_path / "links/models").mkdir()
    model_dir(tmp_path / "links/models", "m", LLAMA3)
    assert _model_check(tmp_path / "links/serve")["status"] != "ok"
    (tmp_path / "real/models").mkdir()
    model_dir(tmp_path / "real/models", "m", LLAMA3)  # where the server looks: found
    assert _model_check(tmp_path / "links/serve")["status"] == "ok"


def test_a_relative_nccl_so_path_through_a_symlink_is_read_as_dlopen_reads_it(tmp_path: Path) -> None:
    # SGLANG_NCCL_SO_PATH=sub/../nccl/libnccl.so.2 from DIR, where DIR/sub links elsewhere: dlopen resolves sub first,
    # so `..` is the link target's parent (which holds no NCCL); DIR/nccl/libnccl.so.2 (a lexical `..`) is not opened
    from elfwriter import build_so

    from stackcheck.probes.jit import PYNCCL_FUNCTIONS, nccl_so_path
    from stackcheck.readers.fsview import HostView

    lib = tmp_path / "co/nccl/libnccl.so.2"
    lib.parent.mkdir(parents=True)
    lib.write_bytes(build_so(defined=list(PYNCCL_FUNCTIONS), soname="libnccl.so.2"))
    (tmp_path / "elsewhere/deep").mkdir(parents=True)
    (tmp_path / "co/sub").symlink_to(tmp_path / "elsewhere/deep", target_is_directory=True)
    env = {"SGLANG_NCCL_SO_PATH": "sub/../nccl/libnccl.so.2"}
    assert nccl_so_path(env, HostView(), cwd=str(tmp_path / "co"))["nccl_so_path_found"] is False
    (tmp_path / "elsewhere/nccl").mkdir()
    (tmp_path / "elsewhere/nccl/libnccl.so.2").write_bytes(lib.read_bytes())
    assert nccl_so_path(env, HostView(), cwd=str(tmp_path / "co"))["nccl_so_path_found"] is True


def test_a_relative_model_path_through_a_symlink_is_read_as_the_server_opens_it(tmp_path: Path) -> None:
    # --model-path sub/../m from DIR, where DIR/sub links elsewhere: the server's open resolves sub first
    here = tmp_path / "serve"
    (tmp_path / "elsewhere/deep").mkdir(parents=True)
    here.mkdir()
    (here / "sub").symlink_to(tmp_path / "elsewhere/deep", target_is_directory=True)
    model_dir(here, "m", LLAMA3)  # DIR/m: a lexical `..` finds it, the server does not
    facts = str(REPO / "tests/cases/h200-newest/facts.json")
    line = ["python3", "-m", "sglang.launch_server", "--model-path", "sub/../m", "--attention-backend", "fa3"]

    def status() -> object:
        _, doc = cli_json(["gate", "--facts", facts, "--dry-run", "--format", "json", "--cwd", str(here), "--", *line])
        (found,) = [c for c in doc["preflight"]["checks"] if c["check"] == "model"]
        return found["status"]

    assert status() != "ok"
    model_dir(tmp_path / "elsewhere", "m", LLAMA3)
    assert status() == "ok"


def test_a_kept_decision_is_not_served_for_a_link_that_now_points_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the decision reads DIR resolved; the gate cache's key held the command line only (--cwd LINK): once LINK points
    # to another directory the reads of the first one answer the same, and a decision judged there would be served
    from stackcheck.assembly import gate_cache
    from stackcheck.cli import build_parser

    monkeypatch.setenv("STACKCHECK_PLAN_CACHE", "1")
    monkeypatch.setenv("STACKCHECK_CACHE_DIR", str(tmp_path / "c"))
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    link = tmp_path / "serve"
    link.symlink_to(tmp_path / "a", target_is_directory=True)
    argv = ["gate", "--dry-run", "--cwd", str(link), "--", "python3", "-m", "sglang.launch_server"]
    first = gate_cache.slot_for(build_parser("gate").parse_args(argv))
    link.unlink()
    link.symlink_to(tmp_path / "b", target_is_directory=True)
    second = gate_cache.slot_for(build_parser("gate").parse_args(argv))
    assert first is not None and second is not None and first.key != second.key
