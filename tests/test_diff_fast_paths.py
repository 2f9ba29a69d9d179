"""The fast paths of `hotspot diff` give the numbers of the plain computations they replace (issue
34, speed): a sampled wave's per-line sums by straight runs (hotspot/att/engine/samples.py) equal
the per-record fold, and the packed bootstrap (hotspot/diff/stats.py) equals a direct one, replicate
by replicate; end to end, a diff of the first two big flash-attention replicates is the same JSON
with both slow paths put back."""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from pathlib import Path
from statistics import NormalDist

import pytest

from hotspot.att.engine.native import native, scan
from hotspot.att.engine.samples import N_STATES, SequenceFacts, StraightRuns
from hotspot.capture import open_capture, read_wave_bytes
from hotspot.diff import stats
from hotspot.synth import DispatchSpec, InstructionMix, make_dispatch
from tests.conftest import corpus_path

BIG = ("att", "gfx950", "flash_attn_replicates", "big")
FIRST_TWO = [corpus_path(*BIG, "ui_output_agent_25171_dispatch_44"),
             corpus_path(*BIG, "ui_output_agent_27340_dispatch_44_after_loc_fix")]


def _native():
    mod = native()
    if mod is None:
        pytest.skip("the native scanner is not built here: the straight runs are not used")
    return mod


def _record_fold(mod, scanned) -> tuple[list[int], list[int], list[int], list[int]]:
    """(lines, executions, Σ stall, Σ duration) per line by the per-record fold."""
    per_line: dict[int, list[int]] = {}
    n = len(scanned.stalls) // 8
    mod.fold_lines(per_line, {}, scanned.lines, 1, scanned.durations, scanned.stalls,
                   bytes(8 * N_STATES * n))
    sums = list(per_line.values())
    return list(per_line), [v[0] for v in sums], [v[2] for v in sums], [v[1] for v in sums]


def _check_runs(mod, d: Path) -> int:
    """Every wave of `d` whose sequence has straight runs: the same per-line values as the fold.
    Returns the waves checked."""
    cap = open_capture(d, None, None)
    checked = 0
    for wf in cap.wave_files:
        scanned = scan(mod, read_wave_bytes(wf.where, None))
        assert scanned is not None
        lines = memoryview(scanned.lines).cast("q")
        runs = StraightRuns.of(mod, scanned.lines, max(lines) + 1)
        if runs is None:
            continue
        order, hits, stall, duration = _record_fold(mod, scanned)
        assert runs.order == order
        assert runs.hits == hits
        assert runs.sums(scanned.stalls) == stall
        assert runs.sums(scanned.durations) == duration
        # each run is a stretch of consecutive code lines, and the runs tile the records
        assert sum(length for _, length, _, _ in runs.runs) == len(lines)
        for first, length, start, end in runs.runs:
            assert list(lines[start:end]) == list(range(first, first + length))
        checked += 1
    return checked


@pytest.mark.parametrize("d", FIRST_TWO, ids=["25171", "27340"])
def test_straight_runs_equal_the_record_fold_on_real_waves(corpus, d):
    mod = _native()
    assert _check_runs(mod, d) == 32  # every wave of these captures is summed by runs


def test_straight_runs_equal_the_record_fold_on_a_synthetic_capture(tmp_path):
    mod = _native()
    d = make_dispatch(tmp_path, DispatchSpec(waves=6, program=InstructionMix(loop_trips=5)), seed=7)
    _check_runs(mod, d)


def test_short_runs_negative_or_huge_lines_keep_the_record_fold():
    from array import array

    mod = _native()
    tables = None  # the replay is given: SequenceFacts needs no tables then

    def runs_of(values: list[int]):
        lines = array("q", values).tobytes()
        seq = SequenceFacts(tuple(values), tables, ([], [], 0))  # type: ignore[arg-type]
        return seq.straight_runs(mod, lines)

    assert runs_of(list(range(40)) * 3) is not None  # 3 runs of 40 records
    assert runs_of([5, 6] * 50) is None  # a 2-instruction loop: runs of 2 records
    assert runs_of([-1, *range(40)]) is None  # a line number no listing has
    assert runs_of(list(range(1 << 20, (1 << 20) + 40))) is None


# ---------------------------------------------------------------------------------------------
# the bootstrap against a direct computation


