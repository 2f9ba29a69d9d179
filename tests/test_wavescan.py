"""The native wave scanner (hotspot/att/engine/_wavescan.c) against orjson and the pure-Python path.

What it accepts it must read exactly as orjson does; what it cannot read it hands back (None) so
orjson and the Python path decide, errors included. Whole analyses must be byte-identical with
HOTSPOT_PURE_PYTHON=1. Skipped when the extension was not built (no C compiler), unless
HOTSPOT_REQUIRE_NATIVE=1 (set by .ci/run), where a missing build fails.
"""

from __future__ import annotations

import os
from array import array
from dataclasses import replace
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hotspot.att.engine import groups as wave_groups
from hotspot.att.engine.groups import N_STATES, charge_windows
from hotspot.att.engine.native import PURE_PYTHON_ENV, native, scan
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch
from tests.conftest import corpus_path, run_cli

COLUMNS = ("times", "cats", "stalls", "durations", "lines")
LIMIT = 1 << 40


@pytest.fixture(scope="module")
def mod():
    m = native()
    if m is None:
        if os.environ.get("HOTSPOT_REQUIRE_NATIVE") == "1":
            pytest.fail("HOTSPOT_REQUIRE_NATIVE=1 but hotspot.att.engine._wavescan is not built/enabled "
                        "(install with `pip install -e .` and a C compiler)")
        pytest.skip("native wave scanner not built (needs a C compiler at install time)")
    return m


def _expected(doc: dict) -> dict:
    """What scan() must return for a document orjson parsed, computed from orjson's objects."""
    w = doc["wave"]
    ins = w["instructions"]
    timeline = w.get("timeline") or []
    return {
        "begin": w["begin"], "end": w["end"], "cu": w.get("cu"),
        **{name: [r[k] for r in ins] for k, name in enumerate(COLUMNS)},
        "states": [s for s, _ in timeline], "cycles": [c for _, c in timeline],
        "waitcnt": w.get("waitcnt") or [],
    }


def _got(sw) -> dict:
    return {"begin": sw.begin, "end": sw.end, "cu": sw.cu,
            **{name: list(sw.column(name)) for name in COLUMNS + ("states", "cycles")},
            "waitcnt": sw.waitcnt}


def _corpus_wave_files() -> list[Path]:
    """Every corpus wave file but those of two replicates of one binary (the same decoder output,
    tests/test_report_html.py SAME_BINARY_REPLICATES): the first of the three is read."""
    from tests.test_report_html import SAME_BINARY_REPLICATES

    root = corpus_path("att")
    skip = tuple(corpus_path(rel) for rel in SAME_BINARY_REPLICATES)
    return sorted(f for f in root.rglob("se*_sm*_sl*_wv*.json") if f.parent not in skip) if root.is_dir() else []


@pytest.mark.slow
def test_corpus_wave_files_scan_as_orjson_reads_them(mod, corpus) -> None:
    files = _corpus_wave_files()
    assert len(files) > 600  # all corpus dispatches but two replicates (829 waves)
    for f in files:
        data = f.read_bytes()
        sw = scan(mod, data)
        assert sw is not None, f  # real decoder output is the plain shape
        exp = _expected(orjson.loads(data))
        assert _got(sw) == exp, f
        assert sw.edge_count == len(exp["waitcnt"])


def _doc(**wave) -> bytes:
    base = {"begin": 10, "end": 60, "cu": 1, "id": 0, "simd": 0, "slot": 0,
            "instructions": [[12, 2, 0, 4, 1], [16, 9, 20, 24, 2]],
            "timeline": [[1, 2], [2, 8], [4, 40]], "waitcnt": [[2, [[1, 0]]]]}
    base.update(wave)
    return orjson.dumps({"duration": 50, "name": "SE0", "wave": base})


