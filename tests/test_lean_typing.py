"""stackcheck.lean_typing: a NamedTuple class built without typing behaves as typing's own builds it, and cast
gives its value back; the classes on the start-up path are such tuples."""

from __future__ import annotations

import copy
import pickle
import subprocess
import sys
import typing
from pathlib import Path

import pytest

from stackcheck.lean_typing import NamedTuple, cast

ROOT = Path(__file__).resolve().parent.parent


class Lean(NamedTuple):
    """A lean point."""

    x: int
    name: str | None
    tags: tuple[str, ...] = ()
    weight: float = 1.0

    @property
    def label(self) -> str:
        return f"{self.name or 'point'} at {self.x}"

    def heavier(self, by: float) -> Lean:
        return self._replace(weight=self.weight + by)


def _typing_twin() -> typing.Any:
    class Lean(typing.NamedTuple):
        """A lean point."""

        x: int
        name: str | None
        tags: tuple[str, ...] = ()
        weight: float = 1.0

        @property
        def label(self) -> str:
            return f"{self.name or 'point'} at {self.x}"

        def heavier(self, by: float) -> typing.Any:
            return self._replace(weight=self.weight + by)

    return Lean


def test_named_tuple_is_typings() -> None:
    twin = _typing_twin()
    cases: list[tuple[typing.Any, ...]] = [(1, None), (2, "a", ("t",)), (3, "b", (), 2.5)]
    for args in cases:
        ours, theirs = Lean(*args), twin(*args)
        assert tuple(ours) == tuple(theirs) and ours == theirs and hash(ours) == hash(theirs)
        assert repr(ours) == repr(theirs)
        assert ours._asdict() == theirs._asdict()
        assert ours.label == theirs.label
        assert tuple(ours.heavier(1.5)) == tuple(theirs.heavier(1.5))
        assert isinstance(ours, tuple) and isinstance(ours.heavier(0), Lean)
    assert Lean._fields == twin._fields == ("x", "name", "tags", "weight")
    assert Lean._field_defaults == twin._field_defaults == {"tags": (), "weight": 1.0}
    assert Lean.__doc__ == twin.__doc__ == "A lean point."
    assert Lean.__name__ == "Lean" and Lean.__qualname__ == "Lean" and Lean.__module__ == __name__
    assert list(Lean.__annotations__) == list(twin.__annotations__)
    assert Lean(x=4, name="k") == Lean(4, "k", (), 1.0)
    with pytest.raises(TypeError):
        Lean(1)  # type: ignore[call-arg]
    with pytest.raises(AttributeError):
        Lean(1, None).x = 2  # type: ignore[misc]
    assert not hasattr(Lean(1, None), "__dict__")


def test_named_tuple_copies_and_pickles() -> None:
    value = Lean(1, "a", ("x", "y"))
    assert pickle.loads(pickle.dumps(value)) == value
    assert type(pickle.loads(pickle.dumps(value))) is Lean
    assert copy.deepcopy(value) == value and copy.copy(value) == value


@pytest.mark.parametrize(
    ("body", "error"),
    [
        ("a: int = 0\n    b: int", TypeError),  # a field without a default after one with a default
        ("__slots__ = ('a',)\n    a: int", AttributeError),
        ("_replace = None\n    a: int", AttributeError),
    ],
)
def test_named_tuple_refuses_what_typing_refuses(body: str, error: type[Exception]) -> None:
    for base in (NamedTuple, typing.NamedTuple):
        with pytest.raises(error):
            exec(f"class Bad(Base):\n    {body}\n", {"Base": base, "__name__": "bad"})


def test_named_tuple_is_a_base_only() -> None:
    with pytest.raises(TypeError):
        NamedTuple("Called", [("a", int)])


def test_cast_gives_its_value() -> None:
    value: object = ["a"]
    assert cast("list[str]", value) is value


