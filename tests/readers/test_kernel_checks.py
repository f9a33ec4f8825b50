"""Kernel-side architecture checks: the `guard_list` and `cpp_check_ints` readers of stackcheck.readers.sourcetables
on small sources the tests write (our own text, in the shape of the upstream checks), the per-library targets
of the context (`pkg.NAME.lib.LIB.archs`), the `unknown` predicate, and the validation of feature paths.
The same readers against the real FlashInfer / SGLang / sgl-kernel wheels: tests/readers/test_kernel_gates_registry.py.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from stackcheck.knowledge.loader import load
from stackcheck.knowledge.types import Feature
from stackcheck.knowledge.validate import semantic_problems
from stackcheck.readers.sourcetables import read_table
from stackcheck.verdicts.context import Context, Missing
from stackcheck.verdicts.engine import evaluate_feature, evaluate_predicate

CPP = {
    "files": ["pkg/include/runner.cuh"],
    "read": "cpp_check_ints",
    "macro": ["CHECK_OR_THROW", "TORCH_CHECK"],
    "message": "Unsupported architecture",
    "pattern": r"\bkSM_(\d+)\b",
}
GUARD = {"files": ["pkg/guards.py"], "read": "guard_list", "function": ["run"], "message": "only runs on"}


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return root


# -- cpp_check_ints ------------------------------------------------------------------------------------


def test_cpp_check_reads_the_sms_of_the_check_with_the_message(tmp_path: Path) -> None:
    site = write(
        tmp_path,
        CPP["files"][0],
        """// CHECK_OR_THROW(mSM == kSM_90, "Unsupported architecture") is a comment, not code
        /* CHECK_OR_THROW(mSM == kSM_80, "Unsupported architecture"); */
        class Runner {
          Runner() : mSM(getSM()) {
            CHECK_OR_THROW(mDtype == kFP16, "Unsupported dtype (kSM_75)");
            CHECK_OR_THROW(mSM == kSM_100 || mSM == kSM_103 ||
                           mSM == kSM_107,  // kSM_90 in a comment
                           "Unsupported " "architecture");
            CHECK_OR_THROW(mSM == kSM_120, "Unsupported architecture");
          }
          int x = kSM_100f;
        };""",
    )
    got = read_table(CPP, site)
    assert (got["status"], got["value"], got["file"]) == ("ok", [100, 103, 107], CPP["files"][0])
    assert got["sha256"]


def test_cpp_check_strings_with_parens_and_escapes(tmp_path: Path) -> None:
    site = write(
        tmp_path,
        CPP["files"][0],
        'TORCH_CHECK(a == ")" && mSM == kSM_90 && c == \'(\', "say \\"hi\\" Unsupported architecture (x");',
    )
    assert read_table(CPP, site)["value"] == [90]


@pytest.mark.parametrize(
    ("text", "status", "needle"),
    [
        ('CHECK_OR_THROW(mSM == kSM_100, "Unsupported dtype");', "not-found", "no CHECK_OR_THROW or TORCH_CHECK call"),
        ('CHECK_OR_THROW(mSM == kSM_100, "Unsupported architecture";', "error", "unbalanced parentheses"),
        ('CHECK_OR_THROW(mSM == other, "Unsupported architecture");', "error", "holds nothing"),
        ("", "not-found", "no CHECK_OR_THROW"),
    ],
)
def test_cpp_check_bad_shapes(tmp_path: Path, text: str, status: str, needle: str) -> None:
    got = read_table(CPP, write(tmp_path, CPP["files"][0], text))
    assert got["status"] == status and needle in str(got["reason"]), got


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        ({"pattern": "kSM_("}, "not a regular expression"),
        ({"pattern": r"kSM_\d+"}, "exactly one group"),
        ({"message": ""}, "'message'"),
        ({"macro": []}, "'macro'"),
    ],
)
def test_cpp_check_bad_specs(tmp_path: Path, change: dict[str, Any], needle: str) -> None:
    site = write(tmp_path, CPP["files"][0], 'TORCH_CHECK(mSM == kSM_90, "Unsupported architecture");')
    got = read_table({**CPP, **change}, site)
    assert got["status"] == "error" and needle in str(got["reason"])


def test_cpp_check_is_not_utf8_or_too_large(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / CPP["files"][0]
    path.parent.mkdir(parents=True)
    path.write_bytes(b'TORCH_CHECK(mSM == kSM_90, "Unsupported architecture \xff");')
    assert "not UTF-8" in str(read_table(CPP, tmp_path)["reason"])
    from stackcheck.readers import sourcetables

    path.write_text('TORCH_CHECK(mSM == kSM_90, "Unsupported architecture");')
    monkeypatch.setattr(sourcetables, "MAX_SOURCE_BYTES", 10)
    assert "limit" in str(read_table(CPP, tmp_path)["reason"])


# -- guard_list ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "value"),
    [
        (
            '    if cap(x)[0] not in [12, 9, 10]:\n        raise RuntimeError("Kernel only runs on SM90/100/120")\n',
            [9, 10, 12],
        ),
        ('    if cap(x)[0] != 9:\n        raise RuntimeError(f"Kernel only runs on SM90, got {x}")\n', [9]),
        ('    assert major in (9, 10, 11), "Kernel only runs on 9.x-11.x"\n', [9, 10, 11]),
        ('    assert major in [8, 9] or other is not None, ("Kernel only runs on " "8.x, 9.x")\n', [8, 9]),
        ('    assert major == 10, "only runs on 10.x"\n', [10]),
    ],
)
def test_guard_list_shapes(tmp_path: Path, body: str, value: list[int]) -> None:
    site = write(tmp_path, GUARD["files"][0], f"def other():\n    pass\n\ndef run(x, major, other=None):\n{body}")
    got = read_table(GUARD, site)
    assert (got["status"], got["value"]) == ("ok", value), got


def test_guard_list_only_inside_the_named_function(tmp_path: Path) -> None:
    text = (
        "def other(x):\n    if x not in [7]:\n        raise ValueError('Kernel only runs on 7')\n"
        "def run(x):\n    if x not in [9]:\n        raise ValueError('Kernel only runs on 9')\n"
    )
    site = write(tmp_path, GUARD["files"][0], text)
    assert read_table(GUARD, site)["value"] == [9]
    anywhere = {k: v for k, v in GUARD.items() if k != "function"}
    assert read_table(anywhere, site)["value"] == [7]  # first in source order
    assert read_table({**GUARD, "function": ["missing"]}, site)["status"] == "not-found"


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ('    if x < 9:\n        raise RuntimeError("only runs on 9+")\n', "not of the form"),
        ('    if x not in [9, y]:\n        raise RuntimeError("only runs on 9")\n', "non-int-literal"),
        ('    if x not in allowed:\n        raise RuntimeError("only runs on these")\n', "not a list literal"),
    ],
)
def test_guard_list_unreadable_guards(tmp_path: Path, body: str, needle: str) -> None:
    got = read_table(GUARD, write(tmp_path, GUARD["files"][0], f"def run(x, y=0, allowed=()):\n{body}"))
    assert got["status"] == "error" and needle in str(got["reason"]), got


# -- per-library targets, the unknown predicate ------------------------------------------------------------


@pytest.fixture(scope="module")
def manifests() -> Any:
    return load([])


def _ctx(manifests: Any, packages: dict[str, Any], binaries: dict[str, Any] | None = None) -> Context:
    facts: dict[str, Any] = {
        "gpus": [{"index": 0, "name": "GPU", "compute_capability": "12.0"}],
        "packages": packages,
    }
    if binaries is not None:
        facts["binaries"] = binaries
    return Context(facts=facts, manifests=manifests)  # type: ignore[arg-type]


def test_lib_archs_from_manifest_and_binary_probe(manifests: Any) -> None:
    pkgs = {"sgl-kernel": {"installed": True, "version": "0.3.21"}}
    ctx = _ctx(manifests, pkgs)
    assert ctx.lookup("kernel.lib.flashmla_ops.archs", None) == ["sm_90a", "sm_100a"]
    assert "sm_120a" in ctx.lookup("pkg.sgl-kernel.lib.common_ops.archs", None)
    assert ctx.lookup("kernel.lib.no_such_ops.archs", None) == []  # the wheel's libs are known: it has none
    probed = {
        "sgl-kernel": {
            "files": [
                {"path": "sgl_kernel/sm90/common_ops.abi3.so", "sass": ["sm_90a"], "ptx": []},
                {"path": "sgl_kernel/sm100/common_ops.abi3.so", "sass": ["sm_100a"], "ptx": ["compute_100"]},
            ]
        }
    }
    ctx = _ctx(manifests, pkgs, probed)
    assert ctx.lookup("kernel.lib.common_ops.archs", None) == ["compute_100", "sm_100a", "sm_90a"]
    assert ctx.lookup("kernel.lib.flashmla_ops.archs", None) == []
    local = _ctx(manifests, {"sgl-kernel": {"installed": True, "version": "0.3.21+cu130"}})
    with pytest.raises(Missing, match="do not list the targets of flashmla_ops"):
        local.lookup("kernel.lib.flashmla_ops.archs", None)
    with pytest.raises(Missing, match="unknown fact path"):
        local.lookup("kernel.lib.flashmla_ops.version", None)


def test_unknown_predicate_never_passes_or_fails(manifests: Any) -> None:
    ctx = _ctx(manifests, {})
    out = evaluate_predicate({"unknown": "not established"}, ctx, None)
    assert out.value is None and out.missing == "not established"
    feature: Feature = {
        "id": "f",
        "title": "f",
        "needs": [],
        "enable": {"flags": [], "env": {}},
        "rules": [
            {"id": "a", "require": {"unknown": "hop not read"}, "effect": "crash", "message": "m", "source": "x"},
        ],
    }
    verdict = evaluate_feature(feature, ctx)
    assert verdict["status"] == "unknown" and verdict["reasons"][0]["message"] == "hop not read"
    feature["rules"].append(
        {
            "id": "b",
            "require": {"fact": "gpu.cc_major", "op": "==", "value": 9},
            "effect": "crash",
            "message": "m",
            "source": "x",
        }
    )
    assert evaluate_feature(feature, ctx)["status"] == "blocked"  # a failing hop still blocks


# -- validation of feature paths ---------------------------------------------------------------------------


def test_path_hops_are_validated(manifests: Any) -> None:
    docs = {name: (f"manifests/{name}", copy.deepcopy(doc)) for name, doc in manifests.docs.items()}
    feature = docs["features.json"][1]["features"][0]
    feature["path"] = [
        {"hop": "kernel", "check": "c", "source": "BW-COMPAT", "rules": ["no-such-rule"]},
        {"hop": "kernel", "check": "c", "source": "NO-SUCH-SOURCE", "gate": "no.such_gate", "versions": ">=oops"},
    ]
    problems = "\n".join(semantic_problems(docs))
    assert "$.features[0].path[0].rules[0]: no rule 'no-such-rule' in this feature" in problems
    assert "$.features[0].path[1].source: unknown source id 'NO-SUCH-SOURCE'" in problems
    assert "$.features[0].path[1].gate: unknown gate 'no.such_gate'" in problems
    assert "$.features[0].path[1].versions: invalid version specifier '>=oops'" in problems


# -- a needed package whose version is not known: blocked only if blocked in every known release -----------


def _report(manifests: Any, cc: str, packages: dict[str, Any]) -> Context:
    facts = {"gpus": [{"index": 0, "name": "GPU", "compute_capability": cc}], "packages": packages}
    return Context(facts=facts, manifests=manifests, launch={"tp": 1})  # type: ignore[arg-type]


def test_version_unknown_blocked_in_every_release(manifests: Any) -> None:
    dsa = next(f for f in manifests.features if f["id"] == "attention-dsa-trtllm")
    ctx = _report(
        manifests,
        "12.0",
        {"sglang": {"installed": True}, "flashinfer-python": {"installed": True, "version": "0.6.18"}},
    )
    v = evaluate_feature(dsa, ctx)
    assert (v["status"], v["effect"]) == ("blocked", "crash")
    first = v["reasons"][0]
    assert first["rule"] == "every-release" and "version is not known" in first["message"]
    assert "TllmGenFmhaRunner" in first["message"]
    # on a B200 the same report is not blocked in every release (0.5.9+ run it): unknown, not ok
    assert evaluate_feature(dsa, _report(manifests, "10.0", ctx.facts["packages"]))["status"] == "unknown"
    # trtllm_mha on SM120: SGLang 0.5.19+ admit it, so an unknown release stays unknown
    mha = next(f for f in manifests.features if f["id"] == "attention-trtllm-mha")
    assert evaluate_feature(mha, _report(manifests, "12.0", {"sglang": {"installed": True}}))["status"] == "unknown"


def test_trtllm_mha_sm120_prefill_refuses_fp8_kv_only_when_the_launch_says_so(manifests: Any) -> None:
    mha = next(f for f in manifests.features if f["id"] == "attention-trtllm-mha")
    pkgs = {
        "sglang": {"installed": True, "version": "0.5.23"},
        "flashinfer-python": {"installed": True, "version": "0.7.2"},
    }
    facts = {"gpus": [{"index": 0, "name": "GPU", "compute_capability": "12.0"}], "packages": pkgs}

    def verdict(launch: dict[str, Any]) -> dict[str, Any]:
        return dict(evaluate_feature(mha, Context(facts=facts, manifests=manifests, launch={"tp": 1, **launch})))  # type: ignore[arg-type]

    assert verdict({})["status"] == "ok"  # audit: the default KV-cache dtype
    assert verdict({"attention_backend": "trtllm_mha", "kv_cache_dtype": "auto"})["status"] == "ok"
    fp8 = verdict({"attention_backend": "trtllm_mha", "kv_cache_dtype": "fp8_e4m3"})
    assert (fp8["status"], fp8["effect"]) == ("blocked", "crash")
    assert "TRTLLM FMHAv2 prefill on SM120" in fp8["reasons"][0]["message"]
    # decode only through trtllm_mha: the prefill refusal does not apply
    assert verdict({"decode_attention_backend": "trtllm_mha", "kv_cache_dtype": "fp8_e4m3"})["status"] == "ok"


def test_flashinfer_jit_needs_a_toolkit_that_knows_the_gpu(manifests: Any) -> None:
    """Before FlashInfer 0.6.7 the JIT targets sm_121a with no check of its own: CUDA 12.8 cannot build it."""
    fi = next(f for f in manifests.features if f["id"] == "attention-flashinfer")
    pkgs = {
        "sglang": {"installed": True, "version": "0.5.5"},
        "flashinfer-python": {"installed": True, "version": "0.5.0"},
    }

    def verdict(cc: str, toolkit: str) -> dict[str, Any]:
        facts = {
            "gpus": [{"index": 0, "name": "GPU", "compute_capability": cc}],
            "packages": pkgs,
            "cuda_toolkits": [
                {"path": "/usr/local/cuda", "version": toolkit, "source": "CUDA_HOME", "active_for_build": True}
            ],
        }
        return dict(evaluate_feature(fi, Context(facts=facts, manifests=manifests)))  # type: ignore[arg-type]

    old = verdict("12.1", "12.8.93")
    assert (old["status"], old["effect"]) == ("blocked", "crash")
    assert old["reasons"][0]["rule"] == "jit-toolkit-knows-gpu"
    assert verdict("12.1", "12.9.86")["status"] == "ok"
    assert verdict("12.0", "12.8.93")["status"] == "ok"


# -- large modules are parsed in part; every shortcut falls back to the whole module --------------------------


def test_partial_parse_finds_what_a_full_parse_finds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from stackcheck.readers import sourcetables

    text = (
        "# the message 'only runs on' in a comment does not fool the shortcut\n"
        "def _cached():\n"
        "    def run(x):  # a nested def of the same name comes first and has no guard\n"
        "        return x\n"
        "    return run\n"
        "\n"
        "@decorator(\n"
        "    trace=1,\n"
        ")\n"
        "def run(x, major, y=0):\n"
        "    if y:\n"
        "        pass\n"
        "    elif major not in [9,\n"
        "                       12]:\n"
        "        raise RuntimeError(\n"
        "            'kernel only runs on SM90/SM120'\n"
        "        )\n"
        "    assert (\n"
        "        major in [8, 9]\n"
        "    ), 'other guard'\n"
        "    return x\n"
        "\n"
        "def later():\n"
        "    s = '''\n"
        "def run(  inside a string at column 0\n"
        "'''\n"
    )
    site = write(tmp_path, GUARD["files"][0], text)
    anywhere = {k: v for k, v in GUARD.items() if k != "function"}
    other = {**anywhere, "message": "other guard"}
    fast = [read_table(spec, site) for spec in (GUARD, anywhere, other)]
    monkeypatch.setattr(sourcetables, "_anchor", lambda spec: None)  # no shortcut: the whole module
    slow = [read_table(spec, site) for spec in (GUARD, anywhere, other)]
    assert [(r["status"], r["value"]) for r in fast] == [(r["status"], r["value"]) for r in slow]
    assert [r["value"] for r in fast] == [[9, 12], [9, 12], [8, 9]]


def test_partial_parse_keeps_line_numbers_in_errors(tmp_path: Path) -> None:
    text = "x = 1\n" * 50 + "def run(x):\n    if x not in [9, y]:\n        raise RuntimeError('only runs on 9')\n"
    got = read_table(GUARD, write(tmp_path, GUARD["files"][0], text))
    assert got["status"] == "error" and "pkg/guards.py:52" in str(got["reason"]), got
