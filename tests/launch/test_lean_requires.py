"""The dependency check's lean Requires-Dist reader (stackcheck/launch/preflight/lean_req.py) against packaging:
whatever it answers (a marker false here, an installed version inside the specifiers) packaging answers the
same, on generated lines and on the Requires-Dist lines of real wheels; and every line it is not sure of goes
to packaging, so the check's results are those of the packaging-only check."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion

from stackcheck.launch.preflight import deps, lean_req
from stackcheck.readers.fsview import HostView

ENVS = [("3.12.3", "x86_64"), ("3.10.14", "aarch64"), ("3.11", "arm64"), ("3.13.0rc1", "x86_64"), (None, None)]
NAMES = ["torch", "sgl-kernel", "Flash_Infer.py", "a", "x1", "-bad", "bad-", "ok.name", "n_2"]
VERSIONS = ["2.9.1", "2.9", "2.9.0", "0.6.7.post2", "0.4.0rc3", "1.0.dev1", "1.0a1", "3", "2.10", "2.09.1",
            "1.0.0.0", "v1.0", "1.*", "1.0.*", "1.0+cu128", "1!2.0", "foo", "2.9.1.post0",
            "1.0b2.post3.dev4"]  # fmt: skip
OPS = ["==", "!=", "<", "<=", ">", ">=", "~=", "===", "=", "=>", "<>"]
VARS = ["sys_platform", "platform_machine", "os_name", "implementation_name", "extra", "python_version",
        "python_full_version", "platform_system", "platform_release", "implementation_version", "bogus"]  # fmt: skip
LITERALS = ["linux", "darwin", "win32", "aarch64", "x86_64", "arm64", "armv7l", "posix", "nt", "cpython",
            "Linux", "diffusion", "cu130-all", "Test_X", "3.12", "3.9", "3.11.0", "3", "3.12.3", "3.13",
            "3.13.0rc1", "1.0", "v1", "", "a b", "3.*", "1.0+local"]  # fmt: skip
INSTALLED = ["2.9.1", "2.9.1+cu128", "2.9.0", "2.10.0", "0.6.7.post2", "0.6.7", "0.4.0rc3", "0.4.0", "1.0",
             "1.0.dev1", "3", "3.0.0", "2.9.1+cu128.abc", "2.9.1+", "foo", "1!2.0", "2.09.1", "0.7.11", "0.8.0",
             "1.0a1", "2.9.1.post0", "2.10.0rc1", "0.7.30.post1", "2.9.0.dev3", "3.0a1", "2.9.1rc1",
             "2.9.1.post1+cu128", "1.0.post1", "2.8.9b2.post1.dev0", "0.6.7.post2+cu130", "2.9.1.dev0"]  # fmt: skip


def gen_marker(rng: random.Random, depth: int = 0) -> str:
    roll = rng.random()
    if depth < 3 and roll < 0.25:
        logic = rng.choice(["and", "or", "and", "or", "AND", "xor"])
        sp = rng.choice([" ", " ", "", "  "])
        return f"{gen_marker(rng, depth + 1)}{sp}{logic}{sp}{gen_marker(rng, depth + 1)}"
    if depth < 3 and roll < 0.35:
        return f"({gen_marker(rng, depth + 1)})"
    var = rng.choice(VARS)
    op = rng.choice(["==", "!=", "==", "!=", "<", ">=", "in", "not in", "~=", "==="])
    lit = rng.choice(LITERALS)
    quote = rng.choice(['"', '"', "'"])
    sp = rng.choice(["", " ", " ", "  "])
    if rng.random() < 0.05:
        return f"{quote}{lit}{quote}{sp}{op}{sp}{var}"
    return f"{var}{sp}{op}{sp}{quote}{lit}{quote}"


def gen_line(rng: random.Random) -> str:
    name = rng.choice(NAMES)
    if rng.random() < 0.2:
        name += rng.choice(["[cu13]", "[a,b]", "[ x ]", "[]", "[bad"])
    count = rng.choice([0, 1, 1, 2])
    specs = ",".join(f"{rng.choice(OPS)}{rng.choice(['', ' '])}{rng.choice(VERSIONS)}" for _ in range(count))
    if specs and rng.random() < 0.1:
        specs = f"({specs})"
    line = name + rng.choice(["", " "]) + specs
    if rng.random() < 0.6:
        line += rng.choice([";", "; ", " ; "]) + gen_marker(rng)
    if rng.random() < 0.03:
        line += " @ https://example.invalid/x.whl"
    return line


def packaging_contains(req: Requirement, installed: str) -> bool | None:
    """As the check asks packaging: no specifier is met by any version (contains is not asked)."""
    if not req.specifier:
        return True
    try:
        return bool(req.specifier.contains(installed, prereleases=True))
    except InvalidVersion:
        return None


def assert_agrees(line: str, python: str | None, machine: str | None, stats: dict[str, int]) -> None:
    lean_env = lean_req.environment(python, machine)
    full_env = deps.marker_environment(python, machine)
    got = lean_req.read_line(line, lean_env)
    if got is None:
        stats["fallback"] += 1
        return
    try:
        req = Requirement(line)
    except InvalidRequirement:
        pytest.fail(f"lean read {line!r}, which packaging rejects")
    name, specs, holds = got
    assert name == req.name, line
    expected = req.marker is None or req.marker.evaluate(dict(full_env))
    assert holds == expected, (line, python, machine)
    stats["read"] += 1
    for installed in INSTALLED:
        met = lean_req.spec_met(specs, installed)
        if met is None:
            continue
        assert met is True
        assert packaging_contains(req, installed) is True, (line, installed)
        stats["met"] += 1


def test_lean_answers_equal_packaging_on_generated_lines() -> None:
    rng = random.Random(21)
    stats = {"read": 0, "fallback": 0, "met": 0}
    for _ in range(3000):
        line = gen_line(rng)
        for python, machine in ENVS:
            assert_agrees(line, python, machine, stats)
    # both paths are exercised, and the lean one answers a fair share
    assert stats["read"] > 1500 and stats["fallback"] > 1500 and stats["met"] > 500, stats


@pytest.mark.parametrize(
    ("marker", "python", "machine"),
    [
        ('sys_platform == "linux" and (platform_machine == "aarch64" or platform_machine == "arm64")', "3.12",
         "arm64"),
        ('sys_platform != "linux" or (sys_platform == "linux" and platform_machine != "aarch64")', "3.12.3", "x86_64"),
        ('(platform_machine != "aarch64" and platform_machine != "arm64") and extra == "diffusion"', "3.12", "x86_64"),
        ('python_version < "3.11"', "3.10.14", "x86_64"),
        ('python_version >= "3.12" or extra != "test"', "3.11", "x86_64"),
        ('python_full_version == "3.12"', "3.12.0", "x86_64"),
        ('os_name == "posix" and implementation_name == "cpython"', None, None),
        ('platform_machine == "x86_64" or platform_machine == "aarch64" and platform_machine == "armv7l"', "3.12",
         "aarch64"),
    ],
)  # fmt: skip
def test_lean_markers_equal_packaging(marker: str, python: str | None, machine: str | None) -> None:
    got = lean_req.marker_holds(marker, lean_req.environment(python, machine))
    assert got is not None
    assert got == Marker(marker).evaluate(deps.marker_environment(python, machine))


@pytest.mark.parametrize(
    "marker",
    [
        'platform_system == "Linux"',  # platform's answer, not read without packaging
        'python_version < "3.11"',  # no target Python: packaging's own
        'platform_machine == "x86_64"',  # no target machine
        'sys_platform == "v1"',  # a literal that reads as a version: packaging may compare as versions
        'sys_platform < "linux"',
        '"linux" == sys_platform',
        'python_version ~= "3.11"',
        'extra in "a"',
    ],
)
def test_lean_leaves_to_packaging(marker: str) -> None:
    assert lean_req.marker_holds(marker, lean_req.environment(None, None)) is None


def requires_dist_of(dist: str, version: str) -> list[str]:
    """A release's Requires-Dist from its wheel's METADATA: the cached wheel, or pip's report (metadata only)."""
    from registry_wheels import CACHE, cached

    wheel = cached(dist, version)
    if wheel is not None:
        import zipfile

        with zipfile.ZipFile(wheel) as zf:
            meta = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
            text = zf.read(meta).decode("utf-8", "replace")
        head = text.split("\n\n", 1)[0]
        return [ln.partition(":")[2].strip() for ln in head.splitlines() if ln.startswith("Requires-Dist:")]
    report = CACHE / f"report-{dist}-{version}.json"
    if not report.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = report.with_name(f".{report.name}.tmp")
        cmd = [sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--no-deps", "--ignore-installed",
               "--only-binary=:all:", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux2014_x86_64",
               "--python-version", "3.12",
               "--target", str(CACHE / ".target"), "--report", str(tmp), f"{dist}=={version}"]  # fmt: skip
        if subprocess.run(cmd, capture_output=True, timeout=300).returncode != 0:
            pytest.skip(f"the registry gave no metadata for {dist}=={version}")
        tmp.rename(report)
    meta = json.loads(report.read_text())["install"][0]["metadata"]
    return list(meta.get("requires_dist") or [])


