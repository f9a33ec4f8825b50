"""`@record`: the mutable value classes of the gate's path, without importing dataclasses.

`dataclasses` brings inspect, dis, tokenize and ast with it, and generates and compiles code for every class it
decorates: ~10 ms of the gate's start for a dozen small records. `record` gives a class what a plain
`@dataclass` gave these (keyword or positional `__init__` in field order, defaults, `field(default_factory=...)`,
a `__repr__` in dataclass form, `__eq__` over the fields of the same class, unhashable) from its annotations,
with no code generation. mypy reads it as a dataclass (`dataclass_transform`). Not for frozen, ordered, slotted
or inheriting records: use a NamedTuple or a dataclass for those."""

from __future__ import annotations

from collections.abc import Callable

from stackcheck.lean_typing import TYPE_CHECKING

if TYPE_CHECKING:
    from typing import Any, TypeVar

    from typing_extensions import dataclass_transform

    _T = TypeVar("_T")
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
