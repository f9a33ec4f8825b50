"""Container toolkit probe: which NVIDIA container toolkit starts containers on the host, read from files only.

An image's NVIDIA_REQUIRE_* is checked when its container starts, by whichever part of the toolkit runs there
(stackcheck/image/require.py, components.json driver.container_brands): nvidia-container-cli (libnvidia-container)
in `legacy` mode, nvidia-container-toolkit's own check in `csv` mode, none in `cdi` / `jit-cdi` mode of the
releases read. This probe reads, on the host (whatever the view: an image runs on the host's toolkit), without a
subprocess and without running any binary:

- the runtime's mode: `mode` of the `[nvidia-container-runtime]` table of /etc/nvidia-container-runtime/config.toml
  (`auto` when the file or the key is absent: the toolkit's default); `mode_source` says which. The file is read
  whole or not at all: larger than CONFIG_LIMIT, not UTF-8 (TOML's encoding), not a regular file or unreadable, the
  mode is null with `mode_error`, never the default guessed from a part of it. Lines end at "\n" as in TOML (a
  U+2028 or a form feed inside a comment does not start a line);
- `disable_require`: the top-level `disable-require` key of the same file (false when absent: the default), with
  which nvidia-container-runtime-hook (the legacy path) sets NVIDIA_DISABLE_REQUIRE and checks nothing
  (cmd/nvidia-container-runtime-hook/container_config.go `image.WithDisableRequire(hookConfig.DisableRequire)`,
  internal/config/image/builder.go; v1.14.0 to v1.20.0 and main d34b304 of NVIDIA/nvidia-container-toolkit); null
  where the file was not read;
- which file: the toolkit reads $NVIDIA_CTK_CONFIG_FILE_PATH (from 1.18.0), else
  $XDG_CONFIG_HOME/nvidia-container-runtime/config.toml, else /etc/nvidia-container-runtime/config.toml
  (api/config/v1/config.go GetConfigFilePath; internal/config/config.go `configOverride` before 1.18.0), and the
  hook a `-config FILE` flag first (cmd/nvidia-container-runtime-hook/hook_config.go getConfigFilePath). Those are
  the environment and arguments of the runtime the container engine starts, which no file here shows: the probe
  reads /etc's file, and where the audit's own environment sets either variable to another file that exists
  (`config_overrides`), that file is read too and a mode or disable-require that differs leaves both unknown
  (`mode_error`): which one the engine's runtime reads is not known;
- libnvidia-container's version: the file name libnvidia-container.so.1 links to (libnvidia-container.so.1.X.Y) in
  the library directories the packages install to;
- which of nvidia-container-cli, nvidia-container-runtime, nvidia-container-runtime-hook and nvidia-ctk exist;
- `tegra`: /etc/nv_tegra_release exists (`auto` picks `csv` on a Tegra board);
- `other_installs`: a second toolkit the GPU operator installs under /usr/local/nvidia/toolkit (its own config,
  not read here).

It runs only when an image is audited (`audit --image`): only then is NVIDIA_REQUIRE_* judged. Absent section or
`mode` null: the toolkit is not known and the check judges with every toolkit's words.

Facts: `container_toolkit: {"mode": str|null, "mode_source": "config"|"default"|null, "config": str|null,
"disable_require": bool|null, "config_overrides": [path...],
"libnvidia_container": "1.17.8"|null, "libnvidia_container_files": [path...], "binaries": [name...],
"tegra": bool, "other_installs": [path...], "error": str (no toolkit found)}`.
"""

from __future__ import annotations

import posixpath

from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes import IMAGE_ONLY
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.readers.fsview import FileView, HostView

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, ClassVar

