"""The python probe: the target interpreter's sys.path, version and prefix (facts.python).

How the sys.path is learned, in order:

1. stackcheck's own interpreter: this process's `sys.path`; nothing runs.
2. the cache: an earlier answer for the same interpreter (its path, the size and mtime of the file it
   resolves to, its pyvenv.cfg, the path variables of its environment), so a repeated audit starts no
   interpreter. Kept under the user cache directory ($XDG_CACHE_HOME or ~/.cache, then stackcheck/),
   written atomically; an unreadable or foreign cache file is ignored.
3. running the interpreter once, on this host only, with a fixed one-liner (`ONELINER`) under `-S`: it
   imports only sys and site (site from sys.path's absolute entries only), runs in the gated command's environment
   (PYTHONPATH counts) with a timeout,
   and prints its base sys.path, prefixes, site-packages directories and user site as a repr() of
   literals, read back with ast.literal_eval (nothing it prints is evaluated). `-S` keeps site from
   running: no .pth file and no sitecustomize executes; stackcheck adds the site directories and the path
   lines of their .pth files itself, in site's order (the venv's site-packages, the user site, the base
   prefixes' site directories).
4. statically, where it cannot run (another CPU architecture, a file that is not executable, a venv whose
   base interpreter was removed, a root directory or an image, or a run that hung or printed garbage):
   from pyvenv.cfg (home, version, include-system-site-packages), the prefix layout
   (lib/pythonX.Y/site-packages; Debian's dist-packages) and the .pth files' path lines.

In both 3 and 4 a .pth `import` line is never executed (it is counted in `notes`); what such a line would
add at run time (an editable install's import hook) is not seen, which the packages probe already handles
through the `__editable__` files. sys.path[0] (the script's directory or the working directory) is left
out: it belongs to how the server is started, not to the environment (the kernel_symbols probe puts a gated
command's own first: assembly/target.py command_first_path, ProbeContext.launch_first_path).
"""

from __future__ import annotations

import contextlib
import os
import posixpath
import re
import stat
import sys
from collections.abc import Mapping

from stackcheck import lean_json
from stackcheck.assembly.target import PATH_VARS, PY_NAME, Target
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import (
    CommandTimeout,
    NotStarted,
    Probe,
    ProbeContext,
    ProbeResult,
    ProbeStatus,
    run_command,
)
from stackcheck.readers.fsview import FileView, is_dir, is_file, is_host, kind_of, listdir_or_empty, read_text

if TYPE_CHECKING:
    from typing import Any, ClassVar

#: The one thing stackcheck runs in the target interpreter. -S: site does not run (no .pth, no
#: sitecustomize); the base prefixes' site directories come from site.getsitepackages(), which distributions
#: patch (Debian's dist-packages), so they are asked of the interpreter rather than guessed. The answer is a
#: repr() of plain strings, lists and bools, read back with ast.literal_eval (never evaluated): importing json
#: in the child would cost it the re module, a third of its start-up. -c puts '' (the directory it runs in: the
#: launch's, irev80) first on sys.path, and site is imported after start-up: where site is not frozen (CPython
#: 3.10 and older) a site.py or _sitebuiltins.py there (or in a relative PYTHONPATH entry, which names a directory
#: under it) would run instead of the standard library's, so the import sees only the absolute entries; the path
#: printed is the whole one (the server imports site at start-up, before its own sys.path[0] exists; irev81).
ONELINER = (
    "import sys;sys.stdout.write('stackcheck-started\\n');sys.stdout.flush();"
    "p=sys.path[:];sys.path[:]=[x for x in p if x[:1]=='/'];import site;"
    "b=[sys.base_prefix,getattr(sys,'base_exec_prefix',sys.base_prefix)];"
    "print(repr({'stackcheck':1,'executable':sys.executable,"
    "'version':'%d.%d.%d'%sys.version_info[:3],'implementation':sys.implementation.name,"
    "'prefix':sys.prefix,'base_prefix':sys.base_prefix,'path':p,"
    "'platlibdir':getattr(sys,'platlibdir','lib'),'base_site':site.getsitepackages(b),"
    "'user_site':site.getusersitepackages(),'no_user_site':bool(sys.flags.no_user_site)}))"
)
#: the longest answer accepted from the interpreter or the cache (a sys.path is a few kilobytes)
ANSWER_CAP = 1 << 20
PYVENV_CAP = 64 * 1024
PTH_CAP = 64 * 1024
MAX_PTH_FILES = 500
RUN_TIMEOUT_S = 5.0
#: the one-liner's first line (printed and flushed before anything else), and how long after the start an
#: interpreter that has printed something else without it is taken for a wrapper that ignores its arguments
#: (interface.run_command `started`; imend16)
STARTED = b"stackcheck-started\n"
STARTED_WINDOW_S = 1.0
_VERSION = _lazy(r"^\d+\.\d+(?:\.\d+)?")
_PY_DIR = _lazy(r"^python(\d+\.\d+)t?$")


