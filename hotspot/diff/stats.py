"""The resampling test of `hotspot diff` (plain Python, no numpy).

Each row of a side is a ratio of sums over its traced waves: Σ cycles / Σ executions (cycles per
execution of the row's instructions). A bootstrap replicate draws each side's waves with
replacement (the unit is the workgroup: its waves share its placement and memory traffic) and
multiplies each side's ratio by a capture factor exp(σ·z), z ~ N(0, 1), one per side and
replicate and shared by every row: the clock and contention of one capture, which its wave spread
does not show. σ is the floor measured on a few captures (hotspot/diff/noise.py), a plug-in
estimate treated as known (its own uncertainty is not drawn: noise.py says how little three
captures pin it down; a side's replicate dispatches raise it when they measure more). Per row: the
log ratio after/before of the replicates gives the percentile interval on the change and the
p-value that inverts it (twice the share of the replicates' quantile function on the far side of
0, read as the interval reads it; with under MIN_TAIL replicates there, raised to the normal tail
at their mean and sd when that is larger and still under 1 − level, and never under 1/(B + 1)),
so at the test's level an interval excludes 0 exactly when p < 1 − level; q-values control the
false discovery rate over the tested rows of one diff (Benjamini–Hochberg). When the rows show more waves
than are resampled (the largest captures), the replicates are moved onto the shown change
(`centres`): its interval and its p come from one distribution, about the change shown.

Speed: every row's numerator and denominator of one wave are packed into one Python integer (a
fixed-width field each; rows with equal denominators, all of one diff's, share one field), so a
replicate's sums over the drawn waves for all rows are a handful of big-integer additions,
unpacked with one `to_bytes`; the per-row work is C-level slicing and one chain of C-level maps
over the replicates (~0.05 s for 35 rows: ~7% of a fresh diff of two 32-wave captures).
"""

from __future__ import annotations

import math
import random
from array import array
from bisect import bisect_left, bisect_right
from itertools import repeat
from operator import add, mul, sub, truediv
from collections.abc import Sequence
from statistics import NormalDist

from dataclasses import field

from hotspot.record import record

# Below this many replicates in the tail, the counted p is coarse (a step of 1/B): the normal tail
# at the replicates' mean and sd may raise it (never lower it: a normal fit to a lumpy or skewed
# distribution can put its tail far below what the replicates show).
MIN_TAIL = 10
# Fixed-point scale of the numerators (blamed stall is a sum of fractions of a cycle).
SCALE = 64


@record
class SideSamples:
    """Per-wave numerator and denominator of each tested row (row i at index i), one side."""

    numerators: list[list[float]]  # [row][wave], cycles (>= 0)
    denominators: list[list[int]]  # [row][wave], units (waves, or executed instructions) (>= 0)
    capture_sd: float  # σ of this side's capture factor (log scale)
    # the units drawn: wave indexes per workgroup (hotspot/diff/workgroups.py; [] = each wave its
    # own), and workgroup indexes per stratum (drawn within it; [] = one stratum)
    clusters: list[list[int]] = field(default_factory=list)
    strata: list[list[int]] = field(default_factory=list)

    @property
    def waves(self) -> int:
        return len(self.numerators[0]) if self.numerators else 0

    def units(self) -> list[list[int]]:
        return self.clusters or [[w] for w in range(self.waves)]

    def layers(self) -> list[list[int]]:
        return self.strata or [list(range(len(self.units())))]

    @property
    def independent(self) -> int:
        """Independent units behind the spread: workgroups, less one per extra stratum (each
        stratum's mean is its own)."""
        return max(1, len(self.units()) - (len(self.layers()) - 1))


@record
class RowTest:
    change: float  # after/before − 1 of the ratios
    ci: tuple[float, float]  # percentile interval of the change, at `level`
    p: float  # two-sided bootstrap p-value of "no change"