def _direct_bootstrap(before: stats.SideSamples, after: stats.SideSamples, replicates: int,
                      seed: int, level: float, row_sd=(), centres=()) -> list[stats.RowTest | None]:
    """The resampling test written out replicate by replicate (no packing, no shared fields):
    the same draws from the same seed, each replicate's sums taken over the waves drawn; a row's
    replicates moved onto its centre (the shown change) when it has one."""
    rng = random.Random(seed)

    def drawn_waves(side: stats.SideSamples) -> list[list[int]]:
        units = side.units()
        layers = [(len(layer), rng.choices(layer, k=len(layer) * replicates))
                  for layer in side.layers()]
        out = []
        for r in range(replicates):
            waves: list[int] = []
            for k, drawn in layers:
                for u in drawn[r * k:(r + 1) * k]:
                    waves.extend(units[u])
            out.append(waves)
        return out

    draws_b, draws_a = drawn_waves(before), drawn_waves(after)
    f_b = [before.capture_sd * rng.gauss(0.0, 1.0) for _ in range(replicates)]
    f_a = [after.capture_sd * rng.gauss(0.0, 1.0) for _ in range(replicates)]
    own = {}
    for r, sd in enumerate(row_sd):
        if sd > 0:
            own[r] = ([x + sd * rng.gauss(0.0, 1.0) for x in f_b],
                      [x + sd * rng.gauss(0.0, 1.0) for x in f_a])

    def logs(side, draws, row, observed, factors):
        inflate = stats.small_sample_inflation(side.independent, level)
        out = []
        for waves, lf in zip(draws, factors):
            s = sum(round(side.numerators[row][w] * stats.SCALE) for w in waves)
            d = sum(side.denominators[row][w] for w in waves)
            # widened on the log scale: exp(log obs + (log r − log obs)·inflate)
            out.append(math.log(observed) + (math.log(s / (d * stats.SCALE)) - math.log(observed))
                       * inflate + lf if s > 0 and d else None)
        return out

    def quantile(xs, q):
        pos = q * (len(xs) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(xs) - 1)
        return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)

    results: list[stats.RowTest | None] = []
    for row in range(len(before.numerators)):
        sb, db = sum(before.numerators[row]), sum(before.denominators[row])
        sa, da = sum(after.numerators[row]), sum(after.denominators[row])
        rb, ra = (sb / db if db else 0.0), (sa / da if da else 0.0)
        if not rb or not ra:
            results.append(None)
            continue
        fb, fa = own.get(row, (f_b, f_a))
        lb = logs(before, draws_b, row, rb, fb)
        la = logs(after, draws_a, row, ra, fa)
        diffs = sorted(a - b for a, b in zip(la, lb) if a is not None and b is not None)
        if not diffs:
            results.append(None)
            continue
        change = ra / rb - 1
        centre = centres[row] if row < len(centres) else None
        if centre is not None:
            shift = math.log1p(centre) - math.log(ra / rb)
            diffs = [d + shift for d in diffs]
            change = centre
        across = min(bisect_right(diffs, 0.0), len(diffs) - bisect_left(diffs, 0.0))
        p = inverting_p(diffs, quantile)
        if across < stats.MIN_TAIL and p < 1 - level:
            mean = sum(diffs) / len(diffs)
            sd = math.sqrt(sum((v - mean) ** 2 for v in diffs) / max(1, len(diffs) - 1))
            tail = 2 * NormalDist().cdf(-abs(mean) / sd) if sd > 0 else 0.0
            # raised, never lowered, and never under what the count supports: 1/(n + 1)
            least = 1 / (len(diffs) + 1)
            p = max(p, tail, least) if max(p, tail, least) < 1 - level else max(p, least)
        lo, hi = quantile(diffs, (1 - level) / 2), quantile(diffs, (1 + level) / 2)
        results.append(stats.RowTest(change, (math.exp(lo) - 1, math.exp(hi) - 1), p))
    return results


def inverting_p(xs: list[float], quantile) -> float:
    """2 × the share of the quantile function on the far side of 0: walked grid point by grid
    point (each order statistic is the quantile at k/(n−1)) to the segment where it crosses 0,
    then the crossing on that segment's line."""
    n = len(xs)
    if xs[0] == xs[-1]:
        return 1.0 if xs[0] == 0 else 0.0
    grid = [quantile(xs, k / (n - 1)) for k in range(n)]
    # u_high: the quantile turns > 0 (after the last grid point <= 0)
    k = max((i for i in range(n) if grid[i] <= 0), default=None)
    u_high = 0.0 if k is None else 1.0 if k == n - 1 else (k - xs[k] / (xs[k + 1] - xs[k])) / (n - 1)
    # u_low: the quantile stops being < 0 (after the last grid point < 0)
    k = max((i for i in range(n) if grid[i] < 0), default=None)
    u_low = 0.0 if k is None else 1.0 if k == n - 1 else (k - xs[k] / (xs[k + 1] - xs[k])) / (n - 1)
    return min(1.0, 2 * min(u_high, 1 - u_low))


