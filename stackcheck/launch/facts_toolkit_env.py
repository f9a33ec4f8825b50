"""`gate --facts FILE -- CUDA_HOME=/x python -m sglang.launch_server ...`: a saved report's toolkit reading (the
toolkits probe's `active_for_build`, the jit section's toolkit, nvcc and headers) is the choice a JIT build makes under
the CUDA_HOME / CUDA_PATH the report was taken with. FlashInfer's JIT, SGLang's JIT kernels, DeepGEMM and
torch.utils.cpp_extension take $CUDA_HOME (or $CUDA_PATH) first (stackcheck/probes/jit.py), so a launch whose own
prefix sets, clears or changes either variable builds with another toolkit, which the facts never read: the facts'
toolkit was judged instead (ifc49 row e1: `CUDA_HOME=/usr/local/cuda-12.9` on a box whose only toolkit is
/usr/local/cuda-13.0 was allowed). Where the launch's value names the toolkit the facts chose, nothing changes;
otherwise the toolkit choice and the jit keys read from it are unknown, with the reason, never the facts' answer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any

#: the variables a JIT build takes its toolkit from before PATH's nvcc (stackcheck/probes/jit.py's docstring)
TOOLKIT_VARS = ("CUDA_HOME", "CUDA_PATH")
#: the jit section's keys read from the toolkit the build picks (probes/jit.py probe_jit)
TOOLKIT_KEYS = ("toolkit", "chosen_by", "nvcc", "nvcc_found", "cuda", "fp8_header", "fp4_header", "curand_header",
                "headers_cuda")  # fmt: skip


def launch_toolkit_env(
    command: Sequence[str], mapping: Mapping[str, Any], facts_env: Mapping[str, Any]
) -> tuple[str | None, str | None]:
    """(why the launch's toolkit may not be the facts', None where its prefix leaves CUDA_HOME / CUDA_PATH as the
    facts' `facts_env` had them and, where neither is set, PATH as the facts' (path_nvcc_changed); the toolkit home
    the launch's build takes from them: CUDA_HOME, else CUDA_PATH)."""
    from stackcheck.launch import gate

    base = {n: str(facts_env[n]) for n in TOOLKIT_VARS if isinstance(facts_env.get(n), str)}
    argv, prefixed = gate.split_env_prefix(command, {**base, "PATH": _FACTS_PATH})
    env = gate.find_launch(argv, mapping, prefixed)[2]
    changed = [n for n in TOOLKIT_VARS if env.get(n) != base.get(n)]
    home = env.get("CUDA_HOME") or env.get("CUDA_PATH")
    if not changed:
        return path_nvcc_changed(env), home
    shown = ", ".join(f"{n}={env[n]!r}" if n in env else f"{n} unset" for n in changed)
    why = f"the launch sets {shown}, from which a JIT build takes its toolkit; the facts read the toolkit under " + (
        ", ".join(f"{n}={base[n]!r}" for n in TOOLKIT_VARS if n in base) or "neither variable set"
    )
    return why, home


#: stands for the facts' own PATH, which the report does not record (redact.ENV_NAMES has no PATH): no launch writes it
_FACTS_PATH = "\x00the facts' own PATH\x00"


def path_nvcc_changed(env: Mapping[str, str]) -> str | None:
    """Why the launch's JIT build may take another toolkit through its PATH (None where it cannot): with neither
    CUDA_HOME nor CUDA_PATH set (or set empty), torch.utils.cpp_extension's _find_cuda_home and FlashInfer's
    get_cuda_path (flashinfer/jit/cpp_ext.py lines 48-66 in flashinfer-python 0.6.7) take the parent of the
    `which nvcc` answer, so a launch whose own words set, clear or change PATH (`env PATH=/usr/local/cuda-12.4/bin:
    $PATH`, `env -i`) builds with the nvcc on that PATH, which the facts never read (imend5: the toolkit the facts
    marked active_for_build was judged instead). `env` is the launch's environment read from one whose PATH was
    _FACTS_PATH."""
    if env.get("CUDA_HOME") or env.get("CUDA_PATH") or env.get("PATH") == _FACTS_PATH:
        return None
    value = env.get("PATH")
    shown = "PATH unset" if value is None else f"PATH={value.replace(_FACTS_PATH, '$PATH')[:160]!r}"
    return (f"the launch sets {shown} with neither CUDA_HOME nor CUDA_PATH set, so a JIT build takes its toolkit "
            "from the nvcc on that PATH (`which nvcc`), which the facts never read")  # fmt: skip


def forget_build_choice(facts: dict[str, Any]) -> None:
    """`cuda_toolkits` without `active_for_build` (which toolkit a build picks: not stated, so toolkit.found and
    toolkit.cuda are unknown), on a changed copy of the list (the facts file's own dictionaries are left as read)."""
    toolkits = facts.get("cuda_toolkits")
    if isinstance(toolkits, list):
        facts["cuda_toolkits"] = [
            {k: v for k, v in t.items() if k != "active_for_build"} if isinstance(t, dict) else t for t in toolkits
        ]


def names_chosen_toolkit(home: str | None, jit: Any) -> bool:
    """Whether the toolkit home a launch's CUDA_HOME / CUDA_PATH names is the one the facts' jit section chose (a
    trailing '/' aside): the same build, whatever else the variables' values say. Both readers of a launch's toolkit
    variables under --facts ask it (this module's, and facts_loader_path._launch_jit_env's)."""
    chosen = jit.get("toolkit") if isinstance(jit, dict) else None
    return isinstance(home, str) and isinstance(chosen, str) and home.rstrip("/") == chosen.rstrip("/")


def apply_launch_toolkit_env(facts: dict[str, Any], command: Sequence[str], mapping: Mapping[str, Any]) -> bool:
    """Make the facts' toolkit choice unknown where the launch's own prefix changes CUDA_HOME / CUDA_PATH to other
    than the toolkit the facts chose: `cuda_toolkits` without `active_for_build` (which one a build picks: not
    stated) and the jit keys read from it null with the reason. A section changed is replaced by a changed copy (the
    facts file's own dictionaries are left as read: the gate cache's digest is the file's). True where changed."""
    system = facts.get("system")
    env = system.get("env") if isinstance(system, dict) else None
    given = dict(env) if isinstance(env, dict) else {}
    # the variable the toolkits probe says picked the build's toolkit (its `source`) was set, whether or not the
    # facts' environment records it (a hand-written or trimmed one): `env -u CUDA_HOME` changes it (imend5)
    toolkits = facts.get("cuda_toolkits")
    for t in toolkits if isinstance(toolkits, list) else ():
        if isinstance(t, dict) and t.get("active_for_build") and t.get("source") in TOOLKIT_VARS:
            if not isinstance(given.get(t["source"]), str) and isinstance(t.get("path"), str):
                given[str(t["source"])] = str(t["path"])
    why, home = launch_toolkit_env(command, mapping, given)
    if why is None:
        return False
    jit = facts.get("jit")
    if names_chosen_toolkit(home, jit):
        return False  # (the launch names the toolkit the facts chose: the same build)
    forget_build_choice(facts)
    if isinstance(jit, dict):
        changed = dict(jit)
        for key in TOOLKIT_KEYS:
            changed[key] = None
            changed[f"{key}_reason"] = why
        changed["headers_reason"] = why
        facts["jit"] = changed
    return True
