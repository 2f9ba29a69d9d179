"""`from_plain(cls, value)`: plain JSON (what orjson reads) back into the typed records it was
written from, by the records' type hints. Saved results (`analyze --format json`, the sweep's
files) are read through it once, at the boundary; everything after reads attributes.

Keys the record does not have are ignored (a saved `analyze --plan` dispatch carries the plan's
fields beside the analysis); a missing field takes its default, else it is an error. A value of
the wrong type is an InputError naming the file and the field (`dispatch.waves`).
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from enum import Enum
from pathlib import Path, PurePath
from typing import Any, ForwardRef, TypeVar, Union, cast

from hotspot.errors import InputError

T = TypeVar("T")
Decoder = Callable[[object, str], object]


class _Bad(Exception):
    def __init__(self, where: str, expected: str) -> None:
        super().__init__(where, expected)
        self.where = where
        self.expected = expected


def from_plain(cls: type[T], value: object, *, source: object = "<data>",
               hint: str = "pass an unedited hotspot --format json output") -> T:
    """`value` (plain JSON) as an instance of `cls` (a record, or any hint such as list[X])."""
    try:
        return cast(T, _decoder(cls)(value, ""))
    except _Bad as bad:
        where = bad.where.lstrip(".") or "(document)"
        what = "is missing" if bad.expected == "present" else f"is not {bad.expected}"
        raise InputError(f"{source}: field '{where}' {what}", hint,
                         code="bad-input") from None


_CACHE: dict[object, Decoder] = {}


def _decoder(hint: object) -> Decoder:
    try:
        return _CACHE[hint]
    except (KeyError, TypeError):
        pass
    dec = _build(hint)
    try:
        _CACHE[hint] = dec
    except TypeError:  # an unhashable hint: built each time
        pass
    return dec


def _is_json_any(hint: object) -> bool:
    """JsonValue/JsonObject (hotspot/result.py), object and Any: free-form JSON, kept as read."""
    if hint is Any or hint is object or isinstance(hint, ForwardRef):
        return True
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):  # the JsonValue union: scalars, lists and objects of it
        return bool in args and any(typing.get_origin(a) is list and _is_json_any(a) for a in args)
    if origin is list:
        return bool(args) and _is_json_any(args[0])
    if origin is dict:
        return len(args) == 2 and _is_json_any(args[1])
    return False


def _build(hint: object) -> Decoder:
    if _is_json_any(hint):
        origin = typing.get_origin(hint)
        if origin is dict:
            return _expect(dict, "an object")
        if origin is list:
            return _expect(list, "a list")
        return lambda v, w: v
    if hint is type(None):
        return _expect(type(None), "null")
    if hint is bool:
        return _expect(bool, "true or false")
    if hint is int:
        def dec_int(v: object, w: str) -> int:
            if type(v) is not int:
                raise _Bad(w, "an integer")
            return v
        return dec_int
    if hint is float:
        def dec_float(v: object, w: str) -> float:
            if v is None:  # orjson writes NaN and infinities as null
                return float("nan")
            if type(v) is float or type(v) is int:  # an int is a float (PEP 484), kept as written
                return v
            raise _Bad(w, "a number")
        return dec_float
    if hint is str:
        return _expect(str, "a string")
    if isinstance(hint, type) and issubclass(hint, str) and hasattr(hint, "from_text"):
        text = _expect(str, "a string")  # a string that is a typed value (capture/source.py SourceRef)
        return lambda v, w: hint.from_text(text(v, w))
    if isinstance(hint, type) and issubclass(hint, PurePath):
        return lambda v, w: Path(str(_expect(str, "a string")(v, w)))
    if isinstance(hint, type) and issubclass(hint, Enum):
        return _enum(hint)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _record(hint)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (Union, types.UnionType):
        return _union(args)
    if origin is list:
        return _sequence(list, args[0] if args else object)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return _sequence(tuple, args[0])
        return _fixed_tuple(args)
    if origin is dict:
        return _mapping(args[1] if len(args) == 2 else object)
    if origin is typing.Literal:
        allowed = set(args)

        def dec_literal(v: object, w: str) -> object:
            if v not in allowed or type(v) is bool and True not in allowed and False not in allowed:
                raise _Bad(w, "one of " + ", ".join(map(repr, args)))
            return v
        return dec_literal
    raise TypeError(f"from_plain: no decoder for {hint!r}")


def _expect(kind: type, expected: str) -> Decoder:
    def dec(v: object, w: str) -> object:
        if type(v) is not kind:
            raise _Bad(w, expected)
        return v
    return dec


def _enum(cls: type[Enum]) -> Decoder:
    def dec(v: object, w: str) -> Enum:
        try:
            return cls(v)
        except ValueError:
            raise _Bad(w, "one of " + ", ".join(repr(m.value) for m in cls)) from None
    return dec


def _union(args: tuple[object, ...]) -> Decoder:
    optional = type(None) in args
    rest = [a for a in args if a is not type(None)]
    decs = [_decoder(a) for a in rest]
    names = " or ".join(_name(a) for a in rest) + (" or null" if optional else "")
    # A union of records (a finding's evidence, one record per kind): an object decodes as the
    # member whose field names are exactly its keys. A record ignores unknown keys, so trying the
    # members in order could read one kind as another with fewer fields.
    records = len(rest) > 1 and all(isinstance(a, type) and dataclasses.is_dataclass(a) for a in rest)
    by_keys = {frozenset(f.name for f in dataclasses.fields(cast(type, a))): d
               for a, d in zip(rest, decs)} if records else {}
    if records:
        names = ("an object with the fields of one of " + ", ".join(cast(type, a).__name__ for a in rest)
                 + (" or null" if optional else ""))

    def dec(v: object, w: str) -> object:
        if v is None and optional:
            return None
        if len(decs) == 1:
            return decs[0](v, w)
        if records:
            exact = by_keys.get(frozenset(v)) if type(v) is dict else None
            if exact is None:
                raise _Bad(w, names)
            return exact(v, w)
        for d in decs:
            try:
                return d(v, w)
            except _Bad:
                continue
        raise _Bad(w, names)
    return dec


def _name(hint: object) -> str:
    simple = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
    if hint in simple:
        return simple[hint]
    origin = typing.get_origin(hint)
    if origin in (list, tuple):
        return "a list"
    return "an object"


def _sequence(kind: type, item: object) -> Decoder:
    dec_item = _decoder(item)

    def dec(v: object, w: str) -> object:
        if type(v) is not list:
            raise _Bad(w, "a list")
        return kind(dec_item(x, f"{w}[{i}]") for i, x in enumerate(v))
    return dec


def _fixed_tuple(args: tuple[object, ...]) -> Decoder:
    decs = [_decoder(a) for a in args]

    def dec(v: object, w: str) -> tuple[object, ...]:
        if type(v) is not list or len(v) != len(decs):
            raise _Bad(w, f"a list of {len(decs)}")
        return tuple(d(x, f"{w}[{i}]") for i, (d, x) in enumerate(zip(decs, v)))
    return dec


def _mapping(item: object) -> Decoder:
    dec_item = _decoder(item)

    def dec(v: object, w: str) -> dict[str, object]:
        if type(v) is not dict:
            raise _Bad(w, "an object")
        return {k: dec_item(x, f"{w}.{k}") for k, x in v.items()}
    return dec


def _record(cls: type) -> Decoder:
    # JsonValue's recursive forward refs resolve to `object` (kept as read) wherever they occur;
    # each field's other names in the module of the class that declares it (no globalns given: a
    # base record from another module has its own imports)
    hints = typing.get_type_hints(cls, None, {"JsonValue": object, "JsonObject": dict[str, object]})
    plan: list[tuple[str, Decoder, bool, Callable[[], object] | None]] = []
    # init=False fields with a plain default: set after __init__ when the document has them (a
    # record writes them only once they are set, e.g. KernelResources.lds_isa)
    late: list[tuple[str, Decoder]] = []
    for f in dataclasses.fields(cls):
        if not f.init:
            if f.default_factory is dataclasses.MISSING:
                late.append((f.name, _LazyDecoder(hints[f.name])))
            continue
        if f.default is not dataclasses.MISSING:
            default = f.default
            make: Callable[[], object] | None = lambda d=default: d  # noqa: E731
        elif f.default_factory is not dataclasses.MISSING:
            make = f.default_factory
        else:
            make = None
        plan.append((f.name, _LazyDecoder(hints[f.name]), make is None, make))

    def dec(v: object, w: str) -> object:
        if type(v) is not dict:
            raise _Bad(w, "an object")
        values = {}
        for name, field_dec, required, make in plan:
            if name in v:
                values[name] = field_dec(v[name], f"{w}.{name}")
            elif required:
                raise _Bad(f"{w}.{name}", "present")
            else:
                values[name] = make()  # type: ignore[misc]  # not required: a default maker
        obj = cls(**values)
        for name, field_dec in late:
            if name in v:
                object.__setattr__(obj, name, field_dec(v[name], f"{w}.{name}"))  # frozen too
        return obj
    return dec


class _LazyDecoder:
    """A field's decoder built on first use: records may refer to themselves (a tree)."""

    __slots__ = ("hint", "dec")

    def __init__(self, hint: object) -> None:
        self.hint = hint
        self.dec: Decoder | None = None

    def __call__(self, v: object, w: str) -> object:
        if self.dec is None:
            self.dec = _decoder(self.hint)
        return self.dec(v, w)
