#!/bin/sh
# Issue 20 on a real GPU box (one run, < 1 min): explain reads this box's GPUs through NVML and says so;
# the audit reads at 80 columns (no line wider than 80 but a single word); diff against a saved audit of the
# same box says nothing changed and exits 0; every JSON document validates against its schema.
#
#   sh bench/h200_issue20_proof.sh        (from the repository root; python3 with nvidia-ml-py)
# Proof: "explain: GPUs: this box's" and "on 1× NVIDIA H200 (cc 9.0)"; "audit at 80: widest line N <= 80";
# "diff rc=0, regressions []"; "schemas: 0 problems".
set -u
cd "$(dirname "$0")/.."
py=${PYTHON:-python3}
export PYTHONPATH="$(pwd)${PYTHONPATH:+:$PYTHONPATH}"  # keep wheels unpacked beside it (bench/device_batch.sh)
tmp=$(mktemp -d)
$py -m stackcheck explain torch-symm-mem >"$tmp/explain.txt"
echo "explain rc=$?"; sed -n 2,5p "$tmp/explain.txt"
COLUMNS=80 $py -m stackcheck audit >"$tmp/audit.txt"
echo "audit rc=$? lines=$(wc -l <"$tmp/audit.txt") above the plan=$(sed -n '/^plan/=' "$tmp/audit.txt" | head -1)"
$py - "$tmp/audit.txt" <<'PY'
import sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
wide = [l for l in lines if len(l) > 80 and " " in l.strip()]
print(f"audit at 80: widest line {max(map(len, lines))}; lines over 80 with a space in them: {len(wide)}")
PY
$py -m stackcheck audit --format json --output "$tmp/saved.json"
$py -m stackcheck diff "$tmp/saved.json" --format json >"$tmp/diff.json"
echo "diff rc=$? regressions $($py -c "import json,sys; print(json.load(open(sys.argv[1]))['regressions'])" "$tmp/diff.json")"
$py -m stackcheck gate --require torch-symm-mem --format json >"$tmp/gate.json"
$py -m stackcheck explain torch-symm-mem --format json >"$tmp/explain.json"
$py - "$tmp" <<'PY'
import json, sys
from stackcheck.knowledge.validate import schema_problems
d = sys.argv[1]
problems = []
for name, schema in (("saved", "report.schema.json"), ("diff", "diff.schema.json"),
                     ("gate", "gate.schema.json"), ("explain", "explain.schema.json")):
    try:
        problems += schema_problems(schema, json.load(open(f"{d}/{name}.json")), name)
    except Exception as exc:  # jsonschema missing on the box: say so
        problems.append(f"{name}: {type(exc).__name__}: {exc}")
print(f"schemas: {len(problems)} problems", *problems[:5], sep="\n  ")
PY
rm -rf "$tmp"
