"""The adversarial pass of issue 14, re-runnable: each attack runs the real command line against a planted
hostile input and says whether the promise held (fail closed, nothing leaks, nothing hangs, documented exit
codes, no leftovers). Prints a Markdown table and exits 1 if any attack broke a promise.

    python bench/adversarial.py            # from the repository root, stackcheck importable
    python bench/adversarial.py --only gate

Needs Linux (FIFOs, /dev/full, a pty, /proc); nothing is written outside a temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import pty
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "tests" / "cases"
H200 = CASES / "h200-newest" / "facts.json"
SM120 = CASES / "writeup-after" / "facts.json"
RTX = CASES / "rtx5090-torch-cu126" / "facts.json"
LAUNCH = ["python", "-m", "sglang.launch_server", "--model-path", "m"]
CONTROLS = ("\x1b", "\x07", "\x9b", "\x85", "\u202e")
TMP = Path(tempfile.mkdtemp(prefix="stackcheck-adv-"))
Result = tuple[bool | None, str]  # held, broken, or None: a documented limitation (not counted as broken)
ATTACKS: list[tuple[str, str, str, Callable[[], Result]]] = []


def attack(group: str, name: str, cases: str = "1") -> Callable[[Callable[[], Result]], Callable[[], Result]]:
    def register(fn: Callable[[], Result]) -> Callable[[], Result]:
        ATTACKS.append((group, name, cases, fn))
        return fn

    return register


def sc(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60, **kw: object
) -> subprocess.CompletedProcess[bytes]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SGLANG_", "STACKCHECK_"))}
    base["PYTHONPATH"] = str(ROOT)
    proc: subprocess.CompletedProcess[bytes] = subprocess.run(  # type: ignore[call-overload]  # noqa: PLW1510
        [sys.executable, "-m", "stackcheck", *args],
        capture_output=True,
        timeout=timeout,
        env={**base, **(env or {})},
        cwd=ROOT,
        **kw,
    )
    return proc


def facts_with(base: Path, edit: Callable[[dict], None]) -> Path:  # type: ignore[type-arg]
    doc = json.loads(base.read_text())
    edit(doc)
    path = Path(tempfile.mktemp(suffix=".json", dir=TMP))
    path.write_text(json.dumps(doc))
    return path


def no_leak(out: bytes, *secrets: str) -> Result:
    leaked = [s for s in secrets if s.encode() in out]
    return (not leaked, f"leaked {leaked}" if leaked else "masked")


def no_controls(out: bytes) -> Result:
    text = out.decode("utf-8", "replace")
    raw = [repr(c) for c in CONTROLS if c in text]
    return (not raw, f"raw {raw}" if raw else "escaped")


# ---- the gate fails closed -----------------------------------------------------------------------------


@attack("gate", "torch without the GPU's architecture, plain launch (no feature flag)")
def _() -> Result:
    p = sc("gate", "--facts", str(RTX), "--dry-run", "--", *LAUNCH)
    return p.returncode == 1 and b"torch-cuda-arch" in p.stdout, f"exit {p.returncode}"


@attack("gate", "packages probe failed (every package entry an error)")
def _() -> Result:
    from stackcheck.probes.packages import WANTED

    f = facts_with(H200, lambda d: d["facts"].__setitem__("packages", {n: {"error": "timed out"} for n in WANTED}))
    p = sc("gate", "--facts", str(f), "--dry-run", "--", *LAUNCH)
    return p.returncode == 1, f"exit {p.returncode}"


@attack("gate", "every probe timed out (--timeout 0.0001), live")
def _() -> Result:
    p = sc("gate", "--timeout", "0.0001", "--", sys.executable, "-m", "sglang.launch_server", "--model-path", "m")
    return p.returncode == 1 and b"probe" in p.stdout, f"exit {p.returncode}"


@attack("gate", "one dist-info unreadable (installed, no version)")
def _() -> Result:
    f = facts_with(
        H200,
        lambda d: d["facts"]["packages"].__setitem__(
            "torch", {"installed": True, "version": None, "error": "METADATA: missing"}
        ),
    )
    p = sc("gate", "--facts", str(f), "--dry-run", "--", *LAUNCH)
    return p.returncode == 1, f"exit {p.returncode}"


@attack("gate", "driver older than torch's CUDA major, plain launch")
def _() -> Result:
    f = facts_with(H200, lambda d: d["facts"].__setitem__("driver", {"version": "570.86.10", "cuda": "12.8"}))
    p = sc("gate", "--facts", str(f), "--dry-run", "--", *LAUNCH)
    return p.returncode == 1 and b"driver-vs-torch-cuda" in p.stdout, f"exit {p.returncode}"


@attack("gate", "stale flashinfer-cubin (import-time RuntimeError), plain launch")
def _() -> Result:
    f = facts_with(
        H200, lambda d: d["facts"]["packages"].__setitem__("flashinfer-cubin", {"installed": True, "version": "0.7.1"})
    )
    p = sc("gate", "--facts", str(f), "--dry-run", "--", *LAUNCH)
    return p.returncode == 1 and b"flashinfer-cubin-match" in p.stdout, f"exit {p.returncode}"


@attack("gate", "--config FILE: unreadable, and hiding a flag that crashes", "2")
def _() -> Result:
    # Since issue 17 the gate reads the config file: one it cannot read is bad input (exit 2), and a flag set
    # only inside it is judged like one on the command line.
    missing = sc("gate", "--facts", str(H200), "--dry-run", "--", *LAUNCH, "--config", str(TMP / "absent.yaml"))
    cfg = TMP / "symm.yaml"
    cfg.write_text("tp-size: 8\nenable-torch-symm-mem: true\n")
    writeup = CASES / "writeup-after" / "facts.json"
    hidden = sc("gate", "--facts", str(writeup), "--dry-run", "--", *LAUNCH, "--config", str(cfg))
    ok = missing.returncode == 2 and hidden.returncode == 1 and b"torch-symm-mem" in hidden.stdout
    return ok, f"exit {missing.returncode} (unreadable), {hidden.returncode} (hidden flag)"


@attack("gate", "the launch behind a launcher: uv run, srun, docker exec, bash -c, a script argument", "5")
def _() -> Result:
    launches = [
        ["uv", "run", *LAUNCH],
        ["srun", "-n1", *LAUNCH],
        ["docker", "exec", "c", "sglang", "serve"],
        ["bash", "-c", " ".join(LAUNCH)],
        ["./serve.sh", "sglang.launch_server"],
    ]
    rcs = [sc("gate", "--facts", str(RTX), "--dry-run", "--", *c).returncode for c in launches]
    return rcs == [1] * 5, f"exits {rcs}"


@attack("gate", "a wrapper script with no SGLang flag (fails open by documented policy)")
def _() -> Result:
    p = sc("gate", "--facts", str(RTX), "--dry-run", "--", "./serve.sh")
    # documented: a command in which no SGLang launch or flag is found needs no feature; the decision says so
    if p.returncode == 0 and b"nothing to check" in p.stdout:
        return None, "allowed with the note 'nothing to check' (documented: use --require with wrappers)"
    return False, f"exit {p.returncode}"


# ---- nothing leaks -------------------------------------------------------------------------------------

SECRET_ARGS = [
    "--api-key",
    "k3y-Value-111",
    "--admin-api-key=k3y-Value-222",
    "--hf-token",
    "hf_k3yValue333x",
    "--model-path",
    "https://u:k3yValue444@hub/m",
    "--api-k",
    "k3y-Value-555",
]
SECRETS = ("k3y-Value-111", "k3y-Value-222", "hf_k3yValue333x", "k3yValue444", "k3y-Value-555")


@attack("leak", "secret flags in gate --dry-run, text and json", "2")
def _() -> Result:
    out = b"".join(
        sc("gate", "--facts", str(H200), "--dry-run", "--format", f, "--", *LAUNCH, *SECRET_ARGS).stdout
        for f in ("text", "json")
    )
    return no_leak(out, *SECRETS)


@attack("leak", "secret flags on the exec path (stderr: pod and journal logs)")
def _() -> Result:
    p = sc("gate", "--facts", str(H200), "--format", "json", "--", sys.executable, "-c", "pass", *SECRET_ARGS)
    return no_leak(p.stderr, *SECRETS)


@attack("leak", "refusal path with secrets (stdout)")
def _() -> Result:
    p = sc("gate", "--facts", str(RTX), "--", *LAUNCH, *SECRET_ARGS)
    return (p.returncode == 1 and no_leak(p.stdout + p.stderr, *SECRETS)[0]), f"exit {p.returncode}"


@attack("leak", "env prefix: env HF_TOKEN=... SGLANG_API_KEY=... python -m sglang...")
def _() -> Result:
    p = sc(
        "gate",
        "--facts",
        str(H200),
        "--dry-run",
        "--format",
        "json",
        "--",
        "env",
        "HF_TOKEN=hf_abcdefghij12",
        "SGLANG_API_KEY=plainpw99",
        *LAUNCH,
    )
    return no_leak(p.stdout, "hf_abcdefghij12", "plainpw99")


@attack("leak", "a plain password as a positional argument of a wrapper (cannot be recognised)")
def _() -> Result:
    p = sc("gate", "--facts", str(H200), "--dry-run", "--format", "json", "--", "./serve.sh", "hunter2")
    held, _ = no_leak(p.stdout, "hunter2")
    return (True, "masked") if held else (None, "shown: a bare word has neither a secret flag nor a secret's shape")


@attack("leak", "triage: api_key=, hf_, sk-, URL credentials, Bearer, JSON password, AWS key", "2")
def _() -> Result:
    log = TMP / "secrets.log"
    log.write_text(
        "Traceback (most recent call last):\n"
        '  File "/x.py", line 1, in <module>\n'
        "RuntimeError: api_key='sk-live-aaaa1111' hf_bbbbbbbb2222 https://u:cccc3333@h/ Bearer dddddddd4444 "
        '{"password": "eeee5555"} aws_secret_access_key=ffff6666\n'
    )
    out = sc("triage", str(log)).stdout + sc("triage", str(log), "--format", "json").stdout
    return no_leak(out, "aaaa1111", "bbbbbbbb2222", "cccc3333", "dddddddd4444", "eeee5555", "ffff6666")


@attack("leak", "environment: userinfo with '@' in the password, '/' in the password, generic name", "3")
def _() -> Result:
    env = {
        "SGLANG_DB": "postgres://dave:p@ssword42@db/x",
        "NCCL_IB_HCA": "https://eve:pa/ss55@host/",
        "NCCL_SOCKET_IFNAME": "Zq8vN3kP0rT5yW2mB7cX9dF4gH6jL1sA",
    }
    return no_leak(sc("probe", "--format", "json", env=env).stdout, "ssword42", "ss55", "Zq8vN3kP0rT5")


@attack("leak", "home directory in probes[].reason (a broken dist-info under ~/.venv)")
def _() -> Result:
    home = TMP / "home" / "alice-private"
    site = home / ".venv" / "site-packages"
    (site / "sglang-0.5.9.dist-info").mkdir(parents=True, exist_ok=True)
    p = sc("audit", "--format", "json", env={"HOME": str(home), "PYTHONPATH": f"{ROOT}:{site}"})
    return no_leak(p.stdout + p.stderr, "alice-private")


# ---- nothing reaches a terminal raw ----------------------------------------------------------------------

ESC = "H200\x1b]0;owned\x07\x1b[2J\x9b31m\x85\u202e<img src=x>"


def _hostile(d: dict) -> None:  # type: ignore[type-arg]
    d["facts"]["gpus"][0]["name"] = ESC
    d["facts"]["driver"]["error"] = "nvidia-smi: \x1b[31mfailed"
    d["facts"]["packages"]["torch"]["version"] = "2.14.1+cu130\x1b[1A"
    d["host"] = {"hostname": "n\x1b[2K\ud800", "collected_at": "2026-12-01T00:00:00Z"}


@attack("terminal", "audit: table, markdown, json, prometheus, nfd; probe table", "6")
def _() -> Result:
    f = facts_with(H200, _hostile)
    outs = [sc("audit", "--facts", str(f), "--format", x).stdout for x in ("text", "markdown", "json")]
    outs.append(sc("probe", "--facts", str(f)).stdout)
    for x in ("prometheus", "nfd"):
        sc("audit", "--facts", str(f), "--format", x).stdout.decode("utf-8")  # valid UTF-8
    md = outs[1]
    return (no_controls(b"".join(outs))[0] and b"<img" not in md), "escaped; markdown HTML escaped"


@attack("terminal", "gate text with an escape sequence in an argument and in a facts value")
def _() -> Result:
    f = facts_with(H200, _hostile)
    return no_controls(sc("gate", "--facts", str(f), "--dry-run", "--", *LAUNCH, "--attention-backend", ESC).stdout)


@attack("terminal", "triage of a log with OSC/CSI/C1/bidi in the root cause, text and --watch", "2")
def _() -> Result:
    log = TMP / "esc.log"
    log.write_text("Traceback (most recent call last):\nRuntimeError: \x1b]0;owned\x07\x9b31m\u202e boom\n")
    w = sc(
        "gate",
        "--facts",
        str(H200),
        "--watch",
        "--",
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('RuntimeError: \\x1b]0;owned\\x07 boom\\n'); sys.exit(1)",
    )
    triage_part = w.stderr.split(b"triage of")[-1]
    return no_controls(sc("triage", str(log)).stdout + triage_part)


@attack("terminal", "fleet: table, markdown, csv; csv formulas =,+,-,@,tab", "4")
def _() -> Result:
    d = TMP / "fleet-esc"
    d.mkdir(exist_ok=True)
    report = json.loads(sc("audit", "--facts", str(H200), "--format", "json").stdout)
    for i, name in enumerate(["=cmd|' /C calc'!A0", "+1", "-1", "@SUM(1)", "\tx", "h\x1b[31m"]):
        report["host"]["hostname"] = name
        (d / f"{i}.json").write_text(json.dumps(report))
    outs = [sc("fleet", str(d), "--format", x, "--jobs", "1").stdout for x in ("text", "markdown", "csv")]
    csv_text = outs[2].decode()
    formula = [ln for ln in csv_text.splitlines()[1:] if ln.split(",")[2][:1] in "=+-@\t"]
    return (no_controls(b"".join(outs))[0] and not formula), "escaped; formulas prefixed with '"


@attack("terminal", "error messages naming a hostile file")
def _() -> Result:
    return no_controls(sc("audit", "--facts", "/nonexistent/\x1b[2Jx.json").stderr)


@attack("terminal", "explain with a user manifest holding escape sequences")
def _() -> Result:
    d = TMP / "m-esc"
    d.mkdir(exist_ok=True)
    feats = json.loads((ROOT / "manifests" / "features.json").read_text())
    feats["features"][0]["title"] = "evil \x1b]0;owned\x07 title"
    (d / "features.json").write_text(json.dumps({"features": feats["features"][:1]}))
    p = sc("explain", str(feats["features"][0]["id"]), "--assume-gpu", "9.0", "--manifests", str(d))
    return no_controls(p.stdout + p.stderr)


# ---- nothing hangs -------------------------------------------------------------------------------------


def _fifo_dir(name: str) -> Path:
    d = TMP / name
    d.mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkfifo(d / "features.json")
    return d


@attack("hang", "FIFO in a manifests dir: validate, audit --manifests, gate (STACKCHECK_MANIFESTS)", "3")
def _() -> Result:
    d = str(_fifo_dir("m-fifo"))
    rcs = [
        sc("manifests", "validate", d, timeout=20).returncode,
        sc("audit", "--facts", str(H200), "--manifests", d, timeout=20).returncode,
        sc(
            "gate", "--facts", str(H200), "--dry-run", "--", *LAUNCH, env={"STACKCHECK_MANIFESTS": d}, timeout=20
        ).returncode,
    ]
    return rcs == [2, 2, 2], f"exits {rcs}"


@attack("hang", "FIFO (.json and .jsonl) in a fleet directory", "2")
def _() -> Result:
    d = TMP / "fleet-fifo"
    d.mkdir(exist_ok=True)
    (d / "a.json").write_bytes(sc("audit", "--facts", str(H200), "--format", "json").stdout)
    for n in ("b.json", "c.jsonl"):
        with contextlib.suppress(FileExistsError):
            os.mkfifo(d / n)
    p = sc("fleet", str(d), "--jobs", "1", timeout=30)
    return p.returncode == 0 and b"not a regular file" in p.stdout, f"exit {p.returncode}"


@attack("hang", "symlink loops: manifests entry, manifests dir, fleet entry", "3")
def _() -> Result:
    d = TMP / "m-loop"
    d.mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):
        (d / "features.json").symlink_to("features.json")
    loop = TMP / "loopdir"
    with contextlib.suppress(FileExistsError):
        loop.symlink_to(loop.name)
    fl = TMP / "fleet-loop"
    fl.mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):
        (fl / "x.json").symlink_to("x.json")
    rcs = [
        sc("manifests", "validate", str(d)).returncode,
        sc("manifests", "validate", str(loop)).returncode,
        sc("fleet", str(fl), "--jobs", "1").returncode,
    ]
    return rcs == [2, 2, 2], f"exits {rcs}"


@attack("hang", "100,000-deep features.json and a 2,000-deep 'not' predicate", "2")
def _() -> Result:
    d = TMP / "m-deep"
    d.mkdir(exist_ok=True)
    (d / "features.json").write_text('{"features": ' + "[" * 100000 + "]" * 100000 + "}")
    a = sc("manifests", "validate", str(d)).returncode
    pred = '{"not": ' * 2000 + '{"fact": "gpu.cc", "op": "==", "value": "9.0"}' + "}" * 2000
    (d / "features.json").write_text(
        '{"features": [{"id": "x", "title": "t", "needs": [], "enable": {"flags": [], '
        '"env": {}}, "rules": [{"id": "r", "require": ' + pred + "}]}]}"
    )
    b = sc("audit", "--facts", str(H200), "--manifests", str(d)).returncode
    return [a, b] == [2, 2], f"exits {[a, b]}"


@attack("hang", "fleet JSON Lines with a 1 GiB first line, under a 1.5 GB address-space limit")
def _() -> Result:
    big = TMP / "big.jsonl"
    with big.open("wb") as fh:
        fh.truncate(2**30)
        fh.seek(2**30)
        fh.write(b"\n" + sc("audit", "--facts", str(H200), "--format", "json").stdout.replace(b"\n", b"") + b"\n")
    p = sc(
        "fleet",
        str(big),
        "--jobs",
        "1",
        "--format",
        "json",
        timeout=300,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (1536 * 2**20, resource.RLIM_INFINITY)),
    )
    big.unlink()
    return p.returncode == 0, f"exit {p.returncode}"


@attack("hang", "packages probe: 3 GB sparse direct_url.json, FIFO .egg-link, /dev/zero METADATA", "3")
def _() -> Result:
    site = TMP / "site"
    info = site / "flashinfer_python-0.6.3.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Name: flashinfer-python\nVersion: 0.6.3\n\n")
    with (info / "direct_url.json").open("wb") as fh:
        fh.truncate(3 * 2**30)
    with contextlib.suppress(FileExistsError):
        os.mkfifo(site / "sgl_kernel.egg-link")
    z = site / "sglang-0.5.9.dist-info"
    z.mkdir(exist_ok=True)
    with contextlib.suppress(FileExistsError):
        (z / "METADATA").symlink_to("/dev/zero")
    start = time.monotonic()
    p = sc("probe", "--format", "json", env={"PYTHONPATH": f"{ROOT}:{site}"}, timeout=30)
    took = time.monotonic() - start
    pk = json.loads(p.stdout)["facts"]["packages"]
    ok = pk["flashinfer-python"]["version"] == "0.6.3" and "error" in pk["sgl-kernel"] and took < 10
    return ok, f"{took:.1f} s, one entry each"


@attack("hang", "--watch: the log file hits its size limit (a full disk)")
def _() -> Result:
    script = "import sys\nfor i in range(4096): sys.stdout.write('x' * 1023 + '\\n')\n"
    p = sc(
        "gate",
        "--facts",
        str(H200),
        "--watch",
        "--log",
        str(TMP / "w.log"),
        "--",
        sys.executable,
        "-c",
        script,
        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (65536, resource.RLIM_INFINITY)),
    )
    return p.returncode == 0 and len(p.stdout) == 4096 * 1024, f"exit {p.returncode}, {len(p.stdout)} bytes through"


@attack("hang", "--watch: a grandchild (sleep 300 &) holds the pipes")
def _() -> Result:
    start = time.monotonic()
    p = sc(
        "gate",
        "--facts",
        str(H200),
        "--watch",
        "--drain",
        "1",
        "--",
        "sh",
        "-c",
        "sleep 300 & echo $! > " + str(TMP / "sleeper") + "; exit 3",
    )
    took = time.monotonic() - start
    with contextlib.suppress(Exception):
        os.kill(int((TMP / "sleeper").read_text()), signal.SIGKILL)
    return p.returncode == 3 and took < 30, f"exit {p.returncode} after {took:.1f} s"


@attack("hang", "--watch: our stdout closed while the server writes 2 MB")
def _() -> Result:
    p = subprocess.run(  # noqa: PLW1510 - the exit status is the result
        [
            sys.executable,
            "-m",
            "stackcheck",
            "gate",
            "--facts",
            str(H200),
            "--watch",
            "--",
            sys.executable,
            "-c",
            "import sys\nfor i in range(2000): sys.stderr.write('y' * 1000 + '\\n')\n",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=60,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        preexec_fn=lambda: os.close(1),
    )
    return p.returncode == 0, f"exit {p.returncode}"


@attack("hang", "--watch: SIGKILL of the gate leaves no server behind")
def _() -> Result:
    pidfile = TMP / "srv"
    g = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "stackcheck",
            "gate",
            "--facts",
            str(H200),
            "--watch",
            "--",
            sys.executable,
            "-c",
            f"import os,time; open({str(pidfile)!r},'w').write(str(os.getpid())); time.sleep(60)",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    pid = int(pidfile.read_text())
    g.kill()
    g.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/status").read_text().split("State:")[1][:4]
        except (OSError, IndexError):
            break
        if "Z" in state:
            break
        time.sleep(0.05)
    else:
        os.kill(pid, signal.SIGKILL)
        return False, "the server outlived the gate"
    return True, "killed with the gate (PR_SET_PDEATHSIG)"


@attack("hang", "--watch on a terminal: ^C reaches the server once, from the gate")
def _() -> Result:
    infos = TMP / "infos"
    script = (
        "import json, signal\nsignal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})\n"
        f"open({str(TMP / 'rdy')!r}, 'w').write('1')\ngot = []\n"
        "i = signal.sigtimedwait({signal.SIGINT}, 30)\n"
        "while i is not None:\n    got.append([i.si_code, i.si_pid]); i = signal.sigtimedwait({signal.SIGINT}, 1)\n"
        f"open({str(infos)!r}, 'w').write(json.dumps(got))\n"
    )
    pid, master = pty.fork()
    if pid == 0:
        os.environ["PYTHONPATH"] = str(ROOT)
        os.execv(
            sys.executable,
            [
                sys.executable,
                "-m",
                "stackcheck",
                "gate",
                "--facts",
                str(H200),
                "--watch",
                "--",
                sys.executable,
                "-c",
                script,
            ],
        )
    deadline = time.monotonic() + 30
    while not (TMP / "rdy").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    os.write(master, b"\x03")
    while not (infos.exists() and infos.read_text()) and time.monotonic() < deadline + 10:
        with contextlib.suppress(OSError):
            os.read(master, 4096)
        time.sleep(0.05)
    got = json.loads(infos.read_text())
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return got == [[0, pid]], f"server saw {got}"


@attack("hang", "--watch on a terminal: ^Z stops the server with the gate, SIGCONT continues both", "2")
def _() -> Result:
    pidfile = TMP / "srvz"
    pid, master = pty.fork()
    if pid == 0:
        os.environ["PYTHONPATH"] = str(ROOT)
        code = f"import os,time; open({str(pidfile)!r},'w').write(str(os.getpid())); time.sleep(30)"
        os.execv(
            sys.executable,
            [
                sys.executable,
                "-m",
                "stackcheck",
                "gate",
                "--facts",
                str(H200),
                "--watch",
                "--",
                sys.executable,
                "-c",
                code,
            ],
        )
    deadline = time.monotonic() + 30
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    server = int(pidfile.read_text())

    def state(p: int) -> str:
        return Path(f"/proc/{p}/status").read_text().split("State:")[1].split()[0]

    time.sleep(0.3)
    os.write(master, b"\x1a")
    time.sleep(0.5)
    stopped = (state(pid), state(server))
    os.kill(pid, signal.SIGCONT)
    time.sleep(0.5)
    running = (state(pid), state(server))
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return stopped == ("T", "T") and "T" not in running, f"^Z: {stopped}, SIGCONT: {running}"


@attack("hang", "pathological 64 KiB log lines (a_a_a..., a:a:a..., quotes, URLs) through triage's redaction", "6")
def _() -> Result:
    log = TMP / "redos.log"
    with log.open("w") as fh:
        for pat in ("a_", "a.", "a-", "a:", "'", "https://a:"):
            fh.write("Traceback (most recent call last):\nRuntimeError: " + pat * (60000 // len(pat)) + "\n")
    start = time.monotonic()
    p = sc("triage", str(log), "--format", "json", timeout=120)
    took = time.monotonic() - start
    return p.returncode == 0 and took < 10, f"{took:.1f} s"


# ---- exit codes and leftovers ----------------------------------------------------------------------------


@attack("exit", "gate -- '' (exec and --watch)", "2")
def _() -> Result:
    rcs = [sc("gate", "--facts", str(H200), *w, "--", "").returncode for w in ([], ["--watch"])]
    return rcs == [127, 127], f"exits {rcs}"


@attack("exit", "--output: self-symlink, a directory, a dangling link into a missing dir, /dev/full", "4")
def _() -> Result:
    loop = TMP / "self.json"
    with contextlib.suppress(FileExistsError):
        loop.symlink_to(loop.name)
    dangling = TMP / "dangle.json"
    with contextlib.suppress(FileExistsError):
        dangling.symlink_to(TMP / "missing" / "x.json")
    rcs = [
        sc("audit", "--facts", str(H200), "--output", str(t)).returncode
        for t in (loop, TMP, dangling, Path("/dev/full"))
    ]
    return rcs == [2, 2, 2, 2], f"exits {rcs}"


@attack("exit", "closed stdout (>&-) and stdout on /dev/full, audit/triage/gate", "6")
def _() -> Result:
    rcs = []
    for args in (
        ["audit", "--facts", str(H200)],
        ["triage", str(ROOT / "tests/data/logs/oom.log")],
        ["gate", "--facts", str(H200), "--dry-run", "--", *LAUNCH],
    ):
        rcs.append(
            subprocess.run(  # noqa: PLW1510 - the exit status is the result
                [sys.executable, "-m", "stackcheck", *args],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=ROOT,
                preexec_fn=lambda: os.close(1),
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            ).returncode
        )
        with open("/dev/full", "wb") as full:
            rcs.append(
                subprocess.run(  # noqa: PLW1510 - the exit status is the result
                    [sys.executable, "-m", "stackcheck", *args],
                    stdout=full,
                    cwd=ROOT,
                    stderr=subprocess.DEVNULL,
                    env={**os.environ, "PYTHONPATH": str(ROOT)},
                ).returncode
            )
    return rcs == [2] * 6, f"exits {rcs}"


@attack("exit", "stdout to a reader that goes away (| head -c 10): quiet, no 'Exception ignored'")
def _() -> Result:
    p = subprocess.run(  # noqa: PLW1510 - the exit status is the result
        f"{sys.executable} -m stackcheck audit --facts {H200} --format json | head -c 10",
        shell=True,
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return b"Exception ignored" not in p.stderr and b"Traceback" not in p.stderr, "quiet"


@attack("exit", "surrogates: facts hostname, env byte \\xff, argv byte \\xff, --output, every format", "7")
def _() -> Result:
    f = facts_with(H200, _hostile)
    out = TMP / "sur"
    out.mkdir(exist_ok=True)
    rcs = [
        sc("audit", "--facts", str(f), "--format", x, "--output", str(out / x)).returncode
        for x in ("json", "text", "markdown", "prometheus", "nfd")
    ]
    rcs.append(sc("probe", "--format", "json", env={"NCCL_SOCKET_IFNAME": "e\udcff"}).returncode)
    rcs.append(sc("gate", "--facts", str(H200), "--dry-run", "--", *LAUNCH, os.fsdecode(b"\xff")).returncode)
    left = [p.name for p in out.iterdir() if p.name.endswith(".tmp")]
    return rcs == [0, 0, 0, 0, 0, 0, 0] and not left, f"exits {rcs}, leftovers {left}"


@attack("exit", "one bad report (lone surrogate hostname, deep JSON, binary) in a fleet", "3")
def _() -> Result:
    d = TMP / "fleet-bad"
    d.mkdir(exist_ok=True)
    good = json.loads(sc("audit", "--facts", str(H200), "--format", "json").stdout)
    (d / "good.json").write_text(json.dumps(good))
    good["host"]["hostname"] = "\ud800"
    (d / "sur.json").write_text(json.dumps(good))
    (d / "deep.json").write_text("[" * 100000 + "]" * 100000)
    (d / "bin.json").write_bytes(b"\x00\xff\xfe")
    rcs = [sc("fleet", str(d), "--format", x, "--jobs", "1").returncode for x in ("text", "json", "csv", "markdown")]
    return rcs == [0, 0, 0, 0], f"exits {rcs}"


@attack("exit", "a link planted in /tmp by another user (root follows it)")
def _() -> Result:
    victim = TMP / "victim"
    victim.write_text("precious")
    link = Path(tempfile.mktemp(dir="/tmp", suffix=".json"))
    link.symlink_to(victim)
    if os.geteuid() == 0:
        os.lchown(link, 65534, 65534)
        p = sc("audit", "--facts", str(H200), "--output", str(link))
        held = p.returncode == 2 and victim.read_text() == "precious"
        detail = f"exit {p.returncode}"
    else:
        held, detail = True, "not root: the kernel's own protected_symlinks applies (skipped)"
    link.unlink()
    return held, detail


@attack("exit", "a FIFO planted in /tmp by another user as --output (no reader)")
def _() -> Result:
    fifo = Path(tempfile.mktemp(dir="/tmp", suffix=".json"))
    os.mkfifo(fifo)
    if os.geteuid() == 0:
        os.chown(fifo, 65534, 65534)
    p = sc("audit", "--facts", str(H200), "--output", str(fifo), timeout=20)
    fifo.unlink()
    return p.returncode == 2, f"exit {p.returncode}"


@attack("exit", "closed stdin (<&-) with '-': audit --facts -, triage -, fleet -", "3")
def _() -> Result:
    rcs = [
        subprocess.run(  # noqa: PLW1510 - the exit status is the result
            [sys.executable, "-m", "stackcheck", *a],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            preexec_fn=lambda: os.close(0),
        ).returncode
        for a in (["audit", "--facts", "-"], ["triage", "-"], ["fleet", "-"])
    ]
    return rcs == [2, 2, 2], f"exits {rcs}"


# -- the model-architecture pre-flight (stop 34): a live gate against a stand-in SGLang whose models it reads ------


def _fake_sglang(name: str, modules: dict[str, bytes]) -> tuple[str, Path, Path]:
    """(its python, its sglang/srt/models directory, a cache directory): bench/fake_sglang_env's venv with `modules`."""
    sys.path.insert(0, str(ROOT / "bench"))
    from fake_sglang_env import build, site_packages  # type: ignore[import-not-found]  # beside this script

    prefix = TMP / name
    python = build(str(prefix))
    models = Path(site_packages(str(prefix))) / "sglang" / "srt" / "models"
    models.mkdir(parents=True, exist_ok=True)
    (models.parent.parent / "__init__.py").write_text("")
    for n, data in modules.items():
        (models / n).write_bytes(data)
    cache = TMP / f"{name}-cache"
    cache.mkdir(mode=0o700, exist_ok=True)
    return python, models, cache


