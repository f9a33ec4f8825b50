"""The Docker daemon probe (stackcheck/probes/docker_daemon.py) over host trees built here (daemon.json variants, a
fake /proc with a dockerd, CDI specs in YAML and JSON), and check container-engine-gpu-path judged from its facts
and from hand-written ones: the nvidia runtime or a CDI spec of kind nvidia.com/gpu provably absent fails, not
provable is unknown, a box that does not say how its container starts is unchanged."""

from __future__ import annotations

import contextlib
import io
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from stackcheck.cli import main
from stackcheck.probes.docker_daemon import DockerDaemonProbe, parse_dockerd_flags, probe_docker_daemon
from stackcheck.probes.interface import ProbeContext
from stackcheck.readers.fsview import HostView

PID = 4242
BOOT = 1_700_000_000
# what `nvidia-ctk runtime configure --runtime=docker` leaves in daemon.json (written here in that shape)
WITH_NVIDIA = {"runtimes": {"nvidia": {"path": "nvidia-container-runtime", "args": []}}, "log-driver": "json-file"}
WITHOUT = {"log-driver": "json-file", "runtimes": {"runsc": {"path": "/usr/local/bin/runsc"}}}
SPEC_YAML = """\
---
cdiVersion: 0.5.0
# written for this test in the shape nvidia-ctk cdi generate writes
kind: "{kind}"
devices:
- name: "0"
  containerEdits:
    deviceNodes:
    - path: /dev/nvidia0
"""


