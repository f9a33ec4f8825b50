"""--enable-pdmux on a driver older than CUDA 12.4 (irev45): SGLang's PD-multiplexing makes its SM partitions with
CUDA green contexts through sgl_kernel.spatial, whose spatial_ops extension links the green-context driver API
(cuGreenCtxCreate, cuDevSmResourceSplitByCount, cuCtxFromGreenCtx) from libcuda.so.1. On a driver of CUDA 12.2
(R535, which still runs the CUDA 12.8 torch SGLang pins through minor-version compatibility) the extension does not
load and the scheduler stops at start: the feature was ok on SM90 there (a false pass)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from registry_wheels import extract, fetch_wheel, read_texts

from stackcheck.cli import main
from stackcheck.readers.elf import DynamicSymbols, ElfFile

RULE = "green-contexts-driver-cuda"


def _facts(tmp_path: Path, driver: dict[str, str] | None, cc: str = "9.0", sglang: str = "0.5.18") -> Path:
    facts: dict[str, Any] = {
        "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "compute_capability": cc}],
        "packages": {"sglang": {"installed": True, "version": sglang}},
    }
    if driver is not None:
        facts["driver"] = {**driver, "source": "nvml"}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    return path


def _feature(tmp_path: Path, capsys: pytest.CaptureFixture[str], **kw: Any) -> dict[str, Any]:
    main(["audit", "--facts", str(_facts(tmp_path, **kw)), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    return next(f for f in report["features"] if f["id"] == "pd-multiplexing")


R535 = {"version": "535.230.02", "cuda": "12.2"}
R550 = {"version": "550.54.14", "cuda": "12.4"}
R580 = {"version": "580.159.04", "cuda": "13.0"}


@pytest.mark.parametrize("sglang", ["0.5.5", "0.5.18", "0.5.23"])
def test_pdmux_on_a_cuda_12_2_driver_is_blocked_on_sm90(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], sglang: str
) -> None:
    feature = _feature(tmp_path, capsys, driver=R535, sglang=sglang)
    assert feature["status"] == "blocked"
    failed = [r for r in feature["reasons"] if r["result"] == "fail"]
    assert [r["rule"] for r in failed] == [RULE]
    assert "12.2" in failed[0]["message"] and "cuGreenCtxCreate" in failed[0]["message"]


@pytest.mark.parametrize("driver", [R550, R580], ids=["r550-cuda12.4", "r580-cuda13.0"])
def test_pdmux_on_a_driver_with_green_contexts_stays_ok_on_sm90(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], driver: dict[str, str]
) -> None:
    assert _feature(tmp_path, capsys, driver=driver)["status"] == "ok"


def test_pdmux_without_the_drivers_cuda_is_never_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _feature(tmp_path, capsys, driver=None)["status"] == "unknown"


def test_the_gate_refuses_pdmux_on_a_cuda_12_2_driver(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--enable-pdmux"]
    argv += ["--chunked-prefill-size", "-1", "--disable-overlap-schedule"]
    code = main(["gate", "--facts", str(_facts(tmp_path, R535)), "--", *argv])
    out = capsys.readouterr().out
    assert code != 0 and "REFUSE pd-multiplexing" in out
    code = main(["gate", "--dry-run", "--facts", str(_facts(tmp_path, R550)), "--", *argv])
    assert "REFUSE pd-multiplexing" not in capsys.readouterr().out


GREEN_CONTEXT_API = {"cuGreenCtxCreate", "cuDevSmResourceSplitByCount", "cuCtxFromGreenCtx"}


@pytest.mark.registry
@pytest.mark.parametrize(("dist", "version"), [("sgl-kernel", "0.3.21"), ("sglang-kernel", "0.4.10")])
def test_the_kernel_packages_spatial_ops_link_the_green_context_driver_api(
    tmp_path: Path, dist: str, version: str
) -> None:
    wheel = fetch_wheel(dist, version)
    member = "sgl_kernel/spatial_ops.abi3.so"
    extract(wheel, tmp_path, lambda n: n == member)
    with ElfFile(tmp_path / member) as elf:
        syms = DynamicSymbols(elf)
        assert "libcuda.so.1" in syms.needed
        assert set(syms.undefined()) >= GREEN_CONTEXT_API
    (spatial,) = read_texts(wheel, lambda n: n == "sgl_kernel/spatial.py").values()
    assert "spatial_ops" in spatial and "12.4" in spatial  # imported under try; the error names the driver


def _gate_sm120(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    argv = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--enable-pdmux"]
    argv += ["--chunked-prefill-size", "-1", "--disable-overlap-schedule", *flags]
    main(["gate", "--dry-run", "--format", "json", "--facts", str(_facts(tmp_path, R580, cc="12.0")), "--", *argv])
    doc = json.loads(capsys.readouterr().out)
    return next(r for r in doc["reasons"] if r["feature"] == "pd-multiplexing")


def test_a_pdmux_config_on_sm120_is_unknown_not_blocked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """sm-division-majors' own message says a --pdmux-config-path YAML with manual_divisions avoids the table (SGLang
    0.5.5-0.5.23 pdmux_context.initialize_stream_groups), yet with one given the gate said blocked all the same. The
    YAML is not read, so the verdict is unknown there (never ok); without the flag it stays blocked."""
    plain = _gate_sm120(tmp_path, capsys)
    assert plain["status"] == "blocked" and [r["rule"] for r in plain["reasons"]] == ["sm-division-majors"]
    given = _gate_sm120(tmp_path, capsys, "--pdmux-config-path", "/etc/pdmux.yaml")
    assert given["status"] == "unknown"
    assert [(r["rule"], r["result"]) for r in given["reasons"]] == [("sm-division-config-not-read", "unknown")]


def test_a_pdmux_config_on_sm90_stays_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--enable-pdmux", "--pdmux-config-path"]
    argv += ["/etc/pdmux.yaml", "--chunked-prefill-size", "-1", "--disable-overlap-schedule"]
    main(["gate", "--dry-run", "--format", "json", "--facts", str(_facts(tmp_path, R580)), "--", *argv])
    doc = json.loads(capsys.readouterr().out)
    assert next(f for f in doc["features"] if f["feature"] == "pd-multiplexing")["status"] == "ok"


def _refusals(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, str]:
    argv = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--attention-backend", "flashinfer"]
    argv += ["--enable-pdmux", "--chunked-prefill-size", "-1", "--disable-overlap-schedule", *flags]
    main(["gate", "--dry-run", "--format", "json", "--facts", str(_facts(tmp_path, R580)), "--", *argv])
    doc = json.loads(capsys.readouterr().out)
    problems = doc["derived"]["problems"]
    return {p["subject"]: p["status"] for p in problems if str(p.get("subject", "")).startswith("refusal pdmux")}


@pytest.mark.parametrize(
    ("flags", "refused"),
    [
        ((), False),
        (("--pp-size", "2"), True),
        (("--pipeline-parallel-size", "2"), True),
        (("--pp-size", "1"), False),
        (("--disaggregation-mode", "prefill"), True),
        (("--disaggregation-mode", "null"), False),
    ],
)
def test_pdmux_with_pipeline_parallelism_or_disaggregation_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: tuple[str, ...], refused: bool
) -> None:
    """check_server_args asserts pp_size == 1 and disaggregation_mode == "null" beside the chunked-prefill and
    overlap-schedule assertions (sglang 0.5.4 server_args.py:3390-3402, 0.5.23 validation_hook.py:249-261): the gate
    judged only the latter two, so --enable-pdmux --pp-size 2 was allowed and the server stops while reading its
    arguments."""
    got = _refusals(tmp_path, capsys, *flags)
    assert got.get("refusal pdmux-pipeline-or-disaggregation") == ("blocked" if refused else None)
    assert "refusal pdmux-chunked-prefill-overlap-schedule" not in got


SPATIAL_FRAMES = (
    '  File "/opt/venv/lib/python3.12/site-packages/sglang/srt/multiplex/pdmux_context.py", line 115, in '
    "initialize_stream_groups\n"
    "    total_sm_count = spatial.get_sm_available(gpu_id)\n"
    '  File "/opt/venv/lib/python3.12/site-packages/sgl_kernel/spatial.py", line 54, in get_sm_available\n'
    "    raise _IMPORT_ERROR from _spatial_import_error\n"
    "ImportError: Failed to load sgl_kernel.spatial_ops extension. Ensure CUDA Driver >= 12.4\n"
)


def _signature(text: str) -> str | None:
    import io

    from stackcheck.launch.triage import triage_stream

    rc = triage_stream(io.BytesIO(text.encode())).root_cause
    return rc.signature.id if rc is not None and rc.signature is not None else None


def test_triage_names_the_spatial_ops_error_and_keeps_its_cause_first() -> None:
    alone = "Scheduler hit an exception: Traceback (most recent call last):\n" + SPATIAL_FRAMES
    assert _signature(alone) == "pdmux-spatial-ops-not-loaded"  # (a log cut to the last exception: none known before)
    chained = (
        "Traceback (most recent call last):\n"
        '  File "/opt/venv/lib/python3.12/site-packages/sgl_kernel/spatial.py", line 5, in <module>\n'
        "    from . import spatial_ops\n"
        "ImportError: /opt/venv/lib/python3.12/site-packages/sgl_kernel/spatial_ops.abi3.so: undefined symbol: "
        "cuGreenCtxCreate\n\nThe above exception was the direct cause of the following exception:\n\n"
        "Traceback (most recent call last):\n" + SPATIAL_FRAMES
    )
    assert _signature(chained) == "driver-api-undefined-symbol"  # the chained cause names the driver itself
