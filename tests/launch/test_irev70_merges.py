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


LIBS = {n: f"/usr/lib/x86_64-linux-gnu/{n}" for n in ("libnuma.so.1", "libibverbs.so.1")}


def _probed() -> dict[str, Any]:
    return {
        "cuda_libs": {"ld_cache": "file", **LIBS, "ld_library_path": ["/usr/local/cuda/lib64"]},
        "jit": {"toolkit": "/usr/local/cuda-13.0", "nvcc_found": True},
    }


def test_a_shell_strings_own_loader_path_makes_the_probed_answers_unknown() -> None:
    # a gate that probes its box reads LD_LIBRARY_PATH through target.command_environment, which reads no shell string:
    # `bash -c "export LD_LIBRARY_PATH=/opt/old:... && python -m sglang.launch_server"` was judged on the probed
    # answers (the same shape as igap43's --facts defect, which apply_launch_loader_path fixed for saved facts only)
    from stackcheck.launch.facts_loader_path import apply_launch_env_unread

    probed = {"LD_LIBRARY_PATH": "/usr/local/cuda/lib64", "PATH": "/usr/bin"}
    facts = _probed()
    got = apply_launch_env_unread(facts, probed, {**probed, "LD_LIBRARY_PATH": "/opt/old:/usr/local/cuda/lib64"})
    assert sorted(got) == sorted(LIBS) and facts["cuda_libs"]["libnuma.so.1"] is None
    assert "probed without them" in facts["cuda_libs"]["unreadable"]["libnuma.so.1"]
    assert facts["jit"]["nvcc_found"] is True  # (no JIT variable changed)
    # a JIT variable the shell string sets: the jit section is unknown
    facts = _probed()
    apply_launch_env_unread(facts, probed, {**probed, "CUDA_HOME": "/usr/local/cuda-12.9"})
    assert set(facts["jit"]) == {"error"} and "CUDA_HOME" in facts["jit"]["error"]
    # a preloaded library
    facts = _probed()
    assert apply_launch_env_unread(facts, probed, {**probed, "LD_PRELOAD": "/opt/old/libnuma.so.1"}) == ["libnuma.so.1"]
    # the same loader path written otherwise (a trailing '/'), or no difference at all: nothing changes
    for launch in ({**probed, "LD_LIBRARY_PATH": "/usr/local/cuda/lib64/"}, dict(probed)):
        facts = _probed()
        assert apply_launch_env_unread(facts, probed, launch) == [] and facts == _probed()


