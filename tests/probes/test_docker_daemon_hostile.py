"""The Docker daemon probe against a hostile host (adversarial pass iadv2): files that are too deep, too many or too
large, paths that resolve elsewhere than dockerd's, keys that Go reads differently from Python. Each attack here
failed before its fix: a probe crash (the whole daemon read lost, a provable refusal turned unknown), an audit past
the probe's time budget, or a verdict read from another file than dockerd's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from probes.test_probe_docker_daemon import DOCKERD, WITHOUT, _ImageView, host, run_check

from stackcheck.probes.docker_daemon import DockerDaemonProbe
from stackcheck.probes.interface import ProbeContext


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