OUR_MODULE = b"class OurForCausalLM:\n    pass\n\n\nEntryClass = OurForCausalLM\n"


def _model(name: str, architectures: object) -> Path:
    d = TMP / name
    d.mkdir(exist_ok=True)
    (d / "config.json").write_text(json.dumps({"architectures": architectures, "model_type": "x"}))
    return d


def _live_gate(python: str, cache: Path, model: Path, *more: str, timeout: float = 30) -> tuple[int, str]:
    p = sc(
        "gate", "--dry-run", "--", python, "-m", "sglang.launch_server", "--model-path", str(model), *more,
        env={"STACKCHECK_CACHE_DIR": str(cache)}, timeout=timeout,
    )  # fmt: skip
    return p.returncode, p.stdout.decode("utf-8", "replace") + p.stderr.decode("utf-8", "replace")


def _arch_line(out: str) -> str:
    return next((line for line in out.splitlines() if "preflight model-architecture:" in line), "")


@attack("hang", "a 1 MiB model module of unclosed 'from m import (' lines (quadratic regex), live gate", "1")
def _() -> Result:
    hostile = b"EntryClass = X\n" + b"from a import (\n" * 65536
    python, _, cache = _fake_sglang("arch-hostile", {"ours.py": OUR_MODULE, "hostile.py": hostile})
    start = time.monotonic()
    rc, out = _live_gate(python, cache, _model("arch-m1", ["OurForCausalLM"]), timeout=60)
    took = time.monotonic() - start
    return took < 20 and "model-architecture: ok" in _arch_line(out), f"exit {rc} in {took:.1f} s"


