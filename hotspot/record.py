"""`record`: a dataclass that costs a third to import.

`@dataclass(frozen=True)` compiles six methods with six `exec` calls when the class is created
(~1.2 ms each on Python 3.11); hotspot defines ~140 of them and `analyze` imports ~85, which was
~100 ms of every command. `@record` keeps what hotspot relies on, with at most one `exec` per
class (one per distinct `__init__` shape: classes of one shape share its compiled code, renamed):

- a real dataclass for `dataclasses.fields`/`asdict`/`replace` and for orjson, which serializes
  dataclasses natively (instance `__dict__` in field order: `__init__` sets fields in the same
  order as dataclasses does, so JSON output is byte-identical);
- `__init__` with defaults, `default_factory`, `field(init=False)` and `__post_init__`;
  `__repr__`, `__eq__` (fields with `compare=True`, same class only) as dataclasses writes them;
- frozen (the default): `__hash__` over the compared fields and a `__setattr__`/`__delattr__`
  raising `dataclasses.FrozenInstanceError`; `record(frozen=False)`: mutable and unhashable, as
  `@dataclass` is.
Not supported (raises TypeError at class creation, so nothing silently differs): `InitVar`,
`KW_ONLY`, `ClassVar` fields, `order`, `slots`, a base that is a plain dataclass, a field named
`self`.
Fields of a base `record` come first, as with dataclasses.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from operator import attrgetter
from reprlib import recursive_repr
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any, TypeVar, overload

T = TypeVar("T", bound=type)

if TYPE_CHECKING:  # any Python the checker targets
    from typing_extensions import dataclass_transform
elif sys.version_info >= (3, 11):
    from typing import dataclass_transform
else:  # Python 3.10: the marker only tells a type checker what `record` makes; nothing at run time
    def dataclass_transform(**_: object) -> Callable[[Callable[..., object]], Callable[..., object]]:
        return lambda decorator: decorator

_MISSING = dataclasses.MISSING


@overload
def record(cls: T) -> T: ...
@overload
def record(*, frozen: bool = True) -> Callable[[T], T]: ...


# A type checker sees a record's fields and __init__ as those of a frozen dataclass (mutable with
# `frozen=False`), with dataclasses.field as the field specifier.
@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Any = None, *, frozen: bool = True) -> Any:
    """`@record` / `@record(frozen=False)`: see the module doc."""
    def wrap(c: T) -> T:
        return _build(c, frozen)
    return wrap if cls is None else wrap(cls)


def _build(cls: T, frozen: bool) -> T:
    for base in cls.__mro__[1:-1]:
        if dataclasses.is_dataclass(base) and getattr(base, "__record_frozen__", None) is not frozen:
            # as dataclasses: frozen and mutable do not mix in one hierarchy
            raise TypeError(f"record {cls.__qualname__}: base {base.__qualname__} is not a "
                            f"record(frozen={frozen})")
    # The dataclass machinery without its generated methods: fields, __dataclass_fields__,
    # __match_args__ and default values as class attributes. (A class without a docstring gets
    # one from inspect.signature there, a third of its cost: give it the name first.)
    if cls.__doc__ is None:
        cls.__doc__ = cls.__name__
    dataclasses.dataclass(cls, init=False, repr=False, eq=False)
    fields: list[dataclasses.Field[Any]] = list(vars(cls)["__dataclass_fields__"].values())
    for f in fields:
        if f._field_type is not dataclasses._FIELD:  # type: ignore[attr-defined]  # no public way to tell ClassVar/InitVar
            raise TypeError(f"record {cls.__qualname__}.{f.name}: ClassVar/InitVar fields are not supported")
        if f.kw_only:
            raise TypeError(f"record {cls.__qualname__}.{f.name}: keyword-only fields are not supported")

    env: dict[str, Any] = {"__MISSING": _MISSING, "__object_setattr": object.__setattr__}
    kinds, names, defaults = [], [], []
    for i, f in enumerate(fields):
        if f.default_factory is not _MISSING:
            env[f"__factory_{i}"] = f.default_factory
            kinds.append(_FACTORY_ARG if f.init else _FACTORY)
            if f.init:
                defaults.append(_MISSING)
        elif f.init:
            kinds.append(_ARG)
            if f.default is not _MISSING:
                defaults.append(f.default)
            elif defaults:
                raise TypeError(f"non-default argument {f.name!r} follows default argument")
        else:
            # init=False with a plain default: not set, the class attribute serves (as
            # dataclasses; orjson then leaves it out of the JSON object, so must we)
            kinds.append(_SKIP)
        names.append(f.name)

    # the only compiled method (instance creation is hot: code rows, waves); the others are
    # closures over the field names, created without compiling anything
    init = _init_code(tuple(kinds), frozen, hasattr(cls, "__post_init__"), tuple(names))
    ns: dict[str, Any] = {"__init__": FunctionType(init, env, "__init__", tuple(defaults) or None)}
    ns.update(_methods(cls, fields, frozen))
    qual = cls.__qualname__
    for name, fn in ns.items():
        fn.__qualname__ = f"{qual}.{name}"
        fn.__module__ = cls.__module__
        if name == "__init__" or name not in cls.__dict__:
            setattr(cls, name, fn)
    setattr(cls, "__record_frozen__", frozen)  # noqa: B010 - a class attribute only records add
    if not frozen and "__hash__" not in cls.__dict__:
        cls.__hash__ = None  # type: ignore[assignment]  # eq without frozen: unhashable, as @dataclass
    return cls


# What a field's line in __init__ does: set the argument, set the argument or a new default from
# the factory, set a new default from the factory (init=False), nothing (init=False, plain default).
_ARG, _FACTORY_ARG, _FACTORY, _SKIP = range(4)
# Compiled __init__ per shape (the field kinds, frozen, __post_init__), with placeholder names that
# are renamed per class: records share a few dozen shapes, and renaming a code object costs
# microseconds where compiling one costs ~0.3 ms.
_SHAPES: dict[tuple[tuple[int, ...], bool, bool], CodeType] = {}


def _placeholder(i: int) -> str:
    return f"__record_field_{i}__"


def _init_code(kinds: tuple[int, ...], frozen: bool, post_init: bool, names: tuple[str, ...]) -> CodeType:
    key = (kinds, frozen, post_init)
    code = _SHAPES.get(key)
    if code is None:
        code = _SHAPES[key] = _compile_init(kinds, frozen, post_init)
    bad = [n for n in names if n == "self" or n.startswith("__record_field_")]
    if bad:  # `self` would be a duplicate argument, as compiling it says
        raise TypeError(f"record field names not supported: {bad}")
    rename = {_placeholder(i): name for i, name in enumerate(names)}
    return code.replace(co_varnames=tuple(rename.get(n, n) for n in code.co_varnames),
                        co_names=tuple(rename.get(n, n) for n in code.co_names),
                        co_consts=tuple(rename.get(c, c) if type(c) is str else c for c in code.co_consts))


def _compile_init(kinds: tuple[int, ...], frozen: bool, post_init: bool) -> CodeType:
    params, body = [], []
    for i, kind in enumerate(kinds):
        name = _placeholder(i)
        set_to: Callable[[str], str] = (lambda v: f"__object_setattr(self, {name!r}, {v})") if frozen else (
            lambda v: f"self.{name} = {v}")
        if kind == _FACTORY_ARG:
            params.append(name)
            body.append(set_to(f"__factory_{i}() if {name} is __MISSING else {name}"))
        elif kind == _FACTORY:
            body.append(set_to(f"__factory_{i}()"))
        elif kind == _ARG:
            params.append(name)
            body.append(set_to(name))
    if post_init:
        body.append("self.__post_init__()")
    ns: dict[str, FunctionType] = {}
    exec("\n".join([f"def __init__(self, {', '.join(params)}):", *(f"    {line}" for line in
                                                                 (body or ["pass"]))]), {}, ns)
    return ns["__init__"].__code__


def _methods(cls: type[Any], fields: list[dataclasses.Field[Any]], frozen: bool) -> dict[str, Callable[..., Any]]:
    """__repr__, __eq__ and (frozen) __hash__, __setattr__, __delattr__ as dataclasses writes them."""
    shown = tuple(f.name for f in fields if f.repr)
    compared = [f.name for f in fields if f.compare]
    hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]

    def getter(names: list[str]) -> Callable[[object], tuple[object, ...]]:
        if not names:
            return lambda obj: ()
        get = attrgetter(*names)
        return (lambda obj: (get(obj),)) if len(names) == 1 else get

    key, hkey = getter(compared), getter(hashed)

    @recursive_repr()
    def __repr__(self: object) -> str:
        inner = ", ".join(f"{n}={getattr(self, n)!r}" for n in shown)
        return f"{self.__class__.__qualname__}({inner})"

    def __eq__(self: object, other: object) -> bool:
        if other.__class__ is self.__class__:
            return key(self) == key(other)
        return NotImplemented

    out: dict[str, Callable[..., Any]] = {"__repr__": __repr__, "__eq__": __eq__}
    if not frozen:
        return out
    names = vars(cls)["__dataclass_fields__"]
    base_setattr, base_delattr = super(cls, cls).__setattr__, super(cls, cls).__delattr__

    def __hash__(self: object) -> int:
        return hash(hkey(self))

    def __setattr__(self: object, name: str, value: object) -> None:
        if self.__class__ is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
        base_setattr(self, name, value)

    def __delattr__(self: object, name: str) -> None:
        if self.__class__ is cls or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        base_delattr(self, name)

    out.update(__hash__=__hash__, __setattr__=__setattr__, __delattr__=__delattr__)
    return out