def host(
    tmp_path: Path,
    config: Any = None,
    argv: list[str] | None = None,
    config_age_s: float = 3600.0,
    specs: dict[str, str] | None = None,
) -> Path:
    """A host root: /etc/docker/daemon.json (`config`: a dict as JSON, a str as it is, None absent), a dockerd
    process started 100 s after boot (`argv`; None: no pid file), CDI spec files (`specs`: path -> text)."""
    root = tmp_path / "host"
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/dockerd").write_bytes(b"\x7fELF")
    now = time.time()
    if config is not None:
        etc = root / "etc/docker"
        etc.mkdir(parents=True)
        path = etc / "daemon.json"
        path.write_text(config if isinstance(config, str) else json.dumps(config))
        os.utime(path, (now - config_age_s, now - config_age_s))
    if argv is not None:
        (root / "var/run").mkdir(parents=True)
        (root / "var/run/docker.pid").write_text(f"{PID}\n")
        proc = root / f"proc/{PID}"
        proc.mkdir(parents=True)
        (proc / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        # started 1800 s ago: btime + starttime / CLK_TCK
        ticks = os.sysconf("SC_CLK_TCK")
        boot = int(now) - 100_000
        start_ticks = (int(now) - 1800 - boot) * ticks
        fields = ["S"] + ["0"] * 18 + [str(start_ticks)] + ["0"] * 10
        (proc / "stat").write_text(f"{PID} (dockerd) " + " ".join(fields) + "\n")
        (root / "proc/stat").write_text(f"cpu 1 2 3\nbtime {boot}\nprocesses 1\n")
    for name, text in (specs or {}).items():
        target = root / name.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


DOCKERD = ["/usr/bin/dockerd", "-H", "fd://", "--containerd=/run/containerd/containerd.sock"]


def probe(root: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    return probe_docker_daemon(HostView(str(root)), env or {})


def test_nvidia_ctk_configured_and_flags_read_is_registered_and_complete(tmp_path: Path) -> None:
    facts = probe(host(tmp_path, WITH_NVIDIA, DOCKERD))
    assert facts["runtimes"] == ["nvidia"] and facts["flags_read"] is True and facts["pid"] == PID
    assert facts["registered"] == ["io.containerd.runc.v2", "nvidia", "runc"]
    assert facts["runtimes_complete"] is True and facts["config_newer_than_daemon"] is False
    assert facts["sources"] == {"runtimes": "/etc/docker/daemon.json", "flags": f"/proc/{PID}/cmdline"}
    assert "error" not in facts


def test_an_add_runtime_flag_registers_it(tmp_path: Path) -> None:
    argv = [*DOCKERD, "--add-runtime", "nvidia=/usr/bin/nvidia-container-runtime", "--add-runtime=crun=/usr/bin/crun"]
    facts = probe(host(tmp_path, WITHOUT, argv))
    assert facts["flag_runtimes"] == ["crun", "nvidia"] and "nvidia" in facts["registered"]


def test_flags_name_another_config_file(tmp_path: Path) -> None:
    root = host(tmp_path, WITH_NVIDIA, [*DOCKERD, "--config-file", "/srv/docker.json"])
    (root / "srv").mkdir()
    (root / "srv/docker.json").write_text(json.dumps({"default-runtime": "runc"}))
    os.utime(root / "srv/docker.json", (time.time() - 3600, time.time() - 3600))
    facts = probe(root)
    assert facts["config"] == "/srv/docker.json" and facts["config_source"] == "flag"
    assert facts["runtimes"] == [] and "nvidia" not in facts["registered"] and facts["runtimes_complete"] is True


def test_without_the_daemon_flags_the_list_is_incomplete(tmp_path: Path) -> None:
    facts = probe(host(tmp_path, WITHOUT, None))
    assert facts["flags_read"] is False and facts["runtimes_complete"] is False
    assert "no pid file" in facts["runtimes_reason"] and facts["installed"] is True


def test_a_stale_pid_file_is_not_dockerd(tmp_path: Path) -> None:
    facts = probe(host(tmp_path, WITHOUT, ["/usr/sbin/sshd", "-D"]))
    assert facts["flags_read"] is False and "not dockerd" in facts["flags_reason"]


def test_a_config_changed_after_dockerd_started(tmp_path: Path) -> None:
    facts = probe(host(tmp_path, WITH_NVIDIA, DOCKERD, config_age_s=60))  # dockerd started 1800 s ago
    assert facts["config_newer_than_daemon"] is True and facts["runtimes_complete"] is False
    assert "changed after dockerd started" in facts["runtimes_reason"]


def test_a_rootless_daemon_beside_it_leaves_the_list_incomplete(tmp_path: Path) -> None:
    root = host(tmp_path, WITHOUT, DOCKERD)
    (root / "run/user/1000").mkdir(parents=True)
    (root / "run/user/1000/docker.pid").write_text("99\n")
    facts = probe(root, {"XDG_RUNTIME_DIR": "/run/user/1000"})
    assert facts["rootless_pidfile"] == "/run/user/1000/docker.pid" and facts["runtimes_complete"] is False


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"runtimes": {"nvidia": {"path": "nvidia-container-runtime",}}}', "line 1 column 61: not JSON"),
        ('{\n  "runtimes": {\n    "nvidia": \n}', "line 4 column 1: not JSON"),
        ("[]", "$: not a JSON object"),
        ('{"runtimes": ["nvidia"]}', "$.runtimes: not an object"),
        (b"{\xff}".decode("latin-1"), "byte 1: not UTF-8"),  # (\xff\xfe first: a UTF-16 byte order mark)
    ],
)
def test_a_daemon_json_that_cannot_be_read_is_one_line_and_unknown(tmp_path: Path, text: str, where: str) -> None:
    root = host(tmp_path, None, DOCKERD)
    (root / "etc/docker").mkdir(parents=True)
    (root / "etc/docker/daemon.json").write_bytes(text.encode("latin-1") if "\xff" in text else text.encode())
    facts = probe(root)
    assert facts["config_state"] == "error" and facts["runtimes_complete"] is False
    error = facts["config_error"]
    assert "\n" not in error and error.startswith("/etc/docker/daemon.json: ") and where in error
    assert run_check(facts, "nvidia-runtime")["status"] == "unknown"


