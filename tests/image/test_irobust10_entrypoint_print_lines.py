"""irobust10: an NVIDIA entrypoint.d part's print line read as printing only (image/entrypoint.part_exports) could
still change what runs: `echo $((CUDA_VISIBLE_DEVICES=0))` assigns an exported variable in arithmetic (bash manual
6.5 Shell Arithmetic: `=`, `+=`, `++` assign), and `echo ${NVIDIA_DRIVER_CAPABILITIES?}` / `${X:?msg}` make a
non-interactive shell exit where the variable is unset (3.5.3 Shell Parameter Expansion), so the container stops before
`exec "$@"`. Each was read as a print, the part's exports applied and the command placed after the wrapper; now the
part is not read (the Entrypoint stays unknown), as for a command substitution."""

from __future__ import annotations

import pytest

from stackcheck.image.entrypoint import part_exports


@pytest.mark.parametrize(
    "line",
    ["echo $((CUDA_VISIBLE_DEVICES=0))", "echo \"GPUs: $((N+=1))\"", "printf '%s\\n' $[X=5]", "echo $(( X++ ))",
     "echo ${NVIDIA_DRIVER_CAPABILITIES?}", "echo \"${X:?not set}\"", "printf '%s' ${A?unset} >&2"],
)  # fmt: skip
def test_a_print_line_that_assigns_or_exits_is_not_read(line: str) -> None:
    assert part_exports(f"export A=1\n{line}\n")[1] is not None, line  # fails before: read as printing only


@pytest.mark.parametrize(
    "line", ['echo "${X:-none}"', "echo ${#X}", "echo ${X/a/b}", "echo 'rate 5?'", "printf '%s\\n' \"${A}\" >&2"]
)
def test_plain_print_lines_stay_read(line: str) -> None:
    assert part_exports(f"export A=1\n{line}\n") == ({"A": "1"}, None), line


def test_a_line_of_unclosed_expansions_is_read_in_linear_time() -> None:
    import time

    line = "echo " + "${" * 60_000  # (a 120 KB line, under the part reader's 256 KiB cap)
    start = time.process_time()
    assert part_exports(f"{line}\n")[1] is None  # (no `?`, no command: a print)
    assert time.process_time() - start < 1.0  # fails before: ~5 s (the regex scanned from each `${` to the end)