class NotPython(Exception):
    """The path is not a Python interpreter stackcheck can read (one line, names the path)."""


class Answer:
    """What is known about an interpreter before its site directories are walked. (A plain class: the
    dataclasses module costs ~8 ms of imports at every start.)"""

    FIELDS: ClassVar[tuple[str, ...]] = (
        "executable", "version", "implementation", "prefix", "base_path", "venv_site", "base_site", "user_site",
        "kind", "notes", "error", "base_prefix", "real_executable",
    )  # fmt: skip

    def __init__(
        self,
        executable: str,
        version: str | None,
        implementation: str | None,
        prefix: str,
        base_path: list[str],  # sys.path without site (PYTHONPATH, the standard library)
        venv_site: list[str],  # the venv's own site-packages (empty outside a venv)
        base_site: list[str],  # the base prefixes' site directories (when the venv includes them)
        user_site: str | None,  # None: disabled
        kind: str,  # venv | conda | system
        notes: list[str] | None = None,
        error: str | None = None,
        base_prefix: str | None = None,  # the prefix of the standard library (a venv's base)
        real_executable: str | None = None,  # after links
    ) -> None:
        self.executable = executable
        self.version = version
        self.implementation = implementation
        self.prefix = prefix
        self.base_path = base_path
        self.venv_site = venv_site
        self.base_site = base_site
        self.user_site = user_site
        self.kind = kind
        self.notes: list[str] = notes if notes is not None else []
        self.error = error
        self.base_prefix = base_prefix
        self.real_executable = real_executable

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Answer):
            return NotImplemented
        return all(getattr(self, n) == getattr(other, n) for n in self.FIELDS)

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return "Answer(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.FIELDS) + ")"


# -- pyvenv.cfg and the prefix layout ----------------------------------------------------------------------


def read_pyvenv_cfg(view: FileView, exe: str) -> tuple[str, dict[str, str]] | None:
    """(venv prefix, lower-cased keys) for an interpreter inside a venv, as site.venv() finds it."""
    exe_dir = posixpath.dirname(exe)
    for directory in (exe_dir, posixpath.dirname(exe_dir)):
        cfg = posixpath.join(directory, "pyvenv.cfg")
        if not is_file(view, cfg):
            continue
        try:
            text = read_text(view, cfg, PYVENV_CAP)
        except (OSError, ValueError):
            return posixpath.dirname(exe_dir), {}
        values: dict[str, str] = {}
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if sep:
                values[key.strip().lower()] = value.strip()
        return posixpath.dirname(exe_dir), values
    return None


def _version_from_dirs(view: FileView, prefix: str) -> str | None:
    """X.Y from the only lib/pythonX.Y directory of a prefix (None when there are none or several)."""
    found = {m.group(1) for name in listdir_or_empty(view, posixpath.join(prefix, "lib")) if (m := _PY_DIR.match(name))}
    return found.pop() if len(found) == 1 else None


def _xy(version: str | None) -> str | None:
    if not version:
        return None
    m = re.match(r"^(\d+)\.(\d+)", version)
    return f"{m.group(1)}.{m.group(2)}" if m else None


