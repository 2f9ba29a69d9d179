"""The C helpers of a fresh analysis (issue 37, point 7) equal their pure-Python twins: a sequence
group's flush into the per-line and blame dicts (values and insertion order, with dicts that
already hold entries, and with sums past int64, which C leaves to the per-position loops), the
group facts (backward branches, barrier rows, the expected edges' key), and `Fold.files`, which
reads the wave files itself and leaves every file it does not simply read to hotspot/capture/files.py."""

from __future__ import annotations

import os
import shutil
import tempfile
from array import array
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hotspot.att.engine import groups as wave_groups
from hotspot.att.engine.native import PURE_PYTHON_ENV
from hotspot.att.engine.wavepass import PassOptions, describe, run_chunk_open
from hotspot.att.waits.accumulate import BlameAccumulator
from hotspot.att.waits.waitcnt_rules import ROLE_BARRIER, LineTables, build_tables
from hotspot.capture.codejson import read_code_json
from hotspot.capture.layout import open_dispatch
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch
from tests.test_wavescan import mod  # noqa: F401  (fixture)

N_STATES = wave_groups.N_STATES
BIG = 1 << 62  # sums of a few of these leave int64: C declines, the Python loops decide


def _items(d: dict) -> list:
    """A dict's entries in order, nested dicts and lists included (order is part of equal)."""
    return [(k, _items(v) if isinstance(v, dict) else list(v) if isinstance(v, list) else v)
            for k, v in d.items()]


