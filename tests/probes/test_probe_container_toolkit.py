"""The container toolkit probe (stackcheck/probes/container_toolkit.py) over host trees built here: config.toml's
runtime mode, libnvidia-container's version from its SONAME link, the toolkit's binaries; only under --image."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from stackcheck.probes.container_toolkit import ContainerToolkitProbe, config_mode, probe_container_toolkit
from stackcheck.probes.interface import ProbeContext
from stackcheck.readers.fsview import HostView

# the shape nvidia-ctk writes (tables per line, `key = "value"`), written here
CONFIG = """\
disable-require = false

[nvidia-container-cli]
environment = []
ldconfig = "@/sbin/ldconfig.real"

[nvidia-container-runtime]
#mode = "cdi"
log-level = "info"
mode = "{mode}"
runtimes = ["runc", "crun"]

[nvidia-container-runtime.modes.cdi]
default-kind = "nvidia.com/gpu"
"""


def host(
    tmp_path: Path,
    mode: str | None = "legacy",
    lib: str | None = "1.17.8",
    binaries: tuple[str, ...] = ("nvidia-container-cli", "nvidia-ctk", "nvidia-container-runtime"),
    config: str | None = None,
) -> Path:
    root = tmp_path / "host"
    etc = root / "etc/nvidia-container-runtime"
    if config is not None or mode is not None:
        etc.mkdir(parents=True)
        (etc / "config.toml").write_text(config if config is not None else CONFIG.format(mode=mode))
    libdir = root / "usr/lib/x86_64-linux-gnu"
    libdir.mkdir(parents=True)
    if lib is not None:
        (libdir / f"libnvidia-container.so.{lib}").write_bytes(b"\x7fELF")
        os.symlink(f"libnvidia-container.so.{lib}", libdir / "libnvidia-container.so.1")
        (libdir / f"libnvidia-container-go.so.{lib}").write_bytes(b"\x7fELF")
        os.symlink(f"libnvidia-container-go.so.{lib}", libdir / "libnvidia-container-go.so.1")
    bindir = root / "usr/bin"
    bindir.mkdir(parents=True)
    for name in binaries:
        (bindir / name).write_bytes(b"\x7fELF")
    return root


def read(root: Path) -> dict[str, Any]:
    return probe_container_toolkit(HostView(str(root)))


def test_legacy_mode_and_library_version(tmp_path: Path) -> None:
    got = read(host(tmp_path))
    assert got["mode"] == "legacy" and got["mode_source"] == "config"
    assert got["config"] == "/etc/nvidia-container-runtime/config.toml"
    assert got["libnvidia_container"] == "1.17.8"
    assert got["libnvidia_container_files"] == ["/usr/lib/x86_64-linux-gnu/libnvidia-container.so.1.17.8"]
    assert got["binaries"] == ["nvidia-container-cli", "nvidia-container-runtime", "nvidia-ctk"]
    assert got["tegra"] is False and got["other_installs"] == [] and "error" not in got


def test_no_mode_key_is_the_default_auto(tmp_path: Path) -> None:
    got = read(host(tmp_path, config="[nvidia-container-runtime]\nlog-level = 'info'\n"))
    assert (got["mode"], got["mode_source"]) == ("auto", "default")
    got = read(host(tmp_path / "b", mode=None))  # no config file at all, the runtime installed
    assert (got["mode"], got["mode_source"], got["config"]) == ("auto", "default", None)


def test_no_toolkit_is_an_error_and_no_mode(tmp_path: Path) -> None:
    got = read(host(tmp_path, mode=None, lib=None, binaries=()))
    assert got["mode"] is None and "no NVIDIA container toolkit" in got["error"]


def test_only_the_library_without_a_runtime_leaves_the_mode_unknown(tmp_path: Path) -> None:
    got = read(host(tmp_path, mode=None, binaries=("nvidia-container-cli",)))
    assert got["mode"] is None and got["libnvidia_container"] == "1.17.8" and "error" not in got


@pytest.mark.parametrize(
    "text",
    [
        "[nvidia-container-runtime]\nmode = legacy\n",  # not a TOML string
        "[nvidia-container-runtime\nmode = 'cdi'\n",  # a broken header
        "nvidia-container-runtime.mode = 'cdi'\n",  # a dotted key this reader does not follow
    ],
)
def test_a_mode_not_read_is_unknown_with_the_place(tmp_path: Path, text: str) -> None:
    got = read(host(tmp_path, config=text))
    assert got["mode"] is None and got["mode_error"].startswith("/etc/nvidia-container-runtime/config.toml: line ")


def test_mode_of_other_tables_and_comments_is_ignored() -> None:
    assert config_mode('[nvidia-container-cli]\nmode = "x"\n[nvidia-container-runtime]\n# mode = "cdi"\n') is None
    assert config_mode("[ nvidia-container-runtime ]\nmode = 'jit-cdi'  # set by hand\n") == "jit-cdi"
    assert config_mode(CONFIG.format(mode="cdi")) == "cdi"


def test_a_hostile_mode_is_not_echoed(tmp_path: Path) -> None:
    got = read(host(tmp_path, mode="\x1b[2Jcdi"))
    assert got["mode"] == "?"
    assert "\x1b" not in json.dumps(got)


def test_two_library_versions_are_not_one(tmp_path: Path) -> None:
    root = host(tmp_path)
    other = root / "usr/lib64"
    other.mkdir()
    (other / "libnvidia-container.so.1.8.1").write_bytes(b"\x7fELF")
    os.symlink("libnvidia-container.so.1.8.1", other / "libnvidia-container.so.1")
    got = read(root)
    assert got["libnvidia_container"] is None and len(got["libnvidia_container_files"]) == 2


def test_tegra_and_the_gpu_operator_toolkit_are_noted(tmp_path: Path) -> None:
    root = host(tmp_path)
    (root / "etc/nv_tegra_release").write_text("# R36\n")
    (root / "usr/local/nvidia/toolkit").mkdir(parents=True)
    got = read(root)
    assert got["tegra"] is True and got["other_installs"] == ["/usr/local/nvidia/toolkit"]


class _ImageView(HostView):
    """Stands in for an image (the probe runs only where the view has image facts)."""

    def image_facts(self) -> dict[str, Any]:
        return {}


def test_runs_only_for_an_image_and_reads_the_host(tmp_path: Path) -> None:
    root = host(tmp_path)
    image = tmp_path / "image"
    image.mkdir()
    skipped = ContainerToolkitProbe().run(ProbeContext(root=str(root)))
    assert skipped.status == "skipped" and skipped.facts == {}
    ran = ContainerToolkitProbe().run(ProbeContext(root=str(root), view=_ImageView(str(image))))
    assert ran.status == "ok" and ran.facts["container_toolkit"]["mode"] == "legacy"


def test_facts_pass_the_report_schema(tmp_path: Path) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema_dir = Path(__file__).resolve().parents[2] / "schemas"
    report = json.loads((schema_dir / "report.schema.json").read_text())
    sub = report["$defs"]["facts"]["properties"]["container_toolkit"]
    for got in (read(host(tmp_path)), read(host(tmp_path / "b", mode=None, lib=None, binaries=()))):
        jsonschema.validate(got, sub)


def test_registered_as_a_host_probe() -> None:
    from stackcheck.probes import DEFAULT_PROBES, HOST_PROBES, PROBES

    assert PROBES["container_toolkit"] is ContainerToolkitProbe
    assert "container_toolkit" in DEFAULT_PROBES and "container_toolkit" in HOST_PROBES


# -- irel4: the file is read whole or not at all; the keys the hook reads beside `mode`; the files the env names --


def test_a_mode_past_the_read_limit_is_unknown_not_the_default(tmp_path: Path) -> None:
    from stackcheck.probes.container_toolkit import CONFIG_LIMIT

    padding = "# " + "x" * 78 + "\n"
    text = "[nvidia-container-runtime]\n" + padding * (CONFIG_LIMIT // len(padding) + 1) + 'mode = "cdi"\n'
    got = read(host(tmp_path, config=text))  # (the runtime is installed: a part read would say `auto`, default)
    assert got["mode"] is None and got["mode_source"] is None and got["disable_require"] is None
    assert "larger than" in got["mode_error"] and got["mode_error"].startswith("/etc/nvidia-container-runtime/")


def test_a_config_not_utf8_is_unknown(tmp_path: Path) -> None:
    root = host(tmp_path, config="")
    (root / "etc/nvidia-container-runtime/config.toml").write_bytes(
        b'# r\xe9glages\n[nvidia-container-runtime]\nmode = "legacy"\n'
    )
    got = read(root)
    assert got["mode"] is None and "not UTF-8" in got["mode_error"]


def test_lines_end_where_toml_ends_them() -> None:
    # a line separator or a form feed inside a comment is comment text to TOML, not a new `mode` line
    for sep in ("\u2028", "\x0c", "\x1c", "\x85"):
        assert config_mode(f'[nvidia-container-runtime]\n# was{sep}mode = "cdi"\n') is None
    assert config_mode('[nvidia-container-runtime]\r\nmode = "cdi"\r\n') == "cdi"


@pytest.mark.parametrize(
    "text",
    [
        'nvidia-container-runtime = { mode = "cdi" }\n',  # an inline table
        '[nvidia-container-runtime]\nlog-level = """\nx"""\nmode = "cdi"\n',  # a multi-line string
        "disable-require = yes\n",  # not a TOML boolean
    ],
)
def test_shapes_not_read_are_unknown(tmp_path: Path, text: str) -> None:
    got = read(host(tmp_path, config=text))
    assert got["mode"] is None and got["mode_error"].startswith("/etc/nvidia-container-runtime/config.toml: line ")


def test_disable_require_is_read_at_the_top_level_only(tmp_path: Path) -> None:
    from stackcheck.probes.container_toolkit import config_values

    assert config_values('disable-require = true\n[nvidia-container-runtime]\nmode = "legacy"\n') == ("legacy", True)
    assert config_values("[nvidia-container-cli]\ndisable-require = true\n") == (None, False)
    got = read(
        host(tmp_path, config=CONFIG.replace("disable-require = false", "disable-require = true").format(mode="legacy"))
    )
    assert got["disable_require"] is True and got["mode"] == "legacy"
    assert read(host(tmp_path / "b"))["disable_require"] is False
    assert read(host(tmp_path / "c", mode=None))["disable_require"] is False  # no file: the default


def test_config_files_the_environment_names(tmp_path: Path) -> None:
    root = host(tmp_path)
    user = root / "home/u/.config/nvidia-container-runtime"
    user.mkdir(parents=True)
    (user / "config.toml").write_text(CONFIG.format(mode="legacy"))
    env = {"XDG_CONFIG_HOME": "/home/u/.config"}
    same = probe_container_toolkit(HostView(str(root)), env)
    assert same["mode"] == "legacy" and same["config_overrides"] == [
        "/home/u/.config/nvidia-container-runtime/config.toml"
    ]
    (user / "config.toml").write_text(CONFIG.format(mode="cdi"))
    differ = probe_container_toolkit(HostView(str(root)), env)
    assert differ["mode"] is None and "XDG_CONFIG_HOME" in differ["mode_error"] and "mode cdi" in differ["mode_error"]
    direct = probe_container_toolkit(
        HostView(str(root)), {"NVIDIA_CTK_CONFIG_FILE_PATH": "/home/u/.config/nvidia-container-runtime/config.toml"}
    )
    assert direct["mode"] is None
    # a variable naming no file, or /etc's own, changes nothing
    assert probe_container_toolkit(HostView(str(root)), {"XDG_CONFIG_HOME": "/nowhere"})["mode"] == "legacy"
    assert probe_container_toolkit(HostView(str(root)), {"XDG_CONFIG_HOME": "/etc/"})["config_overrides"] == []
