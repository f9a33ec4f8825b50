"""The audited environment end to end, through the command line: stackcheck in its own venv auditing a
serving venv made by the test (pipx layout), the gate reading the command's interpreter (python, console
script, conda run, uv run), a root filesystem, a host's saved facts, hand-written facts, bad input."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

XY = f"{sys.version_info[0]}.{sys.version_info[1]}"
CASES = Path(__file__).parent.parent / "cases"
REPO = Path(__file__).parent.parent.parent


def run_cli(*args: str, env: dict[str, str] | None = None, cwd: str = "/") -> subprocess.CompletedProcess[str]:
    # COLUMNS left out: pytest-xdist sets 80, and the assertions read whole lines as a pipe gets them (unwrapped)
    drop = ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON", "COLUMNS")
    base = {k: v for k, v in os.environ.items() if k not in drop}
    base["PYTHONPATH"] = str(REPO)  # this checkout, not the installed copy
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", *args],
        capture_output=True,
        text=True,
        env={**base, **(env or {})},
        timeout=120,
        cwd=cwd,
    )


def add_dist(site: Path, name: str, version: str) -> None:
    public = version.split("+", maxsplit=1)[0]
    info = site / f"{name.replace('-', '_')}-{public}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {public}\n")


def add_torch(site: Path, version: str = "2.9.1+cu130", cuda: str = "13.0") -> None:
    add_dist(site, "torch", version)
    (site / "torch").mkdir(parents=True, exist_ok=True)
    (site / "torch" / "version.py").write_text(
        f"__version__ = '{version}'\ndebug = False\ncuda: str = '{cuda}'\ngit_version = 'abc123'\nhip = None\n"
    )


def serving_site(site: Path, sglang: str = "0.5.9") -> None:
    add_dist(site, "sglang", sglang)
    add_torch(site)


@pytest.fixture(scope="module")
def serve(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real venv with a serving stack's metadata (sglang 0.5.9, torch 2.9.1+cu130) and a console script."""
    home = tmp_path_factory.mktemp("home")
    venv = home / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    serving_site(venv / "lib" / f"python{XY}" / "site-packages")
    script = venv / "bin" / "sglang"
    script.write_text(f"#!{venv}/bin/python\nimport sys\n")
    script.chmod(0o755)
    return venv


def report(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.stdout, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def test_pipx_layout_python_flag_and_active_venv(serve: Path, tmp_path: Path) -> None:
    cache = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    proc = run_cli("audit", "--python", str(serve / "bin/python3"), "--format", "json", env=cache)
    assert proc.returncode in (0, 1), proc.stderr
    facts = report(proc)["facts"]
    assert facts["python"]["chosen_by"] == "--python" and facts["python"]["learned"] == "ran"
    assert facts["python"]["prefix"] == str(serve)
    assert facts["packages"]["sglang"]["version"] == "0.5.9"
    assert facts["packages"]["torch"]["version"] == "2.9.1+cu130" and facts["packages"]["torch"]["cuda"] == "13.0"
    assert facts["packages"]["torch"]["location"].startswith(str(serve))
    proc = run_cli("audit", "--format", "json", env={**cache, "VIRTUAL_ENV": str(serve)})
    facts = report(proc)["facts"]
    assert facts["python"]["chosen_by"] == "VIRTUAL_ENV" and facts["python"]["learned"] == "cache"
    assert facts["packages"]["sglang"]["version"] == "0.5.9"
    text = run_cli("audit", "--python", str(serve / "bin/python"), env=cache).stdout
    assert f"env:   packages from {serve} (Python {sys.version_info[0]}." in text
    assert "chosen by --python)" in text


def _has_serving_packages() -> bool:
    for name in ("sglang", "torch", "sgl-kernel", "sglang-kernel", "flashinfer-python"):
        try:
            importlib.metadata.distribution(name)
            return True
        except importlib.metadata.PackageNotFoundError:
            continue
    return False


@pytest.mark.skipif(_has_serving_packages(), reason="stackcheck's own environment has serving packages")
def test_serving_packages_elsewhere_are_named_instead_of_a_fresh_install(serve: Path) -> None:
    home = serve.parent
    proc = run_cli("audit", "--format", "json", env={"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")})
    doc = report(proc)
    facts = doc["facts"]
    assert facts["python"]["chosen_by"] == "stackcheck's own interpreter"
    assert facts["packages"]["sglang"] == {"installed": False}
    (other,) = facts["other_environments"]
    assert other["python"] == "~/.venv/bin/python3" and other["select"] == "--python ~/.venv/bin/python3"
    assert other["packages"] == {"sglang": "0.5.9", "torch": "2.9.1"}
    assert doc["plan"]["steps"] == [] and doc["plan"]["elsewhere"] == ["--python ~/.venv/bin/python3"]
    text = run_cli("audit", env={"HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache")}).stdout
    assert "~/.venv/bin/python3 has sglang 0.5.9, torch 2.9.1: rerun with --python ~/.venv/bin/python3" in text
    assert "nothing planned for this environment" in text


