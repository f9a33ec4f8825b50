"""icubin2: FlashInfer's CUDNN_SDPA cubins (no checksums.txt: their names are in the JIT source
data/csrc/cudnn_sdpa_kernel_launcher.cu) read by the flashinfer_cubins probe and judged for SGLang's
--mm-attention-backend flashinfer_cudnn on GPU major 10 without nvidia-cudnn-frontend; and
FLASHINFER_CUBINS_REPOSITORY read as cubin_loader reads it (a path is copied from, no network; http(s) is a
download; a file:// URL is never fetched). Trees written here in the shape of the releases' files."""

from __future__ import annotations

import copy
import hashlib
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import Manifests
from stackcheck.probes.flashinfer_cubins import cudnn_sdpa_names, probe_cubins, repository_kind
from stackcheck.readers.fsview import HostView
from stackcheck.verdicts.context import Context
from stackcheck.verdicts.engine import evaluate_feature

FMHA = "0123abcd/fmha/trtllm-gen/"
CUDNN = "4567ef01/fmha/cudnn/"
NAMES = ["cudnn_sm100_fprop_sdpa_decode_d128_bf16.cubin", "cudnn_sm100_fprop_sdpa_prefill_d128_bf16.cubin",
         "cudnn_sm100_fprop_sdpa_prefill_d192_bf16.cubin"]  # fmt: skip
MANIFEST = b"aa kernel_one.cubin\nbb include/meta_info.h\n"


def launcher_text() -> str:
    """A launcher source in the releases' shape: getCubin(path + "/" + "NAME", "SHA") three times."""
    lines = ["#include <string>", "void init(std::map<int, std::string>& m) {"]
    for i, name in enumerate(NAMES):
        lines.append(f'  m[{i}] = getCubin(cudnn_sdpa_cubin_path + "/" + "{name}", "{i:064x}");')
    return "\n".join([*lines, "}", ""])


def site(tmp: Path, *, launcher: bool = True) -> Path:
    root = tmp / "site"
    (root / "flashinfer" / "data" / "csrc").mkdir(parents=True)
    (root / "flashinfer" / "artifacts.py").write_text(
        "class ArtifactPath:\n"
        f'    TRTLLM_GEN_FMHA: str = "{FMHA}"\n'
        f'    CUDNN_SDPA: str = "{CUDNN}"\n'
        "class CheckSumHash:\n"
        f'    TRTLLM_GEN_FMHA: str = "{hashlib.sha256(MANIFEST).hexdigest()}"\n'
    )
    if launcher:
        (root / "flashinfer" / "data" / "csrc" / "cudnn_sdpa_kernel_launcher.cu").write_text(launcher_text())
    return root


def fill(base: Path, *, cudnn: int, fmha: bool) -> None:
    """`cudnn` of the three cuDNN cubins and (or not) the whole FMHA family under a cubin directory."""
    (base / CUDNN).mkdir(parents=True, exist_ok=True)
    for name in NAMES[:cudnn]:
        (base / CUDNN / name).write_bytes(b"x")
    if fmha:
        (base / FMHA / "include").mkdir(parents=True, exist_ok=True)
        (base / FMHA / "checksums.txt").write_bytes(MANIFEST)
        (base / FMHA / "kernel_one.cubin").write_bytes(b"x")
        (base / FMHA / "include" / "meta_info.h").write_bytes(b"x")


def section(tmp: Path, env: dict[str, str], cwd: str | None = None, **kw: Any) -> dict[str, Any]:
    fi = {"installed": True, "version": "0.7.2", "location": str(site(tmp, **kw))}
    facts = {"packages": {"flashinfer-python": fi}}
    out = probe_cubins(facts, {"HOME": str(tmp / "home"), **env}, HostView(), cwd=cwd)
    assert out is not None
    return out


def cache(tmp: Path) -> Path:
    return tmp / "home" / ".cache" / "flashinfer" / "cubins"


def test_cudnn_names_read_from_the_launcher_source() -> None:
    assert cudnn_sdpa_names(launcher_text()) == NAMES
    assert cudnn_sdpa_names("int main() {}\n") == []


