"""The command line as a user meets it: exit codes, one-line errors, formats, pipes."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from stackcheck.cli import COMMANDS, build_parser, main
from stackcheck.render import REPORT_FORMATS
from stackcheck.render.interface import RenderOptions

CASES = Path(__file__).parent.parent / "cases"
AFTER = str(CASES / "writeup-after" / "facts.json")


def run_cli(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", *args],
        capture_output=True,
        text=True,
        input=stdin,
        env=full_env,
        timeout=60,
        cwd="/",
    )


def test_audit_json_is_pipeable_and_valid_against_the_report_schema() -> None:
    from jsonschema import Draft202012Validator

    from stackcheck.knowledge.validate import _registry

    proc = run_cli("audit", "--facts", AFTER, "--format", "json")
    # the write-up box after its upgrade has a pin mismatch (flashinfer 0.6.4 where SGLang 0.5.9 pins 0.6.3): a
    # warning, since SGLang checks only minimums when it starts (issue 17's rule); the one failed stack check is
    # triton-ptxas: Triton 3.5.1 on SM 12.0 emits TMA gather4, a crash of MXFP4 MoE launches (gated to them)
    assert proc.returncode == 1, proc.stderr
    checks = {c["id"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["sglang-pins"]["status"] == "warning"
    assert [c for c, v in checks.items() if v["status"] == "failed"] == ["triton-ptxas"]
    report = json.loads(proc.stdout)
    registry, schemas = _registry()
    Draft202012Validator(schemas["report.schema.json"], registry=registry).validate(report)
    assert report["schema_version"] == 1
    assert report["manifests"]["data_version"]


def test_every_renderer_renders_a_full_report(capsys: pytest.CaptureFixture[str]) -> None:
    from stackcheck.assembly.options import Options
    from stackcheck.assembly.pipeline import build_report

    report, _ = build_report(Options(facts_file=AFTER))
    for name, render in REPORT_FORMATS.items():
        text = render(report, RenderOptions())
        assert isinstance(text, str) and text.strip(), name
    assert "torch-symm-mem" in REPORT_FORMATS["text"](report, RenderOptions(color=True))


def test_every_command_is_wired() -> None:
    """Every verb's module exists and exposes add_arguments and run; the parser accepts each verb."""
    import importlib

    build_parser()  # imports every verb's module and adds its arguments
    for name, (module_name, _) in COMMANDS.items():
        module = importlib.import_module(module_name)
        assert callable(module.add_arguments) and callable(module.run), name


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        ("", "not valid JSON"),
        ('{"schema_version": 1, "facts": ', "line 1 column"),
        ("[1, 2]", "expected a JSON object"),
        ('{"schema_version": 2, "facts": {}}', "newer than this stackcheck"),
        ('{"schema_version": 1, "facts": {"gpus": "eight"}}', "$.facts.gpus"),
        ('{"schema_version": 1, "facts": {"driver": {"version": NaN}}}', "not valid JSON"),
    ],
)
def test_bad_facts_file_gives_one_line_and_exit_2(tmp_path: Path, content: str, needle: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content)
    proc = run_cli("audit", "--facts", str(bad))
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert needle in proc.stderr
    assert str(bad) in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_non_utf8_and_binary_facts(tmp_path: Path) -> None:
    bad = tmp_path / "bin.json"
    bad.write_bytes(b"\xff\xfe\x00garbage\x80")
    proc = run_cli("audit", "--facts", str(bad))
    assert proc.returncode == 2 and "not UTF-8" in proc.stderr and "Traceback" not in proc.stderr


def test_missing_facts_file_and_directory(tmp_path: Path) -> None:
    assert run_cli("audit", "--facts", str(tmp_path / "nope.json")).returncode == 2
    proc = run_cli("audit", "--facts", str(tmp_path))
    assert proc.returncode == 2 and "directory" in proc.stderr


def test_facts_from_stdin() -> None:
    proc = run_cli("audit", "--facts", "-", "--format", "json", stdin=Path(AFTER).read_text())
    assert proc.returncode == 1, proc.stderr  # a pin mismatch only warns; triton-ptxas fails (TMA gather4 on 12.0)
    report = json.loads(proc.stdout)
    assert report["facts"]["gpus"][0]["compute_capability"] == "12.0"
    assert report["host"] == json.loads(Path(AFTER).read_text())["host"]  # the saved box, not this one


