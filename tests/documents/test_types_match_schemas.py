"""The TypedDicts mypy follows (plan/json_shapes.py, documents/types.py, knowledge/types.py) name the same keys as
the schemas that describe the documents: a key added to one and not the other fails here, so the types
cannot drift from what the JSON documents and the manifests hold."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from stackcheck.documents import types as doc_types
from stackcheck.knowledge import types as manifest_types
from stackcheck.plan import json_shapes as plan_model

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def _schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((SCHEMAS / name).read_text(encoding="utf-8"))
    return data


def _keys(td: Any) -> set[str]:
    return set(td.__required_keys__) | set(td.__optional_keys__)


def _properties(node: dict[str, Any]) -> set[str]:
    return set(node.get("properties") or {})


REPORT = _schema("report.schema.json")
FLEET = _schema("fleet.schema.json")


@pytest.mark.parametrize(
    ("typed", "node"),
    [
        pytest.param(plan_model.PlanJSON, REPORT["$defs"]["plan"], id="plan"),
        pytest.param(plan_model.StepJSON, REPORT["$defs"]["plan"]["properties"]["steps"]["items"], id="plan-step"),
        pytest.param(
            plan_model.BlockedJSON, REPORT["$defs"]["plan"]["properties"]["still_blocked"]["items"], id="blocked"
        ),
        pytest.param(doc_types.FleetSummary, FLEET, id="fleet"),
        pytest.param(doc_types.FleetInputs, FLEET["properties"]["inputs"], id="fleet-inputs"),
        pytest.param(doc_types.FleetBad, FLEET["properties"]["bad"]["items"], id="fleet-bad"),
        pytest.param(doc_types.FleetDuplicate, FLEET["properties"]["duplicates"]["items"], id="fleet-duplicate"),
        pytest.param(doc_types.HostChange, _schema("diff.schema.json")["$defs"]["host_change"], id="fleet-host-change"),
    ],
)
def test_a_document_type_names_the_schema_keys(typed: Any, node: dict[str, Any]) -> None:
    assert _keys(typed) == _properties(node)


def test_the_schema_required_keys_are_required_in_the_plan_type() -> None:
    node = REPORT["$defs"]["plan"]["properties"]["steps"]["items"]
    assert set(node["required"]) <= set(plan_model.StepJSON.__required_keys__)


def _manifest_cases() -> list[Any]:
    launch = _schema("launch.schema.json")
    recommend = _schema("recommend.schema.json")
    return [
        pytest.param(manifest_types.Meta, _schema("meta.schema.json"), id="meta"),
        pytest.param(manifest_types.Signature, _schema("signatures.schema.json")["$defs"]["signature"], id="signature"),
        pytest.param(manifest_types.Launch, launch, id="launch"),
        pytest.param(manifest_types.LaunchEntrypoint, launch["$defs"]["entrypoint"], id="launch-entrypoint"),
        pytest.param(manifest_types.LaunchOption, launch["$defs"]["option"], id="launch-option"),
        pytest.param(manifest_types.OptionRelease, launch["$defs"]["release"], id="launch-release"),
        pytest.param(manifest_types.LaunchEnv, launch["$defs"]["env"], id="launch-env"),
        pytest.param(manifest_types.LaunchDefault, launch["$defs"]["default"], id="launch-default"),
        pytest.param(manifest_types.ReleaseFlags, launch["$defs"]["release_flags"], id="launch-release-flags"),
        pytest.param(manifest_types.Recommend, recommend, id="recommend"),
        pytest.param(manifest_types.Decision, recommend["$defs"]["decision"], id="decision"),
        pytest.param(manifest_types.RecommendOption, recommend["$defs"]["option"], id="recommend-option"),
        pytest.param(manifest_types.Never, recommend["$defs"]["never"], id="never"),
        pytest.param(manifest_types.Settings, recommend["$defs"]["settings"], id="settings"),
        pytest.param(manifest_types.Unset, recommend["$defs"]["unset"], id="unset"),
        pytest.param(manifest_types.Preflight, _schema("preflight.schema.json"), id="preflight"),
    ]


@pytest.mark.parametrize(("typed", "node"), _manifest_cases())
def test_a_manifest_type_names_the_schema_keys(typed: Any, node: dict[str, Any]) -> None:
    # a manifest file may say which schema it follows and what it is: nothing reads those two keys
    assert _keys(typed) == _properties(node) - {"$schema", "description"}