def test_no_docker_at_all(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    facts = probe(root)
    assert facts["installed"] is False and facts["error"].startswith("no Docker daemon found")
    assert facts["cdi_complete"] is True and facts["cdi_specs"] == []


def test_cdi_specs_in_yaml_and_json(tmp_path: Path) -> None:
    specs = {
        "/etc/cdi/nvidia.yaml": SPEC_YAML.format(kind="nvidia.com/gpu"),
        "/var/run/cdi/vendor.json": json.dumps({"cdiVersion": "0.6.0", "kind": "example.com/fpga", "devices": []}),
        "/etc/cdi/notes.txt": "kind: nvidia.com/gpu\n",  # not a spec file
        "/etc/cdi/broken.yaml": "devices: []\n",
    }
    facts = probe(host(tmp_path, WITH_NVIDIA, DOCKERD, specs=specs))
    assert facts["cdi_specs"] == [
        {"file": "/etc/cdi/nvidia.yaml", "kind": "nvidia.com/gpu"},
        {"file": "/var/run/cdi/vendor.json", "kind": "example.com/fpga"},
    ]
    assert facts["cdi_unread"] == ["/etc/cdi/broken.yaml: no device kind read"] and facts["cdi_complete"] is False


def test_daemon_json_cdi_spec_dirs_replace_the_defaults(tmp_path: Path) -> None:
    config = {**WITHOUT, "cdi-spec-dirs": ["/opt/cdi"]}
    specs = {"/etc/cdi/nvidia.yaml": SPEC_YAML.format(kind="nvidia.com/gpu")}
    facts = probe(host(tmp_path, config, DOCKERD, specs=specs))
    assert facts["cdi_spec_dirs"] == ["/opt/cdi"] and facts["cdi_specs"] == [] and facts["cdi_complete"] is True
    assert run_check(facts, "cdi-device")["status"] == "failed"


def test_another_engine_naming_spec_dirs_leaves_cdi_unknown(tmp_path: Path) -> None:
    specs = {"/etc/containers/containers.conf": '[engine]\ncdi_spec_dirs = ["/srv/cdi"]\n'}
    facts = probe(host(tmp_path, WITHOUT, DOCKERD, specs=specs))
    assert facts["other_cdi_configs"] == ["/etc/containers/containers.conf"] and facts["cdi_complete"] is False
    assert run_check(facts, "cdi-device")["status"] == "unknown"


def test_parse_dockerd_flags() -> None:
    flags = parse_dockerd_flags(
        ["dockerd", "--default-runtime=nvidia", "--cdi-spec-dir", "/a", "--add-runtime", "x=/y", "--", "--add-runtime"]
    )
    assert flags == {"add_runtimes": ["x"], "default_runtime": "nvidia", "config_file": None, "cdi_spec_dirs": ["/a"],
                     "add_runtime_paths": {"x": "/y"}}  # fmt: skip


def test_the_probe_runs_only_for_an_image(tmp_path: Path) -> None:
    result = DockerDaemonProbe().run(ProbeContext(root=tmp_path, env={}))
    assert result.status == "skipped" and result.facts == {}


# ---- the check, from the probe's facts and from hand-written ones ------------------------------------------


def audit(tmp_path: Path, facts: dict[str, Any]) -> tuple[int, dict[str, Any], str]:
    path = tmp_path / "facts.json"
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["audit", "--facts", str(path), "--format", "json"])
    return code, json.loads(out.getvalue()) if out.getvalue() else {}, err.getvalue()


def run_check(daemon: dict[str, Any] | None, started_by: str | None, tmp_path: Path | None = None) -> dict[str, Any]:
    import tempfile

    image: dict[str, Any] = {"reference": "example/serve:1", "env": {}}
    if started_by is not None:
        image["started_by"] = started_by
    facts: dict[str, Any] = {"gpus": [{"index": 0, "compute_capability": "9.0"}], "image": image}
    if daemon is not None:
        facts["docker_daemon"] = daemon
    with tempfile.TemporaryDirectory() as d:
        _, report, err = audit(Path(d), facts)
    assert report, err
    check: dict[str, Any] = next(c for c in report["checks"] if c["id"] == "container-engine-gpu-path")
    return check


def rule(check: dict[str, Any]) -> dict[str, Any]:
    reasons = [r for r in check.get("reasons") or [] if r.get("result") != "pass"]
    assert len(reasons) == 1, check
    found: dict[str, Any] = reasons[0]
    return found


