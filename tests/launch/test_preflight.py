"""Preflight checks (stackcheck/launch/preflight/): GPU count and CUDA_VISIBLE_DEVICES forms, GPU memory taken (a fake
NVML with processes), the model found in HF cache trees built here (FP8 block, MXFP4, NVFP4, MLA, a draft
model), --config files, dependencies in a real venv made by the test, /dev/shm, a busy port, ulimit -l."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from fake_nvml import USAGE_FUNCTIONS, FakeNVML, facts_of, load_doc, synthetic_doc
from hypothesis import example, given
from hypothesis import strategies as st

from stackcheck.errors import BadInputError, UsageError
from stackcheck.knowledge.loader import load
from stackcheck.launch import host_readers, preflight
from stackcheck.launch.preflight import host as host_mod
from stackcheck.launch.preflight.configfile import YamlSubsetError, config_args, expand_config, read_flat_yaml
from stackcheck.launch.preflight.deps import check_dependencies, marker_environment
from stackcheck.launch.preflight.gpus import Layout, check_gpu_count, gpu_ordinals, visible_devices
from stackcheck.launch.preflight.host import ShmReading, check_memlock, check_port, check_shm, loopback_for, port_free
from stackcheck.launch.preflight.memory import Weights, check_memory, default_fraction
from stackcheck.launch.preflight.model import read_model
from stackcheck.probes.gpu_usage import read_gpu_usage
from stackcheck.readers.fsview import HostView

if TYPE_CHECKING:
    from stackcheck.knowledge.types import Preflight

GIB = 1 << 30
H200_BYTES = 150_754_820_096  # 143,771 MiB, as NVML reports an H200


@pytest.fixture(scope="module")
def data() -> Preflight:
    return load([], env={}).preflight


def gpus(n: int, mig: bool = False) -> list[dict[str, Any]]:
    return [
        {"index": i, "uuid": f"GPU-{i:08x}-aaaa-bbbb-cccc-dddddddddddd", "mig_mode": mig, "memory_bytes": H200_BYTES}
        for i in range(n)
    ]


# ---- GPU count ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected", "notes"),
    [
        (None, [0, 1, 2, 3], 0),
        ("", [], 1),
        ("  ", [], 1),
        ("2,1", [2, 1], 0),
        ("0, 3", [0, 3], 0),
        ("0,2,-1,1", [0, 2], 1),  # CUDA stops at the invalid entry: 1 stays hidden
        ("0,7", [0], 1),  # out of range
        ("1,1", [1], 1),  # repeated
        ("GPU-00000002-aaaa-bbbb-cccc-dddddddddddd", [2], 0),
        ("GPU-00000003", [3], 0),  # a unique prefix is enough
        ("GPU-0000000", [], 1),  # matches all four: ambiguous
        ("GPU-ffffffff,0", [], 1),  # matches none: 0 after it is hidden too
    ],
)
def test_cuda_visible_devices_forms(value: str | None, expected: list[int], notes: int) -> None:
    v = visible_devices(value, gpus(4))
    assert v.nvml == expected
    assert len(v.notes) == notes


def test_mig_uuids_count_only_with_mig_mode() -> None:
    mig = "MIG-4f2a6c1e-1b2c-5d3e-8f9a-0b1c2d3e4f5a"
    assert visible_devices(mig, gpus(1, mig=True)).nvml == [None]
    assert visible_devices(mig, gpus(1, mig=True)).mig
    assert visible_devices(mig, gpus(1, mig=False)).nvml == []


@pytest.mark.parametrize("value", ["abc", "0;1", "cuda:0", "0,one", "0x1"])
def test_cuda_visible_devices_garbage_is_a_usage_error(value: str) -> None:
    with pytest.raises(UsageError, match="CUDA_VISIBLE_DEVICES"):
        visible_devices(value, gpus(2))


@pytest.mark.parametrize(
    ("layout", "ordinals"),
    [
        (Layout(tp=8), [0, 1, 2, 3, 4, 5, 6, 7]),
        (Layout(tp=2, pp=2), [0, 1, 2, 3]),
        (Layout(tp=2, dp=2), [0, 1, 2, 3]),  # one TP group per DP rank
        (Layout(tp=4, dp=4, dp_attention=True), [0, 1, 2, 3]),  # DP attention shares the TP group
        (Layout(tp=8, nnodes=2, node_rank=1), [0, 1, 2, 3]),  # 4 ranks per node, from ordinal 0 on each node
        (Layout(tp=2, base_gpu_id=2), [2, 3]),
        (Layout(tp=2, gpu_id_step=2), [0, 2]),
        (Layout(tp=2, dp=2, gpu_id_step=2, base_gpu_id=1), [1, 3, 5, 7]),
        (Layout(tp=1, pp=4, nnodes=2, node_rank=1), [0, 1]),  # pp ranks 2,3 on node 1
    ],
)
def test_gpu_ordinals_follow_sglangs_formula(layout: Layout, ordinals: list[int]) -> None:
    assert gpu_ordinals(layout) == ordinals


def test_dp_offset_of_older_releases_ignores_pp() -> None:
    # sglang 0.5.1 data_parallel_controller: base_gpu_id += tp_size * gpu_id_step (no pp)
    assert gpu_ordinals(Layout(tp=1, pp=2, dp=2), dp_offset_includes_pp=False) == [0, 1, 1, 2]
    assert gpu_ordinals(Layout(tp=1, pp=2, dp=2)) == [0, 1, 2, 3]


def test_tp8_on_one_gpu_refuses_naming_both_numbers(data: dict[str, Any]) -> None:
    g = gpus(1)
    res, _ = check_gpu_count(Layout(tp=8), visible_devices(None, g), g, None, {}, None, data, "0.5.9")
    assert res.status == "fail"
    assert res.observed["visible"] == 1 and res.required["gpus"] == 8
    assert "uses 8 GPUs" in res.message and "1 visible" in res.message


def test_empty_cuda_visible_devices_refuses(data: dict[str, Any]) -> None:
    g = gpus(1)
    env = {"CUDA_VISIBLE_DEVICES": ""}
    res, _ = check_gpu_count(Layout(), visible_devices("", g), g, None, env, None, data, "0.5.9")
    assert res.status == "fail"
    assert "set and empty" in res.message and "0 visible" in res.message


def test_gpu_count_maps_ordinals_through_cuda_visible_devices(data: dict[str, Any]) -> None:
    g = gpus(8)
    env = {"CUDA_VISIBLE_DEVICES": "6,7"}
    res, mapping = check_gpu_count(Layout(tp=2), visible_devices("6,7", g), g, None, env, None, data, "0.5.9")
    assert res.status == "ok"
    assert mapping == [6, 7]


def test_container_without_gpus_names_nvidia_visible_devices(data: dict[str, Any]) -> None:
    env = {"NVIDIA_VISIBLE_DEVICES": "void"}
    res, _ = check_gpu_count(Layout(), visible_devices(None, []), [], "NVML: not loaded", env, "docker", data, None)
    assert res.status == "fail"
    assert "NVIDIA_VISIBLE_DEVICES='void'" in res.message


def test_several_mig_devices_are_unknown(data: dict[str, Any]) -> None:
    g = gpus(2, mig=True)
    value = "MIG-4f2a6c1e-1b2c-5d3e-8f9a-0b1c2d3e4f5a,MIG-5f2a6c1e-1b2c-5d3e-8f9a-0b1c2d3e4f5a"
    res, _ = check_gpu_count(Layout(tp=2), visible_devices(value, g), g, None, {}, None, data, "0.5.9")
    assert res.status == "unknown"


# ---- GPU memory ----------------------------------------------------------------------------------------


def h200(free_taken: int = 0, pid: int = 4242, name: str | None = "python3") -> FakeNVML:
    fake = FakeNVML(load_doc("h200-1x.json"))
    if free_taken:
        fake.run_process(0, pid, name, free_taken)
    return fake


def test_usage_probe_reads_free_memory_processes_and_mode() -> None:
    fake = h200(100 * 10**9).set_compute_mode(0, 3)
    reading = read_gpu_usage(fake)
    assert reading.error is None
    g = reading.gpus[0]
    assert g.free == H200_BYTES - 100 * 10**9
    assert [(p.pid, p.name, p.used_bytes) for p in g.processes] == [(4242, "python3", 100 * 10**9)]
    assert g.compute_mode == 3
    assert fake.shutdowns == 1


@pytest.mark.parametrize("function", USAGE_FUNCTIONS)
def test_usage_probe_turns_every_error_into_data(function: str) -> None:
    fake = h200(10 * GIB).fail(function, "NoPermission")
    reading = read_gpu_usage(fake)
    assert reading.error is None
    assert reading.gpus[0].free is not None  # memory still read
    if function != "nvmlSystemGetProcessName":
        assert reading.gpus[0].error and "permission" in reading.gpus[0].error
    else:
        assert reading.gpus[0].processes[0].name is None


def test_usage_probe_without_nvml() -> None:
    reading = read_gpu_usage(h200().fail("nvmlInit", "DriverNotLoaded"))
    assert reading.gpus == [] and reading.error and "driver not loaded" in reading.error


def test_default_fraction_upper_bound_for_h200(data: dict[str, Any]) -> None:
    f = default_fraction(data, "0.5.9", H200_BYTES, Layout())
    assert f is not None and not f.explicit
    # (143771 MiB - 10240 MiB floor) / 143771 MiB; SGLang 0.5.9 computes 0.907 with its full reserve
    assert f.value == 0.929
    assert f.value >= 0.907
    old = default_fraction(data, "0.5.1", H200_BYTES, Layout())
    assert old is not None and old.value == round((143771 - (12 + 0.5) * 1024) / 143771, 3)


WEIGHTS_28G = Weights(28 * GIB, 4, "/models/m")


def memory(fake: FakeNVML, data: dict[str, Any], fraction: float | None, weights: Weights | None, **kw: Any) -> Any:
    layout = kw.pop("layout", Layout())
    indices = kw.pop("indices", [0])
    return check_memory(read_gpu_usage(fake), indices, fraction, layout, weights, kw.pop("env", {}), data, "0.5.9")


def test_small_fraction_with_100gb_taken_refuses_naming_the_pid(data: dict[str, Any]) -> None:
    res = memory(h200(100 * 10**9), data, 0.2, WEIGHTS_28G)
    (r,) = [x for x in res if x.check == "gpu-memory"]
    assert r.status == "fail"
    assert "pid 4242 (python3) 93.1 GiB" in r.message
    assert "Not enough memory" in r.message
    assert r.observed["weights_per_gpu_bytes"] == 28 * GIB
    assert r.required["weights_per_gpu_below_bytes"] == int(0.2 * (H200_BYTES - 100 * 10**9))


def test_large_fraction_with_100gb_taken_fits_and_warns_about_headroom(data: dict[str, Any]) -> None:
    res = memory(h200(100 * 10**9), data, 0.9, WEIGHTS_28G)
    (r,) = res
    assert r.status == "warn"
    assert "pid 4242" in r.message and "activations and CUDA graphs" in r.message


def test_idle_gpu_is_ok_and_unknown_weights_with_a_holder_warn(data: dict[str, Any]) -> None:
    (ok,) = memory(h200(), data, None, WEIGHTS_28G)
    assert ok.status == "ok"
    (warn,) = memory(h200(20 * GIB, name=None), data, 0.85, None)
    assert warn.status == "warn"
    assert "name not given by NVML" in warn.message and "weight size is not known" in warn.message


def test_weights_larger_than_the_default_budget_refuse(data: dict[str, Any]) -> None:
    (r,) = memory(h200(100 * 10**9), data, None, Weights(60 * GIB, 12, "/m"))
    assert r.status == "fail" and "default for this GPU" in r.message


def test_compute_modes(data: dict[str, Any]) -> None:
    res = memory(h200().set_compute_mode(0, 2), data, 0.5, None)
    assert [r.status for r in res if r.check == "gpu-compute-mode"] == ["fail"]
    res = memory(h200(GIB).set_compute_mode(0, 3), data, 0.5, None)
    (mode,) = [r for r in res if r.check == "gpu-compute-mode"]
    assert mode.status == "fail" and "pid 4242" in mode.message
    assert not [r for r in memory(h200().set_compute_mode(0, 3), data, 0.5, None) if r.check == "gpu-compute-mode"]


def test_unbalanced_free_memory_refuses_unless_turned_off(data: dict[str, Any]) -> None:
    doc = synthetic_doc(2, name="NVIDIA H200", cc="9.0")
    fake = FakeNVML(doc).run_process(1, 77, "trainer", 40 * GIB)
    res = memory(fake, data, 0.8, None, layout=Layout(tp=2), indices=[0, 1])
    (bal,) = [r for r in res if r.check == "gpu-memory-balance"]
    assert bal.status == "fail" and "unbalanced" in bal.message and "pid 77 (trainer)" in bal.message
    fake = FakeNVML(doc).run_process(1, 77, "trainer", 40 * GIB)
    env = {"SGLANG_ENABLE_TP_MEMORY_INBALANCE_CHECK": "false"}
    res = memory(fake, data, 0.8, None, layout=Layout(tp=2), indices=[0, 1], env=env)
    assert [r.status for r in res if r.check == "gpu-memory-balance"] == ["warn"]


def test_usage_not_readable_is_unknown(data: dict[str, Any]) -> None:
    fake = h200().fail("nvmlInit", "NoPermission")
    (r,) = memory(fake, data, 0.5, None)
    assert r.status == "unknown" and "permission" in r.message


# ---- the model ----------------------------------------------------------------------------------------


def hf_repo(cache: Path, repo: str, files: dict[str, Any], commit: str = "a" * 40, ref: str | None = "main") -> Path:
    """A hub cache entry as huggingface_hub lays it out: blobs/, snapshots/COMMIT/ links to them, refs/main."""
    base = cache / ("models--" + repo.replace("/", "--"))
    snap = base / "snapshots" / commit
    snap.mkdir(parents=True)
    (base / "blobs").mkdir()
    for i, (name, content) in enumerate(files.items()):
        blob = base / "blobs" / f"blob{i}"
        if isinstance(content, int):
            with blob.open("wb") as fh:
                fh.truncate(content)  # sparse: the size is what counts
        else:
            blob.write_text(content if isinstance(content, str) else json.dumps(content))
        (snap / name).symlink_to(os.path.relpath(blob, snap))
    if ref:
        (base / "refs").mkdir()
        (base / "refs" / ref).write_text(commit)
    return snap


def model(tmp_path: Path, spec: str, env: dict[str, str], data: dict[str, Any], **options: Any) -> Any:
    opts = {f"--{k.replace('_', '-')}": v for k, v in options.items()}
    return read_model(HostView(), spec, "model", env, opts, data, str(tmp_path), str(tmp_path / "home"))


FP8_BLOCK = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "quantization_config": {"quant_method": "fp8", "fmt": "e4m3", "weight_block_size": [128, 128]},
}


def test_fp8_block_mla_model_in_hf_hub_cache(tmp_path: Path, data: dict[str, Any]) -> None:
    hf_repo(tmp_path / "hub", "acme/ds3", {"config.json": FP8_BLOCK, "model-00001.safetensors": 3 * GIB})
    info = model(tmp_path, "acme/ds3", {"HF_HUB_CACHE": str(tmp_path / "hub")}, data)
    assert info.path and info.path.endswith("a" * 40)
    assert "HF_HUB_CACHE" in (info.found_by or "") and "refs/main" in (info.found_by or "")
    assert info.mla is True and info.quant_method == "fp8"
    # the block GEMM path (the whole feature, with DeepGEMM), then the loader's admission of any FP8 checkpoint
    assert [(r.feature, r.rules) for r in info.requirements] == [
        ("fp8-block-gemm", None), ("deepgemm", None), ("fp8-block-gemm", ["fp8-min-capability"])
    ]  # fmt: skip
    assert info.requirements[0].why == (
        "model config.json: quantization_config.quant_method = fp8, weight_block_size [128, 128]"
    )
    assert info.weights is not None and info.weights.total_bytes == 3 * GIB
    assert [r.status for r in info.results] == ["ok"]


def test_per_tensor_fp8_needs_no_block_gemm(tmp_path: Path, data: dict[str, Any]) -> None:
    cfg = {"architectures": ["LlamaForCausalLM"], "quantization_config": {"quant_method": "fp8"}}
    hf_repo(tmp_path / "hub", "acme/l", {"config.json": cfg})
    info = model(tmp_path, "acme/l", {"HF_HUB_CACHE": str(tmp_path / "hub")}, data)
    # only the loader's admission of Fp8Config (compute capability 8.0), not the block GEMM (igap2)
    assert [(r.feature, r.rules) for r in info.requirements] == [("fp8-block-gemm", ["fp8-min-capability"])]
    assert info.mla is False


def test_mxfp4_model_under_hf_home(tmp_path: Path, data: dict[str, Any]) -> None:
    cfg = {"architectures": ["GptOssForCausalLM"], "quantization_config": {"quant_method": "mxfp4"}}
    hf_repo(tmp_path / "hfhome" / "hub", "openai/gpt-oss-20b", {"config.json": cfg})
    info = model(tmp_path, "openai/gpt-oss-20b", {"HF_HOME": str(tmp_path / "hfhome")}, data)
    assert [(r.feature, r.when, r.rules) for r in info.requirements] == [
        ("mxfp4-moe", [{"option": "--moe-runner-backend", "in": ["auto"]}], None),
        ("mxfp4-moe", [], ["mxfp4-min-capability"]),  # the loader's admission, whatever the runner (igap2)
    ]


def test_nvfp4_from_hf_quant_config_in_download_dir(tmp_path: Path, data: dict[str, Any]) -> None:
    files = {
        "config.json": {"architectures": ["LlamaForCausalLM"]},
        "hf_quant_config.json": {"quantization": {"quant_algo": "NVFP4", "group_size": 16}},
    }
    hf_repo(tmp_path / "dl", "nvidia/Llama-FP4", files)
    env = {"HF_HUB_CACHE": str(tmp_path / "elsewhere")}  # --download-dir wins
    info = model(tmp_path, "nvidia/Llama-FP4", env, data, download_dir=str(tmp_path / "dl"))
    assert info.quant_method == "modelopt_fp4"
    assert [r.feature for r in info.requirements] == ["nvfp4"]
    assert "hf_quant_config.json: quantization.quant_algo = NVFP4" in info.requirements[0].why


def test_nvfp4_embedded_modelopt_config_in_a_local_directory(tmp_path: Path, data: dict[str, Any]) -> None:
    d = tmp_path / "local-model"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"quantization_config": {"quant_algo": "NVFP4"}}))
    (d / "model.safetensors").write_bytes(b"x" * 1000)
    info = model(tmp_path, "local-model", {}, data)
    assert info.found_by == "local directory"
    assert [r.feature for r in info.requirements] == ["nvfp4"]
    assert info.weights == Weights(1000, 1, str(d))


def test_draft_model_is_read_too(tmp_path: Path, data: dict[str, Any]) -> None:
    hf_repo(tmp_path / "hub", "acme/main", {"config.json": {"architectures": ["LlamaForCausalLM"]}})
    hf_repo(tmp_path / "hub", "acme/draft", {"config.json": FP8_BLOCK}, commit="b" * 40)
    # a draft is loaded only with a draft-loading algorithm (test_preflight_igap22_draft_not_loaded.py: without one
    # its needs are not required)
    options = {
        "--model-path": "acme/main",
        "--speculative-draft-model-path": "acme/draft",
        "--speculative-algorithm": "EAGLE",
    }
    res = run_preflight(tmp_path, data, options, {"HF_HUB_CACHE": str(tmp_path / "hub")})
    assert [m.role for m in res.models] == ["model", "draft model"]
    assert [r.feature for r in res.requirements] == ["fp8-block-gemm", "deepgemm", "fp8-block-gemm"]
    assert res.requirements[0].why.startswith("draft model config.json")


def test_revision_picks_its_snapshot(tmp_path: Path, data: dict[str, Any]) -> None:
    hf_repo(tmp_path / "hub", "acme/m", {"config.json": {"architectures": ["A"]}}, commit="c" * 40, ref="v2")
    env = {"HF_HUB_CACHE": str(tmp_path / "hub")}
    assert model(tmp_path, "acme/m", env, data, revision="v2").architectures == ["A"]
    missing = model(tmp_path, "acme/m", env, data, revision="v3")
    assert missing.path is None and "no refs/v3" in missing.results[0].message


def test_model_not_local_is_a_note_and_offline_refuses(tmp_path: Path, data: dict[str, Any]) -> None:
    env = {"HF_HUB_CACHE": str(tmp_path / "hub")}
    (r,) = model(tmp_path, "acme/absent", env, data).results
    assert r.status == "warn" and "will download it" in r.message
    (r,) = model(tmp_path, "acme/absent", {**env, "HF_HUB_OFFLINE": "1"}, data).results
    assert r.status == "fail" and "HF_HUB_OFFLINE=1" in r.message
    (r,) = model(tmp_path, str(tmp_path / "no-such-dir"), env, data).results
    assert r.status == "fail"


def test_facts_of_another_box_never_refuse_a_model_that_is_not_here(tmp_path: Path, data: dict[str, Any]) -> None:
    env = {"HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    for spec in ("acme/absent", "/models/m"):
        info = read_model(HostView(), spec, "model", env, {}, data, str(tmp_path), str(tmp_path), this_box=False)
        (r,) = info.results
        assert r.status == "warn" and "facts come from a file" in r.message


def test_symlink_loop_in_the_cache_is_unknown(tmp_path: Path, data: dict[str, Any]) -> None:
    snap = hf_repo(tmp_path / "hub", "acme/loop", {"model.safetensors": 10})
    (snap / "config.json").symlink_to("config.json")
    (r,) = model(tmp_path, "acme/loop", {"HF_HUB_CACHE": str(tmp_path / "hub")}, data).results
    assert r.status == "unknown" and "does not resolve" in r.message


@pytest.mark.parametrize(
    ("content", "match"),
    [("{not json", "not valid JSON"), (b"\xff\xfe", "not UTF-8"), ("[1, 2]", "not a JSON object")],
)
def test_bad_config_in_cache_is_unknown_and_in_a_named_directory_exit_2(
    tmp_path: Path, data: dict[str, Any], content: str | bytes, match: str
) -> None:
    snap = hf_repo(tmp_path / "hub", "acme/bad", {"model.safetensors": 10})
    target = snap.parent.parent / "blobs" / "cfg"
    target.write_bytes(content if isinstance(content, bytes) else content.encode())
    (snap / "config.json").symlink_to(target)
    (r,) = model(tmp_path, "acme/bad", {"HF_HUB_CACHE": str(tmp_path / "hub")}, data).results
    assert r.status == "unknown" and match in r.message
    with pytest.raises(BadInputError, match=match):
        model(tmp_path, str(snap), {}, data)


def test_huge_config_is_capped(tmp_path: Path, data: dict[str, Any]) -> None:
    d = tmp_path / "m"
    d.mkdir()
    with (d / "config.json").open("wb") as fh:
        fh.truncate(64 << 20)
    with pytest.raises(BadInputError, match="cap"):
        model(tmp_path, str(d), {}, data)


def test_fifo_config_is_refused_without_blocking(tmp_path: Path, data: dict[str, Any]) -> None:
    d = tmp_path / "m"
    d.mkdir()
    os.mkfifo(d / "config.json")
    with pytest.raises(BadInputError, match="not a regular file"):
        model(tmp_path, str(d), {}, data)


def test_dangling_weight_blob_leaves_weights_unknown(tmp_path: Path, data: dict[str, Any]) -> None:
    snap = hf_repo(tmp_path / "hub", "acme/partial", {"config.json": {}, "a.safetensors": 100})
    (snap / "b.safetensors").symlink_to("../../blobs/not-downloaded")
    info = model(tmp_path, "acme/partial", {"HF_HUB_CACHE": str(tmp_path / "hub")}, data)
    assert info.weights is None and "does not resolve" in info.results[0].message


# ---- --config ------------------------------------------------------------------------------------------

YAML = """---
# a server config
model-path: acme/m   # comment
tp-size: 2
mem-fraction-static: 0.85
enable-dp-attention: true
disable-cuda-graph: false
host: "0.0.0.0"
cuda-graph-bs: [1, 2, 4]
json-model-override-args:
  - a
  - 'b c'