_LINES = st.lists(st.integers(0, 12), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(lines=_LINES, data=st.data(), big=st.booleans())
def test_fold_lines_summed_in_c_equals_the_per_position_loop(mod, lines, data, big):
    n = len(lines)
    value = st.integers(0, BIG) if big else st.integers(0, 1000)
    duration = data.draw(st.lists(value, min_size=n, max_size=n))
    stall = data.draw(st.lists(value, min_size=n, max_size=n))
    charge = data.draw(st.lists(st.sampled_from([0, 0, 3, 17]) if not big else value,
                                min_size=n * N_STATES, max_size=n * N_STATES))
    waves = data.draw(st.integers(1, 5))
    before = data.draw(st.dictionaries(st.integers(0, 12), st.integers(0, 9), max_size=4))
    got_pl = {line: [v, v, v] for line, v in before.items()}
    got_ls = {line: [v] * N_STATES for line, v in before.items()}
    want_pl = {line: list(v) for line, v in got_pl.items()}
    want_ls = {line: list(v) for line, v in got_ls.items()}
    mod.fold_lines(got_pl, got_ls, array("q", lines), waves, array("q", duration), array("q", stall),
                   array("q", charge))
    wave_groups._fold_lines(want_pl, want_ls, lines, waves, duration, stall, charge)
    assert _items(got_pl) == _items(want_pl)
    assert _items(got_ls) == _items(want_ls)


@st.composite
def _line_groups(draw: st.DrawFn, big: bool) -> tuple:
    # line numbers in a short span (C indexes them) or spread over int64 (C hashes them)
    lines = draw(_LINES | st.lists(st.integers(0, 3).map(lambda k: (k - 2) * (1 << 61) + k),
                                   min_size=1, max_size=20))
    n = len(lines)
    value = st.integers(0, BIG) if big else st.integers(0, 1000)
    duration = draw(st.lists(value, min_size=n, max_size=n))
    stall = draw(st.lists(value, min_size=n, max_size=n))
    charge = draw(st.lists(st.sampled_from([0, 0, 3, 17]) if not big else value,
                           min_size=n * N_STATES, max_size=n * N_STATES))
    return lines, draw(st.integers(1, 5) if not big else st.integers(1, BIG)), duration, stall, charge


@settings(max_examples=200, deadline=None)
@given(data=st.data(), big=st.booleans())
def test_fold_lines_of_all_groups_at_once_equals_the_loop_per_group(mod, data, big):
    """fold_lines_all: the dicts of _fold_lines of each group in turn (values and order), or
    False with nothing changed, only when a sum leaves int64."""
    groups = data.draw(st.lists(_line_groups(big), min_size=1, max_size=5))
    before = data.draw(st.dictionaries(st.integers(0, 12), st.integers(0, 9), max_size=4))
    got_pl = {line: [v, v, v] for line, v in before.items()}
    got_ls = {line: [v] * N_STATES for line, v in before.items()}
    want_pl = {line: list(v) for line, v in got_pl.items()}
    want_ls = {line: list(v) for line, v in got_ls.items()}
    done = mod.fold_lines_all(got_pl, got_ls, [
        (array("q", lines), waves, array("q", d), array("q", s), array("q", c))
        for lines, waves, d, s, c in groups])
    for lines, waves, d, s, c in groups:
        wave_groups._fold_lines(want_pl, want_ls, lines, waves, d, s, c)
    if done:
        assert _items(got_pl) == _items(want_pl)
        assert _items(got_ls) == _items(want_ls)
    else:  # declined: untouched, and only because some sum of the groups leaves int64
        assert _items(got_pl) == [(line, [v, v, v]) for line, v in before.items()]
        assert _items(got_ls) == [(line, [v] * N_STATES) for line, v in before.items()]
        sums: dict[int, list[int]] = {}
        for lines, waves, d, s, c in groups:
            for j, line in enumerate(lines):
                acc = sums.setdefault(line, [0] * (3 + N_STATES))
                for k, v in enumerate((waves, d[j], s[j], *c[j * N_STATES:(j + 1) * N_STATES])):
                    acc[k] += v
        assert max(max(v) for v in sums.values()) >= 1 << 63
    if not big:
        assert done
    # a column of Python integers: declined, nothing changed
    lines, waves, d, s, c = groups[0]
    assert mod.fold_lines_all({}, {}, [(lines, waves, d, s, c)]) is False


@settings(max_examples=200, deadline=None)
@given(charge=st.lists(st.integers(0, BIG), max_size=40).map(lambda c: c[:len(c) // N_STATES * N_STATES]))
def test_charge_sums_in_c_equal_python(mod, charge):
    got = mod.charge_sums(array("q", charge))
    want = [sum(charge[i::N_STATES]) for i in range(N_STATES)]
    assert got == want or (got is None and max(want, default=0) >= 1 << 63)


def _group(lines: list[int], entries: list[tuple[int, list[int]]], wait_stall: list[int],
           blame_waves: int, hists: list[dict[int, int]] | None) -> SimpleNamespace:
    """What _flush_blame reads of a SequenceGroup, built as SequenceGroup builds it."""
    producers: dict[int, list[int]] = {}
    for w, prods in entries:
        producers.setdefault(w, []).extend(prods)
    positions = sorted(producers)
    pair_waits = [w for w in positions for _ in producers.get(w, ())]
    pair_producers = [p for w in positions for p in producers.get(w, ())]
    return SimpleNamespace(
        lines=array("q", lines), positions=positions, producers=producers,
        wait_stall=array("q", wait_stall[:len(positions)]), blame_waves=blame_waves,
        pair_lines=[(lines[w], lines[p]) for w, p in zip(pair_waits, pair_producers)],
        distances=Counter(), pair_hists=None if hists is None else hists[:len(pair_waits)] +
        [{} for _ in range(len(pair_waits) - len(hists))], pair_entries=None)


@st.composite
def _groups(draw: st.DrawFn) -> SimpleNamespace:
    lines = draw(st.lists(st.integers(0, 8), min_size=2, max_size=40))
    n = len(lines)
    entries = []
    for w in sorted(draw(st.sets(st.integers(1, n - 1), max_size=8))):
        entries.append((w, sorted(draw(st.sets(st.integers(0, w - 1), max_size=3)))))
    big = draw(st.booleans())
    stall = draw(st.lists(st.integers(0, BIG if big else 500), min_size=n, max_size=n))
    hists = draw(st.none() | st.lists(st.dictionaries(st.integers(-5, 50), st.integers(1, 4), max_size=3),
                                     max_size=20))
    return _group(lines, entries, stall, draw(st.integers(1, 4)), hists)


def _blame_before(seed: int) -> BlameAccumulator:
    acc = BlameAccumulator.empty()
    if seed:  # entries a previous group left, for the merges
        acc.blame[(3, 1, 1)] = seed
        acc.wait_stall[3] = seed
        acc.wait_hits[5] = seed
        acc.dist_cycles[(3, 1)] = {7: seed}
        acc.dist_instructions[(3, 1)] = {1: seed}
    return acc


@settings(max_examples=300, deadline=None)
@given(group=_groups(), seed=st.integers(0, 3))
def test_flush_blame_in_c_equals_the_python_loops(mod, group, seed):
    got, want = _blame_before(seed), _blame_before(seed)
    wave_groups._flush_blame(group, got, mod)  # type: ignore[arg-type]  # the fields it reads
    wave_groups._flush_blame(group, want, None)  # type: ignore[arg-type]
    for field in ("blame", "wait_stall", "wait_hits", "dist_cycles", "dist_instructions"):
        assert _items(getattr(got, field)) == _items(getattr(want, field)), field


def _as_arrays(mod, g: SimpleNamespace) -> tuple:
    """A group's producers as blame_waits_all also takes them: pair_index's (counts, producers)."""
    entries = [(w, list(p)) for w, p in g.producers.items()]
    _, pair_producers, counts = mod.pair_index(g.lines, g.positions, entries)
    return array("q", counts), array("q", pair_producers)


@settings(max_examples=300, deadline=None)
@given(groups=st.lists(_groups(), min_size=1, max_size=4), seed=st.integers(0, 3), data=st.data())
def test_blame_of_all_groups_at_once_equals_the_loop_per_group(mod, groups, seed, data):
    """blame_waits_all: the dicts of _blame_waits of each group in turn, or False with nothing
    changed, only when a sum leaves int64; each group's producers as the dict or as arrays."""
    got, want = _blame_before(seed), _blame_before(seed)
    arrays = data.draw(st.lists(st.booleans(), min_size=len(groups), max_size=len(groups)))
    done = mod.blame_waits_all(
        [(g.lines, g.positions, g.wait_stall, _as_arrays(mod, g) if a else g.producers, g.blame_waves)
         for g, a in zip(groups, arrays)],
        wave_groups.NO_PRODUCER, got.blame, got.wait_stall, got.wait_hits, got.dist_cycles,
        got.dist_instructions)
    fields = ("blame", "wait_stall", "wait_hits", "dist_cycles", "dist_instructions")
    if not done:
        untouched = _blame_before(seed)
        for field in fields:
            assert _items(getattr(got, field)) == _items(getattr(untouched, field)), field
    for g in groups:
        wave_groups._blame_waits(g, want)  # type: ignore[arg-type]  # the fields it reads
    if not done:  # only when some sum C adds leaves int64 (a key's sum, not only the stall total)
        assert max([*want.blame.values(), *want.wait_stall.values(), *want.wait_hits.values(),
                    *(c for h in want.dist_instructions.values() for c in h.values())]) >= 1 << 63
        return
    for field in fields:
        assert _items(getattr(got, field)) == _items(getattr(want, field)), field


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.integers(-3, 9), min_size=1, max_size=20), data=st.data())
def test_pair_index_in_c_equals_the_pairs_of_python(mod, lines, data):
    """pair_index: _pairs' pair_waits and pair_producers, and per position its number of pairs;
    None exactly when a position or producer is not an index into the sequence."""
    n = len(lines)
    index = st.integers(-1, n) if data.draw(st.booleans()) else st.integers(0, n - 1)
    entries = data.draw(st.lists(st.tuples(index, st.lists(index, max_size=3)), max_size=6))
    positions = data.draw(st.lists(index, max_size=8))  # repeats too
    got = mod.pair_index(array("q", lines), positions, entries)
    fits = all(0 <= v < n for w, ps in entries for v in (w, *ps)) and all(0 <= w < n for w in positions)
    assert (got is None) == (not fits)
    if got is None:
        return
    producers, pair_waits, pair_producers, pair_lines = wave_groups._pairs(lines, positions, entries)
    waits, prods, counts = (list(memoryview(raw).cast("q")) for raw in got)
    assert waits == pair_waits and prods == pair_producers
    assert counts == [len(producers.get(w, ())) for w in positions]


def test_blame_of_all_groups_declines_python_integers(mod):
    g = _group([1, 2, 3], [(2, [0, 1])], [5, 6, 7], 2, None)
    acc = BlameAccumulator.empty()
    assert mod.blame_waits_all([(list(g.lines), g.positions, g.wait_stall, g.producers, 2)],
                               wave_groups.NO_PRODUCER, acc.blame, acc.wait_stall, acc.wait_hits,
                               acc.dist_cycles, acc.dist_instructions) is False
    assert not acc.blame and not acc.wait_stall
    assert mod.blame_waits_all([(g.lines, g.positions, g.wait_stall, g.producers, 2)],
                               wave_groups.NO_PRODUCER, acc.blame, acc.wait_stall, acc.wait_hits,
                               acc.dist_cycles, acc.dist_instructions) is True
    # by hand: the wait at position 2 (line 3, stall 5 of [5, 6, 7][:1]) blames lines 1 and 2
    assert acc.wait_stall == {3: 5} and acc.wait_hits == {3: 2}
    assert acc.blame == {(3, 1, 2): 5, (3, 2, 2): 5}
    assert acc.dist_instructions == {(3, 1): {1: 2}, (3, 2): {0: 2}}


@settings(max_examples=300, deadline=None)
@given(data=st.data(), n_pairs=st.integers(1, 8), seed=st.integers(0, 3))
def test_taken_entries_merge_as_the_histograms_they_add_up_to(mod, data, n_pairs, seed):
    """merge_entries_all of one group (C) and merge_entries (its twin) of a group's (pair, cycles,
    count) triples give dist_cycles what adding them into per-pair dicts (add_entries, C and twin)
    and merging those (merge_hists) gave: values and order, pairs sharing their lines included."""
    triples = data.draw(st.lists(st.tuples(st.integers(0, n_pairs - 1), st.integers(-5, 40),
                                           st.integers(1, 1 << 40)), max_size=30))
    flat = array("q", [v for t in triples for v in t])
    keys = [(3, 1), (3, 2), (4, 1)]
    pair_lines = [data.draw(st.sampled_from(keys)) for _ in range(n_pairs)]

    def before() -> dict:
        return {k: ({7: seed, 2: 1} if seed and k == keys[0] else {}) for k in keys}

    want = before()
    dict_hists: list[dict[int, int]] = [{} for _ in range(n_pairs)]
    for pair, c, count in triples:  # the per-pair dicts, as _take added entries into them
        dict_hists[pair][c] = dict_hists[pair].get(c, 0) + count
    for pair, hist in enumerate(dict_hists):  # _merge_distances' loop (merge_hists' twin)
        for c, count in hist.items():
            want[pair_lines[pair]][c] = want[pair_lines[pair]].get(c, 0) + count
    # the group's sequence: pair i waits at position 2i on line a, its producer at 2i + 1 on line b
    lines = array("q", [v for pl in pair_lines for v in pl])
    waits, prods = array("q", range(0, 2 * n_pairs, 2)), array("q", range(1, 2 * n_pairs, 2))
    got_c, got_py = before(), before()
    assert mod.merge_entries_all(got_c, [(lines, waits, prods, flat)]) is True
    wave_groups.merge_entries(got_py, pair_lines, flat)
    assert _items(got_c) == _items(want)
    assert _items(got_py) == _items(want)
    via = before()
    mod.merge_hists(via, pair_lines, dict_hists)
    assert _items(via) == _items(want)
    made: list[dict[int, int]] = [{} for _ in range(n_pairs)]
    mod.add_entries(made, flat)
    assert [list(h.items()) for h in made] == [list(h.items()) for h in dict_hists]
    made_py: list[dict[int, int]] = [{} for _ in range(n_pairs)]
    wave_groups.add_entries(made_py, flat, None)
    assert [list(h.items()) for h in made_py] == [list(h.items()) for h in dict_hists]
    with pytest.raises(IndexError):
        mod.merge_entries_all(before(), [(lines, waits, prods, array("q", [n_pairs, 0, 1]))])
    with pytest.raises(ValueError):
        mod.merge_entries_all(before(), [(lines, waits, prods, array("q", [0, 0]))])


@st.composite
def _entry_groups(draw: st.DrawFn, big: bool) -> tuple:
    lines = draw(st.lists(st.integers(0, 3), min_size=1, max_size=6))
    n = len(lines)
    n_pairs = draw(st.integers(1, 6))
    waits = draw(st.lists(st.integers(0, n - 1), min_size=n_pairs, max_size=n_pairs))
    prods = draw(st.lists(st.integers(0, n - 1), min_size=n_pairs, max_size=n_pairs))
    count = st.integers(1, 1 << 62) if big else st.integers(1, 50)
    triples = draw(st.lists(st.tuples(st.integers(0, n_pairs - 1), st.integers(-3, 9), count),
                            max_size=12))
    return lines, waits, prods, [v for t in triples for v in t]


@settings(max_examples=300, deadline=None)
@given(groups=st.data(), big=st.booleans(), seed=st.integers(0, 3))
def test_taken_entries_of_all_groups_merge_as_group_by_group(mod, groups, big, seed):
    """merge_entries_all: the dist_cycles of merge_entries (the twin) of each group in turn, its
    line pairs made from the pair positions; or False with nothing changed, only when a
    (key, cycles) count sum leaves int64."""
    drawn = groups.draw(st.lists(_entry_groups(big), min_size=1, max_size=4))

    def before() -> dict:
        return {(a, b): ({7: seed, 2: 1} if seed and (a, b) == (1, 2) else {})
                for a in range(4) for b in range(4)}

    got, want = before(), before()
    done = mod.merge_entries_all(got, [(array("q", lines), array("q", w), array("q", p), array("q", e))
                                       for lines, w, p, e in drawn])
    for lines, w, p, e in drawn:
        wave_groups.merge_entries(want, [(lines[a], lines[b]) for a, b in zip(w, p)], e)
    if done:
        assert _items(got) == _items(want)
    else:
        assert _items(got) == _items(before())
        assert max(c for h in want.values() for c in h.values()) >= 1 << 63
    if not big:
        assert done


def _looping_partial(tmp: Path, waves: int, seed: int):
    """The open wave pass over a synthetic dispatch whose waits repeat (a loop), on one SE."""
    spec = DispatchSpec(waves=waves, layout=Layout(ses=(0,), simds=2, slots=2, other_cus=(0,)),
                        variants=2, program=InstructionMix(loop_trips=4))
    d = make_dispatch(tmp, spec, seed=seed)
    tables = build_tables(read_code_json(d / "code.json").rows)
    return run_chunk_open(describe(open_dispatch(d).wave_files), PassOptions(tables))


def test_flush_blame_of_a_real_sequence_in_c_equals_python(mod):
    """On a synthetic dispatch's groups (loops: wait lines repeat), with the pass's own groups."""
    with tempfile.TemporaryDirectory() as tmp:
        part = _looping_partial(Path(tmp), waves=12, seed=3)
        groups = list(part.open_groups.groups.values())
        assert groups and any(g.blame_waves and g.pair_waits for g in groups)
        for g in groups:
            # pairs made by pair_index, the dict and line pairs on first use: _pairs' values
            assert g.pair_counts is not None
            assert (g.producers, list(g.pair_waits), list(g.pair_producers), g.pair_lines) == \
                wave_groups._pairs(list(g.lines), g.positions, g.entries)
            g.settle()
            got, want = BlameAccumulator.empty(), BlameAccumulator.empty()
            wave_groups._flush_blame(g, got, mod)
            wave_groups._flush_blame(g, want, None)
            assert _items(got.blame) == _items(want.blame)
            assert _items(got.dist_cycles) == _items(want.dist_cycles)
            assert _items(got.dist_instructions) == _items(want.dist_instructions)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.integers(-3, 12), max_size=60), data=st.data())