NOCHECK = {"FLASHINFER_CUBIN_CHECKSUM_DISABLED": "1"}  # (the loader then takes a present file as it is)


def test_cudnn_sdpa_ready(tmp_path: Path) -> None:
    fill(cache(tmp_path), cudnn=3, fmha=False)
    out = section(tmp_path, NOCHECK)
    assert out["ready"]["CUDNN_SDPA"] is True
    assert out["families"]["CUDNN_SDPA"]["listed"] == 3


def test_cudnn_sdpa_missing_and_downloads_refused(tmp_path: Path) -> None:
    out = section(tmp_path, {"FLASHINFER_NO_DOWNLOAD": "1"})
    assert out["ready"]["CUDNN_SDPA"] is False
    assert "Failed to load cubin for prefill" in out["ready_reason"]["CUDNN_SDPA"]


def test_cudnn_sdpa_partly_missing_or_a_download_is_unknown(tmp_path: Path) -> None:
    fill(cache(tmp_path), cudnn=1, fmha=False)
    assert section(tmp_path, {"FLASHINFER_NO_DOWNLOAD": "1"})["ready"]["CUDNN_SDPA"] is None
    assert section(tmp_path / "b", {})["ready"]["CUDNN_SDPA"] is None  # would download: the network is not read


def test_cudnn_sdpa_without_the_launcher_source_is_unknown(tmp_path: Path) -> None:
    out = section(tmp_path, {"FLASHINFER_NO_DOWNLOAD": "1"}, launcher=False)
    assert out["ready"]["CUDNN_SDPA"] is None
    assert "not read" in out["ready_reason"]["CUDNN_SDPA"]


# ---- FLASHINFER_CUBINS_REPOSITORY -------------------------------------------------------------------------------


def test_repository_kinds() -> None:
    assert repository_kind(None, None) == ("default", None)
    assert repository_kind("https://mirror.example/cubins/", None) == ("url", None)
    assert repository_kind("HTTP://mirror.example/", None) == ("url", None)
    assert repository_kind("file:///srv/cubins/", None) == ("unfetchable", None)
    assert repository_kind("/srv/cubins/", None) == ("local", "/srv/cubins")
    assert repository_kind("mirror", None) == ("local", None)  # relative: the server's cwd not known
    assert repository_kind("mirror", "/work") == ("local", "/work/mirror")


