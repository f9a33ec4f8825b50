"""audit --format prometheus (parsed with prometheus_client's real parser) and --format nfd (every label
checked against Kubernetes' label rules, with hostile versions from hypothesis), and the deployment examples
under examples/ (YAML parses, shell scripts pass `bash -n`, systemd units pass `systemd-analyze verify`)."""

from __future__ import annotations

import copy
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, cast

import pytest

from stackcheck.cli import main
from stackcheck.documents.types import Report
from stackcheck.redact import terminal_safe
from stackcheck.render import REPORT_FORMATS
from stackcheck.render.nfd import nfd_labels, render_nfd, sanitize
from stackcheck.render.prometheus import escape_label, render_prometheus

ROOT = Path(__file__).resolve().parent.parent.parent
CASES = sorted(p.name for p in (ROOT / "tests" / "cases").iterdir() if (p / "facts.json").is_file())

# Kubernetes label rules (apimachinery validation): an optional DNS-subdomain prefix and '/', a name of at most
# 63 characters; a value empty or at most 63 characters of the same alphabet.
K8S_NAME = re.compile(r"^[a-zA-Z0-9]([-a-zA-Z0-9_.]*[a-zA-Z0-9])?$")
DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def k8s_label_ok(name: str, value: str) -> bool:
    prefix, slash, local = name.rpartition("/")
    if slash and not (0 < len(prefix) <= 253 and DNS_SUBDOMAIN.match(prefix)):
        return False
    if not (0 < len(local) <= 63 and K8S_NAME.match(local)):
        return False
    return value == "" or (len(value) <= 63 and bool(K8S_NAME.match(value)))


_REPORTS: dict[str, Report] = {}


def report_for(case: str) -> Report:
    if case not in _REPORTS:
        from stackcheck.assembly.options import Options
        from stackcheck.assembly.pipeline import build_report

        _REPORTS[case], _ = build_report(Options(facts_file=str(ROOT / "tests" / "cases" / case / "facts.json")))
    return copy.deepcopy(_REPORTS[case])


def test_renderers_registered() -> None:
    assert "prometheus" in REPORT_FORMATS
    assert "nfd" in REPORT_FORMATS


# --- prometheus ------------------------------------------------------------------------------------------


def parse_prom(text: str) -> dict[str, Any]:
    parser = pytest.importorskip("prometheus_client.parser", reason="prometheus-client is in the test extras")
    return {f.name: f for f in parser.text_string_to_metric_families(text)}


@pytest.mark.parametrize("case", CASES)
def test_prometheus_parses_with_real_parser(case: str) -> None:
    report = report_for(case)
    text = render_prometheus(report)
    assert text.endswith("\n")
    fams = parse_prom(text)
    for name in (
        "stackcheck_info",
        "stackcheck_gpus",
        "stackcheck_feature_status",
        "stackcheck_check_status",
        "stackcheck_audit_timestamp_seconds",
        "stackcheck_audit_consistent",
    ):
        assert name in fams, name
        assert fams[name].type == "gauge"
        assert fams[name].documentation
    assert len(fams["stackcheck_info"].samples) == 1
    assert fams["stackcheck_info"].samples[0].value == 1
    consistent = fams["stackcheck_audit_consistent"].samples[0].value
    assert consistent == (1 if report["summary"]["consistent"] else 0)
    # one-hot: per feature exactly one status is 1, and it is the report's status
    by_feature: dict[str, list[tuple[str, float]]] = {}
    for s in fams["stackcheck_feature_status"].samples:
        by_feature.setdefault(s.labels["feature"], []).append((s.labels["status"], s.value))
    assert set(by_feature) == {f["id"] for f in report["features"]}
    for f in report["features"]:
        ones = [st for st, v in by_feature[f["id"]] if v == 1]
        assert ones == [f["status"]]
        assert {st for st, _ in by_feature[f["id"]]} >= {"ok", "blocked", "unknown", "not-applicable"}
    by_check: dict[str, list[str]] = {}
    for s in fams["stackcheck_check_status"].samples:
        if s.value == 1:
            by_check.setdefault(s.labels["check"], []).append(s.labels["status"])
    assert by_check == {c["id"]: [c["status"]] for c in report["checks"]}
    gpus = sum(s.value for s in fams["stackcheck_gpus"].samples)
    assert gpus == len(report["facts"].get("gpus") or [])


