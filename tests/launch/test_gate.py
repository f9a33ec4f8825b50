"""stackcheck gate: deriving features from a server command line (launch.json), the decision policy, and the
CLI end to end: refusal with the SGLang table reason, exec with argv unchanged in the same process."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from cli_process import clean_env, run_stackcheck

from stackcheck.errors import UsageError
from stackcheck.knowledge.loader import load
from stackcheck.launch import gate

if TYPE_CHECKING:
    from stackcheck.knowledge.types import Launch

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "tests" / "cases"
SM120 = CASES / "writeup-after" / "facts.json"
H200 = CASES / "h200-newest" / "facts.json"
LLAMA3 = str(Path(__file__).resolve().parents[1] / "data" / "models" / "llama3-8b")  # a model the gate reads
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
PRINT_ARGV = "import sys,os,json; print(json.dumps([os.getpid()] + sys.argv[1:]))"


@pytest.fixture(scope="module")
def mapping() -> Launch:
    return load([], env={}).launch


def run_gate(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_stackcheck("gate", *args, env=env or None, timeout=60)


def features(d: gate.Derived) -> dict[str, str]:
    return {r.feature: r.kind for r in d.required}


# ---- deriving ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tp_args",
    [["--tp", "8"], ["--tp-size", "8"], ["--tp=8"], ["--tp-size=8"], ["--tensor-parallel-size", "8"]],
)
def test_tp_spellings(mapping: dict[str, Any], tp_args: list[str]) -> None:
    d = gate.derive([*LAUNCH, *tp_args], mapping, {})
    assert d.entrypoint == "launch-server"
    assert d.launch["tp"] == 8
    assert features(d)["custom-allreduce"] == "default"


def test_tp_defaults_to_one_and_custom_allreduce_is_not_needed(mapping: dict[str, Any]) -> None:
    d = gate.derive(LAUNCH, mapping, {})
    assert d.launch["tp"] == 1
    assert "custom-allreduce" not in features(d)
    assert any(o.startswith("custom-allreduce: off") for o in d.off)
    # FlashInfer is SGLang's default sampler and, without --attention-backend, its default attention backend
    assert features(d) == {"cuda-graph": "default", "deepgemm": "default-warn", "attention-flashinfer": "default"}


def test_flashinfer_is_needed_as_the_default_sampler_or_attention_backend(mapping: dict[str, Any]) -> None:
    fa3 = gate.derive([*LAUNCH, "--attention-backend", "fa3"], mapping, {})
    assert features(fa3)["attention-flashinfer"] == "default"  # still the sampler
    pytorch = gate.derive([*LAUNCH, "--attention-backend", "fa3", "--sampling-backend", "pytorch"], mapping, {})
    assert "attention-flashinfer" not in features(pytorch)
    assert any(o.startswith("attention-flashinfer: off (--sampling-backend = pytorch)") for o in pytorch.off)
    only_sampler_off = gate.derive([*LAUNCH, "--sampling-backend", "pytorch"], mapping, {})
    assert features(only_sampler_off)["attention-flashinfer"] == "default"  # the attention default is flashinfer
    assert not [o for o in only_sampler_off.off if o.startswith("attention-flashinfer")]
    explicit = gate.derive([*LAUNCH, "--sampling-backend", "flashinfer"], mapping, {})
    assert features(explicit)["attention-flashinfer"] == "explicit"


@pytest.mark.parametrize(
    ("args", "fact", "value", "feature"),
    [
        (["--attention-backend", "fa3"], "attention_backend", "fa3", "attention-fa3"),
        (["--attention-backend=fa3"], "attention_backend", "fa3", "attention-fa3"),
        (["--prefill-attention-backend", "fa4"], "prefill_attention_backend", "fa4", "attention-fa4"),
        (["--decode-attention-backend=trtllm_mha"], "decode_attention_backend", "trtllm_mha", "attention-trtllm-mha"),
        (["--speculative-algorithm", "EAGLE3"], "speculative_algorithm", "EAGLE3", "eagle3"),
        (["--quantization", "modelopt_fp4"], "quantization", "modelopt_fp4", "nvfp4"),
        (["--quantization", "mxfp8"], "quantization", "mxfp8", "mxfp8"),
        (["--quantization", "mxfp4"], "quantization", "mxfp4", "mxfp4-moe"),
        (["--quantization", "fp8"], "quantization", "fp8", "fp8-block-gemm"),
        (["--fp8-gemm-backend", "auto"], "fp8_gemm_backend", "auto", "fp8-block-gemm"),
    ],
)
def test_value_flags(mapping: dict[str, Any], args: list[str], fact: str, value: str, feature: str) -> None:
    d = gate.derive(["sglang", "serve", "--model-path", "m", *args], mapping, {})
    assert d.entrypoint == "sglang-serve"
    assert d.launch[fact] == value
    assert features(d)[feature] == "explicit"
    assert not [p for p in d.problems if p.status != "note"]  # unlisted flags are notes only


@pytest.mark.parametrize(
    ("flag", "feature"),
    [
        ("--enable-torch-symm-mem", "torch-symm-mem"),
        ("--enable-flashinfer-allreduce-fusion", "flashinfer-allreduce-fusion"),
        ("--enable-nccl-nvls", "nccl-nvls"),
    ],
)
def test_bool_flags(mapping: dict[str, Any], flag: str, feature: str) -> None:
    assert features(gate.derive([*LAUNCH, flag], mapping, {}))[feature] == "explicit"


def scoped(d: gate.Derived) -> dict[str, dict[str, str | None] | None]:
    """The features required, each with the rules it is needed for (None: the whole feature)."""
    return {r.feature: r.rules for r in d.required if not r.check}


def test_conditional_values(mapping: dict[str, Any]) -> None:
    # mxfp4 needs the whole mxfp4-moe only while the MoE runner is auto; fp8 the whole fp8-block-gemm only while
    # DeepGEMM can be picked; otherwise each needs only its loader admission rule (igap2: compute capability 8.0)
    d = gate.derive([*LAUNCH, "--quantization", "mxfp4", "--moe-runner-backend", "triton_kernel"], mapping, {})
    assert scoped(d)["mxfp4-moe"] == {"mxfp4-min-capability": "explicit"}
    d = gate.derive([*LAUNCH, "--quantization", "mxfp4"], mapping, {})
    assert scoped(d)["mxfp4-moe"] is None
    d = gate.derive([*LAUNCH, "--quantization", "fp8"], mapping, {"SGLANG_ENABLE_JIT_DEEPGEMM": "0"})
    # (irev77: DeepGEMM off, auto runs FlashInfer's trtllm-gen GEMM on major 10: its cubins' rule)
    assert scoped(d)["fp8-block-gemm"] == {"fp8-min-capability": "explicit", "gemm-cubins-auto": "explicit"}
    assert "deepgemm" not in features(d)
    d = gate.derive([*LAUNCH, "--quantization", "fp8", "--fp8-gemm-backend", "cutlass"], mapping, {})
    assert scoped(d)["fp8-block-gemm"] == {"fp8-min-capability": "explicit"}
    d = gate.derive([*LAUNCH, "--quantization", "fp8"], mapping, {})
    assert scoped(d)["fp8-block-gemm"] is None
    d = gate.derive([*LAUNCH, "--fp8-gemm-backend", "deep_gemm"], mapping, {"SGLANG_ENABLE_JIT_DEEPGEMM": "false"})
    assert features(d)["deepgemm"] == "explicit"


def test_defaults_turned_off(mapping: dict[str, Any]) -> None:
    d = gate.derive(
        [*LAUNCH, "--tp", "8", "--disable-custom-all-reduce", "--disable-cuda-graph"],
        mapping,
        {"SGLANG_ENABLE_JIT_DEEPGEMM": "No"},
    )
    assert features(d) == {"attention-flashinfer": "default"}  # the sampler and the attention default
    assert sorted(o.split(":")[0] for o in d.off) == ["cuda-graph", "custom-allreduce", "deepgemm"]


def test_env_prefix_and_python_options(mapping: dict[str, Any]) -> None:
    cmd = [
        "env",
        "SGLANG_ENABLE_JIT_DEEPGEMM=0",
        "python3.12",
        "-u",
        "-X",
        "dev",
        "-m",
        "sglang.launch_server",
        "--tp=2",
    ]
    d = gate.derive(cmd, mapping, {"SGLANG_ENABLE_JIT_DEEPGEMM": "1"})
    assert d.entrypoint == "launch-server"
    assert d.env["SGLANG_ENABLE_JIT_DEEPGEMM"] is False
    assert d.launch["tp"] == 2
    assert "deepgemm" not in features(d)


def test_wrapper_script_with_sglang_flags_and_plain_commands(mapping: dict[str, Any]) -> None:
    d = gate.derive(["./serve.sh", "--tp", "4", "--enable-torch-symm-mem"], mapping, {})
    assert d.entrypoint == "wrapper"
    assert "torch-symm-mem" in features(d)
    d = gate.derive(["/bin/true"], mapping, {})
    assert d.entrypoint is None and d.required == []
    d = gate.derive(["python3", "-c", "print(1)", "a b"], mapping, {}, require=["cuda-graph"])
    assert features(d) == {"cuda-graph": "explicit"}


def test_unknown_values_and_ambiguous_flags_are_problems(mapping: dict[str, Any]) -> None:
    d = gate.derive([*LAUNCH, "--attention-backend", "warp_drive", "--enable"], mapping, {})
    subjects = {p.subject: p for p in d.problems}
    assert subjects["--attention-backend=warp_drive"].status == "unknown"
    assert "not a value the manifests know" in subjects["--attention-backend=warp_drive"].message
    assert subjects["--enable"].status == "unknown"
    d = gate.derive(LAUNCH, mapping, {"SGLANG_ENABLE_JIT_DEEPGEMM": "maybe"})
    real = [p for p in d.problems if p.status != "note"]
    assert real[0].subject == "SGLANG_ENABLE_JIT_DEEPGEMM=maybe"


def test_unlisted_flags_are_one_note_and_a_config_file_is_unknown(mapping: dict[str, Any]) -> None:
    d = gate.derive([*LAUNCH, "--enable-nosuch-flag", "--log-level", "info"], mapping, {})
    notes = [p for p in d.problems if p.status == "note"]
    assert len(notes) == 1 and "--enable-nosuch-flag" in notes[0].message and "--log-level" in notes[0].message
    d = gate.derive([*LAUNCH, "--config", "server.yaml"], mapping, {})
    assert [p.status for p in d.problems if p.subject == "--config"] == ["unknown"]


def test_default_deepgemm_only_warns_but_fp8_quantization_requires_fp8_block_gemm(mapping: dict[str, Any]) -> None:
    assert features(gate.derive(LAUNCH, mapping, {}))["deepgemm"] == "default-warn"
    d = gate.derive([*LAUNCH, "--quantization", "fp8"], mapping, {})
    assert features(d).get("fp8-block-gemm") == "explicit"


def test_abbreviation_of_one_flag(mapping: dict[str, Any]) -> None:
    d = gate.derive([*LAUNCH, "--enable-torch-symm"], mapping, {})
    assert "torch-symm-mem" in features(d)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--tp"], "needs a value"),
        (["--tp", "--enable-torch-symm-mem"], "needs a value"),
        (["--tp", "eight"], "expected an integer"),
        (["--tp=0"], "positive"),
        (["--enable-torch-symm-mem=1"], "takes no value"),
    ],
)
def test_malformed_server_flags(mapping: dict[str, Any], args: list[str], match: str) -> None:
    with pytest.raises(UsageError, match=match):
        gate.derive([*LAUNCH, *args], mapping, {})


def test_missing_command(mapping: dict[str, Any]) -> None:
    with pytest.raises(UsageError, match="missing command"):
        gate.derive([], mapping, {})
    with pytest.raises(UsageError, match="missing command"):
        gate.derive(["env", "A=1"], mapping, {})


# ---- the flag mapping per release ---------------------------------------------------------------------

EXAMPLE_MAPPING: dict[str, Any] = {
    "entrypoints": [{"id": "launch-server", "python_module": "sglang.launch_server", "source": "example"}],
    "options": [
        {
            "flag": "--enable-torch-symm-mem",
            "value": "bool",
            "requires": ["torch-symm-mem"],
            "releases": [
                {"versions": "<0.5.3", "present": False, "source": "example"},
                {"versions": ">=0.5.3", "present": True, "source": "example"},
            ],
            "source": "example",
        }
    ],
    "env": [],
    "defaults": [],
}


@pytest.mark.parametrize(
    ("version", "expected"),
    [("0.5.1", "blocked"), ("0.5.2", "blocked"), ("0.5.3", None), ("0.5.9+local", None), (None, None)],
)
def test_flag_exists_per_release(version: str | None, expected: str | None) -> None:
    d = gate.derive([*LAUNCH, "--enable-torch-symm-mem"], EXAMPLE_MAPPING, {})
    assert features(d) == {"torch-symm-mem": "explicit"}
    problems = gate.release_problems(d, EXAMPLE_MAPPING, version)
    if expected is None:
        assert problems == []
    else:
        assert [p.status for p in problems] == [expected]
        assert "unrecognized arguments" in problems[0].message
        assert problems[0].effect == "crash"


def test_flag_release_not_covered_is_unknown(mapping: dict[str, Any]) -> None:
    import copy

    d = gate.derive([*LAUNCH, "--fp8-gemm-backend", "cutlass"], mapping, {})
    assert gate.release_problems(d, mapping, "0.5.7") == []  # present from 0.5.7 (read from the wheels)
    gap = copy.deepcopy(mapping)  # a release no entry covers
    for option in gap["options"]:
        if option["flag"] == "--fp8-gemm-backend":
            option["releases"] = [r for r in option["releases"] if r["present"] is False]
    [p] = gate.release_problems(d, gap, "0.5.7")
    assert p.status == "unknown"
    assert gate.release_problems(d, mapping, "0.5.9") == []


def test_shipped_mapping_is_valid_and_consistent_with_features(mapping: dict[str, Any]) -> None:
    from stackcheck.knowledge.validate import validate_documents

    m = load([], env={})
    assert validate_documents({"launch.json": ("manifests/launch.json", m.launch)}, partial=True) == []
    feature_ids = {f["id"] for f in m.features}
    referenced: set[str] = set()
    for o in mapping["options"]:
        for req in [*o.get("requires", []), *[r for v in (o.get("choices") or {}).values() for r in v]]:
            referenced.add(req if isinstance(req, str) else req["feature"])
    referenced |= {d["feature"] for d in mapping["defaults"]}
    assert referenced <= feature_ids
    # every feature turned on by flags in features.json can be derived from those flags; mxfp4-moe
    # (--moe-runner-backend auto, the default) needs an MXFP4 model, which the command shows only
    # through --quantization mxfp4 (a checkpoint's own quantization is invisible: --require mxfp4-moe)
    context = {"mxfp4-moe": ["--quantization", "mxfp4"]}
    # a feature the gate judges with a preflight check on the launch's own values instead: mooncake-runtime-libs is
    # check transfer-package for the launch's --disaggregation-transfer-backend (a nixl launch must not be refused
    # for a Mooncake that does not load), read from the same preflight.json entry (Context._transfer_fact)
    # (igap50's nixl-runtime-libs likewise: check transfer-package for a nixl launch)
    by_preflight = {"mooncake-runtime-libs": "mooncake", "nixl-runtime-libs": "nixl"}
    for f in m.features:
        flags = [*f["enable"]["flags"], *context.get(f["id"], [])]
        if f["id"] in by_preflight:
            backend = by_preflight[f["id"]]
            assert any(e.get("transfer_backend") == backend for e in m.preflight["transfer_packages"]["entries"])
            assert f["id"] not in features(gate.derive([*LAUNCH, *flags], mapping, {}))
            continue
        if flags:
            d = gate.derive([*LAUNCH, *flags], mapping, {})
            assert f["id"] in features(d), f["id"]
        if f["enable"].get("default_on"):
            assert f["id"] in {d["feature"] for d in mapping["defaults"]}


# ---- the decision policy -------------------------------------------------------------------------------


def _verdict(fid: str, status: str, effect: str | None = None) -> dict[str, Any]:
    return {"id": fid, "status": status, "effect": effect, "reasons": [{"result": "fail", "message": "x"}]}


SPECS = [
    {"id": "deepgemm", "rules": [{"effect": "crash"}, {"effect": "disabled"}]},
    {"id": "custom-allreduce", "rules": [{"effect": "disabled"}]},
    {"id": "eagle3", "rules": [{"effect": "degraded"}]},
]


@pytest.mark.parametrize(
    ("kind", "status", "effect", "allow_unknown", "outcome"),
    [
        ("explicit", "ok", None, False, "pass"),
        ("explicit", "blocked", "degraded", False, "refuse"),
        ("explicit", "blocked", "crash", False, "refuse"),
        ("explicit", "unknown", None, False, "refuse"),
        ("explicit", "unknown", None, True, "warn"),
        ("explicit", "not-applicable", None, True, "refuse"),
        ("default", "blocked", "crash", True, "refuse"),
        ("default", "blocked", "disabled", False, "warn"),
        ("default", "blocked", "degraded", False, "warn"),
        ("default", "not-applicable", None, False, "pass"),
    ],
)
def test_policy(kind: str, status: str, effect: str | None, allow_unknown: bool, outcome: str) -> None:
    d = gate.Derived(command=[], entrypoint=None, sglang_args=[], required=[gate.Requirement("eagle3", kind, "t")])
    dec = gate.decide(d, [_verdict("eagle3", status, effect)], SPECS, allow_unknown)
    got = "refuse" if dec.blocking else "warn" if dec.warnings else "pass"
    assert got == outcome
    assert dec.allow is (outcome != "refuse")


def test_policy_default_unknown_depends_on_worst_rule() -> None:
    req = [gate.Requirement("deepgemm", "default", "d"), gate.Requirement("custom-allreduce", "default", "d")]
    d = gate.Derived(command=[], entrypoint=None, sglang_args=[], required=req)
    verdicts = [_verdict("deepgemm", "unknown"), _verdict("custom-allreduce", "unknown")]
    dec = gate.decide(d, verdicts, SPECS, allow_unknown=False)
    assert [b.feature for b in dec.blocking] == ["deepgemm"]
    assert [b.feature for b in dec.warnings] == ["custom-allreduce"]
    assert gate.decide(d, verdicts, SPECS, allow_unknown=True).allow


def test_policy_default_unknown_follows_the_unknown_rules_effect() -> None:
    # a feature with a crash rule and a disabling one: which rule is unknown decides, not the worst rule
    specs = [
        {"id": "custom-allreduce", "rules": [{"id": "p2p", "effect": "disabled"}, {"id": "old", "effect": "crash"}]}
    ]
    d = gate.Derived(
        command=[], entrypoint=None, sglang_args=[], required=[gate.Requirement("custom-allreduce", "default", "d")]
    )

    def verdict(*reasons: dict[str, Any]) -> list[dict[str, Any]]:
        return [{"id": "custom-allreduce", "status": "unknown", "effect": None, "reasons": list(reasons)}]

    only_off = verdict({"rule": "p2p", "result": "unknown", "effect": "disabled"})
    dec = gate.decide(d, only_off, specs, allow_unknown=False)
    assert dec.allow and [b.feature for b in dec.warnings] == ["custom-allreduce"]
    crash = verdict(
        {"rule": "p2p", "result": "unknown", "effect": "disabled"},
        {"rule": "old", "result": "unknown", "effect": "crash"},
    )
    assert [b.feature for b in gate.decide(d, crash, specs, allow_unknown=False).blocking] == ["custom-allreduce"]
    needs = verdict({"rule": "needs", "result": "unknown", "message": "sglang: not known"})  # stands for every rule
    assert [b.feature for b in gate.decide(d, needs, specs, allow_unknown=False).blocking] == ["custom-allreduce"]


# ---- the CLI end to end --------------------------------------------------------------------------------


def test_sm120_symm_mem_is_refused_with_the_table_reason() -> None:
    r = run_gate("--facts", str(SM120), "--", *LAUNCH, "--tp", "8", "--enable-torch-symm-mem")
    assert r.returncode == 1, r.stderr
    refuse = [line for line in r.stdout.splitlines() if line.startswith("REFUSE torch-symm-mem")]
    assert refuse, r.stdout
    assert "TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES" in refuse[0]
    assert "KeyError" in refuse[0]
    assert "observed 12" in refuse[0]
    assert "(sglang-0.5.9:all_reduce_utils.py +2)" in refuse[0]  # the source by id (--format json: title, url)
    assert r.stdout.rstrip().endswith("decision: refuse")


def test_sm120_json_decision() -> None:
    r = run_gate("--facts", str(SM120), "--format", "json", "--", *LAUNCH, "--tp=8", "--enable-torch-symm-mem")
    assert r.returncode == 1
    doc = json.loads(r.stdout)
    assert doc["decision"] == "refuse"
    assert doc["command"] == [*LAUNCH, "--tp=8", "--enable-torch-symm-mem"]
    assert doc["derived"]["launch"]["tp"] == 8
    symm = next(b for b in doc["reasons"] if b["feature"] == "torch-symm-mem")
    assert symm["status"] == "blocked" and symm["effect"] == "crash"
    assert any("KeyError" in x["message"] for x in symm["reasons"])
    assert {f["feature"] for f in doc["features"]} >= {"torch-symm-mem", "custom-allreduce", "cuda-graph"}
    # custom all-reduce is a default feature that is disabled on this PCIe box: a warning, not a refusal
    assert any(w["feature"] == "custom-allreduce" for w in doc["warnings"])


def test_h200_dry_run_allows_and_runs_nothing(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    r = run_gate("--facts", str(H200), "--dry-run", "--", "touch", str(marker), "--tp", "8", "--enable-torch-symm-mem",
                 "--model-path", LLAMA3)  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr
    assert "decision: allow (dry run" in r.stdout
    assert not marker.exists()


def test_h200_execs_with_argv_unchanged_in_the_same_process() -> None:
    args = ["a b", '"q"', "it's", "--", "-x", "", "$HOME", "*"]
    cmd = [sys.executable, "-m", "stackcheck", "gate", "--facts", str(H200), "--", "python3", "-c", PRINT_ARGV, *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(), cwd=ROOT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    printed = json.loads(out)
    assert printed[1:] == args
    assert printed[0] == proc.pid  # exec: the gate's process became the command


def test_h200_execs_the_real_sglang_command_line(tmp_path: Path) -> None:
    fake = tmp_path / "sglang"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "launch_server.py").write_text(PRINT_ARGV + "\n")
    argv = ["python3", "-m", "sglang.launch_server", "--model-path", LLAMA3, "--tp", "8", "--enable-torch-symm-mem"]
    cmd = [sys.executable, "-m", "stackcheck", "gate", "--facts", str(H200), "--", *argv]
    env = clean_env(PYTHONPATH=str(tmp_path))
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    printed = json.loads(out)
    assert printed[0] == proc.pid
    assert printed[1:] == argv[3:]


def test_exit_status_is_the_commands() -> None:
    r = run_gate(
        "--facts", str(H200), "--", "python3", "-c", "import sys; sys.exit(7)", "--tp", "8", "--model-path", LLAMA3
    )
    assert r.returncode == 7
    assert r.stdout == ""


def test_command_not_found() -> None:
    r = run_gate("--facts", str(H200), "--", "/nonexistent/stackcheck-test-server")
    assert r.returncode == 127
    assert "command not found" in r.stderr


def _facts_with_sglang(tmp_path: Path, version: str) -> Path:
    doc = json.loads(H200.read_text())
    section = doc.get("facts", doc)
    section["packages"]["sglang"]["version"] = version
    path = tmp_path / f"facts-{version}.json"
    path.write_text(json.dumps(doc))
    return path


def test_allow_unknown(tmp_path: Path) -> None:
    # an SGLang newer than every release the manifests know makes torch-symm-mem unknown
    facts = str(_facts_with_sglang(tmp_path, "9.9.0"))
    r = run_gate("--facts", facts, "--require", "torch-symm-mem")
    assert r.returncode == 1
    assert "REFUSE torch-symm-mem: unknown" in r.stdout
    assert "newer than the manifests" in r.stdout
    r = run_gate("--facts", facts, "--require", "torch-symm-mem", "--allow-unknown")
    assert r.returncode == 0, r.stdout
    assert "warning: torch-symm-mem: unknown" in r.stdout


def test_require_only() -> None:
    assert run_gate("--facts", str(H200), "--require", "torch-symm-mem,cuda-graph").returncode == 0
    r = run_gate("--facts", str(SM120), "--require", "torch-symm-mem")
    assert r.returncode == 1
    assert "KeyError" in r.stdout


def test_unknown_flag_value_fails_closed() -> None:
    base = ("--facts", str(H200), "--dry-run")
    r = run_gate(*base, "--", *LAUNCH, "--attention-backend", "warp_drive")
    assert r.returncode == 1
    assert "REFUSE --attention-backend=warp_drive [command]: unknown" in r.stdout
    r = run_gate(*base, "--allow-unknown", "--", *LAUNCH, "--attention-backend", "warp_drive")
    assert r.returncode == 0


def test_flag_missing_from_the_installed_release(tmp_path: Path) -> None:
    path = _facts_with_sglang(tmp_path, "0.5.2")
    r = run_gate("--facts", str(path), "--", *LAUNCH, "--tp", "8", "--enable-torch-symm-mem")
    assert r.returncode == 1
    assert "SGLang 0.5.2 has no --enable-torch-symm-mem" in r.stdout


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (["--facts", str(H200), "--"], "missing command after --"),
        (["--facts", str(H200)], "nothing to gate"),
        (["--facts", str(H200), "--require", "warp-drive"], "--require 'warp-drive': no such feature"),
        (["--facts", str(H200), "--", *LAUNCH, "--tp"], "needs a value"),
    ],
)
def test_usage_errors_exit_2(args: list[str], match: str) -> None:
    r = run_gate(*args)
    assert r.returncode == 2
    assert match in r.stderr


def test_internal_error_refuses_and_never_execs(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    from stackcheck import cli

    calls: list[Any] = []

    def boom(*a: Any, **k: Any) -> Any:
        raise RuntimeError("bug")

    monkeypatch.setattr(gate, "derive", boom)
    monkeypatch.setattr(os, "execvp", lambda *a: calls.append(a))
    rc = cli.main(["gate", "--facts", str(H200), "--", "/bin/true"])
    assert rc == 4
    assert calls == []
    assert "refused" in capsys.readouterr().err


# ---- examples ------------------------------------------------------------------------------------------

EXAMPLES = ROOT / "examples" / "gate"


@pytest.mark.parametrize("script", ["slurm-prolog.sh", "shell.sh"])
def test_example_scripts_parse(script: str) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash not installed")
    r = subprocess.run([bash, "-n", str(EXAMPLES / script)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr


def test_k8s_example_parses() -> None:
    yaml = pytest.importorskip("yaml")
    doc = yaml.safe_load((EXAMPLES / "k8s-pod.yaml").read_text())
    command = doc["spec"]["containers"][0]["command"]
    assert command[:3] == ["stackcheck", "gate", "--"]
    d = gate.derive(command[3:], load([], env={}).launch, {})
    assert d.entrypoint == "launch-server" and d.launch["tp"] == 8


def test_flashinfer_default_sampler_refuses_an_sm12x_box_whose_jit_toolkit_is_too_old() -> None:
    facts = Path(__file__).parent.parent / "cases" / "jit-distro-nvcc-sm120" / "facts.json"
    r = run_gate("--facts", str(facts), "--dry-run", "--", "python", "-m", "sglang.launch_server", "--model-path", "M")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "REFUSE attention-flashinfer [default]" in r.stdout + r.stderr
    assert "11.5" in r.stdout + r.stderr
    ok = run_gate("--facts", str(facts), "--dry-run", "--", "python", "-m", "sglang.launch_server",
                  "--attention-backend", "triton", "--sampling-backend", "pytorch", "--model-path", "M")  # fmt: skip
    assert "REFUSE attention-flashinfer" not in ok.stdout + ok.stderr


@pytest.mark.skipif(not Path("/proc/self/status").is_file(), reason="reads the server's /proc/self/status")
def test_the_server_gets_the_signals_python_ignores_at_their_default() -> None:
    """The interpreter ignores SIGPIPE and SIGXFSZ at its start, and an ignored disposition survives exec: the server
    the gate replaces itself with gets them at their default, as from a shell (a wrapper script's `cmd | head` then
    ends cmd, and a server over its file size limit is stopped, not handed EFBIG)."""
    r = run_gate("--facts", str(H200), "--", "sh", "-c", "grep -E '^SigIgn' /proc/self/status", "--model-path", LLAMA3)
    assert r.returncode == 0, r.stderr
    ignored = int(r.stdout.split()[1], 16)
    assert not ignored & (1 << (13 - 1)), r.stdout  # SIGPIPE
    assert not ignored & (1 << (25 - 1)), r.stdout  # SIGXFSZ
