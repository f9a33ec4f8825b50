"""The Docker daemon probe against a hostile host (adversarial pass iadv2): files that are too deep, too many or too
large, paths that resolve elsewhere than dockerd's, keys that Go reads differently from Python. Each attack here
failed before its fix: a probe crash (the whole daemon read lost, a provable refusal turned unknown), an audit past
the probe's time budget, or a verdict read from another file than dockerd's."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from probes.test_probe_docker_daemon import (
    DOCKERD,
    PID,
    WITH_NVIDIA,
    WITHOUT,
    _ImageView,
    host,
    probe,
    rule,
    run_check,
    with_hooks,
)

from stackcheck.probes.docker_daemon import DockerDaemonProbe
from stackcheck.probes.interface import ProbeContext
from stackcheck.readers.fsview import HostView


def test_a_deeply_nested_json_cdi_spec_does_not_take_the_daemon_read_down(tmp_path: Path) -> None:
    """Attack: /etc/cdi/x.json of 200000 '[' (RecursionError is not a ValueError). Before: the probe raised, the
    docker_daemon section was lost and an nvidia runtime provably absent became unknown (the gate let it start)."""
    root = host(tmp_path, WITHOUT, DOCKERD, specs={"/etc/cdi/x.json": "[" * 200_000})
    image = tmp_path / "image"
    image.mkdir()
    result = DockerDaemonProbe().run(ProbeContext(root=root, env={}, view=_ImageView(str(image))))
    assert result.status == "ok", result.reason
    facts: dict[str, Any] = result.facts["docker_daemon"]
    assert facts["cdi_unread"] == ["/etc/cdi/x.json: nested too deep, not read"] and facts["cdi_complete"] is False
    assert run_check(facts, "nvidia-runtime")["status"] == "failed"
    assert run_check(facts, "cdi-device")["status"] == "unknown"


def test_spec_files_are_read_within_a_total_budget(tmp_path: Path) -> None:
    """Attack: /etc/cdi holding 256 YAML files of 4 MB each without a kind (1 GB). Before: 9.4 s (7 s sparse) on
    the 2-core box, past the probe's 2 s timeout (the section lost, the read going on in the background). After: the
    read stops at the budget, says so, and CDI is unknown rather than 'none'."""
    root = host(tmp_path, WITHOUT, DOCKERD)
    (root / "etc/cdi").mkdir(parents=True)
    for k in range(256):
        with (root / f"etc/cdi/{k:03}.yaml").open("wb") as f:
            f.truncate(4 * 1024 * 1024)  # sparse: written in no time, read as 4 MB
    started = time.monotonic()
    facts = probe(root)
    assert time.monotonic() - started < 1.5
    assert any("past the read budget" in u for u in facts["cdi_unread"]) and facts["cdi_complete"] is False
    assert run_check(facts, "cdi-device")["status"] == "unknown"
    assert run_check(facts, "nvidia-runtime")["status"] == "failed"


def test_a_relative_config_file_is_dockerds_working_directorys(tmp_path: Path) -> None:
    """Attack: dockerd started with `--config-file daemon.json` from /srv (its /srv/daemon.json has no nvidia), and a
    daemon.json with nvidia wherever stackcheck resolves a relative path (the root's /, or on the host the auditor's
    own working directory). Before: that other file was read and runtime nvidia said registered (a false pass).
    After: the path is taken from dockerd's /proc/PID/cwd; where that is not readable, the config is unread."""
    root = host(tmp_path, WITH_NVIDIA, [*DOCKERD, "--config-file", "daemon.json"])
    (root / "daemon.json").write_text(json.dumps(WITH_NVIDIA))
    (root / "srv").mkdir()
    (root / "srv/daemon.json").write_text(json.dumps(WITHOUT))
    for written in ("daemon.json", "srv/daemon.json"):  # both older than dockerd
        os.utime(root / written, (time.time() - 3600, time.time() - 3600))
    (root / f"proc/{PID}/cwd").symlink_to("/srv")
    facts = probe(root)
    assert facts["config"] == "/srv/daemon.json" and facts["runtimes"] == ["runsc"]
    assert run_check(facts, "nvidia-runtime")["status"] == "failed"
    (root / f"proc/{PID}/cwd").unlink()  # not readable (another user's dockerd)
    facts = probe(root)
    assert facts["config_state"] == "error" and "relative" in facts["config_error"]
    assert run_check(facts, "nvidia-runtime")["status"] == "unknown"


