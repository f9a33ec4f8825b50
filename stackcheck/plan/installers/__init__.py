"""The installers, one plug-in family: `INSTALLERS` maps each component the plan can change to the
`Installer` (interface.py) that writes its step's commands.

| component | installer | module |
|---|---|---|
| driver | the NVIDIA driver branch, open kernel modules: apt, dnf module, else a comment | system.py |
| toolkit | the CUDA toolkit matching torch's CUDA: apt, a comment elsewhere | system.py |
| torch | pip from the PyTorch index of the variant | pip.py |
| kernel | pip; sgl-kernel renamed sglang-kernel; a variant on the project's own index | pip.py |
| flashinfer | pip, with SGLang's extra, and the flashinfer-cubin / flashinfer-jit-cache rules | pip.py |
| sglang | pip | pip.py |

A new way to install a component (another package manager, another distribution) is a function with the
Installer signature, registered here."""

from __future__ import annotations

from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.plan.installers import pip, system
from stackcheck.plan.installers.interface import Install

if TYPE_CHECKING:
    from typing import Final

    from stackcheck.plan.installers.interface import Installer

INSTALLERS: Final[dict[str, Installer]] = {
    "driver": system.install_driver,
    "toolkit": system.install_toolkit,
    "torch": pip.install_torch,
    "kernel": pip.install_kernel,
    "flashinfer": pip.install_flashinfer,
    "sglang": pip.install_sglang,
}

__all__ = ["INSTALLERS", "Install"]  # (and the type `Installer`, from interface.py)