def test_group_facts_in_c_equal_python(mod, lines, data):
    cats = data.draw(st.lists(st.sampled_from([0, 1, wave_groups.DECODER_JUMP]), min_size=len(lines),
                              max_size=len(lines)))
    barrier = data.draw(st.sets(st.integers(-3, 12), max_size=4))
    tables = LineTables(roles={line: ROLE_BARRIER for line in barrier}, pushes={}, scalar=frozenset(),
                        waits={})
    col, ccol = array("q", lines), array("q", cats)
    assert wave_groups._backedges(col, ccol, mod) == wave_groups._backedges(lines, cats)
    assert wave_groups._barrier_rows(col, tables, mod) == wave_groups._barrier_rows(lines, tables)


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.integers(-(1 << 41), 1 << 41) | st.integers(0, 9), min_size=1, max_size=20),
       data=st.data())
def test_expected_key_from_entries_equals_the_json_route(mod, lines, data):
    n = len(lines)
    entries = [(w, sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=3))))
               for w in sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=5)))]
    edges = [[lines[w], [[lines[p], 0] for p in prods]] for w, prods in entries]
    assert mod.entries_key(array("q", lines), entries) == mod.edges_key(orjson.dumps(edges))


def _dispatch(root: Path) -> Path:
    spec = DispatchSpec(waves=10, layout=Layout(ses=(0, 1), simds=2, slots=2, other_cus=(0,)),
                        variants=2, program=InstructionMix(loop_trips=2))
    return make_dispatch(root, spec, seed=7)


