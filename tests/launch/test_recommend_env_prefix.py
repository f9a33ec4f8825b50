"""imend2: `stackcheck recommend -- env ...`: the given launch's `env` prefix as recommend reads it and writes it
back. Pinned at eb28ed21 (d612a45a), when recommend read the prefix with its own split_env_prefix: every word
starting with `-` was kept as an option word, only `-u` took the next word, the `-u NAME` it added was written after
all of them, and the environment it judged was the caller's, the prefix's -i and -u not applied. Now recommend
reads the prefix with assembly/env_prefix.read_env, as the gate and the target do (GNU env, coreutils src/env.c
aa0c0de35): a `-u NAME` it adds is written first after `env` (an option there whatever follows); where the
reading stops (env fails there, or does what is not read) no launch is written and the gate's refusal is given
(exit 1), never an edit of the words after the stop; where an edit would have to go inside an -S string, no
launch is written and the changes are listed, to make by hand."""

from __future__ import annotations

from typing import Any

import pytest
from launch.test_recommend import SEED_AFTER
from recommend_cli import clean_recommend_env, recommend_json, run  # noqa: F401 (the autouse fixture)

from stackcheck.assembly.env_prefix import read_env
from stackcheck.launch.recommend import read_prefix

LAUNCH = ["python", "-m", "sglang.launch_server", "--tp", "8"]
ADDED = ["SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1", "SGLANG_ENABLE_JIT_DEEPGEMM=0"]
EDITED = [*LAUNCH, "--attention-backend", "triton"]
DROP = ("drop", "NCCL_P2P_DISABLE")  # a never entry of recommend.json on this box, inherited from the shell below
ADDS = [("add", "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE"), ("add", "--attention-backend")]
ADDS += [("add", "SGLANG_ENABLE_JIT_DEEPGEMM")]
UNSET = ["-u", "NCCL_P2P_DISABLE"]


def _recommend(monkeypatch: pytest.MonkeyPatch, *prefix: str) -> tuple[int, dict[str, Any]]:
    monkeypatch.setenv("NCCL_P2P_DISABLE", "1")
    return recommend_json("--facts", str(SEED_AFTER), "--", "env", *prefix, *LAUNCH)


def _diff(doc: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["action"], c["name"]) for c in doc["diff"]]


def _runs(command: list[str]) -> tuple[list[str], dict[str, str]]:
    """What GNU env runs for a written command (read_env), from an environment holding NCCL_P2P_DISABLE."""
    read = read_env(command[1:], {"NCCL_P2P_DISABLE": "1"})
    assert command[0] == "env" and read.stop is None, read
    return read.command, read.env


def test_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: NCCL_P2P_DISABLE, unset by the command's own -u, was still dropped (`-u NAME` written twice)."""
    rc, doc = _recommend(monkeypatch, "-u", "NCCL_P2P_DISABLE")
    assert rc == 1 and doc["env"] == {}
    assert doc["command"] == ["env", *UNSET, *ADDED, *EDITED]
    assert _diff(doc) == ADDS


def test_double_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: `env -- -u NCCL_P2P_DISABLE A=1 python ...`: after `--`, env runs `-u` as the command."""
    rc, doc = _recommend(monkeypatch, "--", "A=1")
    assert rc == 1
    assert doc["command"] == ["env", *UNSET, "--", "A=1", *ADDED, *EDITED]
    assert _diff(doc) == [DROP, *ADDS]
    assert _runs(doc["command"]) == (EDITED, {"A": "1", **dict(a.split("=") for a in ADDED)})


def test_split_string(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: `env -S -u NCCL_P2P_DISABLE 'A=1 NCCL_P2P_DISABLE=1' ...`: -S took `-u` as its string, and the -S
    string's own NCCL_P2P_DISABLE=1 (which no -u unsets: env applies -u before every assignment) stayed."""
    rc, doc = _recommend(monkeypatch, "-S", "A=1 NCCL_P2P_DISABLE=1")
    assert rc == 1 and doc["command"] == [] and doc["env"] == {}
    assert _diff(doc) == [DROP, *ADDS]  # listed, to make by hand
    assert any("NCCL_P2P_DISABLE is assigned in env's -S string" in n for n in doc["notes"]), doc["notes"]
    rc, doc = _recommend(monkeypatch, "-S", "A=1", "B=2")  # an -S string with nothing to drop: kept as given
    assert rc == 1 and doc["command"] == ["env", *UNSET, "-S", "A=1", "B=2", *ADDED, *EDITED]
    assert _runs(doc["command"])[1] == {"A": "1", "B": "2", **dict(a.split("=") for a in ADDED)}


def test_a_launch_inside_a_split_string(monkeypatch: pytest.MonkeyPatch) -> None:
    rc, doc = _recommend(monkeypatch, "-S", " ".join(LAUNCH))
    assert rc == 1 and doc["command"] == [] and _diff(doc) == [DROP, *ADDS]
    assert any("the launch stands in env's -S string" in n for n in doc["notes"]), doc["notes"]


