"""The wave pass: wave states per instruction, barriers, sampling, map-reduce merge, bad input."""

from __future__ import annotations

import json
import pickle
from dataclasses import asdict
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hotspot.att.barriers import BARRIER_RELEASE_TOLERANCE
from hotspot.att.engine.wavepass import (
    PassOptions,
    chunks,
    describe,
    _run_chunk_worker,
    run_chunk_open,
    run_wave_pass,
    sample_wave_files,
)
from hotspot.att.waits.waitcnt_rules import build_tables
from hotspot.capture.codejson import read_code_json
from hotspot.capture.layout import WaveFile, open_dispatch
from tests.test_analyze_corpus import DISPATCH_DIRS
from tests.test_wavepass_builder import (
    IMMED,
    MESSAGE,
    SALU,
    VALU,
    Schedule,
    W,
    build_dispatch,
)


def test_states_are_charged_to_the_current_instruction(cli, tmp_path):
    program = [("s_mov_b32 s0, 0", "/src/a.py:1"), ("s_waitcnt lgkmcnt(0)", "/src/a.py:2"),
               ("s_endpgm", "/src/a.py:2")]
    # idle 4 before row 1, row 1 issues 4; row 2 waits 10 and issues 4; row 3 issues 4
    recs = Schedule(100).op(1, SALU, gap=4).op(2, IMMED, stall=10).op(3, MESSAGE).records
    d = build_dispatch(tmp_path / "d", program, [W(recs, 100)])
    ws = cli("analyze", d, "--format", "json", "--topk", "0").json()["data"]["wave_states"]
    assert ws["states"] == {"empty": 0, "idle": 4, "exec": 12, "wait": 10, "stall": 0}
    per = {r["label"]: (r["idle"], r["exec"], r["wait"]) for r in ws["instructions"]}
    assert per["#1 s_mov_b32 s0, 0"] == (4, 4, 0)
    assert per["#2 s_waitcnt lgkmcnt(0)"] == (0, 4, 10)
    lines = {r["label"]: (r["exec"], r["wait"]) for r in ws["lines"]}
    assert lines == {"/src/a.py:2": (8, 10), "/src/a.py:1": (4, 0)}


@pytest.mark.parametrize("rel", DISPATCH_DIRS)
def test_corpus_state_attribution_sums_to_the_timelines(corpus, rel):
    d = corpus / rel
    part = run_wave_pass(open_dispatch(d).wave_files,
                         PassOptions(build_tables(read_code_json(d / "code.json").rows)))
    sums = [sum(st[i] for st in part.line_states.values()) for i in range(5)]
    assert sums == part.totals.states
    # FORMATS.md §1.2 says the timeline sums to end - begin; real waves overshoot by 0..2 cycles
    overshoot = sum(sums) - part.totals.cycles
    assert 0 <= overshoot <= 2 * part.totals.waves


def test_barrier_spread_within_one_cu(cli, tmp_path):
    program = [("v_mov_b32_e32 v0, 0", "/src/b.py:1"), ("s_barrier", "/src/b.py:2"),
               ("s_endpgm", "/src/b.py:3")]

    def wave(arrive: int, release: int) -> list[list[int]]:
        return [[arrive - 4, VALU, 0, 4, 1], [arrive, IMMED, release - arrive, release - arrive + 4, 2],
                [release + 4, MESSAGE, 0, 4, 3]]

    waves = [W(wave(100, 304), 96, simd=0), W(wave(150, 305), 146, simd=1),
             W(wave(300, 306), 296, simd=2),
             # same CU but released long after: another workgroup, alone (no spread)
             W(wave(900, 904), 896, simd=3),
             # another CU: never grouped with the first three
             W(wave(120, 306), 116, simd=0, slot=1, cu=2)]
    d = build_dispatch(tmp_path / "d", program, waves)
    (b,) = cli("analyze", d, "--format", "json").json()["data"]["barriers"]
    assert b["line_number"] == 2 and b["instances"] == 5
    assert b["stall"] == 204 + 155 + 6 + 4 + 186
    assert b["groups"] == 1 and b["mean_waves_per_group"] == 3.0
    assert b["median_spread_cycles"] == 200 and b["max_spread_cycles"] == 200
    assert BARRIER_RELEASE_TOLERANCE < 900 - 306