def test_nvidia_runtime_provably_absent_fails_with_observed_required_source(tmp_path: Path) -> None:
    check = run_check(probe(host(tmp_path, WITHOUT, DOCKERD)), "nvidia-runtime")
    assert check["status"] == "failed"
    reason = rule(check)
    assert reason["rule"] == "docker-nvidia-runtime-registered" and reason["required"] == "registered"
    assert reason["observed"].startswith("not registered: the daemon registers io.containerd.runc.v2, runc, runsc")
    assert "/etc/docker/daemon.json" in reason["observed"] and f"/proc/{PID}/cmdline" in reason["observed"]
    assert any("github.com/moby/moby/blob/" in s.get("url", "") for s in reason["source"])


@pytest.mark.parametrize(
    ("config", "argv", "age", "status"),
    [
        (WITH_NVIDIA, DOCKERD, 3600.0, "ok"),
        (WITH_NVIDIA, None, 3600.0, "unknown"),  # flags not read: a --config-file may name another file
        (WITHOUT, None, 3600.0, "unknown"),  # flags not read: an --add-runtime may register it
        (WITH_NVIDIA, DOCKERD, 60.0, "unknown"),  # changed after dockerd started
        (WITHOUT, DOCKERD, 60.0, "unknown"),  # the running daemon may still have an older file's nvidia
        (None, DOCKERD, 3600.0, "failed"),  # no daemon.json, no flag
    ],
)
def test_nvidia_runtime_verdicts(tmp_path: Path, config: Any, argv: Any, age: float, status: str) -> None:
    assert run_check(probe(host(tmp_path, config, argv, config_age_s=age)), "nvidia-runtime")["status"] == status


def test_cdi_device_without_a_gpu_spec_fails_and_with_one_passes(tmp_path: Path) -> None:
    none = run_check(probe(host(tmp_path / "a", WITHOUT, DOCKERD)), "cdi-device")
    assert none["status"] == "failed" and rule(none)["observed"] == "none in /etc/cdi, /var/run/cdi"
    specs = {"/var/run/cdi/nvidia.yaml": SPEC_YAML.format(kind="nvidia.com/gpu")}
    on = {**WITHOUT, "features": {"cdi": True}}
    assert run_check(probe(host(tmp_path / "b", on, DOCKERD, specs=specs)), "cdi-device")["status"] == "ok"
    # features.cdi not set (irev50): a Docker before 28.2.0 injects no CDI device, and dockerd's release is not read
    unset = run_check(probe(host(tmp_path / "b2", WITHOUT, DOCKERD, specs=specs)), "cdi-device")
    assert unset["status"] == "unknown" and "features.cdi" in rule(unset)["message"]
    # dockerd's flags not read: a --cdi-spec-dir may name another directory, with or without the spec
    assert run_check(probe(host(tmp_path / "c", WITHOUT, None)), "cdi-device")["status"] == "unknown"
    assert run_check(probe(host(tmp_path / "d", WITHOUT, None, specs=specs)), "cdi-device")["status"] == "unknown"
    # CDI turned off in daemon.json: Docker injects none, another engine may
    off = {**WITHOUT, "features": {"cdi": False}}
    facts = probe(host(tmp_path / "e", off, DOCKERD, specs=specs))
    assert facts["features_cdi"] is False and run_check(facts, "cdi-device")["status"] == "unknown"
    # no Docker on the box audited (a build machine, or a Podman host): not judged, and no launch needs it
    nodocker = tmp_path / "f"
    nodocker.mkdir()
    check = run_check(probe(nodocker), "cdi-device")
    assert check["status"] == "unknown" and [r["rule"] for r in check["reasons"]] == ["docker-daemon-not-read"]


def test_a_box_that_does_not_say_how_it_starts_is_unchanged(tmp_path: Path) -> None:
    assert run_check(probe(host(tmp_path, WITHOUT, DOCKERD)), None)["status"] == "skipped"
    assert run_check(None, None)["status"] == "skipped"


@pytest.mark.parametrize(
    ("started_by", "applies"),
    [
        ("docker-gpus", "docker-gpus-request-served"),
        ("nvidia-runtime", "docker-nvidia-runtime-registered"),
        ("cdi-device", "cdi-spec-names-nvidia-gpu"),
    ],
)
def test_each_way_of_starting_reads_its_own_rule(tmp_path: Path, started_by: str, applies: str) -> None:
    check = run_check(probe(host(tmp_path, WITHOUT, DOCKERD)), started_by)
    assert [r["rule"] for r in check["reasons"]] == [applies]


