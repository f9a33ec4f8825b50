"""H200 proof for issue 15: stackcheck in its own venv, auditing the system Python's real torch through
`--python`, gives the same facts and the same verdicts as the audit run inside that environment; and what
`--python` costs (warm cache against in-env; cold against one interpreter start).

One command on the H200 (system Python 3.12 with torch 2.11.0+cu130 and nvidia-ml-py, no network):

    python3 bench/h200_target_proof.py --out "$OUT"

What it does:
1. makes stackcheck's own venv in /tmp/sc-own-venv (`python3 -m venv --without-pip`, or by hand: a bin/python
   link and a pyvenv.cfg, which is all a venv is) and puts stackcheck's runtime dependencies in it: the
   wheels in .whl/ when the tree carries them (unzipped: a wheel is a zip of its installed files), else a
   copy of the modules from the system Python (packaging, pynvml and their dist-info). stackcheck itself is
   this tree, through PYTHONPATH, in both runs; what the system Python lacks to run stackcheck in-env is
   unzipped into /tmp/sc-system-deps, also on PYTHONPATH in both runs (PYTHONPATH counts for the target
   too, so both audits read the same directories).
2. in-env:  PYTHONPATH=tree python3 -m stackcheck audit --deep --format json
   --python: PYTHONPATH=tree /tmp/sc-own-venv/bin/python -m stackcheck audit --deep --format json
             --python /usr/bin/python3        (twice: the interpreter runs, then the cache answers)
3. compares the facts section by section (facts.python only on version and prefix: how and by which rule
   it was chosen differ by design) and the features and checks (id, status, effect), and checks torch's
   version and CUDA against `import torch` in the system Python (ground truth, imported only here);
4. times in-env / warm / cold / `python3 -c pass` (bench/bench_target.py's method, --runs).

Prints PROOF OK or PROOF FAILED with every difference; writes $OUT/target_proof.json and the reports.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
VENV = Path("/tmp/sc-own-venv")
DEPS = Path("/tmp/sc-system-deps")
CHOICE_KEYS = ("chosen_by", "learned", "executable", "sys_path", "notes")


def sh(argv: list[str], env: dict[str, str], check: bool = True) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(argv, capture_output=True, text=True, env=env, cwd="/", timeout=300, check=False)
    if check and p.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit {p.returncode}\n{p.stderr[-2000:]}")
    return p


#: what `stackcheck audit --format json` imports beyond the standard library: module -> wheel name prefix
NEEDED = {"packaging": "packaging", "pynvml": "nvidia_ml_py"}


def importable(python: str, module: str, env: dict[str, str] | None = None) -> bool:
    p = subprocess.run([python, "-c", f"import {module}"], capture_output=True, env=env, check=False)
    return p.returncode == 0


def install(module: str, site: Path, system: str, log: list[str]) -> None:
    """Put `module` into a site directory: its wheel from .whl/ unzipped (a wheel is a zip of its installed
    files), else a copy of the system Python's module and dist-info."""
    wheels = sorted((REPO / ".whl").glob(f"{NEEDED[module]}-*.whl")) if (REPO / ".whl").is_dir() else []
    if wheels:
        with zipfile.ZipFile(wheels[-1]) as z:
            z.extractall(site)
        log.append(f"{site}: unzipped {wheels[-1].name}")
        return
    code = f"import {module}; print({module}.__file__)"
    where = subprocess.run([system, "-c", code], capture_output=True, text=True, check=False)
    if where.returncode != 0:
        raise SystemExit(f"{module}: no wheel in .whl/ and {system} cannot import it: cannot run stackcheck")
    path = Path(where.stdout.strip())
    src = path.parent if path.name == "__init__.py" else path
    if src.is_dir():
        shutil.copytree(src, site / src.name, dirs_exist_ok=True)
    else:
        shutil.copy2(src, site / src.name)
    for info in src.parent.glob(f"{NEEDED[module]}-*.dist-info"):
        shutil.copytree(info, site / info.name, dirs_exist_ok=True)
    log.append(f"{site}: copied {module} from {src.parent}")


