"""igap3: every quantization method's minimum compute capability, as SGLang's model loader checks it.

model_loader/loader.py refuses a GPU whose capability is below the loaded quantization config's get_min_capability()
(read in every sglang wheel 0.5.1-0.5.23, with the config class each --quantization value and checkpoint
quant_method maps to). igap2 made the gate read it for Fp8Config and Mxfp4Config; the other classes above SGLang's
own floor (7.5) are rules of checks.json sglang-gpu-min-cc now: awq_marlin, gptq_marlin, blockwise_int8,
fbgemm_fp8, qoq (8.0), modelopt / modelopt_fp8, w8a8_fp8 (8.9), w4afp8, petit_nvfp4, minimax_m3_nvfp4 (9.0),
modelopt_fp4 before 0.5.13, modelopt_mixed 0.5.10-0.5.12, nvfp4_online (10.0), each from the flag or, without one,
from the checkpoint. Where the minimum follows what is not read (the compressed-tensors or Quark scheme, the class
--quantization modelopt auto-detects), the GPUs below the most are unknown, never ok.

The refusals fail on the parent (no such rules); the admitted cases and the audit's silence are guards."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import LLAMA3, ROOT, cli_json, gate_tp8, model_dir, release_box


def _loader_reasons(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The reasons of the gate's blocking item sglang-gpu-min-cc from a quant-loader, quant-ct or quant-quark rule."""
    return [
        x
        for r in doc.get("reasons") or []
        if r.get("feature") == "sglang-gpu-min-cc"
        for x in r.get("reasons") or []
        if str(x.get("rule", "")).startswith(("quant-loader", "quant-ct-", "quant-quark-"))
    ]


def _refused_by(doc: dict[str, Any], rule: str, observed: int, required: int) -> bool:
    got = _loader_reasons(doc)
    return (
        doc["decision"] == "refuse"
        and any(
            x.get("rule") == rule
            and x.get("result") == "fail"
            and x.get("effect") == "crash"
            and x.get("observed") == observed
            and x.get("required") == f">= {required}"
            and x.get("source")
            for x in got
        )
        and "get_min_capability" in json.dumps(got)
    )


def _ckpt(method: str) -> dict[str, Any]:
    return {**LLAMA3, "quantization_config": {"quant_method": method}}


def _ct_unread() -> dict[str, Any]:
    """A compressed-tensors checkpoint whose one group is of a shape the gate does not read (MXFP4 weights)."""
    weights = {"num_bits": 4, "type": "float", "strategy": "group", "group_size": 32, "symmetric": True}
    group = {"targets": ["Linear"], "weights": weights, "input_activations": None}
    qc = {"quant_method": "compressed-tensors", "format": "mxfp4-pack-quantized", "config_groups": {"g": group}}
    return {**LLAMA3, "quantization_config": qc}


@pytest.mark.parametrize(
    ("release", "cc", "method", "rule", "required"),
    [
        ("0.5.9", "7.5", "awq_marlin", "quant-loader-sm80", 80),  # T4
        ("0.5.9", "7.5", "gptq_marlin", "quant-loader-sm80", 80),
        ("0.5.9", "7.5", "qoq", "quant-loader-sm80", 80),
        ("0.5.23", "7.5", "modelopt_fp4", "quant-loader-sm80", 80),
        ("0.5.9", "8.6", "w8a8_fp8", "quant-loader-sm89", 89),  # A10 / RTX 3090
        ("0.5.23", "8.0", "modelopt_fp8", "quant-loader-sm89", 89),  # A100
        ("0.5.2", "8.6", "modelopt", "quant-loader-sm89", 89),
        ("0.5.23", "8.9", "w4afp8", "quant-loader-sm90", 90),  # L4 / RTX 4090
        ("0.5.9", "8.9", "petit_nvfp4", "quant-loader-sm90", 90),
        ("0.5.9", "9.0", "modelopt_fp4", "quant-loader-sm100", 100),  # H100: 100 before 0.5.13
        ("0.5.23", "9.0", "nvfp4_online", "quant-loader-sm100", 100),
    ],
)
def test_flag_below_the_configs_minimum_refused(
    tmp_path: Path, release: str, cc: str, method: str, rule: str, required: int
) -> None:
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "llama", LLAMA3), "--quantization", method)
    assert _refused_by(doc, rule, int(cc.replace(".", "")), required), doc.get("reasons")


@pytest.mark.parametrize(
    ("release", "cc", "method", "rule", "required"),
    [
        ("0.5.23", "8.0", "w8a8_fp8", "quant-loader-sm89", 89),
        ("0.5.9", "7.5", "blockwise_int8", "quant-loader-sm80", 80),  # no --quantization choice: a checkpoint's only
        ("0.5.9", "7.5", "fbgemm_fp8", "quant-loader-sm80", 80),
        ("0.5.23", "8.9", "minimax_m3_nvfp4", "quant-loader-sm90", 90),
        ("0.5.9", "8.9", "w4afp8", "quant-loader-sm90", 90),
    ],
)
def test_checkpoint_without_a_flag_below_the_minimum_refused(
    tmp_path: Path, release: str, cc: str, method: str, rule: str, required: int
) -> None:
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "ckpt", _ckpt(method)))
    assert _refused_by(doc, rule, int(cc.replace(".", "")), required), doc.get("reasons")