def bootstrap(before: SideSamples, after: SideSamples, replicates: int, seed: int,
              level: float, row_sd: Sequence[float] = (),
              centres: Sequence[float | None] = ()) -> list[RowTest | None]:
    """One RowTest per row (None where a side has no execution of it). `row_sd`: per row, the σ
    (log scale) of a factor of its own on each side, on top of the capture's (a row whose
    run-to-run variance is not the capture's: hotspot/diff/api.py `_own_floors`); 0 = none.
    `centres`: per row, the change (after/before − 1) the test is about when it is not the
    resampled waves' own (the rows show every traced wave, the test resamples a spread subset of
    the largest captures): the replicates' log changes are moved by log(1 + centre) − log(the
    samples' change), so the interval, the p-value and `change` are all about it; None = the
    samples' own."""
    rows = len(before.numerators)
    rng = random.Random(seed)
    sums_b = _replicate_sums(before, replicates, rng)
    sums_a = _replicate_sums(after, replicates, rng)
    # log capture factors: σ·z per side and replicate
    f_b = [before.capture_sd * rng.gauss(0.0, 1.0) for _ in range(replicates)]
    f_a = [after.capture_sd * rng.gauss(0.0, 1.0) for _ in range(replicates)]
    # the rows' own factors, drawn after the shared ones (in row order: same seed, same draws)
    own: dict[int, tuple[list[float], list[float]]] = {}
    for r, sd in enumerate(row_sd):
        if sd > 0:
            own[r] = ([a + sd * rng.gauss(0.0, 1.0) for a in f_b],
                      [a + sd * rng.gauss(0.0, 1.0) for a in f_a])
    inflate_b = small_sample_inflation(before.independent, level)
    inflate_a = small_sample_inflation(after.independent, level)
    # each side's units × SCALE per replicate, once per distinct denominator field (the rows of
    # one diff share theirs: the wave, or its executed instructions)
    scaled: dict[int, Sequence[int]] = {}

    def units(dens: Sequence[int]) -> Sequence[int]:
        got = scaled.get(id(dens))
        if got is None:
            got = scaled[id(dens)] = list(map(mul, dens, repeat(SCALE)))
        return got

    out: list[RowTest | None] = []
    for r in range(rows):
        rb = _ratio(sum(before.numerators[r]), sum(before.denominators[r]))
        ra = _ratio(sum(after.numerators[r]), sum(after.denominators[r]))
        if not rb or not ra:
            out.append(None)
            continue
        fb, fa = own.get(r, (f_b, f_a))
        lb = _log_ratios(sums_b[2 * r], units(sums_b[2 * r + 1]), rb, inflate_b, fb)
        la = _log_ratios(sums_a[2 * r], units(sums_a[2 * r + 1]), ra, inflate_a, fa)
        if None in la or None in lb:
            logs = sorted(a - b for a, b in zip(la, lb) if a is not None and b is not None)
        else:
            logs = sorted(map(sub, la, lb))
        if not logs:
            out.append(None)
            continue
        change = ra / rb - 1
        centre = centres[r] if r < len(centres) else None
        if centre is not None:
            assert centre > -1, centre  # a shown change of −100%: a row with no cycles after
            # the shown change: the spread the subset measured, moved onto it (order kept)
            shift = math.log1p(centre) - math.log(ra / rb)
            logs = list(map(add, logs, repeat(shift)))
            change = centre
        lo, hi = _quantile(logs, (1 - level) / 2), _quantile(logs, (1 + level) / 2)
        out.append(RowTest(change, (math.exp(lo) - 1, math.exp(hi) - 1), _p_inverting(logs, level)))
    return out


