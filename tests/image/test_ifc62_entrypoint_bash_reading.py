"""ifc62 (the sixty-second sample, read beside it: imend9's reading of NVIDIA's entrypoint wrapper against what bash
does with it). Three places where the reader gave the command an environment bash does not: a hidden part
(entrypoint.d/.20-env.sh), which the wrapper's `*@(.txt|.sh)` glob leaves out without dotglob (bash run here: not
matched), was read and its exports applied; `printf -v NAME ...`, which assigns NAME (an exported variable of the
image's Env reaches the command changed), passed as a print line; an unquoted ~ in an export's value, which bash expands
at the start and after each ':', was taken literally. The scripts are written here in the wrapper's shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from stackcheck.image.entrypoint import part_exports, read_entrypoint
from stackcheck.readers.fsview import HostView

#: the wrapper's shape (as tests/image/test_imend9_nvidia_entrypoint.py writes it): its parts gathered, then exec "$@"
WRAPPER = b"""#!/bin/bash
shopt -s nullglob extglob
_SCRIPT_DIR="$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")"
declare -a _PARTS=( "${_SCRIPT_DIR}/entrypoint.d"/*@(.txt|.sh) )
shopt -u nullglob extglob

for _file in "${_PARTS[@]}"; do
  case "${_file}" in
    *.txt) cat "${_file}" >&2;;
    *.sh)  source "${_file}" >&2;;
  esac
done

if [[ $# -eq 0 ]]; then
  exec "/bin/bash"
else
  exec "$@"
fi
"""


def _reading(tmp_path: Path, parts: dict[str, bytes]) -> tuple[bool, dict[str, str]]:
    script = tmp_path / "nvidia_entrypoint.sh"
    script.write_bytes(WRAPPER)
    (tmp_path / "entrypoint.d").mkdir()
    for name, body in parts.items():
        (tmp_path / "entrypoint.d" / name).write_bytes(body)
    got = read_entrypoint(HostView(), [str(script), "python3", "-m", "sglang.launch_server"], {"PATH": "/usr/bin"})
    return got.placed, got.env


def test_a_hidden_part_is_not_sourced(tmp_path: Path) -> None:
    placed, env = _reading(tmp_path, {".20-env.sh": b"export NCCL_P2P_DISABLE=1\n", "10-ok.sh": b"export A=1\n"})
    assert placed and env.get("A") == "1" and "NCCL_P2P_DISABLE" not in env


@pytest.mark.parametrize("line", ["printf -v CUDA_VISIBLE_DEVICES '%s' 0", "printf -v PATH /opt/bin",
                                  "printf -- -v", "printf '%s' x -v"])  # fmt: skip
def test_printf_v_is_not_a_print_line(line: str) -> None:
    assert part_exports(line + "\n")[1] is not None


@pytest.mark.parametrize("value", ["~/hf", "/a:~/lib", "~", "~svc/x"])
def test_an_export_bash_tilde_expands_is_not_literal(value: str) -> None:
    assert part_exports(f"export HF_HOME={value}\n")[1] is not None


def test_what_bash_keeps_literal_is_still_read() -> None:
    assert part_exports("export A='~/x'\nexport B=\"~/y\"\nexport C=/a~b\nprintf '%s\\n' hi\n") == (
        {"A": "~/x", "B": "~/y", "C": "/a~b"},
        None,
    )
