"""The fused native pass (`Fold` in hotspot/att/engine/_wavescan.c, driven by groups.NativeFold):
every wave it does not fold itself goes to the Python path, and whole analyses stay byte-identical
to HOTSPOT_PURE_PYTHON=1 whichever way each wave went."""

from __future__ import annotations

import orjson
import pytest

from hotspot.att.engine import groups as wave_groups
from hotspot.att.engine.native import scan
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch
from hotspot.att.engine.native import PURE_PYTHON_ENV
from tests.test_wavescan import _analysis, mod  # noqa: F401  (fixture)
from tests.conftest import run_cli


def _dispatch(tmp_path, waves=24, variants=2, seed=4):
    spec = DispatchSpec(waves=waves, layout=Layout(ses=(0, 1), simds=2, slots=2, other_cus=(0,)),
                        variants=variants, program=InstructionMix(loop_trips=3))
    d = make_dispatch(tmp_path, spec, seed=seed)
    return d, sorted(d.glob("se*_sm*_sl*_wv*.json"))


def _edit(path, change) -> None:
    doc = orjson.loads(path.read_bytes())
    change(doc["wave"])
    path.write_bytes(orjson.dumps(doc))


def test_waves_with_other_edges_between_folded_ones(mod, tmp_path, monkeypatch):
    d, files = _dispatch(tmp_path)
    # decoder edges that are not the reconstruction's (a wait blamed on another producer)
    def other_edges(w):
        w["waitcnt"] = [[line, [[max(1, p[0] - 1), 0] for p in prods]] for line, prods in w["waitcnt"]]
    _edit(files[0], other_edges)  # the first wave of a sequence: handed back after adoption
    _edit(files[5], other_edges)
    _edit(files[9], lambda w: w.update(waitcnt=[]))  # no edges: blamed statically
    assert scan(mod, files[5].read_bytes()) is not None  # read by the scanner, not folded in C
    pure = _analysis(d, True, monkeypatch)
    assert _analysis(d, False, monkeypatch) == pure
    monkeypatch.setattr(wave_groups, "FOLD_SPILL_WAVES", 2)
    monkeypatch.setattr(wave_groups, "FOLD_HASH_MASK", 0)
    assert _analysis(d, False, monkeypatch) == pure


@pytest.mark.parametrize("index,change,field", [
    (1, lambda w: w["instructions"][2].__setitem__(2, -1), "negative stall (-1)"),
    (12, lambda w: w["instructions"][3].__setitem__(3, -4), "negative duration (-4)"),
    (14, lambda w: w.update(begin=w["end"] + 1), "'wave.begin'"),
])
def test_values_no_decoder_writes_between_folded_ones_refused_alike(mod, tmp_path, monkeypatch,
                                                                     index, change, field):
    """A wave with a value no decoder writes, among waves folded in C: both paths refuse the
    capture with the same message naming the file and the field (exit 3), nothing folded."""
    d, files = _dispatch(tmp_path)
    _edit(files[index], change)
    assert scan(mod, files[index].read_bytes()) is not None  # read by the scanner, not folded
    outs = []
    for pure in (True, False):
        if pure:
            monkeypatch.setenv(PURE_PYTHON_ENV, "1")
        else:
            monkeypatch.delenv(PURE_PYTHON_ENV, raising=False)
        res = run_cli("analyze", "--dir", str(d), "--format", "json")
        assert res.exit_code == 3, res.stderr
        assert files[index].name in res.stderr and field in res.stderr
        assert orjson.loads(res.stdout)["error"]["code"] == "bad-value"
        outs.append((res.stdout, res.stderr))
    assert outs[0] == outs[1]


def test_fold_routes_waves_and_reports_ranges(mod, tmp_path):
    d, files = _dispatch(tmp_path, waves=6, variants=1)
    fold = mod.Fold(1 << 20)
    data = files[0].read_bytes()
    found, index = fold.wave(data, 0)
    assert index == -1  # a new sequence: handed back
    sw = scan(mod, data)
    assert tuple(found) == tuple(sw)
    cols = [list(sw.column(c)) for c in ("times", "cats", "stalls", "durations", "lines")]
    states, cycles = list(sw.column("states")), list(sw.column("cycles"))
    assert fold.last_ranges() == ([(min(c), max(c)) for c in cols], (min(states), max(states)),
                                  (min(cycles), max(cycles)))
    assert fold.wave(b"{not json", 0) == (None, -1)
    with pytest.raises(ValueError):
        mod.Fold(0)
    with pytest.raises(IndexError):
        fold.take_group(0)