def test_fold_files_leaves_what_it_does_not_simply_read_to_python(mod, tmp_path):
    """Links (inside the folder too), FIFOs, folders and files over the cap come back unread,
    at their index; the files before them are folded."""
    d = _dispatch(tmp_path)
    files = sorted(str(p) for p in d.glob("se*_sm*_sl*_wv*.json"))
    size = max(os.path.getsize(p) for p in files)
    link = str(d / "link.json")
    os.symlink(files[0], link)
    fifo = str(d / "fifo.json")
    os.mkfifo(fifo)
    folder = str(d / "folder.json")
    os.mkdir(folder)
    missing = str(d / "missing.json")
    for odd in (link, fifo, folder, missing):
        fold = mod.Fold(1 << 20)
        paths = files[:3] + [odd] + files[3:]
        got = fold.files(paths, [0] * len(paths), [0] * len(paths), 0, len(paths), size)
        # the first file is a new sequence: handed back read, with its bytes
        assert got[0] == 0 and got[1] == Path(files[0]).read_bytes() and got[2] is not None
        got = fold.files(paths, [0] * len(paths), [0] * len(paths), 3, len(paths), size)
        assert got == (3, None, None)
    big = next(i for i, p in enumerate(files) if os.path.getsize(p) == size)
    fold = mod.Fold(1 << 20)
    assert fold.files(files, [0] * len(files), [0] * len(files), big, len(files), size - 1) == \
        (big, None, None)  # over the cap: files.py refuses it, naming the limit
    got = fold.files(files, [0] * len(files), [0] * len(files), big, len(files), size)
    assert got[0] == big and got[1] == Path(files[big]).read_bytes()


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(odd=st.sets(st.integers(0, 9), max_size=3), link=st.booleans())
def test_a_pass_reading_in_c_equals_the_pure_pass(mod, monkeypatch, odd, link):
    """Files C leaves to Python (a symlink inside the folder, here) among those it reads: the
    partial equals the pure pass's."""
    with tempfile.TemporaryDirectory() as tmp:
        d = _dispatch(Path(tmp))
        files = sorted(d.glob("se*_sm*_sl*_wv*.json"))
        if link:
            for i in odd:  # each replaced by a link to a copy of itself, inside the folder
                copy = files[i].with_suffix(".copy")
                shutil.move(files[i], copy)
                os.symlink(copy.name, files[i])
        tables = build_tables(read_code_json(d / "code.json").rows)
        results = []
        for pure in (False, True):
            if pure:
                monkeypatch.setenv(PURE_PYTHON_ENV, "1")
            else:
                monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
            part = run_chunk_open(describe(open_dispatch(d).wave_files), PassOptions(tables)).finish()
            results.append((part.totals.per_line, part.line_states, _items(part.blame.blame),
                            _items(part.blame.dist_cycles), part.backedges,
                            {k: list(v) for k, v in part.barriers.items()}))
        assert results[0] == results[1]