@pytest.mark.parametrize("data", [
    _doc(begin=10.0),                                      # float where an int is read
    _doc(instructions=[[12, 2, 0, 4, 1.5]]),
    _doc(instructions=[[12, 2, 0, 4, 1, 7]]),              # six columns: the Python path decides
    _doc(instructions=[[12, 2, 0, 4]]),
    _doc(instructions=[]),
    _doc(timeline=[[1, -2]]),                              # negative cycles: per-record path
    _doc(timeline=[[-1, 2]]),
    _doc(timeline=[[1, 2, 3]]),
    _doc(timeline=0),
    _doc(cu="1"),
    _doc(waitcnt=[[2, [[1, "x"]]]]),
    _doc(begin=LIMIT),                                     # outside the int64-safe bound
    _doc(instructions=[[-LIMIT, 2, 0, 4, 1]]),
    _doc(timeline=[[1, LIMIT // 2], [1, LIMIT // 2]]),     # timeline longer than the bound
    b'{"wave": {"begin": 1, "begin": 2, "end": 3, "instructions": [[1,2,3,4,5]]}}',  # duplicate
    b'{"\\u0077ave": {"begin": 1, "end": 3, "instructions": [[1,2,3,4,5]]}}',        # escaped key
    b'{"name": "S\xc3\xa9", "wave": {"begin": 1, "end": 3, "instructions": [[1,2,3,4,5]]}}',
    b'{"x": 1e5, "wave": {"begin": 1, "end": 3, "instructions": [[1,2,3,4,5]]}}',
    b'{"x": NaN, "wave": {"begin": 1, "end": 3, "instructions": [[1,2,3,4,5]]}}',
    b'{"wave": {"begin": 1, "end": 3, "instructions": [[1,2,3,4,5]]}} x',           # trailing
    b'{"wave": {"begin": 1, "end": 3, "instructions": [[1,2,3,4,5]]',               # truncated
    b'{"wave": {"begin": 01, "end": 3, "instructions": [[1,2,3,4,5]]}}',            # leading zero
    b'{"wave": {"end": 3, "instructions": [[1,2,3,4,5]]}}',                         # no begin
    b'{"other": {}}',
    b'[]',
    b'',
])
def test_shapes_it_does_not_read_are_handed_back(mod, data: bytes) -> None:
    assert scan(mod, data) is None


def test_null_or_missing_optional_fields_read_as_the_python_path_reads_them(mod) -> None:
    for data in (_doc(timeline=None, waitcnt=None, cu=None),
                 b'{"wave": {"begin": 1, "end": 3, "instructions": [[1,2,3,4,5]]}}',
                 b' {\n"wave" :{ "end":3 ,"begin":1,"instructions":[ [1 , 2,3,4,5] ] ,'
                 b'"x":[{"a":[true,false,null,-0.5,"\\u00e9\\n"]}] } }\r\n'):
        sw = scan(mod, data)
        assert sw is not None
        assert _got(sw) == _expected(orjson.loads(data))


# Random JSON values for the fields the scanner skips, and random whitespace between tokens.
json_leaf = st.one_of(st.none(), st.booleans(), st.integers(-10**15, 10**15),
                      st.floats(allow_nan=False, allow_infinity=False, width=32),
                      st.text(max_size=6))
json_values = st.recursive(json_leaf, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)),
    max_leaves=12)
small = st.integers(-(1 << 41), 1 << 41)


@st.composite
def wave_docs(draw) -> bytes:
    n = draw(st.integers(0, 6))
    wave: dict = {
        "begin": draw(small), "end": draw(small),
        "instructions": [draw(st.lists(small, min_size=4, max_size=6)) for _ in range(n)],
        "timeline": draw(st.one_of(st.none(), st.lists(st.lists(st.integers(-2, 1 << 39),
                                                                min_size=2, max_size=2),
                                                       max_size=5))),
        "waitcnt": draw(st.one_of(st.none(), st.lists(st.tuples(small, st.lists(st.lists(
            st.integers(0, 9), max_size=2), max_size=2)).map(list), max_size=3))),
    }
    if draw(st.booleans()):
        wave["cu"] = draw(st.one_of(st.none(), small))
    for key in draw(st.lists(st.text(max_size=5), max_size=2)):
        wave.setdefault(key, draw(json_values))
    doc = {"wave": wave, **draw(st.dictionaries(st.text(max_size=5).filter(lambda k: k != "wave"),
                                                json_values, max_size=3))}
    text = orjson.dumps(doc)
    if draw(st.booleans()):  # the same document with whitespace around tokens
        text = text.replace(b",", b" ,\n\t").replace(b":", b": ")
    return text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wave_docs())
def test_accepted_documents_read_exactly_as_orjson(mod, data: bytes) -> None:
    sw = scan(mod, data)
    if sw is None:
        return
    assert _got(sw) == _expected(orjson.loads(data))


@settings(max_examples=100, deadline=None)
@given(wave_docs(), st.data())
def test_a_damaged_file_is_never_accepted_when_orjson_rejects_it(mod, data: bytes, draw) -> None:
    pos = draw.draw(st.integers(0, max(0, len(data) - 1)))
    cut = draw.draw(st.sampled_from(["truncate", "flip", "insert"]))
    if cut == "truncate":
        bad = data[:pos]
    elif cut == "flip":
        bad = data[:pos] + bytes([draw.draw(st.integers(0, 255))]) + data[pos + 1:]
    else:
        bad = data[:pos] + draw.draw(st.binary(min_size=1, max_size=3)) + data[pos:]
    sw = scan(mod, bad)
    if sw is not None:  # accepted: orjson must read the same values
        assert _got(sw) == _expected(orjson.loads(bad))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(-50, 400), st.integers(-20, 60)), min_size=1, max_size=30),
       st.lists(st.tuples(st.integers(0, 6), st.integers(0, 40)), max_size=40),
       st.integers(-30, 60))
