"""`stackcheck recommend`: the case folders under tests/recommend/ (each recommended launch also passes
`stackcheck gate --dry-run` on the facts the plan leaves), the seed box's requirements, the diff against a
given launch, the shell format, the gate's advice, the knowledge file's own consistency."""

from __future__ import annotations

import importlib.util
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from recommend_cli import clean_recommend_env, recommend_json, run  # noqa: F401 (the autouse fixture)

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = ROOT / "tests" / "recommend"
SEED_BEFORE = CASES / "seed-before" / "facts.json"
SEED_AFTER = CASES / "seed-after" / "facts.json"
H200 = CASES / "h200-nvlink" / "facts.json"

_spec = importlib.util.spec_from_file_location("recommend_cases", CASES / "update_expected.py")
assert _spec is not None and _spec.loader is not None
cases_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(cases_mod)


def gate_allows(facts: Path, command: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Any:
    """`stackcheck gate --dry-run` on these facts, with the launch's environment set: the decision."""
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    rc, text = run("gate", "--facts", str(facts), "--dry-run", "--format", "json", "--", *command)
    for name in env:
        monkeypatch.delenv(name, raising=False)
    doc = json.loads(text)
    return rc, doc


# ---- the case folders --------------------------------------------------------------------------------------


@pytest.mark.parametrize("case", cases_mod.case_dirs(), ids=lambda p: p.name)
def test_case(case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    after = tmp_path / "after.json"
    rc, doc = cases_mod.run_recommend(cases_mod.cli_args(case, after))
    assert rc == 0
    expected = json.loads((case / "expected.json").read_text())
    assert cases_mod.observe(doc) == expected, "run tests/recommend/update_expected.py to see the difference"
    # the recommended launch passes the gate on the box as the plan leaves it, for a text model read from its
    # config.json (a model the gate cannot read counts as multimodal: on SGLang 0.5.6-0.5.9 with torch 2.9.1
    # that needs cuDNN >= 9.15, which these facts do not record)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}))
    command = [str(model) if a == "MODEL" else a for a in doc["command"]]
    rc, gate = gate_allows(after, command, doc["env"], monkeypatch)
    assert (rc, gate["decision"]) == (0, "allow"), gate["reasons"]
    assert not [p for p in gate["derived"]["problems"] if p["status"] != "note"]


def test_at_least_the_six_boxes_of_the_issue() -> None:
    names = {p.name for p in cases_mod.case_dirs()}
    assert {"seed-before", "seed-after", "h200-nvlink", "b200", "rtx5090x2-no-p2p", "gb10"} <= names
    for case in cases_mod.case_dirs():
        assert (case / "expected.json").is_file(), case.name


def test_seed_box_before_its_upgrade() -> None:
    rc, doc = recommend_json("--facts", str(SEED_BEFORE))
    assert rc == 0
    plan = doc["plan"]
    assert plan["target"]["sglang"] == "0.5.23"
    # SGLang 0.5.23's pins, as the planner reads them from components.json
    assert plan["target"]["torch"] == "2.14.1+cu130"
    assert plan["target"]["sglang-kernel"].startswith("0.4.10")
    assert plan["target"]["flashinfer-python"] == "0.7.2"
    assert [s["component"] for s in plan["steps"]][-1] == "sglang"
    assert all(s["commands"] for s in plan["steps"])
    assert not any(str(s["component"]).startswith("patch:") for s in plan["steps"])
    # PCIe-IPC all-reduce; DeepGEMM off: its SM120 path in 0.5.23 is unknown (an open upstream bug)
    assert doc["env"] == {"SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "1", "SGLANG_ENABLE_JIT_DEEPGEMM": "0"}
    argv = doc["command"]
    assert argv[argv.index("--attention-backend") + 1] in ("flashinfer", "triton")
    assert "--enable-torch-symm-mem" not in argv
    assert not any("allreduce-fusion" in a for a in argv)
    never = {n["id"] for n in doc["never"]}
    first_three = {
        "torch-symm-mem-on-pcie",
        "custom-allreduce-patch-past-two-pcie-gpus",
        "flashinfer-fusion-gate-widening",
    }
    assert first_three <= never
    # EAGLE-3: the all-reduce path is the reason it can now pay off
    spec = next(c for c in doc["choices"] if c["decision"] == "speculative")
    assert spec["option"] == "eagle3-pays-off-pcie-ipc" and spec["advice"] is True
    assert "PCIe-IPC" in spec["why"] and "all-reduce" in spec["why"]


def test_seed_box_measurement_is_upstreams_with_its_machine() -> None:
    _, doc = recommend_json("--facts", str(SEED_AFTER))
    pick = next(c for c in doc["choices"] if c["option"] == "pcie-ipc")
    gain = pick["gain"]
    assert gain["kind"] == "measured" and gain["by"] == "upstream"
    assert "8x SM120" in gain["machine"]
    figures = {(f["metric"], f.get("before"), f.get("after")) for f in gain["figures"]}
    assert ("TPOT", 21.14, 13.62) in figures
    assert ("output throughput", 35.02, 48.05) in figures
    assert ("12 KiB all-reduce, against NCCL", 205.1, 5.3) in figures
    _, text = run("recommend", "--facts", str(SEED_AFTER))
    assert "upstream's measurement on upstream's machine" in text
    assert "21.14 → 13.62 ms" in text


def test_nvlink_never_gets_pcie_ipc() -> None:
    _, doc = recommend_json("--facts", str(H200))
    assert "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE" not in doc["env"]
    assert all(c["option"] != "pcie-ipc" for c in doc["choices"] + doc["alternatives"])
    # the same PCIe box told it has NVLink loses the setting too
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--assume-interconnect", "nvlink")
    assert "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE" not in doc["env"]


def test_held_release_without_pcie_ipc_says_what_would_allow_it() -> None:
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--to", "sglang==0.5.20")
    assert "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE" not in doc["env"]
    rejected = next(a for a in doc["alternatives"] if a["option"] == "pcie-ipc")
    assert "sglang>=0.5.21" in rejected["why"]
    assert rejected["hint"] == "stackcheck recommend --to sglang==0.5.23"
    spec = next(c for c in doc["choices"] if c["decision"] == "speculative")
    assert spec["option"] == "speculation-over-nccl"


def test_pcie_ipc_conditions(tmp_path: Path) -> None:
    # TP 6 is not one of the kernels' world sizes; fp16 reductions stay on NCCL; deterministic inference wins
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--tp", "6")
    why = next(a for a in doc["alternatives"] if a["option"] == "pcie-ipc")["why"]
    assert "launch.tp = 6" in why
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"model_type": "llama", "torch_dtype": "float16"}))
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--model-path", str(model))
    why = next(a for a in doc["alternatives"] if a["option"] == "pcie-ipc")["why"]
    assert "launch.dtype = float16" in why
    _, doc = recommend_json(
        "--facts", str(SEED_AFTER), "--", "python", "-m", "sglang.launch_server", "--tp", "8",
        "--enable-deterministic-inference",
    )  # fmt: skip
    why = next(a for a in doc["alternatives"] if a["option"] == "pcie-ipc")["why"]
    assert "launch.deterministic" in why


