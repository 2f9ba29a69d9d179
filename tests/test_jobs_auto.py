"""`--jobs auto`: the decision is a pure function of size, CPUs and sequences; every choice gives
the same output (no timing here: docs/benchmark.md holds the measurements behind the thresholds)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest

from hotspot.att.engine import worker_count as J
from hotspot.att.engine import wavepass
from hotspot.att.engine.worker_count import parse_jobs, plan_pass, pool_possible
from hotspot.att.engine.wavepass import CHUNK_WAVES, PassOptions, run_wave_pass
from hotspot.att.waits.waitcnt_rules import build_tables
from hotspot.capture.codejson import read_code_json
from hotspot.capture.layout import open_dispatch
from hotspot.synth import DispatchSpec, InstructionMix, make_dispatch

GIB = 1 << 30


def test_auto_never_pools_on_two_cpus_whatever_the_size():
    for size in (0, 40 * 2**20, 100 * 2**20, GIB, 20 * GIB):
        assert plan_pass(None, size, 50_000, 2, 1, CHUNK_WAVES).workers == 1
        assert plan_pass(None, size, 50_000, 1, 1, CHUNK_WAVES).workers == 1


def test_auto_pools_only_for_large_inputs_on_many_cpus_with_few_sequences():
    big = J.AUTO_POOL_MIN_BYTES
    assert plan_pass(None, big - 1, 50_000, 16, 1, CHUNK_WAVES).workers == 1
    # one core stays with the parent; capped at AUTO_POOL_MAX_WORKERS
    assert plan_pass(None, big, 50_000, 4, 1, CHUNK_WAVES).workers == 3
    assert plan_pass(None, big, 50_000, 64, 1, CHUNK_WAVES).workers == J.AUTO_POOL_MAX_WORKERS
    many = J.AUTO_POOL_MAX_SEQUENCES
    assert plan_pass(None, big, 50_000, 6, many, CHUNK_WAVES).workers == 5
    assert plan_pass(None, big, 50_000, 16, many + 1, CHUNK_WAVES).workers == 1
    # one work unit: never a pool, even when asked
    assert plan_pass(None, 20 * GIB, CHUNK_WAVES, 64, 1, CHUNK_WAVES).workers == 1
    assert plan_pass(8, 20 * GIB, CHUNK_WAVES, 64, 1, CHUNK_WAVES).workers == 1


def test_explicit_jobs_are_obeyed_above_the_floor():
    floor = J.EXPLICIT_POOL_MIN_BYTES
    assert plan_pass(1, 20 * GIB, 50_000, 64, 1, CHUNK_WAVES).workers == 1
    assert plan_pass(3, floor, 50_000, 2, 100, CHUNK_WAVES).workers == 3
    assert plan_pass(3, floor - 1, 50_000, 64, 1, CHUNK_WAVES).workers == 1


def test_pool_possible_agrees_with_plan_pass():
    for jobs in (None, 1, 2, 5):
        for cpus in (1, 2, 4, 32):
            for files in (1, CHUNK_WAVES, CHUNK_WAVES + 1, 10_000):
                best = max(plan_pass(jobs, size, files, cpus, 1, CHUNK_WAVES).workers
                           for size in (0, 20 * GIB))
                # never a stat-free shortcut where a pool could be chosen
                assert pool_possible(jobs, cpus, files, CHUNK_WAVES) or best == 1


@pytest.mark.parametrize("text,value", [(None, None), ("auto", None), ("AUTO", None), ("1", 1),
                                        ("12", 12)])
def test_parse_jobs(text, value):
    assert parse_jobs(text) == value


@pytest.mark.parametrize("text", ["0", "-2", "x", "1.5", ""])
def test_parse_jobs_refuses(text):
    with pytest.raises(ValueError):
        parse_jobs(text)


def test_bad_jobs_is_a_usage_error(cli):
    run = cli("analyze", "--example", "--jobs", "0", "--format", "json")
    assert run.exit_code == 2
    assert run.json()["error"]["message"] == "--jobs 0: expected auto or a number of processes >= 1"


@pytest.fixture(scope="module")
def many_waves(tmp_path_factory) -> Path:
    # more than two work units, several executed sequences (variants)
    return make_dispatch(tmp_path_factory.mktemp("jobs"),
                         DispatchSpec(waves=3 * CHUNK_WAVES + 5,
                                      program=InstructionMix(loop_trips=2)), seed=3)


def test_pool_and_one_process_give_the_same_partial(many_waves, monkeypatch):
    files = open_dispatch(many_waves).wave_files
    opts = PassOptions(build_tables(read_code_json(many_waves / "code.json").rows))
    one = asdict(run_wave_pass(files, opts, 1))
    monkeypatch.setattr(J, "EXPLICIT_POOL_MIN_BYTES", 0)
    calls = []
    real = wavepass._run_pool
    monkeypatch.setattr(wavepass, "_run_pool", lambda *a: calls.append(a[3]) or real(*a))
    pooled = asdict(run_wave_pass(files, opts, 2))
    assert calls == [2]  # the pool really ran
    assert pooled == one
    assert asdict(run_wave_pass(files, opts, None)) == one


@pytest.mark.parametrize("jobs", ["auto", "1", "2", "3"])
def test_outputs_are_byte_identical_for_any_jobs(cli, many_waves, jobs, monkeypatch):
    monkeypatch.setattr(J, "EXPLICIT_POOL_MIN_BYTES", 0)
    ref = cli("analyze", many_waves, "--format", "json", "--plan", "--detail", "--jobs", "1")
    run = cli("analyze", many_waves, "--format", "json", "--plan", "--detail", "--jobs", jobs)
    assert run.exit_code == ref.exit_code == 0
    assert run.stdout == ref.stdout
