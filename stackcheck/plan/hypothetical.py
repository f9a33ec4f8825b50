"""Hypothetical facts: the box's facts with some components replaced by a stack's choices (what the facts
would say after the plan's steps), and the engine that judges features on them. Pure.

Every feature evaluation of the planner goes through `Engine` (the verdicts on the box as it is, on a
candidate stack, on the facts after a step), so that is the one place to memoise them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping

from stackcheck.facts.model import KERNEL_PACKAGES
from stackcheck.facts.versions import parse_version, public, version_in
from stackcheck.knowledge.loader import Manifests
from stackcheck.lean_typing import TYPE_CHECKING, NamedTuple
from stackcheck.plan.deps import EVERY, feature_components, predicate_components
from stackcheck.plan.solver import Choice, Stack, pinned_additions, pinned_companions, ranged_additions
from stackcheck.verdicts.context import Context, SharedOutcomes
from stackcheck.verdicts.engine import evaluate_check, evaluate_feature, feature_ok_or_rule, rules_hold
from stackcheck.verdicts.engine import prepare as prepare_rules

if TYPE_CHECKING:
    from typing import Any

    from stackcheck.facts.model import Facts
    from stackcheck.verdicts.types import CheckVerdict, FeatureVerdict  # (typing: ~3 ms, for annotations only)


def _pkg(version: str, variant: str | None, cuda: str | None) -> dict[str, Any]:
    p: dict[str, Any] = {"installed": True, "version": version, "dist_version": str(public(version) or version)}
    if variant:
        p["variant"] = variant
    if cuda:
        p["cuda"] = cuda
    return p


def _nccl_link_after_toolkit(old_jit: dict[str, Any]) -> dict[str, Any]:
    """The jit probe's `libnccl_so_found` / `libnccl_so` after a toolkit step: a `-lnccl` link searches the same
    directories but the CUDA home's lib directory, which becomes the new toolkit's (a complete CUDA toolkit holds no
    libnccl.so: NCCL is a package of its own; inferred). So none found stays none, one found outside a CUDA home
    stays found, one found in a CUDA home (the old one, or /usr/local/cuda*, which the step may repoint) is left
    out: unknown, as a facts document without the key."""
    found = old_jit.get("libnccl_so_found")
    if found is False:
        return {"libnccl_so_found": False}
    so, home = old_jit.get("libnccl_so"), old_jit.get("toolkit")
    if found is not True or not isinstance(so, str):
        return {}
    homes = ["/usr/local/cuda"] + ([home.rstrip("/")] if isinstance(home, str) and home.rstrip("/") else [])
    if any(so.startswith(h) for h in homes):
        return {}
    return {"libnccl_so_found": True, "libnccl_so": so}


#: jit keys a toolkit step leaves as they are: the C++ compiler on the server's PATH ($CXX, else c++) and
#: SGLANG_NCCL_SO_PATH are the environment's, not the toolkit's (tests/plan/test_toolkit_step_key_coverage.py fails for
#: a documented jit fact path neither here nor among the keys the step recomputes)
_KEPT_BY_TOOLKIT = ("cxx_found", "cxx", "cxx_reason", "cxx_quoted_found", "cxx_split_found", "cxx_split_reason",
                    "nccl_so_path", "nccl_so_path_found", "nccl_so_path_init_config", "nccl_so_path_window",
                    "nccl_so_path_mem_alloc", "nccl_so_path_reason", "nccl_so_path_version", "nccl_so_path_cuda",
                    "nccl_so_path_cuda_major",
                    "nccl_so_path_version_reason", "flashinfer_host", "flashinfer_host_reason",
                    "flashinfer_allow_unsupported")  # fmt: skip


def host_gnu_max(ctx: Context | None, version: str) -> tuple[int | None, str]:
    """(the newest GCC major CUDA `version`'s nvcc takes, from components.json's cuda release `host_gnu_max`: its
    include/crt/host_config.h read in the release's wheel; None where the manifests do not say, with why)."""
    manifests = getattr(ctx, "manifests", None)
    components = getattr(manifests, "components", None)
    releases = (components.get("cuda") or {}).get("releases") or [] if isinstance(components, Mapping) else []
    key = ".".join(str(version).split(".")[:2])
    for rel in releases:
        if isinstance(rel, Mapping) and str(rel.get("version")) == key:
            limit = rel.get("host_gnu_max")
            major = limit.get("major") if isinstance(limit, Mapping) else None
            if isinstance(major, int):
                return major, ""
    return None, f"the include/crt/host_config.h of CUDA {key} (the step's toolkit) was not read"


def _gnu_after_toolkit(out: dict[str, Any], old_jit: dict[str, Any], limit: tuple[int | None, str]) -> None:
    """The new toolkit's GCC limit (host_gnu_max) against the gcc majors kept (igap24 and irev57 each found it;
    before, the step dropped the `*_gnu_max` / `*_gnu_supported` keys, so the version rules were not judged after it:
    a gcc 15 host read fine after a step to CUDA 12.9, whose host_config.h takes gcc 14 at most). Judged only where
    -allow-unsupported-compiler is known not to be given (flashinfer_allow_unsupported false: none of
    NVCC_PREPEND_FLAGS, NVCC_APPEND_FLAGS and FLASHINFER_EXTRA_CUDAFLAGS holds it; or the old toolkit's limit was
    read for that compiler); a release the manifests have no limit for leaves `*_gnu_supported` null, unknown."""
    most, why = limit
    for key in ("nvcc_host", "cc_host"):
        major = out.get(f"{key}_gnu_major")
        if not isinstance(major, int):
            unread = f"{key}_gnu_supported" in old_jit and old_jit[f"{key}_gnu_supported"] is None
            if unread and out.get(f"{key}_found"):
                # the probe read no major for the compiler kept (a ccache link in gcc's name: irev58): still not
                # read after the step, so the version rule stays unknown (left out, it was skipped: a pass)
                out[f"{key}_gnu_supported"] = None
                out[f"{key}_gnu_supported_reason"] = str(old_jit.get(f"{key}_gnu_supported_reason") or "not read")
            continue
        # -allow-unsupported-compiler known not to reach nvcc: none of the three variables holds it, or the old
        # toolkit's limit was read for this compiler (the probe leaves it out where NVCC_*_FLAGS give the option)
        if old_jit.get("flashinfer_allow_unsupported") is not False and type(old_jit.get(f"{key}_gnu_max")) is not int:
            continue
        if most is None:
            out[f"{key}_gnu_supported"] = None
            out[f"{key}_gnu_supported_reason"] = why
        else:
            out[f"{key}_gnu_max"] = most
            out[f"{key}_gnu_supported"] = major <= most


def _compiler_after_toolkit(
    old_jit: dict[str, Any], limit: tuple[int | None, str] = (None, "not read")
) -> dict[str, Any]:
    """The jit probe's compiler keys after a toolkit step (igap23; before, the step dropped them, so a box with no C++
    compiler read unknown after it and left the plan's still-failing list). Kept: the C++ compiler on the PATH and
    SGLANG_NCCL_SO_PATH (_KEPT_BY_TOOLKIT); nvcc's host compiler where it is gcc on the PATH (not in the old toolkit's
    bin or nvvm/bin), or none was found, since a CUDA toolkit brings no gcc (inferred, as NVIDIA's install guide has
    gcc installed beforehand), or where the environment names it (NVCC_CCBIN, -ccbin in NVCC_PREPEND_FLAGS /
    NVCC_APPEND_FLAGS), judged against the new toolkit's gcc limit (components.json's host_gnu_max of its release:
    _gnu_after_toolkit); a reason that was the old toolkit's (a wrapper nvcc, its nvcc.profile)
    is dropped. cuda_runtime.h is found in the new, complete toolkit's include directory, as the step's other headers
    are, and torch's -lcudart in its lib64 (libcudart.so; igap24); a missing nccl.h stays missing (no CUDA toolkit
    ships NCCL: inferred), a found one is not known."""
    out = {k: old_jit[k] for k in _KEPT_BY_TOOLKIT if k in old_jit}
    home = old_jit.get("toolkit")
    home = home.rstrip("/") if isinstance(home, str) and home.rstrip("/") else None
    host, reason = old_jit.get("nvcc_host"), old_jit.get("nvcc_host_reason")
    found = old_jit.get("nvcc_host_found")
    in_old_home = _in_toolkit_home(host, home)
    if found is False and not in_old_home:
        out["nvcc_host_found"] = False
        if isinstance(host, str):
            out["nvcc_host"] = host
        if isinstance(reason, str):
            out["nvcc_host_reason"] = reason
    elif found is True and isinstance(host, str) and not in_old_home:
        out.update(nvcc_host_found=True, nvcc_host=host)
        if isinstance(old_jit.get("nvcc_host_gnu_major"), int):
            out["nvcc_host_gnu_major"] = old_jit["nvcc_host_gnu_major"]
        # (the gcc's own sanitizer headers are the environment's: a CUDA toolkit ships none, inferred; icov1)
        for key in ("nvcc_host_asan_header_found", "nvcc_host_asan_header_reason"):
            if key in old_jit:
                out[key] = old_jit[key]
        out.update(_clang_after_toolkit(old_jit, "nvcc_host"))
    elif "nvcc_host_found" not in old_jit and isinstance(reason, str) and "names nvcc's host compiler" in reason:
        out["nvcc_host_reason"] = reason
    out.update(_cc_after_toolkit(old_jit, home))
    out.update(_pytorch_nvcc_after_toolkit(old_jit))
    _gnu_after_toolkit(out, old_jit, limit)
    out["cxx_cuda_runtime_h_found"] = True
    out["libcudart_so_found"] = True  # torch's -L<CUDA home>/lib64: the new, complete toolkit's (cuda-cudart-dev)
    if old_jit.get("cxx_nccl_h_found") is False:
        out["cxx_nccl_h_found"] = False
    return out


#: toolkit homes whose bin directory is the system's own (a distro nvcc at /usr/bin/nvcc: home /usr): a compiler found
#: there is the system's, which a toolkit step (installing a toolkit elsewhere) leaves in place (irev57)
SYSTEM_HOMES = ("/usr", "/usr/local")


def _in_toolkit_home(host: Any, home: str | None) -> bool:
    """Whether the compiler path `host` lies in the old toolkit's home (a gcc linked into /usr/local/cuda-12.8/bin: the
    step replaces it), never where that home is a system prefix (SYSTEM_HOMES)."""
    return isinstance(host, str) and home is not None and home not in SYSTEM_HOMES and host.startswith(home + "/")


def _cc_after_toolkit(old_jit: dict[str, Any], home: str | None) -> dict[str, Any]:
    """The compiler CC names (FlashInfer's `-ccbin $CC`, the `cc_host*` keys) after a toolkit step: the environment's,
    kept as read (the new toolkit's gcc limit is applied by _gnu_after_toolkit); a CC found in the old
    toolkit's directories, or one not read there because of the old nvcc (a wrapper), is not known after it."""
    host = old_jit.get("cc_host")
    if "cc_host_found" not in old_jit or _in_toolkit_home(host, home):
        return {}
    reason = old_jit.get("cc_host_reason")
    if old_jit["cc_host_found"] is None and isinstance(reason, str) and "wrapper" in reason:
        return {}
    keys = (
        "cc_host_found",
        "cc_host",
        "cc_host_reason",
        "cc_host_gnu_major",
        "cc_host_one_program",
        "cc_host_asan_header_found",
        "cc_host_asan_header_reason",
    )
    return {**{k: old_jit[k] for k in keys if k in old_jit}, **_clang_after_toolkit(old_jit, "cc_host")}


def _clang_after_toolkit(old_jit: dict[str, Any], key: str) -> dict[str, Any]:
    """A kept host compiler's clang keys after a toolkit step (irev63: the step dropped them, so a CC=clang-20 that the
    old toolkit refuses was judged by no clang rule after it: a pass): its major is the compiler's, kept; the new
    toolkit's clang limit is in no manifest (components.json reads host_gnu_max only), so `KEY_clang_supported` is
    null (unknown) where the old toolkit's limit was read, and `KEY_clang_max` is left out."""
    out: dict[str, Any] = {}
    if isinstance(old_jit.get(f"{key}_clang_major"), int):
        out[f"{key}_clang_major"] = old_jit[f"{key}_clang_major"]
    if f"{key}_clang_supported" in old_jit:
        out[f"{key}_clang_supported"] = None
        out[f"{key}_clang_supported_reason"] = "the clang limit of the step's toolkit (its include/crt/host_config.h)"
        out[f"{key}_clang_supported_reason"] += " is not read"
    return out


def _pytorch_nvcc_after_toolkit(old_jit: dict[str, Any]) -> dict[str, Any]:
    """PYTORCH_NVCC's keys after a toolkit step (irev63: dropped, so FlashInfer < 0.4.0rc4's rules about it were
    skipped after the step, a pass, while the variable, the environment's, still named the program it named): the
    variable and whether its program is there are kept; whether it is the JIT toolkit's nvcc is not known once the
    step points CUDA_HOME at another toolkit (null: unknown)."""
    out: dict[str, Any] = {
        k: old_jit[k] for k in ("pytorch_nvcc", "pytorch_nvcc_found", "pytorch_nvcc_reason") if k in old_jit
    }
    if "pytorch_nvcc_same" in old_jit:
        out["pytorch_nvcc_same"] = None
    return out


#: the trtllm-gen families the flashinfer-cubin wheel carries: its build runs FlashInfer's download_artifacts into
#: flashinfer_cubin/cubins for these (flashinfer-ai/flashinfer flashinfer-cubin/build_backend.py, read by iplan2; the
#: wheel itself not downloaded: inferred)
CUBIN_PACKAGE_FAMILIES = ("TRTLLM_GEN_FMHA", "TRTLLM_GEN_BMM", "TRTLLM_GEN_GEMM", "DEEPGEMM")


def cubin_package_kept(ctx: Context, version: str) -> bool:
    """Whether a FlashInfer step to `version` installs flashinfer-cubin of that version beside it on a box that has
    the package: where the manifests know that release (install_flashinfer; else it uninstalls the package)."""
    from stackcheck.plan.solver import find_release

    return find_release(ctx, "flashinfer-cubin", version) is not None


def _cubins_after_flashinfer(old: Any, pkgs: Mapping[str, Any], version: str) -> dict[str, Any] | None:
    """The flashinfer_cubins section after a FlashInfer step: where the box took its cubins from the flashinfer-cubin
    package (the section's dir_source) and the step moves that package to the same release, the new release's
    families come with it (CUBIN_PACKAGE_FAMILIES: inferred); None (the old section stays, read for the old release,
    so its rules are unknown: Context._flashinfer_cubins_fact) otherwise."""
    cubin = pkgs.get("flashinfer-cubin")
    if not isinstance(old, Mapping) or old.get("dir_source") != "flashinfer-cubin":
        return None
    if not isinstance(cubin, Mapping) or not cubin.get("installed") or cubin.get("version") != version:
        return None
    return {"release": version, "dir_source": "flashinfer-cubin", "no_download": bool(old.get("no_download")),
            "ready": dict.fromkeys(CUBIN_PACKAGE_FAMILIES, True), "planned": True}  # fmt: skip


def cubins_lacking_after(facts: Mapping[str, Any], cubin_kept: bool) -> bool:
    """Whether a FlashInfer step leaves the box without the new release's trtllm-gen cubins where it had its old
    release's (the flashinfer-cubin package, or a complete family in the directory FlashInfer read) or refuses
    downloads (FLASHINFER_NO_DOWNLOAD): each release reads its own commit-named directories (ArtifactPath), so the
    old release's files do not serve the new one, and without the package of the new release (`cubin_kept`: the
    step installs flashinfer-cubin at that version) its first trtllm-gen kernel downloads them, or fails where
    downloads are refused (icubin2: recommend proposed 0.7.2 beside the removal of flashinfer-cubin 0.6.18 and judged
    trtllm_mha on the package's cubins)."""
    old = facts.get("flashinfer_cubins")
    if cubin_kept or not isinstance(old, Mapping) or "error" in old:
        return False
    families = old.get("families")
    complete = any(
        isinstance(f, Mapping) and f.get("manifest") is True and f.get("missing") == 0
        for f in (families.values() if isinstance(families, Mapping) else ())
    )
    return old.get("dir_source") == "flashinfer-cubin" or bool(old.get("no_download")) or complete


#: the families `python -m flashinfer download-cubin` fetches (download_artifacts: 0.7.2 flashinfer/artifacts.py
#: :254-261;
#: DSL_FMHA too from 0.6.10, not read by the probe; never CUDNN_SDPA)
DOWNLOAD_CUBIN_FAMILIES = CUBIN_PACKAGE_FAMILIES


def _cubins_downloaded(old: Mapping[str, Any], version: str) -> dict[str, Any]:
    """The flashinfer_cubins section after a plan step that runs `python -m flashinfer download-cubin` for the new
    release (install_flashinfer adds it where cubins_lacking_after): its families planned present in the directory
    the server's FlashInfer picks (the step says to run it as the server's user with its environment)."""
    source = old.get("dir_source")
    out = {"release": version, "dir_source": "cache" if source in (None, "flashinfer-cubin") else source,
           "no_download": bool(old.get("no_download")), "ready": dict.fromkeys(DOWNLOAD_CUBIN_FAMILIES, True),
           "planned": True}  # fmt: skip
    repository = old.get("repository")
    if repository in ("unfetchable", "local"):
        # (irev79) download-cubin fetches from FLASHINFER_CUBINS_REPOSITORY too (0.7.2 artifacts.py get_checksums
        # :210-224, get_subdir_file_list :249-266): a file:// URL has no requests adapter, and a local directory's
        # copy of this release's families was not read, so the step's outcome is not known there
        why = ("FLASHINFER_CUBINS_REPOSITORY is a file:// URL (or another scheme requests cannot fetch): the step's "
               "download-cubin fails" if repository == "unfetchable" else
               "FLASHINFER_CUBINS_REPOSITORY is a local directory, whose copy of this release's cubins was not read: "
               "whether the step's download-cubin finds them is not known")  # fmt: skip
        out["ready"] = dict.fromkeys(DOWNLOAD_CUBIN_FAMILIES, None)
        out["ready_reason"] = dict.fromkeys(DOWNLOAD_CUBIN_FAMILIES, why)
    return out


def apply_choice(facts: Facts, choice: Choice, ctx: Context) -> Facts:
    """A copy of the facts with one component replaced (shallow where nothing changes)."""
    out: dict[str, Any] = dict(facts)
    changed: list[str] = []
    if choice.component in ("driver", "torch", "kernel"):
        # the symbols were looked up in the installed torch and driver: after a change the release data decides
        out.pop("kernel_symbols", None)
    if choice.component == "driver":
        first = choice.release.get("first_version") if choice.release else None
        out["driver"] = {
            "version": str(first) if first else f"{choice.version}.0",
            "cuda": choice.cuda,
            "source": "plan",
        }
        return out  # type: ignore[return-value]
    if choice.component == "toolkit":
        out["cuda_toolkits"] = [
            {"path": None, "version": choice.version, "source": "plan", "active_for_build": True},
            *[{**dict(t), "active_for_build": False} for t in facts.get("cuda_toolkits") or []],
        ]
        # the step points CUDA_HOME at the new toolkit (a complete install): it is what JIT builds pick then;
        # Triton's ptxas overrides are environment variables the step does not touch
        old_jit = facts.get("jit")
        ptxas = old_jit.get("triton_ptxas") if isinstance(old_jit, dict) else None
        out["jit"] = {"toolkit": None, "chosen_by": "plan (CUDA_HOME)", "nvcc": None, "nvcc_found": True,
                      "cuda": choice.version, "fp8_header": True, "fp4_header": True, "curand_header": True,
                      "triton_ptxas": dict(ptxas) if isinstance(ptxas, dict) else {}}  # fmt: skip
        if isinstance(old_jit, dict):  # a ROCm home and the ninja on PATH stay where they are
            for key in ("rocm_home", "ninja_found", "ninja"):
                if key in old_jit:
                    out["jit"][key] = old_jit[key]
            out["jit"].update(_nccl_link_after_toolkit(old_jit))
            out["jit"].update(_compiler_after_toolkit(old_jit, host_gnu_max(ctx, choice.version)))
        return out  # type: ignore[return-value]
    pkgs: dict[str, Any] = dict(facts.get("packages") or {})
    if choice.component == "torch":
        pkgs["torch"] = _pkg(f"{choice.version}+{choice.variant}", choice.variant, choice.cuda)
        changed.append("torch")
        triton = torch_triton(choice.release, pkgs.get("triton"), ctx)
        if triton is not None:  # pip install torch==V brings Triton to V's pin (Requires-Dist): Triton's ptxas
            pkgs["triton"] = triton
            changed.append("triton")
        nccl = torch_nccl_step(choice, pkgs)
        if nccl is not None:  # and its NCCL wheel to V's pin (nvidia-nccl-cuNN==P, the variant's `nccl`), with the
            if nccl.entry is not None:  # other CUDA major's wheel uninstalled first by the step (igap52)
                pkgs[nccl.wheel] = nccl.entry
                changed.append(nccl.wheel)
            if nccl.remove is not None:
                pkgs[nccl.remove] = {"installed": False}
                changed.append(nccl.remove)
    elif choice.component == "kernel":
        for other in KERNEL_PACKAGES:
            if other != choice.name and isinstance(pkgs.get(other), dict) and pkgs[other].get("installed"):
                pkgs[other] = {"installed": False}
                changed.append(other)
        version = f"{choice.version}+{choice.variant}" if choice.variant else choice.version
        pkgs[choice.name] = _pkg(version, choice.variant, choice.cuda)
        changed.append(choice.name)
    elif choice.component == "flashinfer":
        pkgs["flashinfer-python"] = _pkg(choice.version, None, None)
        changed.append("flashinfer-python")
        for extra in ("flashinfer-cubin", "flashinfer-jit-cache"):
            p = pkgs.get(extra)
            if isinstance(p, dict) and p.get("installed"):
                if extra == "flashinfer-cubin" and not cubin_package_kept(ctx, choice.version):
                    pkgs[extra] = {"installed": False}  # (install_flashinfer uninstalls it: no such release known)
                else:
                    pkgs[extra] = {**p, "version": choice.version, "dist_version": choice.version}
                changed.append(extra)
        old_cubins = facts.get("flashinfer_cubins")
        cubins = _cubins_after_flashinfer(old_cubins, pkgs, choice.version)
        if cubins is None and isinstance(old_cubins, Mapping):
            kept = bool((pkgs.get("flashinfer-cubin") or {}).get("installed"))
            if cubins_lacking_after(facts, kept):
                cubins = _cubins_downloaded(old_cubins, choice.version)
        if cubins is not None:
            out["flashinfer_cubins"] = cubins
    elif choice.component == "sglang":
        pkgs["sglang"] = _pkg(choice.version, None, None)
        changed.append("sglang")
        # pip install sglang==R also brings each installed package R pins exactly (sgl-deep-ep, sgl-deep-gemm) to
        # its pin: after the step the box has the pinned one, never the old one beside the new SGLang
        for name, version in pinned_companions(choice.release, pkgs).items():
            pkgs[name] = _pkg(version, None, None)
            changed.append(name)
        # and installs each one it pins that the box lacks (listed as not installed: igap33), where the pin carries
        # no marker (pinned_additions)
        for name, version in pinned_additions(choice.release, pkgs).items():
            pkgs[name] = _pkg(version, None, None)
            changed.append(name)
        # a ranged requirement (sglang 0.5.17's quack-kernels>=0.6.1) installs one release of the range, which one
        # is not known: installed, its version unknown (a rule that reads the version is unknown, never passed)
        for name, spec in ranged_additions(choice.release, pkgs).items():
            why = f"installed by the plan's SGLang step: sglang {choice.version} requires {name}{spec}, pip's release"
            pkgs[name] = {"installed": True, "version": None, "error": why + " of it is not known"}
            changed.append(name)
    out["packages"] = pkgs
    binaries = facts.get("binaries")
    if isinstance(binaries, dict) and any(n in binaries for n in changed):
        out["binaries"] = {k: v for k, v in binaries.items() if k not in changed}
    tables = facts.get("source_tables")
    if isinstance(tables, dict) and tables:
        gate_pkg = {str(g.get("id")): g.get("package") for g in ctx.manifests.gates}
        out["source_tables"] = {k: v for k, v in tables.items() if gate_pkg.get(k) not in changed}
    return out  # type: ignore[return-value]


class NcclStep(NamedTuple):
    """What a torch step does to the NCCL wheels (torch_nccl_step). (A NamedTuple: no dataclasses import.)"""

    wheel: str  # nvidia-nccl-cuNN of torch's CUDA major, which the new torch requires
    pin: str  # the release it requires (components.json, the variant's `nccl`)
    entry: dict[str, Any] | None  # that wheel's entry after the step; None: unchanged (installed at the pin already)
    remove: str | None  # the other CUDA major's wheel, installed: the step uninstalls it before installing torch
    reinstall: bool  # the wheel not named by the facts (maybe at the pin): reinstalled after the removal
    read: bool  # the pin was read in this build's own wheel (False: inferred, the variant's `nccl_read` says how)


#: the NCCL wheel of the other CUDA major, which writes the same nvidia/nccl/lib/libnccl.so.2 (check nccl's rule
#: one-nccl-wheel: read in nvidia-nccl-cu12 2.27.3's and nvidia-nccl-cu13 2.28.9's RECORD)
_OTHER_NCCL = {"12": "nvidia-nccl-cu13", "13": "nvidia-nccl-cu12"}


def torch_nccl_step(choice: Choice, pkgs: Mapping[str, Any]) -> NcclStep | None:
    """The NCCL wheels after `pip install torch==V+VARIANT` (None: no change, or the variant states no pin).

    The variant's wheel requires nvidia-nccl-cuNN==P of its CUDA major (components.json `nccl`, its METADATA's
    Requires-Dist: torch 2.14.1+cu130 nvidia-nccl-cu13==2.30.7), so pip brings that wheel to P: an installed one of
    another release (ifc46), and one listed as not installed or not named at all is installed (igap52). pip leaves the
    other CUDA major's wheel in place, and both write nvidia/nccl/lib/libnccl.so.2 (one-nccl-wheel: 'undefined symbol
    ncclCommResume'): where the step's install is what adds torch's wheel beside it (torch's not installed before),
    the step uninstalls the other first (`remove`), since uninstalling it after torch would delete the new wheel's copy
    of the file (pip removes what the wheel's RECORD lists). Where torch's wheel is not named by the facts it may be
    there at P already, which pip keeps with its file deleted by the removal: the step reinstalls it (`reinstall`).
    Both installed before the step: left as they are (the check stays failing after the plan, its fix by hand)."""
    variants = choice.release.get("variants") if isinstance(choice.release, Mapping) else None
    record = next((v for v in variants or [] if isinstance(v, Mapping) and v.get("variant") == choice.variant), None)
    pin = record.get("nccl") if record is not None else None
    major = str(choice.cuda or "").split(".")[0]
    if not isinstance(pin, str) or not pin or major not in _OTHER_NCCL:
        return None
    name, other = f"nvidia-nccl-cu{major}", _OTHER_NCCL[major]
    have, there = pkgs.get(name), pkgs.get(other)
    installed = isinstance(have, Mapping) and bool(have.get("installed"))
    remove = other if isinstance(there, Mapping) and there.get("installed") and not installed else None
    entry: dict[str, Any] | None
    if installed and isinstance(have, Mapping) and have.get("version") == pin:
        entry = None
    elif installed and isinstance(have, Mapping):
        entry = {**have, "version": pin, "dist_version": pin}
    else:
        entry = _pkg(pin, None, None)
    if entry is None and remove is None:
        return None
    read_note = record.get("nccl_read") if record is not None else None
    read = not (isinstance(read_note, Mapping) and read_note.get("inferred"))
    return NcclStep(name, pin, entry, remove, remove is not None and not isinstance(have, Mapping), read)


def torch_triton(release: Mapping[str, Any], have: Any, ctx: Context) -> dict[str, Any] | None:
    """The triton entry after `pip install torch==V` (V's `requires.triton`, components.json), or None when it does
    not change: no pin, triton not installed (not probed, or another install), or the installed one meets the pin
    (pip keeps it). Otherwise the newest triton the manifests know that meets the pin; none known: installed with
    its version not known (what reads it is unknown, never judged on the old one)."""
    spec = (release.get("requires") or {}).get("triton") if isinstance(release, Mapping) else None
    if not isinstance(spec, str) or not isinstance(have, Mapping) or not have.get("installed"):
        return None
    marker = ((release.get("requires_read") or {}).get("markers") or {}).get("triton")
    applies = _marker_holds(marker, ctx.facts.get("system") or {}) if isinstance(marker, str) else True
    if applies is False:  # the pin's environment marker leaves this box out (torch 2.9 pins Triton on x86_64 only)
        return None
    if applies is None:  # a marker this reader does not follow, or a box fact it needs not read: Triton not known
        return {"installed": True, "version": None}
    installed = str(have.get("dist_version") or have.get("version") or "")
    if installed and version_in(installed, spec):
        return None
    newest = _newest_triton(spec, ctx.manifests)
    if newest is None:
        return {"installed": True, "version": None}
    return _pkg(newest, None, None)


def _newest_triton(spec: str, manifests: Manifests) -> str | None:
    """The newest triton release of the manifests that meets `spec` (None: none), remembered with the manifests per
    specifier: the planner asks it for every candidate stack that replaces torch (each of ~20 torch choices walked
    every triton release)."""
    memo = manifests.derived("plan.newest_triton")
    if spec in memo:
        return memo[spec]  # type: ignore[no-any-return]
    known = [
        (parsed, str(r.get("version")))
        for r in manifests.releases("triton")
        if version_in(str(r.get("version")), spec) and (parsed := parse_version(str(r.get("version")))) is not None
    ]
    got = memo[spec] = max(known)[1] if known else None
    return got


#: the marker variables torch's Requires-Dist on triton uses (components.json requires_read.markers), read from the
#: box's facts: PEP 508's platform_system, platform_machine and python_version
_MARKER_OPS = ("==", "!=", "<=", ">=", "<", ">")


def _marker_holds(marker: str, system: Mapping[str, Any]) -> bool | None:
    """Whether a PEP 508 marker of `A op "V" and B op "V" ...` over platform_system, platform_machine and
    python_version holds for the box (system.os read as Linux where it names a Linux distribution, system.machine,
    system.python); None where a term is of another shape or the fact it needs is not known."""
    machine, python = system.get("machine"), system.get("python")
    values: dict[str, str | None] = {
        "platform_system": "Linux" if isinstance(system.get("os"), str) and system.get("os") else None,
        "platform_machine": machine if isinstance(machine, str) else None,
        "python_version": ".".join(python.split(".")[:2]) if isinstance(python, str) and python else None,
    }
    result = True
    for term in marker.split(" and "):
        words = term.strip().split(None, 2)
        if len(words) != 3 or words[0] not in values or words[1] not in _MARKER_OPS:
            return None
        name, op, quoted = words
        if len(quoted) < 2 or quoted[0] not in "\"'" or quoted[-1] != quoted[0] or quoted.count(quoted[0]) != 2:
            return None  # one quoted string, nothing after it (`... or ...`, parentheses: not followed)
        value, want = values[name], quoted[1:-1]
        if value is None:
            return None
        if name == "python_version":
            a, b = parse_version(value), parse_version(want)
            if a is None or b is None:
                return None
            holds = {"==": a == b, "!=": a != b, "<=": a <= b, ">=": a >= b, "<": a < b, ">": a > b}[op]
        elif op in ("==", "!="):
            holds = (value == want) == (op == "==")
        else:
            return None
        result = result and holds
    return result


def stack_facts(ctx: Context, stack: Stack) -> Facts:
    facts = ctx.facts
    for ch in applied(stack).values():
        facts = apply_choice(facts, ch, ctx)
    return facts


def applied(stack: Stack) -> dict[str, Choice]:
    """The choices of a stack that replace something on the box (a current choice changes nothing), by component in
    the order driver, torch, kernel, flashinfer, sglang (read by attribute: the planner asks it of every stack)."""
    out: dict[str, Choice] = {}
    for c, ch in (
        ("driver", stack.driver),
        ("torch", stack.torch),
        ("kernel", stack.kernel),
        ("flashinfer", stack.flashinfer),
        ("sglang", stack.sglang),
    ):
        if ch is not None and not ch.current:
            out[c] = ch
    return out


def _node_memo(manifests: Manifests, has_gpus: bool) -> dict[int, tuple[Any, frozenset[str] | None]]:
    """deps.predicate_components' answers for every predicate node read so far, remembered with the manifests (by
    the node's identity; the manifests keep it alive), since the planner asks about every predicate on every
    plan."""
    return manifests.derived(f"plan.node_components.{has_gpus}")


def _reads_no_component(pred: Any, manifests: Manifests, has_gpus: bool) -> bool:
    """deps.predicate_components(pred) is empty (read from _node_memo): remembered with the manifests too (by the
    predicate's identity), since the planner asks about every predicate on every plan."""
    memo = manifests.derived("plan.reads_no_component")
    key = (id(pred), has_gpus)
    got = memo.get(key)
    if got is not None and got[0] is pred:
        return bool(got[1])
    answer = predicate_components(pred, manifests, has_gpus, _node_memo(manifests, has_gpus)) == frozenset()
    memo[key] = (pred, answer)
    return answer


#: the components a Stack holds as attributes (solver.Stack: one choice each; applied() reads them)
_STACK_PARTS = frozenset(("driver", "torch", "kernel", "flashinfer", "sglang"))


def _no_component_reader(manifests: Manifests, has_gpus: bool) -> Callable[[Any], bool | None]:
    """A function of a predicate: _reads_no_component's answer where it is remembered already (a rule's `when` and
    `require`, which prime reads back, or a predicate asked before), else None: nothing is worked out. It reads the
    memo without asking the manifests for it on each call (SharedOutcomes asks it of every predicate it has not
    settled: ~1,100 times a first run of `plan --want`; iperf28). The memo is the manifests' own dict, which
    _reads_no_component fills: an answer added later is read too (forget_indexes gives the manifests a new one,
    which this reader does not see: it then answers None, not known, and the caller works the answer out)."""
    memo = manifests.derived("plan.reads_no_component")

    def known(pred: Any) -> bool | None:
        got = memo.get((id(pred), has_gpus))
        return bool(got[1]) if got is not None and got[0] is pred else None

    return known


def _components(feature: Any, manifests: Manifests, has_gpus: bool) -> tuple[frozenset[str], frozenset[str]]:
    """deps.feature_components, remembered with the manifests like _node_memo."""
    memo = manifests.derived("plan.feature_components")
    key = (id(feature), has_gpus)
    got = memo.get(key)
    if got is not None and got[0] is feature:
        return got[1]  # type: ignore[no-any-return]
    answer = feature_components(feature, manifests, has_gpus, _node_memo(manifests, has_gpus))
    memo[key] = (feature, answer)
    return answer


def _fixed_rules(feature: Any, manifests: Manifests, has_gpus: bool) -> list[Any]:
    """The feature's rules whose `when` and `require` read no component a choice replaces (_reads_no_component):
    each has one outcome on every hypothetical facts of a plan. Remembered with the manifests like _components."""
    memo = manifests.derived("plan.fixed_rules")
    key = (id(feature), has_gpus)
    got = memo.get(key)
    if got is not None and got[0] is feature:
        return got[1]  # type: ignore[no-any-return]
    answer = [
        rule
        for rule in feature.get("rules") or []
        if isinstance(rule, dict)
        and all(_reads_no_component(rule[part], manifests, has_gpus) for part in ("when", "require") if part in rule)
    ]
    memo[key] = (feature, answer)
    return answer


def _check_reads(check: Any, manifests: Manifests, has_gpus: bool) -> frozenset[str]:
    """The components a stack check's verdict (verdicts.evaluate_check) can depend on: those its rules read and
    those its `needs` name (deps.feature_components, exact and presence together: either way a replaced one may
    change the verdict); every component for a builtin check (code, not rules: the shared libraries, the kernel's
    coverage, pins, the kernel symbol probe). Remembered with the manifests like _components."""
    memo = manifests.derived("plan.check_reads")
    key = (id(check), has_gpus)
    got = memo.get(key)
    if got is not None and got[0] is check:
        return got[1]  # type: ignore[no-any-return]
    answer = EVERY
    if check.get("builtin") is None:
        exact, presence = feature_components(check, manifests, has_gpus, _node_memo(manifests, has_gpus))
        answer = exact | presence
    memo[key] = (check, answer)
    return answer


#: the shipped documents the kept dependency answers (prime) are made of: the rules (features.json, checks.json), the
#: gates' packages (gates.json) and the SGLang releases' pins (components.json: deps.companions)
_DEPS_DOCS = ("features.json", "checks.json", "gates.json", "components.json")


def prime(manifests: Manifests, has_gpus: bool) -> None:
    """Fill the planner's dependency memos (_components, _check_reads, _reads_no_component and _node_memo of every
    rule's `when` and `require`) for every feature and check of the shipped manifests at once, from what an earlier
    run worked out (knowledge/prepared.py, `plan-deps-0|1`: the answers in the documents' order, under a key of the
    four documents' stamps and the modules that read them), and keep them when worked out here. They are functions
    of the manifests alone (deps.py), asked on every plan of every box: ~3.5 ms of a first run's CPU on the 2-core
    box. Nothing is done where they cannot be kept (a user's manifests merged in, the caches off): the memos are
    filled on first use, as before. Once per manifests and has_gpus."""
    done = manifests.derived("plan.primed")
    if has_gpus in done:
        return
    done[has_gpus] = True
    from stackcheck.knowledge import prepared

    name = f"plan-deps-{int(has_gpus)}"
    kept = prepared.kept_for(manifests, name, _DEPS_DOCS, *deps_readers())
    if kept is None:
        return
    n_features = len(manifests.features)
    if kept[2] is not None:
        # the features' answers now, the checks' when the planner first judges a check (prime_checks): a plan whose
        # failing checks on the box the plan cache kept may judge none, and then reads no checks.json (iperf40)
        # (which rules the engine judges per GPU model, engine._rule_per_gpu, read back too where the gate's loading
        # thread or an earlier plan kept it: the planner judges a hundred rules or more on its first run)
        prepare_rules(manifests, checks=False)
        if _restore(kept[2], list(manifests.features), n_features, manifests, has_gpus):
            manifests.derived("plan.primed_checks")[has_gpus] = kept[2]
            return
    prepare_rules(manifests)
    items: list[Any] = [*manifests.features, *manifests.checks]
    prepared.keep(kept[0], name, kept[1], _work_out(items, n_features, manifests, has_gpus))


def prime_checks(manifests: Manifests, has_gpus: bool) -> None:
    """The checks' part of prime's kept answers (and the checks' rule shapes), restored before the planner first
    judges a check; nothing where prime restored no features (it then filled everything, or nothing could be kept:
    the memos fill on first use). Once per manifests and has_gpus."""
    pending = manifests.derived("plan.primed_checks")
    value = pending.pop(has_gpus, None)
    if value is None:
        return
    prepare_rules(manifests)
    n_features = len(manifests.features)
    _restore(value, list(manifests.checks), n_features, manifests, has_gpus, start=n_features)


def deps_readers() -> tuple[str, ...]:
    """The modules whose code makes the kept dependency answers (prime's key): this one, plan/deps.py, the loader, and
    facts/model.py (its KERNEL_PACKAGES is part of deps.py's package -> component table and of _components)."""
    import sys

    from stackcheck.knowledge import loader

    mods = (__name__, predicate_components.__module__, loader.__name__, "stackcheck.facts.model")
    return tuple(getattr(sys.modules[m], "__file__", None) or "" for m in mods)


def _parts(item: Any) -> list[tuple[Any, str]]:
    """(rule, part) of every `when` and `require` of an item's rules that is a container, in order."""
    return [
        (rule, part)
        for rule in item.get("rules") or []
        if isinstance(rule, dict)
        for part in ("when", "require")
        if isinstance(rule.get(part), dict | list)
    ]


def _work_out(items: list[Any], n_features: int, manifests: Manifests, has_gpus: bool) -> dict[str, Any]:
    """Every item's answers (filling the memos on the way), as plain data for the twin: the distinct component sets
    (`sets`, each sorted), and per item the index there of its components (exact, presence) and of the components
    of each container part of its rules (-1: not known)."""
    out: list[Any] = []
    sets: dict[tuple[str, ...], int] = {}

    def index(names: frozenset[str] | None) -> int:
        if names is None:
            return -1
        key = tuple(sorted(names))
        got = sets.get(key)
        if got is None:
            got = sets[key] = len(sets)
        return got

    node_memo = _node_memo(manifests, has_gpus)
    for i, item in enumerate(items):
        exact, presence = _components(item, manifests, has_gpus)
        if i >= n_features:
            _check_reads(item, manifests, has_gpus)
        parts = []
        for rule, part in _parts(item):
            _reads_no_component(rule[part], manifests, has_gpus)
            parts.append(index(predicate_components(rule[part], manifests, has_gpus, node_memo)))
        out.append([index(exact), index(presence), parts])
    return {"features": n_features, "sets": [list(k) for k in sets], "items": out}


def _restore(
    value: Any, items: list[Any], n_features: int, manifests: Manifests, has_gpus: bool, start: int = 0
) -> bool:
    """Fill the memos of `items` from a kept value made for these documents, whose entries for them begin at `start`
    (0: every item, features then checks, or the features alone; n_features: the checks, the rest of the entries);
    False (nothing filled) when it has another shape (what the key names is the same, so only a damaged twin). One
    frozenset per distinct set of the value (a few dozen), the items naming them by index."""
    whole = value.get("items") if value.get("features") == n_features else None
    names = value.get("sets")
    if type(whole) is not list or type(names) is not list:
        return False
    if start == 0 and len(items) == n_features:
        kept = whole[:n_features]  # (the features alone: the checks' entries are restored later, prime_checks)
        if len(kept) != n_features:
            return False
    elif len(whole) != start + len(items):
        return False
    else:
        kept = whole[start:]
    sets: list[frozenset[str]] = []
    for entry in names:
        if type(entry) is not list or not all(type(n) is str for n in entry):
            return False
        sets.append(frozenset(entry))
    n_sets = len(sets)
    features: list[tuple[Any, tuple[frozenset[str], frozenset[str]]]] = []
    nodes: list[tuple[Any, frozenset[str] | None]] = []
    for item, entry in zip(items, kept, strict=True):
        if type(entry) is not list or len(entry) != 3 or type(entry[2]) is not list:
            return False
        e, p, got_parts = entry
        if type(e) is not int or type(p) is not int or not 0 <= e < n_sets or not 0 <= p < n_sets:
            return False
        parts = _parts(item)
        if len(parts) != len(got_parts):
            return False
        features.append((item, (sets[e], sets[p])))
        for (rule, part), n in zip(parts, got_parts, strict=True):
            if type(n) is not int or not -1 <= n < n_sets:
                return False
            nodes.append((rule[part], None if n == -1 else sets[n]))
    components = manifests.derived("plan.feature_components")
    checks = manifests.derived("plan.check_reads")
    for i, (item, answer) in enumerate(features, start):
        components[(id(item), has_gpus)] = (item, answer)
        if i >= n_features:
            checks[(id(item), has_gpus)] = (item, EVERY if item.get("builtin") is not None else answer[0] | answer[1])
    node_memo = _node_memo(manifests, has_gpus)
    no_component = manifests.derived("plan.reads_no_component")
    empty: frozenset[str] = frozenset()
    for pred, got in nodes:
        node_memo[id(pred)] = (pred, got)
        no_component[(id(pred), has_gpus)] = (pred, got == empty)
    return True


class Engine:
    """Feature verdicts on hypothetical facts: the box with some components replaced by choices.

    A verdict is memoised under the choices it can depend on (plan/deps.py): the exact choice of each
    component its rules read, and only whether a component is replaced for the ones its `needs` name. So a
    feature that reads only SGLang's version is judged once per SGLang release however many stacks share it,
    and the facts of a stack are built only on a miss. `memo=False` judges every request from scratch (the
    straightforward reference the tests compare the planner with)."""

    def __init__(
        self,
        ctx: Context,
        memo: bool = True,
        box: Mapping[str, FeatureVerdict] | None = None,
        box_checks: list[CheckVerdict] | None = None,
        box_failing: list[CheckVerdict] | None = None,
    ) -> None:
        self.ctx = ctx
        #: the stack checks failing on the box as it is (checks_failing_on(ctx.facts, {}), as an earlier request on
        #: the same plan-cache key judged them: plan_cache.load_upstream_parts), when the caller has them: with the
        #: memo, read instead of judging every check on the box again (iperf40); `box_failing_now`: that list, when
        #: this engine judged it (for the caller to keep)
        # (its shape checked where it was read, plan_cache._failing; not its ids against checks.json, which a plan that
        # judges no check does not read: the key it was kept under names the manifests' stamps)
        self._box_failing = list(box_failing) if memo and box_failing is not None else None
        self.box_failing_now: list[CheckVerdict] | None = None
        #: the stack checks on the box as it is, as evaluate_check judges them on ctx (the audit's, or the ones the
        #: plan cache keeps), by id, when the caller has one for every check of the manifests, in their order: with
        #: the memo, a check on facts whose replaced components it does not read (_check_reads) is the box's
        self._box_checks: dict[str, CheckVerdict] = {}
        if (
            memo
            and box_checks
            and [str(v.get("id")) for v in box_checks] == [str(c.get("id")) for c in ctx.manifests.checks]
        ):
            self._box_checks = {str(v.get("id")): v for v in box_checks}
        #: the verdicts of the features on the box as it is, as the engine judges them there (evaluate_feature on
        #: ctx: the audit's, or the ones the plan cache keeps), when the caller has them: with the memo, a feature
        #: on facts whose replaced components it does not read (deps) is the box's verdict, not judged again
        self._box = box if memo and box is not None else {}
        self.features = {str(f.get("id")): f for f in ctx.manifests.features}
        self.memo = memo
        has_gpus = bool(ctx.gpu_models())
        # fid -> the components its verdict reads, sorted (the key's order): worked out for a feature when first asked
        self._deps: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}
        self._dep_sets: dict[str, frozenset[str]] = {}  # fid -> deps(fid)'s components together (_on_box)
        self._applied: dict[int, tuple[Stack, dict[str, Choice]]] = {}  # stack by identity -> (it, applied(it))
        self._cache: dict[tuple[Any, ...], FeatureVerdict] = {}
        self._facts: dict[tuple[Any, ...], Facts] = {}
        self._ok: dict[tuple[Any, ...], bool] = {}  # ok() of the keys judged only that far
        self._has_gpus = has_gpus
        self._never: dict[str, bool] = {}  # never_ok() of the features asked
        self._as_stated: dict[str, bool] = {}  # _rules_as_stated() of the features asked
        self._stopped_by: dict[str, Any] = {}  # feature -> the rule that last stopped its reading (ok_with)
        # a stopping rule with the choices it reads, where it failed or was not known (by identity: _rule_key)
        self._failed: dict[tuple[int, ...], tuple[tuple[int, ...], tuple[Any, ...]]] = {}
        self._stoppers: dict[str, list[Any]] = {}  # feature -> every rule that stopped its reading (_failed holds it)
        self._rule_reads: dict[int, tuple[Any, tuple[str, ...] | None]] = {}  # rule by identity -> it, what it reads
        self._contexts: dict[int, tuple[Facts, Context]] = {}  # facts by identity -> (them, their context)
        # predicates that read no component a choice replaces have one outcome on every hypothetical facts
        self._shared: SharedOutcomes | None = None
        if memo:
            manifests = ctx.manifests
            prime(manifests, has_gpus)
            self._shared = SharedOutcomes(
                lambda p: _reads_no_component(p, manifests, has_gpus),
                _no_component_reader(manifests, has_gpus),
            )
        self.evaluations = 0  # how many verdicts were computed (the benches and tests read it)

    def never_ok(self, fid: str) -> bool:
        """Whether no stack can make the feature ok, read from its rules without judging a stack: one of its rules
        that reads no replaced component (plan/deps.py, the reading the memo and the shared outcomes rest on) fails
        or is not known on the box, so it does on every hypothetical facts, and a failing or unknown rule makes a
        feature blocked or unknown whatever its other rules say (engine.feature_ok). Not when a package it needs
        is newer than the manifests on the box: derive then judges the rules from that release's own files, which
        may read them otherwise. False means "not known", never "ok somewhere". Always False without the memo:
        the reference judges every stack."""
        if not self.memo:
            return False
        got = self._never.get(fid)
        if got is None:
            got = self._never[fid] = self._never_ok(fid)
        return got

    def _never_ok(self, fid: str) -> bool:
        fixed = _fixed_rules(self.features[fid], self.ctx.manifests, self._has_gpus)
        return bool(fixed) and self._rules_as_stated(fid) and not rules_hold(fixed, self.ctx)

    def _rules_as_stated(self, fid: str) -> bool:
        """Whether the feature's rules are read as the manifests state them on every hypothetical facts of the
        box: no package it needs is newer than the manifests on the box (a replaced package is at a release they
        record, one not replaced is the box's). Else derive may judge them from that release's own files
        (engine._judge_newer), and a rule that fails as stated may not decide the verdict there."""
        got = self._as_stated.get(fid)
        if got is None:
            feature = self.features[fid]
            assume = set(feature.get("assume_newer") or [])
            got = self._as_stated[fid] = not any(
                a not in assume and self.ctx.newer_than_manifests(a)
                for need in feature.get("needs") or []
                for a in str(need).split("|")
            )
        return got

    def verdict_now(self, fid: str) -> FeatureVerdict:
        """The feature on the box as it is."""
        self.evaluations += 1
        return evaluate_feature(self.features[fid], self.ctx)

    def verdict_on(self, facts: Facts, fid: str) -> FeatureVerdict:
        """The feature on any facts (not memoised)."""
        self.evaluations += 1
        return evaluate_feature(self.features[fid], self._context(facts))

    def checks_failing_on(self, facts: Facts, choices: Mapping[str, Choice] | None = None) -> list[CheckVerdict]:
        """The stack checks (manifests/checks.json) that fail on these facts, each as the audit judges it
        (verdicts.engine.evaluate_check), in the order of the manifests: status `failed` (a failing rule that
        crashes or disables; a `warning`, which only degrades, is left out). Judged on the context the features
        of these facts share (the GPU models and what reads only the box's own facts worked out once).

        `choices`: what these facts replace on the box (hypothetical.apply_choice, by component; steps.Steps.choices).
        Given, a check that reads none of those components (_check_reads) is the box's verdict (`box_checks`) when
        the engine has it: the premise of the memo (plan/deps.py), for checks. With the memo, a check without a
        builtin whose rules all hold (rules_hold) is not judged in full: it cannot be failed
        (tests/plan/test_plan_lean_truth.py holds the list equal to evaluate_check's on every check).

        On the box's own facts with nothing replaced (`choices` empty), with the memo, the list given as `box_failing`
        is the answer (a function of the context: kept under the plan cache's key, which names the facts, the launch,
        the manifests and the code); else it is judged and left in `box_failing_now`."""
        if self.memo and choices is not None and not choices and facts is self.ctx.facts:
            if self._box_failing is not None:
                return list(self._box_failing)
            judged = list(self.failing_checks(facts, choices))
            self.box_failing_now = judged
            return list(judged)
        return list(self.failing_checks(facts, choices))

    def failing_checks(
        self, facts: Facts, choices: Mapping[str, Choice] | None = None, only: Iterable[Any] | None = None
    ) -> Iterator[CheckVerdict]:
        """checks_failing_on's verdicts one at a time, each check judged when the one before it has been taken: a
        caller that stops at the first failing check it is after judges no check after that one (the --want
        search's, which asks only whether one crashes). `only`: these checks of the manifests alone, judged as
        among the others."""
        prime_checks(self.ctx.manifests, self._has_gpus)  # (the checks' kept dependency answers, once)
        reuse = choices is not None and bool(self._box_checks)
        ctx: Context | None = None
        for check in self.ctx.manifests.checks if only is None else only:
            v = self._box_check(check, choices) if reuse and choices is not None else None
            if v is None:
                if ctx is None:
                    ctx = self._context(facts)
                if self.memo and check.get("builtin") is None and rules_hold(check.get("rules") or [], ctx):
                    # every rule that applies passes (a check of rules alone: no builtin's reasons): ok or skipped,
                    # never failed, and a sweep reads only an unknown one; its verdict is not built (iperf26)
                    continue
                v = evaluate_check(check, ctx)
            if v.get("status") == "failed":
                yield v

    def _box_check(self, check: Any, choices: Mapping[str, Choice]) -> CheckVerdict | None:
        """The box's verdict of the check when `choices` replace no component it reads, else None."""
        got = self._box_checks.get(str(check.get("id")))
        if got is None:
            return None
        reads = _check_reads(check, self.ctx.manifests, self._has_gpus)
        return None if any(c in reads for c in choices) else got

    def _context(self, facts: Facts) -> Context:
        """A context on these facts: with the memo, one per facts object (the features judged on one stack share
        it, and what it works out once: the GPU models, the indexed architecture rules)."""
        got = self._contexts.get(id(facts)) if self.memo else None
        if got is not None and got[0] is facts:
            return got[1]
        if self.memo and facts is self.ctx.facts and self.ctx.kept_lookups():
            return self.ctx
        ctx = Context(facts=facts, manifests=self.ctx.manifests, launch=self.ctx.launch)
        if facts.get("gpus") is self.ctx.facts.get("gpus"):
            ctx.share_gpu_models(self.ctx)  # the same GPUs: their models are not worked out again
            ctx.shared_outcomes = self._shared  # and what reads only the box's own facts is read once
        if self.memo:
            self._contexts[id(facts)] = (facts, ctx)  # (the facts kept alive with it: their id is not reused)
            # hypothetical facts are built here and never changed after: each fact path is read once (iperf27)
            ctx.keep_lookups()
        return ctx

    def key(self, fid: str, choices: Mapping[str, Choice]) -> tuple[Any, ...]:
        """What the verdict of `fid` on the box with `choices` applied can depend on (see the class)."""
        exact, presence = self.deps(fid)
        # (lists, not generators, unpacked: asked of every feature on every candidate stack; iperf36)
        if not presence:
            return (fid, *[(c, choices.get(c)) for c in exact])
        return (fid, *[(c, choices.get(c)) for c in exact], *[(c, c in choices) for c in presence])

    def deps(self, fid: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """deps.feature_components of the feature (exact, presence), each sorted; worked out when first asked."""
        got = self._deps.get(fid)
        if got is None:
            exact, presence = _components(self.features[fid], self.ctx.manifests, self._has_gpus)
            got = self._deps[fid] = (tuple(sorted(exact)), tuple(sorted(presence)))
        return got

    def applied(self, stack: Stack) -> dict[str, Choice]:
        """applied(stack), worked out once per stack (by identity; the stack kept alive with it)."""
        got = self._applied.get(id(stack))
        if got is not None and got[0] is stack:
            return got[1]
        choices = applied(stack)
        self._applied[id(stack)] = (stack, choices)
        return choices

    def verdict_with(self, choices: Mapping[str, Choice], fid: str, facts: Callable[[], Facts]) -> FeatureVerdict:
        """The feature on the box with `choices` applied; `facts` builds those facts (called on a miss only)."""
        if not self.memo:
            return self.verdict_on(facts(), fid)
        key = self.key(fid, choices)
        got = self._cache.get(key)
        if got is None:
            got = self._on_box(fid, choices)
            if got is None:
                got = self.verdict_on(facts(), fid)
            self._cache[key] = got
        return got

    def _on_box(self, fid: str, choices: Mapping[str, Choice]) -> FeatureVerdict | None:
        """The box's verdict of the feature (the caller's, `box`) when `choices` replace no component it reads:
        its memo key is then the box's own (key), so its verdict is."""
        got = self._box.get(fid)
        if got is None:
            return None
        return None if not self._dep_set(fid).isdisjoint(choices) else got

    def _dep_set(self, fid: str) -> frozenset[str]:
        """deps(fid)'s exact and presence components as one set (_on_box asks it of every stack: ~800 times a first
        run of `plan --want`)."""
        got = self._dep_sets.get(fid)
        if got is None:
            exact, presence = self.deps(fid)
            got = self._dep_sets[fid] = frozenset((*exact, *presence))
        return got

    def verdict(self, stack: Stack, fid: str) -> FeatureVerdict:
        choices = self.applied(stack)
        return self.verdict_with(choices, fid, lambda: self._stack_facts(choices, stack))

    def _stack_facts(self, choices: Mapping[str, Choice], stack: Stack) -> Facts:
        """stack_facts, built once per set of applied choices (the features judged on one stack share them). With the
        memo, from the facts of its longest prefix built already: stack_facts applies the choices in a fixed order
        (applied: driver, torch, kernel, flashinfer, sglang) and each step reads only the facts before it, so the facts
        after the first choices of a stack are those of a stack that replaces only those, and are kept as such
        (iperf40: the --want search over today's stacks applied 98 choices to build 24 stacks' facts)."""
        if not self.memo:
            return stack_facts(self.ctx, stack)
        key = tuple(choices.items())
        got = self._facts.get(key)
        if got is None:
            facts, done = self.ctx.facts, 0
            for n in range(len(key) - 1, 0, -1):
                prefix = self._facts.get(key[:n])
                if prefix is not None:
                    facts, done = prefix, n
                    break
            for n in range(done, len(key)):
                facts = apply_choice(facts, key[n][1], self.ctx)
                self._facts[key[: n + 1]] = facts
            got = facts
        return got

    def ok(self, stack: Stack, fid: str) -> bool:
        """Whether the feature is ok on the stack. Memoised, a feature not ok there is judged only up to its
        first rule that fails or is not known (engine.feature_ok); an ok one is judged in full and kept."""
        choices = self.applied(stack)
        return self.ok_with(choices, fid, lambda: self._stack_facts(choices, stack))

    def any_ok(self, stacks: list[Stack], fid: str) -> bool:
        """any(self.ok(s, fid) for s in stacks), asking one stack of each set that replace the components the
        feature reads (deps: exact, and presence) with the same choices: those share one memo key, so one answer.
        Telling them apart by the choices' identity costs a fraction of building each key (the planner asks this of
        every stack for a wanted feature: ~300 of them); equal choices that are distinct objects are only asked
        twice."""
        if not self.memo:
            return any(self.ok(s, fid) for s in stacks)
        exact, presence = self.deps(fid)
        # applied(s).get(c) read off the stack's own attributes (a stack replaces only its five components), so
        # that the stacks skipped here build no applied dict
        exact_parts = tuple(c if c in _STACK_PARTS else None for c in exact)
        presence_parts = tuple(c if c in _STACK_PARTS else None for c in presence)
        seen: set[tuple[Any, ...]] = set()
        for s in stacks:
            ids: list[Any] = []
            for c in exact_parts:
                ch = getattr(s, c) if c is not None else None
                ids.append(id(ch) if ch is not None and not ch.current else id(None))
            for c in presence_parts:
                ch = getattr(s, c) if c is not None else None
                ids.append(ch is not None and not ch.current)
            sig = tuple(ids)
            if sig in seen:
                continue
            seen.add(sig)
            if self.ok(s, fid):
                return True
        return False

    def ok_with(self, choices: Mapping[str, Choice], fid: str, facts: Callable[[], Facts]) -> bool:
        """Whether the feature is ok on the box with `choices` applied (see ok; `facts` as for verdict_with)."""
        if not self.memo:
            return self.verdict_with(choices, fid, facts).get("status") == "ok"
        key = self.key(fid, choices)
        got = self._cache.get(key)
        if got is not None:
            return got.get("status") == "ok"
        known = self._ok.get(key)
        if known is None and (on_box := self._on_box(fid, choices)) is not None:
            self._cache[key] = on_box
            return on_box.get("status") == "ok"
        if known is None:
            # the rule that stopped this feature on the last stack asked is read first: when it fails or is not
            # known here too, the feature is not ok here, whatever its other rules say (as in never_ok); and where
            # it failed already under the same choices of the components it reads, it fails here without the
            # facts of this stack being built (the premise of the memo, plan/deps.py, for one rule); so does every
            # rule that stopped it before
            # the last stopper's key is read in that loop, not worked out again: a rule that stopped the feature is
            # among its stoppers exactly when its key is not None (what it reads is known), so a last one that is
            # not among them has the key None
            last = self._stopped_by.get(fid)
            where = None
            for rule in self._stoppers.get(fid, ()):
                seen = self._rule_key(rule, choices)
                if rule is last:
                    where = seen
                if seen is not None and seen[0] in self._failed:
                    known = self._ok[key] = False
                    return known
            self.evaluations += 1
            ctx = self._context(facts())
            if last is not None and not rules_hold([last], ctx):
                if where is not None:
                    self._failed[where[0]] = where
                known = self._ok[key] = False
                return known
            verdict, stopped = feature_ok_or_rule(self.features[fid], ctx)
            if verdict is not None:
                self._cache[key] = verdict
            elif stopped is not None and self._rules_as_stated(fid):
                self._stopped_by[fid] = stopped
                found = self._rule_key(stopped, choices)
                if found is not None:
                    self._failed[found[0]] = found
                    stoppers = self._stoppers.setdefault(fid, [])
                    if not any(r is stopped for r in stoppers):
                        stoppers.append(stopped)
            known = self._ok[key] = verdict is not None
        return known

    def _rule_key(self, rule: Any, choices: Mapping[str, Choice]) -> tuple[tuple[int, ...], tuple[Any, ...]] | None:
        """(ids, objects) of the rule and of the choices of the components it reads (its `when` and `require`,
        deps.predicate_components; a component not replaced is None): the rule's outcome on a hypothetical facts
        of the box is a function of these. None when what it reads is not known. The objects are kept with the
        ids in _failed, so no id there is reused while it is there."""
        got = self._rule_reads.get(id(rule))
        if got is None or got[0] is not rule:
            reads: frozenset[str] | None = frozenset()
            for part in ("when", "require"):
                if reads is not None and part in rule:
                    sub = predicate_components(
                        rule[part], self.ctx.manifests, self._has_gpus, _node_memo(self.ctx.manifests, self._has_gpus)
                    )
                    reads = None if sub is None else reads | sub
            got = self._rule_reads[id(rule)] = (rule, None if reads is None else tuple(sorted(reads)))
        names = got[1]
        if names is None:
            return None
        # (a list, not a generator, unpacked; the ids by map: the planner asks this of every stopping rule on every
        # candidate, ~350 times a first run of `plan --want`; iperf36)
        objects = (rule, *[choices.get(c) for c in names]) if names else (rule,)
        return tuple(map(id, objects)), objects


def first_failure(v: FeatureVerdict) -> str:
    for r in v.get("reasons") or []:
        if r.get("result") in ("fail", "unknown"):
            return str(r.get("message", ""))
    return str(v.get("status"))