def test_local_repository_holding_the_family_is_ready(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    fill(mirror, cudnn=3, fmha=True)
    cache(tmp_path).mkdir(parents=True)
    out = section(tmp_path, {"FLASHINFER_CUBINS_REPOSITORY": str(mirror) + "/", **NOCHECK})
    assert out["repository"] == "local" and out["repository_dir"] == str(mirror)
    assert out["ready"]["TRTLLM_GEN_FMHA"] is True  # copied at the first kernel, no network
    assert out["ready"]["CUDNN_SDPA"] is True


def test_local_repository_relative_to_the_working_directory(tmp_path: Path) -> None:
    fill(tmp_path / "srv" / "mirror", cudnn=3, fmha=True)
    cache(tmp_path).mkdir(parents=True)
    env = {"FLASHINFER_CUBINS_REPOSITORY": "mirror", **NOCHECK}
    assert section(tmp_path, env, cwd=str(tmp_path / "srv"))["ready"]["TRTLLM_GEN_FMHA"] is True
    assert section(tmp_path / "b", env)["ready"]["TRTLLM_GEN_FMHA"] is None  # cwd not known


def test_local_repository_lacking_the_family_fails(tmp_path: Path) -> None:
    (tmp_path / "mirror").mkdir()
    out = section(tmp_path, {"FLASHINFER_CUBINS_REPOSITORY": str(tmp_path / "mirror")})
    assert out["ready"]["TRTLLM_GEN_FMHA"] is False
    assert "lacks them too" in out["ready_reason"]["TRTLLM_GEN_FMHA"]


def test_local_repository_with_part_of_the_family_is_unknown(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    fill(mirror, cudnn=1, fmha=False)
    (mirror / FMHA).mkdir(parents=True)
    (mirror / FMHA / "checksums.txt").write_bytes(MANIFEST)
    (mirror / FMHA / "kernel_one.cubin").write_bytes(b"x")
    cache(tmp_path).mkdir(parents=True)
    out = section(tmp_path, {"FLASHINFER_CUBINS_REPOSITORY": str(mirror)})
    assert out["ready"]["TRTLLM_GEN_FMHA"] is None and out["ready"]["CUDNN_SDPA"] is None


def test_file_url_repository_never_fetches(tmp_path: Path) -> None:
    mirror = tmp_path / "mirror"
    fill(mirror, cudnn=3, fmha=True)
    out = section(tmp_path, {"FLASHINFER_CUBINS_REPOSITORY": f"file://{mirror}/"})
    assert out["repository"] == "unfetchable"
    assert out["ready"]["TRTLLM_GEN_FMHA"] is False and out["ready"]["CUDNN_SDPA"] is False


def test_http_mirror_is_a_download(tmp_path: Path) -> None:
    out = section(tmp_path, {"FLASHINFER_CUBINS_REPOSITORY": "https://mirror.example/cubins/"})
    assert out["repository"] == "url" and out["ready"]["TRTLLM_GEN_FMHA"] is None


def test_no_download_ignores_the_local_repository(tmp_path: Path) -> None:
    fill(tmp_path / "mirror", cudnn=3, fmha=True)
    cache(tmp_path).mkdir(parents=True)
    env = {"FLASHINFER_CUBINS_REPOSITORY": str(tmp_path / "mirror"), "FLASHINFER_NO_DOWNLOAD": "1"}
    assert section(tmp_path, env)["ready"]["TRTLLM_GEN_FMHA"] is False  # get_artifact raises before the copy


# ---- the rule: --mm-attention-backend flashinfer_cudnn ----------------------------------------------------------


def b200(ready: bool | None, *, cc: str = "10.0", sglang: str = "0.5.23", frontend: bool = False) -> dict[str, Any]:
    return {
        "gpus": [{"index": 0, "name": "NVIDIA B200", "compute_capability": cc}],
        "driver": {"version": "580.95.05", "cuda": "13.0"},
        "packages": {
            "sglang": {"installed": True, "version": sglang},
            "flashinfer-python": {"installed": True, "version": "0.7.2"},
            "nvidia-cudnn-frontend": {"installed": frontend, **({"version": "1.32.0"} if frontend else {})},
        },
        "flashinfer_cubins": {
            "release": "0.7.2",
            "no_download": ready is False,
            "ready": {"CUDNN_SDPA": ready},
            "ready_reason": {} if ready is not None else {"CUDNN_SDPA": "would download"},
        },
    }


def rule(manifests: Manifests, facts: dict[str, Any]) -> str | None:
    spec = next(f for f in manifests.features if f["id"] == "mm-attention-flashinfer-cudnn")
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    v = evaluate_feature(spec, ctx)
    return next((str(r["result"]) for r in v["reasons"] if r.get("rule") == "cudnn-sdpa-cubins"), None)


@pytest.mark.parametrize(("ready", "want"), [(False, "fail"), (None, "unknown"), (True, "pass")])
def test_cudnn_rule(manifests: Manifests, ready: bool | None, want: str) -> None:
    assert rule(manifests, b200(ready)) == want


def test_cudnn_rule_not_applied(manifests: Manifests) -> None:
    for facts in (b200(False, frontend=True), b200(False, sglang="0.5.9"), b200(False, cc="9.0")):
        assert rule(manifests, facts) in (None, "n/a", "skip", "not_applicable")


def test_cudnn_rule_other_sm10x_and_unprobed(manifests: Manifests) -> None:
    assert rule(manifests, b200(True, cc="10.3")) == "unknown"  # SM100 cubins on 10.3: not read
    facts = b200(True)
    del facts["flashinfer_cubins"]
    assert rule(manifests, facts) == "unknown"
    facts = b200(True)
    del facts["flashinfer_cubins"]["ready"]["CUDNN_SDPA"]  # a section from before icubin2
    assert rule(manifests, facts) == "unknown"


def other_rule(manifests: Manifests, facts: dict[str, Any], rule_id: str) -> str | None:
    spec = next(f for f in manifests.features if f["id"] == "mm-attention-flashinfer-cudnn")
    ctx = Context(facts=copy.deepcopy(facts), manifests=manifests, launch={})  # type: ignore[arg-type]
    v = evaluate_feature(spec, ctx)
    return next((str(r["result"]) for r in v["reasons"] if r.get("rule") == rule_id), None)


def test_flag_before_sglang_0_5_10_and_other_majors(manifests: Manifests) -> None:
    assert other_rule(manifests, b200(True, sglang="0.5.9"), "flag-choice") == "fail"  # not among the choices
    assert other_rule(manifests, b200(True), "flag-choice") == "pass"
    assert other_rule(manifests, b200(True, cc="9.0"), "cubin-path-other-majors") == "unknown"
    assert other_rule(manifests, b200(True, cc="9.0", frontend=True), "cubin-path-other-majors") is None


# ---- the stale-cubin case: files counted by name, the loader hashes them ------------------------------------------


def test_present_files_are_ready_and_said_unverified(tmp_path: Path) -> None:
    # a file of the right name with another sha256 would be fetched again by get_artifact; the files are not hashed
    # here (cost), and the fact says so ("present, unverified"), but a complete family of loadable files is ready: the
    # wheel's files passed its zip CRC, FlashInfer's downloads land by an atomic rename, and an empty or truncated-to-
    # nothing file is already missing (the merge of icubin2: unknown here would refuse every healthy B200 launch)
    fill(cache(tmp_path), cudnn=3, fmha=True)
    out = section(tmp_path, {"FLASHINFER_NO_DOWNLOAD": "1"})
    assert out["checksum_check"] is True
    for family in ("TRTLLM_GEN_FMHA",):
        assert out["ready"][family] is True
        assert out["families"][family]["files"] == "present, unverified"
    assert out["ready"]["CUDNN_SDPA"] is True
    mirror = tmp_path / "mirror"
    fill(mirror, cudnn=3, fmha=True)
    (tmp_path / "c" / "home" / ".cache" / "flashinfer" / "cubins").mkdir(parents=True)
    out = section(tmp_path / "c", {"FLASHINFER_CUBINS_REPOSITORY": str(mirror)})
    assert out["ready"]["TRTLLM_GEN_FMHA"] is True


def test_an_empty_cudnn_cubin_is_missing(tmp_path: Path) -> None:
    # CUDNN_SDPA's names (no checksums.txt) are judged as loadable files too: an empty one reads b"" in load_cubin
    fill(cache(tmp_path), cudnn=3, fmha=True)
    (cache(tmp_path) / CUDNN / NAMES[0]).write_bytes(b"")
    out = section(tmp_path, {"FLASHINFER_NO_DOWNLOAD": "1"})
    assert out["ready"]["CUDNN_SDPA"] is not True


def test_checksum_disabled_takes_present_files(tmp_path: Path) -> None:
    fill(cache(tmp_path), cudnn=3, fmha=True)
    out = section(tmp_path, {"FLASHINFER_NO_DOWNLOAD": "1", **NOCHECK})
    assert out["checksum_check"] is False
    assert out["ready"]["TRTLLM_GEN_FMHA"] is True and out["ready"]["CUDNN_SDPA"] is True


def test_the_checksum_variable_is_a_cubin_variable() -> None:
    # a launch that sets it otherwise than the probed environment makes the section unread (as the other cubin
    # variables do: stackcheck/launch/facts_loader_path.py apply_launch_env_unread)
    from stackcheck.launch.facts_loader_path import CUBIN_ENV, apply_launch_env_unread

    assert "FLASHINFER_CUBIN_CHECKSUM_DISABLED" in CUBIN_ENV
    facts: dict[str, Any] = {"flashinfer_cubins": {"release": "0.7.2", "ready": {"TRTLLM_GEN_FMHA": True}}}
    apply_launch_env_unread(facts, {"FLASHINFER_CUBIN_CHECKSUM_DISABLED": "1"}, {})
    assert "error" in facts["flashinfer_cubins"]
