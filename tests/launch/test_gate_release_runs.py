"""launch.json's release_flags read with a table of places (gate._positions): the same answers as reading each
run with list.index, which the gate did for each of ~630 flags, for the undeclared flags and again for every
refusal rule (~11 ms of a gate of saved facts, ~1 ms now)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackcheck.knowledge.loader import load
from stackcheck.launch import gate, refusals


def _reference_in_runs(version: str, releases: list[str], spans: Any) -> bool:
    """The runs as the gate read them before: list.index for every release named."""
    if version not in releases:
        return False
    at = releases.index(version)
    for span in spans if isinstance(spans, list) else []:
        first, _, last = str(span).partition("-")
        if first in releases and (last or first) in releases:
            if releases.index(first) <= at <= releases.index(last or first):
                return True
    return False


_NAMES = st.sampled_from(["1.0", "1.1", "1.2", "2.0", "2.0.post1", "x", ""])
_SPAN = st.one_of(
    st.builds(lambda a, b: f"{a}-{b}", _NAMES, _NAMES),
    _NAMES,
    st.integers(0, 3),
    st.none(),
)


@given(
    releases=st.lists(_NAMES, max_size=6),  # repeats too: a repeated release takes its first place, as index does
    version=_NAMES,
    spans=st.one_of(st.lists(_SPAN, max_size=4), st.text(max_size=5), st.none()),
)
def test_in_runs_answers_as_list_index_does(releases: list[str], version: str, spans: Any) -> None:
    assert gate._in_runs(version, releases, spans) is _reference_in_runs(version, releases, spans)
    pos = gate._positions(releases)
    assert gate._in_runs(version, releases, spans, pos) is _reference_in_runs(version, releases, spans)


@pytest.fixture(scope="module")
def launch() -> dict[str, Any]:
    return dict(load([], env={}).launch)


def test_declared_in_is_the_reference_on_every_shipped_release(launch: dict[str, Any]) -> None:
    table = launch["release_flags"]
    releases = [str(r) for r in table["releases"]]
    for version in [*releases, "0.0.1", "0.5.9.post9"]:
        want = None
        if version in releases:
            flags = table["flags"].items()
            want = {*map(str, table["builtin"]), *(f for f, s in flags if _reference_in_runs(version, releases, s))}
        assert gate._declared_in(launch, version) == want, version


def test_a_gate_reads_the_release_flags_once(launch: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """_declared_in's readers (own_spellings, own_flag_problems, undeclared_problems and the refusal rules) share one
    reading of the ~630 flags' runs per release: the first reads, the others are served the kept answer."""
    calls: list[str] = []
    real = gate._declared_reading

    def counted(table: Any, version: str) -> frozenset[str] | None:
        calls.append(version)
        return real(table, version)

    monkeypatch.setattr(gate, "_declared_reading", counted)
    monkeypatch.setattr(gate, "_DECLARED_KEPT", [])
    cmd = ["python", "-m", "sglang.launch_server", "--model-path", "m", "--tp", "2", "--nsa-decode", "flashmla_kv"]
    d = gate.derive(cmd, launch, {})
    own = gate.own_spellings(d, launch, "0.5.3")
    assert own  # (--nsa-decode is 0.5.3's own: own_flag_problems reads the flags too)
    gate.own_flag_problems(d, launch, "0.5.3", own)
    gate.undeclared_problems(d, launch, "0.5.3", None)
    refusals.refusal_problems(d, launch, "0.5.3", {9})
    assert calls == ["0.5.3"]
    want = gate._declared_in(launch, "0.5.3")
    assert want is not None and "--nsa-decode" in want
    want.add("--not-a-flag")  # a caller's copy: changing it changes no other reader's answer
    assert "--not-a-flag" not in (gate._declared_in(launch, "0.5.3") or set())
    assert calls == ["0.5.3"]
    # another release, or another table (a user's launch.json), is read again
    assert gate._declared_in(launch, "0.5.20") != gate._declared_in(launch, "0.5.3")
    table = {**launch["release_flags"], "flags": {}}
    assert gate._declared_in({"release_flags": table}, "0.5.3") == set(map(str, table["builtin"]))
    assert calls == ["0.5.3", "0.5.20", "0.5.3", "0.5.3"]
