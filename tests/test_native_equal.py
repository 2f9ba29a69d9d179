"""What the native pass computes beyond the fold (issue 37, point 6) equals its pure-Python twin:
the issue sums the C fold adds (hotspot/att/issue_share.py), the barrier episodes
(hotspot/att/barriers.py) and the achieved occupancy (hotspot/arch/achieved.py), on random inputs
(hypothesis) and on the real-profiler corpus. Equal means equal floats, not close ones."""

from __future__ import annotations

import tempfile
from array import array
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hotspot.arch.achieved import achieved_from_columns, achieved_python
from hotspot.att.barriers import BARRIER_RELEASE_TOLERANCE, _episodes, barrier_stats, flat_episodes
from hotspot.att.engine import groups as wave_groups
from hotspot.att.engine.native import PURE_PYTHON_ENV, ScannedWave
from hotspot.att.engine.wavepass import PassOptions, describe, run_chunk_open
from hotspot.att.issue_share import IssueWeights
from hotspot.att.waits.waitcnt_rules import ROLE_BARRIER, ROLE_MEM, ROLE_WAIT, build_tables
from hotspot.capture.codejson import read_code_json
from hotspot.capture.layout import open_dispatch
from hotspot.capture.occupancy_json import read_occupancy_json
from hotspot.errors import InputError
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch
from tests.conftest import corpus_path, run_cli
from tests.test_wavescan import mod  # noqa: F401  (fixture)


def _dispatch(root: Path, waves: int, variants: int, trips: int, seed: int) -> Path:
    spec = DispatchSpec(waves=waves, layout=Layout(ses=(0, 1), simds=2, slots=2, other_cus=(0,)),
                        variants=variants, program=InstructionMix(loop_trips=trips))
    return make_dispatch(root, spec, seed=seed)


def _other_edges(path: Path) -> None:
    """Decoder edges that are not the reconstruction's: the wave goes to the Python path."""
    doc = orjson.loads(path.read_bytes())
    w = doc["wave"]
    w["waitcnt"] = [[line, [[max(1, p[0] - 1), 0] for p in prods]] for line, prods in w["waitcnt"]]
    path.write_bytes(orjson.dumps(doc))


def _issue(d: Path, monkeypatch: pytest.MonkeyPatch, pure: bool, split: int = 0) -> tuple | None:
    """The issue accumulator of one pass over `d` (in two runs into one partial when `split`)."""
    if pure:
        monkeypatch.setenv(PURE_PYTHON_ENV, "1")
    else:
        monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
    rows = read_code_json(d / "code.json").rows
    opts = PassOptions(build_tables(rows), issue=IssueWeights(rows, None))
    descs = describe(open_dispatch(d).wave_files)
    part = run_chunk_open(descs[:split] if split else descs, opts)
    if split:
        part = run_chunk_open(descs[split:], opts, part=part)
    part.finish()
    acc = part.issue
    if acc is None or not acc.waves:  # no wave read (the native pass makes an empty accumulator)
        return None
    return acc.waves, acc.sums, acc.spans, acc.wave_time


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 1000), waves=st.integers(2, 30), variants=st.integers(1, 3),
       trips=st.integers(1, 4), split=st.integers(0, 30), spill=st.sampled_from([None, 1, 3]),
       python_path=st.sets(st.integers(0, 29), max_size=4))
def test_issue_sums_of_the_c_fold_equal_the_python_ones(mod, monkeypatch, seed, waves, variants, trips,
                                                        split, spill, python_path):
    """Waves folded in C, waves handed back to the Python path among them, a partial continued
    by a second run (C's sums seeded with the partial's) and spills: the same floats as the pure
    pass adds wave by wave."""
    with tempfile.TemporaryDirectory() as tmp:
        d = _dispatch(Path(tmp), waves, variants, trips, seed)
        files = sorted(d.glob("se*_sm*_sl*_wv*.json"))
        for i in python_path:
            if i < len(files):
                _other_edges(files[i])
        split = min(split, len(files) - 1)
        pure = _issue(d, monkeypatch, True)
        with monkeypatch.context() as m:
            if spill is not None:
                m.setattr(wave_groups, "FOLD_SPILL_WAVES", spill)
            assert _issue(d, monkeypatch, False, split) == pure
        assert pure is not None and pure[0] == len(files)


# Corpus dispatches up to this many bytes of wave files, and the smallest one above: the pure pass
# over the large replicates (tens of 270 KB waves each) would take most of a minute.
CORPUS_ISSUE_BYTES = 5_000_000


