"""Input that forgives (issue 20): the spellings people use are accepted, near misses are named, and the
mistakes people make (a CUDA version for a driver, another tool's output for a facts file, a gate command
without --) get a one-line error that says what to write instead. Plus the "assumed" marker of a what-if."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.assembly.options import driver_spec, gpu_spec
from stackcheck.errors import UsageError
from stackcheck.knowledge.loader import load

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests" / "cases"
AFTER = str(CASES / "writeup-after" / "facts.json")
NO_DRIVER = str(CASES / "no-driver" / "facts.json")
H200 = str(CASES / "h200-newest" / "facts.json")
MANIFESTS = load([])


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}
    env.pop("COLUMNS", None)
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", *args], capture_output=True, text=True, env=env, timeout=120
    )


# ---- --assume-gpu -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("12.0", ("12.0", 1, None)),
        ("12.0x8", ("12.0", 8, None)),
        ("8x12.0", ("12.0", 8, None)),
        ("sm120", ("12.0", 1, None)),
        ("sm_120", ("12.0", 1, None)),
        ("SM_120x8", ("12.0", 8, None)),
        ("120", ("12.0", 1, None)),
        ("100x8", ("10.0", 8, None)),
        ("8x100", ("10.0", 8, None)),
        ("9.0x8", ("9.0", 8, None)),
        ("RTX 5090", ("12.0", 1, "NVIDIA GeForce RTX 5090")),
        ("RTX 5090x2", ("12.0", 2, "NVIDIA GeForce RTX 5090")),
        ("2x RTX 5090", ("12.0", 2, "NVIDIA GeForce RTX 5090")),
        ("B200", ("10.0", 1, "NVIDIA B200")),
        ("b200x8", ("10.0", 8, "NVIDIA B200")),
        ("NVIDIA H200", ("9.0", 1, "NVIDIA H200")),
        ("GB10", ("12.1", 1, "NVIDIA GB10")),
        ("H100x8", ("9.0", 8, "NVIDIA H100")),  # a family: its capability, the name as given
    ],
)
def test_assume_gpu_spellings(spec: str, expected: tuple[str, int, str | None]) -> None:
    assert gpu_spec(spec, MANIFESTS) == expected


@pytest.mark.parametrize(
    ("spec", "match"),
    [
        ("12.0x", "the count after x is missing"),
        ("x8", "the count after x is missing"),
        ("12.5", "no architecture with compute capability 12.5"),
        ("twelve", "neither a compute capability nor a GPU"),
        ("RTX", "several GPUs match"),
        ("12.0x0", "a count of 1 to 4096"),
    ],
)
def test_assume_gpu_mistakes(spec: str, match: str) -> None:
    with pytest.raises(UsageError, match=re.escape(match)):
        gpu_spec(spec, MANIFESTS)


def test_a_capability_names_the_architecture_not_one_card() -> None:
    report = json.loads(run_cli("audit", "--facts", NO_DRIVER, "--assume-gpu", "12.0x8", "--format", "json").stdout)
    names = {g["name"] for g in report["facts"]["gpus"]}
    assert names == {"any Blackwell (RTX PRO / GeForce RTX 50) GPU"}
    assert report["facts"]["assumed"] == ["gpus=12.0x8"]
    named = json.loads(run_cli("audit", "--facts", NO_DRIVER, "--assume-gpu", "RTX 5090x2", "--format", "json").stdout)
    assert {g["name"] for g in named["facts"]["gpus"]} == {"NVIDIA GeForce RTX 5090"}
    assert named["facts"]["assumed"] == ["gpus=12.0x2 (NVIDIA GeForce RTX 5090)"]


def test_assume_gpu_error_is_one_line_exit_2() -> None:
    proc = run_cli("audit", "--facts", AFTER, "--assume-gpu", "12.0x")
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "the count after x is missing" in proc.stderr


# ---- --assume-driver, --timeout ---------------------------------------------------------------------------


def test_assume_driver_forms() -> None:
    assert driver_spec("580.95.05", MANIFESTS) == ("580.95.05", "driver=580.95.05")
    version, said = driver_spec("580", MANIFESTS)
    assert version == "580.65.06" and "branch 580" in said


def test_a_cuda_version_is_not_a_driver() -> None:
    proc = run_cli("audit", "--facts", AFTER, "--assume-driver", "13.0")
    assert proc.returncode == 2
    assert "13.0: that is a CUDA version" in proc.stderr
    assert "--assume-driver 580.65.06" in proc.stderr and "--assume-driver 580" in proc.stderr  # both forms


def test_a_branch_is_judged_as_its_first_release() -> None:
    report = json.loads(run_cli("audit", "--facts", AFTER, "--assume-driver", "580", "--format", "json").stdout)
    assert report["facts"]["driver"]["version"] == "580.65.06"
    assert report["facts"]["driver"]["cuda"] == "13.0"
    assert "branch 580" in report["facts"]["assumed"][0]


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
def test_timeout_must_be_positive(value: str) -> None:
    proc = run_cli("audit", "--facts", AFTER, "--timeout", value)
    assert proc.returncode == 2 and "--timeout" in proc.stderr


# ---- feature ids ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "torch_symm_mem", "--assume-gpu", "9.0"],
        ["explain", "Torch-Symm-Mem", "--assume-gpu", "9.0"],
        ["gate", "--facts", H200, "--require", "torch_symm_mem"],
        ["plan", "--facts", AFTER, "--want", "torch_symm_mem"],
    ],
)
def test_underscore_and_dash_are_the_same(argv: list[str]) -> None:
    proc = run_cli(*argv)
    assert proc.returncode in (0, 1), proc.stderr


@pytest.mark.parametrize(
    "argv",
    [
        ["explain", "torch-sym-mem"],
        ["gate", "--facts", H200, "--require", "torch-symmem"],
        ["plan", "--facts", AFTER, "--want", "torch_sym_mem"],
    ],
)
def test_a_near_miss_is_named(argv: list[str]) -> None:
    proc = run_cli(*argv)
    assert proc.returncode == 2
    assert "did you mean torch-symm-mem?" in proc.stderr


# ---- facts files that are something else ------------------------------------------------------------------

# small stand-ins written for these tests in the shape of each tool's output (not copies of real output)
FOREIGN = {
    "nvidia-smi-q.txt": ("\n==============NVSMI LOG==============\n\nDriver Version : 580.0\nAttached GPUs : 1\n",
                         "`nvidia-smi -q` output"),
    "nvidia-smi-q.xml": ('<?xml version="1.0" ?>\n<nvidia_smi_log>\n<driver_version>580.0</driver_version>\n'
                         "</nvidia_smi_log>\n", "`nvidia-smi -q -x` XML"),
    "collect_env.txt": ("Collecting environment information...\nPyTorch version: 2.9.1\nIs CUDA available: True\n",
                        "`python -m torch.utils.collect_env` output"),
    "pip-list.json": ('[{"name": "torch", "version": "2.9.1"}, {"name": "sglang", "version": "0.5.9"}]',
                      "`pip list --format json` output"),
    "docker-inspect.json": ('[{"Id": "sha256:0", "RepoTags": ["x:1"], "Config": {"Env": []}}]',
                            "`docker inspect` output"),
    "pip-freeze.txt": ("torch==2.9.1\nsglang==0.5.9\n", "`pip freeze` output"),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(FOREIGN))
def test_another_tools_output_names_the_command_that_makes_a_facts_file(name: str, tmp_path: Path) -> None:
    text, what = FOREIGN[name]
    path = tmp_path / name
    path.write_text(text)
    proc = run_cli("audit", "--facts", str(path))
    assert proc.returncode == 2
    assert what in proc.stderr
    assert "stackcheck probe --format json --output facts.json" in proc.stderr
    assert proc.stderr.count("\n") == 1


def test_a_stackcheck_document_of_another_kind_is_named(tmp_path: Path) -> None:
    decision = run_cli("gate", "--facts", H200, "--require", "cuda-graph", "--format", "json").stdout
    path = tmp_path / "decision.json"
    path.write_text(decision)
    proc = run_cli("audit", "--facts", str(path))
    assert proc.returncode == 2 and "a `stackcheck gate` decision" in proc.stderr


# ---- gate without -- ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "fixed"),
    [
        (["python", "-m", "sglang.launch_server", "--tp", "8"],
         "stackcheck gate -- python -m sglang.launch_server --tp 8"),
        (["--dry-run", "--facts", AFTER, "sglang", "serve", "--tp", "8"],
         f"stackcheck gate --dry-run --facts {AFTER} -- sglang serve --tp 8"),
        (["--require", "torch-symm-mem", "cuda-graph", "/opt/serve/bin/python", "-m", "sglang.launch_server"],
         "stackcheck gate --require torch-symm-mem cuda-graph -- /opt/serve/bin/python -m sglang.launch_server"),
        (["python", "-m", "sglang.launch_server", "--api-key", "sk-secret-123456"],
         "stackcheck gate -- python -m sglang.launch_server --api-key '***'"),
    ],
)  # fmt: skip
def test_gate_without_separator_shows_its_own_usage_and_the_corrected_line(argv: list[str], fixed: str) -> None:
    proc = run_cli("gate", *argv)
    assert proc.returncode == 2
    assert proc.stderr.startswith("usage: stackcheck gate ")  # the gate's usage, not the top-level one
    assert f"as in: {fixed}\n" in proc.stderr
    assert "sk-secret-123456" not in proc.stderr


def test_gate_with_separator_is_untouched() -> None:
    proc = run_cli("gate", "--facts", H200, "--dry-run", "--", "python", "-m", "sglang.launch_server", "--tp", "8")
    assert proc.returncode in (0, 1) and "usage:" not in proc.stderr


# ---- explain ----------------------------------------------------------------------------------------------


def test_explain_says_whose_gpus_and_groups_releases() -> None:
    proc = run_cli("explain", "deepgemm", "--facts", AFTER)
    assert proc.returncode == 0, proc.stderr
    assert f"GPUs: those of {AFTER}" in proc.stdout
    assert "on 8× NVIDIA RTX PRO 6000 Blackwell Server Edition (cc 12.0)" in proc.stdout
    assert "sglang 0.5.13 … 0.5.19 (7 releases): blocked (disabled)" in proc.stdout
    assert "sglang 0.5.20 … 0.5.23 (4 releases): unknown" in proc.stdout  # sglang#39063 on SM120
    assert proc.stdout.count("(sglang-0.5.13:configurer.py +1)") == 1  # sources once per range
    assert "workaround: Set SGLANG_ENABLE_JIT_DEEPGEMM=0" in proc.stdout


def test_explain_offers_no_sm120_workaround_where_the_feature_is_ok() -> None:
    nvswitch = ["--assume-interconnect", "nvswitch"]  # multicast: without it the communicator stays off
    hopper = run_cli("explain", "torch-symm-mem", "--assume-gpu", "9.0x8", *nvswitch, "--format", "json")
    (arch,) = json.loads(hopper.stdout)["architectures"]
    assert "workaround" not in arch and arch["first_ok"] == "sglang 0.5.3"
    assert "workaround" not in run_cli("explain", "torch-symm-mem", "--assume-gpu", "9.0x8").stdout
    blackwell = json.loads(run_cli("explain", "torch-symm-mem", "--assume-gpu", "12.0x8", "--format", "json").stdout)
    assert "key 12" in blackwell["architectures"][0]["workaround"]["text"]


def test_explain_takes_assume_interconnect() -> None:
    pcie = json.loads(run_cli("explain", "nccl-nvls", "--assume-gpu", "B200x8", "--format", "json").stdout)
    nvl = run_cli(
        "explain", "nccl-nvls", "--assume-gpu", "B200x8", "--assume-interconnect", "nvlink", "--format", "json"
    )
    assert {r["status"] for r in pcie["architectures"][0]["ranges"]} == {"unknown"}
    # NVLink alone does not say whether an NVSwitch is there (NVLS needs its multicast): still unknown
    assert {r["status"] for r in json.loads(nvl.stdout)["architectures"][0]["ranges"]} == {"unknown"}
    switch = run_cli(
        "explain", "nccl-nvls", "--assume-gpu", "B200x8", "--assume-interconnect", "nvswitch", "--format", "json"
    )
    assert "ok" in {r["status"] for r in json.loads(switch.stdout)["architectures"][0]["ranges"]}
    pcie_link = run_cli(
        "explain", "nccl-nvls", "--assume-gpu", "B200x8", "--assume-interconnect", "pcie", "--format", "json"
    )
    assert {r["status"] for r in json.loads(pcie_link.stdout)["architectures"][0]["ranges"]} == {"blocked"}


# ---- an assumed run says so --------------------------------------------------------------------------------


def test_prometheus_and_nfd_of_an_assumed_run_carry_the_marker() -> None:
    prom = run_cli("audit", "--facts", NO_DRIVER, "--assume-gpu", "12.0x8", "--format", "prometheus").stdout
    assert 'assumed="true"' in prom and 'stackcheck_assumed{what="gpus=12.0x8"} 1' in prom
    plain = run_cli("audit", "--facts", NO_DRIVER, "--format", "prometheus").stdout
    assert 'assumed="false"' in plain and "stackcheck_assumed{" not in plain
    nfd = run_cli("audit", "--facts", NO_DRIVER, "--assume-gpu", "12.0x8", "--format", "nfd").stdout
    assert "stackcheck.io/assumed=true" in nfd and "# ASSUMED" in nfd
    assert "stackcheck.io/assumed=false" in run_cli("audit", "--facts", NO_DRIVER, "--format", "nfd").stdout


def test_watch_of_an_assumed_decision_says_so_on_every_line() -> None:
    from stackcheck.launch.watch import watch

    said: list[str] = []
    code = watch(
        [sys.executable, "-c", "import sys; print('The server is fired up'); sys.exit(3)"],
        report=said.append,
        assumed=["gpus=12.0x8"],
        drain_s=0.5,
    )
    assert code == 3
    ours = [line for line in said if line.startswith("stackcheck")]
    assert ours and all(line.rstrip().endswith("[assumed: gpus=12.0x8]") for line in ours if line.endswith("\n"))
    assert any("decision was made on assumed facts" in line for line in ours)


def test_gate_decision_of_an_assumed_run_says_so() -> None:
    proc = run_cli(
        "gate", "--facts", NO_DRIVER, "--assume-gpu", "9.0x8", "--dry-run", "--",
        "python", "-m", "sglang.launch_server", "--tp", "8",
    )  # fmt: skip
    assert "assumed (a what-if, not measured here): gpus=9.0x8" in proc.stdout