def test_the_gate_of_a_probed_box_compares_the_two_readings(tmp_path: Any, monkeypatch: Any) -> None:
    # the gate's wiring: a --root gate whose launch is a shell string with its own export hands both environments on
    # (fails before: never called)
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from root_boxes import serving_root

    from stackcheck.cli import main
    from stackcheck.launch import facts_loader_path

    calls: list[tuple[dict[str, str], dict[str, str]]] = []

    def record(facts: Any, probed: Any, launch: Any, cwd: Any = None) -> list[str]:
        calls.append((dict(probed), dict(launch)))
        return []

    monkeypatch.setattr(facts_loader_path, "apply_launch_env_unread", record, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = serving_root(tmp_path / "root")
    line = "export LD_LIBRARY_PATH=/opt/x; python3 -m sglang.launch_server --model-path /nonexistent"
    main(["gate", "--root", str(root), "--assume-gpu", "H100", "--assume-driver", "580", "--format", "json", "--",
          "bash", "-c", line])  # fmt: skip
    assert calls and calls[0][1]["LD_LIBRARY_PATH"] == "/opt/x" and calls[0][0].get("LD_LIBRARY_PATH") != "/opt/x"
    calls.clear()
    main(["gate", "--root", str(root), "--assume-gpu", "H100", "--assume-driver", "580", "--format", "json", "--",
          "env", "LD_LIBRARY_PATH=/opt/x", "python3", "-m", "sglang.launch_server"])  # fmt: skip
    assert not calls  # (an env prefix: the probes read it too)


def test_a_launch_run_as_a_systemd_service_is_the_policys() -> None:
    # systemd-run (a transient service: a clean environment of the service manager's) and run0 (a fresh, isolated
    # service) were read as plain launchers: the launch judged with the caller's environment (fails before: no
    # env_policy); `systemd-run --scope` runs it itself with the caller's environment
    for line, policy in (
        (["systemd-run", "--wait", "-p", "User=svc", *LAUNCH], ["systemd-run"]),
        (["/usr/bin/run0", "-u", "svc", *LAUNCH], ["run0"]),
        (["nohup", "run0", *LAUNCH], ["run0"]),
        (["systemd-run", "--scope", *LAUNCH], None),
        (["run0", "env", "-i", "A=1", *LAUNCH], None),
    ):
        trace: dict[str, Any] = {}
        assert gate.find_launch(line, MAPPING, {"A": "2"}, trace)[0] == "launch-server"
        assert trace.get("env_policy") == policy, (line, trace)
    d = gate.derive(["run0", *LAUNCH, "--tp", "2"], MAPPING, {})
    assert [p for p in d.problems if p.subject == "env" and p.status == "unknown" and "run0" in p.message]


def test_an_assignment_timeout_runs_is_refused() -> None:
    # `timeout 3600 CUDA_VISIBLE_DEVICES=0 python ...`: timeout execvp's the word after its DURATION (coreutils 9.1
    # run here: exit 127). Fails before: no problem
    for line in (
        ["timeout", "3600", "CUDA_VISIBLE_DEVICES=0", *LAUNCH],
        ["timeout", "-k", "5", "-s", "TERM", "--foreground", "3600", "CUDA_VISIBLE_DEVICES=0", *LAUNCH],
        ["timeout", "--kill-after=5", "--", "3600", "CUDA_VISIBLE_DEVICES=0", *LAUNCH],
        ["nohup", "timeout", "1h", "CUDA_VISIBLE_DEVICES=0", *LAUNCH],
    ):
        d = gate.derive(line, MAPPING, {})
        got = [p for p in d.problems if p.subject == "CUDA_VISIBLE_DEVICES="]
        assert got and got[0].status == "blocked" and "`timeout` runs" in got[0].message, (line, d.problems)
    for line in (["timeout", "3600", "env", "A=1", *LAUNCH], ["timeout", "-s", "A=1", "5", *LAUNCH]):
        d = gate.derive(line, MAPPING, {})
        assert not [p for p in d.problems if p.subject.endswith("=")], (line, d.problems)


def test_a_jit_section_that_is_an_error_alone_has_no_key_absent() -> None:
    # irobust4's _launch_jit_env (gate --facts with the launch's own JIT variables) and a failed jit probe leave
    # {"error": why}: a key read as `exists` was Missing, so "absent" (False) and `not exists jit.nccl_so_path` held,
    # as though SGLANG_NCCL_SO_PATH were unset, where the launch sets it (fails before: False, not None)
    from stackcheck.knowledge.loader import load
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import evaluate_predicate

    ctx = Context(facts={"jit": {"error": "the launch sets SGLANG_NCCL_SO_PATH itself"}}, manifests=load(), launch={})
    got = evaluate_predicate({"fact": "jit.nccl_so_path", "op": "exists"}, ctx, None)
    assert got.value is None and "SGLANG_NCCL_SO_PATH" in str(got.missing), got
    assert evaluate_predicate({"not": {"fact": "jit.nccl_so_path", "op": "exists"}}, ctx, None).value is None
    # a section read without that key (saved before the probe recorded it) stays absent, as before
    ctx = Context(facts={"jit": {"toolkit": "/usr/local/cuda"}}, manifests=load(), launch={})
    assert evaluate_predicate({"fact": "jit.nccl_so_path", "op": "exists"}, ctx, None).value is False
