"""`--image` end to end through the command line: images built here (tar and JSON, two and more layers,
whiteouts, an upper layer replacing torch), read by `stackcheck audit|probe|gate --image`, with --deep,
with --host-facts, with the image's own command choosing the interpreter; bad images are one line, exit 2."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from imagebuild import docker_save, layer_tar, oci_layout, snapshot

REPO = Path(__file__).parent.parent.parent
DATA = Path(__file__).parent.parent / "data"
CASES = Path(__file__).parent.parent / "cases"
SITE = "usr/local/lib/python3.12/dist-packages"
SECRET = "hf_QmXr7Lw2PzK9sTfYb3NcVd8HjAe4UgRo"  # a token-shaped value in the image's Env: never reported
HOST = ["--assume-gpu", "9.0x8", "--assume-driver", "580.95.05"]


def run_cli(*args: str, cwd: str = "/") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON")}
    env["PYTHONPATH"] = str(REPO)
    return subprocess.run(
        [sys.executable, "-m", "stackcheck", *args], capture_output=True, text=True, env=env, timeout=180, cwd=cwd
    )


def meta(name: str, version: str) -> bytes:
    return f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode()


def version_py(version: str, cuda: str) -> bytes:
    return f"__version__ = '{version}'\ndebug = False\ncuda: str = '{cuda}'\ngit_version = 'abc'\n".encode()


def base_layer() -> list[tuple[Any, ...]]:
    return [
        ("file", "etc/debian_version", b"12.5\n"),
        ("file", "etc/os-release", b'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12"\n'),
        ("file", "etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n"),
        ("file", "usr/bin/python3.12", b"\x7fELF", 0o755),
        ("symlink", "usr/bin/python3", "python3.12"),
        ("file", "usr/lib/python3.12/os.py", b""),
        ("dir", "usr/lib/python3/dist-packages"),
    ]


def stack_layers(torch_lib: bytes | None = None) -> list[bytes]:
    """Three layers: a Debian base with Python 3.12; torch 2.9.1+cu128 and sglang pip-installed; an upper
    layer that replaces torch by 2.11.0+cu130 (a whiteout on the old dist-info, a new version.py) and
    removes a file of the lower layer."""
    lower = [
        ("file", f"{SITE}/torch-2.9.1.dist-info/METADATA", meta("torch", "2.9.1")),
        ("file", f"{SITE}/torch/version.py", version_py("2.9.1+cu128", "12.8")),
        ("file", f"{SITE}/torch/stale.txt", b"from the lower layer"),
        ("file", f"{SITE}/sglang-0.5.9.dist-info/METADATA", meta("sglang", "0.5.9")),
        ("dir", f"{SITE}/sglang"),
    ]
    upper: list[tuple[Any, ...]] = [
        ("whiteout", f"{SITE}/torch-2.9.1.dist-info"),
        ("whiteout", f"{SITE}/torch/stale.txt"),
        ("file", f"{SITE}/torch-2.11.0.dist-info/METADATA", meta("torch", "2.11.0")),
        ("file", f"{SITE}/torch/version.py", version_py("2.11.0+cu130", "13.0")),
    ]
    if torch_lib is not None:
        upper.append(("file", f"{SITE}/torch/lib/libtorch_cuda.so", torch_lib, 0o755))
    return [layer_tar(base_layer()), layer_tar(lower), layer_tar(upper)]


ENV = [
    "PATH=/usr/local/bin:/usr/bin:/bin",
    "CUDA_VERSION=13.0.1",
    "NVIDIA_REQUIRE_CUDA=cuda>=13.0 brand=tesla,driver>=535,driver<536",
    "NVIDIA_VISIBLE_DEVICES=all",
    "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
    f"HF_TOKEN={SECRET}",
]


@pytest.fixture(scope="module")
def images(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same three-layer image as a docker save (legacy layout) and as a gzip OCI layout (tar)."""
    d = tmp_path_factory.mktemp("images")
    layers = stack_layers()
    legacy = docker_save(d / "serve.tar", layers, env=ENV, labels={"org.opencontainers.image.version": "1.2"})
    oci = oci_layout(d / "serve-oci.tar", [{"layers": layers, "env": ENV, "gzip": True}], as_tar=True)
    return {"docker-save": legacy, "oci-tar": oci}


