"""irobust4: `env -C '' python -m sglang.launch_server ...` (and `--chdir=`): env's chdir("") fails with ENOENT and env
exits 125 before the command ("env: cannot change directory to ''", coreutils 9.1 run here), so the server never
starts. The gate read the empty directory as no change and allowed the launch; every other way env fails there
(an unknown option, `-u ''`) is refused (blocked, crash: the server never starts). Now -C with an empty directory
(the last -C given) stops the reading as env fails."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import H200_NEWEST, cli_json

from stackcheck.assembly.env_prefix import read_env

# (a model the gate reads: with /m unread, --attention-backend fa3 is unknown since imodel2, as the model may be
# Gemma 4, whose attention backends SGLang 0.5.13-0.5.23 assert without fa3)
LLAMA = str(Path(__file__).resolve().parent / "data" / "models" / "llama3-8b")
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", LLAMA, "--tp", "1", "--attention-backend", "fa3"]


def _gate(*prefix: str) -> tuple[int, dict[str, object]]:
    return cli_json(["gate", "--facts", str(H200_NEWEST), "--dry-run", "--format", "json", "--", *prefix, *LAUNCH])


def test_the_baseline_is_allowed() -> None:
    assert _gate()[1]["decision"] == "allow"
    # (under --facts any `env -C` is refused as unknown since imend3: whether the directory exists on that box is not
    # known; the reading itself does not stop at a -C that a later -C replaces: the last -C is the one env runs)
    for prefix in (["-C", "/srv"], ["-C", "", "-C", "/srv"]):
        read = read_env([*prefix, *LAUNCH], {})
        assert read.stop is None and not read.fails, (prefix, read.stop)


@pytest.mark.parametrize(
    "prefix", [["env", "-C", ""], ["env", "--chdir="], ["env", "-iC", ""], ["env", "-i", "-C", "", "A=1"]]
)
def test_an_empty_chdir_is_refused_as_env_fails(prefix: list[str]) -> None:
    # fails before: allow
    rc, doc = _gate(*prefix)
    assert rc == 1 and doc["decision"] == "refuse", doc["decision"]
    read = read_env(prefix[prefix.index("env") + 1 :] + LAUNCH, {"A": "1"})
    assert read.fails and read.stop is not None and "-C" in read.stop
