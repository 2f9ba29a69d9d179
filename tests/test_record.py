"""`hotspot.record.record` behaves as `dataclass(frozen=True)` / `dataclass` where hotspot relies on
it: construction, defaults, repr, equality, hashing, frozenness, replace/asdict/fields, pickling and
orjson output (byte-identical)."""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import pickle
import pkgutil
from dataclasses import dataclass, field

import orjson
import pytest

import hotspot
from hotspot.record import record


def _pair(frozen: bool):
    """The same class body made by dataclasses and by record."""
    made = []
    for deco in ((dataclass(frozen=True), record) if frozen else (dataclass, record(frozen=False))):
        @deco
        class Row:
            name: str
            hits: list[int] = field(default_factory=list)
            share: float = 0.5
            note: str = field(default="", repr=False, compare=False)
            derived: int = field(default=7, init=False)
        made.append(Row)
    return made


@pytest.mark.parametrize("frozen", [True, False])
def test_same_behaviour_as_dataclasses(frozen):
    dc, rec = _pair(frozen)
    for args, kw in [(("a",), {}), (("b", [1, 2]), {"share": 0.25, "note": "x"})]:
        x, y = dc(*args, **kw), rec(*args, **kw)
        assert repr(x) == repr(y)
        assert orjson.dumps(x) == orjson.dumps(y)
        assert dataclasses.asdict(x) == dataclasses.asdict(y)
        assert [f.name for f in dataclasses.fields(x)] == [f.name for f in dataclasses.fields(y)]
        assert repr(dataclasses.replace(x, share=1.0)) == repr(dataclasses.replace(y, share=1.0))
    # default factories are per instance
    assert rec("a").hits is not rec("a").hits
    # equality: compared fields only, same class only
    assert rec("a", note="x") == rec("a", note="y")
    assert rec("a") != rec("b")
    assert rec("a") != dc("a") and rec("a").__eq__(object()) is NotImplemented
    with pytest.raises(TypeError):
        rec()
    with pytest.raises(TypeError):
        rec("a", derived=3)
    if frozen:
        assert hash(rec("a", (), note="x")) == hash(rec("a", (), note="y")) == hash(dc("a", ()))
        with pytest.raises(TypeError):
            hash(rec("a", [1]))  # a list field makes the instance unhashable, as in dataclasses
        r = rec("a")
        for attempt in (lambda: setattr(r, "name", "b"), lambda: delattr(r, "name"),
                        lambda: setattr(r, "other", 1)):
            with pytest.raises(dataclasses.FrozenInstanceError):
                attempt()
    else:
        r = rec("a")
        r.name = "b"
        assert r.name == "b"
        with pytest.raises(TypeError):
            hash(r)  # eq without frozen: unhashable, as @dataclass


@record
class Picklable:
    a: int
    b: tuple[int, ...] = ()


def test_pickles():
    p = Picklable(1, (2,))
    assert pickle.loads(pickle.dumps(p)) == p


def test_inheritance_post_init_and_mixing():
    @record(frozen=False)
    class Base:
        a: int
        b: int = 2

    @record(frozen=False)
    class Child(Base):
        c: int = 3

        def __post_init__(self) -> None:
            self.extra = self.a + self.c

    child = Child(1, c=5)
    assert (child.a, child.b, child.c, child.extra) == (1, 2, 5, 6)
    assert orjson.dumps(Child(1)) == b'{"a":1,"b":2,"c":3,"extra":4}'
    with pytest.raises(TypeError):
        @record  # frozen on a mutable base: refused, as dataclasses refuses it
        class Bad(Base):
            d: int = 0
    with pytest.raises(TypeError):
        @record
        class Order:
            a: int = 1
            b: int


def test_every_record_in_hotspot_is_a_dataclass_with_generated_methods():
    """Every module imports and every @record class looks like a dataclass to orjson and to
    dataclasses (what JSON output relies on)."""
    seen = 0
    mcp_installed = importlib.util.find_spec("mcp") is not None
    for mod in pkgutil.walk_packages(hotspot.__path__, "hotspot."):
        if mod.name.startswith("hotspot.skill.hotspot") or mod.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(mod.name)
        except ModuleNotFoundError as exc:
            # the MCP server needs the optional extra `hotspot[mcp]`; without it only the modules
            # that import the SDK are left out (with it, every module is imported)
            if mcp_installed or (exc.name or "").split(".")[0] != "mcp":
                raise
            continue
        for obj in vars(module).values():
            if isinstance(obj, type) and obj.__module__ == module.__name__ and \
                    "__record_frozen__" in obj.__dict__:
                seen += 1
                assert dataclasses.is_dataclass(obj)
                assert "__init__" in obj.__dict__ and "__eq__" in obj.__dict__
                assert (obj.__hash__ is None) != obj.__record_frozen__
    assert seen > 100


@pytest.mark.parametrize("frozen", [True, False])
def test_records_of_one_shape_share_one_compiled_init_renamed_per_class(frozen):
    deco = record if frozen else record(frozen=False)

    @deco
    class A:
        x: int
        y: list[int] = field(default_factory=list)
        z: str = "a"

    @deco
    class B:
        p: int
        q: list[int] = field(default_factory=list)
        r: str = "b"

    assert A.__init__.__code__.co_code == B.__init__.__code__.co_code   # one template
    assert B.__init__.__code__.co_varnames[:4] == ("self", "p", "q", "r")
    assert repr(B(r="z", p=1)) == "test_records_of_one_shape_share_one_compiled_init_renamed_per_class." \
        "<locals>.B(p=1, q=[], r='z')"
    assert orjson.dumps(B(2, [3])) == b'{"p":2,"q":[3],"r":"b"}'
    assert orjson.dumps(A(1)) == b'{"x":1,"y":[],"z":"a"}'
    assert B(1).q is not B(1).q
    with pytest.raises(TypeError, match="'p'"):
        B()
    with pytest.raises(TypeError, match="unexpected keyword argument 'p'"):
        A(p=1)  # B's names are B's alone
    with pytest.raises(TypeError):
        @deco
        class Self:
            self: int
