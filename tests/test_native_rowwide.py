"""The two row readers of hotspot/att/engine/_wavescan.c give the same results.

Where the CPU has AVX-512 (BW, VBMI, VBMI2) the scanner reads compact rows with `row_wide`, chosen
at run time; everywhere else, and for every row that one refuses, with `row_simd`/`compact_row`.
`_wavescan.wide_rows(False)` forces the portable reader, so each document here is scanned both ways
and both must equal what orjson reads (or both refuse it). On a CPU without the wide reader both
scans take the portable one and the test still checks it against orjson.
"""

from __future__ import annotations

from collections.abc import Iterator

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.test_wavescan import LIMIT
from tests.test_wavescan import mod  # noqa: F401  (fixture)


def _both(mod, data: bytes):
    """scan(data) with the portable reader and with the wide one (where the CPU has it)."""
    was = mod.wide_rows()
    try:
        mod.wide_rows(False)
        portable = mod.scan(data)
        mod.wide_rows(True)
        wide = mod.scan(data)
    finally:
        mod.wide_rows(was)
    return portable, wide


def _doc(ins: bytes, timeline: bytes = b"[]", tail: bytes = b"") -> bytes:
    """A wave file whose instruction and timeline arrays are written as given; `tail` after the
    wave object (empty: the rows end a few bytes before the end of the text)."""
    return (b'{' + tail + b'"wave":{"begin":1,"end":2,"timeline":' + timeline
            + b',"instructions":' + ins + b'}}')


def _columns(scanned) -> tuple[list[int], ...]:
    """The seven int64 columns of a scan() tuple, as lists."""
    from array import array

    return tuple(list(array("q", scanned[k])) for k in range(3, 10))


def _check(mod, data: bytes) -> None:
    portable, wide = _both(mod, data)
    assert portable == wide
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        assert portable is None
        return
    if portable is None:
        return
    w = doc["wave"]
    want = ([r[k] for r in w["instructions"]] for k in range(5))
    pairs = w.get("timeline") or []
    assert _columns(portable) == (*want, [s for s, _ in pairs], [c for _, c in pairs])


def _numbers() -> Iterator[bytes]:
    """Every length from 1 to 14 digits, at and around the 2**40 bound, leading zeros, signs."""
    for n in range(1, 15):
        yield b"7" * n
        yield b"1" + b"0" * (n - 1)
        yield b"0" * n  # a leading zero from 2 digits on (refused)
        yield b"-" + b"9" * n
    yield str(LIMIT - 1).encode()
    yield str(LIMIT).encode()
    yield b"-0"
    yield b"09"


def _among(row: bytes) -> Iterator[bytes]:
    """Instruction arrays with `row` at each place among ten plain rows of 14 to 19 bytes: the wide
    reader takes 128 bytes at a time, so the row falls in the first or second 64 of a load, or
    across them, or past them."""
    plain = [b"[%d,%d,%d,%d,%d]" % (4000 + 37 * k, k % 3, k, 4 + k, 1 + 7 * k) for k in range(10)]
    for at in range(len(plain) + 1):
        yield b"[" + b",".join(plain[:at] + [row] + plain[at:]) + b"]"


def test_every_number_length_in_every_column_reads_the_same(mod) -> None:
    for num in _numbers():
        for col in range(5):
            row = [b"1", b"23", b"456", b"7", b"89"]
            row[col] = num
            line = b"[" + b",".join(row) + b"]"
            for ins in (b"[" + line + b"]", b"[" + line + b"," + line + b"]", *_among(line)):
                _check(mod, _doc(ins))
                _check(mod, _doc(ins, tail=b'"x":"' + b"y" * 70 + b'",'))
        pair = b"[" + num + b",3],[2," + num + b"]"
        _check(mod, _doc(b"[[4,1,0,4,1]]", timeline=b"[" + pair + b"]"))


def test_rows_the_wide_reader_refuses_read_as_before(mod) -> None:
    odd_rows = [b"[1,2,3,4]", b"[1,2,3,4,5,6]", b"[ 1,2,3,4,5]", b"[1 ,2,3,4,5]", b"[1,2,3,4,5 ]",
                b"[1,,3,4,5]", b"[1,2,3,4,]", b"[,1,2,3,4]", b"[1,2.5,3,4,5]", b"[1,2e3,3,4,5]",
                b"[1,2,3,4,5]]", b"[1,2,3,4,5", b"1,2,3,4,5]", b"[1,-2,3,4,5]", b"[1,2,3,4,05]",
                b"[1\n,2,3,4,5]", b"[1,2,3,4,\t5]", b"[123456789,2,3,4,5]", b"[12345678,2,3,4,5]",
                b"[1,2,3,4," + b"9" * 60 + b"]", b"[1,2,3,4,5\x00]", b"[1,2,3,4,5\xff]"]
    for row in odd_rows:
        for ins in (b"[" + row + b"]", *_among(row)):
            _check(mod, _doc(ins))
    for pair in [b"[1,2,3]", b"[1]", b"[ 1,2]", b"[1,2 ]", b"[-1,2]", b"[1,-2]", b"[01,2]", b"[1,02]",
                 b"[1,123456789]", b"[1,2],", b"[1,2]]"]:
        _check(mod, _doc(b"[[4,1,0,4,1]]", timeline=b"[[0,5]," + pair + b",[1,1]]"))