def test_prometheus_writeup_after_values() -> None:
    fams = parse_prom(render_prometheus(report_for("writeup-after")))
    info = fams["stackcheck_info"].samples[0].labels
    assert info["driver"] == "580.95.05"
    assert info["cuda"] == "13.0"
    assert info["torch"] == "2.9.1+cu130"
    assert info["sglang"] == "0.5.9"
    blocked = [
        s.labels
        for s in fams["stackcheck_feature_status"].samples
        if s.labels["feature"] == "torch-symm-mem" and s.value == 1
    ]
    assert blocked == [{"feature": "torch-symm-mem", "status": "blocked", "effect": "crash"}]
    g = fams["stackcheck_gpus"].samples[0]
    assert g.labels == {"model": "NVIDIA RTX PRO 6000 Blackwell Server Edition", "cc": "12.0"}
    assert g.value == 8
    ts = fams["stackcheck_audit_timestamp_seconds"].samples[0].value
    assert ts == 1795910400.0  # 2026-11-29T00:00:00Z


def test_prometheus_escapes_hostile_labels() -> None:
    report = report_for("writeup-after")
    hostile = 'evil"host\\name\nsecond line'
    report["host"]["hostname"] = hostile
    report["facts"]["packages"]["torch"]["version"] = '2.9.1"} 1\nfake_metric 1'
    report["facts"]["gpus"][0]["name"] = 'GPU \\ with "quotes"\n'
    text = render_prometheus(report)
    fams = parse_prom(text)
    assert "fake_metric" not in fams
    info = fams["stackcheck_info"].samples[0].labels
    assert info["hostname"] == hostile
    assert info["torch"] == '2.9.1"} 1\nfake_metric 1'
    assert any(s.labels["model"] == 'GPU \\ with "quotes"\n' for s in fams["stackcheck_gpus"].samples)
    assert escape_label('a\\b"c\nd') == 'a\\\\b\\"c\\nd'


def test_status_constants_are_the_engines_statuses() -> None:
    """The one-hot series list every status the engine can give, from the core's constants (the Prometheus
    renderer does not read the fleet's)."""
    from typing import get_args

    from stackcheck.documents.report import CHECK_STATUSES, FEATURE_STATUSES
    from stackcheck.verdicts.types import CheckStatus, Status

    assert sorted(FEATURE_STATUSES) == sorted(get_args(Status))
    assert sorted(CHECK_STATUSES) == sorted(get_args(CheckStatus))
    families = parse_prom(render_prometheus(report_for("writeup-after")))
    shown = {s.labels["status"] for s in families["stackcheck_feature_status"].samples}
    assert shown == set(FEATURE_STATUSES)


def test_prometheus_minimal_document() -> None:
    fams = parse_prom(render_prometheus({"schema_version": 1, "facts": {}}))
    assert fams["stackcheck_audit_consistent"].samples[0].value == 0
    assert fams["stackcheck_audit_timestamp_seconds"].samples[0].value > 0


def test_audit_cli_prometheus_output_file(tmp_path: Path) -> None:
    out = tmp_path / "stackcheck.prom"
    facts = str(ROOT / "tests" / "cases" / "h200-newest" / "facts.json")
    rc = main(["audit", "--facts", facts, "--format", "prometheus", "--output", str(out)])
    assert rc in (0, 1)
    fams = parse_prom(out.read_text())
    assert "stackcheck_info" in fams
    assert [p.name for p in tmp_path.iterdir()] == ["stackcheck.prom"]  # no temporary file left behind


# --- nfd -------------------------------------------------------------------------------------------------


def parse_nfd(text: str) -> dict[str, str]:
    """The features.d format as NFD's local source reads it: '#' lines are comments, name[=value]."""
    out = {}
    for raw in text.split("\n"):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        name, eq, value = line.partition("=")
        out[name] = value if eq else "true"
    return out


@pytest.mark.parametrize("case", CASES)
def test_nfd_labels_valid(case: str) -> None:
    report = report_for(case)
    text = render_nfd(report)
    labels = parse_nfd(text)
    assert labels == nfd_labels(report)
    assert labels
    for name, value in labels.items():
        assert name.startswith("stackcheck.io/")
        assert k8s_label_ok(name, value), (name, value)
    for line in text.splitlines():
        assert not line.startswith("# +"), "would be read as an NFD directive"
    assert len(text.encode()) < 65536  # NFD skips feature files over 64 KiB
    for f in report["features"]:
        assert labels[f"stackcheck.io/feature.{f['id']}"] == f["status"]