@pytest.mark.parametrize("started_by", ["docker-gpus", "nvidia-runtime", "cdi-device"])
def test_without_docker_daemon_facts_it_is_unknown(started_by: str) -> None:
    check = run_check(None, started_by)
    reason = rule(check)
    assert check["status"] == "unknown" and reason["rule"] == "docker-daemon-not-read"
    assert "Docker daemon of the host that starts the container was not read" in reason["message"]


def test_the_gate_refuses_what_the_daemon_lacks_and_not_a_daemon_not_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A launch needs the check where the daemon was read (refused: no runtime nvidia); where it was not (an image
    gated on a build machine), the audit says unknown and the gate does not refuse for it."""
    case = Path(__file__).resolve().parent.parent / "cases" / "image-docker-no-nvidia-runtime" / "facts.json"
    doc = json.loads(case.read_text())
    launch = ["--", "python3", "-m", "sglang.launch_server", "--model-path", "/models/m"]

    def blamed(document: dict[str, Any]) -> set[str]:
        path = tmp_path / "facts.json"
        path.write_text(json.dumps(document))
        main(["gate", "--dry-run", "--format", "json", "--facts", str(path), *launch])
        return {r["feature"] for r in json.loads(capsys.readouterr().out)["reasons"]}

    assert "container-engine-gpu-path" in blamed(doc)
    del doc["facts"]["docker_daemon"]
    assert "container-engine-gpu-path" not in blamed(doc)


@pytest.mark.parametrize(
    ("daemon", "status"),
    [
        ({"runtimes": [], "runtimes_complete": True}, "failed"),
        ({"runtimes": []}, "unknown"),
        ({"runtimes": ["nvidia"]}, "ok"),  # as `docker info` lists them
        ({"runtimes": ["nvidia"], "flags_read": False}, "unknown"),
        ({"flag_runtimes": ["nvidia"], "config_error": "x: line 1 column 1: not JSON (y)"}, "ok"),
        ({"runtimes": ["nvidia"], "config_newer_than_daemon": True}, "unknown"),
    ],
)
def test_the_hand_written_facts_form(daemon: dict[str, Any], status: str) -> None:
    assert run_check(daemon, "nvidia-runtime")["status"] == status


def test_a_hand_written_section_against_the_schema(tmp_path: Path) -> None:
    code, report, err = audit(tmp_path, {"docker_daemon": {"runtimes": "nvidia"}})
    assert code == 2 and not report
    line = err.strip()
    assert "\n" not in line and "facts.json" in line and "docker_daemon" in line


def test_host_facts_bring_the_hosts_docker_daemon(tmp_path: Path) -> None:
    """The Docker daemon is the host's, like its driver (a host probe): `--host-facts` takes it from the file, and
    the auditing machine's own daemon is not read in its place."""
    from assembly.test_target_cli import CASES, make_root, report, run_cli

    doc = json.loads((CASES / "writeup-after" / "facts.json").read_text())
    daemon = probe(host(tmp_path, WITHOUT, DOCKERD))
    doc["facts"]["docker_daemon"] = daemon
    host_file = tmp_path / "host.json"
    host_file.write_text(json.dumps(doc))
    proc = run_cli(
        "probe", "--root", str(make_root(tmp_path / "root")), "--host-facts", str(host_file), "--format", "json"
    )
    assert proc.returncode == 0, proc.stderr
    out = report(proc)
    assert out["facts"].get("docker_daemon") == daemon
    assert "docker_daemon" not in [p["name"] for p in out["probes"]]
    assert "docker_daemon" in next(p for p in out["probes"] if p["name"] == "host-facts")["reason"]


class _ImageView(HostView):
    """An image's view (it has image_facts): the probe reads the host's root, not this view."""

    def image_facts(self) -> dict[str, Any]:
        return {}


