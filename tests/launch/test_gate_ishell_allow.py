"""ishell: `--allow` takes every id a refusal of the gate names, the preflight package checks included
(`transfer-package`, `moe-a2a-package`, `quant-package`, `w4afp8-moe-gpu`), which check_allow did not know before
(exit 2, 'unknown feature or check transfer-package'); an unknown id's one-line error lists the valid ones."""

from __future__ import annotations

import ast
import subprocess
from pathlib import Path

import pytest
from cli_process import clean_env, run_stackcheck

from stackcheck.errors import UsageError
from stackcheck.launch import gate, gate_preflight
from stackcheck.launch.preflight import Preflight
from stackcheck.launch.preflight.result import CheckResult

ROOT = Path(__file__).resolve().parents[2]
SM120 = ROOT / "tests" / "cases" / "writeup-after" / "facts.json"
PACKAGE_CHECKS = ["transfer-package", "moe-a2a-package", "quant-package", "w4afp8-moe-gpu"]


def _result_ids() -> set[str]:
    """The check ids the preflight code builds CheckResults with, read from its source (stackcheck/launch and the
    package checks the core judges too, verdicts/package_checks.py): a string given first, or a module's
    `...CHECK = "id"` constant (package_checks.py hands its three to shared helpers as `check`)."""
    out: set[str] = set()
    paths = [*(ROOT / "stackcheck" / "launch").rglob("*.py"), ROOT / "stackcheck" / "verdicts" / "package_checks.py"]
    for path in paths:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
                if any(isinstance(t, ast.Name) and t.id.endswith("CHECK") for t in node.targets):
                    out.add(str(node.value.value))
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "CheckResult" and node.args:
                first = node.args[0]
                if isinstance(first, ast.Constant):
                    out.add(str(first.value))
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.IfExp):  # model.py: check = "model" if ...
                if any(isinstance(t, ast.Name) and t.id == "check" for t in node.targets):
                    sides = (node.value.body, node.value.orelse)
                    out.update(str(v.value) for v in sides if isinstance(v, ast.Constant))
    return out


def test_every_preflight_check_id_is_allowable() -> None:
    found = _result_ids()
    assert set(PACKAGE_CHECKS) | {"gpu-count", "model", "draft-model", "port"} <= found  # (the scan reads them)
    assert found <= set(gate_preflight.preflight_checks())
    assert sorted(gate_preflight.check_allow(sorted(found), [])) == sorted(found)


@pytest.mark.parametrize("check", PACKAGE_CHECKS)
def test_an_allowed_package_check_is_let_through(check: str) -> None:
    result = CheckResult(check, "fail", "not installed", "nixl", "nixl is not installed", None, "nixl")
    decision = gate.Decision(allow=True, blocking=[], warnings=[], checked=[])
    gate_preflight.merge(decision, _preflight([result]), allow_unknown=False)
    assert [b.feature for b in decision.blocking] == [f"{check} (nixl)"]
    allowed = gate.apply_policy(decision, False, gate_preflight.check_allow([check], []))
    assert allowed == [check] and decision.allow and not decision.blocking
    assert decision.warnings[0].reasons[-1]["message"] == f"allowed on purpose (--allow {check}): not refused"


def test_an_unknown_id_lists_the_valid_ones() -> None:
    with pytest.raises(UsageError) as err:
        gate_preflight.check_allow(["warp-drive"], [{"id": "attention-fa3"}], [{"id": "driver-userspace-match"}])
    message = str(err.value)
    assert message.startswith("--allow: unknown feature or check warp-drive (features: attention-fa3; ")
    assert "stack checks: driver-userspace-match;" in message and "\n" not in message
    assert all(c in message for c in gate_preflight.preflight_checks())


def _preflight(results: list[CheckResult]) -> Preflight:
    return Preflight(results=results, models=[], requirements=[], launch={})


def test_the_cli_takes_a_package_check_id() -> None:
    env = clean_env("HF_", "CUDA_", PYTHONPATH=str(ROOT))
    cmd = ["gate", "--facts", str(SM120), "--dry-run", "--allow-unknown"]
    launch = ["--", "python", "-m", "sglang.launch_server", "--tp", "4"]
    runs = {}
    for value in ("transfer_package,quant-package", "transfer-pkg"):
        runs[value] = run_stackcheck(*cmd, "--allow", value, *launch, env=env, stdin=subprocess.DEVNULL)
    assert runs["transfer_package,quant-package"].returncode != 2, runs["transfer_package,quant-package"].stderr
    bad = runs["transfer-pkg"]
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "unknown feature or check transfer-pkg (" in bad.stderr and "transfer-package" in bad.stderr