def test_nfd_writeup_after_values() -> None:
    labels = nfd_labels(report_for("writeup-after"))
    assert labels["stackcheck.io/feature.torch-symm-mem"] == "blocked"
    assert labels["stackcheck.io/gpu.sm"] == "120"
    assert labels["stackcheck.io/gpu.count"] == "8"
    assert labels["stackcheck.io/stack.sglang"] == "0.5.9"
    assert labels["stackcheck.io/stack.torch"] == "2.9.1-cu130"
    assert labels["stackcheck.io/consistent"] == "false"  # its pin mismatch warns; triton-ptxas fails (gather4, 12.0)


def test_nfd_no_gpu() -> None:
    labels = nfd_labels(report_for("no-driver"))
    assert labels["stackcheck.io/gpu.count"] == "0"
    assert "stackcheck.io/gpu.sm" not in labels
    assert "stackcheck.io/stack.driver" not in labels


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2.9.1+cu130", "2.9.1-cu130"),
        ("0.5.9", "0.5.9"),
        ("+local", "local"),
        ("a b\nc", "a-b-c"),
        ("", ""),
        ("---", ""),
        ("ünïcode", "n-code"),
    ],
)
def test_sanitize_examples(raw: str, expected: str) -> None:
    assert sanitize(raw, 63) == expected


def test_sanitize_long_values_stay_distinct() -> None:
    a = sanitize("1." + "9" * 100 + "a", 63)
    b = sanitize("1." + "9" * 100 + "b", 63)
    assert a != b
    assert len(a) <= 63
    assert k8s_label_ok("stackcheck.io/x", a)


def _hostile_report(version: str, feature_id: str, hostname: str) -> Report:
    report = report_for("writeup-after")
    report["facts"]["packages"]["torch"]["version"] = version
    report["facts"]["packages"]["sglang"]["version"] = version
    report["facts"]["driver"]["version"] = version
    report["facts"]["gpus"][0]["name"] = version
    report["facts"]["gpus"][0]["compute_capability"] = version
    report["features"][0]["id"] = feature_id
    report["features"][0]["status"] = cast(Any, version)  # not a status: the renderers must stay safe
    report["host"]["hostname"] = hostname
    return report


def test_nfd_hostile_versions_hypothesis() -> None:
    import hypothesis as hyp  # in the test extras
    from hypothesis import strategies as st

    @hyp.settings(max_examples=150, deadline=None, database=None)
    @hyp.given(st.text(max_size=200), st.text(max_size=120), st.text(max_size=80))
    def check(version: str, feature_id: str, hostname: str) -> None:
        report = _hostile_report(version, feature_id, hostname)
        text = render_nfd(report)
        labels = parse_nfd(text)
        assert labels == nfd_labels(report)
        for name, value in labels.items():
            assert k8s_label_ok(name, value), (name, value)
        prom = render_prometheus(report)
        fams = parse_prom(prom)
        # the value round-trips, its controls as the visible escapes a terminal shows (never raw: the same
        # text goes to a terminal without --output; tests/test_secrets_every_verb.py)
        assert fams["stackcheck_info"].samples[0].labels["torch"] == terminal_safe(version)
        assert not any(ch in prom for ch in "\x1b\x07\x9b\u202e")

    check()


def test_audit_cli_nfd_output_file(tmp_path: Path) -> None:
    out = tmp_path / "stackcheck"
    facts = str(ROOT / "tests" / "cases" / "writeup-after" / "facts.json")
    rc = main(["audit", "--facts", facts, "--format", "nfd", "--output", str(out)])
    assert rc == 1  # writeup-after's one failed stack check is triton-ptxas (its pin mismatch warns)
    labels = parse_nfd(out.read_text())
    assert labels["stackcheck.io/feature.torch-symm-mem"] == "blocked"


# --- examples --------------------------------------------------------------------------------------------

EXAMPLES = ROOT / "examples"


