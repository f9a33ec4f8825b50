"""The thirty-seventh fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md,
"Thirty-seventh sample").

    PYTHONPATH=.:tests python bench/factcheck37_draw.py OUT_DIR

Fixed before any row was checked. Aimed at the thirty-fifth / thirty-sixth samples' undrawn population: LMCache
0.3.x-0.5.x beside torch releases, where stackcheck says ok (audit's extension-torch-abi-lmcache) or allow (the
gate's `--enable-lmcache`).

Sites: factcheck35_draw._site (every library of torch/lib of the torch wheel, sgl-kernel 0.3.0's common_ops, every
file of the LMCache wheel its EXTENSIONS globs take, extracted with registry_wheels.extract_dynamic) for each LMCache
release of LMCACHE (every release pip downloaded as a cp312 manylinux x86_64 wheel, 2026-12-05: 0.3.0 has none) and
each torch of TORCHES (the cached cp312 wheels; 2.13.0 and 2.14.1 left out), its kernel_symbols section the real
probe's (probe_kernel_symbols) over that site.

(a) `audit --facts F --format json` of tests/cases/h200-newest with the SGLang release AUDIT_RELEASE[torch] and its
    pins (factcheck7_draw.release_box), torch's version set to the wheel's: one row per (LMCache, torch) where
    extension-torch-abi-lmcache is ok, with its reasons' rule / observed / result;
(g) `gate --dry-run --format json` of `--enable-lmcache --tp 1` (Llama 3 config) on factcheck27_draw._box with each
    SGLang release of GATE_RELEASES[torch] (releases with --enable-lmcache whose torch pin is that torch; 0.5.5 for
    2.7.1, as the thirty-fifth sample), the same kernel_symbols section: one row per allow.

Draw: random.Random(20270106); per population its rows sorted by their JSON text, shuffled, the first k (a: 4,
g: 4), 8 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck7_draw import release_box
from factcheck27_draw import _box
from factcheck35_draw import _reasons, _site, _torch_version
from factcheck_draw import draw, stackcheck_json, write_models
from gate_cli import LLAMA3
from registry_wheels import fetch_wheel

SEED = 20270106
LMCACHE = [
    "0.3.1",
    "0.3.1.post1",
    "0.3.2",
    "0.3.3",
    "0.3.4",
    "0.3.5",
    "0.3.6",
    "0.3.7",
    "0.3.9",
    "0.3.9.post1",
    "0.3.9.post2",
    "0.3.10",
    "0.3.10.post1",
    "0.3.10.post2",
    "0.3.11",
    "0.3.12",
    "0.3.13",
    "0.3.14",
    "0.3.15",
    "0.4.1",
    "0.4.2",
    "0.4.3",
    "0.4.4",
    "0.4.5",
    "0.4.6",
    "0.4.7",
    "0.5.0",
    "0.5.1",
    "0.5.2",
    "0.5.3",
    "0.5.4",
    "0.5.5",
    "0.5.6",
]
TORCHES = ["2.7.1", "2.8.0", "2.9.1", "2.11.0"]
AUDIT_RELEASE = {"2.7.1": "0.5.5", "2.8.0": "0.5.5", "2.9.1": "0.5.8", "2.11.0": "0.5.12"}
GATE_RELEASES = {
    "2.7.1": ["0.5.5"],
    "2.8.0": ["0.5.2", "0.5.5"],
    "2.9.1": ["0.5.6", "0.5.10"],
    "2.11.0": ["0.5.11", "0.5.17"],
}
CHECK = "extension-torch-abi-lmcache"


def _symbols(out: Path, version: str, torch: str, cache: dict[tuple[str, str], Any]) -> Any:
    from stackcheck.readers.fsview import HostView
    from stackcheck.readers.kernelsymbols import probe_kernel_symbols

    key = (version, torch)
    if key not in cache:
        site = _site(out, "lmcache", version, torch)
        tver = _torch_version(fetch_wheel("torch", torch))
        probe = {
            "sgl-kernel": {"installed": True, "version": "0.3.0", "location": str(site)},
            "torch": {"installed": True, "version": tver, "location": str(site)},
            "lmcache": {"installed": True, "version": version, "dist_version": version, "location": str(site)},
        }
        cache[key] = (site, tver, probe_kernel_symbols(probe, HostView("/"), None))
    return cache[key]


def _write(out: Path, doc: dict[str, Any], version: str, torch: str, tag: str, cache: dict[Any, Any]) -> Path:
    site, tver, section = _symbols(out, version, torch, cache)
    facts = doc["facts"]
    pkgs = facts["packages"]
    pkgs["torch"] = {**pkgs["torch"], "version": tver, "location": str(site)}
    pkgs["lmcache"] = {"installed": True, "version": version, "dist_version": version, "location": str(site)}
    facts["kernel_symbols"] = section
    path = out / "boxes" / f"lmcache-{version}--torch-{torch}--{tag}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"schema_version": 1, "facts": facts}))
    return path


def audit_rows(out: Path, cache: dict[Any, Any]) -> list[dict[str, Any]]:
    rows = []
    for version in LMCACHE:
        for torch in TORCHES:
            rel = AUDIT_RELEASE[torch]
            path = _write(out, release_box("h200-newest", rel), version, torch, f"audit-{rel}", cache)
            doc = stackcheck_json(["audit", "--facts", str(path), "--format", "json"])
            for c in doc.get("checks") or []:
                if c.get("id") == CHECK and c.get("status") == "ok":
                    base = {"pop": "a", "lmcache": version, "torch": torch, "sglang": rel, "check": CHECK}
                    rows.append({**base, "reasons": _reasons(c)})
        print(f"a {version}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def gate_rows(out: Path, cache: dict[Any, Any]) -> list[dict[str, Any]]:
    write_models(out, {"llama3": LLAMA3})
    flags = ["--enable-lmcache", "--tp", "1"]
    rows: list[dict[str, Any]] = []
    for version in LMCACHE:
        for torch in TORCHES:
            for rel in GATE_RELEASES[torch]:
                doc = json.loads(_box(out, rel, None).read_text())
                path = _write(out, doc, version, torch, f"gate-{rel}", cache)
                line = ["python3", "-m", "sglang.launch_server", "--model-path", str(out / "models" / "llama3")]
                got = stackcheck_json(
                    ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--", *line, *flags]
                )
                if got.get("decision") == "allow":
                    base = {"pop": "g", "lmcache": version, "torch": torch, "sglang": rel}
                    rows.append({**base, "flags": " ".join(flags)})
        print(f"g {version}: {len(rows)}", file=sys.stderr, flush=True)
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    cache: dict[Any, Any] = {}
    draw(out, SEED, [(4, audit_rows(out, cache)), (4, gate_rows(out, cache))])


if __name__ == "__main__":
    main()