def test_modelopt_fp8_checkpoint_read_from_hf_quant_config_refused_on_ampere(tmp_path: Path) -> None:
    model = model_dir(tmp_path, "modelopt", LLAMA3)
    (model / "hf_quant_config.json").write_text(json.dumps({"quantization": {"quant_algo": "FP8"}}))
    doc = gate_tp8(release_box(tmp_path, "0.5.23", "8.6"), model)
    assert _refused_by(doc, "quant-loader-sm89", 86, 89), doc.get("reasons")


@pytest.mark.parametrize(
    ("cc", "flags", "config", "rule"),
    [
        ("8.0", ["--quantization", "modelopt"], LLAMA3, "quant-loader-depends"),  # FP8 (8.9) or FP4 (8.0)
        ("7.5", ["--quantization", "compressed-tensors"], LLAMA3, "quant-loader-compressed-tensors"),
        # ischeme: the groups are read now; a group of a shape not read is unknown (no group: no scheme, admitted)
        ("7.5", [], _ct_unread(), "quant-ct-scheme-unread"),
        ("8.0", ["--quantization", "quark"], LLAMA3, "quant-loader-quark-scheme"),  # W8A8 FP8 scheme 8.9, MXFP4 7.0
        ("8.6", [], _ckpt("quark"), "quant-quark-scheme-unread"),  # ischeme: a Quark config with no scheme read
    ],
)
def test_minimum_that_follows_what_is_not_read_is_unknown(
    tmp_path: Path, cc: str, flags: list[str], config: dict[str, Any], rule: str
) -> None:
    doc = gate_tp8(release_box(tmp_path, "0.5.23", cc), model_dir(tmp_path, "m", config), *flags)
    assert doc["decision"] == "refuse"
    assert [x.get("result") for x in _loader_reasons(doc) if x.get("rule") == rule] == ["unknown"], doc.get("reasons")


@pytest.mark.parametrize(
    ("release", "cc", "flags", "config"),
    [
        ("0.5.23", "8.0", ["--quantization", "awq_marlin"], LLAMA3),  # A100: admitted
        ("0.5.23", "8.9", ["--quantization", "w8a8_fp8"], LLAMA3),
        ("0.5.23", "9.0", ["--quantization", "w4afp8"], LLAMA3),
        ("0.5.23", "9.0", ["--quantization", "modelopt"], LLAMA3),
        ("0.5.23", "9.0", [], _ckpt("compressed-tensors")),
        ("0.5.23", "8.0", [], _ckpt("awq")),  # awq_marlin only where the GPU passes check_marlin_supported
        ("0.5.9", "7.5", [], _ckpt("awq")),  # awq (7.5) stays awq on a T4
        ("0.5.9", "7.5", ["--quantization", "awq"], LLAMA3),
        ("0.5.9", "7.5", ["--quantization", "w8a8_int8"], LLAMA3),
        ("0.5.9", "7.5", ["--quantization", "moe_wna16"], LLAMA3),
        ("0.5.23", "10.0", ["--quantization", "nvfp4_online"], LLAMA3),
        ("0.5.23", "8.9", ["--quantization", "quark"], LLAMA3),
        ("0.5.9", "7.5", ["--quantization", "gguf"], LLAMA3),
        ("0.5.9", "7.5", ["--quantization", "bitsandbytes"], LLAMA3),
    ],
)
def test_admitted_from_the_minimum(
    tmp_path: Path, release: str, cc: str, flags: list[str], config: dict[str, Any]
) -> None:
    doc = gate_tp8(release_box(tmp_path, release, cc), model_dir(tmp_path, "m", config), *flags)
    assert _loader_reasons(doc) == [], doc.get("reasons")


def test_the_audit_judges_no_launch_quantization(tmp_path: Path) -> None:
    """No launch, no quantization: the audit's sglang-gpu-min-cc is the floor rule alone on a T4 (its rules on
    launch.quantization and launch.model_quant_method do not apply), as before."""
    _, report = cli_json(["audit", "--facts", str(release_box(tmp_path, "0.5.9", "7.5")), "--format", "json"])
    check = next(c for c in report["checks"] if c["id"] == "sglang-gpu-min-cc")
    assert check["status"] == "ok"
    assert [x.get("rule") for x in check.get("reasons") or []] == ["sm75-or-newer"]


