"""`@record`: the mutable value classes of the gate's path, without importing dataclasses.

`dataclasses` brings inspect, dis, tokenize and ast with it, and generates and compiles code for every class it
decorates: ~10 ms of the gate's start for a dozen small records. `record` gives a class what a plain
`@dataclass` gave these (keyword or positional `__init__` in field order, defaults, `field(default_factory=...)`,
a `__repr__` in dataclass form, `__eq__` over the fields of the same class, unhashable) from its annotations,
with no code generation. mypy reads it as a dataclass (`dataclass_transform`). Not for frozen, ordered, slotted
or inheriting records: use `Frozen` (below), a NamedTuple or a dataclass for those.

`Frozen`: the base of the frozen value classes of the planner's path (its plan, steps and candidate stacks), what
`@dataclass(frozen=True)` gave them without importing dataclasses. A subclass annotates its fields in field order,
names the same fields in `__slots__` (in any order: ruff sorts them), and writes its own `__init__` (the fields
as parameters in that order, each set with `object.__setattr__`); the base gives it equality and a hash over the
fields in order (or over `COMPARED` where a field is not compared), a repr in dataclass form, no assignment after
`__init__`, copying and pickling, and `replace`. The hash is kept once worked out (a slot of the base's)."""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, ClassVar, TypeVar

    from typing_extensions import dataclass_transform

    _T = TypeVar("_T")
    _F = TypeVar("_F", bound="Frozen")
else:

    def dataclass_transform(**_):
        return lambda fn: fn


_NO_DEFAULT = object()


class _Factory:
    """A field's default made fresh for every instance (a list, a dict, a set)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


def field(*, default_factory: Callable[[], _T]) -> _T:
    """A field whose default is `default_factory()`, called for each instance (as dataclasses.field)."""
    return _Factory(default_factory)  # type: ignore[return-value]


@dataclass_transform(field_specifiers=(field,))
def record(cls: type[_T]) -> type[_T]:
    names = tuple(
        name
        for name, note in cls.__annotations__.items()  # its own: a record inherits from no record
        if not str(note).startswith(("ClassVar", "typing.ClassVar"))
    )
    defaults: dict[str, Any] = {}
    for name in names:
        value = cls.__dict__.get(name, _NO_DEFAULT)
        if value is not _NO_DEFAULT:
            defaults[name] = value
            if isinstance(value, _Factory):
                delattr(cls, name)  # an instance always sets it; the class keeps no factory around
        elif defaults:
            raise TypeError(f"non-default argument {name!r} follows default argument")
    qualname = cls.__qualname__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if len(args) > len(names):
            given = len(args) + 1
            raise TypeError(f"{qualname}.__init__() takes {len(names) + 1} positional arguments but {given} were given")
        for name in kwargs:
            if name not in defaults and name not in names:
                raise TypeError(f"{qualname}.__init__() got an unexpected keyword argument {name!r}")
        for n, name in enumerate(names):
            if n < len(args):
                if name in kwargs:
                    raise TypeError(f"{qualname}.__init__() got multiple values for argument {name!r}")
                value = args[n]
            elif name in kwargs:
                value = kwargs[name]
            elif name in defaults:
                value = defaults[name]
                if isinstance(value, _Factory):
                    value = value.make()
            else:
                raise TypeError(f"{qualname}.__init__() missing 1 required positional argument: {name!r}")
            setattr(self, name, value)

    def __repr__(self: Any) -> str:
        return f"{type(self).__qualname__}({', '.join(f'{n}={getattr(self, n)!r}' for n in names)})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        # as tuples, as a dataclass compares: a field that is the same object is equal (a NaN, say)
        return tuple(getattr(self, n) for n in names) == tuple(getattr(other, n) for n in names)

    for fn in (__init__, __repr__, __eq__):
        fn.__qualname__ = f"{qualname}.{fn.__name__}"
        setattr(cls, fn.__name__, fn)
    cls.__hash__ = None  # type: ignore[assignment]  # mutable and compared by value: unhashable, as a dataclass
    setattr(cls, "__match_args__", names)  # noqa: B010  (mypy: a class attribute it will not let be assigned)
    return cls


class Frozen:
    """A frozen value with slots (see the module's docstring)."""

    #: `_hash`: the hash, worked out when first asked and kept (the fields never change after `__init__`): the planner
    #: hashes its choices thousands of times a run in its memo keys (~0.75 us each as a tuple of eight fields)
    __slots__: tuple[str, ...] = ("_hash",)
    _hash: int
    #: the fields equality and the hash read, when not every field (a dataclass's `compare=False, hash=False`)
    COMPARED: ClassVar[tuple[str, ...]]
    #: the fields in order (their annotations' order, as a dataclass reads them)
    _fields: ClassVar[tuple[str, ...]]
    _compared: ClassVar[attrgetter[tuple[Any, ...]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = tuple(cls.__annotations__)  # its own: a subclass of Frozen has annotated fields
        compared = cls.__dict__.get("COMPARED", names)
        if set(names) != set(cls.__dict__.get("__slots__", ())):
            raise TypeError(f"{cls.__qualname__}: __slots__ names the annotated fields, and only them")
        if len(compared) < 2 or not set(compared) <= set(names):
            raise TypeError(f"{cls.__qualname__}: compare two fields or more, all of them fields")
        cls._fields = names
        cls._compared = attrgetter(*(n for n in names if n in compared))  # a tuple in field order, as a dataclass's
        setattr(cls, "__match_args__", names)  # noqa: B010  (mypy: a class attribute it will not let be assigned)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._compared(self) == self._compared(other)

    def __hash__(self) -> int:
        try:
            return self._hash
        except AttributeError:
            got = hash(self._compared(self))  # (a field that cannot be hashed raises here, every time, as before)
            object.__setattr__(self, "_hash", got)
            return got

    def __repr__(self) -> str:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__qualname__}({fields})"

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        # (copy and pickle would set the slots one by one, which a frozen value refuses)
        return (self.__class__, tuple(getattr(self, n) for n in self._fields))


def replace(value: _F, **changes: Any) -> _F:
    """A copy of a frozen value with some fields changed (as dataclasses.replace)."""
    for name in changes:
        if name not in value._fields:
            raise TypeError(f"{type(value).__qualname__} has no field {name!r}")
    return value.__class__(**{n: changes[n] if n in changes else getattr(value, n) for n in value._fields})