def test_k8s_examples_parse() -> None:
    yaml = pytest.importorskip("yaml", reason="pyyaml is not installed")
    ds = list(yaml.safe_load_all((EXAMPLES / "k8s" / "daemonset.yaml").read_text()))
    kinds = [d["kind"] for d in ds if d]
    assert "DaemonSet" in kinds
    daemon = next(d for d in ds if d and d["kind"] == "DaemonSet")
    spec = daemon["spec"]["template"]["spec"]
    text = json.dumps(spec)
    assert "--format" in text
    assert "nfd" in text
    assert "/etc/kubernetes/node-feature-discovery/features.d" in text
    assert any("hostPath" in v for v in spec["volumes"])
    pods = [d for d in yaml.safe_load_all((EXAMPLES / "k8s" / "pod-requires-feature.yaml").read_text()) if d]
    needs = json.dumps(pods)
    assert "stackcheck.io/feature.torch-symm-mem" in needs
    for doc in pods:
        for expr in _match_expressions(doc):
            assert k8s_label_ok(expr["key"], "ok")
    sel = pods[0]["spec"].get("nodeSelector") or {}
    for k, v in sel.items():
        assert k8s_label_ok(k, v)


def _match_expressions(doc: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "matchExpressions" and isinstance(v, list):
                found.extend(v)
            else:
                found.extend(_match_expressions(v))
    elif isinstance(doc, list):
        for v in doc:
            found.extend(_match_expressions(v))
    return found


SHELL_SCRIPTS = [EXAMPLES / "slurm" / "prolog.sh", EXAMPLES / "cron" / "stackcheck"]


@pytest.mark.parametrize("script", SHELL_SCRIPTS, ids=lambda p: str(p.relative_to(EXAMPLES)))
def test_shell_examples_bash_n(script: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    text = script.read_text()
    if script.parent.name == "cron":
        # a cron.d file: the command part of each entry must be valid shell
        lines = [ln for ln in text.splitlines() if ln.strip() and not ln.startswith("#") and "=" not in ln.split()[0]]
        assert lines, "no cron entry"
        for ln in lines:
            fields = ln.split(None, 6)
            assert len(fields) == 7, ln
            assert fields[5] == "root"
            proc = subprocess.run([bash, "-n", "-c", fields[6]], capture_output=True, text=True, timeout=30)
            assert proc.returncode == 0, proc.stderr
    else:
        proc = subprocess.run([bash, "-n", str(script)], capture_output=True, text=True, timeout=30)
        assert proc.returncode == 0, proc.stderr


def test_slurm_prolog_runs_with_fake_stackcheck(tmp_path: Path) -> None:
    bash = shutil.which("bash")
    if bash is None:
        pytest.skip("bash is not installed")
    fake = tmp_path / "bin" / "stackcheck"
    fake.parent.mkdir()
    for rc, expect_fail in ((0, False), (1, True), (3, False)):
        fake.write_text(f'#!/bin/sh\necho "$@" >> {tmp_path}/args\nexit {rc}\n')
        fake.chmod(0o755)
        env = {
            "PATH": f"{fake.parent}:/usr/bin:/bin",
            "SLURM_JOB_ID": "42",
            "STACKCHECK_REPORT_DIR": str(tmp_path / "reports"),
        }
        proc = subprocess.run(
            [bash, str(EXAMPLES / "slurm" / "prolog.sh")], capture_output=True, text=True, env=env, timeout=30
        )
        assert (proc.returncode != 0) == expect_fail, (rc, proc.stdout, proc.stderr)
        first = (tmp_path / "args").read_text().splitlines()[0]
        (tmp_path / "args").unlink()
        assert first.startswith("audit ")
        assert "--format json" in first
        assert f"--output {tmp_path / 'reports' / '42.json'}" in first


def test_systemd_units_verify(tmp_path: Path) -> None:
    service = EXAMPLES / "systemd" / "stackcheck-textfile.service"
    timer = EXAMPLES / "systemd" / "stackcheck-textfile.timer"
    text = service.read_text()
    assert "--format prometheus" in text
    assert "/var/lib/node_exporter/textfile_collector/stackcheck.prom" in text
    assert "OnCalendar" in timer.read_text() or "OnUnitActiveSec" in timer.read_text()
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    # verify copies whose ExecStart points at an executable that exists here
    for unit in (service, timer):
        body = unit.read_text().replace("/usr/local/bin/stackcheck", "/bin/true")
        (tmp_path / unit.name).write_text(body)
    proc = subprocess.run(
        [analyze, "verify", "--man=no", str(tmp_path / service.name), str(tmp_path / timer.name)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    # every complaint about our units names their file; anything else is about this machine's systemd
    problems = [ln for ln in (proc.stdout + proc.stderr).splitlines() if str(tmp_path) in ln]
    if proc.returncode != 0 and not problems:
        pytest.skip(f"systemd-analyze cannot run here: {(proc.stderr.strip() or 'no output').splitlines()[0]}")
    assert not problems, proc.stdout + proc.stderr
