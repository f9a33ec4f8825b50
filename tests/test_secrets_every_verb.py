"""Nothing secret leaves the box, verb by verb: secrets and terminal controls planted where a user or the box
can put them (a saved facts file fed back, a fleet's reports, an image's labels, a mistyped command line, an
error's quoted value, a manifest directory's name) never reach stdout, stderr or a file written.

Every planted secret holds the marker SEKRIT; an output is clean when it holds no SEKRIT and no raw
control (ESC, BEL, C1 CSI, a bidi override). Each test here failed before stackcheck.redact was applied on
that path (see the commit that added this file); tests/test_output_safety.py holds the older ones."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_process import clean_env, run_stackcheck

from stackcheck.redact import MASK

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "tests" / "cases" / "h200-newest" / "facts.json"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
CONTROLS = ("\x1b", "\x07", "\x9b", "\u202e")
OSC = "\x1b]0;PWN\x07\u202e\x9b"


def run(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return run_stackcheck(*args, env=clean_env(**(env or {})), cwd=cwd, text=False)


def assert_clean(data: bytes | str, where: str) -> None:
    text = data.decode("utf-8", errors="backslashreplace") if isinstance(data, bytes) else data
    assert "SEKRIT" not in text, (where, text[max(0, text.find("SEKRIT") - 200) : text.find("SEKRIT") + 40])
    for raw in CONTROLS:
        assert raw not in text, (where, repr(raw), text[max(0, text.find(raw) - 100) : text.find(raw) + 20])


def assert_run_clean(proc: subprocess.CompletedProcess[bytes], *files: Path) -> None:
    assert proc.returncode in (0, 1, 2), proc.stderr.decode(errors="replace")[-2000:]
    assert b"Traceback" not in proc.stderr
    assert_clean(proc.stdout, "stdout")
    assert_clean(proc.stderr, "stderr")
    for f in files:
        assert_clean(f.read_bytes(), str(f))


def hostile_facts(tmp_path: Path) -> Path:
    """A saved report as a user may feed it back: secrets in its env (by name and by shape), a host name,
    a tool's error and a version, controls in a GPU name."""
    doc = json.loads(H200.read_text())
    facts = doc["facts"]
    facts["system"]["env"] = {
        "HF_TOKEN": "hf_SEKRITfactsenv1234",
        "SGLANG_API_KEY": "SEKRITfactsapikey",
        "MY_SERVICE_PASSWORD": "SEKRITfactspw",
        "SGLANG_MIRROR": "https://carol:SEKRITfactsurl@mirror.example/x",
        "SGLANG_HOST": "sk-SEKRITfactsvalue1234",
        "NCCL_DEBUG": "INFO" + OSC,
        "NCCL_SOCKET_IFNAME": "eth0",
    }
    facts["gpus"][0]["name"] = "NVIDIA H200" + OSC
    facts["driver"]["error"] = (
        "Authorization: Bearer SEKRITbearer0123456789 api_key=SEKRITdriverkey"
        # irel4: a scheme in any case and spacing, an escaped JSON text, a value after a terminal escape
        ' bearer  SEKRITlow1 BASIC SEKRITbasic2x9 token SEKRITtok3x9 {\\"HF_TOKEN\\": \\"SEKRITjson4\\"}'
        " Bearer \\x1b[0mSEKRITescaped5 https://u:SEKRITurl6@h/x"
    )
    facts["packages"]["flashinfer-python"]["version"] = "0.5.3+ghp_SEKRITversion012345"
    doc["host"] = {"hostname": "node-ghp_SEKRIThostname012345" + OSC, "collected_at": "2026-12-01T00:00:00Z"}
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


# ---- a saved facts file fed back: every verb that reads one ------------------------------------------------


VERBS_OF_FACTS = [
    *[["audit", "--format", fmt] for fmt in ("text", "json", "markdown", "prometheus", "nfd")],
    *[["probe", "--format", fmt] for fmt in ("text", "json", "markdown")],
    *[["plan", "--format", fmt] for fmt in ("text", "json", "markdown")],
    *[["recommend", "--format", fmt] for fmt in ("text", "json", "shell")],
    ["gate", "--dry-run", "--format", "json", "--", *LAUNCH],
    ["explain", "attention-flashinfer", "--format", "json"],
    ["facts", "check"],
]