def _files(n_simd: int, per: int) -> list[WaveFile]:
    return [WaveFile(Path(f"se0_sm{s}_sl0_wv{k}.json"), 0, s, 0, k) for s in range(n_simd)
            for k in range(per)]


def test_sampling_is_even_across_simds_and_within():
    files = _files(4, 10)
    picked = sample_wave_files(files, 8)
    assert [(w.simd, w.n) for w in picked] == [(0, 2), (0, 7), (1, 2), (1, 7), (2, 2), (2, 7),
                                               (3, 2), (3, 7)]
    assert sample_wave_files(files, None) == files and sample_wave_files(files, 99) == files
    uneven = _files(1, 6) + [WaveFile(Path("x"), 1, 0, 0, 0)]
    assert len(sample_wave_files(uneven, 3)) == 3


def test_chunks_merge_to_the_whole_and_are_picklable(corpus):
    d = corpus / "att/gfx950/vec_add"
    opts = PassOptions(build_tables(read_code_json(d / "code.json").rows))
    descs = describe(open_dispatch(d).wave_files)[:40]
    whole = run_chunk_open(descs, opts).finish()
    # what the pool's workers return (groups still open) merged as the parent merges them
    parts = [_run_chunk_worker(c, opts) for c in chunks(descs, 7)]
    # what a process pool needs: the worker, its arguments and its result pickle
    assert pickle.loads(pickle.dumps(_run_chunk_worker)) is _run_chunk_worker
    parts = [pickle.loads(pickle.dumps(p)) for p in parts]
    merged = parts[0]
    for p in parts[1:]:
        merged.merge(p)
    assert asdict(merged.finish()) == asdict(whole)
    assert asdict(pickle.loads(pickle.dumps(whole))) == asdict(whole)
    pickle.dumps((descs, opts))


def test_max_waves_samples_and_says_so(corpus, cli):
    run = cli("analyze", corpus / "att/gfx950/vec_add", "--format", "json", "--max-waves", "8")
    assert run.exit_code == 0
    doc = run.json()
    assert doc["data"]["attribution"]["waves_read"] == 8
    assert doc["data"]["attribution"]["sampled"] is True
    assert doc["data"]["wave_states"]["waves_read"] == 8
    assert any("--max-waves 8: read 8 of 632" in w for w in doc["warnings"])
    assert "wave-mismatch" not in {f["id"] for f in doc["data"]["findings"]}
    assert cli("analyze", corpus / "att/gfx950/vec_add", "--max-waves", "0").exit_code == 2


def test_malformed_wave_record_is_a_one_line_input_error(cli, tmp_path):
    program = [("s_mov_b32 s0, 0", "/src/a.py:1")]
    d = build_dispatch(tmp_path / "d", program, [W(Schedule(0).op(1, SALU).op(1, SALU).records, 0)])
    f = d / "se0_sm0_sl0_wv0.json"
    doc = json.loads(f.read_text())
    doc["wave"]["instructions"][1] = [0, 2, "x", 4]
    f.write_text(json.dumps(doc))
    run = cli("analyze", d)
    assert run.exit_code == 3
    assert "se0_sm0_sl0_wv0.json" in run.stderr and "Traceback" not in run.stderr


@given(st.lists(st.integers(-10**12, 10**12), min_size=1, max_size=40))
def test_barrier_median_and_mean_match_statistics(values):
    import statistics

    from hotspot.att.barriers import _mean, _median
    assert _median(values) == statistics.median(values)
    assert _mean(values) == statistics.fmean(values)
