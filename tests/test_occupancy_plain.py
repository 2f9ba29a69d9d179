"""occupancy.json's fast path (hotspot/capture/occupancy_json.py `_plain_events`) takes exactly the
SE rows whose first six fields are non-negative ints with a 0/1 start flag, as checking each
value's type and sign does; everything else goes to the row-by-row reader."""

from __future__ import annotations

import enum

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hotspot.capture.occupancy_json import _plain_events, parse_occupancy
from hotspot.errors import InputError

_VALUE = st.one_of(st.integers(0, 3), st.integers(0, 1 << 70), st.integers(-5, -1), st.booleans(),
                   st.none(), st.floats(allow_nan=True), st.text(max_size=2),
                   st.lists(st.integers(0, 3), max_size=2), st.dictionaries(st.text(max_size=1), st.integers(), max_size=1))
_ROW = st.one_of(st.lists(st.one_of(st.integers(0, 9), _VALUE), min_size=5, max_size=8), _VALUE)


def _by_definition(rows):
    if not rows:
        return ((), (), (), (), (), ())
    if any(type(r) is not list or len(r) < 6 for r in rows):
        return None
    cols = tuple(tuple(r[k] for r in rows) for k in range(6))
    if any(type(v) is not int or v < 0 for col in cols for v in col):
        return None
    return cols if all(v in (0, 1) for v in cols[4]) else None


@settings(max_examples=400, deadline=None)
@given(rows=st.lists(_ROW, max_size=6))
def test_the_fast_path_takes_plain_rows_only(rows):
    # the values drawn are JSON's own types, so the decoded shortcut must agree too
    assert _plain_events(rows, decoded=False) == _plain_events(rows, decoded=True) == _by_definition(rows)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.lists(st.integers(0, 1 << 62), min_size=6, max_size=7), min_size=1, max_size=6),
       flag=st.integers(0, 1))
def test_decoded_plain_rows_take_the_fast_path(rows, flag):
    for r in rows:
        r[4] = flag
    decoded = orjson.loads(orjson.dumps(rows))
    assert _plain_events(decoded, decoded=True) == _by_definition(decoded) is not None


class _Flag(enum.Enum):  # orjson writes an Enum's int value as bare digits
    ON = 7


@pytest.mark.parametrize("field", [0, 4])
def test_python_objects_that_are_not_json_are_refused(field):
    """parse_occupancy given Python objects (not a decoder's output) names the bad field, as the
    per-value check does, for objects the digits shortcut would take (reviewer's reproducer)."""
    row = [5, 0, 0, 0, 1, 3]
    row[field] = _Flag.ON
    with pytest.raises(InputError, match=f"field {field} .* must be a non-negative integer"):
        parse_occupancy({"2": [row, [6, 0, 0, 0, 0, 3]]})