@settings(max_examples=300, deadline=None)
@given(lines=st.lists(st.integers(-3, 12), min_size=1, max_size=40), data=st.data())
def test_pairs_in_c_equal_python(mod, lines, data):
    n = len(lines)
    entries = [(w, data.draw(st.lists(st.integers(0, n - 1), max_size=3)))
               for w in data.draw(st.lists(st.integers(0, n - 1), max_size=8))]  # a wait twice too
    positions = sorted(data.draw(st.sets(st.integers(0, n - 1), max_size=8)) | {w for w, _ in entries})
    got = wave_groups._pairs(array("q", lines), positions, entries, mod)
    assert got == wave_groups._pairs(lines, positions, entries)
    assert list(got[0]) == list(wave_groups._pairs(lines, positions, entries)[0])  # dict order


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.integers(-(1 << 41), 1 << 41) | st.integers(0, 9), max_size=80)
       | st.lists(st.integers(-3, 9) | st.sampled_from([-(1 << 63), (1 << 63) - 1]), max_size=80))
def test_count_lines_in_c_equals_counter(mod, lines):
    """Values in a short span (C indexes them) or spread to int64's ends (C hashes them)."""
    got = mod.count_lines(array("q", lines))
    want = Counter(lines)
    assert list(got.items()) == list(want.items())  # values and first-seen order


