"""Installers of system packages: the NVIDIA driver and the CUDA toolkit, with the system's package
manager (apt on Ubuntu/Debian, dnf on the RHEL family; elsewhere a comment says what to install)."""

from __future__ import annotations

from stackcheck.facts.model import cc_tuple
from stackcheck.plan.installers.interface import Install, os_family, q
from stackcheck.plan.model import Alternative
from stackcheck.plan.solver import Box, Choice, Stack
from stackcheck.verdicts.context import Context


def install_driver(ctx: Context, choice: Choice, box: Box, stack: Stack) -> Install:
    """A driver branch: the distribution's server package with the open kernel modules (the alternative:
    NVIDIA's CUDA repository), the node drained first and rebooted after."""
    branch = choice.version
    family = os_family(ctx)
    warnings = ["drain the node first (stop the serving processes; the GPUs are unavailable during the upgrade)"]
    alternatives: list[Alternative] = []
    if family == "debian":
        commands = ["sudo apt-get update", f"sudo apt-get install -y {q(f'nvidia-driver-{branch}-server-open')}"]
        alternatives.append(
            Alternative(
                "or, from NVIDIA's CUDA repository, instead of the last command",
                (f"sudo apt-get install -y {q(f'cuda-drivers-{branch}')}",),
            )
        )
    elif family == "rhel":
        commands = [f"sudo dnf module install -y {q(f'nvidia-driver:{branch}-open')}"]
    else:
        commands = [f"# install the NVIDIA driver branch {q(branch)} (open kernel modules) from your distribution"]
    # GPUs whose architecture needs the open kernel modules (architectures.json `kernel_modules`), by family
    needs_open = [
        str(a.get("generation", "")).capitalize()
        for a in ctx.manifests.architectures
        if cc_tuple(str(a.get("compute_capability"))) in box.ccs
        and (a.get("kernel_modules") or {}).get("required") == "open"
    ]
    if needs_open:
        families = " and ".join(dict.fromkeys(needs_open))
        warnings.append(f"open kernel modules are required for {families} (the -open driver packages)")
    if (ctx.facts.get("system") or {}).get("container"):
        warnings.append("this runs in a container: upgrade the driver on the host, not in the image")
    warnings.append("reboot required (or unload and reload the nvidia kernel modules)")
    return Install(tuple(commands), tuple(warnings), tuple(alternatives))


def install_toolkit(ctx: Context, choice: Choice, box: Box, stack: Stack) -> Install:
    """The CUDA toolkit of torch's CUDA (the toolkit that builds extensions must match torch)."""
    tk = choice.version.replace(".", "-")
    commands = (
        [f"sudo apt-get install -y {q(f'cuda-toolkit-{tk}')}"]
        if os_family(ctx) == "debian"
        else [f"# install the CUDA {q(choice.version)} toolkit"]
    )
    warnings = [f"point CUDA_HOME (and PATH) at the CUDA {choice.version} toolkit before building extensions"]
    return Install(tuple(commands), tuple(warnings))