def make_venv(system: str, log: list[str]) -> tuple[Path, Path]:
    """stackcheck's own venv (its dependencies inside it), and a directory with what the system Python lacks
    to run stackcheck in-env (put on PYTHONPATH for both runs, so both audited sys.paths have it)."""
    shutil.rmtree(VENV, ignore_errors=True)
    p = subprocess.run([system, "-m", "venv", "--without-pip", str(VENV)], capture_output=True, text=True, check=False)
    if p.returncode != 0:
        log.append(f"venv module failed ({p.stderr.strip()[-200:]}); made the venv by hand")
        real = os.path.realpath(system)
        version = subprocess.run(
            [system, "-c", "import sys; print('%d.%d.%d' % sys.version_info[:3])"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        (VENV / "bin").mkdir(parents=True)
        (VENV / "bin" / "python3").symlink_to(real)
        (VENV / "bin" / "python").symlink_to("python3")
        xy = ".".join(version.split(".")[:2])
        (VENV / "lib" / f"python{xy}" / "site-packages").mkdir(parents=True)
        (VENV / "pyvenv.cfg").write_text(
            f"home = {os.path.dirname(real)}\ninclude-system-site-packages = false\nversion = {version}\n"
        )
    site = next((VENV / "lib").glob("python3*/site-packages"))
    deps = DEPS
    shutil.rmtree(deps, ignore_errors=True)
    deps.mkdir(parents=True)
    for module in NEEDED:
        if not importable(str(VENV / "bin" / "python"), module):
            install(module, site, system, log)
        if not importable(system, module, {"PATH": os.environ.get("PATH", "")}):
            install(module, deps, system, log)
    return VENV / "bin" / "python", deps


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    diffs: list[str] = []
    fa, fb = a.get("facts") or {}, b.get("facts") or {}
    for section in sorted(set(fa) | set(fb)):
        va, vb = fa.get(section), fb.get(section)
        if section == "python":
            va = {k: v for k, v in (va or {}).items() if k not in CHOICE_KEYS}
            vb = {k: v for k, v in (vb or {}).items() if k not in CHOICE_KEYS}
        if section == "binaries":  # durations differ run to run
            va, vb = _no_durations(va), _no_durations(vb)
        if section == "system":  # (imend8) MemAvailable at probe time differs run to run: read in both, or in neither
            va, vb = dict(va or {}), dict(vb or {})
            got = [(x.pop("memory_available_bytes", None) is None) for x in (va, vb)]
            if got[0] != got[1]:
                diffs.append(f"facts.system.memory_available_bytes: read in {'--python' if got[0] else 'in-env'} only")
        if va != vb:
            diffs.append(f"facts.{section}: in-env {json.dumps(va)[:300]} != --python {json.dumps(vb)[:300]}")
    for key in ("features", "checks"):
        ka = [(x.get("id"), x.get("status"), x.get("effect")) for x in a.get(key) or []]
        kb = [(x.get("id"), x.get("status"), x.get("effect")) for x in b.get(key) or []]
        if ka != kb:
            diffs.append(f"{key}: {sorted(set(ka) ^ set(kb))[:10]}")
    return diffs


def _no_durations(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _no_durations(v) for k, v in value.items() if k != "duration_ms"}
    if isinstance(value, list):
        return [_no_durations(v) for v in value]
    return value


def median_time(argv: list[str], env: dict[str, str], runs: int, before: Any = None) -> float:
    times = []
    for i in range(runs + 1):
        if before is not None:
            before()
        t = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, cwd="/", check=False)
        if i:
            times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.environ.get("OUT") or "/tmp/target-proof")
    ap.add_argument("--python", default="/usr/bin/python3", help="the system Python that has torch")
    ap.add_argument("--runs", type=int, default=11)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    log: list[str] = []
    own, deps = make_venv(args.python, log)
    tmp = Path(tempfile.mkdtemp(prefix="sc-proof-"))
    cache = tmp / "cache"
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "CONDA_PREFIX", "STACKCHECK_PYTHON")}
    env.update(PYTHONPATH=f"{REPO}:{deps}", XDG_CACHE_HOME=str(cache))
    audit = ["-m", "stackcheck", "audit", "--deep", "--format", "json"]

    in_env = sh([args.python, *audit], env)
    first = sh([str(own), *audit, "--python", args.python], env)
    second = sh([str(own), *audit, "--python", args.python], env)
    docs = {"in-env": json.loads(in_env.stdout), "cold": json.loads(first.stdout), "warm": json.loads(second.stdout)}
    for name, doc in docs.items():
        (out / f"audit-{name}.json").write_text(json.dumps(doc, indent=1) + "\n")
    diffs = compare(docs["in-env"], docs["cold"]) + compare(docs["in-env"], docs["warm"])
    learned = {n: (d["facts"].get("python") or {}).get("learned") for n, d in docs.items()}
    if learned != {"in-env": "this process", "cold": "ran", "warm": "cache"}:
        diffs.append(f"facts.python.learned: {learned}")
    truth = subprocess.run(
        [args.python, "-c", "import torch; print(torch.__version__, torch.version.cuda)"],
        capture_output=True,
        text=True,
        env={k: v for k, v in env.items() if k != "PYTHONPATH"},
        check=False,
    )
    torch_facts = docs["warm"]["facts"]["packages"].get("torch") or {}
    seen = f"{torch_facts.get('version')} {torch_facts.get('cuda')}"
    if truth.returncode == 0 and truth.stdout.strip() != seen:
        diffs.append(f"torch: import torch says {truth.stdout.strip()!r}, the audit says {seen!r}")

    def empty_cache() -> None:
        shutil.rmtree(cache, ignore_errors=True)

    plain = [a for a in audit if a != "--deep"]
    sh([str(own), *plain, "--python", args.python], env)  # warm the cache for the plain audit
    timing = {
        "in_env_s": median_time([args.python, *plain], env, args.runs),
        "warm_s": median_time([str(own), *plain, "--python", args.python], env, args.runs),
        "cold_s": median_time([str(own), *plain, "--python", args.python], env, args.runs, before=empty_cache),
        "python_c_pass_s": median_time([args.python, "-c", "pass"], env, args.runs),
    }
    timing["warm_over_in_env"] = round(timing["warm_s"] / timing["in_env_s"], 3)
    timing["cold_minus_warm_s"] = round(timing["cold_s"] - timing["warm_s"], 4)
    timing["warm_budget_ok"] = timing["warm_s"] <= 1.05 * timing["in_env_s"]
    timing["cold_budget_ok"] = timing["cold_minus_warm_s"] <= timing["python_c_pass_s"]
    result = {
        "proof_ok": not diffs,
        "differences": diffs,
        "torch_import": truth.stdout.strip() or truth.stderr.strip()[-300:],
        "torch_audit": seen,
        "python_facts": {n: d["facts"].get("python") for n, d in docs.items()},
        "timing": timing,
        "runs": args.runs,
        "venv_log": log,
        "machine": f"{os.cpu_count()} CPUs, {sys.version.split()[0]} (runner)",
    }
    (out / "target_proof.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"torch: import says {result['torch_import']!r}; audit through --python says {seen!r}")
    print(f"python facts (warm): {json.dumps(result['python_facts']['warm'])[:400]}")
    for line in diffs:
        print(f"DIFF {line}")
    print("timing: " + ", ".join(f"{k}={v}" for k, v in timing.items()))
    print("PROOF OK: same facts and verdicts in-env and through --python" if not diffs else "PROOF FAILED")
    shutil.rmtree(tmp, ignore_errors=True)
    return 0 if not diffs else 1


if __name__ == "__main__":
    sys.exit(main())