def test_every_method_named_is_a_quantization_choice() -> None:
    """The methods the rules name are values launch.json's --quantization knows, or one of the three quant_method
    values of SGLang's QUANTIZATION_METHODS that no release offers as a flag (a misspelt one would never apply)."""
    checks = json.loads((ROOT / "manifests" / "checks.json").read_text())
    launch = json.loads((ROOT / "manifests" / "launch.json").read_text())
    choices = set(next(o for o in launch["options"] if o["flag"] == "--quantization")["choices"])
    rules = next(c for c in checks["checks"] if c["id"] == "sglang-gpu-min-cc")["rules"]
    named: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("op") == "in" and str(node.get("fact")) in ("launch.quantization", "launch.model_quant_method"):
                named.update(node["value"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk([r.get("when") for r in rules])
    checkpoint_only = {"blockwise_int8", "fbgemm_fp8", "minimax_m3_nvfp4"}
    assert len(named) >= 15 and named <= choices | checkpoint_only, sorted(named - choices - checkpoint_only)


@pytest.mark.parametrize(
    ("cc", "flags", "config"),
    [
        ("8.6", ["--quantization", "w8a8_fp8"], LLAMA3),  # A10: W8A8Fp8Config asks 8.9
        ("8.0", ["--quantization", "modelopt_fp8"], LLAMA3),  # A100: ModelOptFp8Config 8.9
        ("8.9", ["--quantization", "petit_nvfp4"], LLAMA3),  # L4: PetitNvFp4Config 9.0
        ("9.0", ["--quantization", "nvfp4_online"], LLAMA3),  # H100: NvFp4OnlineConfig 10.0
        ("8.0", [], _ckpt("w8a8_fp8")),
        ("8.9", [], _ckpt("minimax_m3_nvfp4")),
    ],
)
def test_false_passes_of_the_parent_on_the_newest_release(
    tmp_path: Path, cc: str, flags: list[str], config: dict[str, Any]
) -> None:
    """On the box the gate otherwise admits (SGLang 0.5.23, its kernel and torch), the loader's minimum alone
    refuses: before, these launches were allowed and SGLang raised its ValueError while loading the model."""
    doc = gate_tp8(release_box(tmp_path, "0.5.23", cc), model_dir(tmp_path, "m", config), *flags)
    assert doc["decision"] == "refuse"
    # (ifc20's preflight rows also refuse modelopt_fp8 / petit_nvfp4 on this BF16 checkpoint: no hf_quant_config.json)
    features = {str(r.get("feature")) for r in doc.get("reasons") or []}
    # (igap18: nvfp4_online off major 10 is refused earlier too, by SGLang's argument hook: refusal nvfp4-online-sm100)
    also = {"model", "refusal nvfp4-online-sm100"}
    assert "sglang-gpu-min-cc" in features and features <= {"sglang-gpu-min-cc", *also}, doc.get("reasons")


def test_triage_names_the_loaders_refusal() -> None:
    """A crash log with the loader's ValueError: triage names the signature and the check that sees it before
    launch (sglang-gpu-min-cc), not an unknown error."""
    import io

    from stackcheck.launch.triage import triage_stream

    log = (
        "[2026-12-04 02:00:00 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/usr/lib/python3/site-packages/sglang/srt/model_loader/loader.py", line 259, in '
        "_get_quantization_config\n"
        "    raise ValueError(\n"
        "ValueError: The quantization method w8a8_fp8 is not supported for the current GPU. Minimum capability: 89. "
        "Current capability: 86.\n"
    )
    r = triage_stream(io.BytesIO(log.encode()), "<mem>")
    rc = r.root_cause
    assert rc is not None and rc.signature is not None
    assert rc.signature.id == "sglang-quant-below-min-capability"
    assert rc.signature.check == "sglang-gpu-min-cc"


def _modelopt_model(tmp_path: Path, algo: str) -> Path:
    model = model_dir(tmp_path, f"modelopt-{algo.lower()}", LLAMA3)
    (model / "hf_quant_config.json").write_text(json.dumps({"quantization": {"quant_algo": algo}}))
    return model


@pytest.mark.parametrize(
    ("release", "cc", "algo", "rule", "required"),
    [
        ("0.5.23", "8.0", "FP8", "quant-loader-sm89", 89),  # the flag becomes modelopt_fp8 (8.9)
        ("0.5.9", "9.0", "NVFP4", "quant-loader-sm100", 100),  # modelopt_fp4 before 0.5.13 (10.0)
    ],
)
def test_modelopt_flag_judged_by_the_checkpoint_it_becomes(
    tmp_path: Path, release: str, cc: str, algo: str, rule: str, required: int
) -> None:
    """SGLang overrides --quantization modelopt by the checkpoint's quant_algo (base_config.py
    _modelopt_override_quantization_method, 0.5.4 and later): the class it becomes decides the minimum."""
    doc = gate_tp8(release_box(tmp_path, release, cc), _modelopt_model(tmp_path, algo), "--quantization", "modelopt")
    assert _refused_by(doc, rule, int(cc.replace(".", "")), required), doc.get("reasons")


def test_modelopt_flag_with_an_fp4_checkpoint_admitted_on_ampere(tmp_path: Path) -> None:
    """0.5.23: ModelOptFp4Config asks 8.0, so the loader admits an A100 (the nvfp4 feature judges its kernels)."""
    doc = gate_tp8(
        release_box(tmp_path, "0.5.23", "8.0"), _modelopt_model(tmp_path, "NVFP4"), "--quantization", "modelopt"
    )
    assert _loader_reasons(doc) == [], doc.get("reasons")