def test_issue_sums_equal_on_the_corpus(mod, corpus, monkeypatch):
    def size(d: Path) -> int:
        return sum(p.stat().st_size for p in d.glob("se*_sm*_sl*_wv*.json"))

    dirs = sorted((size(p.parent), p.parent) for p in corpus_path("att").rglob("code.json"))
    small = [d for n, d in dirs if n <= CORPUS_ISSUE_BYTES]
    large = [d for n, d in dirs if n > CORPUS_ISSUE_BYTES]
    checked = 0
    for d in small + large[:1]:
        try:
            pure = _issue(d, monkeypatch, True)
        except InputError:  # the corpus's deliberately broken captures
            continue
        assert _issue(d, monkeypatch, False) == pure, d
        checked += pure is not None
    assert checked >= 10


# --- barrier episodes ----------------------------------------------------------------------------

_TIME = st.integers(0, 5000)


@settings(max_examples=200, deadline=None)
@given(pairs=st.lists(st.tuples(_TIME, st.integers(0, 200)), max_size=60))
def test_barrier_episodes_in_c_equal_the_python_twin(mod, pairs):
    flat = [v for arrival, wait in pairs for v in (arrival, arrival + wait)]
    n, stall, spreads, sizes = mod.episodes(array("q", flat), BARRIER_RELEASE_TOLERANCE)
    assert (n, stall, list(memoryview(spreads).cast("q")), list(memoryview(sizes).cast("q"))) == \
        tuple(flat_episodes(flat))


@settings(max_examples=200, deadline=None)
@given(runs=st.lists(st.lists(st.tuples(_TIME, st.integers(0, 200)), max_size=30), max_size=70))
def test_barrier_episodes_of_ascending_runs_in_c_equal_the_python_twin(mod, runs):
    """Pairs in ascending runs of releases (as wave files give them; C merges up to 64 runs,
    sorts more with qsort), ties in release and whole pairs repeated included."""
    flat = []
    for run in runs:
        for arrival, wait in sorted(run, key=lambda t: (t[0] + t[1], t[0])):
            flat += [arrival, arrival + wait]
    n, stall, spreads, sizes = mod.episodes(array("q", flat), BARRIER_RELEASE_TOLERANCE)
    assert (n, stall, list(memoryview(spreads).cast("q")), list(memoryview(sizes).cast("q"))) == \
        tuple(flat_episodes(flat))


def test_barrier_episodes_beyond_int64_sums_fall_back_to_python(mod):
    big = (1 << 62) + 5
    flat = array("q", [0, big, 1, big + 1, 2, big + 2])  # the stall sum leaves int64
    assert mod.episodes(flat, BARRIER_RELEASE_TOLERANCE) is None
    assert _episodes(mod, flat) == flat_episodes(flat)
    assert flat_episodes(flat)[1] == 3 * big  # as Python integers


@settings(max_examples=40, deadline=None)
@given(keys=st.dictionaries(st.tuples(st.integers(0, 1), st.integers(0, 2), st.sampled_from([7, 9])),
                            st.lists(st.tuples(_TIME, st.integers(0, 60)), min_size=1, max_size=20),
                            max_size=6))
def test_barrier_stats_native_equal_pure(mod, keys):
    barriers = {k: array("q", [v for a, w in pairs for v in (a, a + w)]) for k, pairs in keys.items()}
    native_stats = barrier_stats(barriers, {})
    with pytest.MonkeyPatch.context() as m:
        m.setenv(PURE_PYTHON_ENV, "1")
        assert barrier_stats(barriers, {}) == native_stats


# --- achieved occupancy --------------------------------------------------------------------------

_EVENTS = st.lists(st.tuples(st.integers(0, 400), st.integers(0, 2), st.integers(0, 1), st.integers(0, 2),
                             st.integers(0, 1), st.sampled_from([1, 2])), max_size=40)


def _columns(events: list[tuple[int, ...]]) -> tuple:
    return tuple(tuple(e[k] for e in events) for k in range(6)) if events else ((),) * 6


@settings(max_examples=300, deadline=None)
@given(by_se=st.dictionaries(st.integers(0, 3), _EVENTS, max_size=3),
       wanted=st.sampled_from([None, {1}, {2}, {3}, {1, 2}]))
def test_achieved_occupancy_in_c_equals_the_python_twin(mod, by_se, wanted):
    """Unmatched starts and ends, slots refilled at the same cycle, SEs with no event of the
    selected kernels, kernel filters: the same result, floats included."""
    cols = {se: _columns(ev) for se, ev in by_se.items()}
    assert all(mod.occupancy_se(*c, wanted) is not None for c in cols.values())  # C computes it
    assert achieved_from_columns(cols, wanted, mod) == achieved_python(cols, wanted)