def test_in_an_image_audit_the_probe_reads_the_hosts_root(tmp_path: Path) -> None:
    root = host(tmp_path, "{not json", DOCKERD)
    image = tmp_path / "image"
    image.mkdir()
    result = DockerDaemonProbe().run(ProbeContext(root=root, env={}, view=_ImageView(str(image))))
    assert result.status == "partial" and result.reason is not None and "line 1 column 2" in result.reason
    assert result.facts["docker_daemon"]["pid"] == PID
    empty = tmp_path / "empty"
    empty.mkdir()
    result = DockerDaemonProbe().run(ProbeContext(root=empty, env={}, view=_ImageView(str(image))))
    assert result.status == "skipped" and result.facts["docker_daemon"]["installed"] is False


# ---- docker run --gpus: the hooks dockerd finds on its PATH as it starts --------------------------------------


def with_hooks(root: Path, hooks: dict[str, str], environ_path: str | None, age_s: float = 3600.0) -> Path:
    """`hooks`: name -> directory (executable files, `age_s` old); `environ_path`: dockerd's PATH in its
    /proc/PID/environ (None: no environ file, as for a user who cannot read it)."""
    now = time.time()
    for name, directory in hooks.items():
        target = root / directory.lstrip("/") / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(b"\x7fELF")
        target.chmod(0o755)
        os.utime(target, (now - age_s, now - age_s))
    if environ_path is not None:
        (root / f"proc/{PID}/environ").write_bytes(f"LANG=C\0PATH={environ_path}\0NOTIFY_SOCKET=/x\0".encode())
    return root


@pytest.mark.parametrize(
    ("hooks", "environ_path", "age", "status"),
    [
        ({"nvidia-container-runtime-hook": "/usr/bin"}, None, 3600.0, "ok"),  # systemd's service PATH
        ({"nvidia-container-runtime-hook": "/usr/bin"}, "/usr/bin:/bin", 3600.0, "ok"),
        ({"nvidia-container-runtime-hook": "/usr/bin"}, "/opt/tools/bin", 3600.0, "failed"),  # not on its PATH
        ({}, "/usr/local/bin:/usr/bin", 3600.0, "failed"),
        ({}, None, 3600.0, "unknown"),  # its own PATH not read
        ({"nvidia-container-runtime-hook": "/opt/nvidia"}, None, 3600.0, "unknown"),
        ({"nvidia-cdi-hook": "/usr/bin"}, "/usr/bin", 3600.0, "unknown"),  # serves --gpus from Docker 29.2.0 only
        ({"nvidia-container-runtime-hook": "/usr/bin"}, "/usr/bin", 60.0, "unknown"),  # installed after dockerd started
    ],
)
def test_docker_gpus_verdicts(
    tmp_path: Path, hooks: dict[str, str], environ_path: str | None, age: float, status: str
) -> None:
    facts = probe(with_hooks(host(tmp_path, WITH_NVIDIA, DOCKERD), hooks, environ_path, age))
    check = run_check(facts, "docker-gpus")
    assert check["status"] == status, check
    if status == "failed":
        reason = rule(check)
        assert reason["rule"] == "docker-gpus-request-served" and reason["required"] == "served"
        assert reason["observed"].startswith("not served: neither") and f"/proc/{PID}/environ" in reason["observed"]


def test_the_hooks_facts(tmp_path: Path) -> None:
    root = with_hooks(host(tmp_path, WITH_NVIDIA, DOCKERD), {"nvidia-container-runtime-hook": "/usr/bin"}, None)
    facts = probe(root)
    assert facts["gpu_hooks"] == {
        "nvidia-container-runtime-hook": "/usr/bin/nvidia-container-runtime-hook",
        "nvidia-cdi-hook": None,
    }
    assert facts["gpu_hooks_path"] == "systemd service default" and facts["gpu_hooks_newer_than_daemon"] == []
    (root / "usr/bin/nvidia-container-runtime-hook").chmod(0o644)  # not executable: LookPath skips it
    assert probe(root)["gpu_hooks"]["nvidia-container-runtime-hook"] is None


