"""Docker daemon probe: which OCI runtimes the host's dockerd registers, and which CDI device kinds its spec
directories hold, read from files only (no `docker` command, no call to the daemon).

What decides, read in the code that runs (moby/moby; the commits are in manifests/checks.json, check
container-engine-gpu-path):

- a container started with `--runtime NAME` (or the daemon's `default-runtime`) runs only where the daemon knows
  NAME: the stock `runc` and `io.containerd.runc.v2`, the `runtimes` object of its config file, or a dockerd
  `--add-runtime NAME=PATH` flag; any other name without a dot is refused with 'unknown or invalid runtime name:
  NAME' (daemon/runtime_unix.go `runtimes.Get`, `isPermissibleC8dRuntimeName`; a name with a dot goes to
  containerd as a shim name, which this probe does not judge);
- the config file is `--config-file FILE`, else /etc/docker/daemon.json (daemon/command/daemon_unix.go
  getDefaultDaemonConfigFile; a relative FILE is opened from dockerd's working directory, /proc/PID/cwd here, and
  is not read where that is not readable); a key given both in the file and as a flag stops dockerd
  (daemon/config/config.go findConfigurationConflicts), so the runtimes are the file's plus the flags';
- `nvidia-ctk runtime configure --runtime=docker` writes `runtimes.nvidia` into /etc/docker/daemon.json and asks for
  a restart (NVIDIA/nvidia-container-toolkit cmd/nvidia-ctk/runtime/configure/configure.go,
  pkg/config/engine/docker/docker.go AddRuntime): a file changed after dockerd started says nothing sure about the
  running daemon (a restart or a SIGHUP reload reads it; neither is visible here);
- CDI specs are the `.yaml` / `.json` files of the spec directories, /etc/cdi and /var/run/cdi unless daemon.json's
  `cdi-spec-dirs` or `--cdi-spec-dir` names others (tags.cncf.io/container-device-interface pkg/cdi/spec-dirs.go,
  daemon/command/daemon.go); each names its device `kind` (`nvidia.com/gpu` for the toolkit's `nvidia-ctk cdi
  generate`). Podman, containerd and CRI-O read the same default directories; their own `cdi_spec_dirs` setting is
  only looked for (`other_cdi_configs`), never read.

`docker run --gpus` is served where dockerd found nvidia-container-runtime-hook (every release) or nvidia-cdi-hook
(from Docker 29.2.0, through CDI) on its PATH when it started (daemon/devices_nvidia_linux.go); otherwise it refuses
with 'could not select device driver "" with capabilities: [[gpu]]'. Its PATH is /proc/PID/environ's (root only),
else systemd's service default, and `gpu_hooks_path` says which.

dockerd's flags come from /proc/PID/cmdline of the process the default pid file (/var/run/docker.pid) names. A
runtime named in no file read is not proof that the daemon lacks it while those flags are not read: `runtimes_complete`
says whether the list is the daemon's whole list, `runtimes_reason` why not. A rootless daemon
($XDG_RUNTIME_DIR/docker.pid) beside it leaves the list incomplete (which daemon `docker` talks to is not read).

Facts: `docker_daemon: {"installed": bool, "config": path|null, "config_source": "default"|"flag",
"config_state": "read"|"absent"|"error", "config_error": str, "runtimes": [name...] (the config file's),
"default_runtime": str|null, "features_cdi": bool|null, "flag_runtimes": [name...], "flags_read": bool,
"flags_reason": str, "pid": int|null, "started_at": epoch s|null (null where the process's start was not read),
"config_newer_than_daemon": bool|null, "rootless_pidfile": path|null, "other_daemon": str|null (DOCKER_HOST or
a docker context naming another daemon than the pid file's: every answer below is then not that daemon's),
"registered": [name...], "runtime_paths": {name: the binary its path (or a runc shim runtimeType's
options.BinaryName) names}, "runtime_binary_missing": {name: an absolute binary path not on the host},
"runtimes_complete": bool, "runtimes_reason": str, "cdi_spec_dirs": [dir...], "cdi_specs": [{"file", "kind"}],
"cdi_unread": [str...], "other_cdi_configs": [path...], "cdi_complete": bool, "cdi_reason": str,
"gpu_hooks": {hook: path|null}, "gpu_hooks_path": where the PATH came from, "gpu_hooks_newer_than_daemon": [hook...],
"sources": {fact: where it was read}, "error": str (no Docker found)}`.
"""

