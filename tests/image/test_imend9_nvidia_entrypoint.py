"""imend9 (iallow1's leftover): `gate --image IMG` with the image's own Entrypoint + Cmd refused every nvidia/cuda-based
image as unknown, since their Entrypoint is /opt/nvidia/nvidia_entrypoint.sh, a script the gate's walk does not place.
The script is read from the image now (image/entrypoint.py): where it is the wrapper shape (its entrypoint.d parts
gathered and sourced, then `exec "$@"`) and each .sh part only prints or exports a literal value, the command after it
is judged with those exports; a script of another shape, or a part that does more (a test of the driver, a command
substitution), leaves the script first and the launch unknown. The scripts below are written here in that shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli_process import clean_env, run_stackcheck
from imagebuild import docker_save, layer_tar

SITE = "opt/serve/lib/python3.12/site-packages"
HOST = ["--assume-gpu", "9.0x8", "--assume-driver", "580.95.05"]
LAUNCH = ["/opt/serve/bin/python", "-m", "sglang.launch_server", "--model-path", "/models/m", "--tp", "8"]
ENTRY = "/opt/nvidia/nvidia_entrypoint.sh"

WRAPPER = b"""#!/bin/bash
# parts of the start, sorted by name
shopt -s nullglob extglob
_SCRIPT_DIR="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
declare -a _PARTS=( "${_SCRIPT_DIR}/entrypoint.d"/*@(.txt|.sh) )
shopt -u nullglob extglob

print_banner_text() {
  local banner_char=$1
  local -r text="$2"
  echo "${banner_char} ${text} ${banner_char}"
}

for _file in "${_PARTS[@]}"; do
  case "${_file}" in
    *.txt) cat "${_file}" >&2;;
    *.sh)  source "${_file}" >&2;;
  esac
done

echo >&2

if [[ $# -eq 0 ]]; then
  exec "/bin/bash"
else
  exec "$@"
fi
"""
BANNER = b'#!/bin/bash\nprint_banner_text "*" "SERVE"\necho "version ${SERVE_VERSION}"\n'
EXPORTS = b"# what the server sees\nexport SGLANG_ENABLE_JIT_DEEPGEMM=0\n"
PROBE = b"if ! ldconfig -p | grep -q libcuda.so.1; then\n  export NVIDIA_CPU_ONLY=1\nfi\n"
DRIVER_CHECK = """# whether the GPU driver is reachable
_CUDA_LIB_IN_CACHE=$(ldconfig -p | grep libcuda.so.1 || true)
_ON_PATH=$( ( IFS=: ; for i in ${LD_LIBRARY_PATH}; do ls $i/libcuda.so.1 2>/dev/null | grep -v compat; done) || true)
_CUDA_LIB="${_CUDA_LIB_IN_CACHE}${_ON_PATH}"
_NODES=$(ls /dev/nvidiactl /dev/dxg /dev/nvgpu 2>/dev/null || true)
if [[ -z "${_CUDA_LIB}" || -z "${_NODES}" ]]; then
  echo
  echo "no driver here: running on the CPU"
  export NVIDIA_CPU_ONLY=1
fi
unset _CUDA_LIB_IN_CACHE _ON_PATH _CUDA_LIB _NODES
"""
OTHER = b'#!/bin/bash\nset -e\ncd /srv && ./prepare\nexec "$@"\n'


def _image(tmp_path: Path, name: str, script: bytes, parts: dict[str, bytes]) -> Path:
    files: list[tuple[Any, ...]] = [
        ("file", "etc/debian_version", b"12.5\n"),
        ("file", "usr/bin/python3.12", b"\x7fELF", 0o755),
        ("symlink", "usr/bin/python3", "python3.12"),
        ("file", "usr/lib/python3.12/os.py", b""),
        ("file", "opt/serve/pyvenv.cfg", b"home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n"),
        ("symlink", "opt/serve/bin/python", "/usr/bin/python3.12"),
        ("file", f"{SITE}/sglang-0.5.9.dist-info/METADATA", b"Metadata-Version: 2.1\nName: sglang\nVersion: 0.5.9\n"),
        ("file", ENTRY[1:], script, 0o755),
        ("file", "opt/nvidia/entrypoint.d/15-notice.txt", b"a notice\n"),
    ]
    files += [("file", f"opt/nvidia/entrypoint.d/{n}", body) for n, body in parts.items()]
    container = {"Entrypoint": [ENTRY], "Cmd": LAUNCH}
    return docker_save(tmp_path / name, [layer_tar(files)], env=["PATH=/usr/bin:/bin"], container=container)


def _decision(image: Path) -> dict[str, Any]:
    proc = run_stackcheck("gate", "--format", "json", *HOST, "--image", str(image),
                          env=clean_env("VIRTUAL_ENV", "CONDA_PREFIX"), timeout=180)  # fmt: skip
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def _unknown_entry(doc: dict[str, Any]) -> bool:
    return any(p.get("subject") == "nvidia_entrypoint.sh" and p.get("status") == "unknown"
               for p in doc["derived"].get("problems") or [])  # fmt: skip


def test_the_wrapper_places_the_launch_with_its_exports(tmp_path: Path) -> None:
    doc = _decision(_image(tmp_path, "wrap.tar", WRAPPER, {"10-banner.sh": BANNER, "20-env.sh": EXPORTS}))
    assert not _unknown_entry(doc), doc["derived"].get("problems")
    assert doc["derived"]["entrypoint"] == "launch-server" and doc["derived"]["launch"]["tp"] == 8
    assert doc["derived"]["env"]["SGLANG_ENABLE_JIT_DEEPGEMM"] is False  # (20-env.sh's export reaches the launch)
    assert "NVIDIA's wrapper shape" in doc["note"] and "20-env.sh" in doc["note"], doc["note"]


def test_a_part_that_tests_the_driver_stays_unknown(tmp_path: Path) -> None:
    doc = _decision(_image(tmp_path, "probe.tar", WRAPPER, {"10-banner.sh": BANNER, "50-check.sh": PROBE}))
    assert _unknown_entry(doc), doc["derived"].get("problems")
    assert "50-check.sh" in doc["note"] and "is not read as NVIDIA's wrapper" in doc["note"], doc["note"]


def test_another_script_stays_unknown(tmp_path: Path) -> None:
    doc = _decision(_image(tmp_path, "other.tar", OTHER, {"10-banner.sh": BANNER}))
    assert _unknown_entry(doc), doc["derived"].get("problems")


def test_the_readers_fail_closed_on_lines_that_run_something() -> None:
    from stackcheck.image.entrypoint import part_exports, script_shape

    assert script_shape(WRAPPER.decode()) is None
    assert script_shape(WRAPPER.decode().replace('exec "$@"', 'exec python3 "$@"')) is not None
    assert script_shape(WRAPPER.decode().replace("echo >&2", "echo $(id -u) >&2")) is not None
    assert part_exports("export A=1\necho hi\n") == ({"A": "1"}, None)
    for body in ("echo ${A:=1}\n", "export A=$(cat /x)\n", "echo hi > /tmp/f\n", "cat <<EOF\n$(id)\nEOF\n",
                 "ldconfig -p\n", "export A=1; rm -rf /x\n"):  # fmt: skip
        assert part_exports(body)[1] is not None, body


def test_the_driver_check_shape_is_read_and_changes_nothing_the_launch_reads(tmp_path: Path) -> None:
    # scratch look-ups (ldconfig -p, ls of the device nodes), then NVIDIA_CPU_ONLY exported only where the driver is
    # not found: placed; the same shape exporting another name there stays unknown
    doc = _decision(_image(tmp_path, "check.tar", WRAPPER, {"50-check.sh": DRIVER_CHECK.encode()}))
    assert not _unknown_entry(doc), doc["derived"].get("problems")
    assert doc["derived"]["entrypoint"] == "launch-server"
    bad = DRIVER_CHECK.replace("NVIDIA_CPU_ONLY=1", "SGLANG_ENABLE_JIT_DEEPGEMM=0").encode()
    doc = _decision(_image(tmp_path, "check2.tar", WRAPPER, {"50-check.sh": bad}))
    assert _unknown_entry(doc), doc["derived"].get("problems")