def test_a_relative_cdi_spec_dir_is_unread_not_empty(tmp_path: Path) -> None:
    """Attack: daemon.json `cdi-spec-dirs: ["cdi"]` (relative: dockerd reads it from its working directory). Before:
    skipped without a word, the directories called complete and cdi-device failed for a spec that may be there."""
    facts = probe(host(tmp_path, {**WITHOUT, "cdi-spec-dirs": ["cdi"]}, DOCKERD))
    assert facts["cdi_complete"] is False and facts["cdi_unread"] == ["cdi: a relative spec directory, not read"]
    assert run_check(facts, "cdi-device")["status"] == "unknown"


def test_a_repeated_runtimes_key_is_read_as_dockerd_reads_it(tmp_path: Path) -> None:
    """Attack: daemon.json with `runtimes` twice, nvidia in the first. Go's encoding/json decodes the second object
    into the map the first made (dockerd registers both); Python's json kept the last only. Before: runtime nvidia
    'not registered' and the gate refused a launch dockerd serves."""
    text = '{"runtimes": {"nvidia": {"path": "nvidia-container-runtime"}}, "runtimes": {"runsc": {"path": "runsc"}}}'
    root = host(tmp_path, text, DOCKERD)
    facts = probe(root)
    assert facts["runtimes"] == ["nvidia", "runsc"]
    assert run_check(facts, "nvidia-runtime")["status"] == "ok"
    (root / "etc/docker/daemon.json").write_text('{"default-runtime": "nvidia", "default-runtime": "runc"}')
    assert probe(root)["default_runtime"] == "runc"  # a string: the last one, in Go as here


def test_a_dockerd_command_line_past_the_read_limit_is_not_read(tmp_path: Path) -> None:
    """Attack: dockerd started with 300 kB of --label flags and then `--config-file /srv/docker.json` (no nvidia),
    /etc/docker/daemon.json naming nvidia. Before: the command line was cut at 256 KiB, the --config-file lost, the
    default file read and runtime nvidia said ok (a false pass). After: the flags are not read, nvidia unknown."""
    labels = [f"--label=team{k}={'x' * 90}" for k in range(3000)]
    root = host(tmp_path, WITH_NVIDIA, [*DOCKERD, *labels, "--config-file", "/srv/docker.json"])
    (root / "srv").mkdir()
    (root / "srv/docker.json").write_text(json.dumps(WITHOUT))
    facts = probe(root)
    assert facts["flags_read"] is False and "longer than" in facts["flags_reason"]
    assert run_check(facts, "nvidia-runtime")["status"] == "unknown"


def test_dockerds_environ_without_path_or_past_the_limit(tmp_path: Path) -> None:
    """Attack 1: dockerd started with an empty environment (`env -i dockerd`): its /proc/PID/environ has no PATH, so
    Go's LookPath finds no hook, while nvidia-container-runtime-hook sits in /usr/bin. Before: systemd's service PATH
    was assumed and `docker run --gpus` said ok (a false pass). Attack 2: an environ longer than the read limit with
    PATH cut short: it is not read (systemd's default then, as for an unreadable environ)."""
    root = with_hooks(host(tmp_path, WITH_NVIDIA, DOCKERD), {"nvidia-container-runtime-hook": "/usr/bin"}, None)
    (root / f"proc/{PID}/environ").write_bytes(b"LANG=C\0NOTIFY_SOCKET=/x\0")
    facts = probe(root)
    assert facts["gpu_hooks"]["nvidia-container-runtime-hook"] is None
    assert facts["gpu_hooks_path"] == f"/proc/{PID}/environ (no PATH)"
    assert run_check(facts, "docker-gpus")["status"] == "failed"
    big = b"X=" + b"y" * (300 * 1024) + b"\0PATH=/opt/bin:/usr/bin\0"
    (root / f"proc/{PID}/environ").write_bytes(b"PATH=/opt/bin:/usr/" + big)  # a PATH cut at the limit
    facts = probe(root)
    assert facts["gpu_hooks_path"] == "systemd service default"
    assert run_check(facts, "docker-gpus")["status"] == "ok"