def test_model_config_decides_attention_and_moe(tmp_path: Path) -> None:
    gpt_oss = tmp_path / "gpt-oss"
    gpt_oss.mkdir()
    (gpt_oss / "config.json").write_text(
        json.dumps({"model_type": "gpt_oss", "quantization_config": {"quant_method": "mxfp4"}})
    )
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--model-path", str(gpt_oss))
    chosen = {c["decision"]: c["option"] for c in doc["choices"]}
    assert chosen["attention"] == "triton-sm12x"  # attention sinks: FlashInfer does not support them
    assert chosen["mxfp4-moe"] == "mxfp4-auto-sm12x"
    assert not any(a for a in doc["assumptions"] if "no local model config" in a)
    mla = tmp_path / "mla"
    mla.mkdir()
    (mla / "config.json").write_text(json.dumps({"model_type": "deepseek_v3", "kv_lora_rank": 512}))
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--model-path", str(mla))
    assert {c["decision"]: c["option"] for c in doc["choices"]}["attention"] == "triton-sm12x"


def test_quantization_unknown_is_said_not_guessed() -> None:
    _, doc = recommend_json("--facts", str(SEED_AFTER))
    undecided = {u["decision"] for u in doc["undecided"]}
    assert {"fp8-gemm", "mxfp4-moe", "nvfp4-moe"} <= undecided
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--assume-quantization", "fp8")
    chosen = {c["decision"]: c["option"] for c in doc["choices"]}
    assert chosen["fp8-gemm"] == "fp8-auto-cutlass-sm12x"  # SGLang 0.5.23 on SM120: auto is cutlass
    assert "fp8-gemm" not in {u["decision"] for u in doc["undecided"]}


