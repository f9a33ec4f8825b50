"""Installers of Python packages with pip: torch from the PyTorch index of its CUDA variant, the kernel
package (sgl-kernel, renamed sglang-kernel), flashinfer-python with the packages that must match its
version (flashinfer-cubin, flashinfer-jit-cache), and SGLang."""

from __future__ import annotations

from stackcheck.facts.model import KERNEL_MODULE
from stackcheck.plan.hypothetical import cubins_lacking_after, torch_nccl_step
from stackcheck.plan.installers.interface import Install, q
from stackcheck.plan.solver import (
    Box,
    Choice,
    Stack,
    find_release,
    pinned_additions,
    pinned_companions,
    ranged_additions,
)
from stackcheck.verdicts.context import Context


def _index(ctx: Context, name: str, variant: str | None) -> str | None:
    """The package's wheel index for a CUDA variant (components.json `index_url`), if it has one."""
    url = ctx.manifests.package(name).get("index_url")
    if not isinstance(url, str) or not variant:
        return None
    return url.replace("{variant}", variant)


def install_torch(ctx: Context, choice: Choice, box: Box, stack: Stack) -> Install:
    """torch from its variant's index; where the box has the NCCL wheel of the other CUDA major, that wheel is
    uninstalled first and torch's own reinstalled if pip would keep it (hypothetical.torch_nccl_step, igap52)."""
    url = _index(ctx, "torch", choice.variant)
    cmd = f"pip install {q(f'torch=={choice.version}')}"
    cmds = [cmd + (f" --index-url {q(url)}" if url else "")]
    warnings: list[str] = []
    nccl = torch_nccl_step(choice, ctx.facts.get("packages") or {})
    if nccl is not None and nccl.remove is not None:
        packages = ctx.facts.get("packages") or {}
        old = (packages.get(nccl.remove) or {}).get("version")
        pin = f"torch {choice.version}+{choice.variant} requires {nccl.wheel}=={nccl.pin}"
        how = "the Requires-Dist of its wheel's METADATA"
        if not nccl.read:  # the variant's nccl_read says how (another build of the release, the wheels' symbols)
            how = "inferred: this build's own wheel was not read, see the variant's `nccl_read`"
        cmds.insert(0, f"pip uninstall -y {q(nccl.remove)}")
        left = f"{nccl.remove}{f' {old}' if old else ''}"
        text = (
            f"{pin} ({how}; components.json, torch's variant `nccl`): the torch install brings it and leaves {left} "
            "installed, and both write nvidia/nccl/lib/libnccl.so.2 (check nccl, rule one-nccl-wheel: 'undefined "
            f"symbol ncclCommResume'); {nccl.remove} is uninstalled first, since uninstalling it after torch would "
            "delete the new wheel's copy of that file"
        )
        if nccl.reinstall:
            cmds.append(f"pip install --force-reinstall --no-deps {q(f'{nccl.wheel}=={nccl.pin}')}")
            known = "is not known (one at the pin is kept)"
            text += f"; whether {nccl.wheel} is installed already {known}, so it is reinstalled"
        warnings.append(text)
    return Install(tuple(cmds), tuple(warnings))


def install_kernel(ctx: Context, choice: Choice, box: Box, stack: Stack) -> Install:
    """The kernel package; the other name uninstalled first when the box has it (both install the same
    import name); a variant that is not the one on PyPI from the project's own index."""
    cmds: list[str] = []
    warnings: list[str] = []
    if box.kernel is not None and box.kernel[0] != choice.name:
        cmds.append(f"pip uninstall -y {q(box.kernel[0])}")
        warnings.append(f"{box.kernel[0]} was renamed {choice.name}; the import name stays {KERNEL_MODULE}")
    if choice.index_only and choice.variant:
        url = _index(ctx, choice.name, choice.variant)
        spec = f"{choice.name}=={choice.version}+{choice.variant}"
        cmds.append(f"pip install {q(spec)}" + (f" --index-url {q(url)}" if url else ""))
    else:
        cmds.append(f"pip install {q(f'{choice.name}=={choice.version}')}")
    return Install(tuple(cmds), tuple(warnings))


