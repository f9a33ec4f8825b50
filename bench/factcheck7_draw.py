"""The seventh fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Seventh sample").

    PYTHONPATH=. python bench/factcheck7_draw.py OUT_DIR

Fixed before any row was checked. Three populations, built from the manifests of the tree it runs in:

(a) stack checks: bench/gen_reports.templates(36, seed 20261207) (the six generated-box cases and 30 variants of
    driver, SGLang and FlashInfer); every (report, check) of nccl, driver-api, driver-vs-torch-cuda, cudnn-torch,
    sgl-kernel-torch-pair, flashinfer-cubin-match, jit-toolchain and triton-ptxas whose status is ok, one row per
    distinct (check, its reasons' rule/observed/result) -- the same inputs give the same row;
(b) recommend: `recommend --facts F --goal G --format json` for every tests/cases folder and both goals; one row
    per distinct (stack, command line, env) that prints a command;
(c) gate: the eight `python -m sglang.launch_server` lines of SGLang's docs/basic_usage pages (gpt_oss.md,
    deepseek_v3.md, qwen3.md, llama4.md; stored copies read 2026-12-02), the HF model id as given, on an 8x H200
    and an 8x B200 box (the h200-newest / b200 cases' driver, toolkit and system, NVSwitch) with every final
    SGLang release 0.5.1-0.5.23 and its pins (torch's PyPI build, pypi_variant); rows whose decision is allow.

Draw: random.Random(20261207); per population its rows sorted by their JSON text, shuffled, the first k
(a: 8, b: 4, c: 4). Nothing is replaced after the draw.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
SEED = 20261207
CHECKS = [
    "nccl",
    "driver-api",
    "driver-vs-torch-cuda",
    "cudnn-torch",
    "sgl-kernel-torch-pair",
    "flashinfer-cubin-match",
    "jit-toolchain",
    "triton-ptxas",
]
COMMANDS = [
    ("gpt_oss.md", "--model-path openai/gpt-oss-120b --tool-server demo --tp 2"),
    (
        "deepseek_v3.md",
        "--model-path deepseek-ai/DeepSeek-V3-0324 --speculative-algorithm EAGLE --trust-remote-code --tp 8",
    ),
    (
        "deepseek_v3.md",
        "--model deepseek-ai/DeepSeek-V3-0324 --tp 8 --port 30000 --host 0.0.0.0 --mem-fraction-static 0.9"
        " --tool-call-parser deepseekv3 --chat-template ./examples/chat_template/tool_chat_template_deepseekv3.jinja",
    ),
    ("qwen3.md", "--model Qwen/Qwen3-Next-80B-A3B-Instruct --tp 4"),
    (
        "qwen3.md",
        "--model Qwen/Qwen3-Next-80B-A3B-Instruct --tp 4 --speculative-num-steps 3 --speculative-eagle-topk 1"
        " --speculative-num-draft-tokens 4 --speculative-algo NEXTN",
    ),
    (
        "llama4.md",
        "--model-path meta-llama/Llama-4-Maverick-17B-128E-Instruct --speculative-algorithm EAGLE3"
        " --speculative-draft-model-path nvidia/Llama-4-Maverick-17B-128E-Eagle3 --speculative-num-steps 3"
        " --speculative-eagle-topk 1 --speculative-num-draft-tokens 4 --trust-remote-code --tp 8"
        " --context-length 1000000",
    ),
    (
        "llama4.md",
        "--model-path meta-llama/Llama-4-Scout-17B-16E-Instruct --port 30000 --tp 8 --mem-fraction-static 0.8"
        " --context-length 65536",
    ),
    (
        "llama4.md",
        "--model-path meta-llama/Llama-4-Maverick-17B-128E-Instruct --port 30000 --tp 8 --mem-fraction-static 0.8"
        " --context-length 65536",
    ),
]
BOXES = [("h200", "h200-newest"), ("b200", "b200")]


def _run(args: list[str]) -> dict[str, Any]:
    r = subprocess.run(
        [sys.executable, "-m", "stackcheck", *args], check=False, capture_output=True, text=True, cwd=ROOT
    )
    doc: dict[str, Any] = json.loads(r.stdout)
    return doc


def stack_rows() -> list[dict[str, Any]]:
    sys.path.insert(0, str(ROOT / "bench"))
    import gen_reports

    seen: dict[str, dict[str, Any]] = {}
    for i, text in enumerate(gen_reports.templates(36, SEED)):
        report = json.loads(text)
        for check in report["checks"]:
            if check["id"] not in CHECKS or check["status"] != "ok":
                continue
            key = json.dumps(
                [check["id"], [[r.get("rule"), r.get("observed"), r.get("result")] for r in check["reasons"]]]
            )
            seen.setdefault(key, {"pop": "a", "report": i, "check": check["id"], "key": key})
    return list(seen.values())


def recommend_rows() -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for case in sorted(p.name for p in (ROOT / "tests" / "cases").iterdir() if (p / "facts.json").exists()):
        for goal in ("latency", "throughput"):
            doc = _run(["recommend", "--facts", f"tests/cases/{case}/facts.json", "--goal", goal, "--format", "json"])
            if not doc.get("command"):
                continue
            key = json.dumps([doc.get("stack"), doc["command"], doc.get("env")], sort_keys=True)
            seen.setdefault(key, {"pop": "b", "case": case, "goal": goal, "key": key})
    return list(seen.values())


def release_box(case: str, sglang: str) -> dict[str, Any]:
    from stackcheck.commands.explain import release_facts
    from stackcheck.facts.versions import cuda_from_tag
    from stackcheck.knowledge.loader import load, pypi_variant

    m = load()
    doc = json.loads((ROOT / "tests" / "cases" / case / "facts.json").read_text())
    facts = copy.deepcopy(doc.get("facts", doc))
    pins = release_facts({}, m, sglang, None, None)["packages"]
    pkgs = facts["packages"]
    for name in ("sgl-kernel", "sglang-kernel", "triton"):
        pkgs[name] = {"installed": False}
    for name, p in pins.items():
        pkgs[name] = {"installed": True, "version": p["version"], "dist_version": p["version"]}
    trel = next(r for r in m.releases("torch") if r.get("version") == pins["torch"]["version"])
    variant = pypi_variant(trel) or "cu128"
    pkgs["torch"].update(version=f"{pins['torch']['version']}+{variant}", variant=variant, cuda=cuda_from_tag(variant))
    if not variant.startswith("cu13"):
        pkgs.pop("nvidia-nccl-cu13", None)
    return {"schema_version": 1, "facts": facts}


def gate_rows(out: Path) -> list[dict[str, Any]]:
    from stackcheck.knowledge.loader import load

    releases = [r["version"] for r in load().releases("sglang") if "post" not in r["version"]]
    rows = []
    for box, case in BOXES:
        for rel in releases:
            path = out / f"{box}-{rel}.json"
            path.write_text(json.dumps(release_box(case, rel)))
            for n, (page, line) in enumerate(COMMANDS):
                args = ["gate", "--facts", str(path), "--dry-run", "--format", "json", "--"]
                doc = _run([*args, "python3", "-m", "sglang.launch_server", *line.split()])
                if doc.get("decision") == "allow":
                    rows.append({"pop": "c", "box": box, "sglang": rel, "command": n, "page": page, "line": line})
    return rows


def main() -> None:
    from factcheck_draw import draw

    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    draw(out, SEED, [(8, stack_rows()), (4, recommend_rows()), (4, gate_rows(out))])


if __name__ == "__main__":
    main()