def is_debian_python(view: FileView, prefix: str) -> bool:
    """Debian's patched site layout (dist-packages) applies to its /usr Python: on a Debian-family box
    (/etc/debian_version) or where /usr/lib/python3/dist-packages exists; also to any prefix that has
    lib/python3/dist-packages."""
    if is_dir(view, posixpath.join(prefix, "lib", "python3", "dist-packages")):
        return True
    return prefix == "/usr" and is_file(view, "/etc/debian_version")


def static_base_site(view: FileView, prefix: str, xy: str) -> list[str]:
    """A base prefix's site directories without running it, as site.getsitepackages() gives them:
    Debian's dist-packages layout; for /usr elsewhere (the Fedora family) /usr/local's then /usr's, lib64
    (platlib) before lib; else prefix/lib64 and prefix/lib site-packages. Only those that exist are used."""
    if is_debian_python(view, prefix):
        return [
            posixpath.join(prefix, "local", "lib", f"python{xy}", "dist-packages"),
            posixpath.join(prefix, "lib", "python3", "dist-packages"),
            posixpath.join(prefix, "lib", f"python{xy}", "dist-packages"),
        ]
    prefixes = ["/usr/local", "/usr"] if prefix == "/usr" else [prefix]
    return [posixpath.join(p, lib, f"python{xy}", "site-packages") for p in prefixes for lib in ("lib64", "lib")]


def venv_site(prefix: str, xy: str, platlibdir: str = "lib") -> list[str]:
    """A venv's own site-packages (site.venv() adds prefix/lib/pythonX.Y/site-packages, and platlibdir's)."""
    libs = ["lib"] + ([platlibdir] if platlibdir != "lib" else [])
    return [posixpath.join(prefix, lib, f"python{xy}", "site-packages") for lib in libs]


def _stdlib(view: FileView, prefix: str, xy: str) -> str | None:
    """prefix/lib/pythonX.Y (or lib64's, where the distribution puts the standard library there)."""
    for lib in ("lib", "lib64"):
        candidate = posixpath.join(prefix, lib, f"python{xy}")
        if is_dir(view, candidate):
            return candidate
    return None


def landmark_prefix(view: FileView, bindir: str, xy: str) -> str | None:
    """The base prefix as CPython's getpath finds it: from the interpreter's directory upward, the first
    directory with lib/pythonX.Y/os.py (lib64's too)."""
    directory = posixpath.dirname(bindir.rstrip("/")) or "/"
    while True:
        for lib in ("lib", "lib64"):
            if is_file(view, posixpath.join(directory, lib, f"python{xy}", "os.py")):
                return directory
        if directory == "/":
            return None
        directory = posixpath.dirname(directory)


def user_home(env: Mapping[str, str], view: FileView) -> str | None:
    """The home directory whose user site counts: $HOME of the target's environment on this host or in an
    image (whose environment() sets HOME as the container runtime does); none for a root directory, whose
    user stackcheck does not know."""
    if not (is_host(view) or callable(getattr(view, "environment", None))):
        return None
    home = env.get("HOME")
    return home if home and home.startswith("/") else None


