"""Builders for derive's tests: small releases written here in the shape of the real ones (a METADATA, a
server_args.py with add_argument calls and annotated fields, arg_groups/fields/ namespaces, gate tables),
as a wheel (zip), an unpacked directory or an installed site directory. The text is ours; only the shapes
(names of files, of tables and of the `A[...]`/`Arg(...)` markers) follow SGLang."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path

DC = "sglang/srt/distributed/device_communicators"

METADATA_TEMPLATE = """\
Metadata-Version: 2.4
Name: sglang
Version: {version}
Summary: a test release
License: first line of a long licence
{spaces}
        a line of spaces above does not end the headers
Requires-Python: >=3.11
Requires-Dist: aiohttp
Requires-Dist: torch=={torch}
Requires-Dist: sglang-kernel=={kernel}
Requires-Dist: flashinfer_python[cu13]=={flashinfer}
Requires-Dist: cuda-python>=13.0
Requires-Dist: decord2; platform_machine == "aarch64"
Requires-Dist: brand-new-kernels==1.0
Provides-Extra: cu130
Requires-Dist: torch=={torch_cu130}; extra == "cu130"
Provides-Extra: test
Requires-Dist: pytest; extra == "test"

A long description that is not read.
Requires-Dist: not-a-header==1
"""

SERVER_ARGS = """\
import argparse
import dataclasses
from typing import Literal, Optional

from sglang.srt.arg_groups.arg_utils import A, Arg
from sglang.srt.arg_groups.choices import BACKENDS
from sglang.srt.arg_groups.fields.exec_ import ExecKernel, Unlisted

_INPUT_NAMESPACES = [ExecKernel]

EXTRA_BACKENDS = ["b_extra"]
QUANT = ["fp8", "mxfp4"] + ["modelopt_fp4"]


@dataclasses.dataclass
class ServerArgs:
    tp_size: A[int, Arg(help="tensor parallel", aliases=["--tensor-parallel-size"])] = 1
    quantization: A[Optional[str], Arg(help="quant", choices=QUANT)] = None
    hidden_field: A[int, Arg(help="no flag", no_cli=True)] = 0
    mode: A[Literal["a", "b"], "a literal"] = "a"
    enable_x: A[bool, "a switch"] = False
    not_a_flag: int = 3

    @staticmethod
    def add_cli_args(parser: argparse.ArgumentParser):
        local_choices = ["l1", "l2"]
        parser.add_argument("--enable-old-thing", action="store_true", help="old")
        parser.add_argument("--pick", "--pick-alias", type=str, choices=local_choices)
        parser.add_argument("--computed", choices=make_choices())
        parser.add_argument("--fp8-gemm-backend", choices=[*EXTRA_BACKENDS, "auto"])


class PortArgs:
    def add_cli_args(self, parser):
        parser.add_argument("--not-a-server-flag")
"""

ARG_GROUP_CHOICES = """\
BACKENDS = ["fa3", "flashinfer", "triton"]
"""

ARG_GROUP_FIELDS = """\
from typing import Optional

from sglang.srt.arg_groups.arg_utils import A, Arg
from sglang.srt.arg_groups.choices import BACKENDS as KNOWN


class ExecKernel:
    _NS_PATH = "exec.kernel"

    attention_backend: A[Optional[str], Arg(help="attention", choices=KNOWN)] = None
    enable_torch_symm_mem: A[bool, "symm mem"] = False
    disable_thing: A[bool, Arg(help="renamed", cli_name="--no-thing")] = False


class Unlisted:
    _NS_PATH = "elsewhere"

    unlisted_flag: A[int, "not in _INPUT_NAMESPACES"] = 0
"""

ALL_REDUCE_UTILS = """\
MiB = 1 << 20
TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {
    9: {2: 64 * MiB},
    10: {2: 64 * MiB},
}
"""

TORCH_SYMM_MEM = """\
class TorchSymmMemCommunicator:
    _WORLD_SIZES_MULTIMEM = {9: [4, 6, 8], 10: [4, 6, 8]}

    def __init__(self, cap):
        self.limit = TORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES.get(cap)
"""


def release_files(version: str = "0.5.24", torch: str = "2.14.1", kernel: str = "0.4.10") -> dict[str, str]:
    dist = f"sglang-{version}.dist-info"
    return {
        f"{dist}/METADATA": METADATA_TEMPLATE.format(
            version=version, torch=torch, kernel=kernel, flashinfer="0.7.2", torch_cu130="2.14.0", spaces=" " * 8
        ),
        f"{dist}/WHEEL": "Wheel-Version: 1.0\n",
        "sglang/__init__.py": "",
        "sglang/srt/server_args.py": SERVER_ARGS,
        "sglang/srt/arg_groups/choices.py": ARG_GROUP_CHOICES,
        "sglang/srt/arg_groups/fields/exec_.py": ARG_GROUP_FIELDS,
        f"{DC}/all_reduce_utils.py": ALL_REDUCE_UTILS,
        f"{DC}/torch_symm_mem.py": TORCH_SYMM_MEM,
    }


def write_wheel(path: Path, files: Mapping[str, str | bytes], compression: int = zipfile.ZIP_DEFLATED) -> Path:
    with zipfile.ZipFile(path, "w", compression=compression) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return path


def write_tree(root: Path, files: Mapping[str, str | bytes], record: bool = True) -> Path:
    for name, data in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(data, bytes):
            target.write_bytes(data)
        else:
            target.write_text(data)
    if record:
        infos = {n.split("/", 1)[0] for n in files if n.split("/", 1)[0].endswith(".dist-info")}
        for info in infos:
            rows = [f"{name},," for name in files] + [f"{info}/RECORD,,", "../../bin/outside,,"]
            (root / info / "RECORD").write_text("\n".join(rows) + "\n")
    return root