def test_a_daemon_json_with_a_byte_order_mark_is_read_as_dockerd_reads_it(tmp_path: Path) -> None:
    """Attack (a careless editor, not a hostile one): daemon.json saved by Notepad (UTF-8 with a BOM) or PowerShell
    (UTF-16 LE with a BOM), both taken by dockerd. Before: 'not UTF-8' / 'not JSON', so runtime nvidia was unknown
    where it is registered. Bytes that are not UTF-8 stay one-line errors."""
    text = json.dumps(WITH_NVIDIA)
    for data in (b"\xef\xbb\xbf" + text.encode(), b"\xff\xfe" + text.encode("utf-16-le")):
        root = host(tmp_path / str(len(data)), WITH_NVIDIA, DOCKERD)
        (root / "etc/docker/daemon.json").write_bytes(data)
        os.utime(root / "etc/docker/daemon.json", (time.time() - 3600, time.time() - 3600))
        facts = probe(root)
        assert facts["config_state"] == "read" and facts["runtimes"] == ["nvidia"], facts.get("config_error")
        assert run_check(facts, "nvidia-runtime")["status"] == "ok"
    root = host(tmp_path / "bad", WITH_NVIDIA, DOCKERD)
    (root / "etc/docker/daemon.json").write_bytes(b'{"runtimes": {"nv\xffidia": {}}}')
    facts = probe(root)
    assert facts["config_state"] == "error" and facts["config_error"].endswith("byte 17: not UTF-8")


def test_no_cdi_spec_directory_at_all_is_said_as_it_is(tmp_path: Path) -> None:
    """Attack: daemon.json `cdi-spec-dirs: []`, or dockerd `--cdi-spec-dir ""` (dockerd then reads no spec directory:
    moby daemon/command/daemon.go, TestCDISpecDirs). Before: the observed value said 'none in /etc/cdi, /var/run/cdi'
    (directories dockerd does not read; a spec there changes nothing), and "" was called a relative directory."""
    specs = {"/etc/cdi/nvidia.yaml": "kind: nvidia.com/gpu\n"}
    for config, argv in (({**WITHOUT, "cdi-spec-dirs": []}, DOCKERD), (WITHOUT, [*DOCKERD, "--cdi-spec-dir", ""])):
        facts = probe(host(tmp_path / str(len(argv)), config, argv, specs=specs))
        assert facts["cdi_spec_dirs"] == [] and facts["cdi_specs"] == [] and facts["cdi_complete"] is True
        check = run_check(facts, "cdi-device")
        assert check["status"] == "failed"
        assert check["reasons"][0]["observed"] == "none: dockerd reads no CDI spec directory (cdi-spec-dirs empty)"


def test_other_engines_config_files_are_read_within_the_budget(tmp_path: Path) -> None:
    """Attack: /etc/containers/containers.conf.d holding 2000 .conf files of 1 MB each. Before: 18.9 s on the 2-core
    box, each read whole for a cdi_spec_dirs key (the probe's timeout is 2 s). After: the shared read budget stops it
    and CDI is unknown, not 'none'."""
    root = host(tmp_path, WITHOUT, DOCKERD)
    confd = root / "etc/containers/containers.conf.d"
    confd.mkdir(parents=True)
    for k in range(2000):
        with (confd / f"{k:04}.conf").open("wb") as f:
            f.truncate(1024 * 1024)
    started = time.monotonic()
    facts = probe(root)
    assert time.monotonic() - started < 1.5
    assert facts["cdi_complete"] is False and "past the read budget" in facts["cdi_reason"]
    assert run_check(facts, "cdi-device")["status"] == "unknown"


