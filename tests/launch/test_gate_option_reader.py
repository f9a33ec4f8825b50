"""The gate's one reader of an SGLang command line's options (gate.option_values / option_value / option_given),
checked against Python's own argparse: a small parser declared in the shape of SGLang's (allow_abbrev left at its
default, aliases of one action, a store_true flag that is a prefix of a choice flag, an old alias that is a prefix of
another flag) parses each odd spelling, and the reader must give what argparse keeps. The flags and their aliases
follow sglang 0.5.1 server_args.py (--expert-parallel-size / --ep-size / --ep at :1477-1479) and 0.5.23
arg_groups/fields/parallel.py:285; the parser is written here, not copied."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
from cli_process import scrubbed_environ  # noqa: F401 (the autouse fixture)
from gate_cli import QWEN3_MOE, gate_tp8, model_dir, reason_status, release_box

from stackcheck.launch import gate

EP = ("--ep-size", "--expert-parallel-size", "--ep")
A2A = ("--moe-a2a-backend",)
CHUNKED = ("--chunked-prefill-size",)
LOG_FORMAT = ("--log-requests-format",)
DRAFT_QUANT = ("--speculative-draft-model-quantization",)
DTYPE = ("--dtype",)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="launch_server")
    p.add_argument("--model-path")
    p.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
    p.add_argument("--expert-parallel-size", "--ep-size", "--ep", dest="ep_size", default=None)
    p.add_argument("--ep-dispatch-algorithm", default=None)
    p.add_argument("--moe-a2a-backend", default=None)
    p.add_argument("--chunked-prefill-size", default=None)
    p.add_argument("--log-requests", action="store_true")
    p.add_argument("--log-requests-format", default=None)
    p.add_argument("--speculative-draft-model-path", "--speculative-draft-model", default=None)
    p.add_argument("--speculative-draft-model-quantization", default=None)
    p.add_argument("--dtype", default=None)
    p.add_argument("--device", default=None)
    return p


PARSER = _parser()
FLAGS = set(PARSER._option_string_actions)  # every name the parser declares, as release_flags lists a release's
DEST = {EP: "ep_size", A2A: "moe_a2a_backend", CHUNKED: "chunked_prefill_size", LOG_FORMAT: "log_requests_format",
        DRAFT_QUANT: "speculative_draft_model_quantization", DTYPE: "dtype"}  # fmt: skip

CASES: list[tuple[list[str], tuple[str, ...]]] = [
    (["--ep-size", "4"], EP),
    (["--ep=4"], EP),
    (["--expert-parallel-size", "8"], EP),  # the long alias
    (["--expert-p", "8"], EP),  # an abbreviation of the long alias
    (["--ep-s", "2"], EP),  # an abbreviation of --ep-size, though --ep is a flag of its own
    (["--ep-size", "8", "--ep", "1"], EP),  # the last occurrence of any alias wins
    (["--ep", "1", "--expert-parallel-size=8"], EP),
    (["--ep-size", "8", "--ep-d", "static"], EP),  # --ep-d abbreviates --ep-dispatch-algorithm only
    (["--ep-size", "2", "--", "--ep-size", "4"], EP),  # after '--' every token is an argument
    (["--moe-a2a", "deepep"], A2A),
    (["--moe-a2a=deepep", "--moe-a2a-backend", "none"], A2A),
    (["--moe-a2a-backend=", "--dtype", "half"], A2A),  # an empty value after '='
    (["--chunked-prefill-size", "-1"], CHUNKED),  # a negative number is an argument
    (["--chunked", "-1"], CHUNKED),
    (["--chunked-prefill-size", "-1.5"], CHUNKED),
    (["--log-requests", "--log-requests-format", "json"], LOG_FORMAT),
    (["--log-requests", "--dtype", "half"], LOG_FORMAT),  # a store_true flag is no abbreviation of a longer one
    (["--log-requests-f", "text"], LOG_FORMAT),
    (["--speculative-draft-model", "/m", "--dtype", "half"], DRAFT_QUANT),  # an alias of its own, not a prefix
    (["--speculative-draft-model-q", "fp8"], DRAFT_QUANT),
    (["--dtype", "bfloat16", "--dtype=half"], DTYPE),
    (["--dtype", "a b"], DTYPE),  # a token with a space is an argument even after --
    (["--device", "cuda", "--dtype", "-"], DTYPE),  # '-' alone is an argument
    (["--model-path", "m"], EP),  # absent
]


@pytest.mark.parametrize(("argv", "spellings"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_the_reader_keeps_what_argparse_keeps(argv: list[str], spellings: tuple[str, ...]) -> None:
    namespace, _ = PARSER.parse_known_args(argv)
    expected = getattr(namespace, DEST[spellings])
    assert gate.option_value(argv, spellings, FLAGS) == expected
    assert gate.option_given(argv, spellings, FLAGS) is (expected is not None)


@pytest.mark.parametrize(
    "argv",
    [
        ["--log-requests"],
        ["--log-req", "--dtype", "half"],  # ambiguous for argparse (--log-requests, --log-requests-format)
        ["--log-requests-format", "json"],
    ],
)
def test_a_store_true_flag_is_given_as_argparse_reads_it(argv: list[str]) -> None:
    """A flag that takes no value: given when argparse sets it (an ambiguous prefix is read as each flag it may be:
    SGLang exits on it, and the gate refuses that on its own, undeclared_problems)."""
    try:
        expected: bool | None = PARSER.parse_known_args(argv)[0].log_requests
    except SystemExit:
        expected = None  # ambiguous: argparse exits
    given = gate.option_given(argv, ("--log-requests",), FLAGS)
    assert given is (expected is not False)


def test_every_occurrence_in_order_for_the_choice_checks() -> None:
    """argparse checks each occurrence's choices as it meets it: the choice checks read them all."""
    argv = ["--dtype", "bf16", "--dt=half", "--model-path", "m", "--dtype", "--tp-size", "2"]
    assert gate.option_values(argv, DTYPE, FLAGS) == ["bf16", "half", None]  # the last has no value: argparse exits
    assert gate.option_value(argv, DTYPE, FLAGS) is None