def derive_static(view: FileView, exe: str, env: Mapping[str, str]) -> Answer:
    """The interpreter's layout read without running it: the one static derivation, for a host interpreter
    that cannot run, a root directory and an image (any FileView). Raises NotPython when no Python layout is
    there.

    The version comes from pyvenv.cfg, else the name the interpreter's links end at (python3.12), else the
    single lib/pythonX.Y of its prefix; the base prefix from pyvenv.cfg's home, else the interpreter's
    prefix, else CPython's landmark search (lib/pythonX.Y/os.py upward); the site directories as
    static_base_site() and venv_site() say; the user site (not in a venv without system site packages) from
    $HOME. PYTHONPATH entries come first; on a view other than this host only absolute ones (a relative
    entry depends on a working directory the box does not have)."""
    notes: list[str] = []
    error: str | None = None
    cfg = read_pyvenv_cfg(view, exe)
    try:
        real = view.realpath(exe)
    except (OSError, ValueError):
        real = exe
    if cfg is not None:
        prefix, values = cfg
        kind = "venv"
        xy = (
            _xy(values.get("version") or values.get("version_info"))
            or _py_name_xy(real)
            or _version_from_dirs(view, prefix)
        )
        home = values.get("home")
        base_prefix = posixpath.dirname(home.rstrip("/")) if home else None
        if kind_of(view, exe) is None:
            where = values.get("executable") or (posixpath.join(home, posixpath.basename(real)) if home else real)
            error = f"the venv's base interpreter {where} is missing: this environment cannot start"
        system_site = values.get("include-system-site-packages", "false").lower() == "true"
        version = values.get("version") or values.get("version_info")
    else:
        if not PY_NAME.match(posixpath.basename(exe)) and not PY_NAME.match(posixpath.basename(real)):
            raise NotPython(f"{exe}: not a Python interpreter (neither its name nor its target's is pythonX.Y)")
        prefix = posixpath.dirname(posixpath.dirname(real))
        base_prefix = prefix
        kind = "conda" if is_dir(view, posixpath.join(prefix, "conda-meta")) else "system"
        xy = _py_name_xy(real) or _py_name_xy(exe) or _version_from_dirs(view, prefix)
        system_site = True
        version = None
    if xy is None:
        raise NotPython(f"{exe}: not a Python interpreter (no pythonX.Y in its name, no pyvenv.cfg version)")
    base = base_prefix or prefix
    stdlib = _stdlib(view, base, xy)
    if stdlib is None:
        bindir = home.rstrip("/") if cfg is not None and home else posixpath.dirname(real)
        found = landmark_prefix(view, bindir, xy)
        if found is not None:
            base = found
            if cfg is None:
                prefix = found
            stdlib = _stdlib(view, base, xy)
    own_site = venv_site(prefix, xy) if kind == "venv" else []
    if stdlib is None and not any(is_dir(view, d) for d in own_site):
        raise NotPython(f"{exe}: not a Python interpreter (no {base}/lib/python{xy} and no site-packages)")
    stdlib = stdlib or posixpath.join(base, "lib", f"python{xy}")
    pythonpath = [p for p in (env.get("PYTHONPATH") or "").split(":") if p]
    if not is_host(view):
        pythonpath = [posixpath.normpath(p) for p in pythonpath if p.startswith("/")]
    base_path = list(pythonpath)
    base_path += [posixpath.join(posixpath.dirname(stdlib), f"python{xy.replace('.', '')}.zip"), stdlib]
    base_path.append(posixpath.join(stdlib, "lib-dynload"))
    base_site = static_base_site(view, base, xy) if system_site else []
    user_site: str | None = None
    home_dir = user_home(env, view)
    if home_dir and system_site and not env.get("PYTHONNOUSERSITE"):
        user_base = env.get("PYTHONUSERBASE") or posixpath.join(home_dir, ".local")
        user_site = posixpath.join(user_base, "lib", f"python{xy}", "site-packages")
    notes.append("sys.path derived from the interpreter's layout (not run)")
    return Answer(
        executable=exe,
        version=version if version and _VERSION.match(version) else xy,
        implementation=None,
        prefix=prefix,
        base_path=base_path,
        venv_site=own_site,
        base_site=base_site,
        user_site=user_site,
        kind=kind,
        notes=notes,
        error=error,
        base_prefix=base,
        real_executable=real,
    )


def _py_name_xy(path: str) -> str | None:
    m = re.match(r"^python(\d+\.\d+)t?$", posixpath.basename(path))
    return m.group(1) if m else None


# -- running the interpreter -------------------------------------------------------------------------------