@attack("hang", "a FIFO, then a link to the user's file, at the registry cache entry's name", "2")
def _() -> Result:
    python, _, cache = _fake_sglang("arch-cache", {"ours.py": OUR_MODULE})
    model = _model("arch-m2", ["OurForCausalLM"])
    _live_gate(python, cache, model)
    (entry,) = (cache / "registry").glob("*.json")
    entry.unlink()
    os.mkfifo(entry)
    try:
        rc1, out1 = _live_gate(python, cache, model, timeout=20)
    except subprocess.TimeoutExpired:
        return False, "hung on the FIFO"
    victim = TMP / "arch-victim"
    victim.write_text("precious")
    entry.unlink()
    entry.symlink_to(victim)
    rc2, out2 = _live_gate(python, cache, model)
    ok = all("model-architecture: ok" in _arch_line(o) for o in (out1, out2)) and victim.read_text() == "precious"
    return ok, f"exits {[rc1, rc2]}, victim {'kept' if victim.read_text() == 'precious' else 'overwritten'}"


@attack("gate", "model-architecture: odd config.json architectures and a non-object override", "4")
def _() -> Result:
    python, _, cache = _fake_sglang("arch-odd", {"ours.py": OUR_MODULE})
    lines = [
        _arch_line(_live_gate(python, cache, _model("arch-m3", [1, None, "OurForCausalLM"]))[1]),
        _arch_line(_live_gate(python, cache, _model("arch-m4", "OurForCausalLM"))[1]),
        _arch_line(_live_gate(python, cache, _model("arch-m5", {"OurForCausalLM": 1}))[1]),
        _arch_line(
            _live_gate(python, cache, _model("arch-m6", ["OurForCausalLM"]), "--json-model-override-args", '["x"]')[1]
        ),
    ]
    statuses = [line.rsplit(":", 1)[-1].strip() for line in lines]
    return all(st in ("unknown", "fail") for st in statuses), f"statuses {statuses}"