# ---- igap22 (5): a registered runtime whose absolute binary is not on the host ----------------------------------
# igap22 (5): check container-engine-gpu-path (rule docker-nvidia-runtime-registered) where the nvidia runtime is
# registered with an absolute binary path that is not on the host: unknown, never ok. dockerd makes a runtime's `path`
# the runc shim's BinaryName and looks for it only for a runtime with runtimeArgs (moby daemon/runtime_unix.go
# setupRuntimes / defaultV2ShimConfig at b985e231); the shim's exec of a path that is not there fails the container.
# A bare name (nvidia-ctk's default, `nvidia-container-runtime`) is looked up on the shim's PATH, not read here: as
# before.

ABSOLUTE = {"runtimes": {"nvidia": {"path": "/usr/bin/nvidia-container-runtime", "runtimeArgs": []}}}


def test_an_absolute_runtime_binary_that_is_absent_is_unknown(tmp_path: Path) -> None:
    facts = probe(host(tmp_path, ABSOLUTE, DOCKERD))
    assert facts["runtime_paths"] == {"nvidia": "/usr/bin/nvidia-container-runtime"}
    assert facts["runtime_binary_missing"] == {"nvidia": "/usr/bin/nvidia-container-runtime"}
    check = run_check(facts, "nvidia-runtime")
    assert check["status"] == "unknown", check
    [reason] = [r for r in check["reasons"] if r.get("result") != "pass"]
    assert "/usr/bin/nvidia-container-runtime, which is not on the host" in str(reason.get("message"))


def test_the_binary_present_is_registered(tmp_path: Path) -> None:
    root = host(tmp_path, ABSOLUTE, DOCKERD)
    (root / "usr/bin/nvidia-container-runtime").write_bytes(b"\x7fELF")
    facts = probe(root)
    assert facts["runtime_binary_missing"] == {}
    assert run_check(facts, "nvidia-runtime")["status"] == "ok"


def test_a_bare_name_is_not_judged(tmp_path: Path) -> None:
    facts = probe(host(tmp_path, WITH_NVIDIA, DOCKERD))
    assert facts["runtime_paths"] == {"nvidia": "nvidia-container-runtime"} and facts["runtime_binary_missing"] == {}
    assert run_check(facts, "nvidia-runtime")["status"] == "ok"


@pytest.mark.parametrize(
    "form", [["--add-runtime", "nvidia=/opt/nv/runtime"], ["--add-runtime=nvidia=/opt/nv/runtime"]]
)
def test_an_add_runtime_flags_absent_binary_is_unknown(tmp_path: Path, form: list[str]) -> None:
    facts = probe(host(tmp_path, {"log-driver": "json-file"}, [*DOCKERD, *form]))
    assert facts["runtime_binary_missing"] == {"nvidia": "/opt/nv/runtime"}
    assert run_check(facts, "nvidia-runtime")["status"] == "unknown"


def test_another_runtimes_absent_binary_does_not_touch_nvidia(tmp_path: Path) -> None:
    runtimes = {"nvidia": {"path": "nvidia-container-runtime", "args": []}, "runsc": {"path": "/usr/local/bin/runsc"}}
    config = {"runtimes": runtimes}
    facts = probe(host(tmp_path, config, DOCKERD))
    assert facts["runtime_binary_missing"] == {"runsc": "/usr/local/bin/runsc"}
    assert run_check(facts, "nvidia-runtime")["status"] == "ok"


def test_a_hand_written_section_saying_the_binary_is_missing(tmp_path: Path) -> None:
    daemon = {"installed": True, "runtimes": ["nvidia"], "flag_runtimes": [], "flags_read": True,
              "runtimes_complete": True, "registered": ["nvidia", "runc"],
              "runtime_binary_missing": {"nvidia": "/usr/bin/nvidia-container-runtime"}}  # fmt: skip
    assert run_check(daemon, "nvidia-runtime")["status"] == "unknown"


