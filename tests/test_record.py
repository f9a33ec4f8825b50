"""stackcheck.record behaves as the plain @dataclass it replaces on the gate's path: the same class written both
ways constructs, compares, prints and fails alike."""

from __future__ import annotations

import dataclasses
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stackcheck.record import Frozen, field, record, replace

ROOT = Path(__file__).resolve().parent.parent


@dataclasses.dataclass
class DC:
    name: str
    count: int
    note: str | None = None
    items: list[int] = dataclasses.field(default_factory=list)
    extra: dict[str, Any] = dataclasses.field(default_factory=dict)


@record
class RC:
    name: str
    count: int
    note: str | None = None
    items: list[int] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def _pair(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """Both constructions, or both TypeErrors (as the exception type, for comparing)."""
    out: list[object] = []
    for cls in (DC, RC):
        try:
            out.append(cls(*args, **kwargs))
        except TypeError:
            out.append(TypeError)
    return out[0], out[1]


values = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3))
names = st.sampled_from(["name", "count", "note", "items", "extra", "other"])


@given(st.lists(values, max_size=6), st.dictionaries(names, values, max_size=4))
def test_construction_fields_repr_and_errors_match_a_dataclass(args: list[Any], kwargs: dict[str, Any]) -> None:
    dc, rc = _pair(tuple(args), kwargs)
    if dc is TypeError or rc is TypeError:
        assert dc is rc  # the same calls are refused
        return
    for f in dataclasses.fields(DC):
        assert getattr(rc, f.name) == getattr(dc, f.name)
    assert repr(rc) == repr(dc).replace("DC(", "RC(", 1)


def test_defaults_factories_are_fresh_per_instance() -> None:
    a, b = RC("a", 1), RC("a", 1)
    assert a.items == [] and a.extra == {} and a.note is None
    a.items.append(1)
    assert b.items == []
    assert "items" not in RC.__dict__  # the factory is not left on the class


def test_equality_hash_and_match_args_as_a_dataclass() -> None:
    assert RC("a", 1) == RC("a", 1, None, [], {})
    assert RC("a", 1) != RC("a", 2)
    assert RC("a", 1) != DC("a", 1)  # type: ignore[comparison-overlap]  # another class is never equal, as with dataclasses
    nan = math.nan
    assert RC("a", 1, extra={"x": nan}) != RC("a", 1, extra={"x": math.inf})
    same = {"x": nan}
    assert RC("a", 1, extra=same) == RC("a", 1, extra=same)  # compared as tuples: identity first, like DC
    assert DC("a", 1, extra=same) == DC("a", 1, extra=same)
    with pytest.raises(TypeError):
        hash(RC("a", 1))
    assert RC.__match_args__ == DC.__match_args__
    r = RC("a", 1)
    r.count = 5  # mutable, as the dataclasses were
    assert r.count == 5
    match r:
        case RC(name, count):
            assert (name, count) == ("a", 5)


def test_errors_name_the_argument() -> None:
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'count'"):
        RC("a")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword argument 'other'"):
        RC("a", 1, other=2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="multiple values for argument 'name'"):
        RC("a", 1, name="b")  # type: ignore[misc]
    with pytest.raises(TypeError, match="takes 6 positional arguments but 7 were given"):
        RC("a", 1, None, [], {}, 9)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="non-default argument 'b' follows default argument"):

        @record
        class Bad:
            a: int = 1
            b: int  # type: ignore[misc]


def test_the_gate_path_imports_no_dataclasses(tmp_path: Path) -> None:
    """A refusing gate from saved facts (its launch derived, preflight, the verdicts, the plan read back from
    the cache) imports neither dataclasses nor inspect: their import and code generation were ~10 ms of
    every launch. The gate's own modules are imported either way."""
    facts = str(ROOT / "tests/cases/writeup-after/facts.json")
    code = (
        "import contextlib, io, sys\n"
        "from stackcheck.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main(['gate', '--dry-run', '--facts', {facts!r}, '--', 'python3', '-m',"
        " 'sglang.launch_server', '--model-path', 'x', '--tp', '8', '--enable-torch-symm-mem'])\n"
        "print(rc, ' '.join(sorted(sys.modules)))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "STACKCHECK_CACHE_DIR": str(tmp_path / "c")}
    env.pop("STACKCHECK_PLAN_CACHE", None)
    subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, timeout=120)  # miss
    # the decision kept by the first run is removed (stackcheck.assembly.gate_cache): the second judges the verdicts
    # again and reads the plan back, which is what this test is about
    shutil.rmtree(tmp_path / "c" / "gate")
    out = subprocess.run([sys.executable, "-c", code], env=env, check=True, capture_output=True, text=True)
    rc, *mods = out.stdout.split()
    assert rc == "1"  # refused: the blocked feature and the plan step were worked out
    assert {
        "stackcheck.launch.gate",
        "stackcheck.launch.gate_preflight",
        "stackcheck.launch.preflight",
        "stackcheck.record",
    } <= set(mods)
    assert not set(mods) & {"dataclasses", "inspect", "stackcheck.plan"}


