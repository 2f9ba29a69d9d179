"""The column-wise fast path (hotspot/att/engine/groups.py) gives exactly what the per-record path
(wavepass.fold_wave_records) gives, on random waves including the cases it hands back."""

from __future__ import annotations

from dataclasses import asdict

from hypothesis import given, settings
from hypothesis import strategies as st

from hotspot.att.engine.groups import PENDING_WAVES, charge_windows, fold_wave_columns
from hotspot.att.engine.wavepass import WavePartial, fold_wave_records
from hotspot.att.waits.waitcnt_rules import build_tables
from hotspot.capture.model import CodeRow

# A small kernel: rows 0..7 with memory ops on both counters, waits and a barrier.
ISA = ["s_load_dwordx2 s[0:1], s[2:3], 0x0", "global_load_dword v1, v[2:3], off",
       "ds_read_b32 v2, v3", "s_waitcnt lgkmcnt(0)", "v_add_f32 v1, v1, v2",
       "s_waitcnt vmcnt(0)", "s_barrier", "s_cbranch_scc1 0"]
TABLES = build_tables([CodeRow(i, isa, "", None, 0, 0, 0, 0, 0, 0) for i, isa in enumerate(ISA)])


def _record_states(ins: list[list[int]], timeline: list[list[int]], begin: int) -> dict:
    part = WavePartial()
    fold_wave_records(part, ins, timeline, [], begin, begin, 0, 0, TABLES)
    return part.line_states


@st.composite
def waves(draw, weird: bool = False):
    n = draw(st.integers(1, 25))
    times = sorted(draw(st.lists(st.integers(0, 400), min_size=n, max_size=n)))
    lines = draw(st.lists(st.integers(0, len(ISA) - 1), min_size=n, max_size=n))
    ins = [[t, draw(st.sampled_from([2, 5, 7, 8, 9])), draw(st.integers(0, 30)),
            draw(st.integers(0, 12)), line] for t, line in zip(times, lines)]
    if weird:  # non-monotone window ends
        for rec in ins[::3]:
            rec[3] = draw(st.integers(0, 60))
    states = st.integers(-1, 6) if weird else st.integers(0, 4)
    cycles = st.integers(-3, 40) if weird else st.integers(0, 40)
    timeline = [[draw(states), draw(cycles)] for _ in range(draw(st.integers(0, 30)))]
    edges = draw(st.sampled_from([[], [[3, [[0, 0]]]], [[5, [[1, 0]]], [3, [[2, 0]]]]]))
    begin = draw(st.integers(-20, 50))
    return ins, timeline, edges, begin, begin + sum(c for _, c in timeline)


def _fold(ws, fast: bool) -> tuple[dict, int]:
    part = WavePartial()
    taken = 0
    for i, (ins, timeline, edges, begin, end) in enumerate(ws):
        if fast and fold_wave_columns(part, ins, timeline, edges, begin, end, 0, i % 2, TABLES):
            taken += 1
        else:
            fold_wave_records(part, ins, timeline, edges, begin, end, 0, i % 2, TABLES)
    return asdict(part.finish()), taken


@settings(max_examples=150, deadline=None)
@given(st.lists(waves(), min_size=1, max_size=6))
def test_fast_path_equals_per_record_path(ws):
    # repeat the waves so that sequence groups hold several of them
    fast, taken = _fold(ws + ws, True)
    assert taken == 2 * len(ws)  # plain waves all take the fast path
    assert fast == _fold(ws + ws, False)[0]


@settings(max_examples=40, deadline=None)
@given(st.lists(waves(), min_size=1, max_size=3))
def test_fast_path_equals_per_record_path_past_the_pending_batch(ws):
    many = ws * (PENDING_WAVES + 3)  # every sequence group settles its pending columns
    assert _fold(many, True)[0] == _fold(many, False)[0]


@settings(max_examples=150, deadline=None)
@given(st.lists(waves(weird=True), min_size=1, max_size=6))
def test_fast_path_equals_per_record_path_on_odd_waves(ws):
    assert _fold(ws, True)[0] == _fold(ws, False)[0]


def test_charge_windows_by_hand():
    # windows end at 10, 10 (empty) and 30; segments: exec 0-15, wait 15-40 (begin 0)
    charge = [0] * 15
    charge_windows([10, 10, 30], (2, 3), (15, 25), 0, charge)
    # instruction 0: exec 0-10; instruction 2: exec 10-15 and wait 15-40 (the last takes the rest)
    assert charge[2] == 10 and charge[5:10] == [0] * 5
    assert charge[10 + 2] == 5 and charge[10 + 3] == 25
    assert _record_states([[0, 2, 0, 10, 0], [5, 2, 0, 5, 1], [20, 2, 0, 10, 2]],
                          [[2, 15], [3, 25]], 0) == {0: [0, 0, 10, 0, 0], 2: [0, 0, 5, 25, 0]}


@settings(max_examples=60, deadline=None)
@given(st.lists(waves(), min_size=2, max_size=6), st.integers(0, 5), st.floats(0, 50))
def test_non_integer_values_switch_to_the_per_record_path(ws, at, value):
    ws = [([list(r) for r in ins], tl, e, b, end) for ins, tl, e, b, end in ws + ws]
    ws[at % len(ws)][0][0][2] = value  # a float stall, as JSON `4.5` would give
    fast, taken = _fold(ws, True)
    assert taken == at % len(ws)  # the waves before it took the fast path, none after
    assert fast == _fold(ws, False)[0]
