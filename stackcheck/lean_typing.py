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
            cls = _tuple_class(name, fields, defaults, namespace["__module__"])
            for key, value in namespace.items():
                if key in fields or key in ("__module__", "__annotations__"):
                    continue
                if key in ("__slots__", "__new__", "__init__", "_fields", "_make", "_replace", "_asdict"):
                    raise AttributeError(f"{name}: a NamedTuple class cannot set {key}")
                setattr(cls, key, value)
            cls.__annotations__ = annotations
            return cls

    # The constructors of named tuples of 1 to 12 fields, compiled with this module: a class takes the one of its
    # arity, its parameters renamed to its fields (collections.namedtuple compiles one for each class instead, by
    # eval: ~0.4M instructions a class, ~10 classes on a first `plan --want`; iperf27). Positional and keyword
    # arguments, defaults and the errors for a missing or an extra one are a function's own, as with its lambda.
    _tuple_new = tuple.__new__

    def _n1(_cls, a):
        return _tuple_new(_cls, (a,))

    def _n2(_cls, a, b):
        return _tuple_new(_cls, (a, b))

    def _n3(_cls, a, b, c):
        return _tuple_new(_cls, (a, b, c))

    def _n4(_cls, a, b, c, d):
        return _tuple_new(_cls, (a, b, c, d))

    def _n5(_cls, a, b, c, d, e):
        return _tuple_new(_cls, (a, b, c, d, e))

    def _n6(_cls, a, b, c, d, e, f):
        return _tuple_new(_cls, (a, b, c, d, e, f))

    def _n7(_cls, a, b, c, d, e, f, g):
        return _tuple_new(_cls, (a, b, c, d, e, f, g))

    def _n8(_cls, a, b, c, d, e, f, g, h):
        return _tuple_new(_cls, (a, b, c, d, e, f, g, h))

    def _n9(_cls, a, b, c, d, e, f, g, h, i):
        return _tuple_new(_cls, (a, b, c, d, e, f, g, h, i))

    def _n10(_cls, a, b, c, d, e, f, g, h, i, j):
        return _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j))

    def _n11(_cls, a, b, c, d, e, f, g, h, i, j, k):
        return _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j, k))

    def _n12(_cls, a, b, c, d, e, f, g, h, i, j, k, l):  # noqa: E741
        return _tuple_new(_cls, (a, b, c, d, e, f, g, h, i, j, k, l))

    _NEW = (None, _n1, _n2, _n3, _n4, _n5, _n6, _n7, _n8, _n9, _n10, _n11, _n12)
    _getter = getattr(collections, "_tuplegetter", None)

    def _tuple_class(name, fields, defaults, module):
        """collections.namedtuple(name, fields, defaults=defaults, module=module)'s class, its constructor taken from
        _NEW (tests/test_lean_typing_tuples.py holds the two alike); namedtuple's own for more than 12 fields."""
        if not 0 < len(fields) < len(_NEW):
            return collections.namedtuple(name, fields, defaults=defaults, module=module)
        for field in fields:
            if field.startswith("_") or field in fields[: fields.index(field)]:
                raise ValueError(f"{name}: field {field!r} starts with an underscore or is named twice")
        fields = tuple(fields)
        n = len(fields)
        listed = ", ".join(fields) + ("," if n == 1 else "")
        template = _NEW[n]
        code = template.__code__.replace(co_varnames=("_cls", *fields), co_name="__new__")
        if hasattr(code, "co_qualname"):  # (Python 3.11+; 3.10's CodeType.replace takes no co_qualname)
            code = code.replace(co_qualname=f"{name}.__new__")
        new = type(template)(code, template.__globals__, "__new__", None if defaults is None else tuple(defaults))
        new.__doc__ = f"Create new instance of {name}({listed})"
        shape = "(" + ", ".join(f"{f}=%r" for f in fields) + ")"

        def _make(cls, iterable):
            made = _tuple_new(cls, iterable)
            if len(made) != n:
                raise TypeError(f"Expected {n} arguments, got {len(made)}")
            return made

        def _replace(self, /, **changes):
            made = self._make(map(changes.pop, fields, self))
            if changes:
                raise ValueError(f"Got unexpected field names: {list(changes)!r}")
            return made

        def __repr__(self):
            return self.__class__.__name__ + shape % self

        def _asdict(self):
            return dict(zip(self._fields, self, strict=False))

        def __getnewargs__(self):
            return tuple(self)

        for method in (new, _make, _replace, __repr__, _asdict, __getnewargs__):
            method.__qualname__ = f"{name}.{method.__name__}"
        body = {
            "__doc__": f"{name}({listed})",
            "__slots__": (),
            "_fields": fields,
            "_field_defaults": dict(zip(fields[n - len(defaults) :], defaults, strict=True)) if defaults else {},
            "__new__": new,
            "_make": classmethod(_make),
            "_replace": _replace,
            "__repr__": __repr__,
            "_asdict": _asdict,
            "__getnewargs__": __getnewargs__,
            "__match_args__": fields,
            "__module__": module,
        }
        for index, field in enumerate(fields):
            doc = f"Alias for field number {index}"
            body[field] = _getter(index, doc) if _getter is not None else property(_itemgetter(index), doc=doc)
        return type(name, (tuple,), body)

    def _itemgetter(index):
        return lambda self: self[index]

    _NamedTupleBase = type.__new__(_TupleClass, "NamedTuple", (), {})

    def NamedTuple(*args, **kwargs):
        """Only as a base class here (`class Point(NamedTuple): ...`), not called."""
        raise TypeError("stackcheck.lean_typing.NamedTuple is a base for a class statement only")

    NamedTuple.__mro_entries__ = lambda bases: (_NamedTupleBase,)
