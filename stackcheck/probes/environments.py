"""The environments probe: when the audited environment has none of the serving packages, are they elsewhere
on the box? (facts.other_environments)

An audit run from stackcheck's own venv (pipx, the README's `python3 -m venv .venv`) on a box whose stack
lives in /opt/serve would otherwise say "sglang not installed" and plan a fresh install. This probe takes a
quick, bounded look at the usual places and lists each environment that has SGLang or torch, with the flag
that selects it:

- /opt/*/bin/python3 (and python), /opt/*/*/bin/python3 (one level deeper: /opt/conda/envs/NAME);
- ~/.venv, ~/venv, ~/.virtualenvs/*, ~/miniconda3/envs/*, ~/anaconda3/envs/*, ~/miniforge3/envs/*,
  ~/mambaforge/envs/*, ~/micromamba/envs/* and the conda installs themselves (their base environment);
- the environments conda made (~/.conda/environments.txt);
- the system Python's /usr/local/lib/python3*/dist-packages (and /usr/lib/python3/dist-packages).

Nothing is run: each candidate's site directories come from its layout (stackcheck.probes.python_env), and
only their directory listings and the two packages' METADATA headers are read. At most MAX_CANDIDATES
environments are looked at, within the runner's deadline.
"""

from __future__ import annotations

import posixpath
import time

from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.readers.fsview import FileView, is_dir, is_file, is_host, listdir_or_empty, read_text

if TYPE_CHECKING:
    from typing import Any, ClassVar

MAX_CANDIDATES = 48
#: /opt entries looked into (each costs a few directory listings)
MAX_OPT_ENTRIES = 200
#: what is reported of another environment: the packages that make it a serving environment
LOOK_FOR = ("sglang", "torch")
_CONDA_INSTALLS = ("miniconda3", "anaconda3", "miniforge3", "mambaforge", "micromamba")
_SYSTEM_SITE = _lazy(r"^python3\.\d+$")


def _interpreter(view: FileView, prefix: str) -> str | None:
    for name in ("python3", "python"):
        candidate = posixpath.join(prefix, "bin", name)
        if is_file(view, candidate):
            return candidate
    return None


def candidate_prefixes(view: FileView, home: str | None) -> list[str]:
    """Prefixes (venvs, conda environments) in the usual places, in a stable order, at most MAX_CANDIDATES."""
    out: list[str] = []
    for name in listdir_or_empty(view, "/opt")[:MAX_OPT_ENTRIES]:
        base = posixpath.join("/opt", name)
        out.append(base)
        for sub in ("envs", "venvs"):
            out += [posixpath.join(base, sub, n) for n in listdir_or_empty(view, posixpath.join(base, sub))]
        out += [posixpath.join(base, n) for n in listdir_or_empty(view, base) if n in (".venv", "venv")]
    if home:
        out += [posixpath.join(home, n) for n in (".venv", "venv")]
        vdir = posixpath.join(home, ".virtualenvs")
        out += [posixpath.join(vdir, n) for n in listdir_or_empty(view, vdir)]
        for install in _CONDA_INSTALLS:
            base = posixpath.join(home, install)
            out.append(base)
            out += [posixpath.join(base, "envs", n) for n in listdir_or_empty(view, posixpath.join(base, "envs"))]
        try:
            text = read_text(view, posixpath.join(home, ".conda", "environments.txt"), 256 * 1024)
        except (OSError, ValueError):
            text = ""
        out += [line.strip() for line in text.splitlines() if line.strip().startswith("/")]
    return list(dict.fromkeys(p.rstrip("/") for p in out))


def system_sites(view: FileView) -> list[tuple[str, str]]:
    """(interpreter, site directory) of the system Python's dist-packages directories."""
    out: list[tuple[str, str]] = []
    for name in listdir_or_empty(view, "/usr/local/lib"):
        if _SYSTEM_SITE.match(name):
            site = posixpath.join("/usr/local/lib", name, "dist-packages")
            if is_dir(view, site):
                out.append((posixpath.join("/usr/bin", name), site))
    if is_dir(view, "/usr/lib/python3/dist-packages"):
        out.append(("/usr/bin/python3", "/usr/lib/python3/dist-packages"))
    return out


def look(view: FileView, home: str | None, exclude: set[str], deadline: float | None) -> list[dict[str, Any]]:
    """Each other environment with SGLang or torch: {"python", "prefix", "packages": {name: version},
    "select": the flag}. `exclude` holds the audited environment's prefix and site directories."""
    from stackcheck.probes.packages import find_distributions
    from stackcheck.probes.python_env import NotPython, derive_static

    found: dict[str, dict[str, Any]] = {}
    looked = 0

    def record(python: str, prefix: str, site_dirs: list[str]) -> None:
        dirs = [d for d in site_dirs if d not in exclude and is_dir(view, d)]
        if not dirs:
            return
        dists = find_distributions(set(LOOK_FOR), dirs, view)
        versions = {n: dists[n][0].version for n in LOOK_FOR if dists.get(n)}
        if versions:
            entry = found.setdefault(python, {"python": python, "prefix": prefix, "packages": {}})
            for name, version in versions.items():
                entry["packages"].setdefault(name, version)
            entry["select"] = f"--python {python}"

    for prefix in candidate_prefixes(view, home):
        if looked >= MAX_CANDIDATES or (deadline is not None and time.monotonic() > deadline):
            break
        if prefix in exclude:
            continue
        python = _interpreter(view, prefix)
        if python is None:
            continue
        looked += 1
        try:
            answer = derive_static(view, python, {})
        except NotPython:
            continue
        record(python, answer.prefix, [*answer.venv_site, *answer.base_site])
    for python, site in system_sites(view):
        if deadline is not None and time.monotonic() > deadline:
            break
        record(python, "/usr", [site])
    return sorted(found.values(), key=lambda e: ("sglang" not in e["packages"], e["python"]))


class EnvironmentsProbe(Probe):
    """facts.other_environments: environments elsewhere on the box that have the serving packages, looked
    for only when the audited one has none of them."""

    name: ClassVar[str] = "environments"
    timeout_s: ClassVar[float] = 2.0
    sections: ClassVar[tuple[str, ...]] = ("other_environments",)
    needs: ClassVar[tuple[str, ...]] = ("python", "packages")

    def run(self, ctx: ProbeContext) -> ProbeResult:
        from stackcheck.probes.packages import SERVING

        packages = ctx.facts.get("packages")
        if not isinstance(packages, dict):
            return ProbeResult({"other_environments": []}, "skipped", "no package facts")
        if any(isinstance(p, dict) and p.get("installed") for n, p in packages.items() if n in SERVING):
            return ProbeResult({"other_environments": []})
        if not all(isinstance(packages.get(n), dict) and packages[n].get("installed") is False for n in SERVING):
            return ProbeResult({"other_environments": []}, "skipped", "the audited environment's packages are unknown")
        python = ctx.facts.get("python")
        exclude: set[str] = set()
        if isinstance(python, dict):
            if isinstance(python.get("prefix"), str):
                exclude.add(python["prefix"])
            exclude.update(p for p in python.get("sys_path") or [] if isinstance(p, str))
        home = ctx.env.get("HOME") if is_host(ctx.fs) else None  # a root or an image has no user of ours
        deadline = ctx.deadline - 0.2 if ctx.deadline is not None else None
        return ProbeResult({"other_environments": look(ctx.fs, home, exclude, deadline)})

    def failure_facts(self, reason: str) -> dict[str, Any]:
        return {"other_environments": []}  # a hint only: its failure is in probes[], not a finding