def test_sums_taken_from_c_equal_the_python_groups(mod, tmp_path, monkeypatch):
    """The same dispatch through NativeFold and with every wave forced to the Python path (the
    fused pass disabled by making every group look unregistered): identical partials."""
    from dataclasses import asdict

    from hotspot.att.engine.wavepass import PassOptions, run_wave_pass
    from hotspot.att.waits.waitcnt_rules import build_tables
    from hotspot.capture.codejson import read_code_json
    from hotspot.capture.layout import open_dispatch

    d, _ = _dispatch(tmp_path, waves=30, variants=3)
    files = open_dispatch(d).wave_files
    opts = PassOptions(build_tables(read_code_json(d / "code.json").rows))
    fused = asdict(run_wave_pass(files, opts, 1))
    monkeypatch.setattr(wave_groups.NativeFold, "register", lambda self, wave: None)
    monkeypatch.setattr(wave_groups.NativeFold, "_adopt", lambda self, wave, data, se, simd: False)
    python_only = asdict(run_wave_pass(files, opts, 1))
    assert fused == python_only


@pytest.mark.parametrize("change", [
    lambda w: w["instructions"][1].__setitem__(0, -3),   # negative time
    lambda w: w["instructions"][1].__setitem__(2, -1),   # negative stall
    lambda w: w["instructions"][1].__setitem__(3, -4),   # negative duration
    lambda w: w["instructions"][1].__setitem__(4, -2),   # negative line
    lambda w: w.update(begin=w["end"] + 1),              # begin after end
    lambda w: w["timeline"][0].__setitem__(0, 5),        # a state outside the decoder's enum
])
def test_values_no_decoder_writes_are_handed_back_with_their_ranges(mod, tmp_path, change):
    """The hook for a check of a wave's values: C never folds such a wave, and last_ranges()
    holds what the check needs."""
    from hotspot.att.engine.groups import NativeFold
    from hotspot.att.engine.wavepass import WavePartial
    from hotspot.att.waits.waitcnt_rules import build_tables
    from hotspot.capture.codejson import read_code_json

    d, files = _dispatch(tmp_path, waves=2, variants=1)
    part = WavePartial()
    fused = NativeFold(mod, part, build_tables(read_code_json(d / "code.json").rows))
    assert fused.wave(files[0].read_bytes(), 0) == (True, None)  # adopted, folded in C
    doc = orjson.loads(files[1].read_bytes())
    change(doc["wave"])
    done, sw = fused.wave(orjson.dumps(doc), 0)
    assert not done and sw is not None
    w = doc["wave"]
    cols = list(zip(*w["instructions"]))
    states, cycles = zip(*w["timeline"])
    assert fused.last_ranges() == ([(min(c), max(c)) for c in cols], (min(states), max(states)),
                                   (min(cycles), max(cycles)))


@pytest.mark.parametrize("limit", [0, 40])
def test_long_sequences_fold_on_the_column_path_alike(mod, tmp_path, monkeypatch, limit):
    """Sequences longer than NATIVE_GROUP_MAX_POSITIONS are not registered with the C fold (issue
    19: no C copy of the group, no second scan): their waves take the column path, with sums kept
    as int64 arrays, and the analysis is the pure-Python one, whatever the mix."""
    d, files = _dispatch(tmp_path, waves=30, variants=3)
    every_row = ("--topk", "0", "--plan")
    pure = _analysis(d, True, monkeypatch, *every_row)
    monkeypatch.setattr(wave_groups, "NATIVE_GROUP_MAX_POSITIONS", limit)
    assert _analysis(d, False, monkeypatch, *every_row) == pure
    monkeypatch.setattr(wave_groups, "FOLD_SPILL_WAVES", 2)
    assert _analysis(d, False, monkeypatch, *every_row) == pure