@pytest.mark.parametrize("verb", VERBS_OF_FACTS, ids=lambda v: "-".join(w for w in v[:3] if w != "--"))
def test_a_saved_facts_file_never_brings_its_secrets_back(tmp_path: Path, verb: list[str]) -> None:
    facts = str(hostile_facts(tmp_path))
    if verb[:2] == ["facts", "check"]:
        args = [*verb, facts]
    elif "--" in verb:
        i = verb.index("--")
        args = [*verb[:i], "--facts", facts, *verb[i:]]
    else:
        args = [*verb, "--facts", facts]
    written = []
    if verb[0] in ("audit", "probe", "plan", "recommend"):
        written.append(tmp_path / "out.txt")
        args[1:1] = ["--output", str(written[0])]
    if verb[0] == "recommend":
        written.append(tmp_path / "plan-facts.json")
        args[1:1] = ["--plan-facts", str(written[1])]
    assert_run_clean(run(*args), *written)


def test_saved_facts_keep_what_the_probes_keep(tmp_path: Path) -> None:
    """The masking is the probes' own rule: harmless variables, the GPU's name (escaped) and the masked
    version's prefix stay; a secret-looking variable is dropped, a URL's password masked."""
    proc = run("probe", "--facts", str(hostile_facts(tmp_path)), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    facts = json.loads(proc.stdout)["facts"]
    assert facts["system"]["env"] == {
        "SGLANG_MIRROR": f"https://{MASK}@mirror.example/x",
        "NCCL_DEBUG": "INFO" + OSC,  # the JSON value itself: escaped in the text, as before
        "NCCL_SOCKET_IFNAME": "eth0",
    }
    assert facts["gpus"][0]["name"] == "NVIDIA H200" + OSC
    assert facts["packages"]["flashinfer-python"]["version"] == f"0.5.3+ghp_{MASK}"
    saved = json.loads(H200.read_text())["facts"]
    assert facts["packages"]["torch"]["version"] == saved["packages"]["torch"]["version"]


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_diff_and_host_facts_never_show_a_saved_secret(tmp_path: Path, fmt: str) -> None:
    facts = str(hostile_facts(tmp_path))
    assert_run_clean(run("diff", facts, "--facts", str(H200), "--format", fmt))
    assert_run_clean(run("diff", str(H200), "--facts", facts, "--format", fmt))
    if fmt == "json":
        assert_run_clean(run("audit", "--host-facts", facts, "--format", "json"))


# ---- fleet: reports from many boxes ---------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "csv"])
def test_fleet_never_shows_a_secret_from_its_reports(tmp_path: Path, fmt: str) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    doc = json.loads(hostile_facts(tmp_path).read_text())
    (reports / "a.json").write_text(json.dumps(doc))
    (reports / "b.jsonl").write_text(json.dumps(doc) + "\n")  # the same host again: a duplicate, named
    bad = dict(doc, schema_version="sk-SEKRITschemaversion1")
    (reports / "c.json").write_text(json.dumps(bad))
    out = tmp_path / f"fleet.{fmt}"
    proc = run("fleet", str(reports), "--format", fmt, "--jobs", "1", "--output", str(out))
    assert_run_clean(proc, out)
    assert "node-ghp_" in out.read_text()  # the host is still named, its secret part masked


# ---- Prometheus: a file for node_exporter, and a text for the terminal without --output ------------------


def test_prometheus_labels_carry_no_raw_control(tmp_path: Path) -> None:
    proc = run("audit", "--facts", str(hostile_facts(tmp_path)), "--format", "prometheus")
    assert_run_clean(proc)
    text = proc.stdout.decode()
    assert 'model="NVIDIA H200\\\\x1b]0;PWN\\\\x07\\\\u202e\\\\x9b"' in text  # the escape, itself escaped


# ---- error lines and warnings: the value they quote --------------------------------------------------------


ERRORS = {
    "audit-format": ["audit", "--format", "hf_SEKRITformat123456"],
    "audit-assume-gpu": ["audit", "--assume-gpu", "sk-SEKRITgpu12345" + OSC],
    "plan-want": ["plan", "--facts", str(H200), "--want", "hf_SEKRITwant12345"],
    "explain-feature": ["explain", "hf_SEKRITfeature123456"],
    "gate-tp": ["gate", "--facts", str(H200), "--dry-run", "--", *LAUNCH, "--tp", "hf_SEKRITtp12345"],
    "facts-path": ["audit", "--facts", "/nonexistent/hf_SEKRITpath123456.json"],
    "triage-path": ["triage", "/nonexistent/hf_SEKRITlogpath1234.log"],
    "unrecognized-eq": ["audit", "--api-key=SEKRITunrecognized"],
    "unrecognized-space": ["probe", "--facts", str(H200), "--hf-token", "SEKRITunrecognized2"],
    "unrecognized-ctrl": ["probe", "--facts", str(H200), "x" + OSC],
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_lines_mask_the_secret_they_quote(name: str) -> None:
    proc = run(*ERRORS[name])
    assert proc.returncode == 2, proc.stderr
    assert_run_clean(proc)
    assert b"error:" in proc.stderr


def test_facts_file_errors_and_warnings_mask_what_they_quote(tmp_path: Path) -> None:
    doc = json.loads(H200.read_text())
    doc["schema_version"] = "sk-SEKRITschema12345"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(doc))
    proc = run("audit", "--facts", str(bad))
    assert proc.returncode == 2 and b"schema_version" in proc.stderr
    assert_run_clean(proc)
    doc = json.loads(H200.read_text())
    doc["facts"]["pakages-hf_SEKRITsection12345" + OSC] = {}  # an unknown section: a warning names it
    bad.write_text(json.dumps(doc))
    proc = run("audit", "--facts", str(bad))
    assert b"unknown facts section" in proc.stderr
    assert_run_clean(proc)


def test_manifest_problems_and_their_directory_are_shown_safely(tmp_path: Path) -> None:
    where = tmp_path / ("mine-hf_SEKRITmanifestdir123" + OSC)
    where.mkdir()
    (where / "features.json").write_text('{"x": "hf_SEKRITmanifest12345' + OSC + '"')
    proc = run("manifests", "validate", str(where))
    assert proc.returncode == 2
    assert_run_clean(proc)
    assert b"problem(s) in" in proc.stderr


def test_internal_error_lines_mask_the_exception_text(monkeypatch: pytest.MonkeyPatch, capsys: Any) -> None:
    """The last line of defence (exit 4) quotes the exception: it may hold a value of the command line."""
    from stackcheck import cli
    from stackcheck.commands import gate

    def boom(*_a: object, **_k: object) -> None:
        raise ValueError("bad value --api-key=SEKRITinternal1 hf_SEKRITinternal2345" + OSC)

    monkeypatch.setattr(gate, "_decide", boom)
    assert cli.main(["gate", "--facts", str(H200), "--dry-run", "--", *LAUNCH]) == 4
    monkeypatch.setattr(cli, "main_inner", boom)
    assert cli.main(["audit"]) == 4
    err = capsys.readouterr().err
    assert err.count("internal error: ValueError") == 2
    assert_clean(err, "stderr")
    # STACKCHECK_DEBUG's traceback quotes the same text, and the source line that raised it
    monkeypatch.setenv("STACKCHECK_DEBUG", "1")
    assert cli.main(["gate", "--facts", str(H200), "--dry-run", "--", *LAUNCH]) == 4
    assert cli.main(["audit"]) == 4
    err = capsys.readouterr().err
    assert err.count("Traceback (most recent call last):") == 2 and "raise ValueError(" in err
    assert err.count("ValueError: bad value") == 4  # each: the one line, and the traceback's last
    assert_clean(err, "stderr")


# ---- an image: its labels and working directory --------------------------------------------------------


def test_image_labels_and_workdir_never_show_a_secret(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    from imagebuild import docker_save, layer_tar

    image = docker_save(
        tmp_path / "img.tar",
        [layer_tar([("file", "x", b"")])],
        env=["HF_TOKEN=hf_SEKRITimageenv123", "CUDA_VERSION=13.0" + OSC],
        labels={
            "org.opencontainers.image.source": "https://x-access-token:SEKRITlabelurl@github.com/o/r",
            "org.opencontainers.image.authors": "Ann",
            "hf_token": "SEKRITlabelbyname",
            "build.args": "HF_TOKEN=SEKRITbuildarg",
            "title" + OSC: "v" + OSC,
        },
        container={
            "Cmd": ["python", "-m", "sglang.launch_server", "--api-key", "SEKRITimagecmd"],
            "WorkingDir": "/srv/hf_SEKRITworkdir123456",
        },
    )
    out = tmp_path / "image.json"
    for fmt in ("json", "text"):
        proc = run("probe", "--image", str(image), "--host-facts", str(H200), "--format", fmt, "--output", str(out))
        assert_run_clean(proc, out)
    shown = run("probe", "--image", str(image), "--host-facts", str(H200), "--format", "json")
    labels = json.loads(shown.stdout)["facts"]["image"]["labels"]
    assert labels["org.opencontainers.image.authors"] == "Ann"  # a label of no secret is kept as it was
    assert labels["hf_token"] == MASK
    assert labels["org.opencontainers.image.source"] == f"https://{MASK}@github.com/o/r"


# ---- a server log: the secret shapes a log holds besides tokens of known shapes --------------------------


def test_triage_masks_named_keys_auth_headers_and_echoed_flags(tmp_path: Path) -> None:
    """The lines triage quotes (the error, the lines around it) with a key of no known shape: an echoed
    launch command (`--api-key VALUE`), a settings dump (`SECRET_KEY=`, `openai_key:`), an HTTP client's
    header (`Authorization: token ...`, a raw key) and a camel-case `accessToken=`."""
    log = tmp_path / "server.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/x/y.py", line 1, in <module>\n'
        "RuntimeError: CUDA error: no kernel image is available for execution on the device (Authorization: token"
        " SEKRITheader1, Authorization: SEKRITrawheader2, accessToken=SEKRITcamel3, SECRET_KEY=SEKRITsettings4,"
        " openai_key: SEKRITsettings5, argv --model-path m --api-key SEKRITechoed6 --tp 2)\n"
        "ERROR: launch failed: python -m sglang.launch_server --api-key SEKRITechoed7 --attention-backend fa3\n"
    )
    for fmt in ("text", "json"):
        proc = run("triage", str(log), "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        assert_run_clean(proc)
        out = proc.stdout.decode()
        assert "--tp 2" in out and "--attention-backend fa3" in out  # the flags of no secret are kept


def test_triage_masks_schemes_in_any_case_escaped_json_and_env_lines(tmp_path: Path) -> None:
    """irel4: `bearer  x`, `BASIC x`, `Token x` as a client logs them, an assignment inside an escaped JSON text (a
    structured log quoting a settings dump), HF_TOKEN= / HUGGING_FACE_HUB_TOKEN= / OPENAI_API_KEY= lines, --hf-token
    and URL userinfo: masked in every format of triage (each line is one triage quotes around the error)."""
    log = tmp_path / "server.log"
    log.write_text(
        "HF_TOKEN=SEKRITenv1 HUGGING_FACE_HUB_TOKEN=SEKRITenv2 OPENAI_API_KEY=SEKRITenv3\n"
        'request headers {\\"authorization\\": \\"bearer  SEKRITjsonhdr4\\"} BASIC SEKRITbasic5x9\n'
        '{"msg": "{\\"HF_TOKEN\\": \\"SEKRITnested6\\", \\"openai_api_key\\": \\"SEKRITnested7\\"}"}\n'
        "argv --hf-token SEKRITflag8 --api-key=SEKRITflag9 pull https://user:SEKRITurl10@hf.example/m\n"
        "Traceback (most recent call last):\n"
        "RuntimeError: CUDA error: no kernel image is available for execution on the device (token SEKRITtok11x)\n"
    )
    for fmt in ("text", "json"):
        proc = run("triage", str(log), "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        assert_run_clean(proc)


def test_free_text_masking_keeps_what_is_no_secret() -> None:
    from stackcheck.redact import redact_text

    for kept in ("kv_cache_key=None", "sort_key: true", "--attention-backend fa3 --tp 2", "--api-key --port 1",
                 "Authorization: <redacted>", "give --attention-backend triton"):  # fmt: skip
        assert redact_text(kept) == kept
    assert redact_text("--api-key 'a b c' --tp 2") == f"--api-key {MASK} --tp 2"
    assert redact_text('"Authorization": "Bearer abcdefghij"') == f'"Authorization": "Bearer {MASK}"'
    # irel4: prose around the scheme words is kept (a value that reads like a word: `basic checks`, `Token indices`)
    for kept in ("Token indices sequence length is longer", "basic checks passed", "TOKEN LIMIT REACHED",
                 "token generation throughput", 'api_key=\\"none\\"'):  # fmt: skip
        assert redact_text(kept) == kept, kept
    assert redact_text("bearer  abc") == f"bearer  {MASK}"
    assert redact_text("BASIC dXNlcjpwYXNz") == f"BASIC {MASK}"
    assert redact_text('{\\"HF_TOKEN\\": \\"v1\\"}') == f'{{\\"HF_TOKEN\\": \\"{MASK}\\"}}'


def test_facts_check_masks_the_file_name_and_what_the_file_says(tmp_path: Path) -> None:
    """`facts check FILE` echoes the file's name, its packages' versions and its host name: each masked as the
    other verbs mask them (before, the name and a version were only escaped, never masked)."""
    doc = json.loads(H200.read_text())
    doc["facts"]["packages"]["torch"]["version"] = "2.9.1+hf_SEKRITversion12345"
    saved = tmp_path / ("box-sk-SEKRITfilename123456" + OSC + ".json")
    saved.write_text(json.dumps(doc))
    proc = run("facts", "check", str(saved))
    assert proc.returncode == 0, proc.stderr
    assert b"a stackcheck facts document" in proc.stdout and MASK.encode() in proc.stdout
    assert_run_clean(proc)