def parse_answer(text: str) -> dict[str, Any]:
    """The one-liner's answer (its last line; or a cached answer, JSON), checked field by field. Raises
    ValueError on anything else."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        raise ValueError("printed nothing")
    last = lines[-1]
    try:
        if last.startswith('{"'):  # a cached answer (JSON)
            data = lean_json.loads(last)
        elif not last.startswith("{'") or "'stackcheck': 1" not in last:
            # (irobust9) not the one-liner's dict: refused before ast's parser, which holds the interpreter lock ~5 s
            # over a 1 MiB literal of small items (`[1,1,...]`), the probes' budget standing still
            raise ValueError
        else:  # the one-liner's repr(): literals only, read without evaluating anything
            from stackcheck.pyast import literal_eval  # imports ast here, not at import: ~4 ms on Python 3.12

            data = literal_eval(last)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        raise ValueError(f"printed {last[:60]!r}, not the expected answer") from None
    if not isinstance(data, dict) or data.get("stackcheck") != 1:
        raise ValueError("printed something that is not stackcheck's answer")
    for key in ("executable", "version", "prefix", "base_prefix", "platlibdir", "implementation"):
        if not isinstance(data.get(key), str):
            raise ValueError(f"answer without a string {key!r}")
    if not _VERSION.match(data["version"]):
        raise ValueError(f"answer with version {data['version'][:20]!r}")
    for key in ("path", "base_site"):
        value = data.get(key)
        if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
            raise ValueError(f"answer without a list of strings {key!r}")
    if not isinstance(data.get("user_site"), (str, type(None))) or not isinstance(data.get("no_user_site"), bool):
        raise ValueError("answer without user_site / no_user_site")
    return data


def run_interpreter(exe: str, env: Mapping[str, str], timeout_s: float, cwd: str | None = None) -> dict[str, Any]:
    """Run the one-liner (in `cwd`: where the launch starts, as the server's interpreter starts there); its checked
    answer. Raises OSError, CommandTimeout or ValueError (one line)."""
    try:
        rc, out, err = run_command([exe, "-S", "-c", ONELINER], timeout_s, env, cwd, STARTED, STARTED_WINDOW_S)
    except NotStarted as exc:
        raise ValueError(
            f"a wrapper that ignores its arguments (it {exc}: what it runs is not the interpreter the one-liner asks "
            "for, and the launch's arguments are likely ignored too)"
        ) from None
    if rc != 0:
        last = (err.strip().splitlines() or [""])[-1][:120]
        raise ValueError(f"exited {rc}" + (f": {last}" if last else ""))
    return parse_answer(out)


def answer_from_run(view: FileView, exe: str, data: Mapping[str, Any], env: Mapping[str, str]) -> Answer:
    """The run's answer with the venv and user-site rules of site.main() applied (not run, because of -S)."""
    xy = _xy(data["version"]) or "3"
    cfg = read_pyvenv_cfg(view, exe)
    reported = data["executable"]
    if cfg is None and reported.startswith("/") and reported != exe:
        cfg = read_pyvenv_cfg(view, reported)  # a wrapper (a shim) that runs a venv's interpreter
    base_path = [p for p in data["path"] if p]  # '' is -c's working directory, not the environment's
    user_site = None if data["no_user_site"] or env.get("PYTHONNOUSERSITE") else data["user_site"]
    if cfg is not None:
        prefix, values = cfg
        system_site = values.get("include-system-site-packages", "false").lower() == "true"
        return Answer(
            executable=exe,
            version=data["version"],
            implementation=data["implementation"],
            prefix=prefix,
            base_path=base_path,
            venv_site=venv_site(prefix, xy, data["platlibdir"]),
            base_site=list(data["base_site"]) if system_site else [],
            user_site=user_site if system_site else None,
            kind="venv",
        )
    prefix = data["prefix"]
    kind = "conda" if is_dir(view, posixpath.join(prefix, "conda-meta")) else "system"
    return Answer(
        executable=exe,
        version=data["version"],
        implementation=data["implementation"],
        prefix=prefix,
        base_path=base_path,
        venv_site=[],
        base_site=list(data["base_site"]),
        user_site=user_site,
        kind=kind,
    )


# -- the cache -------------------------------------------------------------------------------------------


def default_cache_dir(environ: Mapping[str, str] | None = None) -> str | None:
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME")
    if not base or not base.startswith("/"):
        home = env.get("HOME") or os.path.expanduser("~")
        if not home or home == "~":
            return None
        base = os.path.join(home, ".cache")
    return os.path.join(base, "stackcheck")


#: the path variables whose relative entries the interpreter reads against the directory it runs in
_RELATIVE_VARS = ("PYTHONPATH", "PYTHONHOME", "PYTHONUSERBASE")


def _relative_entry(env: Mapping[str, str]) -> bool:
    """Whether a path variable of `env` has an entry that is not absolute (an empty PYTHONPATH entry included)."""
    return any(
        not entry.startswith("/")
        for var in _RELATIVE_VARS
        if env.get(var)
        for entry in (env[var].split(":") if var == "PYTHONPATH" else [env[var]])
    )


def cache_key(exe: str, env: Mapping[str, str], cwd: str | None = None) -> str | None:
    """What the answer depends on: the interpreter path, the size, modification and change times and inode of
    the file it resolves to (ctime: an interpreter replaced in place at its size with its mtime put back is
    another key), its pyvenv.cfg (the same four), the path variables of the environment, the one-liner, and where
    one of those variables has a relative entry the directory it runs in (`cwd`, None: this process's; irev81:
    CPython 3.11+ prints such an entry made absolute against it, and irev80 runs it in the launch's directory).
    None when the file cannot be stat'ed, or is not a compiled program: a wrapper script (a pyenv shim, a launcher)
    picks its interpreter at run time from things the key cannot see, so its answer is not cached."""
    try:
        st = os.stat(exe)
        if not stat.S_ISREG(st.st_mode):  # checked before opening: opening a FIFO would block
            return None
        fd = os.open(exe, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            if os.pread(fd, 4, 0) != b"\x7fELF":
                return None
        finally:
            os.close(fd)
    except OSError:
        return None
    parts: list[Any] = [ONELINER, exe, os.path.realpath(exe), st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
    for cfg in (
        os.path.join(os.path.dirname(exe), "pyvenv.cfg"),
        os.path.join(os.path.dirname(os.path.dirname(exe)), "pyvenv.cfg"),
    ):
        try:
            cst = os.stat(cfg)
            parts.append([cfg, cst.st_size, cst.st_mtime_ns, cst.st_ctime_ns, cst.st_ino])
        except OSError:
            parts.append(None)
    parts.append([env.get(v) for v in (*PATH_VARS, "HOME")])
    if _relative_entry(env):
        try:
            parts.append(os.path.join(os.getcwd(), cwd) if cwd else os.getcwd())  # (join: an absolute cwd wins)
        except OSError:  # (this process's directory removed: no key, the answer is not kept)
            return None
    try:  # BLAKE2b from its own module: hashlib would load OpenSSL (~4-6 ms of a gate or audit that reads this cache)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - an interpreter built without it
        from hashlib import blake2b
    return str(blake2b(lean_json.dumps(parts).encode(), digest_size=20).hexdigest())


def cache_load(cache_dir: str, key: str) -> dict[str, Any] | None:
    path = os.path.join(cache_dir, f"python-{key}.json")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_uid != os.geteuid() or st.st_size > ANSWER_CAP:
            return None  # not a regular file of this user: not ours to trust
        data = os.read(fd, ANSWER_CAP).decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return parse_answer(data)
    except ValueError:
        return None


def cache_store(cache_dir: str, key: str, data: Mapping[str, Any]) -> str | None:
    """Write the answer atomically (a temporary file renamed over the name: a reader never sees half of
    it); None, or why it was not written (a read-only home is not an error). Not fsync'ed: a cache file a
    crash leaves empty fails parse_answer and is replaced, and an fsync can cost an audit 100 ms on a busy
    disk."""
    import tempfile

    try:
        os.makedirs(cache_dir, mode=0o700, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".python-", suffix=".tmp", dir=cache_dir)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(lean_json.dumps(data) + "\n")
            os.chmod(tmp, 0o600)
            os.replace(tmp, os.path.join(cache_dir, f"python-{key}.json"))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        return f"answer not cached: {cache_dir}: {exc.strerror or exc}"
    return None


# -- site directories and .pth files -----------------------------------------------------------------------


def site_order(answer: Answer) -> list[str]:
    """The site directories in the order site.main() adds them."""
    dirs = list(answer.venv_site)
    if answer.user_site:
        dirs.append(answer.user_site)
    dirs += answer.base_site
    return list(dict.fromkeys(dirs))


def compose_sys_path(view: FileView, answer: Answer) -> tuple[list[str], list[str]]:
    """(sys.path, notes): the base path, then each existing site directory followed by the path lines of
    its .pth files (sorted by name, as site does). An `import` line is never executed, only counted."""
    sys_path = list(dict.fromkeys(answer.base_path))
    known = set(sys_path)
    notes: list[str] = []
    skipped_imports = 0
    real_sites: set[str] = set()
    for site_dir in site_order(answer):
        if not is_dir(view, site_dir):
            continue
        try:
            real = view.realpath(site_dir)
        except (OSError, ValueError):
            real = site_dir
        if real in real_sites:
            continue  # lib64 -> lib: one directory, its .pth files read once
        real_sites.add(real)
        if site_dir not in known:
            sys_path.append(site_dir)
            known.add(site_dir)
        names = [n for n in listdir_or_empty(view, site_dir) if n.endswith(".pth") and not n.startswith(".")]
        if len(names) > MAX_PTH_FILES:
            notes.append(f"{site_dir}: {len(names)} .pth files, only the first {MAX_PTH_FILES} read")
            names = names[:MAX_PTH_FILES]
        for name in names:
            pth = posixpath.join(site_dir, name)
            try:
                text = read_text(view, pth, PTH_CAP)
            except (OSError, ValueError) as exc:
                notes.append(f"{pth}: not read: {getattr(exc, 'strerror', None) or exc}")
                continue
            for line in text.splitlines():
                if not line.strip() or line.startswith("#"):
                    continue
                if line.startswith(("import ", "import\t")):
                    skipped_imports += 1  # executable code: never run
                    continue
                entry = posixpath.normpath(posixpath.join(site_dir, line.rstrip()))
                if entry not in known and kind_of(view, entry) is not None:
                    sys_path.append(entry)
                    known.add(entry)
    if skipped_imports:
        notes.append(f"{skipped_imports} .pth import line(s) not executed")
    return sys_path, notes


# -- the probe -------------------------------------------------------------------------------------------


def python_version_of(version: str, info: tuple[Any, ...], implementation: str) -> str | None:
    """platform.python_version() read from sys.version, sys.version_info and sys.implementation.name without
    importing platform (with its regular expressions, ~2 ms of every live audit and gate): a CPython final
    release whose version text starts with its version_info ('3.11.7 (main, ...'), as platform reads it; None
    for any other (a pre-release, a '+' build, a vendor's |...| tag, another implementation): ask platform."""
    major, minor, micro, level = info[:4]
    text = f"{major}.{minor}.{micro}"
    if implementation != "cpython" or level != "final" or not version.startswith(text + " ("):
        return None
    if "PyPy" in version or "IronPython" in version:  # platform reads those sys.version texts differently
        return None
    return text


def own_python_version() -> str:
    """platform.python_version() of this process."""
    lean = python_version_of(sys.version, tuple(sys.version_info), sys.implementation.name)
    if lean is not None and not sys.platform.startswith("java"):
        return lean
    import platform

    return platform.python_version()


def own_facts(target: Target | None) -> dict[str, Any]:
    """facts.python for this process (no interpreter started)."""
    notes = list(target.notes) if target is not None else []
    facts: dict[str, Any] = {
        "executable": sys.executable or None,
        "version": own_python_version(),
        "implementation": sys.implementation.name,
        "prefix": sys.prefix,
        "kind": "venv"
        if sys.prefix != sys.base_prefix
        else ("conda" if os.path.isdir(os.path.join(sys.prefix, "conda-meta")) else "system"),
        "sys_path": [p for p in sys.path if isinstance(p, str)],
        "chosen_by": target.chosen_by if target is not None else "stackcheck's own interpreter",
        "learned": "this process",
    }
    if notes:
        facts["notes"] = notes
    return facts


def learn(
    target: Target, view: FileView, cache_dir: str | None, timeout_s: float, cwd: str | None = None
) -> tuple[dict[str, Any], ProbeStatus, str | None]:
    """facts.python for a target, with the probe status and reason (see the module docstring). `cwd`: the directory
    the launch starts in (ProbeContext.launch_cwd), where the interpreter is run: a pyenv or asdf shim, which the
    gate lets pass as the launch's `python3` (igap58), picks its version from a version file looked up from the
    directory it runs in (irev80: run in the gate's own, `env -C DIR` / gate --cwd DIR judged another version's
    packages); None: this process's directory. (A wrapper script's answer is never cached: cache_key.)"""
    if target.own:
        return own_facts(target), "ok", None
    exe = target.executable
    notes = list(target.notes)
    if exe is None:
        missing = notes[-1] if notes else "no Python interpreter found"
        return _unknown(target, missing), "failed", missing
    answer: Answer | None = None
    learned = "static"
    why_static: str | None = None
    if is_host(view):
        key = cache_key(exe, target.env, cwd) if cache_dir else None
        data = cache_load(cache_dir, key) if cache_dir and key else None
        if data is not None:
            learned = "cache"
        else:
            try:
                data = run_interpreter(exe, target.env, timeout_s, cwd)
                learned = "ran"
            except CommandTimeout:
                why_static = f"{exe} did not answer within {timeout_s:g}s"
            except OSError as exc:
                why_static = f"{exe}: cannot run: {exc.strerror or exc}"
            except ValueError as exc:
                why_static = f"{exe}: {exc}"
            if data is not None and cache_dir and key:
                failed = cache_store(cache_dir, key, data)
                if failed:
                    notes.append(failed)
        if data is not None:
            answer = answer_from_run(view, exe, data, target.env)
    if answer is None:
        try:
            answer = derive_static(view, exe, target.env)
        except NotPython as exc:
            unreadable = f"{why_static}; {exc}" if why_static else str(exc)
            return _unknown(target, unreadable), "failed", unreadable
        if why_static:
            answer.notes.insert(0, why_static)
    if cwd and is_host(view):
        # (irev81) a relative entry (PYTHONPATH=python in a source checkout) is the launch directory's, which CPython
        # 3.11+ prints made absolute; kept relative (an older one's answer, the static derivation) the packages probe
        # read it from the gate's own directory
        with contextlib.suppress(OSError):
            where = posixpath.join(os.getcwd(), cwd)
            answer.base_path = [p if p.startswith("/") else posixpath.normpath(posixpath.join(where, p))
                                for p in answer.base_path]  # fmt: skip
    sys_path, pth_notes = compose_sys_path(view, answer)
    notes += answer.notes + pth_notes
    facts: dict[str, Any] = {
        "executable": exe,
        "version": answer.version,
        "implementation": answer.implementation,
        "prefix": answer.prefix,
        "kind": answer.kind,
        "sys_path": sys_path,
        "chosen_by": target.chosen_by,
        "learned": learned,
    }
    if notes:
        facts["notes"] = notes
    status: ProbeStatus = "ok"
    reason: str | None = None
    if answer.error:
        facts["error"] = answer.error
        status, reason = "partial", answer.error
    elif why_static:
        status, reason = "partial", f"{why_static}: sys.path derived from its layout"
    return facts, status, reason


def _unknown(target: Target, reason: str) -> dict[str, Any]:
    facts: dict[str, Any] = {
        "executable": target.executable,
        "version": None,
        "prefix": None,
        "sys_path": None,
        "chosen_by": target.chosen_by,
        "error": reason,
    }
    if target.notes:
        facts["notes"] = list(target.notes)
    return facts


class PythonProbe(Probe):
    """facts.python: which interpreter's packages are audited, and its sys.path."""

    name: ClassVar[str] = "python"
    timeout_s: ClassVar[float] = RUN_TIMEOUT_S + 1.0
    sections: ClassVar[tuple[str, ...]] = ("python",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        target = ctx.target
        if target is None:
            return ProbeResult({"python": own_facts(None)})
        cache_dir = ctx.cache_dir if ctx.cache_dir is not None else default_cache_dir()
        timeout = RUN_TIMEOUT_S
        if ctx.deadline is not None:
            import time

            timeout = max(0.1, min(timeout, ctx.deadline - time.monotonic() - 0.3))
        facts, status, reason = learn(target, ctx.fs, cache_dir or None, timeout, ctx.launch_cwd)
        return ProbeResult({"python": facts}, status, reason)

    def failure_facts(self, reason: str) -> dict[str, Any]:
        return {"python": {"sys_path": None, "error": reason}}
