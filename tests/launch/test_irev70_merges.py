"""irev70: where the fourteenth session's merges met (fe036d1a..58bb118c), each defect with the test that found it."""

from __future__ import annotations

from typing import Any

from stackcheck.launch import gate

MAPPING = {"entrypoints": [{"id": "launch-server", "python_module": "sglang.launch_server"}]}
LAUNCH = ["python3", "-m", "sglang.launch_server"]


def test_an_env_run_by_env_i_behind_sudo_keeps_its_assignments() -> None:
    # `sudo env -i env A=1 python ...`: env -i runs env, which sets A=1; the server starts with {A: 1}. Before, the
    # cleared reading took only the first env's words (read_env), and the launch was judged with {}: an
    # LMCACHE_MP_HOST= or SGLANG_* the server sees was not seen (fails before: {} != {"A": "1"})
    for line in (
        ["sudo", "env", "-i", "env", "A=1", *LAUNCH],
        ["sudo", "-u", "svc", "env", "-i", "env", "A=1", *LAUNCH],
    ):
        trace: dict[str, Any] = {}
        entry, _, env = gate.find_launch(line, MAPPING, {"B": "2"}, trace)
        assert entry == "launch-server" and env == {"A": "1"}, (line, env)
        assert "env_policy" not in trace
    # the inner env's `-S` string reads ${NAME} from the cleared environment, which the line gives in full
    trace = {}
    env = gate.find_launch(["sudo", "env", "-i", "A=1", "env", "-S", "B=${A}", *LAUNCH], MAPPING, {}, trace)[2]
    assert env == {"A": "1", "B": "1"} and "env_policy" not in trace, env
    # an env that clears nothing behind sudo stays the policy's (fail closed)
    trace = {}
    gate.find_launch(["sudo", "env", "A=1", "env", "-i", "B=2", *LAUNCH], MAPPING, {}, trace)
    assert trace.get("env_policy") == ["sudo"]


def test_derive_sees_the_variable_set_behind_sudo_env_i_env() -> None:
    from stackcheck.knowledge.loader import load

    line = ["sudo", "env", "-i", "env", "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1", *LAUNCH, "--model-path", "m"]
    d = gate.derive(line, load().launch, {})
    assert d.launch.get("pcie_ipc_allreduce") is True, d.launch
    assert not [p for p in d.problems if "policy" in p.message]


def test_an_assignment_nohup_runs_is_refused() -> None:
    # `nohup CUDA_VISIBLE_DEVICES=0 python -m sglang.launch_server ...`: nohup execvp's the word (no shell reads it):
    # 'nohup: failed to run command', exit 127 (coreutils 9.1 run here). ifc49 refused the first word only: fails
    # before (no problem for CUDA_VISIBLE_DEVICES=, the launch after it judged)
    for line in (
        ["nohup", "CUDA_VISIBLE_DEVICES=0", *LAUNCH],
        ["nohup", "--", "CUDA_VISIBLE_DEVICES=0", *LAUNCH],
        ["env", "A=1", "nohup", "CUDA_VISIBLE_DEVICES=0", *LAUNCH],
        ["nohup", "nohup", "CUDA_VISIBLE_DEVICES=0", *LAUNCH],
    ):
        d = gate.derive(line, MAPPING, {})
        got = [p for p in d.problems if p.subject == "CUDA_VISIBLE_DEVICES="]
        assert got and got[0].status == "blocked" and "`nohup` runs" in got[0].message, (line, d.problems)
    # an assignment env reads, behind nohup or before it, is no program
    for line in (["nohup", "env", "A=1", *LAUNCH], ["env", "A=1", "nohup", *LAUNCH], ["nohup", *LAUNCH, "--x", "A=1"]):
        d = gate.derive(line, MAPPING, {})
        assert not [p for p in d.problems if p.subject.endswith("=")], (line, d.problems)