def test_rows_ending_at_every_distance_from_the_end_of_the_text(mod) -> None:
    # the wide reader loads 64 bytes masked to the text: rows cut short by the end read as before
    rows = b"[" + b",".join(b"[%d,%d,%d,%d,%d]" % (10**k, k, 3 * k, 1 + k, 7 * k + 1)
                            for k in range(8)) + b"]"
    full = _doc(rows)
    for cut in range(len(full) - 80, len(full) + 1):
        _check(mod, full[:cut])
    _check(mod, _doc(rows, timeline=b"[" + b",".join(b"[%d,%d]" % (k % 5, 10**k) for k in range(9)) + b"]"))


def test_timeline_total_at_the_bound_is_refused_on_both_paths(mod) -> None:
    big = 99_999_999  # the longest number the wide reader takes: the total reaches 2**40 after many
    n = LIMIT // big + 1
    timeline = b"[" + b",".join([b"[1,%d]" % big] * n) + b"]"
    portable, wide = _both(mod, _doc(b"[[4,1,0,4,1]]", timeline=timeline))
    assert portable is None and wide is None
    timeline = b"[" + b",".join([b"[1,%d]" % big] * (n - 1)) + b"]"
    portable, wide = _both(mod, _doc(b"[[4,1,0,4,1]]", timeline=timeline))
    assert portable is not None and portable == wide


number = st.one_of(st.integers(0, 9), st.integers(0, 10**8 + 5), st.integers(0, LIMIT + 10),
                   st.integers(-(10**9), -1))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(number, min_size=5, max_size=5), min_size=1, max_size=30),
       st.lists(st.lists(st.integers(0, 10**9), min_size=2, max_size=2), max_size=30),
       st.integers(0, 70), st.integers(0, 40), st.sampled_from([b"", b" ", b"0", b"-", b",", b"]"]))
def test_random_rows_read_the_same_both_ways(mod, rows, timeline, pad, at, junk) -> None:
    ins = orjson.dumps(rows)
    tail = b'"z":"' + b"x" * pad + b'",' if pad % 2 else b""
    _check(mod, _doc(ins, orjson.dumps(timeline), tail))
    at = min(at, len(ins) - 1)
    _check(mod, _doc(ins[:at] + junk + ins[at:], orjson.dumps(timeline), tail))


# The waitcnt text a Fold delimits without parsing (its bracket count, 64 bytes at a time on the
# wide path): a wave with no registered group is handed back with that text (item 10 of the
# scanned tuple) and its encoding (item 11), or refused; both paths must agree, and scan() (which
# encodes the array as it reads it) must agree with them. (A text the delimiter gives up on is
# encoded instead, with the same result: only a wrong end could show, and does here.)
def _fold_both(mod, data: bytes):
    was = mod.wide_rows()
    try:
        got = []
        for on in (False, True):
            mod.wide_rows(on)
            got.append(mod.Fold(1000).wave(data, 0))
    finally:
        mod.wide_rows(was)
    return got


def _check_edges(mod, edges: bytes, after: bytes = b"}}") -> None:
    data = b'{"wave":{"begin":1,"end":2,"instructions":[[1,2,3,4,5]],"waitcnt":' + edges + after
    portable, wide = _fold_both(mod, data)
    assert portable == wide
    scanned = mod.scan(data)
    if scanned is None:
        assert portable[0] is None
    else:
        assert portable[0] is not None
        assert portable[0][10:13] == scanned[10:13]


def _nested(depth: int, width: int) -> bytes:
    if depth == 0:
        return b"%d" % (width * 7919 % 1000)
    return b"[" + b",".join(_nested(depth - 1, width + k) for k in range(width % 3 + 1)) + b"]"


def test_waitcnt_text_delimited_the_same_both_ways(mod) -> None:
    shapes = [b"[]", b"[[]]", b"[[8,[[1,0],[3,0]]],[35,[[13,0]]]]", b"[ [ 1 , -2 ] ,\n\t[3,\r4] ]",
              b"[[1,2],[3,4]", b"[[1,2]]]", b"[[1,2.5]]", b'[[1,"a"]]', b"[[1,2],null]", b"[[1,2]x]",
              b"[" * 70 + b"]" * 70, b"[" * 130 + b"1" + b"]" * 130, b"[" * 70 + b"]" * 69]
    shapes += [_nested(d, w) for d in range(1, 6) for w in range(1, 5)]
    shapes += [b"[" + b",".join(b"[%d,[[%d,0]]]" % (k, k + 1) for k in range(n)) + b"]" for n in (1, 5, 40, 200)]
    for edges in shapes:
        _check_edges(mod, edges)
        _check_edges(mod, edges, after=b',"z":1}}')
        for cut in range(1, min(len(edges), 140)):  # the text ends inside the array
            _check_edges(mod, edges[:-cut], after=b"")


