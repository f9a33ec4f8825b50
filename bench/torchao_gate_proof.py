"""torchao's load gate and the abort rule (igap25, stackcheck/verdicts/torchao_gate.py) against a real torch: each
torchao wheel given is unpacked into a temporary directory and imported by a child of the given Python (a venv
with torch), with torch.ops.load_library wrapped to print each call and its return. What happened:

  abort        the child died of SIGABRT (a library built for another torch: 'Fatal Python error: Aborted')
  skipped      torchao's gate loaded nothing ('Skipping import of cpp extensions')
  all-loaded   every _C*.so it tried loaded
  some-failed  a load raised (an undefined symbol: torchao catches it and goes on without its kernels)

Beside it, stackcheck's prediction: torchao_gate.loads() for the gate, and for the files the kernel symbol probe's
reading of the unpacked _C*.so against this torch's torch/lib (abort where a library built before torch 2.9 resolves
in full under 2.9+).

The Python import itself (igap27, issue 16): 'import-failed' where the child's `import torchao` raised (IMPORT_ERROR,
e.g. 0.12.0 under torch 2.11: No module named 'torch._inductor.kernel.flex_attention'), 'imported' where it
finished, 'abort' where the child died first; predicted from the rules torchao-private-import-* of the check
torchao-import in manifests/checks.json (their torchao and torch version ranges: 'import-failed' where one fails).
Writes OUT/torchao_gate_proof.json and one line per wheel; exit 1 where a prediction (the load's or the import's)
and the run disagree. Imports neither torch nor torchao itself (the children do). About 10 s a wheel.

    python3 bench/torchao_gate_proof.py --python /opt/torch/.venv/bin/python --wheels DIR [--out "$OUT"]

DIR holds torchao wheels (pip download --no-deps --only-binary=:all: torchao==0.12.0 0.13.0 0.15.0 0.17.0 ...; the
shared cache ~/.cache/stackcheck-tests/wheels has 0.9.0-0.18.0). Nothing is installed into the venv.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CHILD = r"""
import logging, sys
logging.basicConfig(level=logging.DEBUG, stream=sys.stdout, format="LOG %(name)s %(message)s")
sys.path.insert(0, sys.argv[1])
import torch
print("TORCH", torch.__version__, flush=True)
_load = torch.ops.load_library
def _wrapped(path):
    print("LOAD", path, flush=True)
    _load(path)
    print("LOADED", path, flush=True)
torch.ops.load_library = _wrapped
try:
    import torchao
    print("IMPORTED", torchao.__version__, flush=True)
except BaseException as e:
    print("IMPORT_ERROR", type(e).__name__, str(e)[:300].replace("\n", " "), flush=True)