@attack("terminal", "model-architecture: escapes and a 1 MB name in config.json architectures", "1")
def _() -> Result:
    python, _, cache = _fake_sglang("arch-esc", {"ours.py": OUR_MODULE})
    rc, out = _live_gate(python, cache, _model("arch-m7", [f"{''.join(CONTROLS)}Evil", "A" * 1_000_000]))
    longest = max(len(line) for line in out.splitlines())
    raw = [c for c in CONTROLS if c in out]
    return not raw and longest < 5000, f"exit {rc}, raw controls {raw!r}, longest line {longest}"


@attack("gate", "--speculative-draft-attention-backend with a value the data does not know", "2")
def _() -> Result:
    spec = ["--speculative-algorithm", "EAGLE", "--speculative-draft-attention-backend"]
    rcs = [
        sc("gate", "--facts", str(H200), "--dry-run", "--", *LAUNCH, *spec, v).returncode
        for v in ("no_such_backend", "trtllm_mla\x1b[2J")
    ]
    return rcs == [1, 1], f"exits {rcs}"


@attack("exit", "gate --watch --log to a link another user planted in /tmp")
def _() -> Result:
    if os.geteuid() != 0:
        return True, "not root: the kernel's own protected_symlinks applies (skipped)"
    victim = TMP / "log-victim"
    victim.write_text("precious")
    link = Path(tempfile.mktemp(dir="/tmp", suffix=".log"))
    link.symlink_to(victim)
    os.lchown(link, 65534, 65534)
    p = sc("gate", "--facts", str(H200), "--watch", "--log", str(link), "--", "echo", "appended")
    link.unlink()
    return p.returncode == 2 and victim.read_text() == "precious", f"exit {p.returncode}"


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", help="run only this group (gate, leak, terminal, hang, exit)")
    args = ap.parse_args()
    attacks = cases_total = broken = limits = 0
    print("| group | attack | cases | result | detail |\n|---|---|---:|---|---|")
    for group, name, cases, fn in ATTACKS:
        if args.only and group != args.only:
            continue
        try:
            held, detail = fn()
        except Exception as exc:  # an attack that crashed the harness counts as broken
            held, detail = False, f"{type(exc).__name__}: {exc}"
        attacks += 1
        cases_total += int(cases)
        broken += held is False
        limits += held is None
        cell = name.replace("|", "\\|")
        result = {True: "held", False: "BROKEN", None: "limitation"}[held]
        print(f"| {group} | {cell} | {cases} | {result} | {detail} |", flush=True)
    print(f"\n{attacks} attacks, {cases_total} cases, {broken} broken, {limits} documented limitations")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main())
