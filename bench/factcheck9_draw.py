"""The ninth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Ninth sample").

    PYTHONPATH=. python bench/factcheck9_draw.py OUT_DIR

Fixed before any row was checked. Weighted toward what the stop before it (main 2301654..1a207de) added and no
sample has drawn: the gate's DeepSeek/MLA/DSA and Exaone 4 rules, the deterministic-inference rules, the
model-aware advice, the libnuma rule and the symbol-level kernel checks. Four populations, built from the
manifests of the tree it runs in, on three boxes that can give an allow: 8x H200 (h200-newest, `--tp 8`), 8x B200
with a CUDA 12.8 nvcc (b200-deepgemm-nvcc128, `--tp 8`) and one RTX PRO 6000 (rtxpro6000-pcie-iommu-translated,
`--tp 1`: the eighth sample's tp 2 on that box is refused by its IOMMU), each with every final SGLang 0.5.1-0.5.23
and its pins (factcheck7_draw.release_box):

(a) `gate --dry-run --format json` with a readable config.json of DeepSeek R1 (DeepseekV3ForCausalLM, MLA),
    DeepSeek V3.2 (DeepseekV32ForCausalLM with index_topk, DSA) and Exaone 4 (Exaone4ForCausalLM), each with no
    attention flag, `--attention-backend flashinfer`, `triton`, `fa3`, and `--enable-deterministic-inference`
    (tests/gate_cli.MODELS' configs): the allow decisions;
(b) `--enable-deterministic-inference` with Llama 3, GPT-OSS and Qwen3-Next (no draft), alone and with
    `--attention-backend flashinfer`, `triton`, `fa3`: the allow decisions;
(c) the model-aware advice: for every refused gate of (a) and (b), each `recommend:` line of its advice that
    changes or adds a flag (not the pointer to `gate --advise`): one row per (box, release, model, flags, line);
(d) the kernel packages after the eighth sample's range (sgl-kernel 0.3.5-0.3.21, sglang-kernel 0.4.0-0.4.10 in
    components.json): one row per (release, fact), fact `libnuma` (inside or outside checks.json's libnuma rule
    range) or `green-context` (inside or outside driver-api's green-context range).

Draw: random.Random(20261209); per population its rows sorted by their JSON text, shuffled, the first k
(a: 6, b: 4, c: 3, d: 3). Nothing is replaced after the draw.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests"))
from factcheck_draw import draw, final_releases, gate, write_models  # noqa: E402

SEED = 20261209

BOXES = [("h200", "h200-newest", "8"), ("b200", "b200-deepgemm-nvcc128", "8"),
         ("rtxpro6000", "rtxpro6000-pcie-iommu-translated", "1")]  # fmt: skip
NEW_MODELS = ["deepseek-r1", "deepseek-v3.2", "exaone4"]
NEW_FLAGS = ["", "--attention-backend flashinfer", "--attention-backend triton", "--attention-backend fa3",
             "--enable-deterministic-inference"]  # fmt: skip
DET_MODELS = ["llama3", "gpt-oss", "qwen3-next"]
DET = "--enable-deterministic-inference"
DET_FLAGS = [DET, DET + " --attention-backend flashinfer", DET + " --attention-backend triton",
             DET + " --attention-backend fa3"]  # fmt: skip


def gate_rows(out: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    from factcheck7_draw import release_box
    from gate_cli import MODELS

    write_models(out, {name: MODELS[name] for name in NEW_MODELS + DET_MODELS})
    releases = final_releases()
    a: list[dict[str, Any]] = []
    b: list[dict[str, Any]] = []
    c: list[dict[str, Any]] = []
    for box, case, tp in BOXES:
        for rel in releases:
            path = out / f"{box}-{rel}.json"
            path.write_text(json.dumps(release_box(case, rel)))
            for pop, models, flags in (("a", NEW_MODELS, NEW_FLAGS), ("b", DET_MODELS, DET_FLAGS)):
                for model in models:
                    for flag in flags:
                        line = ["--model-path", str(out / "models" / model), "--tp", tp, *flag.split()]
                        doc = gate(path, line)
                        row = {"box": box, "sglang": rel, "model": model, "flags": flag}
                        if doc.get("decision") == "allow":
                            (a if pop == "a" else b).append({"pop": pop, **row})
                        elif doc.get("decision") == "refuse":
                            for advice in doc.get("advice") or []:
                                if advice.startswith("recommend:") and "--advise" not in advice:
                                    c.append({"pop": "c", **row, "advice": advice})
    return a, b, c


def kernel_rows() -> list[dict[str, Any]]:
    from packaging.version import Version

    from stackcheck.knowledge.loader import load

    m = load()
    rows = []
    for pkg in ("sgl-kernel", "sglang-kernel"):
        for rel in m.releases(pkg):
            if Version(rel["version"]) >= Version("0.3.5"):
                rows += [{"pop": "d", "package": pkg, "release": rel["version"], "fact": f}
                         for f in ("libnuma", "green-context")]  # fmt: skip
    return rows


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    a, b, c = gate_rows(out)
    draw(out, SEED, [(6, a), (4, b), (3, c), (3, kernel_rows())])


if __name__ == "__main__":
    main()