@settings(max_examples=300, deadline=None)
@given(by_se=st.dictionaries(st.integers(0, 3), _EVENTS, max_size=3),
       wanted=st.sampled_from([None, {1}, {2}, {1, 2}]), crowd=st.integers(0, 3))
def test_achieved_occupancy_of_events_in_time_order_in_c_equals_the_python_twin(mod, by_se, wanted,
                                                                                crowd):
    """Events in time order, as a capture's occupancy.json holds them (C buckets them by slot
    instead of sorting them all), ends and starts at one time in any order, and many events at one
    time (C's insertion pass gives up and sorts)."""
    cols = {}
    for se, ev in by_se.items():
        ev = sorted(ev, key=lambda e: e[0])
        if crowd and ev:  # a crowd at one time, starts before ends in file order
            ev += [(ev[-1][0], cu, simd, slot, 1 - k // 18 % 2, 1) for k, (cu, simd, slot) in
                   enumerate([(c, s, sl) for c in range(3) for s in range(2) for sl in range(3)] * 30 * crowd)]
        cols[se] = _columns(ev)
    assert achieved_from_columns(cols, wanted, mod) == achieved_python(cols, wanted)


def test_achieved_occupancy_values_c_declines_go_to_python(mod):
    cols = {0: ((1, 1 << 41), (0, 0), (0, 0), (0, 0), (1, 0), (1, 1))}  # a time beyond 2**40
    assert mod.occupancy_se(*cols[0], None) is None
    got = achieved_from_columns(cols, None, mod)
    assert got == achieved_python(cols, None)
    assert got is not None and got.window_cycles == {0: (1 << 41) - 1}


def test_achieved_occupancy_equal_on_the_corpus(mod, corpus):
    checked = 0
    for path in sorted(corpus_path("att").rglob("occupancy.json")):
        try:
            trace = read_occupancy_json(path)
        except InputError:  # the corpus's deliberately broken captures
            continue
        for wanted in (None, set(trace.dispatches) or None):
            assert achieved_from_columns(trace.columns_by_se, wanted, mod) == \
                achieved_python(trace.columns_by_se, wanted), path
        checked += 1
    assert checked >= 10


# --- waitcnt read lazily by the C fold -----------------------------------------------------------

def _both_ways(d: Path) -> list[tuple[int, str, str]]:
    outs = []
    for pure in (True, False):
        with pytest.MonkeyPatch.context() as m:
            if pure:
                m.setenv(PURE_PYTHON_ENV, "1")
            else:
                m.delenv(PURE_PYTHON_ENV, raising=False)
            res = run_cli("analyze", "--dir", str(d), "--format", "json")
            outs.append((res.exit_code, res.stdout, res.stderr))
    return outs


def _edit_waitcnt(path: Path, change) -> None:
    """Rewrite the waitcnt text of a wave file as bytes (the form the scanner sees)."""
    data = path.read_bytes()
    start = data.index(b'"waitcnt":') + len(b'"waitcnt":')
    depth, end = 0, start
    for end in range(start, len(data)):
        depth += {ord("["): 1, ord("]"): -1}.get(data[end], 0)
        if depth == 0:
            break
    path.write_bytes(data[:start] + change(data[start:end + 1]) + data[end + 1:])


@settings(max_examples=10, deadline=None)
@given(edits=st.lists(st.tuples(st.integers(0, 11), st.sampled_from(
    ["spaces", "comma", "leading-zero", "minus", "drop-bracket", "empty"])), min_size=1, max_size=3),
       seed=st.integers(0, 100))
def test_waitcnt_text_other_than_the_groups_reads_as_orjson_does(mod, edits, seed):
    """The C fold compares a wave's waitcnt text with its group's before parsing it: edges
    written differently (spaces), not JSON (a doubled comma, a leading zero, a lone minus, a
    missing bracket) or empty, between waves folded in C: the same analysis, or the same error,
    as the pure path."""
    changes = {
        "spaces": lambda t: t.replace(b",", b", ").replace(b"[", b"[ "),
        "comma": lambda t: t.replace(b",", b",,", 1),
        "leading-zero": lambda t: t.replace(b"[", b"[0", 3),
        "minus": lambda t: t.replace(b",", b",-", 1),
        "drop-bracket": lambda t: t[:-1] + b" ",
        "empty": lambda t: b"[]",
    }
    with tempfile.TemporaryDirectory() as tmp:
        d = _dispatch(Path(tmp), 12, 2, 2, seed)
        files = sorted(d.glob("se*_sm*_sl*_wv*.json"))
        for index, kind in edits:
            _edit_waitcnt(files[index], changes[kind])
        pure, fused = _both_ways(d)
        assert fused == pure


# The vm/lgkm replay of a sequence group (hotspot/att/waits/replay.py `reconstruct`) in C.
_ROLE_ROW = st.one_of(
    st.tuples(st.just(ROLE_MEM), st.integers(0, 3), st.booleans()),      # mask (VM | LGKM), scalar
    st.tuples(st.just(ROLE_WAIT), st.integers(-1, 4), st.integers(-1, 4)),  # vm N, lgkm N
    st.tuples(st.just(ROLE_BARRIER), st.just(0), st.just(0)))


@settings(max_examples=300, deadline=None)
@given(rows=st.dictionaries(st.integers(0, 40), _ROLE_ROW, max_size=25),
       lines=st.lists(st.integers(-2, 45), max_size=200))
def test_replay_in_c_equals_reconstruct(mod, rows, lines):
    from hotspot.att.waits.waitcnt_rules import LineTables
    from hotspot.att.waits.replay import reconstruct

    tables = LineTables(
        roles={line: role for line, (role, _, _) in rows.items()},
        pushes={line: a for line, (role, a, _) in rows.items() if role == ROLE_MEM},
        scalar=frozenset(line for line, (role, _, b) in rows.items() if role == ROLE_MEM and b),
        waits={line: (a, b) for line, (role, a, b) in rows.items() if role == ROLE_WAIT})
    table = wave_groups.replay_table(tables)
    assert table is not None
    column = array("q", lines)
    assert mod.replay(column, table) == reconstruct(lines, tables)
    assert wave_groups.replayed(column, tables) == reconstruct(lines, tables)


def test_replay_tables_c_cannot_hold_go_to_python(mod):
    from hotspot.att.waits.waitcnt_rules import LineTables

    far = LineTables(roles={wave_groups.REPLAY_TABLE_MAX_LINES: ROLE_WAIT}, pushes={},
                     scalar=frozenset(), waits={wave_groups.REPLAY_TABLE_MAX_LINES: (0, 0)})
    assert wave_groups.replay_table(far) is None
    no_mask = LineTables(roles={3: ROLE_MEM}, pushes={}, scalar=frozenset(), waits={})
    assert wave_groups.replay_table(no_mask) is None
    # the Python replay then says what it always said (a KeyError for the missing mask)
    with pytest.raises(KeyError):
        wave_groups.replayed(array("q", [1, 3]), no_mask)


def test_replay_equal_on_the_corpus(mod, corpus):
    from hotspot.att.waits.replay import reconstruct

    checked = 0
    for d in (corpus_path("att", "gfx950", "vec_add"),
              corpus_path("att", "gfx950", "flash_attn_replicates", "big",
                          "ui_output_agent_25171_dispatch_44")):
        tables = build_tables(read_code_json(d / "code.json").rows)
        table = wave_groups.replay_table(tables)
        assert table is not None
        for wf in open_dispatch(d).wave_files[:8]:
            scanned = mod.scan(Path(wf.path).read_bytes())
            if scanned is None:
                continue
            lines = array("q", ScannedWave(*scanned).lines)
            expected = reconstruct(lines.tolist(), tables)
            assert mod.replay(lines, table) == expected
            checked += bool(expected[1])
    assert checked  # some waves had waits to replay


def test_the_pure_python_pass_parses_each_wave_once_with_issue_weights(monkeypatch, tmp_path):
    """Without the scanner the issue accumulator's orjson parse of a wave is the one the fold reads:
    each wave file is parsed once, and the sums are those of a pass that parsed twice (above: equal
    to the C fold's)."""
    from collections import Counter

    d = _dispatch(tmp_path, waves=6, variants=2, trips=2, seed=3)
    files = {p.read_bytes(): p.name for p in d.glob("se*_sm*_sl*_wv*.json")}
    assert len(files) == 6
    parsed: Counter[str] = Counter()
    real = orjson.loads

    def spy(data):  # type: ignore[no-untyped-def]
        if isinstance(data, bytes) and data in files:
            parsed[files[data]] += 1
        return real(data)

    monkeypatch.setattr(orjson, "loads", spy)
    issue = _issue(d, monkeypatch, True)
    assert issue is not None and issue[0] == 6
    assert parsed == {name: 1 for name in files.values()}
