"""Words of digits int() refuses (igap26, issue 16 item 1): '²' passes str.isdigit() and a run of 5,000 digits passes
str.isdecimal(), and int() raises ValueError on both (the second for more digits than sys.get_int_max_str_digits(),
4,300 by default). Every place below tested a word that way, or matched it with an unbounded `\\d+`, and then called
int() on text from a facts file, the command line, the command's environment, a --config file, the box's files or an
image's layers: a hostile or hand-written input ended the command in an internal error (exit 4, no decision) instead
of reading the word as not a number (unknown, a reason, or a one-line usage error). Each test fails before."""

from __future__ import annotations

import copy
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest
from gate_cli import QWEN3_MOE, cli_json, model_dir, release_box
from imagebuild import docker_save

from stackcheck.cli import main
from stackcheck.readers.fsview import HostView

ROOT = Path(__file__).resolve().parent.parent
H200 = str(ROOT / "tests/cases/h200-newest/facts.json")
LONG = "9" * 5000
SQUARED = "\u00b2"
A2A = "moe-a2a-package"
DEEP_EP = {
    "installed": True,
    "version": "1.2.1",
    "location": "/src/DeepEP",
    "extension_files": ["deep_ep_cpp.so"],
    "extension_links": {"deep_ep_cpp.so": {"needed": [], "found": {}}},
}


def _set_python(facts: dict[str, Any], value: str) -> None:
    facts["system"]["python"] = value


def _set_torch_cuda(facts: dict[str, Any], value: str) -> None:
    facts["packages"]["torch"]["cuda"] = value


def _set_sys_path(facts: dict[str, Any], value: str) -> None:
    facts["system"]["python"] = "3.14.0"
    facts["python"] = {"sys_path": [value]}


@pytest.mark.parametrize(
    ("edit", "value"),
    [
        (_set_python, "3." + SQUARED),  # a2a.import_suffixes: isdigit, then int() for a free-threaded build's suffix
        (_set_python, "3." + LONG),  # a2a.python_builds: isdecimal, then int()
        (_set_torch_cuda, LONG + ".0"),  # a2a._cuda_major, refusals.numeric
        (_set_sys_path, "/opt/lib/python3." + LONG + "t/site-packages"),  # a2a.python_builds' \d+ of a library dir
    ],
)
def test_the_gate_decides_on_a_facts_file_with_numbers_int_refuses(tmp_path: Path, edit: Any, value: str) -> None:
    box = release_box(tmp_path, "0.5.23", "9.0")
    doc = json.loads(box.read_text())
    doc["facts"]["packages"]["deep-ep"] = copy.deepcopy(DEEP_EP)
    edit(doc["facts"], value)
    box.write_text(json.dumps(doc))
    line = ["python3", "-m", "sglang.launch_server", "--model-path", str(model_dir(tmp_path, "m", QWEN3_MOE)),
            "--tp", "8", "--moe-a2a-backend", "deepep"]  # fmt: skip
    _rc, out = cli_json(["gate", "--facts", str(box), "--dry-run", "--format", "json", "--", *line])  # rc 0 or 1
    checks = {c.get("check"): c.get("status") for c in (out.get("preflight") or {}).get("checks") or []}
    assert checks.get(A2A) in ("ok", "fail", "unknown"), checks


def _gate(capsys: pytest.CaptureFixture[str], *flags: str, env: tuple[str, ...] = ()) -> tuple[int, str]:
    code = main(["gate", "--dry-run", "--facts", H200, "--", *env, "python", "-m", "sglang.launch_server",
                 "--model-path", "M", *flags])  # fmt: skip
    return code, capsys.readouterr().err


def test_a_config_file_integer_int_refuses_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """yaml.safe_load raises on it as well (PyYAML 6.0.x yaml/constructor.py:265 `sign*int(value)`): SGLang does not
    start; the gate says so in one line (exit 2), as for any --config it cannot read."""
    config = tmp_path / "c.yaml"
    config.write_text(f"tp-size: {LONG}\n")
    code, err = _gate(capsys, "--config", str(config))
    assert code == 2 and "internal error" not in err, err[-300:]
    assert "line 1: an integer of more digits than int() reads" in err and len(err) < 1000