"""


def test_flat_yaml_subset() -> None:
    doc = read_flat_yaml(YAML)
    assert doc == {
        "model-path": "acme/m",
        "tp-size": 2,
        "mem-fraction-static": 0.85,
        "enable-dp-attention": True,
        "disable-cuda-graph": False,
        "host": "0.0.0.0",
        "cuda-graph-bs": [1, 2, 4],
        "json-model-override-args": ["a", "b c"],
    }
    yaml = pytest.importorskip("yaml")  # the test extra has PyYAML: the subset agrees with safe_load
    assert yaml.safe_load(YAML) == doc


@pytest.mark.parametrize(
    "text", ["a:\n  b: 1\n", "a: &x 1\n", "a: |\n  text\n", "a: {b: 1}\n", "- 1\n", "a: [1,\n 2]\n", "a: 1\na: 2\n"]
)
def test_yaml_outside_the_subset_is_refused(text: str) -> None:
    with pytest.raises(YamlSubsetError, match="line"):
        read_flat_yaml(text)


def test_config_args_follow_sglangs_merger() -> None:
    doc = read_flat_yaml(YAML)
    args = config_args(doc)
    assert args[:4] == ["--model-path", "acme/m", "--tp-size", "2"]
    assert "--enable-dp-attention" in args and "--disable-cuda-graph" not in args
    assert args[-3:] == ["--json-model-override-args", "a", "b c"]


def test_expand_config_puts_the_command_line_last(tmp_path: Path, data: dict[str, Any]) -> None:
    (tmp_path / "s.yaml").write_text("tp-size: 2\nport: 31000\n")
    args, path, problem = expand_config(["--config", "s.yaml", "--tp-size", "4"], HostView(), str(tmp_path), data)
    assert args == ["--tp-size", "2", "--port", "31000", "--tp-size", "4"]  # the last --tp-size wins
    assert path == str(tmp_path / "s.yaml") and problem is None
    (tmp_path / "j.yaml").write_text('{"tp-size": 8}')  # JSON is YAML
    args, _, _ = expand_config(["--config", "j.yaml"], HostView(), str(tmp_path), data)
    assert args == ["--tp-size", "8"]


def test_config_suffix_and_underscore_keys_are_what_sglang_rejects(tmp_path: Path, data: dict[str, Any]) -> None:
    (tmp_path / "s.json").write_text('{"tp-size": 2}')
    _, _, problem = expand_config(["--config", "s.json"], HostView(), str(tmp_path), data)
    assert problem and "Config file must be YAML format" in problem
    (tmp_path / "u.yaml").write_text("tp_size: 2\n")
    _, _, problem = expand_config(["--config", "u.yaml"], HostView(), str(tmp_path), data)
    assert problem and "--tp_size" in problem


@pytest.mark.parametrize(
    ("text", "match"), [(None, "no such file"), ("a:\n  b: 1\n", "line 2"), (b"\xff", "not UTF-8")]
)
def test_bad_config_file_is_exit_2(tmp_path: Path, data: dict[str, Any], text: Any, match: str) -> None:
    if text is not None:
        (tmp_path / "c.yaml").write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(BadInputError, match=match):
        expand_config(["--config", "c.yaml"], HostView(), str(tmp_path), data)


# ---- dependencies (a real venv) ----------------------------------------------------------------------


def write_dist(site: Path, name: str, version: str, requires: list[str] = ()) -> None:  # type: ignore[assignment]
    d = site / f"{name.replace('-', '_')}-{version}.dist-info"
    d.mkdir()
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (d / "METADATA").write_text("\n".join(lines) + "\n\nlong description\nRequires-Dist: not-a-header\n")


SGLANG_REQUIRES = [
    "aiohttp",
    "pybase64",
    "torch==2.9.1",
    "numpy>=1.20",
    'av; sys_platform == "linux" and platform_machine == "aarch64"',
    'diffusers==0.36.0; extra == "diffusion"',
    "packaging",
]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """A real venv (no pip) with a fake sglang whose Requires-Dist are shaped like the real ones."""
    root = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True, timeout=120)
    py = root / "bin" / "python"
    out = subprocess.run(
        [str(py), "-c", "import sys, json; print(json.dumps(sys.path))"],
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": os.environ.get("PATH", "")},
    )
    path = [p for p in json.loads(out.stdout) if p]
    site = next(Path(p) for p in path if p.endswith("site-packages") and p.startswith(str(root)))
    write_dist(site, "sglang", "0.5.9", SGLANG_REQUIRES)
    write_dist(site, "aiohttp", "3.9.0")
    write_dist(site, "torch", "2.9.1")
    write_dist(site, "numpy", "2.1.0")
    write_dist(site, "packaging", "24.0")
    return site, path


def deps(path: list[str], machine: str = "x86_64") -> Any:
    return check_dependencies(HostView(), path, marker_environment("3.12.3", machine), {"torch", "sgl-kernel"})


def test_missing_dependency_in_a_venv_refuses_naming_it(venv: tuple[Path, list[str]]) -> None:
    _site, path = venv
    res = deps(path)
    fails = [r for r in res if r.status == "fail"]
    assert [(r.subject, r.required) for r in fails] == [("pybase64", "pybase64")]
    assert "sglang 0.5.9 requires pybase64" in fails[0].message
    assert not [r for r in res if r.subject in ("av", "diffusers")]  # marker false / extra only


def test_dependencies_satisfied_conflicting_and_pin_mismatch(venv: tuple[Path, list[str]], tmp_path: Path) -> None:
    site, path = venv
    write_dist(site, "pybase64", "1.4.0")
    try:
        (ok,) = deps(path)
        assert ok.status == "ok" and ok.observed == {"requirements_checked": 5}
        extra = tmp_path / "first"
        extra.mkdir()
        write_dist(extra, "numpy", "1.19.0")  # earlier on the path: this one is imported
        write_dist(extra, "torch", "2.11.0")
        res = deps([str(extra), *path])
        by = {r.subject: r for r in res}
        assert by["numpy"].status == "fail" and by["numpy"].observed == "1.19.0"
        assert by["torch"].status == "warn" and "pin mismatch" in by["torch"].message
        assert [r.subject for r in deps(path, machine="aarch64") if r.status == "fail"] == ["av"]
    finally:
        import shutil

        shutil.rmtree(site / "pybase64-1.4.0.dist-info")


def test_no_sglang_installed_means_nothing_to_check(tmp_path: Path) -> None:
    assert deps([str(tmp_path)]) == []


# ---- host -----------------------------------------------------------------------------------------


def test_busy_port_refuses_and_free_port_passes(data: dict[str, Any]) -> None:
    spec = data["host"]["port"]
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        for host in ("127.0.0.1", "0.0.0.0", "localhost"):
            r = check_port(host, port, port_free(host, port), spec)
            assert r.status == "fail", host
            assert f"--port {port}: already in use" in r.message
    assert check_port("127.0.0.1", port, port_free("127.0.0.1", port), spec).status == "ok"


def _ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


@pytest.mark.skipif(not _ipv6_loopback(), reason="no IPv6 loopback on this box")
def test_a_listener_on_ipv6_loopback_blocks_the_empty_host_and_a_v6_localhost(
    data: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """uvicorn (asyncio) binds --host "" on every family's wildcard, and localhost on each address the hosts file
    gives it: another server on [::1]:P makes that bind fail, so the gate must not say the port is free."""
    spec = data["host"]["port"]
    hosts = tmp_path / "hosts"
    monkeypatch.setattr(host_readers, "HOSTS_FILE", str(hosts))
    with socket.socket(socket.AF_INET6) as busy:
        busy.bind(("::1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = check_port("", port, port_free("", port), spec)
        assert r.status == "fail" and f"[::1]:{port}" in r.message and "IPv6 too" in r.message
        hosts.write_text("127.0.0.1 localhost\n::1 ip6-localhost ip6-loopback\n")  # Ubuntu's
        assert check_port("localhost", port, port_free("localhost", port), spec).status == "ok"
        hosts.write_text("127.0.0.1 localhost\n::1   localhost localhost6  # Fedora\n")
        assert check_port("localhost", port, port_free("localhost", port), spec).status == "fail"
        assert check_port("127.0.0.1", port, port_free("127.0.0.1", port), spec).status == "ok"  # IPv4 only


def test_localhost_is_v6_reads_the_hosts_file(tmp_path: Path) -> None:
    hosts = tmp_path / "hosts"
    for text, want in [
        ("::1 localhost ip6-localhost\n", True),
        ("# ::1 localhost\n127.0.0.1 localhost\n", False),
        ("::1 ip6-localhost ip6-loopback\n", False),
        ("::1\tlocalhost.localdomain localhost\n", True),
        ("", False),
    ]:
        hosts.write_text(text)
        assert host_mod.localhost_is_v6(str(hosts)) is want, text
    assert host_mod.localhost_is_v6(str(tmp_path / "missing")) is False


def _loopback_by_ipaddress(host: str) -> tuple[str, int, str | None]:
    """loopback_for as written before it told IPv4 addresses and names apart itself: everything through
    ipaddress (the reference it must agree with)."""
    import ipaddress

    try:
        addr = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        if host == "localhost":
            return "127.0.0.1", socket.AF_INET, None
        return "127.0.0.1", socket.AF_INET, f"--host {host} is a name: tested on 127.0.0.1 (no lookup is made)"
    if addr.is_loopback:
        return str(addr), socket.AF_INET6 if addr.version == 6 else socket.AF_INET, None
    if addr.version == 6:
        return "::1", socket.AF_INET6, f"tested on ::1 (loopback), not {host}"
    return "127.0.0.1", socket.AF_INET, f"tested on 127.0.0.1 (loopback), not {host}"


@given(
    st.one_of(
        st.text(alphabet="0123456789.:[]afx %", max_size=20),
        st.ip_addresses().map(str),
        st.lists(st.integers(0, 300).map(str), min_size=3, max_size=5).map(".".join),
    )
)
@example("127.0.0.1")
@example("0.0.0.0")
@example("localhost")
@example("127.000.0.1")
@example("[::1]")
@example("::ffff:127.0.0.1")
@example("１２７.0.0.1")
@example("10.1.2.256")
@example("fe80::1%eth0")
def test_loopback_is_ipaddresss(host: str) -> None:
    assert loopback_for(host) == _loopback_by_ipaddress(host)


@pytest.mark.parametrize(("avail", "status"), [(64 << 20, "fail"), (512 << 20, "warn"), (16 << 30, "ok")])
def test_shm_size(data: dict[str, Any], avail: int, status: str) -> None:
    r = check_shm(ShmReading("/dev/shm", avail, avail), 2, data["host"]["shm"])
    assert r is not None and r.status == status
    assert check_shm(ShmReading("/dev/shm", 1, 1), 1, data["host"]["shm"]) is None  # one GPU: NCCL not used


def test_memlock_only_across_nodes(data: dict[str, Any]) -> None:
    spec = data["host"]["memlock"]
    assert check_memlock((64 * 1024, None), 1, spec) is None
    r = check_memlock((64 * 1024, None), 2, spec)
    assert r is not None and r.status == "warn" and "64 KiB" in r.message
    ok = check_memlock((-1, None), 2, spec)
    assert ok is not None and ok.status == "ok"


# ---- the runner ------------------------------------------------------------------------------------


def run_preflight(
    tmp_path: Path,
    data: dict[str, Any],
    options: dict[str, Any],
    env: dict[str, str],
    readings: preflight.Readings | None = None,
    facts: dict[str, Any] | None = None,
) -> preflight.Preflight:
    inp = preflight.Inputs(
        options=options,
        env=env,
        facts=facts or facts_of(load_doc("h200-1x.json")),
        data=data,
        view=HostView(),
        cwd=str(tmp_path),
        home=str(tmp_path / "home"),
        sglang_version="0.5.9",
        readings=readings,
    )
    return preflight.run(inp)


def test_runner_without_live_readings_skips_the_live_checks(tmp_path: Path, data: dict[str, Any]) -> None:
    res = run_preflight(tmp_path, data, {"--tp-size": 2}, {})
    assert [r.check for r in res.results] == ["gpu-count"]
    assert res.results[0].status == "fail"
    assert "gpu-memory" in res.skipped and "port" in res.skipped
    doc = res.to_json()
    assert doc["checks"][0]["observed"]["visible"] == 1 and doc["checks"][0]["required"]["gpus"] == 2


def test_runner_with_readings(tmp_path: Path, data: dict[str, Any]) -> None:
    d = tmp_path / "m"
    d.mkdir()
    (d / "config.json").write_text(json.dumps(FP8_BLOCK))
    with (d / "model.safetensors").open("wb") as fh:
        fh.truncate(30 * GIB)
    readings = preflight.Readings(
        usage=read_gpu_usage(h200(100 * 10**9)),
        shm=ShmReading("/dev/shm", 64 << 20, 64 << 20),
        memlock=(-1, None),
        port=(False, "127.0.0.1:30000"),
    )
    res = run_preflight(tmp_path, data, {"--model-path": "m", "--mem-fraction-static": 0.2}, {}, readings)
    status = {r.check: r.status for r in res.results}
    assert status == {"gpu-count": "ok", "model": "ok", "gpu-memory": "fail", "port": "fail"}  # shm: one GPU
    assert res.launch == {"model_mla": True, "model_multimodal": False, "model_quant_method": "fp8"}
    assert preflight.worst(res.results) == "fail"


def test_balance_is_judged_within_each_tp_group(data: dict[str, Any]) -> None:
    """dp 2 without DP attention: GPUs 0-1 and 2-3 are two TP groups; a busy pair is balanced within itself."""
    fake = FakeNVML(synthetic_doc(4, name="NVIDIA H200", cc="9.0"))
    fake.run_process(2, 7, "a", 40 * GIB).run_process(3, 8, "b", 40 * GIB)
    layout = Layout(tp=2, dp=2)
    res = memory(fake, data, 0.8, None, layout=layout, indices=[0, 1, 2, 3])
    assert not [r for r in res if r.check == "gpu-memory-balance"]
    fake = FakeNVML(synthetic_doc(4, name="NVIDIA H200", cc="9.0")).run_process(3, 8, "b", 40 * GIB)
    res = memory(fake, data, 0.8, None, layout=layout, indices=[0, 1, 2, 3])
    (bal,) = [r for r in res if r.check == "gpu-memory-balance"]
    assert bal.status == "fail" and "GPU 3" in bal.message and "GPU 0" not in bal.message


def test_a_gguf_file_is_a_note_not_a_refusal(tmp_path: Path, data: dict[str, Any]) -> None:
    (tmp_path / "m.gguf").write_bytes(b"GGUF")
    (r,) = model(tmp_path, str(tmp_path / "m.gguf"), {}, data).results
    assert r.status == "warn" and "GGUF" in r.message


def test_a_url_model_path_is_never_rewritten_in_the_message(tmp_path: Path, data: dict[str, Any]) -> None:
    spec = "https://user:s3cr3t@hub.example/m"
    (r,) = model(tmp_path, spec, {"HF_HUB_OFFLINE": "1"}, data).results
    assert r.status == "warn" and "a URL" in r.message
    assert "https:/user" not in r.message  # still URL-shaped, so the output's redaction masks the password


def test_a_privileged_port_is_refused_for_what_it_is(data: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """A bind refused with EACCES (a port below 1024, not root) fails the port check as a permission, not as
    'already in use, stop the other server' (which it said, with in_use: true)."""
    import _socket
    import errno

    class Denied:  # a socket whose bind the kernel refuses, as it does a non-root bind below 1024
        def __init__(self, *_: Any) -> None:
            pass

        def setsockopt(self, *_: Any) -> None:
            pass

        def bind(self, _addr: Any) -> None:
            raise PermissionError(errno.EACCES, "Permission denied")

        def close(self) -> None:
            pass

    monkeypatch.setattr(_socket, "socket", Denied)
    reading = port_free("0.0.0.0", 80)
    monkeypatch.undo()
    r = check_port("0.0.0.0", 80, reading, data["host"]["port"])
    assert r.status == "fail"
    assert "already in use" not in r.message and "stop the other server" not in r.message
    assert "permission denied" in r.message and "1024" in r.message
    assert isinstance(r.observed, dict) and r.observed.get("denied") is True and "in_use" not in r.observed