def test_flags_not_known_read_any_prefix_and_abbreviations_off_reads_full_spellings() -> None:
    argv = ["--moe-a2a", "deepep", "--devi", "cpu"]
    assert gate.option_value(argv, A2A, None) == "deepep"
    assert gate.option_value(argv, ("--device",), FLAGS, abbreviations=False) is None
    assert gate.option_value(argv, ("--device",), FLAGS) == "cpu"


def test_reading_flags_for_a_release_the_data_does_not_list_are_every_listed_releases() -> None:
    from stackcheck.knowledge.loader import load

    mapping = dict(load([], env={}).launch)
    known = gate.reading_flags(mapping, "0.5.9")
    local = gate.reading_flags(mapping, "0.5.9+cu128")
    assert known and known < local
    assert "--speculative-draft-model" in local and "--nsa-decode" in local  # 0.5.3's own flag: not an abbreviation
    assert gate.reading_flags(mapping, None) == local
    args = ["--speculative-draft-model", "/m"]
    assert gate.option_value(args, DRAFT_QUANT, local) is None


# ---- the gate: the expert parallel size as SGLang reads it --------------------------------------------------------

SPLIT = "refusal fp8-block-moe-tp-split"
BLOCK_FP8 = {"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}
QWEN3_MOE_FP8: dict[str, Any] = {**QWEN3_MOE, "quantization_config": BLOCK_FP8}  # experts of 1536: 192 per rank at tp 8


@pytest.mark.parametrize(
    ("flags", "refused"),
    [
        (["--ep-size", "8"], False),
        (["--ep-size", "8", "--ep", "1"], True),  # the last wins: ep 1, 192 per rank (the parent read 8: a false pass)
        (["--ep", "8", "--ep-size", "1"], True),
        (["--expert-parallel-size", "8"], False),  # the long alias (the parent read ep 1 and refused)
        (["--expert-p", "8"], False),
        (["--ep", "1", "--expert-parallel-size=8"], False),
    ],
)
def test_the_block_split_reads_the_expert_parallel_size_as_sglang_does(
    tmp_path: Path, flags: list[str], refused: bool
) -> None:
    box = release_box(tmp_path, "0.5.20", "9.0")
    doc = gate_tp8(box, model_dir(tmp_path, "model", QWEN3_MOE_FP8), *flags)
    assert (reason_status(doc).get(SPLIT) == ("blocked", "crash")) is refused, doc.get("reasons")


# ---- the gate's advice: --dtype as SGLang reads it ----------------------------------------------------------------

SEED_AFTER = Path(__file__).resolve().parent.parent / "recommend" / "seed-after" / "facts.json"  # PCIe, 4 GPUs
PCIE_IPC = "SGLANG_ENABLE_PCIE_IPC_ALLREDUCE=1"


@pytest.mark.parametrize(
    ("flags", "advised"),
    [
        ([], True),
        (["--dtype", "float16"], False),  # recommend.json: the PCIe-IPC path is for bf16 reductions
        (["--dtype", "float16", "--dtype", "bfloat16"], True),  # the last wins (the parent read the first)
        (["--dtype", "bfloat16", "--dtype", "float16"], False),
        (["--dtype=float16"], False),  # (the parent read only `--dtype VALUE`)
        (["--dt", "half"], False),  # an abbreviation
    ],
)
def test_the_advice_reads_the_dtype_as_sglang_does(flags: list[str], advised: bool) -> None:
    import json

    from stackcheck.knowledge.loader import load
    from stackcheck.launch.recommend import gate_advice
    from stackcheck.verdicts.context import Context

    manifests = load([], env={})
    doc = json.loads(SEED_AFTER.read_text())
    command = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "4", *flags]
    d = gate.derive(command, manifests.launch, {})
    ctx = Context(facts=doc.get("facts", doc), manifests=manifests, launch={"tp": 4})
    lines = gate_advice(ctx, command, d.sglang_args, [], {}, False, None, None)
    assert any(PCIE_IPC in line for line in lines) is advised, lines