def install_flashinfer(ctx: Context, choice: Choice, box: Box, stack: Stack) -> Install:
    """flashinfer-python with the extra SGLang's pin names; flashinfer-cubin at the same version when SGLang
    pins it or the box has it and the manifests know that release (else the installed one is removed rather
    than left mismatched); flashinfer-jit-cache at the same version from its index of torch's variant."""
    warnings: list[str] = []
    # SGLang >= 0.5.14 pins flashinfer_python[cu13]: install the extra it names
    extras = (stack.sglang.release.get("requires_extras") or {}).get("flashinfer-python") or []
    extra = f"[{','.join(extras)}]" if extras else ""
    specs = [f"flashinfer-python{extra}=={choice.version}"]
    cubin_pinned = "flashinfer-cubin" in (stack.sglang.release.get("requires") or {})
    cubin_known = find_release(ctx, "flashinfer-cubin", choice.version) is not None
    if cubin_pinned or (ctx.installed_version("flashinfer-cubin") and cubin_known):
        specs.append(f"flashinfer-cubin=={choice.version}")
    cmds = []
    if ctx.installed_version("flashinfer-cubin") and len(specs) == 1:
        cmds.append("pip uninstall -y flashinfer-cubin")
        warnings.append(
            f"the manifests know no flashinfer-cubin {choice.version} and SGLang {stack.sglang.version} does not "
            "pin it: the installed one is removed rather than left mismatched"
        )
    cmds.append("pip install " + " ".join(q(s) for s in specs))
    if cubins_lacking_after(ctx.facts, len(specs) > 1):
        # the new release reads its cubins from its own commit-named directories: fetch them now, online, rather
        # than at the server's first trtllm-gen kernel (refused under FLASHINFER_NO_DOWNLOAD, a stall offline)
        cmds.append("python -m flashinfer download-cubin")
        warnings.append(
            f"FlashInfer {choice.version} reads its trtllm-gen cubins from directories of its own, which this box "
            "lacks: run `python -m flashinfer download-cubin` online as the server's user with its environment "
            "(it fills the directory that process picks: FLASHINFER_CUBIN_DIR or the cache under "
            "FLASHINFER_WORKSPACE_BASE / HOME)"
        )
    if ctx.installed_version("flashinfer-jit-cache"):
        jit = find_release(ctx, "flashinfer-jit-cache", choice.version)
        url = _index(ctx, "flashinfer-jit-cache", stack.torch.variant)
        if jit is not None and url:
            cmds.append(f"pip install {q(f'flashinfer-jit-cache=={choice.version}')} --index-url {q(url)}")
        else:
            warnings.append(
                f"the manifests know no flashinfer-jit-cache {choice.version}: uninstall flashinfer-jit-cache"
            )
    return Install(tuple(cmds), tuple(warnings))


def install_sglang(ctx: Context, choice: Choice, box: Box, stack: Stack) -> Install:
    """SGLang; pip brings each installed package the release pins exactly to its pin (told, with the version it
    replaces: a local build of it is replaced too), and installs each one it pins that the box lacks (told too)."""
    packages = ctx.facts.get("packages") or {}
    warnings = []
    for name, version in sorted(pinned_companions(choice.release, packages).items()):
        have = packages.get(name) or {}
        old = str(have.get("version") or have.get("dist_version") or "an unread version")
        pin = f"sglang {choice.version} pins {name}=={version}"
        warnings.append(f"pip also replaces {name} {old} with {version} ({pin})")
    for name, version in sorted(pinned_additions(choice.release, packages).items()):
        warnings.append(f"pip also installs {name} {version} (sglang {choice.version} pins {name}=={version})")
    for name, spec in sorted(ranged_additions(choice.release, packages).items()):
        picks = "the release pip picks is not known here"
        warnings.append(f"pip also installs {name} (sglang {choice.version} requires {name}{spec}; {picks})")
    return Install((f"pip install {q(f'sglang=={choice.version}')}",), tuple(warnings))
