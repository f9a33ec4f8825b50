"""An adversarial pass over the verbs from the outside (task iadv): each test plants one hostile input a user or a
box can give and runs the real command line in process (`stackcheck.cli.main`). Each one failed before the fix
its docstring names."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_process import clean_env, run_stackcheck

from stackcheck.cli import main

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
SM120 = CASES / "writeup-after" / "facts.json"  # 8x RTX PRO 6000 (cc 12.0), SGLang 0.5.9


def facts_with(tmp_path: Path, base: Path, **edits: Any) -> Path:
    """A copy of a facts document with `packages.NAME.version` (and dist_version) set: edits as name=version."""
    doc = json.loads(base.read_text())
    for name, version in edits.items():
        entry = doc["facts"]["packages"][name.replace("_", "-")]
        entry["version"] = version
        if "dist_version" in entry:
            entry["dist_version"] = version
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(doc))
    return path


def audit_json(capsys: pytest.CaptureFixture[str], facts: Path) -> dict[str, Any]:
    main(["audit", "--facts", str(facts), "--format", "json"])
    doc: dict[str, Any] = json.loads(capsys.readouterr().out)
    return doc


def status(doc: dict[str, Any], feature: str) -> str:
    return str(next(f["status"] for f in doc["features"] if f["id"] == feature))


@pytest.mark.parametrize("version", ["0.5.9.dev0", "0.5.9rc1", "0.5.9a1.dev3"])
def test_a_pre_release_between_two_rules_is_not_judged_ok(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], version: str
) -> None:
    """attention-fa4 on sm_120 crashes in SGLang 0.5.3-0.5.8 (sgl-kernel's FA4 majors, rule `when <0.5.9`) and in
    0.5.9 (the vendored FA4's majors, `when >=0.5.9`). A pre-release of 0.5.9 is neither `<0.5.9` nor `>=0.5.9` by
    PEP 440, so neither rule applied and the feature was judged ok (a false pass): a build from SGLang's tree
    before the 0.5.9 tag has one code or the other, which the data cannot say."""
    released = audit_json(capsys, facts_with(tmp_path, SM120, sglang="0.5.9"))
    assert status(released, "attention-fa4") == "blocked"
    pre = audit_json(capsys, facts_with(tmp_path, SM120, sglang=version))
    assert status(pre, "attention-fa4") in ("blocked", "unknown")
    fa4 = next(f for f in pre["features"] if f["id"] == "attention-fa4")
    assert any(version in json.dumps(r) for r in fa4["reasons"]), "the reason names the pre-release it read"


def test_a_pre_release_far_from_every_bound_is_judged_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The fix makes only a straddled bound unknown: 0.5.9.dev0 against >=0.5.3 (fa4-choice) still passes."""
    doc = audit_json(capsys, facts_with(tmp_path, SM120, sglang="0.5.9.dev0"))
    fa4 = next(f for f in doc["features"] if f["id"] == "attention-fa4")
    choice = next(r for r in fa4["reasons"] if r["rule"] == "fa4-choice")
    assert choice["result"] == "pass"


def run(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return run_stackcheck(*args, env=clean_env(PYTHONPATH=str(ROOT)), timeout=timeout, stdin=subprocess.DEVNULL)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize(
    "args",
    [
        ("audit", "--facts", "/dev/zero"),
        ("facts", "check", "/dev/zero"),
        ("diff", str(SM120), "/dev/zero"),
        ("audit", "--host-facts", "/dev/zero"),
        ("gate", "--facts", "/dev/zero", "--dry-run", "--", "python", "-m", "sglang.launch_server"),
    ],
)
def test_a_device_as_a_facts_file_is_bad_input_not_a_hang(args: tuple[str, ...]) -> None:
    """/dev/zero has no size to stat: facts/model.read_text_file checked st_size (0) and then read to the end,
    which never comes (each of these ran past 40 s, memory growing)."""
    proc = run(*args, timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip() == "stackcheck: error: /dev/zero: larger than 64 MiB: not a stackcheck facts file"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
@pytest.mark.parametrize(
    "args",
    [
        ("audit", "--facts", "{fifo}"),
        ("facts", "check", "{fifo}"),
        ("gate", "--facts", "{fifo}", "--dry-run", "--", "python", "-m", "sglang.launch_server"),
    ],
)
def test_a_named_pipe_without_a_writer_is_bad_input_not_a_hang(tmp_path: Path, args: tuple[str, ...]) -> None:
    """`--facts FIFO` with no writer: open() waited for a writer forever (the gate hung, its command never judged
    nor refused; triage refuses the same pipe since ismall). Now one line, exit 2, as triage says it."""
    fifo = tmp_path / "facts.fifo"
    os.mkfifo(fifo)
    try:
        proc = run(*(a.replace("{fifo}", str(fifo)) for a in args), timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{args[0]} waited for a writer on {fifo}")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    err = proc.stderr.strip()
    assert len(err.splitlines()) == 1 and f"{fifo}: a named pipe with nothing in it and no writer" in err, err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_named_pipe_with_a_writer_is_read_to_its_end(tmp_path: Path) -> None:
    """A facts document written into a named pipe (a writer that opens it after stackcheck does) is read whole."""
    import threading

    fifo = tmp_path / "facts.fifo"
    os.mkfifo(fifo)
    data = (SM120).read_bytes()

    def write() -> None:
        with open(fifo, "wb") as fh:  # waits for the reader
            fh.write(data[:100])
            fh.flush()
            fh.write(data[100:])

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    proc = run("facts", "check", str(fifo), timeout=30)
    writer.join(5)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_named_to_fleet_is_skipped_not_read_forever() -> None:
    """fleet reads a named pipe as a stream of reports; /dev/zero was read as one too: an endless line, skipped
    a MiB at a time, forever. A character device is skipped as bad input; the other reports are summarised."""
    proc = run("fleet", "/dev/zero", str(SM120), timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert "/dev/zero: a character device" in proc.stdout + proc.stderr
    assert "1 hosts from 1 reports" in proc.stdout
    alone = run("fleet", "--strict", "/dev/zero", timeout=30)
    assert alone.returncode == 2


@pytest.mark.parametrize("bad", ["missing.json", "binary.json"])
@pytest.mark.parametrize("flag", ["--facts", "--host-facts"])
def test_gate_reads_a_named_facts_file_even_when_the_command_checks_nothing(
    tmp_path: Path, bad: str, flag: str
) -> None:
    """`gate --facts TYPO.json -- ./serve.sh` (a command in which no SGLang launch is found) returned before the
    facts were read: the command ran (exit 0) with the user's facts file never opened, where every other path
    says a bad facts file is bad input (exit 2) and runs nothing."""
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00garbage")
    marker = tmp_path / "ran"
    proc = run("gate", flag, str(tmp_path / bad), "--", "touch", str(marker))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert str(tmp_path / bad) in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert not marker.exists(), "the command must not run"
    good = run("gate", "--facts", str(SM120), "--", "touch", str(marker))
    assert good.returncode == 0 and marker.exists(), good.stderr


@pytest.mark.parametrize("where", ["first", "last"])
def test_diff_never_lets_an_ok_entry_hide_a_blocked_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """A report listing one feature twice (edited by hand, two concatenated) was read last-entry-wins: with the
    blocked entry first, `diff before.json after.json` said "features: no change" and exited 0 (a regression
    hidden from a CI gate); with it last, exit 1. Now a non-ok entry wins, wherever it is."""
    main(["audit", "--facts", str(CASES / "h200-newest" / "facts.json"), "--format", "json"])
    before = json.loads(capsys.readouterr().out)
    ok = next(f for f in before["features"] if f["status"] == "ok")
    after = json.loads(json.dumps(before))
    blocked = {**ok, "status": "blocked", "effect": "crash"}
    after["features"].insert(0 if where == "first" else len(after["features"]), blocked)
    a, b = tmp_path / "before.json", tmp_path / "after.json"
    a.write_text(json.dumps(before))
    b.write_text(json.dumps(after))
    assert main(["diff", str(a), str(b), "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["regressions"] == [ok["id"]]
    assert main(["diff", str(a), str(a)]) == 0


@pytest.mark.parametrize("args", [("diff", "", str(SM120)), ("facts", "check", "")])
def test_an_empty_file_name_is_named_as_given(capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    """`diff "" B` and `facts check ""` said ".: is a directory, expected a file": the error named the working
    directory, not what was given."""
    assert main(list(args)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("stackcheck: error: '': an empty file name"), err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(
    "args",
    [
        ("audit", "--facts", ""),
        ("audit", "--facts="),
        ("audit", "--host-facts", ""),
        ("plan", "--facts", ""),
        ("recommend", "--facts", ""),
        ("explain", "cuda-graph", "--facts", ""),
        ("gate", "--facts", "", "--", "true"),
        ("audit", "--facts", str(SM120), "--output", ""),
        ("recommend", "--facts", str(SM120), "--no-plan", "--plan-facts", ""),
        ("gate", "--facts", str(SM120), "--watch", "--log", "", "--", "true"),
        ("facts", "template", "--output", ""),
        ("fleet", str(SM120), "--output", ""),
        ("audit", "--image", ""),
        ("gate", "--image", "", "--dry-run", "--", "true"),
        ("audit", "--python", ""),
        ("audit", "--root", ""),
        ("audit", "--env", ""),
        ("audit", "--facts", str(SM120), "--manifests", ""),
        ("audit", "--facts", str(SM120), "--assume-gpu", ""),
        ("audit", "--facts", str(SM120), "--assume-driver", ""),
        ("explain", "cuda-graph", "--assume-gpu", ""),
        ("recommend", "--facts", str(SM120), "--no-plan", "--model-path", ""),
        ("fleet", str(SM120), "--since", ""),
        ("gate", "--facts", str(SM120), "--require", "", "--dry-run", "--", "./serve.sh"),
        ("gate", "--facts", str(SM120), "--require=", "--dry-run", "--", "true"),
    ],
)
def test_an_empty_facts_option_is_a_usage_error_not_this_box(args: tuple[str, ...]) -> None:
    """`--facts "$FACTS"` with the variable unset read as no --facts at all: audit and plan probed this box and
    judged it (exit 0 or 1, as if the file had been read), and the gate probed the box it runs on and ran the
    command (exit 0); an empty --output, --plan-facts or --log wrote to stdout or nowhere; an empty --image,
    --root, --python or --env audited this host instead of the target named, an empty --assume-gpu or
    --assume-driver judged the facts as they are. Now argparse refuses the empty value: exit 2, the option named,
    nothing run."""
    proc = run(*args)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.endswith((": '': an empty file name", ": '': an empty value")), proc.stderr
    assert proc.stdout == ""


def test_a_require_of_only_commas_is_a_usage_error() -> None:
    """`gate --require "$FEATURES" -- ./serve.sh` with the variable unset required nothing and allowed (exit 0,
    "nothing to check"): the gate failed open. `--require ','` (a list that names no feature) is refused as an
    empty --require is."""
    proc = run("gate", "--facts", str(SM120), "--require", " , ", "--dry-run", "--", "./serve.sh")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "--require" in proc.stderr, proc.stderr
    assert proc.stdout == ""


LLAMA = str(ROOT / "tests" / "data" / "models" / "llama3-8b")


@pytest.mark.parametrize(
    "shell",
    [("bash", "-lc"), ("sh", "-ec"), ("sh", "-xc"), ("sudo", "bash", "-c"), ("docker", "exec", "c", "bash", "-c")],
)
def test_a_launch_inside_a_shell_string_is_read_behind_any_option_spelling(shell: tuple[str, ...]) -> None:
    """`bash -lc "python -m sglang.launch_server ... --attention-backend fa3"` (the usual Kubernetes `command:`)
    and `sudo bash -c "..."`: the string was not read, the command counted as a wrapper, and with --allow-unknown
    the gate allowed a launch whose explicit feature is known blocked (crash) on this sm_120 box: a false pass.
    `bash -c`, `bash -l -c`, `env bash -c` are read (the same launch is refused)."""
    launch = f"python -m sglang.launch_server --model-path {LLAMA} --tp 2 --attention-backend fa3"
    bare = run("gate", "--facts", str(SM120), "--dry-run", "--allow-unknown", "--", "bash", "-c", launch)
    assert bare.returncode == 1 and "REFUSE attention-fa3: blocked (crash)" in bare.stdout, bare.stdout
    proc = run("gate", "--facts", str(SM120), "--dry-run", "--allow-unknown", "--", *shell, launch)
    assert proc.returncode == 1, proc.stdout
    assert "REFUSE attention-fa3: blocked (crash)" in proc.stdout


@pytest.mark.parametrize(
    "shell",
    [
        ("bash", "-c", "--"),
        ("sh", "-c", "-e"),
        ("bash", "-c", "-x"),
        ("bash", "-c", "-o", "pipefail"),
        ("bash", "-ec", "-"),
    ],
)
def test_a_launch_behind_options_after_dash_c_is_read(shell: tuple[str, ...]) -> None:
    """bash and dash take options after -c too (`bash -c -- STRING`, `sh -c -e STRING`: the command string is the
    first word that is no option), and run the launch. The gate read `--` or `-e` as the string: the launch counted
    as a wrapper, and with --allow-unknown the gate allowed a launch whose explicit feature is known blocked (crash)
    on this sm_120 box: a false pass."""
    launch = f"python -m sglang.launch_server --model-path {LLAMA} --tp 2 --attention-backend fa3"
    proc = run("gate", "--facts", str(SM120), "--dry-run", "--allow-unknown", "--", *shell, launch)
    assert proc.returncode == 1, proc.stdout
    assert "REFUSE attention-fa3: blocked (crash)" in proc.stdout