def test_fp8_gemm_follows_the_release_dispatch_on_sm12x() -> None:
    """auto on a major-12 GPU: FlashInfer (DeepGEMM off) up to 0.5.9, Triton 0.5.10-0.5.15, CUTLASS from 0.5.16;
    only the option of the target release is listed, and it still needs the fp8-block-gemm verdict."""
    seen = {}
    for release in ("0.5.15", "0.5.16", "0.5.23"):
        _, doc = recommend_json(
            "--facts", str(SEED_AFTER), "--assume-quantization", "fp8", "--to", f"sglang=={release}"
        )
        listed = [c for c in [*doc["choices"], *doc["alternatives"]] if c["decision"] == "fp8-gemm"]
        assert len(listed) == 1, listed
        seen[release] = (listed[0]["option"], listed[0] in doc["choices"])
    assert seen["0.5.15"][0] == "fp8-auto-triton-sm12x"
    assert seen["0.5.16"] == ("fp8-auto-cutlass-sm12x", True)
    assert seen["0.5.23"] == ("fp8-auto-cutlass-sm12x", True)
    _, doc = recommend_json("--facts", str(SEED_BEFORE), "--assume-quantization", "fp8", "--no-plan")  # 0.5.9
    listed = [c for c in [*doc["choices"], *doc["alternatives"]] if c["decision"] == "fp8-gemm"]
    assert [c["option"] for c in listed] == ["fp8-auto-flashinfer-sm12x"]
    # SGLang 0.5.9 picks DeepGEMM first: fp8-block-gemm is blocked (crash), so the option is not chosen
    assert listed[0] not in doc["choices"] and "fp8-block-gemm is blocked" in listed[0]["why"]


def test_deepgemm_off_where_it_crashes() -> None:
    # SGLang 0.5.9 on SM120 selects DeepGEMM, which fails there: the verdict is blocked (crash)
    _, doc = recommend_json("--facts", str(SEED_BEFORE), "--no-plan")
    assert doc["env"].get("SGLANG_ENABLE_JIT_DEEPGEMM") == "0"
    assert doc["plan"] is None
    chosen = {c["decision"]: c["option"] for c in doc["choices"]}
    assert chosen["deepgemm"] == "deepgemm-off"


def test_deepgemm_off_where_it_is_unknown_on_sm12x() -> None:
    # after the plan (SGLang 0.5.23) DeepGEMM runs on SM120 when deep_gemm has its SM120 entry points, and that
    # path has an open upstream bug: the verdict is unknown, so recommend turns it off rather than leave it undecided
    _, doc = recommend_json("--facts", str(SEED_BEFORE))
    chosen = {c["decision"]: c["option"] for c in doc["choices"]}
    assert chosen["deepgemm"] == "deepgemm-off-unknown"
    assert doc["env"].get("SGLANG_ENABLE_JIT_DEEPGEMM") == "0"
    assert "deepgemm" not in {u["decision"] for u in doc["undecided"]}
    # on an H200 an unknown verdict would not turn DeepGEMM off: the option is scoped to major 12
    _, doc = recommend_json("--facts", str(CASES / "h200-nvlink" / "facts.json"))
    assert all(c["option"] != "deepgemm-off-unknown" for c in [*doc["choices"], *doc["alternatives"]])