# ---- irev56: the default runtime's absent binary fails --gpus and CDI containers too ----------------------------
# A container started without --runtime (docker run --gpus, --device nvidia.com/gpu=all) runs under the daemon's
# default runtime: moby daemon/start_unix.go:14-16 (b985e231) sets HostConfig.Runtime to Runtimes.Default where it is
# empty, and runtime_unix.go:203-206 Get("") takes Default. With `default-runtime: nvidia` (nvidia-ctk runtime
# configure --set-as-default) and that runtime's absolute binary gone, every such container fails as the shim execs
# it, as for --runtime nvidia (igap22); igap22 judged the binary only for docker.runtime.NAME, so the --gpus and CDI
# rules said ok (a false pass).

AS_DEFAULT = {**ABSOLUTE, "default-runtime": "nvidia", "features": {"cdi": True}}
GPU_SPEC = {"/var/run/cdi/nvidia.yaml": SPEC_YAML.format(kind="nvidia.com/gpu")}


@pytest.mark.parametrize("started_by", ["docker-gpus", "cdi-device"])
def test_the_default_runtimes_absent_binary_is_unknown_for_every_container(tmp_path: Path, started_by: str) -> None:
    root = with_hooks(
        host(tmp_path, AS_DEFAULT, DOCKERD, specs=GPU_SPEC), {"nvidia-container-runtime-hook": "/usr/bin"}, None
    )
    facts = probe(root)
    assert facts["default_runtime"] == "nvidia" and facts["runtime_binary_missing"], facts
    check = run_check(facts, started_by)
    assert check["status"] == "unknown", check
    assert any("default runtime nvidia" in str(r.get("message")) for r in check["reasons"]), check["reasons"]


@pytest.mark.parametrize("started_by", ["docker-gpus", "cdi-device"])
def test_the_default_runtimes_binary_present_or_another_default_is_ok(tmp_path: Path, started_by: str) -> None:
    root = with_hooks(
        host(tmp_path / "a", AS_DEFAULT, DOCKERD, specs=GPU_SPEC), {"nvidia-container-runtime-hook": "/usr/bin"}, None
    )
    (root / "usr/bin/nvidia-container-runtime").write_bytes(b"\x7fELF")
    assert run_check(probe(root), started_by)["status"] == "ok"
    # the absent binary is not the default runtime's: a container without --runtime never execs it
    not_default = {**ABSOLUTE, "features": {"cdi": True}}
    root = with_hooks(
        host(tmp_path / "b", not_default, DOCKERD, specs=GPU_SPEC), {"nvidia-container-runtime-hook": "/usr/bin"}, None
    )
    assert run_check(probe(root), started_by)["status"] == "ok"


# irev56: a runtime given as the runc shim with a BinaryName option (daemon.json runtimeType io.containerd.runc.v2,
# options.BinaryName; moby b985e231 daemon/runtime_unix.go:158-163, shimopts/convert.go:20-34) makes the shim exec that
# binary as a `path` does: an absent one was never looked for, and docker.runtime.nvidia said registered (a false pass).
AS_SHIM = {"runtimes": {"nvidia": {"runtimeType": "io.containerd.runc.v2",
                                   "options": {"BinaryName": "/usr/bin/nvidia-container-runtime"}}}}  # fmt: skip


def test_a_runc_shim_runtimes_absent_binary_name_is_unknown(tmp_path: Path) -> None:
    facts = probe(host(tmp_path, AS_SHIM, DOCKERD))
    assert facts["runtime_binary_missing"] == {"nvidia": "/usr/bin/nvidia-container-runtime"}, facts
    assert run_check(facts, "nvidia-runtime")["status"] == "unknown"


def test_a_runc_shim_runtimes_present_binary_or_another_shim_is_registered(tmp_path: Path) -> None:
    root = host(tmp_path / "a", AS_SHIM, DOCKERD)
    (root / "usr/bin/nvidia-container-runtime").write_bytes(b"\x7fELF")
    assert run_check(probe(root), "nvidia-runtime")["status"] == "ok"
    # another shim's options are its own (not a binary the runc shim execs): not read
    other = {"runtimes": {"nvidia": {"runtimeType": "io.containerd.kata.v2", "options": {"BinaryName": "/nowhere"}}}}
    facts = probe(host(tmp_path / "b", other, DOCKERD))
    assert facts["runtime_binary_missing"] == {} and run_check(facts, "nvidia-runtime")["status"] == "ok"
