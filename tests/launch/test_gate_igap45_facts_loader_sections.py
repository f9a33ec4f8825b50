"""igap45 (issue 16, loader item 3): `gate --facts FILE -- env LD_LIBRARY_PATH=/x python -m sglang.launch_server ...`.
igap43 made the saved `cuda_libs` answers that the launch's own LD_LIBRARY_PATH may change unknown; three other answers
were read with the same loader path and were still taken as the launch's: the --deep `libs` section (every object's
libraries resolved through LD_LIBRARY_PATH: glibc elf/dl-load.c _dl_map_object, readers/libs.py resolve_object), the
kernel symbol section's driver half (read in the libcuda.so.1 the loader found: a launch whose /x holds the toolkit's
stubs/libcuda.so.1 or an older copy loads that one) and the jit section's bare SGLANG_NCCL_SO_PATH name (looked up
through LD_LIBRARY_PATH: jit._nccl_so_path_bare_name; the copy read is not recorded). Now each is unknown with the
reason where the launch's path could change it, and stands where it cannot. The live `--deep` probe read the audit's
own LD_LIBRARY_PATH, not the gated command's: now the command's (ProbeContext.loader_environ)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, cli_json, model_dir, release_box

from stackcheck.launch.facts_loader_path import apply_launch_loader_path

LIBCUDA = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
NAME = "libnccl-igap45.so.2"


def _facts() -> dict[str, Any]:
    return {
        "cuda_libs": {
            "libnuma.so.1": "/usr/lib/x86_64-linux-gnu/libnuma.so.1",
            "ld_cache": "file",
            "ld_library_path": ["/opt/a"],
        },
        "libs": {"ld_cache": "file", "packages": {}, "warnings": [], "version_failures": []},
        "kernel_symbols": {
            "libcuda": LIBCUDA,
            "files": [{"path": "common_ops.so", "driver_symbols": 3, "driver_missing_count": 0, "driver_missing": []}],
            "modules": [{"module": "flash_ops", "driver_missing_count": 1, "driver_missing": ["cuFoo"]}],
        },
        "jit": {
            "nccl_so_path": NAME,
            "nccl_so_path_found": True,
            "nccl_so_path_cuda": "12.9",
            "nccl_so_path_cuda_major": 12,
            "nccl_so_path_version": "2.27.7",
        },
    }


def test_a_launch_with_another_loader_path_makes_the_other_loader_answers_unknown() -> None:
    # fails before: each section stood as the facts had it (the driver half passed on the facts' libcuda)
    facts = _facts()
    before = json.dumps(facts, sort_keys=True)
    got = apply_launch_loader_path(facts, ["env", "LD_LIBRARY_PATH=/opt/old", "python3"], {})
    assert got == ["libnuma.so.1"]
    assert "/opt/old" in facts["libs"]["launch_loader_path"]
    files = facts["kernel_symbols"]["files"] + facts["kernel_symbols"]["modules"]
    assert all("driver_missing_count" not in f and LIBCUDA in f["driver_error"] for f in files), files
    assert facts["jit"]["nccl_so_path_found"] is None and "nccl_so_path_cuda" not in facts["jit"]
    assert NAME in facts["jit"]["nccl_so_path_reason"]
    assert json.dumps(_facts(), sort_keys=True) == before  # (the sections replaced, the facts' own left as read)


def test_the_answers_stand_where_the_launch_cannot_change_them() -> None:
    facts = _facts()
    assert apply_launch_loader_path(facts, ["env", "LD_LIBRARY_PATH=/opt/a/", "python3"], {}) == []
    assert facts == _facts()
    # a launch whose every directory the facts searched (found past them: the same libcuda); the rest unknown
    facts = _facts()
    apply_launch_loader_path(facts, ["env", "-u", "LD_LIBRARY_PATH", "python3"], {})
    assert facts["kernel_symbols"] == _facts()["kernel_symbols"]
    assert "launch_loader_path" in facts["libs"] and facts["jit"]["nccl_so_path_found"] is None
    # the default name libnccl.so.2 (torch's own NCCL, igap40) and a path are not looked up through the loader path
    for value in ("libnccl.so.2", "/opt/nccl/libnccl.so.2"):
        facts = _facts()
        facts["jit"]["nccl_so_path"] = value
        apply_launch_loader_path(facts, ["env", "LD_LIBRARY_PATH=/opt/old", "python3"], {})
        assert facts["jit"]["nccl_so_path_found"] is True, value


def test_check_shared_libs_is_unknown_on_such_facts() -> None:
    from stackcheck.verdicts.context import Context
    from stackcheck.verdicts.engine import builtin_shared_libs
    from stackcheck.verdicts.kernel_symbols import driver_api_reasons, driver_symbols_decide

    facts = _facts()
    facts["driver"] = {"version": "580.95.05", "source": "nvml"}
    ctx = Context(facts=facts, manifests=None)  # type: ignore[arg-type]
    assert [r["result"] for r in builtin_shared_libs(ctx)] == ["pass"]
    assert driver_symbols_decide(ctx)
    apply_launch_loader_path(facts, ["env", "LD_LIBRARY_PATH=/opt/old", "python3"], {})
    ctx = Context(facts=facts, manifests=None)  # type: ignore[arg-type]
    reasons = builtin_shared_libs(ctx)
    assert [r["result"] for r in reasons] == ["unknown"] and "/opt/old" in reasons[0]["message"], reasons
    assert not driver_symbols_decide(ctx) and driver_api_reasons(ctx) == []  # the release-number checks decide


def test_gate_facts_a_bare_nccl_name_under_another_loader_path_is_unknown(tmp_path: Path) -> None:
    # fails before: the facts' copy (CUDA 12.9) was judged as the launch's, nccl-so-path-cuda-unread never asked
    box = release_box(tmp_path, "0.5.11", "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["jit"].update(_facts()["jit"])
    doc["facts"]["cuda_libs"] = {"ld_cache": "file", "ld_library_path": ["/opt/a"]}
    box.write_text(json.dumps(doc))
    model = str(model_dir(tmp_path, "m", LLAMA3))

    def rules(prefix: list[str]) -> dict[str, str]:
        line = [*prefix, "python3", "-m", "sglang.launch_server", "--model-path", model, "--tp", "2"]
        _, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])
        return {str(x.get("rule")): str(x.get("result")) for r in out.get("reasons") or [] for x in r["reasons"]}

    assert "nccl-so-path-cuda-unread" not in rules(["env", "LD_LIBRARY_PATH=/opt/a"])
    assert rules(["env", "LD_LIBRARY_PATH=/opt/old"]).get("nccl-so-path-cuda-unread") == "unknown"


def test_the_live_deep_probe_reads_the_launchs_loader_path(monkeypatch: Any, tmp_path: Path) -> None:
    # fails before: the audit's own LD_LIBRARY_PATH (ProbeContext.env) was the libs probe's
    import stackcheck.readers.libs as libs_reader
    from stackcheck.probes.deep import LibsProbe
    from stackcheck.probes.interface import ProbeContext

    seen: list[dict[str, str]] = []

    def fake_probe_libs(facts: Any, env: dict[str, str], **kw: Any) -> dict[str, Any]:
        seen.append(dict(env))
        return {"ld_cache": "file", "packages": {}}

    monkeypatch.setattr(libs_reader, "probe_libs", fake_probe_libs)
    ctx = ProbeContext(env={"LD_LIBRARY_PATH": "/audit"}, launch_env={"LD_LIBRARY_PATH": "/launch"}, root=tmp_path,
                       cache_dir="")  # fmt: skip
    LibsProbe().run(ctx)
    assert seen == [{"LD_LIBRARY_PATH": "/launch"}]