# ---- a choice flag given without its value ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("version", "flags"),
    [
        ("0.5.9", ["--tool-call-parser"]),  # the end of the command follows (the parent passed it)
        ("0.5.12", ["--speculative-moe-a2a-backend"]),
        ("0.5.9", ["--tool-call", "--dtype", "half"]),  # abbreviated, another option follows
        ("0.5.9", ["--tool-call-parser", "--tp", "2"]),  # (the parent refused it, taking '--tp' for the value)
    ],
)
def test_a_choice_flag_without_its_value_is_refused(version: str, flags: list[str]) -> None:
    """argparse exits with 'expected one argument' (exit status 2) when a flag that takes one value has none."""
    from gate_cli import choice_problems

    from stackcheck.knowledge.loader import load

    got = choice_problems(dict(load([], env={}).launch), version, *flags)
    flag = next(f for f in ("--tool-call-parser", "--speculative-moe-a2a-backend") if f.startswith(flags[0]))
    assert [(subject, status) for subject, status, _ in got] == [(flag, "blocked")]


def test_a_listed_choice_flag_without_its_value_stops_the_gate() -> None:
    """--moe-a2a-backend is a launch.json option since round twelve (its deepep choice asks for moe-a2a-deepep): the
    gate's own parse stops at it with a usage error naming the flag, as for every listed flag, before any rule."""
    from stackcheck.errors import UsageError
    from stackcheck.knowledge.loader import load
    from stackcheck.launch import gate

    argv = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--moe-a2a-backend"]
    with pytest.raises(UsageError, match="--moe-a2a-backend needs a value"):
        gate.derive(argv, load([], env={}).launch, {})


def test_an_own_choice_flag_without_its_value_is_refused() -> None:
    """SGLang 0.5.3's own --nsa-decode (launch.json own_flag_choices) at the end of the command, derived as the gate
    derives it once the release is known (derive's `own`; before that, derive reads it as an abbreviation of
    --nsa-decode-backend and stops with a usage error)."""
    from stackcheck.knowledge.loader import load

    mapping = dict(load([], env={}).launch)
    own = {"--nsa-decode"}
    d = gate.derive(["python", "-m", "sglang.launch_server", "--model", "m", "--nsa-decode"], mapping, {}, own=own)
    got = gate.own_flag_problems(d, mapping, "0.5.3", own)
    assert [(p.subject, p.status, p.effect) for p in got] == [("--nsa-decode", "blocked", "crash")]
    assert "expected one argument" in got[0].message


LORA = ("--lora-target-modules",)


@pytest.mark.parametrize(
    "argv",
    [
        ["--lora-target-modules", "q_proj", "v_proj", "--dtype", "half"],  # up to the next option
        ["--lora-target-modules", "q_proj", "--", "k_proj"],  # up to '--'
        ["--lora-target-modules", "--dtype", "half"],  # none at all
        ["--lora-target-modules", "--", "q_proj"],
        ["--lora-target-modules=q_proj", "v_proj"],  # one after '='
        ["--lora-target", "q_proj", "-1", "--dtype", "half", "--lora-target-modules", "o_proj"],  # each occurrence
        ["--dtype", "half"],  # absent
    ],
)
def test_an_option_of_nargs_star_gives_each_occurrences_values(argv: list[str]) -> None:
    """nargs='*' (SGLang's --lora-target-modules): every argument after the option up to the next option or '--'
    (argparse checks each value's choices), none at all allowed: option_values(many=True), every occurrence's
    values in turn, as argparse appends them."""
    parser = _parser()
    parser.add_argument("--lora-target-modules", nargs="*", action="append", default=None)
    appended = parser.parse_known_args(argv)[0].lora_target_modules or []
    expected = [value for occurrence in appended for value in occurrence]
    flags = set(parser._option_string_actions)
    assert gate.option_values(argv, LORA, flags, many=True) == expected
    assert None not in gate.option_values(argv, LORA, flags, many=True)
