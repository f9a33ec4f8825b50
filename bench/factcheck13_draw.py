"""The thirteenth fact-check sample's population and seeded draw (tests/realworld/FACTCHECK.md, "Thirteenth sample").

    PYTHONPATH=. python bench/factcheck13_draw.py OUT_DIR

Fixed before any row was checked. The eleventh and twelfth rule (bench/factcheck11_draw.py) unchanged, run over the
manifests as they stand now, with a new seed: every final SGLang release of components.json with its pins on the
same three boxes (8x H200 h200-newest `--tp 8`, 8x B200 b200-deepgemm-nvcc128 `--tp 8`, one RTX PRO 6000
rtxpro6000-pcie-iommu-translated `--tp 1`) and the same six populations: (a) MLA models and dims with no attention
flag or flashinfer|triton|fa3|flashmla|trtllm_mla, the allows; (b) MHA models with trtllm_mha, fa4,
`--rl-on-policy-target fsdp` (with and without flashinfer), the allows; (c) recommend's commands for the models of
(a), (b), (e); (d) the recorded cases' ok features; (e) Llama 3 ModelOpt checkpoints with or without
`--quantization`, the allows; (f) every value of launch.json's release_choices union with Llama 3 and DeepSeek R1,
the allows. As the eleventh, rows drawn by earlier samples are not excluded.

Draw: random.Random(20261213); per population its rows sorted by their JSON text, shuffled, the first k
(a: 7, b: 6, c: 3, d: 4, e: 4, f: 3), 27 rows. Nothing is replaced after the draw.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from factcheck11_draw import feature_rows, release_rows
from factcheck_draw import draw

SEED = 20261213


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rows = release_rows(out)
    populations = [(7, rows["a"]), (6, rows["b"]), (3, rows["c"]), (4, feature_rows()), (4, rows["e"]), (3, rows["f"])]
    draw(out, SEED, populations)


if __name__ == "__main__":
    main()