"""


def _torch_info(python: str) -> tuple[str, str]:
    code = "import os, torch; print(torch.__version__); print(os.path.dirname(os.path.dirname(torch.__file__)))"
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300, check=True).stdout
    version, site = out.strip().splitlines()[-2:]
    return version, site


def _unpack(wheel: Path, into: Path) -> tuple[str, list[Path]]:
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(into)
    info = next(into.glob("torchao-*.dist-info"))
    version = next(
        line.split(":", 1)[1].strip()
        for line in (info / "METADATA").read_text().splitlines()
        if line.startswith("Version:")
    )
    return version, sorted((into / "torchao").glob("_C*.so"))


def _predict(version: str, torch: str, site: str, tree: Path, files: list[Path]) -> tuple[str, Any]:
    from stackcheck.readers.fsview import HostView
    from stackcheck.readers.kernelsymbols import probe_kernel_symbols
    from stackcheck.verdicts.torchao_gate import BUILT_BEFORE_29, _minor, loads

    load, why = loads(version, torch)
    if load is None:
        return "unknown", why
    if not load:
        return "skipped", why
    # the probe wants a kernel package: torch's own libc10.so stands in for common_ops (read, never judged here)
    stand_in = tree / "sgl_kernel"
    stand_in.mkdir(exist_ok=True)
    (stand_in / "common_ops.abi3.so").symlink_to(Path(site) / "torch" / "lib" / "libc10.so")
    packages = {
        "sgl-kernel": {"installed": True, "version": "stand-in", "location": str(tree)},
        "torch": {"installed": True, "version": torch, "location": site},
    }
    ks = probe_kernel_symbols(packages, HostView("/"), None) or {}
    read = {
        Path(str(e.get("path"))).name: e.get("torch_missing_count")
        for e in ks.get("extensions") or []
        if e.get("extension") == "torchao"
    }
    if not files:
        return "all-loaded", read
    minor = _minor(torch)
    whole = [n for n, c in read.items() if c == 0]
    if version.split("+", maxsplit=1)[0] in BUILT_BEFORE_29 and minor is not None and minor >= (2, 9) and whole:
        return "abort", read
    if read and all(c == 0 for c in read.values()):
        return "all-loaded", read
    if any(isinstance(c, int) and c > 0 for c in read.values()):
        return "some-failed", read
    return "unknown", read


def _predict_import(version: str, torch: str) -> tuple[str, list[str]]:
    """'import-failed' and the rules that say so where a rule torchao-private-import-* of manifests/checks.json
    fails for this pair (its version ranges in `when` hold and its `require` on torch's version does not), else
    'imported'. The rules' SGLang conditions are left out: here torchao is imported whatever SGLang would do."""
    from stackcheck.facts.versions import version_in

    checks = json.loads((Path(__file__).resolve().parent.parent / "manifests" / "checks.json").read_text())
    check = next(c for c in checks["checks"] if c["id"] == "torchao-import")
    failing = []
    for rule in check["rules"]:
        if not str(rule["id"]).startswith("torchao-private-import"):
            continue
        ranges = {c["fact"]: c["value"] for c in rule["when"]["all"] if c.get("op") == "version"}
        if not (version_in(version, ranges["pkg.torchao.version"]) and version_in(torch, ranges["pkg.torch.version"])):
            continue
        if version_in(torch, rule["require"]["value"]) is False:
            failing.append(str(rule["id"]))
    return ("import-failed" if failing else "imported"), failing


def _observe_import(detail: dict[str, Any], observed: str) -> str:
    if observed == "abort":
        return "abort"
    line = str(detail.get("import_line") or "")
    if line.startswith("IMPORT_ERROR"):
        return "import-failed"
    return "imported" if line.startswith("IMPORTED") else "unknown"


def _observe(python: str, tree: Path) -> tuple[str, dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TORCHAO_")}
    proc = subprocess.run(
        [python, "-X", "faulthandler", "-c", CHILD, str(tree)],
        capture_output=True, text=True, timeout=300, check=False, env=env,
    )  # fmt: skip
    lines = proc.stdout.splitlines()
    loads = [ln.split(" ", 1)[1] for ln in lines if ln.startswith("LOAD ")]
    loaded = [ln.split(" ", 1)[1] for ln in lines if ln.startswith("LOADED ")]
    detail = {
        "rc": proc.returncode,
        "loads": [Path(p).name for p in loads],
        "loaded": [Path(p).name for p in loaded],
        "log": [ln for ln in lines if "cpp extension" in ln or "Failed to load" in ln or "IMPORT" in ln][:8],
        "stderr_tail": proc.stderr[-600:],
        "import_line": next((ln for ln in reversed(lines) if ln.startswith(("IMPORTED", "IMPORT_ERROR"))), ""),
    }
    if proc.returncode in (-6, 134) or "Fatal Python error: Aborted" in proc.stderr:
        return "abort", detail
    if not loads:
        return "skipped", detail
    if len(loaded) == len(loads):
        return "all-loaded", detail
    return "some-failed", detail


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    ap.add_argument("--python", required=True, help="the Python of a venv with torch")
    ap.add_argument("--wheels", required=True, type=Path, help="a directory of torchao wheels")
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "."))
    args = ap.parse_args()
    torch, site = _torch_info(args.python)
    rows, bad = [], 0
    for wheel in sorted(args.wheels.glob("torchao-*.whl")):
        with tempfile.TemporaryDirectory(prefix="torchao-proof-") as tmp:
            tree = Path(tmp)
            version, files = _unpack(wheel, tree)
            predicted, why = _predict(version, torch, site, tree, files)
            # the stand-in kernel directory is not on the child's import path's torchao: harmless there
            observed, detail = _observe(args.python, tree)
        agree = predicted == observed or predicted == "unknown"
        import_predicted, import_rules = _predict_import(version, torch)
        import_observed = _observe_import(detail, observed)
        import_agree = import_predicted == import_observed or import_observed == "abort"  # the abort came first
        bad += not agree or not import_agree
        rows.append({"torchao": version, "torch": torch, "predicted": predicted, "why": why, "observed": observed,
                     "agree": agree, "import_predicted": import_predicted, "import_rules": import_rules,
                     "import_observed": import_observed, "import_agree": import_agree, **detail})  # fmt: skip
        print(f"torchao {version} under torch {torch}: predicted {predicted}, observed {observed}"
              + ("" if agree else "  <-- DISAGREE")
              + f"; import predicted {import_predicted}, observed {import_observed}"
              + ("" if import_agree else "  <-- DISAGREE"))  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "torchao_gate_proof.json").write_text(json.dumps(rows, indent=1))
    return 1 if bad or not rows else 0


if __name__ == "__main__":
    sys.exit(main())
