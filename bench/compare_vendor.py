"""Check stackcheck's probes against the vendor's own tools on a real GPU box.

Runs `stackcheck probe --deep --format json` and, beside it, nvidia-smi, nvcc, torch itself and cuobjdump,
then prints one table: each fact as stackcheck read it, as the vendor tool printed it, and whether they
agree. Writes everything it ran to --out (JSON) and the probe's report to --facts-out.

    python3 bench/compare_vendor.py --out /tmp/compare.json --facts-out examples/facts/h200-cu130.json
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any


def sh(argv: list[str], timeout: float = 120) -> tuple[int, str]:
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
        return p.returncode, p.stdout + p.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return -1, f"{type(exc).__name__}: {exc}"


def stackcheck_cmd() -> list[str]:
    exe = shutil.which("stackcheck")
    return [exe] if exe else [sys.executable, "-P", "-m", "stackcheck"]


def vendor_smi() -> dict[str, Any]:
    out: dict[str, Any] = {}
    rc, text = sh(
        [
            "nvidia-smi",
            "--query-gpu=index,name,uuid,pci.bus_id,compute_cap,memory.total,driver_version",
            "--format=csv,noheader,nounits",
        ]
    )
    out["query_rc"] = rc
    out["gpus"] = []
    if rc == 0:
        for line in text.strip().splitlines():
            f = [x.strip() for x in line.split(",")]
            if len(f) >= 7:
                out["gpus"].append(
                    {
                        "index": int(f[0]),
                        "name": f[1],
                        "uuid": f[2],
                        "pci_bus_id": f[3],
                        "compute_capability": f[4],
                        "memory_mib": f[5],
                        "driver": f[6],
                    }
                )
    _, text = sh(["nvidia-smi"])
    m = re.search(r"CUDA Version:\s*([0-9.]+)", text)
    out["cuda"] = m.group(1) if m else None
    m = re.search(r"Driver Version:\s*([0-9.]+)", text)
    out["driver"] = m.group(1) if m else None
    out["topo_m"] = sh(["nvidia-smi", "topo", "-m"])[1]
    out["topo_p2p_r"] = sh(["nvidia-smi", "topo", "-p2p", "r"])[1]
    return out


def vendor_nvcc() -> str | None:
    _, text = sh(["nvcc", "--version"])
    m = re.search(r"release ([0-9.]+), V([0-9.]+)", text)
    return m.group(2) if m else None


def vendor_torch() -> dict[str, Any]:
    code = (
        "import json, torch; c = torch.cuda.is_available(); print(json.dumps({'version': torch.__version__, "
        "'cuda': torch.version.cuda, 'arch_list': torch.cuda.get_arch_list() if c else [], "
        "'capability': '%d.%d' % torch.cuda.get_device_capability(0) if c else None, "
        "'name': torch.cuda.get_device_name(0) if c else None, 'file': torch.__file__}))"
    )
    _, text = sh([sys.executable, "-c", code])
    try:
        return dict(json.loads(text.strip().splitlines()[-1]))
    except (ValueError, IndexError):
        return {"error": text[-500:]}


def cuobjdump_targets(path: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"sass": [], "ptx": []}
    if not shutil.which("cuobjdump"):
        return {"error": ["cuobjdump not found"]}
    for flag, key in (("--list-elf", "sass"), ("--list-ptx", "ptx")):
        _, text = sh(["cuobjdump", flag, path], timeout=600)
        names = set(re.findall(r"\.(sm_\d+[af]?)\.(?:cubin|ptx)", text))
        out[key] = sorted(n.replace("sm_", "compute_") if key == "ptx" else n for n in names)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="compare.json")
    ap.add_argument("--facts-out", default=None, help="save stackcheck's probe report here (a real recording)")
    args = ap.parse_args()

    _, text = sh([*stackcheck_cmd(), "probe", "--deep", "--format", "json"], timeout=300)
    report = json.loads(text[text.index("{") :]) if "{" in text else {}
    facts = report.get("facts", {})
    smi, nvcc, torch = vendor_smi(), vendor_nvcc(), vendor_torch()
    torch_pkg = facts.get("packages", {}).get("torch", {})
    torch_lib = Path(torch_pkg.get("location") or "/nonexistent") / "torch" / "lib" / "libtorch_cuda.so"
    cuobj = cuobjdump_targets(str(torch_lib)) if torch_lib.exists() else {"error": ["no libtorch_cuda.so"]}
    ours_torch_lib = next(
        (
            f
            for f in facts.get("binaries", {}).get("torch", {}).get("files", [])
            if f.get("path", "").endswith("libtorch_cuda.so")
        ),
        {},
    )

    rows: list[tuple[str, Any, Any]] = []
    g0 = (facts.get("gpus") or [{}])[0]
    v0 = (smi.get("gpus") or [{}])[0]
    rows.append(("driver version", facts.get("driver", {}).get("version"), smi.get("driver")))
    rows.append(("CUDA driver version", facts.get("driver", {}).get("cuda"), smi.get("cuda")))
    rows.append(("GPU count", len(facts.get("gpus") or []), len(smi.get("gpus") or [])))
    rows.append(("GPU 0 name", g0.get("name"), v0.get("name")))
    rows.append(("GPU 0 compute capability", g0.get("compute_capability"), v0.get("compute_capability")))
    rows.append(("GPU 0 compute capability (torch)", g0.get("compute_capability"), torch.get("capability")))
    rows.append(("GPU 0 PCI bus id", (g0.get("pci_bus_id") or "").upper(), (v0.get("pci_bus_id") or "").upper()))
    rows.append(("GPU 0 UUID", g0.get("uuid"), v0.get("uuid")))
    rows.append(("GPU 0 memory MiB", (g0.get("memory_bytes") or 0) // 2**20, int(v0.get("memory_mib") or 0)))
    tk = [t for t in facts.get("cuda_toolkits") or [] if t.get("nvcc")]
    rows.append(("nvcc version", tk[0].get("version") if tk else None, nvcc))
    rows.append(("torch version", torch_pkg.get("version"), torch.get("version")))
    rows.append(("torch CUDA build", torch_pkg.get("cuda"), torch.get("cuda")))
    plain = sorted({s for s in ours_torch_lib.get("sass", []) if not s.endswith(("a", "f"))})
    rows.append(("torch arch list (plain SASS in libtorch_cuda.so)", plain, sorted(torch.get("arch_list") or [])))
    rows.append(("libtorch_cuda.so SASS", sorted(ours_torch_lib.get("sass", [])), cuobj.get("sass")))
    rows.append(("libtorch_cuda.so PTX", sorted(ours_torch_lib.get("ptx", [])), cuobj.get("ptx")))
    # every torch library with GPU code: the binary probe against cuobjdump, file by file
    per_file = []
    for f in facts.get("binaries", {}).get("torch", {}).get("files", []):
        lib = Path(torch_pkg.get("location") or "/nonexistent") / f.get("path", "")
        if lib.name == "libtorch_cuda.so" or not lib.exists():
            continue
        theirs = cuobjdump_targets(str(lib))
        per_file.append({"file": f.get("path"), "ours": f, "cuobjdump": theirs})
        rows.append((f"{lib.name} SASS", sorted(f.get("sass", [])), theirs.get("sass")))
        rows.append((f"{lib.name} PTX", sorted(f.get("ptx", [])), theirs.get("ptx")))
    width = max(len(r[0]) for r in rows)
    agree = 0
    for name, ours, theirs in rows:
        same = ours == theirs
        agree += same
        print(f"{'✓' if same else '✗'} {name:<{width}}  stackcheck: {ours}   vendor: {theirs}")
    print(
        f"{agree}/{len(rows)} agree; libtorch_cuda.so bytes read by the binary probe: "
        f"{ours_torch_lib.get('bytes_read')} of {torch_lib.stat().st_size if torch_lib.exists() else '?'}"
    )
    Path(args.out).write_text(
        json.dumps(
            {
                "rows": rows,
                "nvidia_smi": smi,
                "nvcc": nvcc,
                "torch": torch,
                "cuobjdump_libtorch_cuda": cuobj,
                "per_file": per_file,
                "probes": report.get("probes"),
            },
            indent=1,
        )
    )
    if args.facts_out:
        report["note"] = "Real recording: `stackcheck probe --deep --format json` on a lent NVIDIA H200 machine."
        Path(args.facts_out).write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
