"""`plain` (hotspot/result.py) is `orjson.loads(dumps(x))` converted piecewise (issue 19): the same
value, whatever the shape."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

import orjson
import pytest

import hotspot.result as result_mod
from hotspot.record import record
from hotspot.result import dumps, plain
from tests.conftest import corpus_path


@record
class Row:
    n: int
    name: str
    share: float
    tags: tuple[str, ...] = ()


@record
class Flat:
    n: int
    name: str | None
    share: float
    hot: bool


@record(frozen=False)
class Table:
    rows: list[Row]
    by_id: dict[int, list[int]]
    nested: dict[str, object] = field(default_factory=dict)
    path: Path = Path("/x")


def _same(obj: object) -> None:
    want = orjson.loads(dumps(obj, pretty=False))
    got = plain(obj)
    assert got == want
    assert orjson.dumps(got) == orjson.dumps(want)  # same order of keys and items


@pytest.mark.parametrize("long", [3, 17, 600])
def test_plain_is_the_round_trip(monkeypatch, long):
    monkeypatch.setattr(result_mod, "PLAIN_BYTES", 300)
    monkeypatch.setattr(result_mod, "PLAIN_BATCH", 7)
    rows = [Row(i, f"r{i}", i / 3, ("a",) * (i % 3)) for i in range(long)]
    rows[1] = Row(1, "nan", float("nan"))
    t = Table(rows, {i: list(range(i % 4)) for i in range(long)},
              {"inner": Table(rows[:5], {}), "many": rows, "set": {3, 1, 2}, "t": (1, (2, 3))})
    object.__setattr__(t, "_private", [1] * 100)  # orjson leaves `_` attributes out
    t.extra = "kept"  # a non-field attribute orjson writes
    flat = [Flat(i, None if i % 4 else f"f{i}", (float("nan"), float("-inf"), -0.0, i / 7)[i % 4],
                 i % 3 == 0) for i in range(long)]
    for obj in (t, [t, t], (t,), {"a": t, "b": [rows]}, {1: rows}, rows, [], {}, None, 1.5, "s",
                flat, {"flat": flat, "mixed": flat + rows}):
        _same(obj)


def test_plain_refuses_what_orjson_refuses(monkeypatch):
    monkeypatch.setattr(result_mod, "PLAIN_BYTES", 10)
    bad = [Flat(1 << 70, "", 0.0, False)] * 5
    with pytest.raises(orjson.JSONEncodeError):
        orjson.loads(dumps(bad, pretty=False))
    with pytest.raises(orjson.JSONEncodeError):
        plain(bad)
    # a string that is not UTF-8 (a lone surrogate) is written escaped by both, never refused
    odd = [Flat(1, "\ud800", 0.0, False)] * 5
    assert plain(odd) == orjson.loads(dumps(odd, pretty=False))
    assert plain(odd)[0]["name"] == "\\ud800"


@pytest.mark.parametrize("path", [corpus_path("att", "gfx950", "vec_add"),
                                  corpus_path("att", "gfx942", "ck_bmm")])
def test_plain_of_analyses(corpus, path, monkeypatch):
    from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
    from hotspot.plan.entry_point import analyze

    monkeypatch.setattr(result_mod, "PLAIN_BYTES", 200)
    monkeypatch.setattr(result_mod, "PLAIN_BATCH", 5)
    res = analyze(path, AnalyzeOptions(topk=0, detail=True, all_dispatches=True, plan=PLAN_ATTACHED))
    _same(res.data)