def _gate(*command: str, env: dict[str, str] | None = None, cwd: str = "/") -> dict[str, Any]:
    proc = run_cli(
        "gate", "--dry-run", "--format", "json", "--require", "torch-cuda-arch", "--", *command, env=env, cwd=cwd
    )
    assert proc.returncode in (0, 1), proc.stderr
    return report(proc)


def test_gate_reads_the_commands_interpreter(serve: Path, tmp_path: Path) -> None:
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    launch = ["-m", "sglang.launch_server", "--model-path", "m"]
    assert _gate(str(serve / "bin/python"), *launch, env=env)["sglang"] == "0.5.9"
    path = {**env, "PATH": f"{serve / 'bin'}:/usr/bin:/bin"}
    assert _gate("python3", *launch, env=path)["sglang"] == "0.5.9"
    assert _gate("sglang", "serve", "--model-path", "m", env=path)["sglang"] == "0.5.9"
    # without a command's interpreter: stackcheck's own, which has no SGLang
    if not _has_serving_packages():
        assert _gate("/bin/true", env=env)["sglang"] is None


def test_gate_conda_run_and_uv_run(tmp_path: Path) -> None:
    # a conda-shaped prefix whose interpreter cannot run here: read from its layout
    root = tmp_path / "miniconda3"
    (root / "bin").mkdir(parents=True)
    (root / "bin" / "conda").write_text("#!/bin/sh\n")
    (root / "bin" / "conda").chmod(0o755)
    env_prefix = root / "envs" / "serve"
    (env_prefix / "conda-meta").mkdir(parents=True)
    (env_prefix / "bin").mkdir()
    (env_prefix / "bin" / f"python{XY}").write_text("not runnable here")
    (env_prefix / "bin" / "python3").symlink_to(f"python{XY}")
    (env_prefix / "lib" / f"python{XY}").mkdir(parents=True)
    serving_site(env_prefix / "lib" / f"python{XY}" / "site-packages", sglang="0.5.8")
    env = {"CONDA_EXE": str(root / "bin/conda"), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    doc = _gate("conda", "run", "-n", "serve", "python", "-m", "sglang.launch_server", env=env)
    assert doc["sglang"] == "0.5.8"
    # uv run: the project's .venv, found from the working directory
    proj = tmp_path / "proj"
    (proj / "pyproject.toml").parent.mkdir()
    (proj / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(proj / ".venv")], check=True, timeout=120)
    serving_site(proj / ".venv" / "lib" / f"python{XY}" / "site-packages", sglang="0.5.7")
    doc = _gate("uv", "run", "python", "-m", "sglang.launch_server", env=env, cwd=str(proj))
    assert doc["sglang"] == "0.5.7"


def make_root(root: Path) -> Path:
    """An unpacked Debian-style root: /usr/bin/python3 -> python3.X, dist-packages, os-release."""
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin" / f"python{XY}").write_bytes(b"\x7fELF" + b"\0" * 60)
    (root / "usr/bin" / f"python{XY}").chmod(0o755)
    (root / "usr/bin" / "python3").symlink_to(f"python{XY}")
    (root / "usr/lib" / f"python{XY}").mkdir(parents=True)
    (root / "usr/lib" / f"python{XY}" / "os.py").write_text("")
    dist = root / "usr/lib/python3/dist-packages"
    add_torch(dist, "2.8.0+cu128", "12.8")
    local = root / "usr/local/lib" / f"python{XY}" / "dist-packages"
    add_dist(local, "sglang", "0.5.6")
    (root / "opt/extra").mkdir(parents=True)
    (local / "extra.pth").write_text("/opt/extra\nimport os; os.system('touch /tmp/never')\n")
    (root / "etc").mkdir()
    (root / "etc/os-release").write_text('PRETTY_NAME="Rooted Linux 1"\n')
    (root / "escape").symlink_to("/")  # a link out of the root resolves inside it
    return root


