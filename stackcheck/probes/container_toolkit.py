"""Container toolkit probe: which NVIDIA container toolkit starts containers on the host, read from files only.

An image's NVIDIA_REQUIRE_* is checked when its container starts, by whichever part of the toolkit runs there
(stackcheck/image/require.py, components.json driver.container_brands): nvidia-container-cli (libnvidia-container)
in `legacy` mode, nvidia-container-toolkit's own check in `csv` mode, none in `cdi` / `jit-cdi` mode of the
releases read. This probe reads, on the host (whatever the view: an image runs on the host's toolkit), without a
subprocess and without running any binary:

- the runtime's mode: `mode` of the `[nvidia-container-runtime]` table of /etc/nvidia-container-runtime/config.toml
  (`auto` when the file or the key is absent: the toolkit's default); `mode_source` says which;
- libnvidia-container's version: the file name libnvidia-container.so.1 links to (libnvidia-container.so.1.X.Y) in
  the library directories the packages install to;
- which of nvidia-container-cli, nvidia-container-runtime, nvidia-container-runtime-hook and nvidia-ctk exist;
- `tegra`: /etc/nv_tegra_release exists (`auto` picks `csv` on a Tegra board);
- `other_installs`: a second toolkit the GPU operator installs under /usr/local/nvidia/toolkit (its own config,
  not read here).

It runs only when an image is audited (`audit --image`): only then is NVIDIA_REQUIRE_* judged. Absent section or
`mode` null: the toolkit is not known and the check judges with every toolkit's words.

Facts: `container_toolkit: {"mode": str|null, "mode_source": "config"|"default"|null, "config": str|null,
"libnvidia_container": "1.17.8"|null, "libnvidia_container_files": [path...], "binaries": [name...],
"tegra": bool, "other_installs": [path...], "error": str (no toolkit found)}`.
"""

from __future__ import annotations

from stackcheck.lazy_re import lazy as _lazy
from stackcheck.lean_typing import TYPE_CHECKING
from stackcheck.probes.interface import Probe, ProbeContext, ProbeResult
from stackcheck.readers.fsview import FileView, HostView

if TYPE_CHECKING:
    from typing import Any, ClassVar

CONFIG = "/etc/nvidia-container-runtime/config.toml"
CONFIG_LIMIT = 256 * 1024
RUNTIME_TABLE = "nvidia-container-runtime"
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
_TABLE_LINE = _lazy(r"""^\[\s*("?)([A-Za-z0-9_.-]+)\1\s*\]\s*(?:#.*)?$""")


class ConfigError(ValueError):
    """The config file cannot be read the way the toolkit would (a malformed line where `mode` is looked for)."""


def config_mode(text: str) -> str | None:
    """`mode` of the [nvidia-container-runtime] table of a config.toml text; None when the table has no such key.

    A small reader for the shape the toolkit writes (a table header per line, `key = "value"`): a mode line it
    cannot read raises ConfigError (the caller reports the mode as not known, never a guess)."""
    table = ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("["):
            if line.startswith("[["):
                table = "[["  # an array of tables: no `mode` of the runtime's table in it
                continue
            header = _TABLE_LINE.match(line)
            if header is None:
                raise ConfigError(f"line {number}: a table header not read")
            table = header.group(2)
            continue
        if table == RUNTIME_TABLE and line.split("=", 1)[0].strip().strip("\"'") == "mode":
            found = _KEY_LINE.match(line)
            if found is None:
                raise ConfigError(f"line {number}: a `mode` value not read")
            return found.group(1) if found.group(1) is not None else found.group(2)
        if table == "" and line.split("=", 1)[0].strip() == f"{RUNTIME_TABLE}.mode":
            raise ConfigError(f"line {number}: a dotted `mode` key not read")
    return None


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


def probe_container_toolkit(view: FileView) -> dict[str, Any]:
    """The `container_toolkit` facts section of the box `view` shows (see the module docstring)."""
    out: dict[str, Any] = {
        "mode": None,
        "mode_source": None,
        "config": None,
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
    if st is not None:
        out["config"] = CONFIG
        try:
            text = view.read_bytes(CONFIG, CONFIG_LIMIT).decode("utf-8", "replace")
            mode = config_mode(text)
        except ConfigError as exc:
            out["mode_error"] = f"{CONFIG}: {exc}"
            return out
        except OSError as exc:
            out["mode_error"] = f"{CONFIG}: cannot read: {exc.strerror or exc}"
            return out
        if mode is not None:
            out["mode"] = mode if _MODE_WORD.match(mode) else "?"
            out["mode_source"] = "config"
            return out
    if "nvidia-container-runtime" in out["binaries"] or "nvidia-container-runtime-hook" in out["binaries"]:
        out["mode"], out["mode_source"] = "auto", "default"  # the toolkit's default when the config says none
    elif st is None and not out["binaries"] and not out["libnvidia_container_files"]:
        out["error"] = f"no NVIDIA container toolkit found ({CONFIG}, {LIBRARY}, {', '.join(BINARIES)})"
    return out


class ContainerToolkitProbe(Probe):
    name: ClassVar[str] = "container_toolkit"
    timeout_s: ClassVar[float] = 2.0
    sections: ClassVar[tuple[str, ...]] = ("container_toolkit",)

    def run(self, ctx: ProbeContext) -> ProbeResult:
        if not callable(getattr(ctx.view, "image_facts", None)):
            return ProbeResult({}, "skipped", "only an image audit (--image) judges NVIDIA_REQUIRE_*")
        # the host's toolkit, whatever the view: the image's container is started by the host
        found = probe_container_toolkit(HostView(str(ctx.root)))
        if found.get("error"):
            return ProbeResult({"container_toolkit": found}, "skipped", str(found["error"]))
        return ProbeResult({"container_toolkit": found})