def test_the_start_up_path_classes_are_named_tuples_without_typing() -> None:
    code = (
        "import sys\n"
        "from stackcheck.verdicts.context import GpuModel, TableValue\n"
        "from stackcheck.facts.archs import Target, TargetRules, parse_target\n"
        "from stackcheck.facts.implied import Implied\n"
        "assert 'typing' not in sys.modules, 'typing imported'\n"
        "m = GpuModel('9.0', 'H200', (0, 1))\n"
        "assert m.label == 'H200 (cc 9.0, GPU 0,1)' and m == ('9.0', 'H200', (0, 1))\n"
        "assert m._fields == ('cc', 'name', 'indices')\n"
        "assert TableValue(1, 'probed', 'x').source is None\n"
        "print('ok', Target._fields, TargetRules._fields, Implied._fields)\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("ok ('major', 'minor', 'suffix', 'kind')")


#: the modules a gate imports besides the audit's: the command, the launch's reading, preflight and refusals, the
#: engine, the recommendation's advice, the gate's renderer and the GPU-usage reader
GATE_MODULES = (
    "stackcheck.commands.gate", "stackcheck.launch.gate", "stackcheck.launch.gate_preflight",
    "stackcheck.launch.preflight", "stackcheck.launch.preflight.deps", "stackcheck.launch.refusals",
    "stackcheck.launch.recommend", "stackcheck.verdicts.engine", "stackcheck.render.gate",
    "stackcheck.probes.gpu_usage", "stackcheck.record",
)  # fmt: skip


def test_the_gate_modules_import_no_typing() -> None:
    # typing's NamedTuple, Literal and TypeVar cost the gate's imports ~2 ms even where packaging.version (which
    # the engine reads versions with) has imported typing already; they take lean_typing's
    code = (
        "import sys\n"
        f"for name in {GATE_MODULES!r}:\n"
        "    __import__(name)\n"
        "    assert 'typing' not in sys.modules, f'typing imported with {name}'\n"
        "from stackcheck.launch.preflight import CheckResult\n"
        "from stackcheck.launch.preflight.gpus import Layout\n"  # (the package imports its checks when they run)
        "r = CheckResult('gpu-count', 'ok', 2, 2, 'fine')\n"
        "assert r.to_json()['status'] == 'ok' and r.details is None and r._fields[0] == 'check'\n"
        "assert Layout._fields[:2] == ('tp', 'pp')\n"
        "print('ok')\n"
    )
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    proc = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ok\n"


# ---- iperf27: the constructor taken from a compiled one of the class's arity, not namedtuple's eval ------------------


def _lean_class(name: str, fields: list[str], defaults: list[typing.Any]) -> typing.Any:
    """A lean NamedTuple class of these fields, the last len(defaults) of them with these defaults (a class statement's
    making, by types.new_class)."""
    import types

    def body(ns: dict[str, typing.Any]) -> None:
        ns.update(__module__=__name__, __annotations__=dict.fromkeys(fields, "int"))
        ns.update(zip(fields[len(fields) - len(defaults) :], defaults, strict=True))

    return types.new_class(name, (NamedTuple,), exec_body=body)


def _alike(ours: typing.Any, twin: typing.Any) -> None:
    """`ours` behaves as collections.namedtuple's `twin` (same name and fields) does, read through its whole surface."""
    fields = list(twin._fields)
    n, k = len(fields), len(twin._field_defaults)
    assert ours._fields == twin._fields and ours.__match_args__ == twin.__match_args__
    assert ours._field_defaults == twin._field_defaults
    assert ours.__new__.__doc__ == twin.__new__.__doc__ and ours.__new__.__defaults__ == twin.__new__.__defaults__
    assert [getattr(ours, f).__doc__ for f in fields] == [getattr(twin, f).__doc__ for f in fields]
    values = [f"v{i}" for i in range(n)]
    for given in range(n - k, n + 1):  # the defaults taken for the fields not given, positionally and by keyword
        a, b = ours(*values[:given]), twin(*values[:given])
        assert tuple(a) == tuple(b) and repr(a) == repr(b) and a._asdict() == b._asdict()
        kw = dict(zip(fields[:given], values[:given], strict=True))
        assert tuple(ours(**kw)) == tuple(b) and [getattr(a, f) for f in fields] == list(b)
        mixed = (values[: min(1, given)], {f: v for f, v in kw.items() if f != fields[0]})
        assert tuple(ours(*mixed[0], **mixed[1])) == tuple(b)
    full = ours(*values)
    assert full == tuple(values) and hash(full) == hash(tuple(values)) and type(full) is ours
    assert tuple(full._replace(**{fields[-1]: "x"})) == tuple(twin(*values)._replace(**{fields[-1]: "x"}))
    assert type(ours._make(values)) is ours and tuple(ours._make(iter(values))) == tuple(values)
    assert full.__getnewargs__() == tuple(values) and type(full.__getnewargs__()) is tuple
    bads: list[typing.Callable[[typing.Any], typing.Any]] = [
        lambda c: c(*values, "extra"), lambda c: c(*values[: n - k - 1]) if n - k else c(nope=1),
        lambda c: c(*values, **{fields[0]: "twice"}), lambda c: c._make(values[:-1]),
    ]  # fmt: skip
    for bad in bads:
        with pytest.raises(TypeError):
            bad(twin)
        with pytest.raises(TypeError):
            bad(ours)
    with pytest.raises(ValueError, match="unexpected field names"):
        full._replace(nope=1)
    with pytest.raises(AttributeError):
        full.extra = 1  # __slots__ = (): no instance dictionary


@pytest.mark.parametrize("n", range(1, 15))  # every compiled arity, and namedtuple's own past them
def test_every_arity_is_namedtuples(n: int, monkeypatch: pytest.MonkeyPatch) -> None:
    import collections

    namedtuple: typing.Any = collections.namedtuple  # (called with names made here)
    fields = [f"f{i}" for i in range(n)]
    for k in sorted({0, 1, n // 2, n}):
        defaults = [f"d{i}" for i in range(k)]
        ours = _lean_class(f"T{n}", fields, defaults)
        twin = namedtuple(f"T{n}", fields, defaults=defaults, module=__name__)
        _alike(ours, twin)
        monkeypatch.setattr(sys.modules[__name__], f"T{n}", ours, raising=False)  # (pickle finds it by name)
        value = ours(*[str(i) for i in range(n)])
        assert pickle.loads(pickle.dumps(value)) == value and copy.deepcopy(value) == value


def test_every_named_tuple_of_stackcheck_is_namedtuples() -> None:
    """Each NamedTuple class in stackcheck's modules, against collections.namedtuple of its fields and defaults."""
    import collections
    import importlib
    import re

    namedtuple: typing.Any = collections.namedtuple  # (called with names made here)
    seen = 0
    for path in sorted((ROOT / "stackcheck").rglob("*.py")):
        names = re.findall(r"^class (\w+)\(NamedTuple\):", path.read_text(encoding="utf-8"), re.M)
        if not names:
            continue
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        for name in names:
            cls = getattr(module, name)
            defaults = list(cls._field_defaults.values())
            twin = namedtuple(name, cls._fields, defaults=defaults, module=module.__name__)
            _alike(cls, twin)
            seen += 1
    assert seen >= 30