def _side(rng: random.Random, rows: int, waves: int, shared: bool, zero_row: int | None
          ) -> stats.SideSamples:
    work = [rng.randint(900, 1100) for _ in range(waves)]
    nums = [[rng.choice((0.0, rng.uniform(0, 5000), float(rng.randint(0, 9000))))
             for _ in range(waves)] for _ in range(rows)]
    dens = [work if shared else [rng.randint(0, 3) for _ in range(waves)] for _ in range(rows)]
    if zero_row is not None:  # a row most waves never run: replicates that draw none of them
        dens[zero_row] = [1 if w == 0 else 0 for w in range(waves)]
        nums[zero_row] = [7.0 if w == 0 else 0.0 for w in range(waves)]
    clusters = [list(range(w, min(w + 4, waves))) for w in range(0, waves, 4)]
    strata = [list(range(0, len(clusters), 2)), list(range(1, len(clusters), 2))]
    return stats.SideSamples(nums, dens, 0.01, clusters, strata)


@pytest.mark.parametrize("shared", [True, False], ids=["shared-units", "own-units"])
def test_bootstrap_equals_the_direct_computation(shared):
    rng = random.Random(5)
    before = _side(rng, 12, 32, shared, zero_row=3)
    after = _side(rng, 12, 32, shared, zero_row=None)
    row_sd = [0.0] * 12
    row_sd[5] = 0.2
    centres = [None] * 12
    centres[2], centres[7] = 0.05, -0.3  # rows shown over more waves than resampled
    fast = stats.bootstrap(before, after, 300, 17, 0.95, row_sd, centres)
    assert fast == _direct_bootstrap(before, after, 300, 17, 0.95, row_sd, centres)
    assert any(t is not None for t in fast)
    assert fast[2] is not None and fast[2].change == 0.05


# ---------------------------------------------------------------------------------------------
# end to end


def test_diff_of_the_first_two_big_captures_equals_the_slow_paths(corpus, cli, monkeypatch):
    _native()
    args = ["diff", *FIRST_TWO, "--format", "json"]
    fast = cli(*args)
    assert fast.exit_code == 0, fast.stderr
    assert cli(*args).json() == fast.json()  # the same seed, the same answer
    # both slow paths back: every wave folded record by record, the bootstrap replicate by
    # replicate
    monkeypatch.setattr(SequenceFacts, "straight_runs", lambda self, mod, lines: None)
    monkeypatch.setattr(stats, "bootstrap", _direct_bootstrap)
    slow = cli(*args)
    assert slow.exit_code == 0, slow.stderr
    assert slow.json() == fast.json()
    data = fast.json()["data"]
    assert data["summary"]["tested"] > 20  # the comparison covered the kernel's rows


def test_assemble_transposes_waves_whose_sequences_meet_one_line_order(tmp_path):
    from hotspot.att.wave_samples import assemble
    from hotspot.capture import WaveFile

    files = [WaveFile(tmp_path / f"se0_sm0_sl{k}_wv0.json", 0, 0, k, 0) for k in range(3)]
    order_a, order_b = [4, 5, 9], [4, 5, 9]  # two sequences (other trip counts), one order
    order_c = [4, 7]  # other lines
    got = {files[0].where: (order_a, [1, 2, 3], [10, 20, 30], [1, 1, 2], {4: 0.5}, (1, 100)),
           files[1].where: (order_b, [4, 5, 6], [40, 50, 60], [1, 1, 3], {}, (1, 200)),
           files[2].where: (order_c, [7, 8], [70, 80], [1, 1], {5: 2.0}, (2, 300))}
    s = assemble(files, got)
    # by hand: lines in first-met order, 0 where a wave did not run the line
    assert list(s.stall) == [4, 5, 9, 7]
    assert s.stall == {4: [1, 4, 7], 5: [2, 5, 0], 9: [3, 6, 0], 7: [0, 0, 8]}
    assert s.latency == {4: [10, 40, 70], 5: [20, 50, 0], 9: [30, 60, 0], 7: [0, 0, 80]}
    assert s.hits == {4: [1, 1, 1], 5: [1, 1, 0], 9: [2, 3, 0], 7: [0, 0, 1]}
    assert s.blame == {4: [0.5, 0.0, 0.0], 5: [0.0, 0.0, 2.0]}
    assert s.placement == [(0, 1, 100), (0, 1, 200), (0, 2, 300)]
    two = assemble(files[:2], got)  # one order: transposed as one sequence
    assert two.stall == {4: [1, 4], 5: [2, 5], 9: [3, 6]} and two.hits[9] == [2, 3]
