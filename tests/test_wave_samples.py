"""Per-wave samples (hotspot/att/wave_samples.py, diff's resampling input): summed over the waves
they equal what analyze reports per code line and per blamed producer, and the native scanner and
the pure-Python reader give the same samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from hotspot.att.wave_samples import dispatch_samples
from hotspot.synth import DispatchSpec, InstructionMix, make_dispatch


def _check_against_analysis(cli, d: Path) -> None:
    ds = dispatch_samples(d, None, None, None)
    s = ds.samples
    analysis = cli("analyze", d, "--format", "json", "--topk", "0").json()["data"]
    assert len(s.waves) == analysis["dispatch"]["waves"]
    for i in analysis["instructions"]:
        n = i["line_number"]
        assert sum(s.stall.get(n, [0])) == i["stall"], n
        assert sum(s.latency.get(n, [0])) == i["latency"], n
        assert sum(s.hits.get(n, [0])) == i["hit"], n
    blamed: dict[int, float] = {}
    for w in analysis["waits"]:
        for p in w["producers"]:
            if p["line_number"] is not None:
                blamed[p["line_number"]] = blamed.get(p["line_number"], 0.0) + p["blamed_stall"]
    assert blamed and set(blamed) == {n for n, col in s.blame.items() if any(col)}
    for n, value in blamed.items():
        assert sum(s.blame[n]) == pytest.approx(value, rel=1e-9), n
    listing = {n: isa for n, isa, _ in ds.code}
    assert all(listing[i["line_number"]] == i["isa"] for i in analysis["instructions"])
    assert len(listing) == analysis["dispatch"]["code_rows"]


def test_samples_sum_to_the_analysis_on_a_synthetic_capture(cli, tmp_path):
    d = make_dispatch(tmp_path, DispatchSpec(waves=12, program=InstructionMix(loop_trips=4)), seed=3)
    _check_against_analysis(cli, d)


def test_samples_sum_to_the_analysis_on_a_real_capture(cli, corpus):
    _check_against_analysis(cli, corpus / "att/gfx950/flash_attn_replicates/small"
                            / "ui_output_agent_23205_dispatch_44_after_loc_fix")


def test_native_and_pure_python_give_the_same_samples(tmp_path, monkeypatch):
    from hotspot.att.engine.native import native

    if native() is None:
        pytest.skip("the native scanner is not built here: only the pure-Python path runs")
    d = make_dispatch(tmp_path, DispatchSpec(waves=8, program=InstructionMix(loop_trips=3)), seed=4)
    fast = dispatch_samples(d, None, None, None)
    monkeypatch.setenv("HOTSPOT_PURE_PYTHON", "1")
    assert native() is None
    assert dispatch_samples(d, None, None, None) == fast


def test_max_waves_takes_the_waves_analyze_reads(tmp_path):
    d = make_dispatch(tmp_path, DispatchSpec(waves=16), seed=2)
    s = dispatch_samples(d, None, 5, None).samples
    assert len(s.waves) == 5
    assert all(len(col) == 5 for col in s.stall.values())
