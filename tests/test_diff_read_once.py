"""diff reads each capture once (issue 35, "one pass per capture"): the per-wave samples the test
resamples come from the analysis's own wave pass, so a fresh diff opens every wave file of each
side exactly once, and the samples equal those read on their own."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.conftest import corpus_path
from tests.test_read_once import opens  # noqa: F401  (the fixture)

SMALL = corpus_path("att", "gfx950", "flash_attn_replicates", "small")


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


@pytest.mark.parametrize("cache", [("--no-cache",), ()], ids=["no-cache", "cache"])
def test_fresh_diff_opens_each_wave_file_once_per_side(cli, corpus, tmp_path, opens, cache,
                                                        monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # a fresh result cache
    sides = sorted(p for p in SMALL.iterdir() if p.is_dir())
    before = _copy(sides[0], tmp_path / "b" / sides[0].name)
    after = _copy(sides[1], tmp_path / "a" / sides[1].name)
    opens.clear()
    run = cli("diff", before, after, "--format", "json", *cache)
    assert run.exit_code == 0, run.stderr
    data = run.json()["data"]
    assert data["before"]["samples"] == data["before"]["waves"] > 0
    for side in (before, after):
        root = str(side.resolve())
        waves = sorted(str(p.resolve()) for p in side.glob("se*_sm*_sl*_wv*.json"))
        assert waves
        assert {p: opens[p] for p in waves} == {p: 1 for p in waves}, side
        assert opens[str((side / "code.json").resolve())] == 1
        assert all(n == 1 for p, n in opens.items() if p.startswith(root)), side


def test_pass_samples_equal_samples_read_alone(corpus, tmp_path):
    """The samples the wave pass takes are those the stand-alone read gives, wave for wave."""
    from hotspot.att.model import AnalyzeOptions
    from hotspot.att.wave_samples import MAX_SAMPLE_WAVES, SHARED_KIND, dispatch_samples
    from hotspot.capture import capture_session, shared
    from hotspot.plan.entry_point import analyze

    d = sorted(p for p in SMALL.iterdir() if p.is_dir())[1]
    alone = dispatch_samples(d, None, None, None)
    with capture_session():
        analyze(d, AnalyzeOptions(topk=0, wave_samples=MAX_SAMPLE_WAVES))
        taken = shared(SHARED_KIND, str(d))
    assert taken == alone
    assert taken.samples.placement and len(taken.samples.placement) == len(taken.samples.waves)


def test_pool_workers_take_the_same_samples(corpus, monkeypatch):
    """A wave pass split over worker processes keeps the same per-wave samples as one process."""
    import hotspot.att.engine.worker_count as jobs
    from hotspot.att.engine.wavepass import PassOptions, run_wave_pass
    from hotspot.att.waits.waitcnt_rules import build_tables
    from hotspot.capture import open_capture

    monkeypatch.setattr(jobs, "EXPLICIT_POOL_MIN_BYTES", 0)  # vec_add's waves are small
    cap = open_capture(corpus / "att/gfx950/vec_add")
    files = cap.wave_files
    sample = frozenset(w.where for w in files[::5])  # some in the first chunk, most in the rest
    opts = PassOptions(build_tables(cap.table.rows), None, sample=sample)
    import hotspot.att.engine.wavepass as wavepass

    pools = []
    real_pool = wavepass._run_pool
    monkeypatch.setattr(wavepass, "_run_pool", lambda *a, **k: pools.append(1) or real_pool(*a, **k))
    one = run_wave_pass(files, opts, 1)
    assert not pools
    pooled = run_wave_pass(files, opts, 2)
    assert pools  # the pool ran
    assert len(one.samples) == len(sample) and pooled.samples == one.samples
