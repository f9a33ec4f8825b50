"""The Python of an image (or of any FileView), found and read without running anything.

This is a convenience over the one implementation the audit uses, so that a library caller gets the same
answer as `stackcheck audit --image`: the interpreter is chosen by `stackcheck.assembly.target.choose_target` (for a
view other than this host: `python3`, then `python`, on the configured PATH that is an executable regular
file) and its sys.path derived by `stackcheck.probes.python_env.derive_static` and `compose_sys_path`
(pyvenv.cfg, the prefix layout: Debian's dist-packages, the Fedora family's lib64, conda, the user site;
`.pth` path lines, never an `import` line). See those modules for the rules and their sources.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stackcheck.readers.fsview import FileView


class NoPython(LookupError):
    """No interpreter could be found or read; the message says where it looked."""


@dataclass
class TargetPython:
    executable: str  # as found on PATH
    real_executable: str  # after links
    version: str | None  # "3.12", or the full version a pyvenv.cfg states
    prefix: str
    base_prefix: str
    venv: bool
    sys_path: list[str]
    site_packages: list[str]  # the site directories among sys_path (where distributions are installed)
    chosen_by: str
    kind: str = "system"  # venv | conda | system
    notes: list[str] = field(default_factory=list)

    def to_facts(self) -> dict[str, Any]:
        """The `facts.python` section, as the python probe writes it for an image."""
        return {
            "executable": self.executable,
            "version": self.version,
            "implementation": None,
            "prefix": self.prefix,
            "kind": self.kind,
            "sys_path": list(self.sys_path),
            "chosen_by": self.chosen_by,
            "learned": "static",
            "notes": list(self.notes),
        }


def find_python(view: FileView, env: Mapping[str, str], user: str | None = None) -> TargetPython:
    """The interpreter a command named `python3` (else `python`) would start in the image, and its static
    sys.path. `env` is the image config's Env; HOME, when it sets none, is found as the container runtime
    finds it (`user`'s /etc/passwd entry; see stackcheck.image.view.runtime_environment). Raises NoPython."""
    from stackcheck.assembly.target import choose_target
    from stackcheck.image.view import runtime_environment
    from stackcheck.probes.python_env import NotPython, compose_sys_path, derive_static, site_order

    run_env = runtime_environment(view, env, user)
    target = choose_target(view, run_env, stackcheck_python="")
    if target.executable is None:
        raise NoPython(target.notes[-1] if target.notes else "no Python interpreter found")
    try:
        answer = derive_static(view, target.executable, run_env)
    except NotPython as exc:
        raise NoPython(str(exc)) from None
    sys_path, pth_notes = compose_sys_path(view, answer)
    sites = [d for d in site_order(answer) if d in sys_path]
    return TargetPython(
        executable=target.executable,
        real_executable=answer.real_executable or target.executable,
        version=answer.version,
        prefix=answer.prefix,
        base_prefix=answer.base_prefix or answer.prefix,
        venv=answer.kind == "venv",
        sys_path=sys_path,
        site_packages=sites,
        chosen_by=target.chosen_by,
        kind=answer.kind,
        notes=[*target.notes, *answer.notes, *pth_notes],
    )