def report_of(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


@pytest.mark.parametrize("kind", ["docker-save", "oci-tar"])
def test_audit_reads_the_upper_layers_torch(images: dict[str, Path], kind: str) -> None:
    image = images[kind]
    before = snapshot(image.parent)
    proc = run_cli("audit", "--image", str(image), "--format", "json", *HOST)
    doc = report_of(proc)
    facts = doc["facts"]
    torch = facts["packages"]["torch"]
    assert (torch["installed"], torch["version"], torch["cuda"]) == (True, "2.11.0+cu130", "13.0")
    assert torch["location"] == "/" + SITE
    assert facts["packages"]["sglang"]["version"] == "0.5.9"
    py = facts["python"]
    assert (py["executable"], py["prefix"], py["learned"]) == ("/usr/bin/python3", "/usr", "static")
    assert py["chosen_by"] == "python3 on the image's PATH"
    assert "/" + SITE in py["sys_path"]
    image_facts = facts["image"]
    assert image_facts["format"] == kind and len(image_facts["layers"]) == 3
    assert image_facts["reference"] and image_facts["id"].startswith("sha256:")
    assert image_facts["env"]["CUDA_VERSION"] == "13.0.1"
    assert image_facts["env"]["NVIDIA_VISIBLE_DEVICES"] == "all"
    assert image_facts["nvidia_require"]["requirements"][0]["variable"] == "NVIDIA_REQUIRE_CUDA"
    assert "HF_TOKEN" not in image_facts["env"] and SECRET not in proc.stdout and SECRET not in proc.stderr
    assert facts["system"]["os"] == "Debian GNU/Linux 12" and facts["system"]["container"] == "image"
    checks = {c["id"]: c["status"] for c in doc["checks"]}
    assert checks["image-nvidia-require"] == "ok"  # CUDA 13.0 on 580.95.05
    probes = {p["name"]: p["status"] for p in doc["probes"]}
    assert probes["nvml"] == "skipped"  # the driver and GPUs are assumed: the runner's own are not read
    assert snapshot(image.parent) == before  # nothing extracted, nothing written
    from jsonschema import Draft202012Validator

    from stackcheck.knowledge.validate import _registry

    registry, schemas = _registry()
    Draft202012Validator(schemas["report.schema.json"], registry=registry).validate(doc)
    text = run_cli("audit", "--image", str(image), *HOST).stdout
    assert f"env:   packages from image {image}:/usr (Python 3.12, chosen by python3 on the image's PATH)" in text
    image_line = next(line for line in text.splitlines() if line.startswith("image: "))
    assert "serve:1.0" in image_line and "3 layers" in image_line and "CUDA_VERSION 13.0.1" in image_line
    assert SECRET not in text


def test_nvidia_require_is_judged_against_the_driver(images: dict[str, Path]) -> None:
    doc = report_of(
        run_cli("audit", "--image", str(images["docker-save"]), "--format", "json", "--assume-gpu", "9.0x8",
                "--assume-driver", "550.54.15")
    )  # fmt: skip
    check = next(c for c in doc["checks"] if c["id"] == "image-nvidia-require")
    # the driver and GPUs assumed, the host's container toolkit not read: a refusal is not certain (a CDI-mode
    # runtime starts it unchecked), so unknown with what to give, never failed
    assert check["status"] == "unknown", check
    assert "unsatisfied condition" in json.dumps(check) and "--host-facts" in json.dumps(check)
    # a gate on that fleet refuses: the container would not start; nothing is executed
    marker = Path(images["docker-save"]).parent / "ran"
    proc = run_cli(
        "gate", "--image", str(images["docker-save"]), "--assume-gpu", "9.0x8", "--assume-driver", "550.54.15",
        "--require", "torch-symm-mem", "--", "touch", str(marker),
    )  # fmt: skip
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "REFUSE image-nvidia-require" in proc.stdout and not marker.exists()
    # the same gate on a new enough driver allows, and still runs nothing (the server runs in a container)
    proc = run_cli(
        "gate", "--image", str(images["docker-save"]), *HOST, "--require", "torch-symm-mem", "--", "touch", str(marker)
    )
    assert "check image-nvidia-require: ok" in proc.stdout and not marker.exists()


def test_host_facts_give_the_driver_and_gpus(images: dict[str, Path], tmp_path: Path) -> None:
    host = CASES / "h200-newest" / "facts.json"
    doc = report_of(run_cli("audit", "--image", str(images["oci-tar"]), "--host-facts", str(host), "--format", "json"))
    facts = doc["facts"]
    assert facts["driver"]["version"] == "580.159.04" and len(facts["gpus"]) == 8
    names = [p["name"] for p in doc["probes"]]
    assert names[0] == "host-facts" and "nvml" not in names
    assert facts["packages"]["torch"]["version"] == "2.11.0+cu130"
    assert next(c for c in doc["checks"] if c["id"] == "image-nvidia-require")["status"] == "ok"


def test_host_facts_with_the_toolkit_judge_the_refusal(images: dict[str, Path], tmp_path: Path) -> None:
    # a saved host whose driver is too old for the image: failed where its toolkit (legacy) was read, unknown with
    # what to give where the host facts lack it
    doc = json.loads((CASES / "image-driver-too-old" / "facts.json").read_text())
    with_toolkit = tmp_path / "with.json"
    with_toolkit.write_text(json.dumps(doc))
    del doc["facts"]["container_toolkit"]
    without = tmp_path / "without.json"
    without.write_text(json.dumps(doc))

    def check(host: Path) -> dict[str, Any]:
        out = report_of(
            run_cli("audit", "--image", str(images["oci-tar"]), "--host-facts", str(host), "--format", "json")
        )
        return dict(next(c for c in out["checks"] if c["id"] == "image-nvidia-require"))

    assert check(with_toolkit)["status"] == "failed"
    unread = check(without)
    assert unread["status"] == "unknown" and "container toolkit was not read" in json.dumps(unread)


def _ld_cache(entries: list[tuple[str, str]]) -> bytes:
    """An ld.so.cache in glibc's new format (header, entries, string table), x86-64 libc6 flags."""
    header = 48
    table_end = header + 24 * len(entries)
    strings = b""
    offsets = []
    for soname, path in entries:
        key = table_end + len(strings)
        strings += soname.encode() + b"\0"
        value = table_end + len(strings)
        strings += path.encode() + b"\0"
        offsets.append((key, value))
    out = struct.pack("<20sIIB3xI12x", b"glibc-ld.so.cache1.1", len(entries), len(strings), 2, 0)
    for key, value in offsets:
        out += struct.pack("<iIIIQ", 0x0303, key, value, 0, 0)
    return out + strings


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_deep_reads_binaries_and_resolves_libraries_inside_the_image(tmp_path: Path) -> None:
    """--deep: the fatbin of libtorch_cuda.so is read through the image (compared with the host reader on
    the same bytes); its libcudart.so.13 resolves through the image's own ld.so.cache and, when the
    image's Env sets LD_LIBRARY_PATH, through that; the CUDA toolkit of the image is found."""
    from stackcheck.readers.binaries import scan_file

    build = tmp_path / "build"
    build.mkdir()
    (build / "dep.c").write_text("int cudart_stub(void) { return 13; }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-Wl,-soname,libcudart.so.13", "-o", str(build / "libcudart.so.13"),
                    str(build / "dep.c")], check=True, timeout=60)  # fmt: skip
    (build / "user.c").write_text("int cudart_stub(void);\nint use(void) { return cudart_stub(); }\n")
    subprocess.run(["gcc", "-shared", "-fPIC", "-o", str(build / "libuser.so"), str(build / "user.c"),
                    f"-L{build}", "-Wl,--no-as-needed", "-l:libcudart.so.13"], check=True, timeout=60)  # fmt: skip
    fatbin = (DATA / "fatbin" / "libk.so").read_bytes()
    cudart = (build / "libcudart.so.13").read_bytes()
    cuda_layer = layer_tar(
        [
            ("file", "usr/local/cuda-13.0/version.json", b'{"cuda": {"name": "CUDA SDK", "version": "13.0.1"}}'),
            ("file", "usr/local/cuda-13.0/lib64/libcudart.so.13", cudart, 0o755),
            ("symlink", "usr/local/cuda", "cuda-13.0"),
            ("file", "etc/ld.so.cache", _ld_cache([("libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13")])),
            ("file", "opt/other/libcudart.so.13", cudart, 0o755),
        ]
    )
    layers = stack_layers(torch_lib=fatbin)
    layers.insert(1, cuda_layer)
    layers.append(layer_tar([("file", f"{SITE}/torch/lib/libc10_cuda.so", (build / "libuser.so").read_bytes(),
                              0o755)]))  # fmt: skip
    host = scan_file(DATA / "fatbin" / "libk.so", "torch/lib/libtorch_cuda.so")
    assert host is not None and host["sass"]
    for name, env in (("cache", ENV), ("ldpath", [*ENV, "LD_LIBRARY_PATH=/opt/other"])):
        image = docker_save(tmp_path / f"{name}.tar", layers, env=env)
        doc = report_of(run_cli("audit", "--image", str(image), "--deep", "--format", "json", *HOST))
        facts = doc["facts"]
        files = {f["path"]: f for f in facts["binaries"]["torch"]["files"]}
        got = files["torch/lib/libtorch_cuda.so"]
        assert (got["sass"], got["ptx"], got["bytes_read"]) == (host["sass"], host["ptx"], host["bytes_read"])
        objects = {o["path"]: o for o in facts["libs"]["packages"]["torch"]["objects"]}
        c10_cuda = next(o for p, o in objects.items() if p.endswith("libc10_cuda.so"))
        (dep,) = [x for x in c10_cuda["libs"] if x["needed"] == "libcudart.so.13"]
        if name == "cache":
            assert dep["via"] == "ld.so.cache" and dep["winner"] == "/usr/local/cuda/lib64/libcudart.so.13"
        else:
            assert dep["via"] == "LD_LIBRARY_PATH" and dep["winner"] == "/opt/other/libcudart.so.13"
        assert not str(dep["winner"]).startswith(str(tmp_path))  # a path inside the image, never the host's
        toolkits = {t["path"]: t for t in facts["cuda_toolkits"]}
        assert toolkits["/usr/local/cuda"]["version"] == "13.0.1"  # /usr/local/cuda -> cuda-13.0, once
        assert facts["image"]["env"].get("LD_LIBRARY_PATH") == ("/opt/other" if name == "ldpath" else None)