def test_native_charge_equals_the_python_charge(mod, recs, timeline, begin) -> None:
    times = [t for t, _ in recs]
    durations = [d for _, d in recs]
    ends, m = [], None
    for t, d in recs:  # running max of time + duration, as _prepare makes it
        m = t + d if m is None else max(m, t + d)
        ends.append(m)
    states = tuple(s for s, _ in timeline)
    cycles = tuple(c for _, c in timeline)
    py = [0] * (len(recs) * N_STATES)
    charge_windows(ends, states, cycles, begin, py)
    acc = array("q", bytes(8 * len(py)))
    mod.charge(acc, array("q", times), array("q", durations), array("q", states),
               array("q", cycles), begin)
    assert list(acc) == py


@settings(max_examples=200, deadline=None)
@given(st.lists(json_values.filter(lambda v: isinstance(v, list)) | st.recursive(
    st.integers(-1000, 1000), lambda inner: st.lists(inner, max_size=3), max_leaves=8), max_size=3),
    st.lists(st.recursive(st.integers(-3, 3), lambda inner: st.lists(inner, max_size=3),
                          max_leaves=6), max_size=3))
def test_edges_key_equal_exactly_when_lists_equal(mod, a, b) -> None:
    ka = mod.edges_key(orjson.dumps(a))
    kb = mod.edges_key(orjson.dumps(b))
    if ka is not None and kb is not None:
        assert (ka == kb) == (a == b)
        assert (ka == b"") == (a == [])


def _analysis(path: Path, pure: bool, monkeypatch, *extra: str) -> bytes:
    if pure:
        monkeypatch.setenv(PURE_PYTHON_ENV, "1")
    else:
        monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
    res = run_cli("analyze", "--dir", str(path), "--format", "json", *extra)
    assert res.exit_code == 0, res.stderr
    return res.stdout.encode()


@pytest.mark.parametrize("name", ["gfx950/vec_add", "gfx942/ck_bmm"])
def test_corpus_analysis_identical_with_and_without_native(mod, corpus, monkeypatch, name) -> None:
    root = corpus_path("att", *name.split("/"))
    dirs = sorted(root.rglob("ui_output_agent_*_dispatch_*")) or [root]
    for d in dirs:
        assert _analysis(d, False, monkeypatch, "--detail") == _analysis(d, True, monkeypatch,
                                                                        "--detail")


def test_generated_analysis_identical_with_and_without_native_and_with_spills(
        mod, tmp_path, monkeypatch) -> None:
    spec = DispatchSpec(waves=40, layout=Layout(ses=(0, 1), simds=2, slots=3, other_cus=(0,)),
                        variants=3, program=InstructionMix(loop_trips=4))
    d = make_dispatch(tmp_path, spec, seed=3)
    pure = _analysis(d, True, monkeypatch)
    assert _analysis(d, False, monkeypatch) == pure
    # int64 accumulators spilled into Python ints every wave: still the same integers
    monkeypatch.setattr(wave_groups, "SPILL_WAVES", 1)
    monkeypatch.setattr(wave_groups, "FOLD_SPILL_WAVES", 1)
    assert _analysis(d, False, monkeypatch) == pure
    monkeypatch.setattr(wave_groups, "FOLD_SPILL_WAVES", 3)
    assert _analysis(d, False, monkeypatch) == pure


def test_odd_wave_files_fall_back_with_the_same_results(mod, tmp_path, monkeypatch) -> None:
    """Waves the scanner hands back (floats, a sixth column, escaped keys) in one dispatch: the
    analysis equals the pure-Python one, which reads every file with orjson."""
    spec = DispatchSpec(waves=8, layout=Layout(ses=(0,), simds=2, slots=2, other_cus=(0,)))
    d = make_dispatch(tmp_path, spec, seed=5)
    files = sorted(d.glob("se*_sm*_sl*_wv*.json"))
    doc = orjson.loads(files[0].read_bytes())
    doc["wave"]["instructions"] = [r + [0] for r in doc["wave"]["instructions"]]
    files[0].write_bytes(orjson.dumps(doc))
    files[1].write_bytes(files[1].read_bytes().replace(b'"wave"', b'"\\u0077ave"'))
    doc = orjson.loads(files[2].read_bytes())
    doc["duration"] = 1.5
    doc["wave"]["timeline"] = [[s, c] for s, c in doc["wave"]["timeline"]]
    files[2].write_bytes(orjson.dumps(doc, option=orjson.OPT_INDENT_2))
    assert scan(mod, files[0].read_bytes()) is None
    assert scan(mod, files[1].read_bytes()) is None
    assert scan(mod, files[2].read_bytes()) is not None  # indented, float elsewhere: still read
    assert _analysis(d, False, monkeypatch) == _analysis(d, True, monkeypatch)