def test_cuda_visible_devices_of_a_long_number_is_no_gpu(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _gate(capsys, env=("env", f"CUDA_VISIBLE_DEVICES={LONG}"))
    assert code in (0, 1) and "internal error" not in err, err[-300:]


@pytest.mark.parametrize("spec", ["12.0x" + LONG, LONG + "x12.0"])
def test_assume_gpu_with_a_long_count_is_a_usage_error(spec: str, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["audit", "--facts", H200, "--assume-gpu", spec])
    err = capsys.readouterr().err
    assert code == 2 and "a count of 1 to 4096 GPUs" in err, err[-300:]
    from stackcheck.assembly.pipeline import parse_assume_gpu
    from stackcheck.errors import UsageError

    with pytest.raises(UsageError):
        parse_assume_gpu(spec if spec.startswith("12") else "9.0x" + LONG)


def test_columns_of_5000_digits_is_no_width(monkeypatch: pytest.MonkeyPatch) -> None:
    from stackcheck.render.layout import output_width

    monkeypatch.setenv("COLUMNS", LONG)
    assert isinstance(output_width(), int)
    monkeypatch.setenv("COLUMNS", "120")
    assert output_width() == 120


def test_facts_words_read_as_not_numbers() -> None:
    from stackcheck.facts.archs import parse_target
    from stackcheck.facts.implied import simple_marker
    from stackcheck.facts.model import cc_tuple
    from stackcheck.facts.versions import minor_of
    from stackcheck.launch.refusals import numeric
    from stackcheck.probes.jit import _major_minor
    from stackcheck.readers.binaries import _cc_tuple
    from stackcheck.verdicts.package_checks import _cuda_major, import_suffixes, python_builds

    assert cc_tuple(LONG + ".0") is None and cc_tuple("9.0") == (9, 0)
    assert _cc_tuple("9." + LONG) is None and _cc_tuple("12.0") == (12, 0)
    assert _major_minor(LONG + ".8") is None and _major_minor("12.8.1") == "12.8"
    assert numeric(LONG) is None and numeric("12.8") == (12, 8)
    assert _cuda_major(LONG) is None and _cuda_major("13.0") == 13
    assert import_suffixes("3." + SQUARED, "x86_64", True) is None
    assert import_suffixes("3." + LONG, "x86_64") is None
    assert python_builds("3." + LONG, []) == [False, True] and python_builds("3.12.1", []) == [False]
    assert python_builds("3.14.0", ["/x/lib/python3." + LONG + "t", "/x/lib/python3.14t"]) == [True]
    assert parse_target(LONG + ".0") is None and parse_target("9.0a") is not None
    assert minor_of(LONG + ".1") is None and minor_of("2.10.0") == (2, 10)
    assert simple_marker('python_version < "3.13"', {"python_version": "3." + LONG}) is None
    assert simple_marker('python_version < "3.13"', {"python_version": "3.12"}) is True


def test_box_and_image_words_read_as_not_numbers() -> None:
    from stackcheck.image.require import compare_versions, parse_nvidia_require
    from stackcheck.readers.fatbin import _TKINFO_ARCH
    from stackcheck.readers.kernelsymbols import readable

    name = "_ZN" + LONG + "cE"
    assert readable(name) == name and readable("_ZN3c104cuda9SetDeviceEab") == "c10::cuda::SetDevice"
    assert readable("_ZN3fooI" + LONG + "xE3barEv") == "_ZN3fooI" + LONG + "xE3barEv"
    assert compare_versions("12.8", ">=", LONG) is False and compare_versions(LONG + ".1", ">=", "12.8") is True
    assert compare_versions("13.0", "=", "13") and compare_versions("12.10", ">", "12.9")
    assert compare_versions("012.8", "=", "12.8.0") and compare_versions("12.8", "<", "12.8.1")
    out = parse_nvidia_require({"CUDA_VERSION": LONG + ".1"})
    assert not out.legacy and out.errors and len(out.errors[0]) < 6000
    assert _TKINFO_ARCH.search(b"-arch sm_" + LONG.encode()) is None
    assert _TKINFO_ARCH.search(b"-arch sm_120a ").groups() == (b"sm", b"120", b"a")  # type: ignore[union-attr]


def test_nvidia_smi_odd_index_and_long_memory(tmp_path: Path) -> None:
    from stackcheck.probes.interface import ProbeContext
    from stackcheck.probes.nvml import _from_nvidia_smi

    bindir = tmp_path / "bin"
    bindir.mkdir()
    script = bindir / "nvidia-smi"
    rows = f"0, NVIDIA H200, GPU-a, 00000000:18:00.0, 9.0, {LONG}, Enabled, 580.159.04\n"
    script.write_text(f"#!/bin/sh\ncat <<'X'\n{rows}X\n", encoding="utf-8")
    script.chmod(0o755)
    ctx = ProbeContext(env={"PATH": f"{bindir}:/usr/bin:/bin"}, root=tmp_path, path_dirs=[], subprocess_timeout_s=5)
    got = _from_nvidia_smi(ctx)
    assert isinstance(got, tuple) and got[0][0]["memory_bytes"] is None and got[0][0]["index"] == 0
    script.write_text(f"#!/bin/sh\necho '{SQUARED}, NVIDIA H200, GPU-a, 0:18:00.0, 9.0, 1, Enabled, 580.1'\n")
    assert "not understood" in str(_from_nvidia_smi(ctx))


def test_box_files_with_long_numbers(tmp_path: Path) -> None:
    from stackcheck.probes.docker_daemon import _process_start
    from stackcheck.probes.jit import _gnu_support
    from stackcheck.probes.packages import build_cuda_major

    view = HostView(str(tmp_path))
    (tmp_path / "proc/7").mkdir(parents=True)
    (tmp_path / "proc/7/stat").write_text("7 (dockerd) S" + " 1" * 18 + " 500\n")
    (tmp_path / "proc/stat").write_text(f"cpu 1 2\nbtime {LONG}\n")
    assert _process_start(view, 7) is None
    (tmp_path / "proc/stat").write_text("cpu 1 2\nbtime 1700000000\n")
    assert _process_start(view, 7) is not None

    info = tmp_path / "site/deep_ep/_build_info.py"
    info.parent.mkdir(parents=True)
    info.write_text(f"EXPECTED_CUDA_MAJOR = {LONG}\n")
    entry: dict[str, Any] = {}
    build_cuda_major("sgl-deep-ep", entry, "/site", view)
    assert "build_cuda_major" not in entry and "EXPECTED_CUDA_MAJOR" in entry["error"]

    crt = tmp_path / "cuda/include/crt"
    crt.mkdir(parents=True)
    (crt / "host_config.h").write_text(f"#if __GNUC__ > {LONG}\n#error -- unsupported GNU version\n")
    assert _gnu_support(view, 13, "/cuda") == {}


class _LongNames(HostView):
    """A view whose names may be longer than a host's file system allows (an image layer's pax path may be)."""

    def realpath(self, path: str) -> str:
        return "/usr/bin/gcc-" + LONG if path == "/usr/bin/gcc" else super().realpath(path)

    def stat(self, path: str, follow_symlinks: bool = True) -> Any:
        return super().stat("/cc1plus" if path.endswith("/cc1plus") else path, follow_symlinks=follow_symlinks)


def test_a_gcc_major_of_5000_digits_is_not_read(tmp_path: Path) -> None:
    from stackcheck.probes.jit import _gnu_major

    (tmp_path / "cc1plus").write_text("")
    view = _LongNames(str(tmp_path))
    assert _gnu_major(view, "/usr/bin/gcc", ["/usr/lib/gcc/x86_64-linux-gnu/" + LONG]) is None
    assert _gnu_major(view, "/usr/bin/gcc", ["/usr/lib/gcc/x86_64-linux-gnu/13"]) == 13


def test_an_image_whose_sparse_size_has_5000_digits(tmp_path: Path) -> None:
    from stackcheck.image import open_image

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo("d/sparse.bin")
        info.size = 4
        info.pax_headers = {"GNU.sparse.realsize": LONG, "GNU.sparse.name": "d/sparse.bin"}
        tf.addfile(info, io.BytesIO(b"data"))
    image = docker_save(tmp_path / "sparse.tar", [buf.getvalue()])
    with open_image(image) as view:
        st = view.stat("/d/sparse.bin")
        assert st is not None and st.kind == "file" and st.size == 4
