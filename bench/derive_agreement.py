"""Agreement of `stackcheck manifests derive` with the shipped hand-curated manifests, per kind of fact.

Derives every wheel given (or every wheel in the test cache, ~/.cache/stackcheck-tests/wheels) and compares
it with the shipped manifests: for each kind (pins, gate values, flags, archs) the facts both sides record
and how many agree, plus what derive found that the data does not record. Prints a table and every
disagreement; --json FILE writes the details.

    python bench/derive_agreement.py [WHEEL...] [--only sglang,flashinfer-python] [--json FILE] [--keep DIR]

--keep DIR stores each wheel's derived facts there (and reuses them while the wheel is unchanged), so the
comparison can be repeated against other manifests (STACKCHECK_MANIFESTS=DIR, merged over the shipped set)
without reading the wheels again.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from stackcheck.derive.compare import KINDS, compare  # noqa: E402
from stackcheck.derive.release import derive_release  # noqa: E402
from stackcheck.derive.tree import open_releases  # noqa: E402
from stackcheck.knowledge.loader import load  # noqa: E402

CACHE = Path.home() / ".cache" / "stackcheck-tests" / "wheels"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("wheels", nargs="*", type=Path)
    ap.add_argument("--only", default="", help="comma-separated package names")
    ap.add_argument("--json", type=Path)
    ap.add_argument("--keep", type=Path, help="store and reuse derived facts per wheel")
    args = ap.parse_args()
    wheels = args.wheels or sorted(CACHE.glob("*.whl"))
    only = {x for x in args.only.split(",") if x}
    manifests = load()
    totals = {k: {"agree": 0, "differ": 0, "derived_only": 0, "shipped_only": 0} for k in KINDS}
    rows = []
    for wheel in wheels:
        st = wheel.stat()
        kept = args.keep / f"{wheel.name}.{st.st_size}.{st.st_mtime_ns}.json" if args.keep else None
        if kept is not None and kept.is_file():
            derived = json.loads(kept.read_text())
            if only and derived["package"] not in only:
                continue
            seconds = float(derived.get("_seconds", 0.0))
        else:
            (release,) = open_releases(wheel)
            t0 = time.perf_counter()
            try:
                from stackcheck.derive.release import read_metadata

                read_metadata(release)
                if only and release.name not in only:
                    continue
                derived = derive_release(release, manifests)
            finally:
                release.tree.close()
            seconds = time.perf_counter() - t0
            if kept is not None:
                args.keep.mkdir(parents=True, exist_ok=True)
                kept.write_text(json.dumps({**derived, "_seconds": seconds}))
        cmp = compare(derived, manifests)
        counts = {k: {"agree": 0, "differ": 0, "derived_only": 0, "shipped_only": 0} for k in KINDS}
        for f in cmp.findings:
            slot = {
                "same": "agree",
                "differs": "differ",
                "derived-only": "derived_only",
                "new": "derived_only",
                "shipped-only": "shipped_only",
            }[f.status]
            counts[f.kind][slot] += 1
            totals[f.kind][slot] += 1
        rows.append(
            {
                "package": cmp.package,
                "version": cmp.version,
                "known": cmp.known,
                "seconds": round(seconds, 2),
                "counts": counts,
                "findings": [f.to_json() for f in cmp.differences],
                "problems": derived.get("problems", []),
            }
        )
        diffs = [f for f in cmp.findings if f.status in ("differs", "shipped-only")]
        print(
            f"{cmp.package} {cmp.version}: {seconds:.2f} s; "
            + "; ".join(
                f"{k} {c['agree']}/{c['agree'] + c['differ'] + c['shipped_only']}"
                for k, c in counts.items()
                if any(c.values())
            )
        )
        for f in diffs:
            note = f" {f.note}" if f.note else ""
            print(f"    {f.status} {f.kind} {f.key}: derived {f.derived!r} data {f.shipped!r} [{f.where}]{note}")
    print()
    print("| kind | compared | agree | differ | data only | derived only (not in the data) | agreement |")
    print("|---|---|---|---|---|---|---|")
    for kind, c in totals.items():
        compared = c["agree"] + c["differ"] + c["shipped_only"]
        rate = f"{100.0 * c['agree'] / compared:.1f} %" if compared else "-"
        cells = [kind, compared, c["agree"], c["differ"], c["shipped_only"], c["derived_only"], rate]
        print("| " + " | ".join(map(str, cells)) + " |")
    if args.json:
        args.json.write_text(json.dumps({"totals": totals, "releases": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
