"""The gate refuses a command whose `env` prefix GNU env would fail on or that it does not read (D6, imend; the
reader is assembly/env_prefix.py): an unknown option makes env exit 125 before any server starts, so the words
after it are never judged in its place (before, `env --frobnicate python -m sglang.launch_server ...` was judged
as a wrapper around that python); an -S string env rejects, and one whose `${NAME}` the gate's environment does not
hold (unknown: refused unless --allow-unknown). A token in the prefix is in no output. Each runs the real
`python -m stackcheck gate --dry-run`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import clean_env, run_stackcheck

DRY = ["--dry-run", "--assume-gpu", "9.0x2", "--assume-driver", "580.95.05"]
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
SECRET = "hf_imendSECRETvalue0123456789"


def _gate(tmp_path: Path, *command: str, fmt: str = "json", allow: bool = False) -> tuple[int, str, str]:
    env = clean_env("HF_", "NOPE", XDG_CACHE_HOME=str(tmp_path / "cache"))
    extra = ["--allow-unknown"] if allow else []
    proc = run_stackcheck("gate", *DRY, *extra, "--format", fmt, "--", *command, env=env, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr


def _env_blocker(doc: dict[str, Any], key: str = "reasons") -> dict[str, Any]:
    found: list[dict[str, Any]] = [b for b in doc.get(key) or [] if b.get("feature") == "env"]
    assert len(found) == 1, doc.get(key)
    return found[0]


@pytest.mark.parametrize(
    ("prefix", "words"),
    [
        (["--frobnicate"], "option --frobnicate is unrecognized"),
        (["-S", "A=1 'open"], "no terminating quote"),
        (["-S", "A=$HOME"], "only ${VARNAME}"),
        (["-0"], "runs no command"),
    ],
)
def test_an_env_that_fails_is_refused(tmp_path: Path, prefix: list[str], words: str) -> None:
    rc, out, err = _gate(tmp_path, "env", *prefix, *LAUNCH)
    doc = json.loads(out)
    assert rc == 1 and doc["decision"] == "refuse", (rc, err[-300:])
    got = _env_blocker(doc)
    assert (got["status"], got["effect"]) == ("blocked", "crash"), got
    assert words in got["reasons"][0]["message"], got


def test_an_env_prefix_in_a_shell_string_is_read_alike(tmp_path: Path) -> None:
    rc, out, _ = _gate(tmp_path, "bash", "-c", "cd /tmp && env --frobnicate " + " ".join(LAUNCH))
    doc = json.loads(out)
    assert rc == 1 and "option --frobnicate is unrecognized" in _env_blocker(doc)["reasons"][0]["message"]


def test_a_variable_not_known_is_unknown(tmp_path: Path) -> None:
    command = ["env", "-S", "A=${NOPE_IMEND}", *LAUNCH]
    rc, out, _ = _gate(tmp_path, *command)
    doc = json.loads(out)
    assert rc == 1 and _env_blocker(doc)["status"] == "unknown", doc.get("reasons")
    rc, out, _ = _gate(tmp_path, *command, allow=True)
    assert _env_blocker(json.loads(out), "warnings")["status"] == "unknown"


def test_a_read_prefix_is_judged_as_env_runs_it(tmp_path: Path) -> None:
    """An option cluster, `--` (here from an -S string), `${HOME}` from the environment env starts with (before its
    -i): read, no refusal of the prefix."""
    _, out, _ = _gate(tmp_path, "env", "-iu", "X", "-S", "-- A=${HOME}", *LAUNCH)
    doc = json.loads(out)
    assert doc["derived"]["entrypoint"] == "launch-server" and not [
        b for b in [*(doc.get("reasons") or []), *(doc.get("warnings") or [])] if b.get("feature") == "env"
    ], doc


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_a_token_in_a_refused_prefix_is_in_no_output(tmp_path: Path, fmt: str) -> None:
    for prefix in (["-S", f"-u HF_TOKEN={SECRET} --frob"], ["-S", f"HF_TOKEN={SECRET} 'open"], [f"--token={SECRET}"]):
        rc, out, err = _gate(tmp_path, "env", *prefix, *LAUNCH, fmt=fmt)
        assert rc == 1 and SECRET not in out and SECRET not in err, (prefix, out[-400:], err[-400:])