def test_malformed_wave_deep_in_a_capture_is_named_on_both_paths(mod, tmp_path, monkeypatch) -> None:
    spec = replace(DispatchSpec(waves=6, layout=Layout(ses=(0,), simds=1, slots=2, other_cus=(0,))))
    d = make_dispatch(tmp_path, spec, seed=1)
    bad = sorted(d.glob("se*_sm*_sl*_wv*.json"))[-1]
    bad.write_bytes(bad.read_bytes()[:-40])
    for pure in (False, True):
        monkeypatch.setenv(PURE_PYTHON_ENV, "1" if pure else "0")
        res = run_cli("analyze", "--dir", str(d), "--format", "json")
        assert res.exit_code == 3
        assert bad.name in res.json()["error"]["message"]


def test_two_sequences_under_one_hash_stay_apart(mod, tmp_path, monkeypatch) -> None:
    """The native path keys sequence groups by a 64-bit hash and compares the columns on a hit:
    force every wave onto one hash and the results must not change."""
    from hotspot.att.engine import native as wavescan

    spec = DispatchSpec(waves=12, layout=Layout(ses=(0,), simds=2, slots=3, other_cus=(0,)),
                        variants=3)
    d = make_dispatch(tmp_path, spec, seed=9)
    pure = _analysis(d, True, monkeypatch)
    real_scan = wavescan.scan

    def colliding(m, data):
        sw = real_scan(m, data)
        return sw._replace(sequence_hash=42) if sw is not None else None

    from hotspot.att.engine import wavepass
    monkeypatch.setattr(wavepass, "scan", colliding)
    monkeypatch.setattr(wave_groups, "FOLD_HASH_MASK", 0)  # the fused pass: one hash for all
    assert _analysis(d, False, monkeypatch) == pure


def test_built_extension_matches_the_abi_the_package_calls(mod) -> None:
    """The build in use declares the ABI native.py was written for; a build from older source
    (no ABI, or another one) is not used, so an editable install not rebuilt after an update falls
    back to pure Python instead of failing mid-run (as a stale fold_lines did)."""
    from types import SimpleNamespace

    from hotspot.att.engine.native import NATIVE_ABI, is_current

    assert mod.ABI == NATIVE_ABI and is_current(mod)
    assert not is_current(SimpleNamespace())
    assert not is_current(SimpleNamespace(ABI=NATIVE_ABI - 1))
    src = Path(__file__).resolve().parents[1] / "hotspot/att/engine/_wavescan.c"
    assert f"#define WAVESCAN_ABI {NATIVE_ABI}\n" in src.read_text()


# The compact row reader (whole rows at a time: `row_simd` in _wavescan.c) against orjson: numbers
# of every length up to past the 2**40 bound, signs and leading zeros, rows near the end of the
# text (where the reader falls back to the per-token one) and far from it.
row_int = st.one_of(st.integers(0, 9), st.integers(10, 10**8), st.integers(0, (1 << 40) + 10**6),
                    st.integers(-(10**6), -1))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(row_int, min_size=5, max_size=5), min_size=1, max_size=40),
       st.lists(st.lists(st.integers(0, 10**13), min_size=2, max_size=2), max_size=20),
       st.integers(0, 64), st.sampled_from([b"", b"0", b"00", b"-", b".5", b"e1", b" "]))
def test_compact_rows_read_exactly_as_orjson(mod, rows, timeline, pad, junk) -> None:
    tail = b'"z":"' + b"x" * pad + b'"'
    data = (b'{"wave":{"begin":1,"end":2,"instructions":' + orjson.dumps(rows)
            + b',"timeline":' + orjson.dumps(timeline) + b"}," + tail + b"}")
    sw = scan(mod, data)
    doc = orjson.loads(data)
    fits = all(abs(v) < (1 << 40) for r in rows for v in r) and \
        all(v < (1 << 40) for r in timeline for v in r) and sum(r[1] for r in timeline) < (1 << 40)
    assert (sw is not None) == fits
    if sw is not None:
        assert _got(sw) == _expected(doc)
    # a damaged number inside a row (a leading zero, a sign alone, a fraction, whitespace) is
    # never read as another value: refused, or read as orjson reads it
    at = data.index(b"[[") + 2
    bad = data[:at] + junk + data[at:]
    got = scan(mod, bad)
    if got is not None:
        assert _got(got) == _expected(orjson.loads(bad))