def test_the_images_command_chooses_the_interpreter(tmp_path: Path) -> None:
    """A venv at /opt/serve run by the image's Entrypoint, while python3 on PATH is the system's with
    another torch: the audit reads the venv, and says the image's command chose it. gate --image with no
    command derives the launch from Entrypoint + Cmd."""
    venv_site = "opt/serve/lib/python3.12/site-packages"
    serve = [
        ("file", "opt/serve/pyvenv.cfg", b"home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.3\n"),
        ("symlink", "opt/serve/bin/python", "/usr/bin/python3.12"),
        ("file", f"{venv_site}/torch-2.11.0.dist-info/METADATA", meta("torch", "2.11.0")),
        ("file", f"{venv_site}/torch/version.py", version_py("2.11.0+cu130", "13.0")),
        ("file", f"{venv_site}/sglang-0.5.9.dist-info/METADATA", meta("sglang", "0.5.9")),
        ("file", f"{SITE}/torch-2.9.1.dist-info/METADATA", meta("torch", "2.9.1")),
        ("file", f"{SITE}/torch/version.py", version_py("2.9.1+cu128", "12.8")),
    ]
    container = {
        "Entrypoint": ["/opt/serve/bin/python", "-m", "sglang.launch_server"],
        "Cmd": ["--model-path", "/models/m", "--tp", "8", "--api-key", "sk-secret-value-123456"],
        "WorkingDir": "/srv",
    }
    image = docker_save(tmp_path / "ep.tar", [layer_tar(base_layer()), layer_tar(serve)], env=ENV[:2],
                        container=container)  # fmt: skip
    doc = report_of(run_cli("audit", "--image", str(image), "--format", "json", *HOST))
    py = doc["facts"]["python"]
    assert (py["executable"], py["prefix"], py["kind"]) == ("/opt/serve/bin/python", "/opt/serve", "venv")
    assert py["chosen_by"] == "the image's command"
    assert doc["facts"]["packages"]["torch"]["version"] == "2.11.0+cu130"
    shown = doc["facts"]["image"]["command"]
    assert shown[:3] == container["Entrypoint"] and "sk-secret-value-123456" not in json.dumps(doc)
    assert doc["facts"]["image"]["workdir"] == "/srv"
    # --python still wins, inside the image
    doc = report_of(run_cli("audit", "--image", str(image), "--python", "/usr/bin/python3", "--format", "json", *HOST))
    assert doc["facts"]["python"]["chosen_by"] == "--python"
    assert doc["facts"]["packages"]["torch"]["version"] == "2.9.1+cu128"
    # the gate derives the launch from the image's command (tp 8) and prints it masked; it runs nothing
    proc = run_cli("gate", "--image", str(image), "--format", "json", *HOST)
    decision = json.loads(proc.stdout)
    assert decision["derived"]["launch"].get("tp") == 8, decision["derived"]
    assert "sk-secret-value-123456" not in proc.stdout and decision["image"] == str(image)
    assert "Entrypoint + Cmd" in decision["note"]