from __future__ import annotations

import json
import os
import posixpath
import time

from stackcheck.digits import whole_number
from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes import IMAGE_ONLY
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.readers.fsview import FileView, HostView, which

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, ClassVar

DEFAULT_CONFIG = "/etc/docker/daemon.json"
PIDFILES = ("/var/run/docker.pid", "/run/docker.pid")
#: the runtimes every daemon registers (daemon/runtime_unix.go stockRuntimes)
STOCK_RUNTIMES = ("io.containerd.runc.v2", "runc")
CDI_DEFAULT_DIRS = ("/etc/cdi", "/var/run/cdi")
#: the other engines' files whose `cdi_spec_dirs` would name spec directories this probe does not read
OTHER_CDI_CONFIGS = (
    "/etc/containers/containers.conf",
    "/usr/share/containers/containers.conf",
    "/etc/containerd/config.toml",
    "/etc/crio/crio.conf",
)
OTHER_CDI_CONFIG_DIRS = ("/etc/containers/containers.conf.d", "/etc/crio/crio.conf.d")
BIN_DIRS = ("/usr/bin", "/usr/local/bin", "/usr/sbin", "/bin", "/snap/bin")
#: what serves `docker run --gpus` (a device request of driver nvidia): dockerd looks these up on its PATH once, as
#: it starts (daemon/devices_nvidia_linux.go getNVIDIADeviceDrivers: the CDI hook from Docker 29.2.0, the runtime
#: hook in every release)
GPU_HOOKS = ("nvidia-container-runtime-hook", "nvidia-cdi-hook")
#: systemd's PATH for a system service (the directories dockerd.service runs with where its environ is not read)
SERVICE_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin")
CONFIG_LIMIT = 1024 * 1024
CMDLINE_LIMIT = 256 * 1024
SPEC_LIMIT = 4 * 1024 * 1024
SPEC_FILES_LIMIT = 256
#: all spec files together (a toolkit's spec is tens of kB): past it, or past SPEC_SECONDS, the rest is unread
SPEC_BYTES_BUDGET = 16 * 1024 * 1024
SPEC_SECONDS = 0.5
_BOMS = ((b"\xef\xbb\xbf", "utf-8"), (b"\xff\xfe", "utf-16-le"), (b"\xfe\xff", "utf-16-be"))
_NAME = _lazy(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$")
_KIND = _lazy(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,62}/[A-Za-z0-9][A-Za-z0-9._-]{0,62}$")
_YAML_KIND = _lazy(r"""^kind:[ \t]*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s#'"][^\s#]*))[ \t]*(?:#.*)?$""")
_CDI_KEY = _lazy(r"(?m)^[ \t]*cdi_spec_dirs[ \t]*=")


class DaemonConfigError(ValueError):
    """The daemon's config file cannot be read as dockerd reads it (one line: where and why)."""


def _safe(name: str) -> str:
    return name if _NAME.match(name) else "?"


def _go_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as Go's encoding/json decodes a repeated key into dockerd's Config: an object into the value an
    earlier one made (a map or struct keeps its entries: both `runtimes` objects count), anything else replaced."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        before = out.get(key)
        out[key] = {**before, **value} if isinstance(before, dict) and isinstance(value, dict) else value
    return out


#: the containerd shim whose options name the OCI runtime binary it execs (runc's options, BinaryName)
RUNC_SHIM = "io.containerd.runc.v2"


def _runtime_binary(rt: Any) -> str | None:
    """The binary a daemon.json runtime entry makes the runc shim exec: its `path`, else, for a `runtimeType` of the
    runc shim, its `options` BinaryName (irev56). moby b985e231 daemon/runtime_unix.go:158-163 passes a runtimeType
    entry's options to shimopts.Generate, which decodes them into the runc shim's Options for io.containerd.runc.v2
    (daemon/internal/libcontainerd/shimopts/convert.go:20, :34, through TOML: the key is matched without regard to
    case, as go-toml v2 matches a struct's field names; inferred, not run)."""
    if not isinstance(rt, dict):
        return None
    path = rt.get("path")
    if isinstance(path, str) and path:
        return path
    options = rt.get("options")
    if rt.get("runtimeType") != RUNC_SHIM or not isinstance(options, dict):
        return None
    named = [v for k, v in options.items() if str(k).lower() == "binaryname" and isinstance(v, str) and v]
    return named[-1] if len(named) == 1 else None


def read_daemon_config(view: FileView, path: str) -> dict[str, Any]:
    """The keys of daemon.json at `path` this probe uses: `runtimes` (names), `default-runtime`, `cdi-spec-dirs`,
    `features.cdi`. DaemonConfigError for a file that is too large, not UTF-8, not JSON or not an object, or whose
    keys have another type than dockerd takes (it would not start); OSError where it cannot be read."""
    data = view.read_bytes(path, CONFIG_LIMIT + 1)
    if len(data) > CONFIG_LIMIT:
        raise DaemonConfigError(f"{path}: larger than {CONFIG_LIMIT} bytes, not read")
    # dockerd takes a byte order mark's encoding (UTF-8, UTF-16 LE or BE: Notepad's and PowerShell's), else UTF-8
    # (daemon/config/config.go getConflictFreeConfiguration, unicode.BOMOverride)
    encoding, skip = next(
        ((e, len(bom)) for bom, e in _BOMS if data.startswith(bom)),
        ("utf-8", 0),
    )
    try:
        text = data[skip:].decode(encoding)
    except UnicodeDecodeError as exc:
        raise DaemonConfigError(f"{path}: byte {exc.start + skip}: not {encoding.upper()}") from None
    try:
        doc = json.loads(text, object_pairs_hook=_go_object) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise DaemonConfigError(f"{path}: line {exc.lineno} column {exc.colno}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise DaemonConfigError(f"{path}: nested too deep, not read") from None
    if not isinstance(doc, dict):
        raise DaemonConfigError(f"{path}: $: not a JSON object")
    out: dict[str, Any] = {"runtimes": [], "default_runtime": None, "cdi_spec_dirs": None, "features_cdi": None,
                           "runtime_paths": {}}  # fmt: skip
    runtimes = doc.get("runtimes")
    if runtimes is not None:
        if not isinstance(runtimes, dict):
            raise DaemonConfigError(f"{path}: $.runtimes: not an object")
        out["runtimes"] = sorted({_safe(str(name)) for name in runtimes})
        out["runtime_paths"] = {
            _safe(str(name)): binary for name, rt in runtimes.items() if (binary := _runtime_binary(rt)) is not None
        }
    default = doc.get("default-runtime")
    if default is not None:
        if not isinstance(default, str):
            raise DaemonConfigError(f"{path}: $.default-runtime: not a string")
        out["default_runtime"] = _safe(default) if default else None
    dirs = doc.get("cdi-spec-dirs")
    if dirs is not None:
        if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
            raise DaemonConfigError(f"{path}: $.cdi-spec-dirs: not a list of strings")
        out["cdi_spec_dirs"] = list(dirs)
    features = doc.get("features")
    if isinstance(features, dict) and isinstance(features.get("cdi"), bool):
        out["features_cdi"] = features["cdi"]
    return out


def parse_dockerd_flags(argv: list[str]) -> dict[str, Any]:
    """The dockerd flags this probe uses, as pflag reads them (`--flag value`, `--flag=value`): `--add-runtime
    NAME=PATH` (names), `--default-runtime`, `--config-file`, `--cdi-spec-dir`; the last one given wins where the
    flag takes one value."""
    out: dict[str, Any] = {"add_runtimes": [], "default_runtime": None, "config_file": None, "cdi_spec_dirs": [],
                           "add_runtime_paths": {}}  # fmt: skip
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "--":
            break
        name, eq, value = arg.partition("=")
        if name not in ("--add-runtime", "--default-runtime", "--config-file", "--cdi-spec-dir"):
            continue
        if not eq:
            if i >= len(argv):
                break
            value = argv[i]
            i += 1
        if name == "--add-runtime":
            runtime, _, binary = value.partition("=")
            out["add_runtimes"].append(_safe(runtime))
            if binary:
                out["add_runtime_paths"][_safe(runtime)] = binary
        elif name == "--default-runtime":
            out["default_runtime"] = _safe(value) if value else None
        elif name == "--config-file":
            out["config_file"] = value
        else:
            out["cdi_spec_dirs"].append(value)
    return out


def _process_start(view: FileView, pid: int) -> float | None:
    """The wall-clock start of process `pid` (/proc/PID/stat's starttime after /proc/stat's btime); None unread."""
    try:
        stat = view.read_bytes(f"/proc/{pid}/stat", 4096).decode("ascii", "replace")
        boot = view.read_bytes("/proc/stat", 64 * 1024).decode("ascii", "replace")
    except OSError:
        return None
    fields = stat.rpartition(")")[2].split()
    btime = next((line.split()[1] for line in boot.splitlines() if line.startswith("btime ")), None)
    start = whole_number(fields[19], 18) if len(fields) >= 20 else None
    booted = whole_number(btime, 18) if btime is not None else None
    if start is None or booted is None:
        return None
    try:
        ticks = os.sysconf("SC_CLK_TCK")
    except (ValueError, OSError, AttributeError):
        ticks = 100
    return booted + start / max(1, ticks)


def _dockerd_process(view: FileView, out: dict[str, Any]) -> list[str] | None:
    """dockerd's argv from the pid file's process; None (with out["flags_reason"]) where it is not read."""
    unread: list[str] = []
    for pidfile in PIDFILES:
        try:
            raw = view.read_bytes(pidfile, 32)
        except FileNotFoundError:
            continue
        except OSError as exc:  # there, but not read: not the same as no pid file
            unread.append(f"{pidfile}: {exc.strerror or 'not a regular file'}")
            continue
        text = raw.decode("ascii", "replace").strip()
        if not text.isdecimal() or not 0 < int(text) < 1 << 22:
            out["flags_reason"] = f"{pidfile} holds no process id"
            return None
        pid = int(text)
        try:
            cmdline = view.read_bytes(f"/proc/{pid}/cmdline", CMDLINE_LIMIT + 1)
        except OSError as exc:
            out["flags_reason"] = f"/proc/{pid}/cmdline (the process {pidfile} names): {exc.strerror or 'unreadable'}"
            return None
        if len(cmdline) > CMDLINE_LIMIT:  # a flag past the cut (--config-file, --add-runtime) would be lost
            out["flags_reason"] = f"/proc/{pid}/cmdline is longer than {CMDLINE_LIMIT} bytes, not read"
            return None
        argv = [a.decode("utf-8", "replace") for a in cmdline.split(b"\0")]
        if argv and argv[-1] == "":
            argv.pop()
        if not argv or posixpath.basename(argv[0]) != "dockerd":
            out["flags_reason"] = f"the process {pidfile} names ({pid}) is not dockerd (a stale pid file)"
            return None
        out["pid"] = pid
        out["sources"]["flags"] = f"/proc/{pid}/cmdline"
        return argv
    if unread:
        out["flags_reason"] = f"the pid file was not read ({'; '.join(unread)})"
        return None
    out["flags_reason"] = f"no pid file ({', '.join(PIDFILES)}): no dockerd runs with the default pid file here"
    return None


def _gpu_hooks(view: FileView, out: dict[str, Any], start: float | None) -> None:
    """Where dockerd finds GPU_HOOKS: on its own PATH (/proc/PID/environ, root only), else on systemd's service
    PATH (`gpu_hooks_path`: which was used); a hook newer than dockerd is named in `gpu_hooks_newer_than_daemon`."""
    dirs: list[str] = list(SERVICE_PATH)
    out["gpu_hooks_path"] = "systemd service default"
    if out["pid"] is not None:
        try:
            environ = view.read_bytes(f"/proc/{out['pid']}/environ", CMDLINE_LIMIT + 1)
        except OSError:
            environ = None
        if environ is not None and len(environ) > CMDLINE_LIMIT:
            environ = None  # the cut may fall inside PATH or before it: not read
        if environ is not None:
            # the first PATH= is Go's os.Getenv("PATH"); none at all is an empty PATH, where LookPath finds nothing
            dirs, out["gpu_hooks_path"] = [], f"/proc/{out['pid']}/environ (no PATH)"
        for item in (environ or b"").split(b"\0"):
            if item.startswith(b"PATH="):
                dirs = [d for d in item[5:].decode("utf-8", "replace").split(":") if d.startswith("/")]
                out["gpu_hooks_path"] = f"/proc/{out['pid']}/environ"
                break
    for hook in GPU_HOOKS:
        found = which(view, hook, ":".join(dirs))  # Go's LookPath: the first executable regular file on the PATH
        if found is not None and start is not None:
            st = view.stat(found)
            if st is not None and st.mtime > start:
                out["gpu_hooks_newer_than_daemon"].append(hook)
        out["gpu_hooks"][hook] = found


def _spec_kind(view: FileView, path: str) -> str:
    """The `kind` of the CDI spec at `path` (a YAML file's top-level `kind:` line, a JSON file's "kind"); raises
    ValueError where it cannot be read."""
    data = view.read_bytes(path, SPEC_LIMIT + 1)
    if len(data) > SPEC_LIMIT:
        raise ValueError(f"larger than {SPEC_LIMIT} bytes")
    text = data.decode("utf-8")
    kind: Any = None
    if path.endswith(".json"):
        try:
            doc = json.loads(text)
        except RecursionError:  # not a ValueError: it would take the whole daemon read down with it
            raise ValueError("nested too deep, not read") from None
        kind = doc.get("kind") if isinstance(doc, dict) else None
    else:
        for line in text.split("\n"):
            found = _YAML_KIND.match(line.rstrip("\r"))
            if found:
                kind = next(g for g in found.groups() if g is not None)
                break
    if not isinstance(kind, str) or not _KIND.match(kind):
        raise ValueError("no device kind read")
    return kind


def _cdi(view: FileView, out: dict[str, Any], config: dict[str, Any] | None, flags: dict[str, Any] | None) -> None:
    """The CDI spec directories dockerd reads, the kinds of their specs, and whether that is all there is."""
    dirs: list[str] = list(CDI_DEFAULT_DIRS)
    why: list[str] = []
    if flags is not None and flags["cdi_spec_dirs"]:
        dirs = list(flags["cdi_spec_dirs"])
    elif config is not None and config.get("cdi_spec_dirs") is not None:
        dirs = list(config["cdi_spec_dirs"])
    if config is None and out["installed"]:
        why.append("daemon.json not read (it may name cdi-spec-dirs)")
    if flags is None and out["installed"]:
        why.append(f"dockerd's flags not read (a --cdi-spec-dir may name others: {out['flags_reason']})")
    # "" names no directory to dockerd (alone it turns CDI off, daemon/command/daemon.go; else its ReadDir fails)
    out["cdi_spec_dirs"] = dirs = [d for d in dirs if d]
    spent, deadline = 0, time.monotonic() + SPEC_SECONDS
    for directory in dirs:
        if not directory.startswith("/"):  # read from dockerd's working directory, which is not read here
            out["cdi_unread"].append(f"{_safe(directory)}: a relative spec directory, not read")
            continue
        if spent >= SPEC_BYTES_BUDGET or time.monotonic() > deadline:
            out["cdi_unread"].append(f"{directory}: past the read budget ({SPEC_BYTES_BUDGET} bytes, {SPEC_SECONDS} s)")
            continue
        try:
            names = sorted(view.listdir(directory))
        except FileNotFoundError:
            continue
        except OSError as exc:
            out["cdi_unread"].append(f"{directory}: {exc.strerror or 'unreadable'}")
            continue
        for name in names[:SPEC_FILES_LIMIT]:
            if not name.endswith((".yaml", ".json")):
                continue
            path = f"{directory}/{name}"
            if spent >= SPEC_BYTES_BUDGET or time.monotonic() > deadline:
                out["cdi_unread"].append(f"{directory}: past the read budget, {path} and the rest not read")
                break
            st = view.stat(path)
            spent += min(st.size, SPEC_LIMIT + 1) if st is not None else 0
            try:
                out["cdi_specs"].append({"file": path, "kind": _spec_kind(view, path)})
            except (OSError, ValueError) as exc:
                said = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc).split("\n")[0][:80]
                out["cdi_unread"].append(f"{path}: {said}")
        if len(names) > SPEC_FILES_LIMIT:
            out["cdi_unread"].append(f"{directory}: more than {SPEC_FILES_LIMIT} entries, the rest not read")
    others_unread = 0
    for path in _other_cdi_files(view):
        if spent >= SPEC_BYTES_BUDGET or time.monotonic() > deadline:
            others_unread += 1
            continue
        try:
            data = view.read_bytes(path, CONFIG_LIMIT)
        except OSError:
            continue
        spent += len(data)
        if _CDI_KEY.search(data.decode("utf-8", "replace")):
            out["other_cdi_configs"].append(path)
    if others_unread:
        why.append(f"{others_unread} other engines' config files past the read budget, not read (cdi_spec_dirs)")
    if out["cdi_unread"]:
        why.append("spec files not read: " + "; ".join(out["cdi_unread"][:3]))
    if out["other_cdi_configs"]:
        named = ", ".join(out["other_cdi_configs"][:3]) + (", ..." if len(out["other_cdi_configs"]) > 3 else "")
        why.append(f"another engine's cdi_spec_dirs is set, not read ({named})")
    out["cdi_complete"] = not why
    if why:
        out["cdi_reason"] = "; ".join(why)


def _other_cdi_files(view: FileView) -> list[str]:
    files = [p for p in OTHER_CDI_CONFIGS if view.stat(p) is not None]
    for directory in OTHER_CDI_CONFIG_DIRS:
        try:
            files += [f"{directory}/{n}" for n in sorted(view.listdir(directory)) if n.endswith(".conf")]
        except OSError:
            continue
    return files


#: the sockets docker/cli's default context uses: DOCKER_HOST naming one of them is the daemon read here
DEFAULT_HOSTS = ("unix:///var/run/docker.sock", "unix:///run/docker.sock")


def _other_daemon(view: FileView, env: Mapping[str, str]) -> str | None:
    """What makes `docker` (the CLI that starts the container) talk to another daemon than the pid file's: DOCKER_HOST,
    else DOCKER_CONTEXT, else the CLI config's currentContext ($DOCKER_CONFIG or $HOME/.docker: config.json); None
    where it uses the default socket. A config.json there but not read is said too (its context is not known)."""
    host = env.get("DOCKER_HOST") or ""
    if host and host.rstrip("/") not in DEFAULT_HOSTS:
        return f"DOCKER_HOST={host[:120]!a}"
    if host:
        return None  # DOCKER_HOST wins over any context
    context = env.get("DOCKER_CONTEXT")
    if context is None:
        directory = env.get("DOCKER_CONFIG") or (f"{env['HOME'].rstrip('/')}/.docker" if env.get("HOME") else "")
        if not directory.startswith("/"):
            return None
        path = f"{directory}/config.json"
        try:
            doc = json.loads(view.read_bytes(path, CONFIG_LIMIT).decode("utf-8", "replace") or "{}")
        except FileNotFoundError:
            return None
        except (OSError, ValueError, RecursionError):
            return f"{path} (its currentContext) not read"
        context = doc.get("currentContext") if isinstance(doc, dict) else None
        if not isinstance(context, str):
            return None
    if context and context != "default":
        return f"docker context {context[:64]!a}"
    return None


def probe_docker_daemon(view: FileView, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The `docker_daemon` facts section of the host `view` shows (see the module docstring); `env`: the audit's
    environment, whose XDG_RUNTIME_DIR locates a rootless daemon's pid file."""
    env = env or {}
    out: dict[str, Any] = {
        "installed": False,
        "config": None,
        "config_source": "default",
        "config_state": "absent",
        "runtimes": [],
        "default_runtime": None,
        "features_cdi": None,
        "flag_runtimes": [],
        "flags_read": False,
        "pid": None,
        "started_at": None,
        "config_newer_than_daemon": None,
        "rootless_pidfile": None,
        "registered": list(STOCK_RUNTIMES),
        "runtimes_complete": False,
        "cdi_spec_dirs": [],
        "cdi_specs": [],
        "cdi_unread": [],
        "other_cdi_configs": [],
        "cdi_complete": False,
        "gpu_hooks": {},
        "gpu_hooks_path": None,
        "gpu_hooks_newer_than_daemon": [],
        "sources": {},
    }
    argv = _dockerd_process(view, out)
    flags = parse_dockerd_flags(argv) if argv is not None else None
    binary = next((f"{d}/dockerd" for d in BIN_DIRS if view.stat(f"{d}/dockerd") is not None), None)
    config_path = DEFAULT_CONFIG
    config_unread = None
    if flags is not None and flags["config_file"]:
        config_path, out["config_source"] = flags["config_file"], "flag"
        if not config_path.startswith("/"):  # dockerd opens it from its own working directory, not ours
            try:
                cwd = view.readlink(f"/proc/{out['pid']}/cwd")
            except (OSError, ValueError):
                cwd = ""
            if cwd.startswith("/"):
                config_path = posixpath.normpath(posixpath.join(cwd, config_path))
            else:
                config_unread = (
                    f"--config-file {config_path[:120]!a}: a relative path, and dockerd's working directory "
                    f"(/proc/{out['pid']}/cwd) was not read"
                )
    out["installed"] = argv is not None or binary is not None or view.stat(config_path) is not None
    runtime_dir = env.get("XDG_RUNTIME_DIR") or ""
    if runtime_dir.startswith("/") and view.stat(f"{runtime_dir.rstrip('/')}/docker.pid") is not None:
        out["rootless_pidfile"] = f"{runtime_dir.rstrip('/')}/docker.pid"
        out["installed"] = True
    out["other_daemon"] = _other_daemon(view, env)
    config: dict[str, Any] | None = None
    st = view.stat(config_path) if config_unread is None else None
    if st is None and config_unread is None:  # not there, or not reachable (/etc/docker 0700): only absent is absent
        try:
            view.read_bytes(config_path, 1)
        except FileNotFoundError:
            pass
        except OSError as exc:
            config_unread = f"{config_path}: {exc.strerror or 'cannot read'}"
        else:
            config_unread = f"{config_path}: read, but its status (stat) was not"
    if config_unread is not None:
        out["config_state"], out["config_error"] = "error", config_unread
    elif st is not None:
        out["config"] = config_path
        try:
            config = read_daemon_config(view, config_path)
        except DaemonConfigError as exc:
            out["config_state"], out["config_error"] = "error", str(exc)
        except OSError as exc:
            out["config_state"], out["config_error"] = "error", f"{config_path}: {exc.strerror or 'cannot read'}"
        else:
            out["config_state"] = "read"
            out["runtimes"], out["default_runtime"] = config["runtimes"], config["default_runtime"]
            out["features_cdi"] = config["features_cdi"]
            out["sources"]["runtimes"] = config_path
    else:
        config = {"runtimes": [], "default_runtime": None, "cdi_spec_dirs": None, "features_cdi": None,
                  "runtime_paths": {}}  # fmt: skip
        out["sources"]["runtimes"] = f"{config_path} absent"
    if flags is not None:
        out["flags_read"] = True
        out["flag_runtimes"] = sorted(set(flags["add_runtimes"]))
        out["default_runtime"] = flags["default_runtime"] or out["default_runtime"]
        start = out["started_at"] = _process_start(view, out["pid"])
        if st is not None and start is not None:
            out["config_newer_than_daemon"] = st.mtime > start
        _gpu_hooks(view, out, start)
    elif out["installed"]:
        _gpu_hooks(view, out, None)
    registered = set(STOCK_RUNTIMES) | set(out["flag_runtimes"])
    if out["config_state"] == "read":
        registered |= set(out["runtimes"])
    out["registered"] = sorted(registered)
    _runtime_binaries(view, out, config if out["config_state"] == "read" else None, flags)
    why = []
    if out["config_state"] == "error":
        why.append(f"the config file was not read ({out['config_error']})")
    if not out["flags_read"]:
        why.append(f"dockerd's flags were not read ({out['flags_reason']})")
    if out["config_newer_than_daemon"]:
        why.append(f"{config_path} changed after dockerd started (a restart or reload reads it; not visible here)")
    elif out["flags_read"] and out["config_state"] == "read" and out["config_newer_than_daemon"] is None:
        why.append(
            f"dockerd's start (/proc/{out['pid']}/stat) was not read: a change to {config_path} since is not seen"
        )
    if out["other_daemon"]:
        why.append(f"docker talks to another daemon than this one ({out['other_daemon']})")
    if out["rootless_pidfile"]:
        why.append(f"a rootless dockerd also runs ({out['rootless_pidfile']}); which daemon docker uses is not read")
    out["runtimes_complete"] = not why
    if why:
        out["runtimes_reason"] = "; ".join(why)
    _cdi(view, out, config if out["config_state"] != "error" else None, flags)
    if not out["installed"]:
        out["error"] = f"no Docker daemon found ({PIDFILES[0]}, {DEFAULT_CONFIG}, dockerd in {', '.join(BIN_DIRS)})"
    return out


#: a runtime binary path longer than this is not kept (nor looked for)
PATH_LIMIT = 4096


def _runtime_binaries(
    view: FileView, out: dict[str, Any], config: Mapping[str, Any] | None, flags: Mapping[str, Any] | None
) -> None:
    """`runtime_paths` (the binary each configured runtime names: daemon.json's runtimes.NAME.path or a runc shim
    runtimeType's options.BinaryName (_runtime_binary), an --add-runtime NAME=PATH flag's) and
    `runtime_binary_missing` (those whose path is absolute and not on the host). dockerd makes a runtime's path the
    containerd runc shim's BinaryName and never looks for it without runtimeArgs (moby daemon/runtime_unix.go
    setupRuntimes, defaultV2ShimConfig; only a wrapped runtime's PreflightCheck runs exec.LookPath), so the shim's exec
    of a binary that is not there fails the container as it is created. A name without a slash is looked up on the
    shim's own PATH, which is not read: only an absolute path is judged here."""
    paths: dict[str, str] = {}
    for source in (config, flags):
        found = (source or {}).get("runtime_paths" if source is config else "add_runtime_paths")
        for name, binary in (found or {}).items() if isinstance(found, dict) else ():
            if isinstance(binary, str) and 0 < len(binary) <= PATH_LIMIT and binary.isprintable():
                paths[str(name)] = binary
    out["runtime_paths"] = dict(sorted(paths.items()))
    out["runtime_binary_missing"] = {
        name: binary for name, binary in out["runtime_paths"].items()
        if binary.startswith("/") and view.stat(binary) is None
    }  # fmt: skip


class DockerDaemonProbe(Probe):
    name: ClassVar[str] = "docker_daemon"
    timeout_s: ClassVar[float] = 2.0
    sections: ClassVar[tuple[str, ...]] = ("docker_daemon",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        if not callable(getattr(ctx.view, "image_facts", None)):
            return ProbeResult({}, "skipped", IMAGE_ONLY[self.name])
        # the host's daemon, whatever the view: the image's container is started by the host
        found = probe_docker_daemon(HostView(str(ctx.root)), ctx.host_environ)
        if found.get("config_error"):
            return ProbeResult({"docker_daemon": found}, "partial", str(found["config_error"]))
        if found.get("error"):
            return ProbeResult({"docker_daemon": found}, "skipped", str(found["error"]))
        return ProbeResult({"docker_daemon": found})
