"""Barrier arrival spread: how long the first wave of a workgroup waits for the last one.

Only waves of one workgroup meet at an `s_barrier`, and the trace does not name workgroups. Waves
of one workgroup share a CU and are released together, so we compare barrier instances of the same
s_barrier line on the same (SE, CU) whose release times (time + stall) lie within
BARRIER_RELEASE_TOLERANCE cycles of each other: such a group is one barrier episode of one
workgroup, and its spread is last arrival - first arrival. Groups with a single traced wave carry
no spread and are only counted.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from dataclasses import field
from operator import itemgetter
from types import ModuleType

from hotspot.capture import CodeRow
from hotspot.record import record

# Waves released by one barrier issue within a few cycles of each other (≤ 8 on the gfx942/gfx950
# corpus); 32 keeps them together while separating episodes, which are hundreds of cycles apart.
BARRIER_RELEASE_TOLERANCE = 32


@record
class BarrierStat:
    line_number: int
    isa: str
    source: str
    instances: int  # executions over the waves read
    stall: int  # Σ (release - arrival) over the instances
    groups: int  # episodes with ≥ 2 traced waves (spread measurable)
    mean_waves_per_group: float
    median_spread_cycles: float | None  # last - first arrival, median over groups
    max_spread_cycles: int | None


def group_episodes(instances: list[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """Split (arrival, release) pairs into episodes of near-equal release time."""
    groups: list[list[tuple[int, int]]] = []
    first_release = None
    current: list[tuple[int, int]] = []
    # sorted by (release, arrival): tuples of (release, arrival) sort natively, no key function
    for release, arrival in sorted(zip(map(itemgetter(1), instances),
                                       map(itemgetter(0), instances))):
        if first_release is None or release - first_release > BARRIER_RELEASE_TOLERANCE:
            current = []
            groups.append(current)
            first_release = release
        current.append((arrival, release))
    return groups


@record(frozen=False)
class _LineEpisodes:
    """One barrier line's instances so far: their stall, and each group's spread and size."""

    instances: int = 0
    stall: int = 0
    spreads: list[int] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)


Episodes = tuple[int, int, Sequence[int], Sequence[int]]  # instances, stall, spreads, sizes


def flat_episodes(flat: Sequence[int]) -> Episodes:
    """One (SE, CU, line)'s instances, their stall, and the spread and size of each episode with
    ≥ 2 traced waves, from its flat [arrival, release, ...]: the reference of the C twin
    (hotspot/att/engine/_wavescan.c `episodes`)."""
    arrivals, releases = flat[0::2], flat[1::2]
    spreads, sizes = [], []
    for group in group_episodes(list(zip(arrivals, releases))):
        if len(group) >= 2:
            times = [a for a, _ in group]
            spreads.append(max(times) - min(times))
            sizes.append(len(group))
    return len(arrivals), sum(releases) - sum(arrivals), spreads, sizes


def _episodes(mod: ModuleType | None, flat: Sequence[int]) -> Episodes:
    """`flat_episodes`, in C for the native pass's int64 arrays."""
    if mod is not None and isinstance(flat, array):
        got = mod.episodes(flat, BARRIER_RELEASE_TOLERANCE)
        if got is not None:
            n, stall, spreads, sizes = got
            return n, stall, memoryview(spreads).cast("q"), memoryview(sizes).cast("q")
    return flat_episodes(flat)


def barrier_stats(barriers: Mapping[tuple[int, int, int], Sequence[int]],
                  rows_by_line: dict[int, CodeRow]) -> list[BarrierStat]:
    """Per barrier line, from flat [arrival, release, ...] sequences per (SE, CU, line)."""
    from hotspot.att.engine.native import native

    mod = native()
    per_line: dict[int, _LineEpisodes] = {}
    for (_se, _cu, line), flat in barriers.items():
        acc = per_line.setdefault(line, _LineEpisodes())
        instances, stall, spreads, sizes = _episodes(mod, flat)
        acc.instances += instances
        acc.stall += stall
        acc.spreads.extend(spreads)
        acc.sizes.extend(sizes)
    out = []
    for line, acc in per_line.items():
        row = rows_by_line.get(line)
        spreads = acc.spreads
        out.append(BarrierStat(
            line, row.isa if row else "", row.source.label if row and row.source else "",
            acc.instances, acc.stall, len(spreads),
            _mean(acc.sizes) if acc.sizes else 0.0,
            _median(spreads) if spreads else None, max(spreads) if spreads else None))
    out.sort(key=lambda b: (-b.stall, b.line_number))
    return out


def _mean(values: list[int]) -> float:
    return sum(values) / len(values)


def _median(values: list[int]) -> float:
    """Median (mean of the middle two for an even count), as statistics.median, whose import
    (with random) would cost every hotspot call a few milliseconds."""
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