def test_a_pid_file_there_but_not_read_is_not_called_absent(tmp_path: Path) -> None:
    """Attack: /var/run/docker.pid a FIFO, or a directory. Before: the reason said 'no pid file ...: no dockerd runs
    with the default pid file here', a false statement in the verdict's text (the verdict, unknown, stood)."""
    for make in (os.mkfifo, os.mkdir):
        root = host(tmp_path / make.__name__, WITHOUT, None)
        (root / "var/run").mkdir(parents=True)
        make(root / "var/run/docker.pid")
        facts = probe(root)
        assert facts["flags_read"] is False and "no pid file" not in facts["flags_reason"]
        assert facts["flags_reason"].startswith("the pid file was not read (/var/run/docker.pid: ")
        assert run_check(facts, "nvidia-runtime")["status"] == "unknown"


def test_a_hung_filesystem_does_not_hang_the_audit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Attack: /etc/docker on a filesystem that does not answer (a hung NFS mount: every read of it blocks). The
    probe runs under its 2 s timeout: the audit goes on without the section (its facts say why), and the check is
    unknown (the daemon was not read), not a pass and not a refusal."""
    from stackcheck.probes.runner import run_probes

    root = host(tmp_path, WITH_NVIDIA, DOCKERD)
    image = tmp_path / "image"
    image.mkdir()
    release = threading.Event()
    real_read = HostView.read_bytes

    def hung(self: HostView, path: str, limit: int, offset: int = 0) -> bytes:
        if path.startswith("/etc/docker"):
            release.wait(30)
        return real_read(self, path, limit, offset)

    monkeypatch.setattr(HostView, "read_bytes", hung)
    try:
        started = time.monotonic()
        facts, outcomes = run_probes(["docker_daemon"], ProbeContext(root=root, env={}, view=_ImageView(str(image))))
        assert time.monotonic() - started < 3.0
    finally:
        release.set()
    assert [(o.get("name"), o.get("status")) for o in outcomes] == [("docker_daemon", "timeout")]
    section = facts.get("docker_daemon")
    assert isinstance(section, dict) and section.get("error")
    check = run_check(section, "nvidia-runtime")
    assert check["status"] == "unknown" and [r["rule"] for r in check["reasons"]] == ["docker-daemon-not-read"]


def test_dockerds_start_not_read_leaves_a_config_runtime_unknown(tmp_path: Path) -> None:
    """Attack: `nvidia-ctk runtime configure` just run (daemon.json names nvidia, 60 s old; dockerd started 1800 s
    ago, not restarted) and /proc/PID/stat not readable (malformed, or gone). Before: with no start time the file
    was taken as the running daemon's and runtime nvidia said ok (a false pass). A runtime from dockerd's own
    --add-runtime flag (fixed when it started) stays registered."""
    root = host(tmp_path, WITH_NVIDIA, DOCKERD, config_age_s=60)
    (root / f"proc/{PID}/stat").write_text("garbage\n")
    facts = probe(root)
    assert facts["config_newer_than_daemon"] is None and facts["runtimes_complete"] is False
    check = run_check(facts, "nvidia-runtime")
    assert check["status"] == "unknown" and "when dockerd started was not read" in rule(check)["message"]
    root = host(tmp_path / "flag", WITH_NVIDIA, [*DOCKERD, "--add-runtime", "nvidia=/usr/bin/nvidia-container-runtime"])
    (root / f"proc/{PID}/stat").unlink()
    (root / "usr/bin").mkdir(parents=True, exist_ok=True)  # the flag's binary is there (igap22: else unknown)
    (root / "usr/bin/nvidia-container-runtime").write_text("#!/bin/sh\n")
    assert run_check(probe(root), "nvidia-runtime")["status"] == "ok"


def test_dockerds_start_not_read_leaves_a_gpu_hook_unknown(tmp_path: Path) -> None:
    """Attack: the NVIDIA Container Toolkit installed 60 s ago (dockerd, started 1800 s ago, looked its hooks up
    before) and /proc/PID/stat not readable. Before: the hook on dockerd's PATH said docker run --gpus ok (a false
    pass: the running daemon registered no nvidia driver)."""
    hook = {"nvidia-container-runtime-hook": "/usr/bin"}
    root = with_hooks(host(tmp_path, WITH_NVIDIA, DOCKERD), hook, "/usr/bin", age_s=60)
    (root / f"proc/{PID}/stat").unlink()
    facts = probe(root)
    assert facts["started_at"] is None and facts["gpu_hooks"]["nvidia-container-runtime-hook"] == (
        "/usr/bin/nvidia-container-runtime-hook"
    )
    check = run_check(facts, "docker-gpus")
    assert check["status"] == "unknown" and "when dockerd started was not read" in rule(check)["message"]
    # its start read (and the hook older than it): served, as before
    old = with_hooks(host(tmp_path / "old", WITH_NVIDIA, DOCKERD), hook, "/usr/bin", age_s=3600)
    facts = probe(old)
    assert isinstance(facts["started_at"], float) and run_check(facts, "docker-gpus")["status"] == "ok"


def test_a_config_file_that_cannot_be_reached_is_not_called_absent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Attack (irev50): /etc/docker not searchable by the auditing user (mode 0700: stat and open of daemon.json
    both fail with EACCES; simulated here, the tests run as root). Before: a failed stat was taken for an absent file,
    the runtimes list called complete, and runtime nvidia, which that file registers, said provably missing (a
    refusal the daemon would not make)."""
    root = host(tmp_path, WITH_NVIDIA, DOCKERD)
    real_stat, real_read = HostView.stat, HostView.read_bytes

    def stat(self: HostView, path: str, follow_symlinks: bool = True) -> Any:
        return None if path.startswith("/etc/docker/") else real_stat(self, path, follow_symlinks)

    def read(self: HostView, path: str, limit: int, offset: int = 0) -> bytes:
        if path.startswith("/etc/docker/"):
            raise PermissionError(13, "Permission denied", path)
        return real_read(self, path, limit, offset)

    monkeypatch.setattr(HostView, "stat", stat)
    monkeypatch.setattr(HostView, "read_bytes", read)
    facts = probe(root)
    assert facts["config_state"] == "error" and "Permission denied" in facts["config_error"]
    assert facts["runtimes_complete"] is False
    assert run_check(facts, "nvidia-runtime")["status"] == "unknown"