def test_bad_images_are_one_line_exit_2(tmp_path: Path, images: dict[str, Path]) -> None:
    good = images["docker-save"].read_bytes()
    (tmp_path / "cut.tar").write_bytes(good[: len(good) // 2])
    (tmp_path / "junk.tar").write_bytes(os.urandom(4096))
    (tmp_path / "empty.tar").write_bytes(b"")
    (tmp_path / "dir").mkdir()
    (tmp_path / "gz.tar").write_bytes(b"\x1f\x8b\x08\x00" + b"\0" * 600)
    cases = [
        (["--image", str(tmp_path / "cut.tar")], "truncated"),
        (["--image", str(tmp_path / "junk.tar")], "not a tar header"),
        (["--image", str(tmp_path / "empty.tar")], "0 bytes"),
        (["--image", str(tmp_path / "missing.tar")], "No such file"),
        (["--image", str(tmp_path / "dir")], "not a docker save archive or an OCI image layout"),
        (["--image", str(tmp_path / "gz.tar")], "gunzip"),
        (["--image", str(images["oci-tar"]), "--platform", "linux/s390x"], "no image for platform linux/s390x"),
        (["--image", str(images["oci-tar"]), "--platform", "Linux/../x"], "expected OS/ARCH"),
        (["--platform", "linux/arm64"], "only with --image"),
        (["--image", str(images["oci-tar"]), "--root", str(tmp_path)], "give one of them"),
        (["--image", str(images["oci-tar"]), "--python", "/usr/bin/nope"], "no such file"),
        (["--image", str(images["oci-tar"]), "--python", "relative/python"], "absolute path inside the image"),
    ]
    for verb in ("audit", "gate"):
        for args, message in cases:
            extra = ["--require", "torch-symm-mem"] if verb == "gate" else []
            proc = run_cli(verb, *args, *extra, *HOST)
            assert proc.returncode == 2, (verb, args, proc.stdout, proc.stderr)
            lines = proc.stderr.strip().splitlines()
            assert len(lines) == 1 and message in lines[0], (verb, args, proc.stderr)
            assert "Traceback" not in proc.stderr and proc.stdout == ""


def test_source_tables_are_read_from_the_image(tmp_path: Path) -> None:
    """SGLang's gate table read with ast from the image's own sources: the release table in a lower layer,
    then an upper layer that patches it (key 12 added), as a derived image would."""
    dc = f"{SITE}/sglang/srt/distributed/device_communicators"
    table = "MiB = 1024 * 1024\nTORCH_SYMM_MEM_ALL_REDUCE_MAX_SIZES = {{\n{rows}}}\n"
    release = table.format(rows="    9: {2: 64 * MiB},\n    10: {2: 64 * MiB},\n")
    patched = table.format(rows="    9: {2: 64 * MiB},\n    10: {2: 64 * MiB},\n    12: {2: 64 * MiB},\n")
    lower = [
        ("file", f"{SITE}/sglang-0.5.9.dist-info/METADATA", meta("sglang", "0.5.9")),
        ("file", f"{dc}/all_reduce_utils.py", release.encode()),
    ]
    upper = [("file", f"{dc}/all_reduce_utils.py", patched.encode())]
    for name, layers in (("release", [lower]), ("patched", [lower, upper])):
        image = docker_save(tmp_path / f"{name}.tar", [layer_tar(base_layer()), *map(layer_tar, layers)], env=ENV[:1])
        doc = report_of(run_cli("probe", "--image", str(image), "--format", "json"))
        gate = doc["facts"]["source_tables"]["sglang.torch_symm_mem_sizes"]
        assert gate["file"] == "sglang/srt/distributed/device_communicators/all_reduce_utils.py", gate
        assert gate["value"] == ([9, 10] if name == "release" else [9, 10, 12]), gate


def test_an_image_without_python_fails_closed(tmp_path: Path) -> None:
    image = docker_save(tmp_path / "nopy.tar", [layer_tar([("file", "bin/sh", b"#!", 0o755)])], env=["PATH=/bin"])
    text = run_cli("audit", "--image", str(image), *HOST).stdout
    assert "stack: packages unknown" in text and "no python3 or python on the image's PATH (/bin)" in text
    proc = run_cli("gate", "--image", str(image), *HOST, "--require", "cuda-graph")
    assert proc.returncode == 1 and "decision: refuse" in proc.stdout, proc.stdout + proc.stderr


def test_started_by_decides_the_checker(images: dict[str, Path], tmp_path: Path) -> None:
    # --started-by: Docker's device request runs the hook, which refuses an unmet requirement whatever the mode
    # (failed without toolkit facts); CDI devices the engine injects: nothing checks, the container starts
    old = ["--assume-gpu", "9.0x8", "--assume-driver", "550.54.15"]

    def check(*more: str) -> dict[str, Any]:
        out = report_of(run_cli("audit", "--image", str(images["docker-save"]), *old, *more, "--format", "json"))
        return dict(next(c for c in out["checks"] if c["id"] == "image-nvidia-require"))

    gpus = check("--started-by", "docker-gpus")
    assert gpus["status"] == "failed" and "docker-gpus" in json.dumps(gpus)
    assert check("--started-by", "cdi-device")["status"] == "ok"
    assert check("--started-by", "nvidia-runtime")["status"] == "unknown"  # the runtime's mode: not read
    marker = tmp_path / "ran"
    gate = ["gate", "--image", str(images["docker-save"]), *old, "--require", "torch-symm-mem"]
    proc = run_cli(*gate, "--started-by", "cdi-device", "--", "touch", str(marker))
    assert "check image-nvidia-require: ok" in proc.stdout and not marker.exists()
    proc = run_cli(*gate, "--started-by", "docker-gpus", "--", "touch", str(marker))
    assert proc.returncode == 1 and "REFUSE image-nvidia-require" in proc.stdout and not marker.exists()


def test_started_by_bad_or_without_an_image_is_exit_2(images: dict[str, Path]) -> None:
    bad = run_cli("audit", "--image", str(images["docker-save"]), *HOST, "--started-by", "docker-gpu")
    assert bad.returncode == 2 and bad.stdout == "" and "--started-by: invalid choice: 'docker-gpu'" in bad.stderr
    for verb in (["audit"], ["gate", "--require", "cuda-graph"]):
        alone = run_cli(*verb, "--started-by", "docker-gpus")
        assert alone.returncode == 2 and alone.stdout == ""
        assert alone.stderr.strip().count("\n") == 0 and "--started-by: no image is audited" in alone.stderr


def test_started_by_choices_are_require_py_s() -> None:
    from stackcheck.commands import audit, gate
    from stackcheck.image.require import STARTED_BY

    assert tuple(STARTED_BY) == audit.STARTED_BY_CHOICES == gate.STARTED_BY_CHOICES
    schema = json.loads((REPO / "schemas" / "report.schema.json").read_text())
    image = schema["$defs"]["facts"]["properties"]["image"]
    assert image["properties"]["started_by"]["enum"] == list(STARTED_BY)