def test_partial_facts_document_is_unknown_not_an_error(tmp_path: Path) -> None:
    doc = tmp_path / "partial.json"
    doc.write_text(json.dumps({"schema_version": 1, "facts": {"gpus": [{"index": 0, "compute_capability": "12.0"}]}}))
    proc = run_cli("audit", "--facts", str(doc), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    statuses = {f["id"]: f["status"] for f in json.loads(proc.stdout)["features"]}
    assert statuses["torch-symm-mem"] == "unknown"


def test_usage_errors_exit_2() -> None:
    assert run_cli("audit", "--no-such-option").returncode == 2
    assert run_cli().returncode == 2
    proc = run_cli("audit", "--facts", AFTER, "--assume-gpu", "twelve")
    assert proc.returncode == 2 and "--assume-gpu" in proc.stderr


def test_version_names_the_manifest_data() -> None:
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert "stackcheck 0.1.0" in proc.stdout and "manifests" in proc.stdout and "data of" in proc.stdout


def test_help_documents_exit_codes() -> None:
    proc = run_cli("audit", "--help")
    assert proc.returncode == 0
    for code in ("0 ", "1 ", "2 ", "3 ", "4 "):
        assert f"  {code}" in proc.stdout


def test_plain_text_when_piped_and_no_color() -> None:
    proc = run_cli("audit", "--facts", AFTER, env={"NO_COLOR": "1"})
    assert "\x1b[" not in proc.stdout
    # dsv4-flashmla-sparse-prefill: SGLang 0.5.9 not read; attention-dsa-flashmla-sparse, -dual-chunk, -hpc-ops,
    # -minicpm-sparse and -qsa (stop 35), pd-multiplexing (round eleven), attention-dsa-flashmla-kv (igap12): blocked
    # on this SM120 box with SGLang 0.5.9; memory-saver (iunc3): unknown, the saved packages list did not look for
    # torch-memory-saver; moe-a2a-deepep (round twelve): not applicable, DeepEP is not installed here;
    # attention-dsa-fa3 (igap13): blocked (FA3 has no SM120 kernel); mm-attention-flashinfer-cudnn (icubin2): blocked
    # (its --mm-attention-backend choice is from 0.5.10); linear-attn-cutedsl (icute2): blocked (its
    # --linear-attn-backend flag is from 0.5.10)
    assert "features: 26 blocked, 3 unknown, 4 ok" in proc.stdout
    assert re.search(r"^✗ torch-symm-mem +crash ", proc.stdout, re.M)
    # blocked features come first
    features = proc.stdout.split("features:", 1)[1].split("stack checks:", 1)[0]
    marks = [ln[0] for ln in features.splitlines() if ln[:1] in ("✗", "?", "✓", "-")]
    assert marks == sorted(marks, key="✗?✓-".index) and marks[-1] == "-" and set(marks) == {"✗", "?", "✓", "-"}


def test_output_is_written_atomically_and_failure_keeps_the_old_file(tmp_path: Path) -> None:
    out = tmp_path / "report.json"
    assert run_cli("audit", "--facts", AFTER, "--format", "json", "--output", str(out)).returncode == 1  # a finding
    assert json.loads(out.read_text())["schema_version"] == 1
    assert [p.name for p in tmp_path.iterdir()] == ["report.json"]  # no temporary file left behind
    ro = tmp_path / "ro"
    ro.mkdir()
    old = ro / "report.json"
    old.write_text("old")
    ro.chmod(0o555)
    try:
        proc = run_cli("audit", "--facts", AFTER, "--format", "json", "--output", str(old))
        if os.geteuid() != 0:  # root can write into a read-only directory
            assert proc.returncode == 2 and "cannot write" in proc.stderr
            assert old.read_text() == "old"
    finally:
        ro.chmod(0o755)


def test_live_audit_without_a_driver_completes() -> None:
    """CI has no GPU and no driver: the real NVML path says so and the audit still completes."""
    proc = run_cli("audit", "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    report = json.loads(proc.stdout)
    nvml = next(p for p in report["probes"] if p["name"] == "nvml")
    if nvml["status"] != "ok":
        assert report["facts"]["driver"].get("error")


def test_explain_release_by_release() -> None:
    proc = run_cli("explain", "torch-symm-mem", "--assume-gpu", "12.0")
    assert proc.returncode == 0, proc.stderr
    assert "sglang 0.5.3 … 0.5.13 (11 releases): blocked (crash)" in proc.stdout  # KeyError: 12
    assert "sglang 0.5.14 … 0.5.23 (10 releases): blocked (disabled)" in proc.stdout  # guarded from 0.5.14
    assert "no release in the manifests makes it ok" in proc.stdout
    h200 = run_cli(
        "explain", "torch-symm-mem", "--assume-gpu", "9.0", "--assume-interconnect", "nvswitch", "--format", "json"
    )
    doc = json.loads(h200.stdout)
    (arch,) = doc["architectures"]
    assert any(r["status"] == "ok" for r in arch["ranges"])
    assert {h["hop"] for h in doc["path"]} >= {"admission", "dispatch", "runtime", "kernel"}
    ok = next(r for r in arch["ranges"] if r["status"] == "ok")
    assert ok["hops"] and all(h["result"] in ("pass", "no rule", "not reached") for h in ok["hops"])
    # the same GPUs on PCIe: SGLang finds no multicast after its table lookup and turns the communicator off
    pcie = run_cli(
        "explain", "torch-symm-mem", "--assume-gpu", "9.0", "--assume-interconnect", "pcie", "--format", "json"
    )
    (pcie_arch,) = json.loads(pcie.stdout)["architectures"]
    assert not any(r["status"] == "ok" for r in pcie_arch["ranges"])
    assert "multicast_ptr" in pcie.stdout
    assert run_cli("explain", "torch-symm-mem", "--assume-interconnect", "carrier-pigeon").returncode == 2
    assert run_cli("explain", "no-such-feature").returncode == 2


def test_explain_answers_each_machine_where_their_wheels_differ(tmp_path: Path) -> None:
    """sglang-kernel 0.4.4+ ship no FA3 library in their aarch64 wheels: GPUs without a machine (an assumed
    Hopper: H100, H200 or GH200) get one answer per machine; a facts file that names the machine gets one."""
    doc = json.loads(run_cli("explain", "attention-fa3", "--assume-gpu", "9.0", "--format", "json").stdout)
    x86, arm = doc["architectures"]
    assert (x86["machine"], arm["machine"]) == ("x86_64", "aarch64")
    assert all(r["status"] == "ok" for r in x86["ranges"])
    late = next(r for r in arm["ranges"] if "0.5.20" in r["releases"])
    assert (late["status"], late["effect"]) == ("blocked", "crash") and "flash_ops" in str(late["why"])
    text = run_cli("explain", "attention-fa3", "--assume-gpu", "9.0").stdout
    assert "· aarch64 box (Arm wheels)" in text and "· x86_64 box (x86 wheels)" in text
    # both machines alike: one answer, no machine named
    (one,) = json.loads(run_cli("explain", "torch-symm-mem", "--assume-gpu", "12.0", "--format", "json").stdout)[
        "architectures"
    ]
    assert "machine" not in one
    # the machine named by the facts: its answer only
    saved = json.loads(Path(AFTER).read_text())
    saved["facts"]["gpus"] = [{**g, "compute_capability": "9.0"} for g in saved["facts"]["gpus"]]
    saved["facts"]["system"] = {**(saved["facts"].get("system") or {}), "machine": "aarch64"}
    facts = tmp_path / "gh200.json"
    facts.write_text(json.dumps(saved))
    (gh200,) = json.loads(run_cli("explain", "attention-fa3", "--facts", str(facts), "--format", "json").stdout)[
        "architectures"
    ]
    assert "machine" not in gh200
    assert next(r for r in gh200["ranges"] if "0.5.20" in r["releases"])["status"] == "blocked"


def test_main_catches_internal_errors(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import stackcheck.cli as cli

    def boom(argv: list[str]) -> int:
        raise RuntimeError("kaput")

    monkeypatch.setattr(cli, "main_inner", boom)
    assert main([]) == 4
    err = capsys.readouterr().err
    assert "internal error" in err and "Traceback" not in err