def _p_inverting(logs: Sequence[float], level: float) -> float:
    """The two-sided p-value of "no change" that inverts the percentile interval of the sorted
    `logs` (as `_quantile` reads them). p = 2 × the share u of the quantile function on the far
    side of 0 (interpolated between order statistics, as the interval's ends are): the interval at
    any level L excludes 0 exactly when that share is under 1 − L. With under MIN_TAIL replicates
    out there the count is coarse: p is raised to the normal tail at the replicates' mean and sd
    when that is larger and still under 1 − level, and is never under 1/(n + 1) (what n
    replicates can show). So at `level` the interval excludes 0 exactly when p < 1 − level; at
    another level L, p < 1 − L still means the interval excludes 0 (p is never under the share)."""
    n = len(logs)
    least = 1 / (n + 1)
    if n == 1:
        return 1.0 if logs[0] == 0 else least
    if logs[0] == logs[-1]:
        return 1.0 if logs[0] == 0 else least
    above = bisect_right(logs, 0.0)  # logs[above] is the first > 0
    below = bisect_left(logs, 0.0) - 1  # logs[below] is the last < 0
    # u_high: where the quantile function turns > 0; u_low: where it stops being < 0
    u_high = 0.0 if above == 0 else 1.0 if above == n else (
        above - 1 - logs[above - 1] / (logs[above] - logs[above - 1])) / (n - 1)
    u_low = 0.0 if below < 0 else 1.0 if below == n - 1 else (
        below - logs[below] / (logs[below + 1] - logs[below])) / (n - 1)
    p = min(1.0, 2 * min(u_high, 1 - u_low))
    across = min(above, n - below - 1)  # replicates on the far side of 0 (or at it)
    if across < MIN_TAIL and p < 1 - level:
        sd = _sd(logs)
        mean = sum(logs) / n
        tail = 2 * NormalDist().cdf(-abs(mean) / sd) if sd > 0 else 0.0
        raised = max(p, tail, least)
        return raised if raised < 1 - level else max(p, least)
    return p


def _sd(values: Sequence[float]) -> float:
    m = sum(values) / len(values)
    return math.sqrt(sum((v - m) ** 2 for v in values) / max(1, len(values) - 1))


def _ratio(num: float, den: float) -> float:
    return num / den if den else 0.0


def _replicate_sums(side: SideSamples, replicates: int, rng: random.Random) -> list[Sequence[int]]:
    """Per field (row r's numerator × SCALE at 2r, its denominator at 2r + 1): its sum over the
    drawn waves of each replicate. Rows whose denominators are equal share one summed field (the
    same sequence at each of their 2r + 1)."""
    numerators, denominators, den_of = _fields(side)
    packed, words = _pack(numerators + denominators, side.waves)
    fields = len(numerators) + len(denominators)
    # a workgroup's fields are the sums of its waves' (packing is linear: no field overflows,
    # `_pack` sized them for the sum over every wave)
    units = [sum(packed[w] for w in members) for members in side.units()]
    size = fields * words * 8
    buf = bytearray()
    pick = units.__getitem__
    # each stratum's workgroups drawn among themselves: every replicate's draws at once, then
    # summed a replicate's slice at a time
    draws = [(len(layer), list(map(pick, rng.choices(layer, k=len(layer) * replicates))))
             for layer in side.layers()]
    for r in range(replicates):
        total = 0
        for k, drawn in draws:
            total += sum(drawn[r * k:(r + 1) * k])
        buf += total.to_bytes(size, "little")
    flat = array("Q", bytes(buf))
    stride = fields * words
    summed: list[Sequence[int]]
    if words == 1:
        summed = [flat[j::stride] for j in range(fields)]
    else:  # wide fields (sums past 2**64): each is `words` little-endian 64-bit words
        summed = []
        for j in range(fields):
            parts = [flat[j * words + k::stride] for k in range(words)]
            summed.append([sum(w << (64 * k) for k, w in enumerate(ws)) for ws in zip(*parts)])
    rows = len(numerators)
    out: list[Sequence[int]] = []
    for r in range(rows):
        out += (summed[r], summed[rows + den_of[r]])
    return out