_WEIGHT = st.dictionaries(st.integers(0, 30), st.floats(0.01, 1e6), max_size=20)


@settings(max_examples=300, deadline=None)
@given(hits=st.dictionaries(st.integers(0, 30), st.integers(1, 1 << 70), max_size=30),
       mfma=st.dictionaries(st.integers(0, 30), st.integers(1, 64)), valu=_WEIGHT,
       vmem=st.dictionaries(st.integers(0, 30), st.integers(1, 4096) | st.floats(0.5, 9.5)))
def test_issue_terms_in_c_are_the_comprehensions_objects(mod, hits, mfma, valu, vmem):
    """line_terms: _terms_py's list (lines in hits order, the same products: ints stay ints, the
    same floats), also for counts past int64."""
    from hotspot.att.issue_share import IssueWeights, _terms_py

    w = IssueWeights([], None)
    w.mfma_cycles, w.valu_issue, w.vmem_bytes = mfma, valu, vmem
    got = mod.line_terms(hits, w.by_line())
    assert repr(got) == repr(_terms_py(hits, w))
    assert [type(v) for t in got for v in t] == [type(v) for t in _terms_py(hits, w) for v in t]
    assert mod.line_terms({1: 2}, {1: (1, 2)}) is None  # not a 3-tuple: the comprehension decides