def test_no_gpu_visible_leaves_gpu_choices_open(tmp_path: Path) -> None:
    rc, doc = recommend_json("--facts", str(ROOT / "tests" / "cases" / "no-driver" / "facts.json"))
    assert rc == 0
    assert any("no GPU visible" in n for n in doc["notes"])
    assert "attention" in {u["decision"] for u in doc["undecided"]}
    assert "--attention-backend" not in doc["command"]
    # a model read from its config.json (without one it may be a Gemma 4 model, whose own assertion refuses fa3:
    # the attention choice stays open however the GPU is assumed)
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}))
    _, doc = recommend_json(
        "--facts", str(ROOT / "tests" / "cases" / "no-driver" / "facts.json"), "--assume-gpu", "9.0x8",
        "--assume-interconnect", "nvlink", "--model-path", str(model),
    )  # fmt: skip
    chosen = {c["decision"]: c["option"] for c in doc["choices"]}
    assert chosen["attention"] == "fa3-hopper" and chosen["all-reduce"] == "custom-allreduce"


def test_goal_throughput_changes_the_speculation_advice() -> None:
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--goal", "throughput")
    spec = next(c for c in doc["choices"] if c["decision"] == "speculative")
    assert spec["option"] == "speculation-throughput"
    assert doc["env"] == {"SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "1", "SGLANG_ENABLE_JIT_DEEPGEMM": "0"}


# ---- a given launch: the diff ---------------------------------------------------------------------------------

BAD_LAUNCH = [
    "python", "-m", "sglang.launch_server", "--model-path", "/models/m", "--tp", "8",
    "--enable-torch-symm-mem", "--attention-backend", "fa3", "--enable-flashinfer-allreduce-fusion",
    "--disable-cuda-graph",
]  # fmt: skip


def test_diff_against_a_given_launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    after = tmp_path / "after.json"
    rc, doc = recommend_json("--facts", str(SEED_AFTER), "--plan-facts", str(after), "--", *BAD_LAUNCH)
    assert rc == 1  # the launch misses something or should drop something
    diff = {(c["action"], c["name"]): c for c in doc["diff"]}
    assert set(diff) == {
        ("drop", "--enable-torch-symm-mem"),
        ("drop", "--enable-flashinfer-allreduce-fusion"),
        ("drop", "--disable-cuda-graph"),
        ("change", "--attention-backend"),
        ("add", "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE"),
        ("add", "SGLANG_ENABLE_JIT_DEEPGEMM"),  # deepgemm is unknown on SM120 with SGLang 0.5.23
    }
    # /models/m is not on this box: its config.json unread, the model may be one whose own assertion refuses
    # flashinfer (GPT-OSS, Olmo2, Llama 4), which the gate would then refuse as unknown: triton, which all take
    assert (diff[("change", "--attention-backend")]["old"], diff[("change", "--attention-backend")]["value"]) == (
        "fa3",
        "triton",
    )
    flashinfer = next(a for a in doc["alternatives"] if a["option"] == "flashinfer-sm12x")
    assert flashinfer["status"] == "rejected" and "GptOssForCausalLM" in flashinfer["why"], flashinfer
    assert "--model-path DIR" in flashinfer["hint"]
    assert doc["command"][:7] == BAD_LAUNCH[:7]  # the user's own arguments are kept, in order
    rc, gate = gate_allows(after, doc["command"], doc["env"], monkeypatch)
    assert (rc, gate["decision"]) == (0, "allow")
    # the corrected launch needs nothing more
    for name, value in doc["env"].items():
        monkeypatch.setenv(name, value)
    rc, again = recommend_json("--facts", str(SEED_AFTER), "--", *doc["command"])
    assert (rc, again["diff"]) == (0, [])
    assert again["command"] == doc["command"]


@pytest.mark.parametrize(
    ("config", "backend"),
    [
        ({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}, "flashinfer"),
        ({"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2"}, "triton"),  # SGLang asserts != flashinfer
        ({"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss"}, "triton"),  # not on its list
    ],
)
def test_the_attention_backend_follows_the_model_read(
    config: dict[str, Any], backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model read from its config.json decides between the backends the box runs: never one that SGLang
    asserts against for that model (the gate refuses those), and the launch recommend writes passes the gate."""
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text(json.dumps(config))
    after = tmp_path / "after.json"
    launch = [str(model) if a == "/models/m" else a for a in BAD_LAUNCH]
    rc, doc = recommend_json("--facts", str(SEED_AFTER), "--plan-facts", str(after), "--", *launch)
    change = next(c for c in doc["diff"] if c["name"] == "--attention-backend")
    assert (change["old"], change["value"]) == ("fa3", backend), config
    rc, gate = gate_allows(after, doc["command"], doc["env"], monkeypatch)
    assert (rc, gate["decision"]) == (0, "allow"), gate["reasons"]


def test_diff_env_prefix_and_inherited_env(monkeypatch: pytest.MonkeyPatch) -> None:
    launch = ["env", "NCCL_P2P_DISABLE=1", "python", "-m", "sglang.launch_server", "--tp", "8"]
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--", *launch)
    assert doc["command"][:1] == ["env"]
    assert "NCCL_P2P_DISABLE=1" not in doc["command"]
    assert "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1" in doc["command"]
    monkeypatch.setenv("NCCL_P2P_DISABLE", "1")  # inherited from the shell: unset with env -u
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--", *launch[2:])
    assert doc["command"][:3] == ["env", "-u", "NCCL_P2P_DISABLE"]
    assert any(c["action"] == "drop" and c["name"] == "NCCL_P2P_DISABLE" for c in doc["diff"])


def test_diff_keeps_degraded_speculation_and_gives_advice() -> None:
    launch = ["python3", "-m", "sglang.launch_server", "--tp", "8", "--speculative-algorithm", "EAGLE3"]
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--", *launch)
    assert "EAGLE3" in doc["command"]
    assert not any(c["name"] == "--speculative-algorithm" for c in doc["diff"])


def test_command_problems(tmp_path: Path) -> None:
    rc, _ = run("recommend", "--facts", str(SEED_AFTER), "--", "bash", "serve.sh")
    assert rc == 2
    rc, _ = run("recommend", "--facts", str(SEED_AFTER), "--tp", "4", "--", "python", "-m", "sglang.launch_server")
    assert rc == 2  # --tp 4 and the command's tp 1 differ
    assert run("recommend", "--facts", str(SEED_AFTER), "--tp", "16")[0] == 2
    assert run("recommend", "--facts", str(SEED_AFTER), "--no-plan", "--hold", "sglang")[0] == 2
    bad = tmp_path / "m"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    assert run("recommend", "--facts", str(SEED_AFTER), "--model-path", str(bad))[0] == 2


def test_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "facts.json"
    bad.write_text("[]")
    rc, _ = run("recommend", "--facts", str(bad))
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and str(bad) in err and "Traceback" not in err


# ---- formats -------------------------------------------------------------------------------------------------------


def test_shell_format_is_copy_pasteable() -> None:
    _, text = run("recommend", "--facts", str(SEED_BEFORE), "--format", "shell")
    _, doc = recommend_json("--facts", str(SEED_BEFORE))
    commands = [line for line in text.splitlines() if line and not line.startswith("#")]
    for line in commands:
        shlex.split(line)  # every line is one well-quoted command
    assert shlex.split(commands[-1]) == [f"{k}={v}" for k, v in doc["env"].items()] + doc["command"]
    plan_cmds = [c for s in doc["plan"]["steps"] for c in s["commands"]]
    assert commands[:-1] == plan_cmds


def test_control_characters_never_reach_the_terminal() -> None:
    hostile = "/models/\x1b[31mred\x07"
    _, text = run("recommend", "--facts", str(SEED_AFTER), "--format", "shell", "--model-path", hostile)
    assert "\x1b" not in text and "\x07" not in text
    last = text.splitlines()[-1]
    assert "$'/models/\\x1b[31mred\\x07'" in last
    _, text = run("recommend", "--facts", str(SEED_AFTER), "--model-path", hostile)
    assert "\x1b" not in text and "\x07" not in text


def test_json_output_file_is_written_atomically(tmp_path: Path) -> None:
    out = tmp_path / "rec.json"
    rc, text = run("recommend", "--facts", str(SEED_AFTER), "--format", "json", "--output", str(out))
    assert rc == 0 and text == ""
    doc = json.loads(out.read_text())
    assert doc["schema_version"] == 1 and doc["env"] == {
        "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE": "1",
        "SGLANG_ENABLE_JIT_DEEPGEMM": "0",
    }


# ---- never a local patch -------------------------------------------------------------------------------------------


def test_plan_steps_that_patch_a_package_are_never_recommended(monkeypatch: pytest.MonkeyPatch) -> None:
    import stackcheck.plan as plan_mod
    from stackcheck.record import replace

    real = plan_mod.plan_and_facts

    def with_patch(*args: Any, **kwargs: Any) -> Any:
        plan, after = real(*args, **kwargs)
        patch = plan_mod.Step("patch:torch-symm-mem", None, "patched", ("# manual edit",), (), "a workaround", ())
        return replace(plan, steps=(*plan.steps, patch)), after

    monkeypatch.setattr(plan_mod, "plan_and_facts", with_patch)
    _, doc = recommend_json("--facts", str(SEED_BEFORE))
    assert not any(str(s["component"]).startswith("patch:") for s in doc["plan"]["steps"])


# ---- the gate's advice -------------------------------------------------------------------------------------------


def test_gate_prints_the_advice_as_notes(tmp_path: Path) -> None:
    # a model whose config.json the gate reads: with none, whether SGLang's Olmo2 override picks fa3 (blocked on
    # this SM120 box) is not known, and the gate refuses the launch as unknown
    model = tmp_path / "llama"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}))
    launch = ["--", "python", "-m", "sglang.launch_server", "--tp", "8", "--model-path", str(model)]
    rc, text = run("gate", "--facts", str(SEED_AFTER), "--dry-run", *launch)
    assert rc == 0
    assert "note: recommend: add SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1" in text
    assert "note: never:" not in text
    rc, text = run("gate", "--facts", str(SEED_AFTER), "--dry-run", "--advise", *launch)
    assert "note: never: --enable-torch-symm-mem without NVLink" in text
    assert "note: recommend [all-reduce]: FlashInfer PCIe-IPC all-reduce" in text
    rc, text = run("gate", "--facts", str(SEED_AFTER), "--dry-run", "--quiet", *launch)
    assert "recommend" not in text
    rc, text = run("gate", "--facts", str(SEED_AFTER), "--dry-run", "--format", "json", *launch)
    assert json.loads(text)["advice"][0].startswith("recommend: add SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1")


def test_gate_advice_never_changes_the_decision(tmp_path: Path) -> None:
    launch = ["--", "python", "-m", "sglang.launch_server", "--tp", "8", "--enable-flashinfer-allreduce-fusion"]
    rc, text = run("gate", "--facts", str(SEED_AFTER), "--dry-run", *launch)
    assert rc == 1 and "decision: refuse" in text
    assert "note: recommend: drop --enable-flashinfer-allreduce-fusion" in text
    # a model the gate reads: with none, SGLang's MiniCPM SALA override (minicpm_flashattn, blocked on this
    # Python 3.12 box: sglang-kernel's InfLLM-V2 library is a CPython 3.10 extension) might apply, and it refuses
    model = tmp_path / "llama"
    model.mkdir()
    (model / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLM"], "model_type": "llama"}))
    rc, text = run("gate", "--facts", str(H200), "--dry-run", "--", "python", "-m", "sglang.launch_server",
                   "--model-path", str(model))  # fmt: skip
    assert rc == 0 and "decision: allow" in text


# ---- the knowledge file ------------------------------------------------------------------------------------------


def test_every_flag_recommend_touches_is_read_by_the_gate() -> None:
    from stackcheck.knowledge.loader import load

    m = load([], env={})
    known = set()
    for o in m.launch.get("options") or []:
        known |= {o["flag"], *(o.get("aliases") or [])}
    flags = set()
    for dec in m.recommend["decisions"]:
        for opt in dec["options"]:
            flags |= set((opt.get("set") or {}).get("flags") or {})
            flags |= set((opt.get("unset") or {}).get("flags") or [])
    for entry in m.recommend["never"]:
        flags |= set(entry.get("flags") or [])
    assert flags and flags <= known, flags - known


def test_every_option_says_where_its_gain_comes_from() -> None:
    from stackcheck.knowledge.loader import load

    m = load([], env={})
    for dec in m.recommend["decisions"]:
        for opt in dec["options"]:
            gain = opt["gain"]
            if gain["kind"] == "measured":
                assert gain["by"] in ("upstream", "stackcheck") and gain["machine"] and gain["source"], opt["id"]
            else:
                assert gain["why"], opt["id"]
            assert opt["source"], opt["id"]
    for entry in m.recommend["never"]:
        assert entry["evidence"] and entry["why"], entry["id"]


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (lambda d: d["decisions"][0]["options"][0].update(feature="no-such-feature"), "unknown feature"),
        (lambda d: d["decisions"][0].update(applies={"chosen": "attention", "in": ["x"]}), "not an earlier decision"),
        (lambda d: d["decisions"][0]["options"][1].update(releases={"sglang": ">=bad"}), "releases"),
        (lambda d: d["decisions"][0]["options"].append(dict(d["decisions"][0]["options"][0])), "duplicate option id"),
        (lambda d: d["never"][0].pop("evidence"), "evidence"),
    ],
)
def test_bad_recommend_manifest_is_reported_with_its_path(tmp_path: Path, change: Any, needle: str) -> None:
    doc = json.loads((ROOT / "manifests" / "recommend.json").read_text())
    change(doc)
    (tmp_path / "recommend.json").write_text(json.dumps(doc))
    rc, text = run("manifests", "validate", str(tmp_path))
    assert rc == 2
    assert needle in text and "recommend.json: $." in text


# ---- secrets of a given command line; a model in the Hugging Face cache ------------------------------------------


def test_secrets_of_the_given_command_never_leave_the_box() -> None:
    given = [
        "--", "env", "HF_TOKEN=hf_abcdefghSECRET1234567", "python", "-m", "sglang.launch_server",
        "--model-path", "https://user:pwSECRET@models.example/x", "--api-key", "sk-SECRET12345678", "--tp", "8",
    ]  # fmt: skip
    for fmt in ("json", "text", "shell"):
        rc, text = run("recommend", "--facts", str(SEED_AFTER), "--format", fmt, *given)
        assert rc in (0, 1), text
        assert "SECRET" not in text, fmt
    _, doc = recommend_json("--facts", str(SEED_AFTER), *given)
    assert "--api-key" in doc["given"] and "***" in doc["given"]
    assert doc["command"][doc["command"].index("--api-key") + 1] == "***"
    assert any("put them back" in n for n in doc["notes"])
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--", "python", "-m", "sglang.launch_server", "--tp", "8")
    assert not any("put them back" in n for n in doc["notes"])  # nothing masked: no note


def _hub_model(hub: Path, repo: str, config: dict[str, Any], revision: str = "main") -> Path:
    commit = "0123456789abcdef0123456789abcdef01234567"
    repo_dir = hub / ("models--" + repo.replace("/", "--"))
    snap = repo_dir / "snapshots" / commit
    snap.mkdir(parents=True)
    (repo_dir / "refs").mkdir()
    (repo_dir / "refs" / revision).write_text(commit)
    (snap / "config.json").write_text(json.dumps(config))
    return snap


def test_model_id_is_read_from_the_hugging_face_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    hub = tmp_path / "hub"
    _hub_model(hub, "openai/gpt-oss-120b", {"model_type": "gpt_oss", "quantization_config": {"quant_method": "mxfp4"}})
    monkeypatch.setenv("HF_HUB_CACHE", str(hub))
    monkeypatch.chdir(tmp_path)
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--model-path", "openai/gpt-oss-120b")
    chosen = {c["decision"]: c["option"] for c in doc["choices"]}
    assert chosen["attention"] == "triton-sm12x"  # attention sinks, read from the cached config
    assert chosen["mxfp4-moe"] == "mxfp4-auto-sm12x"
    assert any("config read from the Hugging Face cache" in a and "HF_HUB_CACHE" in a for a in doc["assumptions"])
    assert not any("no local model config" in a for a in doc["assumptions"])
    # the same id named in a given command, with --download-dir taking the place of HF_HUB_CACHE
    monkeypatch.delenv("HF_HUB_CACHE")
    other = tmp_path / "dl"
    _hub_model(other, "org/mla", {"model_type": "deepseek_v3", "kv_lora_rank": 512})
    _, doc = recommend_json(
        "--facts", str(SEED_AFTER), "--", "python", "-m", "sglang.launch_server", "--tp", "8",
        "--model-path", "org/mla", "--download-dir", str(other),
    )  # fmt: skip
    assert {c["decision"]: c["option"] for c in doc["choices"]}["attention"] == "triton-sm12x"
    assert any("--download-dir" in a for a in doc["assumptions"])
    # not cached: the assumption says where it was looked for
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--model-path", "org/absent")
    said = [a for a in doc["assumptions"] if "no local model config" in a]
    assert said and "not in the Hugging Face cache" in said[0]


def test_mla_is_decided_by_the_architecture_as_the_gate_decides_it(tmp_path: Path) -> None:
    from stackcheck.commands.recommend import model_facts
    from stackcheck.knowledge.loader import load

    data = load([]).preflight["model"]
    cases = {
        # SGLang's ModelConfig takes MLA by the architecture, not by the key: a kv_lora_rank on another
        # architecture is not MLA there, and the gate's preflight says the same
        "not-listed": ({"architectures": ["Qwen3ForCausalLM"], "kv_lora_rank": 512}, False),
        "listed": ({"architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 512}, True),
        "minicpm3": ({"architectures": ["MiniCPM3ForCausalLM"], "kv_lora_rank": 256}, True),
        "no-architecture": ({"model_type": "deepseek_v3", "kv_lora_rank": 512}, True),  # the key, as before
    }
    for name, (config, mla) in cases.items():
        d = tmp_path / name
        d.mkdir()
        (d / "config.json").write_text(json.dumps(config))
        assert model_facts(str(d), data, "0.5.9")[0]["mla"] is mla, name
    # no SGLang release known: an architecture no release makes MLA, with kv_lora_rank, is not known either way
    assert model_facts(str(tmp_path / "not-listed"), data, None)[0]["mla"] is None
    assert model_facts(str(tmp_path / "listed"), data, None)[0]["mla"] is True
    _, doc = recommend_json("--facts", str(SEED_AFTER), "--model-path", str(tmp_path / "not-listed"))
    assert any(c["decision"] == "attention" for c in doc["choices"])