def _fields(side: SideSamples) -> tuple[list[list[int]], list[Sequence[int]], list[int]]:
    """Each row's numerators × SCALE (fixed point), the distinct denominator lists, and per row
    the index of its own among them."""
    numerators = [[round(v * SCALE) for v in num] for num in side.numerators]
    distinct: list[Sequence[int]] = []
    den_of: list[int] = []
    for den in side.denominators:
        k = next((i for i, d in enumerate(distinct) if d is den or d == den), None)
        if k is None:
            k = len(distinct)
            distinct.append(den)
        den_of.append(k)
    return numerators, distinct, den_of


def _pack(fields: Sequence[Sequence[int]], n: int) -> tuple[list[int], int]:
    """Each wave's fields (field j's value of wave w at fields[j][w]) as one integer, and the
    64-bit words per field: wide enough that the sum of n draws of the largest value fits (one
    word for any real capture)."""
    largest = max((max(f, default=0) for f in fields), default=0)
    if fields and min(min(f, default=0) for f in fields) < 0:
        raise ValueError("a per-wave value is negative")
    words = max(1, -(-(largest * max(1, n)).bit_length() // 64))
    out = []
    for chunk in zip(*fields) if fields else [() for _ in range(n)]:
        if words == 1:
            out.append(int.from_bytes(array("Q", chunk).tobytes(), "little"))
        else:
            out.append(sum(v << (64 * words * j) for j, v in enumerate(chunk)))
    return out, words


def small_sample_inflation(waves: int, level: float) -> float:
    """How much a side's bootstrap spread is widened: √(n/(n−1)) (the bootstrap's variance of a
    mean is (n−1)/n of the unbiased one) times t(n−1)/z at the interval's level (few waves say
    little about their own spread, as Student's t says: at 95%, 2 waves are widened 9.2 times, 4
    waves 1.9, 32 waves 1.06)."""
    if waves < 2:
        return 1.0
    q = (1 + level) / 2
    return math.sqrt(waves / (waves - 1)) * t_quantile(q, waves - 1) / NormalDist().inv_cdf(q)


def t_quantile(p: float, df: int) -> float:
    """Student's t quantile: exact for 1 and 2 degrees of freedom, else the Cornish-Fisher
    expansion in 1/df (Abramowitz & Stegun 26.7.5; within 0.2% of the exact value at df = 3)."""
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        return (2 * p - 1) * math.sqrt(2 / (4 * p * (1 - p)))
    z = NormalDist().inv_cdf(p)
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    g4 = (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / 92160
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def _log_ratios(nums: Sequence[int], units: Sequence[int], observed: float, inflate: float,
                log_factors: Sequence[float]) -> list[float | None]:
    """log(ratio) per replicate (Σ numerator × SCALE / (Σ units × SCALE)), its spread around the
    observed ratio widened by `inflate` (small_sample_inflation) on the log scale (so a widened
    replicate never reaches a ratio <= 0 and none is dropped), plus the log capture factor (one
    chain of C-level maps: ~10^5 values)."""
    log_obs = math.log(observed)
    obs = repeat(log_obs)
    try:
        raw = map(math.log, map(truediv, nums, units))
        return list(map(add, map(add, map(mul, map(sub, raw, obs), repeat(inflate)), obs),
                        log_factors))
    except (ValueError, ZeroDivisionError):
        pass
    out: list[float | None] = []  # a replicate whose drawn units hold no cycles of the row
    for s, d, lf in zip(nums, units, log_factors):
        out.append(log_obs + (math.log(s / d) - log_obs) * inflate + lf if s > 0 and d else None)
    return out


def _quantile(sorted_values: Sequence[float], q: float) -> float:
    """Linear interpolation between order statistics."""
    pos = q * (len(sorted_values) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def bh_qvalues(pvalues: Sequence[float]) -> list[float]:
    """Benjamini–Hochberg adjusted p-values (q-values), in the input order."""
    m = len(pvalues)
    order = sorted(range(m), key=pvalues.__getitem__)
    q = [1.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, pvalues[i] * m / rank)
        q[i] = max(running, pvalues[i])  # never under p (p·m/m can round one ulp below)
    return q