@settings(max_examples=200, deadline=None)
@given(lines=st.lists(st.integers(0, 30), max_size=120), mfma=st.dictionaries(st.integers(0, 30), st.integers(1, 64)),
       valu=_WEIGHT, vmem=st.dictionaries(st.integers(0, 30), st.integers(1, 4096)),
       loops=st.lists(st.tuples(st.integers(0, 30), st.integers(0, 30)), max_size=4))
def test_issue_shape_of_an_int64_column_is_the_same_floats(mod, lines, mfma, valu, vmem, loops):
    """The native pass's shapes (count_lines, line_terms) equal the pure-Python ones."""
    from hotspot.att.issue_share import IssueAccumulator, IssueWeights, _shape

    w = IssueWeights([], None)
    w.mfma_cycles, w.valu_issue, w.vmem_bytes, w.loops = mfma, valu, vmem, loops
    assert repr(IssueAccumulator().shape(w, array("q", lines))) == repr(_shape(list(lines), w))


def _ordered(part) -> tuple:  # type: ignore[no-untyped-def]
    """Everything a partial's flush writes, dict orders included."""
    blame = part.blame
    return (_items(part.totals.per_line), _items(part.line_states), list(part.totals.states),
            _items(part.totals.lengths), _items(part.totals.short_lines), _items(part.backedges),
            [_items(getattr(blame, f)) for f in ("blame", "wait_stall", "wait_hits", "dist_cycles",
                                                  "dist_instructions")])


