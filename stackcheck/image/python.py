"""The Python of an image (or of any FileView): found on the config's PATH, its sys.path derived statically.

Nothing is run. The interpreter is the first `python3` (then `python`) on the image config's PATH that is an
executable regular file; its version comes from the name the link chain ends at (`python3.12`), else from
`pyvenv.cfg`, else from the single `lib/python3.X` of its prefix. `sys.path` is what CPython's `getpath`
and `site` would build, without their import-time side effects:
- PYTHONPATH from the image config;
- the standard library of the base prefix (`lib/python3XY.zip`, `lib/python3.X`, `lib-dynload`; `lib64`
  where the distribution puts it there);
- a venv (`pyvenv.cfg` beside the executable or one level up: CPython's rule) adds its own
  `lib/python3.X/site-packages`, and the base's site directories only with
  `include-system-site-packages = true`;
- the base's site directories: Debian's patched layout when the base prefix is /usr on a Debian-family
  image (`/usr/local/lib/python3.X/dist-packages`, `/usr/lib/python3/dist-packages`,
  `/usr/lib/python3.X/dist-packages`), the lib64 + lib pairs of Fedora-family images, else
  `lib/python3.X/site-packages`; the user's site directory comes first when it exists (not for a venv);
- each site directory's `.pth` files, in name order: path lines only. An `import` line is never run (it is
  counted in `notes`).
Only existing directories are added, as `site` does.

The issue-15 target-environment helper derives the same for host venvs (`--python`, `--env`); this one is
written against the FileView so that it serves an image. The integrator unifies the two.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stackcheck.probes.fsview import FileView

#: docker's PATH for a Linux container whose config sets none
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_VERSIONED = re.compile(r"^python(\d)\.(\d+)$")
_LIBDIR = re.compile(r"^python(\d)\.(\d+)$")
PTH_CAP = 64 * 1024
CFG_CAP = 64 * 1024


class NoPython(LookupError):
    """No interpreter could be found; the message says where it looked."""


@dataclass
class TargetPython:
    executable: str  # as found on PATH
    real_executable: str  # after links
    version: str | None  # "3.12"
    prefix: str
    base_prefix: str
    venv: bool
    sys_path: list[str]
    site_packages: list[str]  # the site directories among sys_path (where distributions are installed)
    chosen_by: str
    notes: list[str] = field(default_factory=list)

    def to_facts(self) -> dict[str, Any]:
        """The `facts.python` section (the issue-15 shape: executable, version, prefix, sys_path, chosen_by)."""
        return {
            "executable": self.executable,
            "version": self.version,
            "prefix": self.prefix,
            "base_prefix": self.base_prefix,
            "sys_path": list(self.sys_path),
            "site_packages": list(self.site_packages),
            "chosen_by": self.chosen_by,
            "derived": "static",
            "notes": list(self.notes),
        }


def _is_dir(view: FileView, path: str) -> bool:
    s = view.stat(path)
    return s is not None and s.kind == "dir"


def _exists(view: FileView, path: str) -> bool:
    return view.stat(path) is not None


def _read_text(view: FileView, path: str, cap: int) -> str | None:
    try:
        return view.read_bytes(path, cap).decode("utf-8", "replace")
    except OSError:
        return None


def read_pyvenv_cfg(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        key, eq, value = line.partition("=")
        if eq:
            out[key.strip().lower()] = value.strip()
    return out


def _which(view: FileView, names: tuple[str, ...], path_value: str) -> str | None:
    for name in names:
        for d in path_value.split(":"):
            if not d.startswith("/"):
                continue  # a relative PATH entry depends on the working directory: not followed
            candidate = posixpath.join(d, name)
            s = view.stat(candidate)
            if s is not None and s.kind == "file" and s.mode & 0o111:
                return candidate
    return None


def _version_from(view: FileView, real: str, cfg: Mapping[str, str], prefixes: list[str]) -> str | None:
    m = _VERSIONED.match(posixpath.basename(real))
    if m:
        return f"{m.group(1)}.{m.group(2)}"
    for key in ("version_info", "version"):
        parts = cfg.get(key, "").split(".")
        if len(parts) >= 2 and parts[0].isdigit() and parts[1].isdigit():
            return f"{parts[0]}.{parts[1]}"
    for prefix in prefixes:
        try:
            names = view.listdir(posixpath.join(prefix, "lib"))
        except OSError:
            continue
        found = sorted(
            ((int(m2.group(1)), int(m2.group(2))) for n in names if (m2 := _LIBDIR.match(n))),
            reverse=True,
        )
        if found:
            return f"{found[0][0]}.{found[0][1]}"
    return None


def _base_prefix(view: FileView, bindir: str, version: str | None) -> str:
    """Search upward from the interpreter's directory for the standard library (CPython's landmark)."""
    d = posixpath.dirname(bindir) or "/"
    while True:
        if version is not None:
            for lib in ("lib", "lib64"):
                if _exists(view, posixpath.join(d, lib, f"python{version}", "os.py")):
                    return d
        if d == "/":
            break
        d = posixpath.dirname(d)
    return posixpath.dirname(bindir) or "/"


def _is_debian(view: FileView, base: str) -> bool:
    return base == "/usr" and (_exists(view, "/etc/debian_version") or _is_dir(view, "/usr/lib/python3/dist-packages"))


def _site_dirs(view: FileView, base: str, version: str) -> list[str]:
    if _is_debian(view, base):
        return [
            f"/usr/local/lib/python{version}/dist-packages",
            "/usr/lib/python3/dist-packages",
            f"/usr/lib/python{version}/dist-packages",
        ]
    if base == "/usr":  # Fedora-family: /usr/local first, lib64 (platlib) before lib (purelib)
        return [
            f"/usr/local/lib64/python{version}/site-packages",
            f"/usr/local/lib/python{version}/site-packages",
            f"/usr/lib64/python{version}/site-packages",
            f"/usr/lib/python{version}/site-packages",
        ]
    return [
        posixpath.join(base, "lib64", f"python{version}", "site-packages"),
        posixpath.join(base, "lib", f"python{version}", "site-packages"),
    ]


def _add_site_dir(view: FileView, site: str, sys_path: list[str], seen: set[str], notes: list[str]) -> bool:
    """Append a site directory and its .pth path lines; False when the directory does not exist."""
    if not _is_dir(view, site):
        return False
    real = view.realpath(site)
    if real in seen:
        return False  # lib64 -> lib links: one directory, listed once
    seen.add(real)
    sys_path.append(site)
    try:
        names = sorted(n for n in view.listdir(site) if n.endswith(".pth") and not n.startswith("."))
    except OSError:
        return True
    skipped = 0
    for name in names:
        text = _read_text(view, posixpath.join(site, name), PTH_CAP)
        if text is None:
            continue
        for line in text.splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith(("import ", "import\t")):
                skipped += 1  # site.py would exec this line: never done here
                continue
            entry = posixpath.normpath(posixpath.join(site, line.rstrip()))
            if entry not in sys_path and _exists(view, entry):
                sys_path.append(entry)
    if skipped:
        notes.append(f"{site}: {skipped} .pth import line(s) not executed")
    return True


def find_python(
    view: FileView,
    env: Mapping[str, str],
    user: str | None = None,
    names: tuple[str, ...] = ("python3", "python"),
) -> TargetPython:
    """The interpreter a command named `python3` (else `python`) would start, and its static sys.path."""
    path_value = env.get("PATH") or DEFAULT_PATH
    chosen_by = "python3 on the image config's PATH" if env.get("PATH") else "python3 on docker's default PATH"
    exe = _which(view, names, path_value)
    if exe is None:
        raise NoPython(f"no {' or '.join(names)} on PATH {path_value}")
    if posixpath.basename(exe) != names[0]:
        chosen_by = chosen_by.replace(names[0], posixpath.basename(exe), 1)
    real = view.realpath(exe)
    notes: list[str] = []
    bindir = posixpath.dirname(exe)
    cfg_places = (posixpath.join(bindir, "pyvenv.cfg"), posixpath.join(posixpath.dirname(bindir), "pyvenv.cfg"))
    cfg_path = next((p for p in cfg_places if _exists(view, p)), None)
    cfg: dict[str, str] = {}
    if cfg_path is not None:
        cfg = read_pyvenv_cfg(_read_text(view, cfg_path, CFG_CAP) or "")
    venv = cfg_path is not None
    prefix = posixpath.dirname(cfg_path) if cfg_path is not None else ""
    home = cfg.get("home", "")
    base_bindir = home if home.startswith("/") else posixpath.dirname(real)
    version = _version_from(view, real, cfg, [p for p in (prefix, posixpath.dirname(base_bindir)) if p])
    base = _base_prefix(view, base_bindir, version)
    if not venv:
        prefix = base
    if version is None:
        notes.append("Python version not found (no python3.X name, pyvenv.cfg or lib/python3.X): sys.path unknown")
        return TargetPython(exe, real, None, prefix, base, venv, [], [], chosen_by, notes)

    sys_path: list[str] = []
    for entry in (env.get("PYTHONPATH") or "").split(":"):
        if entry.startswith("/") and entry not in sys_path:
            sys_path.append(posixpath.normpath(entry))
    lib = "lib64" if _is_dir(view, posixpath.join(base, "lib64", f"python{version}")) else "lib"
    stdlib = posixpath.join(base, lib, f"python{version}")
    sys_path += [
        posixpath.join(base, lib, f"python{version.replace('.', '')}.zip"),
        stdlib,
        posixpath.join(stdlib, "lib-dynload"),
    ]
    seen: set[str] = set()
    sites: list[str] = []
    candidates: list[str] = []
    if venv:
        candidates += [
            posixpath.join(prefix, "lib", f"python{version}", "site-packages"),
            posixpath.join(prefix, "lib64", f"python{version}", "site-packages"),
        ]
        if cfg.get("include-system-site-packages", "").lower() == "true":
            candidates += _site_dirs(view, base, version)
    else:
        home_dir = env.get("HOME") or ("/root" if user in (None, "", "root", "0") or str(user).startswith("0:") else "")
        if home_dir.startswith("/"):
            candidates.append(posixpath.join(home_dir, ".local", "lib", f"python{version}", "site-packages"))
        candidates += _site_dirs(view, base, version)
    for site in candidates:
        if _add_site_dir(view, site, sys_path, seen, notes):
            sites.append(site)
    if not sites:
        notes.append(f"no site-packages directory found for Python {version} under {prefix}")
    return TargetPython(exe, real, version, prefix, base, venv, sys_path, sites, chosen_by, notes)
