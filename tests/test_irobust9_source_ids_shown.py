"""irobust9: the id of a source that is a file in a repository (stackcheck.knowledge.sources.derived_id:
`REPO:FILE@REF`, `sglang:server_args.py@v0.5.9`, `sudo:env.c@main`) has the shape of credentials without a scheme
(`user:password@host`), and every public output masked it: `explain attention-flashinfer --sources` cited
`***@v0.6.7`, a gate behind sudo or srun `(***@main +7)`, 86 of the manifests' ids. A source file's name before a
ref (a tag, a branch such as main, a commit) is kept now; credentials before a host stay masked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_process import ROOT, run_stackcheck

from stackcheck.knowledge.sources import derived_id
from stackcheck.redact import public_document, redact_text

IDS = [
    "sglang:server_args.py@v0.5.9", "sudo:env.c@main", "systemd:run.c@main", "DeepEP:deep_ep.cpp@011d766f19",
    "nccl:Makefile@v2.25.1-1", "moby:daemon.go@docker-v29.2.0", "sglang:Dockerfile@924d890f1c",
    "flashinfer:.@fb28d7242", "nvidia-container-toolkit:control@f0ea60a2", "DeepGEMM:layout.hpp@HEAD",
]  # fmt: skip


@pytest.mark.parametrize("source_id", IDS)
def test_a_repository_file_id_is_shown(source_id: str) -> None:
    assert redact_text(source_id) == source_id
    assert redact_text(f"(see {source_id} +3)") == f"(see {source_id} +3)"
    assert redact_text(f"{source_id}:") == f"{source_id}:"


def test_every_repository_file_id_of_the_manifests_is_shown() -> None:
    ids: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, dict):
            if value.get("repo") and value.get("path"):
                ids.add(derived_id(value))
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    for path in sorted((ROOT / "manifests").glob("*.json")):
        walk(json.loads(path.read_text()))
    assert len(ids) > 50
    masked = sorted(i for i in ids if redact_text(i) != i)
    assert masked == []
    doc = {"source": [{"id": i} for i in sorted(ids)]}
    assert public_document(doc) == doc


@pytest.mark.parametrize(
    "text",
    [
        "alice:pw@cache:6555", "user:hunter2@db.example.com", "admin:secret.py@db.example.com",
        "svc:s3cr3t@main.internal", "u:p.txt@10.0.0.1", "LMCACHE_MP_HOST=alice:pw@cache:6555", "bob:pass@v1-host",
    ],
)  # fmt: skip
def test_credentials_before_a_host_stay_masked(text: str) -> None:
    assert "***@" in redact_text(text)


def test_explain_cites_its_repository_files(tmp_path: Path) -> None:
    got = run_stackcheck("explain", "attention-flashinfer", "--sources")
    assert got.returncode == 0, got.stderr
    assert "***@" not in got.stdout