def test_chdir(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: `env -C -u NCCL_P2P_DISABLE ... /srv python ...`: -C took `-u` as its directory and env ran /srv."""
    rc, doc = _recommend(monkeypatch, "-C", "/srv")
    assert rc == 1
    assert doc["command"] == ["env", *UNSET, "-C", "/srv", *ADDED, *EDITED]
    assert _diff(doc) == [DROP, *ADDS]
    assert _runs(doc["command"])[0] == EDITED


@pytest.mark.parametrize(
    ("prefix", "status", "why"),
    [
        (["--frobnicate", "A=1"], "blocked", "option --frobnicate is unrecognized (env fails, exit 125)"),
        (["-a", "py"], "unknown", "-a: the name the command is given"),
        (["-S", "A=${NOPE}"], "unknown", "-S: ${NOPE} is not in the environment given"),
    ],
)
def test_a_stop_writes_no_launch(monkeypatch: pytest.MonkeyPatch, prefix: list[str], status: str, why: str) -> None:
    """Was: the words were written back with the advice added (`env --frobnicate -u NCCL_P2P_DISABLE A=1 ...`, exit
    1 for the diff alone): a launch env fails on (exit 125), advised as if it ran."""
    rc, doc = _recommend(monkeypatch, *prefix)
    assert rc == 1 and doc["command"] == [] and doc["env"] == {} and "diff" not in doc
    assert [(r["subject"], r["status"]) for r in doc["refused"]] == [("env", status)]
    assert why in doc["refused"][0]["message"]
    assert any(n.startswith("no launch written: the command's env prefix is read no further") for n in doc["notes"])
    monkeypatch.setenv("NCCL_P2P_DISABLE", "1")
    rc, text = run("recommend", "--facts", str(SEED_AFTER), "--", "env", *prefix, *LAUNCH)
    assert rc == 1 and "refused by the gate: env" in text and "needs no change" not in text, text


def test_an_assignment_of_an_inherited_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: `env NCCL_P2P_DISABLE=1 python ...` with NCCL_P2P_DISABLE=1 inherited too: the assignment was dropped
    and no `-u` written, so the command still saw the inherited NCCL_P2P_DISABLE=1 (the drop not made)."""
    rc, doc = _recommend(monkeypatch, "NCCL_P2P_DISABLE=1")
    assert rc == 1 and doc["command"] == ["env", *UNSET, *ADDED, *EDITED]
    assert "NCCL_P2P_DISABLE" not in _runs(doc["command"])[1]


def test_ignore_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Was: NCCL_P2P_DISABLE, which -i keeps from the command, was dropped (`-u` added)."""
    rc, doc = _recommend(monkeypatch, "-i", "A=1")
    assert rc == 1
    assert doc["command"] == ["env", "-i", "A=1", *ADDED, *EDITED]
    assert _diff(doc) == ADDS


def test_a_secret_assignment(monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "hf_" + "q" * 34
    rc, doc = _recommend(monkeypatch, f"HF_TOKEN={secret}")
    assert rc == 1 and secret not in repr(doc)
    assert doc["command"] == ["env", *UNSET, "HF_TOKEN=***", *ADDED, *EDITED]
    assert doc["given"] == ["env", "HF_TOKEN=***", *LAUNCH]
    rc, doc = _recommend(monkeypatch, f"--frob={secret}", f"HF_TOKEN={secret}")  # a stop: its message too
    assert rc == 1 and doc["refused"] and secret not in repr(doc)


def test_read_prefix() -> None:
    """Where the options end: an option's argument stays with the option (`-S B=2` is no assignment of the command);
    `-u A=1` makes GNU env fail (exit 125, env.c :222-231: irev68), so the reading stops there."""
    got = read_prefix(["env", "-u", "A", "-S", "B=2", "C=3", *LAUNCH], {"A": "x", "D": "4", "C": "5"})
    assert (got.options, got.assigns, got.argv) == (["env", "-u", "A", "-S", "B=2"], {"C": "3"}, LAUNCH)
    assert got.env == {"D": "4", "C": "3", "B": "2"} and got.fixed == {"B"} and got.inline and got.stop is None
    assert got.inherits == {"D": "4", "C": "5", "B": "2"}
    assert read_prefix(["env", "-u", "A=1", "-S", "B=2", *LAUNCH], {"A=1": "x"}).stop is not None
    got = read_prefix(["env", "-", "A=1", *LAUNCH], {"D": "4"})
    assert (got.options, got.assigns, got.env) == (["env", "-"], {"A": "1"}, {"A": "1"})
    assert got.inherits == {}  # (-: env starts empty)
    assert read_prefix(LAUNCH, {"D": "4"}) == ([], {}, LAUNCH, {"D": "4"}, frozenset(), {"D": "4"}, True, None)