def test_root_filesystem_and_host_facts(tmp_path: Path) -> None:
    root = make_root(tmp_path / "root")
    host_file = CASES / "writeup-after" / "facts.json"
    proc = run_cli("probe", "--root", str(root), "--host-facts", str(host_file), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    doc = report(proc)
    facts = doc["facts"]
    py = facts["python"]
    assert (py["executable"], py["learned"]) == ("/usr/bin/python3", "static")
    assert py["chosen_by"] == "python3 on the root's PATH"
    assert f"/usr/local/lib/python{XY}/dist-packages" in py["sys_path"] and "/opt/extra" in py["sys_path"]
    assert any("not executed" in n for n in py["notes"])
    assert facts["packages"]["torch"]["version"] == "2.8.0+cu128"
    assert facts["packages"]["torch"]["location"] == "/usr/lib/python3/dist-packages"
    assert facts["packages"]["sglang"]["version"] == "0.5.6"
    assert facts["system"]["os"] == "Rooted Linux 1" and facts["system"]["python"] == XY
    saved = json.loads(host_file.read_text())["facts"]
    assert facts["gpus"] == saved["gpus"] and facts["driver"] == saved["driver"]
    names = [p["name"] for p in doc["probes"]]
    assert names[0] == "host-facts" and "nvml" not in names
    assert not Path("/tmp/never").exists()


def test_handwritten_facts_rules(tmp_path: Path) -> None:
    doc = {
        "schema_version": 1,
        "facts": {
            "packages": {"torch": {"version": "2.9.1+cu130", "cuda": "13.0"}, "sglang": {"installed": False}},
            "gpu": [{"index": 0, "compute_capability": "9.0"}],
            "pakages": {},
        },
    }
    path = tmp_path / "hand.json"
    path.write_text(json.dumps(doc))
    proc = run_cli("audit", "--facts", str(path), "--format", "json")
    assert proc.returncode in (0, 1), proc.stderr
    out = report(proc)
    assert out["facts"]["packages"]["torch"]["installed"] is True  # a version and no `installed`
    assert "hostname" not in out["host"] and out["host"]["facts_file"] == str(path)
    warnings = [line for line in proc.stderr.splitlines() if "warning" in line]
    assert any("$.facts.gpu: unknown facts section" in w and "'gpus'" in w for w in warnings), proc.stderr
    assert any("$.facts.pakages" in w and "'packages'" in w for w in warnings), proc.stderr
    torch_arch = next(f for f in out["features"] if f["id"] == "torch-cuda-arch")
    assert torch_arch["status"] != "not-applicable"
    assert "host unknown" in run_cli("audit", "--facts", str(path)).stdout


def test_bad_targets_are_one_line_errors(tmp_path: Path) -> None:
    junk = tmp_path / "tool"
    junk.write_text("#!/bin/sh\necho not python\n")
    junk.chmod(0o755)
    for args, needle in (
        (["--python", str(junk)], "not a Python interpreter"),
        (["--python", str(tmp_path / "missing")], "no such file"),
        (["--env", str(tmp_path)], "not a venv or conda prefix"),
        (["--root", str(tmp_path / "nope")], "not a directory"),
        (["--image", str(tmp_path / "x.tar")], "image support is not installed"),
        (["--facts", str(CASES / "writeup-after/facts.json"), "--python", str(junk)], "--facts and --python"),
        (["--host-facts", str(junk)], "not valid JSON"),
    ):
        if "--image" in args:
            try:
                import stackcheck.image  # noqa: F401

                continue
            except ImportError:
                pass
        proc = run_cli("audit", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        lines = proc.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("stackcheck: error:") and needle in lines[0], (args, lines)
    proc = run_cli("audit", "--format", "json", env={"STACKCHECK_PYTHON": str(junk)})
    assert proc.returncode == 2 and "STACKCHECK_PYTHON" in proc.stderr


def test_host_facts_bring_the_hosts_container_toolkit(tmp_path: Path) -> None:
    """The container toolkit is the host's, like its driver (a host probe): `--host-facts` takes it from the file,
    and the auditing machine's own toolkit is not read in its place."""
    root = make_root(tmp_path / "root")
    doc = json.loads((CASES / "writeup-after" / "facts.json").read_text())
    toolkit = {"mode": "legacy", "mode_source": "config", "libnvidia_container": "1.17.8"}
    doc["facts"]["container_toolkit"] = toolkit
    host_file = tmp_path / "host.json"
    host_file.write_text(json.dumps(doc))
    proc = run_cli("probe", "--root", str(root), "--host-facts", str(host_file), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    out = report(proc)
    assert out["facts"].get("container_toolkit") == toolkit
    assert "container_toolkit" not in [p["name"] for p in out["probes"]]
    assert "container_toolkit" in next(p for p in out["probes"] if p["name"] == "host-facts")["reason"]