@pytest.mark.parametrize("seed", [3, 11])
def test_flushing_all_groups_at_once_equals_flushing_them_in_turn(mod, monkeypatch, seed):
    """WavePartial.finish (flush_groups: the C updates of all groups at once) leaves the dicts
    flush_group of each group in turn leaves, in the same order; and the pure-Python pass's."""
    from hotspot.att.engine.groups import SequenceFolder

    with tempfile.TemporaryDirectory() as tmp:
        spec = DispatchSpec(waves=24, layout=Layout(ses=(0, 1), simds=2, slots=3, other_cus=(0,)),
                            variants=4, program=InstructionMix(loop_trips=3))
        d = make_dispatch(Path(tmp), spec, seed=seed)
        tables = build_tables(read_code_json(d / "code.json").rows)
        results = []
        for way in ("at once", "in turn", "pure"):
            if way == "pure":
                monkeypatch.setenv(PURE_PYTHON_ENV, "1")
            part = run_chunk_open(describe(open_dispatch(d).wave_files), PassOptions(tables))
            if way == "in turn":
                groups = list(part.open_groups.groups.values())
                assert len(groups) >= 2 and part.native is None  # detached: C sums handed over
                for group in groups:
                    part.flush_group(group)
                part.open_groups = SequenceFolder()
            else:
                part.finish()
            results.append((_ordered(part), part.blame))
        assert results[0][0] == results[1][0]
        # the pure pass: the same values (its cycle histograms and blame keys are met in another
        # order than the C fold's, as before these helpers)
        assert results[0][0][:6] == results[2][0][:6]
        assert results[0][1] == results[2][1]


def test_taken_entries_and_their_histograms_flush_alike(mod):
    """A group's taken entries (pair_entries) flush into dist_cycles as the per-pair dicts made
    from them (hist_dicts: what a wave counted on the Python side needs) do, also when a partial
    absorbs another's group in either form."""
    import copy

    with tempfile.TemporaryDirectory() as tmp:
        part = _looping_partial(Path(tmp), waves=16, seed=5)
        groups = [g for g in part.open_groups.groups.values() if g.pair_entries is not None]
        assert groups and all(g.pair_hists is None and g.blame_waves for g in groups)

        def flushed(g) -> list:  # type: ignore[no-untyped-def]
            acc = BlameAccumulator.empty()
            wave_groups._flush_blame(g, acc, mod)
            return _items(acc.dist_cycles)

        for g in groups:
            want = flushed(g)
            as_dicts = copy.deepcopy(g)
            hists = as_dicts.hist_dicts()
            assert as_dicts.pair_entries is None and hists is as_dicts.pair_hists
            assert sum(c for h in hists for c in h.values()) == sum(g.pair_entries[2::3])
            assert flushed(as_dicts) == want
            # absorbing a copy of itself: entries + entries, dicts + entries, entries + dicts
            doubled = []
            for mine, theirs in ((g, g), (as_dicts, g), (g, as_dicts)):
                a, b = copy.deepcopy(mine), copy.deepcopy(theirs)
                a.absorb(b)
                doubled.append(flushed(a))
            assert doubled[0] == doubled[1] == doubled[2]
            assert [(k, [(c, n * 2) for c, n in h]) for k, h in want] == doubled[0]