@pytest.mark.parametrize(
    ("env", "config", "other"),
    [
        ({"DOCKER_HOST": "unix:///run/user/1000/docker.sock"}, None, True),
        ({"DOCKER_HOST": "unix:///var/run/docker.sock"}, None, False),
        ({"DOCKER_CONTEXT": "rootless"}, None, True),
        ({"DOCKER_CONTEXT": "default"}, None, False),
        ({"HOME": "/home/u"}, {"currentContext": "remote"}, True),
        ({"HOME": "/home/u"}, {"auths": {}}, False),
        ({"HOME": "/home/u", "DOCKER_HOST": "unix:///var/run/docker.sock"}, {"currentContext": "remote"}, False),
    ],
)
def test_docker_talking_to_another_daemon_is_not_this_ones_answer(
    tmp_path: Path, env: dict[str, str], config: Any, other: bool
) -> None:
    """Attack (irev50): DOCKER_HOST, DOCKER_CONTEXT or the CLI config's currentContext sends `docker run` to another
    daemon (a rootless one, a remote one) than the pid file's. Before: the system daemon's runtime nvidia said ok
    (a false pass where the daemon docker uses has none)."""
    root = host(tmp_path, WITH_NVIDIA, DOCKERD)
    if config is not None:
        (root / "home/u/.docker").mkdir(parents=True)
        (root / "home/u/.docker/config.json").write_text(json.dumps(config))
    facts = probe(root, env)
    assert bool(facts["other_daemon"]) is other
    check = run_check(facts, "nvidia-runtime")
    assert check["status"] == ("unknown" if other else "ok")
    if other:
        assert "another daemon" in rule(check)["message"] and facts["runtimes_complete"] is False
