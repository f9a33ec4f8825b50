"""irev65 (a review of igap38's gate --cwd): a DIR given through a symbolic link. The server's process starts in
the directory the link points to (chdir follows it; the kernel keeps the resolved directory), so a relative
`--model-path ../models/m` is DIR's real parent's models/m there. The gate joined the path to the link's own name
and normalised `..` lexically: it read the link's parent's models/m, found a model the server does not find, and said
`model` ok (a false pass). DIR is now taken resolved, as the server's working directory is."""

from __future__ import annotations

from pathlib import Path

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