CONFIG = "/etc/nvidia-container-runtime/config.toml"
CONFIG_LIMIT = 256 * 1024
#: the variables the toolkit takes its config file from (api/config/v1/config.go GetConfigFilePath, 1.18.0 on:
#: NVIDIA_CTK_CONFIG_FILE_PATH the file itself, then XDG_CONFIG_HOME the directory in place of /etc)
CONFIG_FILE_VARIABLE = "NVIDIA_CTK_CONFIG_FILE_PATH"
CONFIG_ROOT_VARIABLE = "XDG_CONFIG_HOME"
CONFIG_RELATIVE = "nvidia-container-runtime/config.toml"
RUNTIME_TABLE = "nvidia-container-runtime"
DISABLE_REQUIRE = "disable-require"
#: where the deb and rpm packages put libnvidia-container.so.1 (multiarch and lib64 layouts), and /usr/local/lib
LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
)
LIBRARY = "libnvidia-container.so.1"
BIN_DIRS = ("/usr/bin", "/usr/local/bin", "/usr/sbin", "/bin")
BINARIES = ("nvidia-container-cli", "nvidia-container-runtime", "nvidia-container-runtime-hook", "nvidia-ctk")
TEGRA_RELEASE = "/etc/nv_tegra_release"
OPERATOR_TOOLKIT = "/usr/local/nvidia/toolkit"
_LIB_VERSION = _lazy(r"^libnvidia-container\.so\.(1\.[0-9]{1,4}\.[0-9]{1,4})$")
_MODE_WORD = _lazy(r"^[a-z][a-z0-9-]{0,31}$")
_KEY_LINE = _lazy(r"""^(?:mode|"mode"|'mode')\s*=\s*(?:"([^"\\\n]*)"|'([^'\n]*)')\s*(?:#.*)?$""")
_BOOL_LINE = _lazy(r"""^(?:disable-require|"disable-require"|'disable-require')\s*=\s*(true|false)\s*(?:#.*)?$""")
_TABLE_LINE = _lazy(r"""^\[\s*("?)([A-Za-z0-9_.-]+)\1\s*\]\s*(?:#.*)?$""")


class ConfigError(ValueError):
    """The config file cannot be read the way the toolkit would (a malformed line where `mode` is looked for)."""


def config_values(text: str) -> tuple[str | None, bool]:
    """(`mode` of the [nvidia-container-runtime] table or None, the top-level `disable-require`) of a config.toml
    text. A small reader for the shape the toolkit writes (a table header per line, `key = "value"`): a line it
    cannot read where these keys are looked for raises ConfigError (the caller reports them as not known, never a
    guess). Lines end at "\\n" only, as TOML's do (str.splitlines would also split at U+2028, a form feed, ...,
    which TOML keeps inside a comment)."""
    table, mode, disable = "", None, False
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.removesuffix("\r").strip(" \t")
        if not line or line.startswith("#"):
            continue
        if '"""' in line or "'''" in line:
            raise ConfigError(f"line {number}: a multi-line string not read")
        if line.startswith("["):
            if line.startswith("[["):
                table = "[["  # an array of tables: no `mode` of the runtime's table in it
                continue
            header = _TABLE_LINE.match(line)
            if header is None:
                raise ConfigError(f"line {number}: a table header not read")
            table = header.group(2)
            continue
        key = line.split("=", 1)[0].strip(" \t")
        bare = key.strip("\"'")
        if table == RUNTIME_TABLE and bare == "mode":
            found = _KEY_LINE.match(line)
            if found is None:
                raise ConfigError(f"line {number}: a `mode` value not read")
            mode = found.group(1) if found.group(1) is not None else found.group(2)
        elif table == "" and bare == DISABLE_REQUIRE:
            value = _BOOL_LINE.match(line)
            if value is None:
                raise ConfigError(f"line {number}: a `{DISABLE_REQUIRE}` value not read")
            disable = value.group(1) == "true"
        elif table == "" and (bare == RUNTIME_TABLE or bare.startswith(f"{RUNTIME_TABLE}.")):
            raise ConfigError(f"line {number}: a dotted or inline `{RUNTIME_TABLE}` key not read")
    return mode, disable


def config_mode(text: str) -> str | None:
    """`mode` of the [nvidia-container-runtime] table of a config.toml text; None when the table has no such key
    (ConfigError where it cannot be read: see config_values)."""
    return config_values(text)[0]