@settings(max_examples=200, deadline=None)
@given(st.recursive(st.integers(-5, 10**6), lambda inner: st.lists(inner, max_size=6), max_leaves=60),
       st.integers(0, 70))
def test_random_waitcnt_delimited_the_same_both_ways(mod, value, spaces) -> None:
    text = orjson.dumps([value])
    _check_edges(mod, text)
    at = spaces % max(len(text), 1)
    _check_edges(mod, text[:at] + b" " * spaces + text[at:])


def test_a_state_outside_the_enum_anywhere_keeps_the_wave_from_c_on_both_paths(mod) -> None:
    # Fold folds in C only waves whose timeline states are all known (< N_STATES): a larger one,
    # at any place of a long timeline (any window of the wide reader), hands the wave back
    from hotspot.att.engine.groups import N_STATES

    def doc(timeline: list[list[int]]) -> bytes:
        return (b'{"wave":{"begin":0,"end":100000,"instructions":[[10,1,0,4,1],[20,2,0,4,2]],"timeline":'
                + orjson.dumps(timeline) + b"}}")

    plain = [[k % N_STATES, 3 + k] for k in range(20)]
    was = mod.wide_rows()
    try:
        for on in (False, True):
            mod.wide_rows(on)
            fold = mod.Fold(1 << 20)
            scanned, gi = fold.wave(doc(plain), 0)
            assert gi == -1
            g = fold.add_group(scanned[13], scanned[7], scanned[4], b"", 0, b"", b"", b"", [])
            assert fold.wave(doc(plain), 0) is None  # folded
            for at in range(len(plain)):
                for state in (N_STATES, N_STATES + 1, 99, 12345678):
                    odd = [list(r) for r in plain]
                    odd[at][0] = state
                    got = fold.wave(doc(odd), 0)
                    assert got is not None and got[1] == g, (on, at, state)
    finally:
        mod.wide_rows(was)


def test_whole_analyses_identical_on_both_paths(mod, tmp_path, monkeypatch) -> None:
    # everything the wide path changes (rows, waitcnt delimiting, the fold's column sums) over
    # generated dispatches and a real one, against the pure-Python analysis
    from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch
    from tests.conftest import corpus_path
    from tests.test_wavescan import _analysis

    spec = DispatchSpec(waves=40, layout=Layout(ses=(0, 1), simds=2, slots=3, other_cus=(0,)),
                        variants=3, program=InstructionMix(loop_trips=4))
    dirs = [make_dispatch(tmp_path / "a", spec, seed=5)]
    root = corpus_path("att", "gfx950", "vec_add")
    if root.is_dir():
        dirs += (sorted(root.rglob("ui_output_agent_*_dispatch_*")) or [root])[:1]
    was = mod.wide_rows()
    try:
        for d in dirs:
            pure = _analysis(d, True, monkeypatch, "--detail")
            for on in (False, True):
                mod.wide_rows(on)
                assert _analysis(d, False, monkeypatch, "--detail") == pure, (d, on)
    finally:
        mod.wide_rows(was)


def test_folded_column_sums_for_every_length_on_both_paths(mod) -> None:
    # a group's per-instruction stall and duration sums (eight at a time on the wide path, the
    # tail masked) equal the sums of the waves' own columns, for sequences of 1 to 20 records
    from array import array

    was = mod.wide_rows()
    try:
        for on in (False, True):
            mod.wide_rows(on)
            for n in range(1, 21):
                waves = [[[10 * i, 1, (3 * i + w) % 7, 4 + (i + w) % 5, i + 1] for i in range(n)] for w in range(3)]
                docs = [b'{"wave":{"begin":0,"end":1000,"instructions":' + orjson.dumps(r) + b"}}" for r in waves]
                fold = mod.Fold(1 << 20)
                scanned, gi = fold.wave(docs[0], 0)
                g = fold.add_group(scanned[13], scanned[7], scanned[4], b"", 0, b"", b"", b"", [])
                for d in docs:
                    assert fold.wave(d, 0) is None
                taken = fold.take_group(g)
                assert taken[0] == len(docs)
                assert list(array("q", taken[2])) == [sum(w[i][2] for w in waves) for i in range(n)], (on, n)
                assert list(array("q", taken[3])) == [sum(w[i][3] for w in waves) for i in range(n)], (on, n)
    finally:
        mod.wide_rows(was)