# ---- Frozen: the planner's frozen values, as the frozen dataclasses they replace ---------------------------


@dataclasses.dataclass(frozen=True)
class FDC:
    name: str
    count: int = 0
    extra: dict[str, Any] = dataclasses.field(default_factory=dict, compare=False, hash=False)


class FRC(Frozen):
    __slots__ = ("count", "extra", "name")
    COMPARED = ("name", "count")
    name: str
    count: int
    extra: dict[str, Any]

    def __init__(self, name: str, count: int = 0, extra: dict[str, Any] | None = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "count", count)
        object.__setattr__(self, "extra", {} if extra is None else extra)


@given(st.text(max_size=4), st.integers(-3, 3), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2))
def test_a_frozen_value_compares_hashes_and_prints_as_a_frozen_dataclass(
    name: str, count: int, extra: dict[str, Any]
) -> None:
    dc, fr = FDC(name, count, extra), FRC(name, count, extra)
    assert repr(fr) == repr(dc).replace("FDC(", "FRC(", 1)
    assert hash(fr) == hash(dc)  # a tuple of the compared fields, both ways
    assert fr == FRC(name, count) and dc == FDC(name, count)  # the uncompared field plays no part, in both
    assert fr != FRC(name, count + 1) and dc != FDC(name, count + 1)
    assert fr != dc
    assert getattr(FRC, "__match_args__") == FDC.__match_args__  # noqa: B009  (mypy: set by Frozen)


def test_a_frozen_value_refuses_assignment_and_copies() -> None:
    import copy
    import pickle

    fr = FRC("a", 1, {"k": 1})
    with pytest.raises(AttributeError):
        fr.count = 2  # (mypy lets it be written: the refusal is Frozen.__setattr__'s)
    with pytest.raises(AttributeError):
        del fr.count
    with pytest.raises(AttributeError):
        fr.other = 1
    assert not hasattr(fr, "__dict__")  # slots
    for other in (copy.copy(fr), copy.deepcopy(fr), pickle.loads(pickle.dumps(fr))):
        assert other == fr and other.extra == {"k": 1} and type(other) is FRC
    changed = replace(fr, count=5)
    assert (changed.name, changed.count, changed.extra) == ("a", 5, {"k": 1}) and fr.count == 1
    with pytest.raises(TypeError, match="no field 'other'"):
        replace(fr, other=1)
    assert FRC("a").extra == {} and FRC("a").extra is not FRC("a").extra  # a fresh default for each


def test_a_frozen_class_compares_fields_it_has() -> None:
    with pytest.raises(TypeError, match="all of them fields"):

        class Bad(Frozen):
            __slots__ = ("a", "b")
            COMPARED = ("a", "c")
            a: int
            b: int

    with pytest.raises(TypeError, match="only them"):

        class Bad2(Frozen):
            __slots__ = ("a", "b")
            a: int


def test_a_frozen_value_works_out_its_hash_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hash is kept once worked out (the planner hashes each choice thousands of times a run); equal values still
    hash alike, and a copy or a replaced value works out its own."""
    asked: list[int] = []
    real = FRC._compared

    def counting(value: Any) -> Any:
        asked.append(1)
        return real(value)

    monkeypatch.setattr(FRC, "_compared", staticmethod(counting))
    fr = FRC("a", 1, {"k": 1})
    first = hash(fr)
    assert hash(fr) == first and hash(fr) == first
    assert len(asked) == 1
    assert hash(FRC("a", 1)) == first and FRC("a", 1) == fr
    changed = replace(fr, count=2)
    assert hash(changed) == hash(("a", 2)) != first
    import copy
    import pickle

    for other in (copy.copy(fr), copy.deepcopy(fr), pickle.loads(pickle.dumps(fr))):
        assert hash(other) == first and other == fr
    with pytest.raises(TypeError):
        hash(FRC("a", [1]))  # type: ignore[arg-type]  # (a field that cannot be hashed: refused each time)
    with pytest.raises(TypeError):
        hash(FRC("a", [1]))  # type: ignore[arg-type]