def read_config(view: FileView, path: str) -> tuple[str | None, bool]:
    """config_values of the file at `path`, read whole: a file larger than CONFIG_LIMIT or not UTF-8 raises
    ConfigError, a file that cannot be read OSError (NotRegularFile for a FIFO or a device)."""
    data = view.read_bytes(path, CONFIG_LIMIT + 1)
    if len(data) > CONFIG_LIMIT:
        raise ConfigError(f"larger than {CONFIG_LIMIT} bytes, not read (a `mode` past the limit would be missed)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"byte {exc.start}: not UTF-8, not read") from None
    return config_values(text)


def config_overrides(env: Mapping[str, str] | None) -> list[str]:
    """The config files other than CONFIG that the toolkit would read where its runtime's environment is `env`
    (NVIDIA_CTK_CONFIG_FILE_PATH, XDG_CONFIG_HOME), absolute paths only."""
    out: list[str] = []
    env = env or {}
    direct = env.get(CONFIG_FILE_VARIABLE) or ""
    root = env.get(CONFIG_ROOT_VARIABLE) or ""
    for path in (direct, f"{root.rstrip('/')}/{CONFIG_RELATIVE}" if root else ""):
        if path.startswith("/") and posixpath.normpath(path) != CONFIG and path not in out:
            out.append(path)
    return out


def _library(view: FileView) -> tuple[str | None, list[str]]:
    """libnvidia-container's version from the name its SONAME link points to; None when absent or not one name."""
    versions: set[str] = set()
    files: list[str] = []
    seen: set[str] = set()
    for directory in LIB_DIRS:
        path = f"{directory}/{LIBRARY}"
        st = view.stat(path, follow_symlinks=False)
        if st is None:
            continue
        try:
            real = view.realpath(path)
        except OSError:
            continue
        if real in seen:  # /usr/lib64 a link to /usr/lib, and the like
            continue
        seen.add(real)
        files.append(real)
        name = real.rsplit("/", 1)[-1]
        found = _LIB_VERSION.match(name)
        versions.add(found.group(1) if found else "?")
    if len(versions) != 1 or "?" in versions:
        return None, files
    return versions.pop(), files


def probe_container_toolkit(view: FileView, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The `container_toolkit` facts section of the box `view` shows (see the module docstring); `env`: the
    environment the audit runs in, whose NVIDIA_CTK_CONFIG_FILE_PATH / XDG_CONFIG_HOME name other config files."""
    out: dict[str, Any] = {
        "mode": None,
        "mode_source": None,
        "config": None,
        "disable_require": None,
        "config_overrides": [],
        "libnvidia_container": None,
        "libnvidia_container_files": [],
        "binaries": [],
        "tegra": view.stat(TEGRA_RELEASE) is not None,
        "other_installs": [OPERATOR_TOOLKIT] if view.stat(OPERATOR_TOOLKIT) is not None else [],
    }
    out["libnvidia_container"], out["libnvidia_container_files"] = _library(view)
    out["binaries"] = sorted(
        {name for name in BINARIES for d in BIN_DIRS if (st := view.stat(f"{d}/{name}")) and st.kind == "file"}
    )
    st = view.stat(CONFIG)
    out["config_overrides"] = [p for p in config_overrides(env) if view.stat(p) is not None]
    read: dict[str, tuple[str | None, bool]] = {}
    for path in ([CONFIG] if st is not None else []) + out["config_overrides"]:
        try:
            read[path] = read_config(view, path)
        except ConfigError as exc:
            out["mode_error"] = f"{path}: {exc}"
        except OSError as exc:
            out["mode_error"] = f"{path}: cannot read: {exc.strerror or exc}"
        if "mode_error" in out:
            return out
    if st is not None:
        out["config"] = CONFIG
    if len(set(read.values())) > 1:
        said = "; ".join(
            f"{p}: mode {m or 'not set'}, {DISABLE_REQUIRE} {str(d).lower()}" for p, (m, d) in read.items()
        )
        out["mode_error"] = (
            f"the config files differ ({said}); which one the container engine's runtime reads depends on its "
            f"environment ({CONFIG_FILE_VARIABLE}, {CONFIG_ROOT_VARIABLE}), which is not read"
        )
        return out
    mode, out["disable_require"] = next(iter(read.values()), (None, False))
    if mode is not None:
        out["mode"] = mode if _MODE_WORD.match(mode) else "?"
        out["mode_source"] = "config"
        return out
    if "nvidia-container-runtime" in out["binaries"] or "nvidia-container-runtime-hook" in out["binaries"]:
        out["mode"], out["mode_source"] = "auto", "default"  # the toolkit's default when the config says none
    elif st is None and not out["binaries"] and not out["libnvidia_container_files"]:
        out["disable_require"] = None
        out["error"] = f"no NVIDIA container toolkit found ({CONFIG}, {LIBRARY}, {', '.join(BINARIES)})"
    return out


class ContainerToolkitProbe(Probe):
    name: ClassVar[str] = "container_toolkit"
    timeout_s: ClassVar[float] = 2.0
    sections: ClassVar[tuple[str, ...]] = ("container_toolkit",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        if not callable(getattr(ctx.view, "image_facts", None)):
            return ProbeResult({}, "skipped", IMAGE_ONLY[self.name])
        # the host's toolkit, whatever the view: the image's container is started by the host
        found = probe_container_toolkit(HostView(str(ctx.root)), ctx.host_environ)
        if found.get("error"):
            return ProbeResult({"container_toolkit": found}, "skipped", str(found["error"]))
        return ProbeResult({"container_toolkit": found})
