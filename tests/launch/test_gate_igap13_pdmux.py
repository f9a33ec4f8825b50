"""igap13: --enable-pdmux with LoRA on the triton_v2 backend (0.5.23 lora_hook.py:20-30), UNO tree speculative
decoding (0.5.20-0.5.23 speculative_hook.py) or Elastic EP scale-up with decode CUDA graphs (0.5.21-0.5.23
parallel_hook.py): SGLang raises while it reads its arguments, and the gate allowed each (a false pass). Refusals
pdmux-lora-triton-v2, pdmux-uno-tree (blocked) and pdmux-elastic-ep-scale-up (unknown unless --disable-cuda-graph:
the decode CUDA graph backend SGLang resolves is not read). On the parent (bffe516) 5 of these 15 fail (the
registry tests read the wheels only)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, gate_tp8, model_dir, release_box
from registry_wheels import fetch_wheel, read_texts

PDMUX = ("--enable-pdmux", "--chunked-prefill-size", "-1", "--disable-overlap-schedule")
UNO_TREE = (
    "--speculative-algorithm", "uno", "--speculative-eagle-topk", "4", "--speculative-num-steps", "3",
    "--speculative-num-draft-tokens", "8",
)  # fmt: skip
ELASTIC = ("--elastic-ep-backend", "mooncake", "--max-ep-size", "16")


def _refusals(tmp_path: Path, release: str, *flags: str) -> tuple[str, dict[str, str]]:
    doc: dict[str, Any] = gate_tp8(
        release_box(tmp_path, release, "9.0"), model_dir(tmp_path, "m", dict(LLAMA3)), *flags
    )
    found = {
        str(r["feature"]).removeprefix("refusal "): str(r.get("status"))
        for r in doc.get("reasons") or []
        if str(r.get("feature", "")).startswith("refusal pdmux-")
    }
    return str(doc["decision"]), found


@pytest.mark.parametrize("lora", [("--enable-lora",), ("--lora-paths", "a=/adapters/a")])
def test_pdmux_with_triton_v2_lora_is_refused_on_0_5_23(tmp_path: Path, lora: tuple[str, ...]) -> None:
    decision, found = _refusals(tmp_path, "0.5.23", *PDMUX, *lora, "--lora-backend", "triton_v2")
    assert decision == "refuse"
    assert found.get("pdmux-lora-triton-v2") == "blocked"


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.23", ("--enable-lora",)),  # the default LoRA backend (csgmv) takes PD-multiplexing
        ("0.5.23", ("--lora-backend", "triton_v2")),  # LoRA not on
        ("0.5.22", ("--enable-lora", "--lora-backend", "triton")),  # no triton_v2 before 0.5.23
    ],
)
def test_other_lora_launches_with_pdmux_are_not_refused_by_it(
    tmp_path: Path, release: str, flags: tuple[str, ...]
) -> None:
    assert "pdmux-lora-triton-v2" not in _refusals(tmp_path, release, *PDMUX, *flags)[1]


@pytest.mark.parametrize("release", ["0.5.20", "0.5.23"])
def test_pdmux_with_uno_tree_mode_is_refused(tmp_path: Path, release: str) -> None:
    decision, found = _refusals(tmp_path, release, *PDMUX, *UNO_TREE)
    assert decision == "refuse"
    assert found.get("pdmux-uno-tree") == "blocked"


def test_uno_linear_mode_is_not_refused_by_it(tmp_path: Path) -> None:
    linear = ("--speculative-algorithm", "UNO", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "8")
    assert "pdmux-uno-tree" not in _refusals(tmp_path, "0.5.23", *PDMUX, *linear)[1]


def test_pdmux_with_elastic_ep_scale_up_is_never_allowed(tmp_path: Path) -> None:
    decision, found = _refusals(tmp_path, "0.5.23", *PDMUX, *ELASTIC)
    assert decision == "refuse"
    assert found.get("pdmux-elastic-ep-scale-up") == "unknown"  # the decode CUDA graph backend is not read


@pytest.mark.parametrize(
    ("release", "flags"),
    [
        ("0.5.23", (*ELASTIC, "--disable-cuda-graph")),  # no decode graphs: the assertion is skipped
        ("0.5.23", ("--elastic-ep-backend", "mooncake", "--max-ep-size", "8")),  # not above the TP size: no scale-up
        ("0.5.23", ("--elastic-ep-backend", "none", "--max-ep-size", "16")),
        ("0.5.20", ELASTIC),  # no such assertion before 0.5.21
    ],
)
def test_elastic_ep_without_the_assertion_is_not_refused_by_it(
    tmp_path: Path, release: str, flags: tuple[str, ...]
) -> None:
    assert "pdmux-elastic-ep-scale-up" not in _refusals(tmp_path, release, *PDMUX, *flags)[1]


@pytest.mark.registry
def test_the_0_5_23_wheel_raises_for_each() -> None:
    hooks = "sglang/srt/arg_groups/"
    texts = read_texts(fetch_wheel("sglang", "0.5.23"), lambda n: n.startswith(hooks))
    assert '(cfg.enable_pdmux, "PD-multiplexing")' in texts[hooks + "lora_hook.py"]
    assert 'cfg.lora_backend == "triton_v2"' in texts[hooks + "lora_hook.py"]
    assert "UNO tree mode does not yet support PDMux." in texts[hooks + "speculative_hook.py"]
    assert "does not support PDMux." in texts[hooks + "parallel_hook.py"]
    assert "cfg.max_ep_size > cfg.tp_size" in texts[hooks + "parallel_hook.py"]


@pytest.mark.registry
def test_the_0_5_22_wheel_has_no_triton_v2_lora_backend() -> None:
    lora = "sglang/srt/arg_groups/lora_hook.py"
    texts = read_texts(fetch_wheel("sglang", "0.5.22"), lambda n: n == lora)
    assert "triton_v2" not in texts[lora]
    assert "enable_pdmux" not in texts[lora]