REAL = [("sglang", v) for v in ("0.5.2", "0.5.9", "0.5.10", "0.5.14", "0.5.20", "0.5.23")] + [
    ("torch", "2.9.1"), ("torch", "2.8.0"), ("flashinfer-python", "0.6.3"), ("sgl-kernel", "0.3.21")
]  # fmt: skip


@pytest.mark.registry
@pytest.mark.parametrize(("dist", "version"), REAL)
def test_lean_answers_equal_packaging_on_real_requires_dist(dist: str, version: str) -> None:
    lines = requires_dist_of(dist, version)
    stats = {"read": 0, "fallback": 0, "met": 0}
    for line in lines:
        req = Requirement(line)
        specs = [s.version for s in req.specifier]
        installs = [*specs, *(f"{v}+cu128" for v in specs), "0.1", "99.0"]
        for python, machine in ENVS:
            assert_agrees(line, python, machine, stats)
            got = lean_req.read_line(line, lean_req.environment(python, machine))
            if got is None:
                continue
            for installed in installs:
                met = lean_req.spec_met(got[1], installed)
                if met is not None:
                    assert packaging_contains(req, installed) is True, (line, installed)
    assert not lines or stats["read"] > 0, stats


# the check end to end: a target environment written into tmp_path


def write_dist(site: Path, name: str, version: str, requires: list[str] = ()) -> None:  # type: ignore[assignment]
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir(parents=True)
    body = "".join(f"Requires-Dist: {r}\n" for r in requires)
    (d / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n{body}\nbody\n")


MIXED = [
    "plain-ok",
    "ranged>=1.0,<2",
    "torch==2.9.1",  # installed 2.9.1+cu128: met
    "pinned-post==0.6.7.post2",
    "platform-sys==1.0; platform_system == 'Linux'",  # packaging's marker
    "compat~=1.2",  # packaging's specifier
    "paren (>=1.0)",  # packaging's syntax
    "missing-dep>=1",  # fails: packaging words it
    "too-old>=3.0",  # fails
    "sgl-kernel==0.3.21",  # a known pin mismatch: warns
    "bad line ((",  # unknown
    "arm-only; platform_machine == 'aarch64'",
    "extra-only; extra == 'test'",
    "old-py; python_version < '3.9'",
]


@pytest.fixture
def mixed_env(tmp_path: Path) -> list[str]:
    site = tmp_path / "site"
    write_dist(site, "sglang", "0.5.9", MIXED)
    installed = [("plain-ok", "1"), ("ranged", "1.5"), ("torch", "2.9.1+cu128"), ("pinned-post", "0.6.7.post2"),
                 ("platform-sys", "1.0"), ("compat", "1.4"), ("paren", "2.0"), ("too-old", "2.5"),
                 ("sgl-kernel", "0.3.20")]  # fmt: skip
    for name, version in installed:
        write_dist(site, name, version)
    return [str(site)]


@pytest.mark.parametrize(("python", "machine"), ENVS)
def test_check_equals_the_packaging_only_check(
    mixed_env: list[str], monkeypatch: pytest.MonkeyPatch, python: str | None, machine: str | None
) -> None:
    known = {"torch", "sgl-kernel"}
    lean = deps.check_dependencies(HostView(), mixed_env, None, known, target=(python, machine))
    monkeypatch.setattr(lean_req, "read_line", lambda line, env: None)
    only_packaging = deps.check_dependencies(HostView(), mixed_env, None, known, target=(python, machine))
    assert lean == only_packaging
    assert {r.status for r in lean} >= {"fail", "warn", "unknown"}


def test_fallback_lines_reach_packaging(mixed_env: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []
    real = Requirement

    def spy(line: str) -> Requirement:
        seen.append(line)
        return real(line)

    import packaging.requirements

    monkeypatch.setattr(packaging.requirements, "Requirement", spy)
    deps.check_dependencies(HostView(), mixed_env, None, {"torch", "sgl-kernel"}, target=("3.12.3", "x86_64"))
    assert set(seen) == {
        "platform-sys==1.0; platform_system == 'Linux'", "compat~=1.2", "paren (>=1.0)", "missing-dep>=1",
        "too-old>=3.0", "sgl-kernel==0.3.21", "bad line ((",
    }  # fmt: skip


def test_a_healthy_check_imports_no_packaging_requirements(tmp_path: Path) -> None:
    site = tmp_path / "site"
    not_arm = 'not-arm==0.8.0; sys_platform != "linux" or (sys_platform == "linux" and platform_machine != "aarch64")'
    lines = ["plain-ok", "ranged>=1.0,<2", "torch==2.9.1", "pinned-post==0.6.7.post2",
             "arm-only; platform_machine == 'aarch64'", "extra-only; extra == 'test'", not_arm]  # fmt: skip
    write_dist(site, "sglang", "0.5.9", lines)
    installed = [("plain-ok", "1"), ("ranged", "1.5"), ("torch", "2.9.1+cu128"), ("pinned-post", "0.6.7.post2"),
                 ("not-arm", "0.8.0")]  # fmt: skip
    for name, version in installed:
        write_dist(site, name, version)
    code = (
        "import sys\n"
        "from stackcheck.launch.preflight.deps import check_dependencies\n"
        "from stackcheck.readers.fsview import HostView\n"
        f"r = check_dependencies(HostView(), [{str(site)!r}], None, set(), target=('3.12.3', 'x86_64'))\n"
        "print(r[0].status, r[0].observed['requirements_checked'], len(r))\n"
        "print(sorted(m for m in sys.modules if m.startswith('packaging.') and m != 'packaging.version'"
        " and not m.startswith('packaging._')))\n"
    )
    root = Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=root, check=True)
    assert out.stdout.splitlines() == ["ok 5 1", "[]"], out.stdout + out.stderr


def test_the_gate_of_a_healthy_target_imports_no_packaging_markers(tmp_path: Path) -> None:
    """End to end: `gate --python VENV` where VENV holds an SGLang whose requirements are met answers the
    dependency check ok without importing packaging.requirements or packaging.markers (before: both, ~35 ms)."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next((venv / "lib").glob("python3*/site-packages"))
    write_dist(site, "sglang", "0.5.9", ["plain-ok", "ranged>=1.0,<2", "extra-only; extra == 'test'"])
    write_dist(site, "plain-ok", "1")
    write_dist(site, "ranged", "1.5")
    root = Path(__file__).resolve().parents[2]
    argv = ["gate", "--dry-run", "--format", "json", "--python", str(venv / "bin" / "python"), "--",
            "python", "-m", "sglang.launch_server", "--model-path", "x"]  # fmt: skip
    out = subprocess.run([sys.executable, "-X", "importtime", "-m", "stackcheck", *argv], capture_output=True,
                         text=True, cwd=root, timeout=120)  # fmt: skip
    doc = json.loads(out.stdout)
    (dep,) = [c for c in doc["preflight"]["checks"] if c["check"] == "dependencies"]
    assert dep["status"] == "ok" and dep["observed"] == {"requirements_checked": 2}, dep
    imported = {line.rsplit("|", 1)[-1].strip() for line in out.stderr.splitlines() if "|" in line}
    assert not imported & {"packaging.requirements", "packaging.markers", "packaging.specifiers"}
