"""The two names of `typing` that the modules a report from saved facts runs through need at run time, without
importing typing: `cast` and `NamedTuple` (typing is ~3.5 ms of every start, and nothing else on that path
imports it). The type checker reads typing's own: `TYPE_CHECKING` is a constant it takes as true, so mypy
checks every cast and every NamedTuple class exactly as before. Those modules write annotations as strings
(`from __future__ import annotations`) and import the rest of typing under `if TYPE_CHECKING:`.

At run time `NamedTuple` is a base for the class statement only (`class Point(NamedTuple): x: int`): the
class becomes collections.namedtuple's, with the fields of its annotations in their order, the defaults the
body gives, and the body's methods, properties and docstring; its annotations stay as written."""

from __future__ import annotations

__all__ = ["TYPE_CHECKING", "NamedTuple", "cast"]

TYPE_CHECKING = False

if TYPE_CHECKING:
    from typing import NamedTuple, cast
else:
    import collections

    def cast(_type, value):
        """typing.cast at run time: the value, unchanged."""
        return value

    class _TupleClass(type):
        """Builds a named tuple from a class statement: the metaclass of the base `NamedTuple` stands for."""

        def __new__(mcls, name, bases, namespace):
            if bases != (_NamedTupleBase,):
                raise TypeError(f"{name}: a NamedTuple class has NamedTuple as its only base")
            annotations = dict(namespace.get("__annotations__", {}))
            fields = list(annotations)
            defaults = [namespace[f] for f in fields if f in namespace]
            if [f for f in fields if f in namespace] != fields[len(fields) - len(defaults) :]:
                raise TypeError(f"{name}: a field without a default follows one with a default")
            cls = collections.namedtuple(name, fields, defaults=defaults, module=namespace["__module__"])
            for key, value in namespace.items():
                if key in fields or key in ("__module__", "__annotations__"):
                    continue
                if key in ("__slots__", "__new__", "__init__", "_fields", "_make", "_replace", "_asdict"):
                    raise AttributeError(f"{name}: a NamedTuple class cannot set {key}")
                setattr(cls, key, value)
            cls.__annotations__ = annotations
            return cls

    _NamedTupleBase = type.__new__(_TupleClass, "NamedTuple", (), {})

    def NamedTuple(*args, **kwargs):
        """Only as a base class here (`class Point(NamedTuple): ...`), not called."""
        raise TypeError("stackcheck.lean_typing.NamedTuple is a base for a class statement only")

    NamedTuple.__mro_entries__ = lambda bases: (_NamedTupleBase,)
