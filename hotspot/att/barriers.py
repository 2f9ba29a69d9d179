"""Barrier arrival spread: how long the first wave of a workgroup waits for the last one.

Only waves of one workgroup meet at an `s_barrier`, and the trace does not name workgroups. Waves
of one workgroup share a CU and are released together, so we compare barrier instances of the same
s_barrier line on the same (SE, CU) whose release times (time + stall) lie within
BARRIER_RELEASE_TOLERANCE cycles of each other: such a group is one barrier episode of one
workgroup, and its spread is last arrival - first arrival. Groups with a single traced wave carry
no spread and are only counted.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from hotspot.att.model import CodeRow

# Waves released by one barrier issue within a few cycles of each other (≤ 8 on the gfx942/gfx950
# corpus); 32 keeps them together while separating episodes, which are hundreds of cycles apart.
BARRIER_RELEASE_TOLERANCE = 32


@dataclass(frozen=True)
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
    for inst in sorted(instances, key=lambda a: (a[1], a[0])):
        if first_release is None or inst[1] - first_release > BARRIER_RELEASE_TOLERANCE:
            groups.append([inst])
            first_release = inst[1]
        else:
            groups[-1].append(inst)
    return groups


def barrier_stats(barriers: dict[tuple[int, int, int], list[tuple[int, int]]],
                  rows_by_line: dict[int, CodeRow]) -> list[BarrierStat]:
    per_line: dict[int, dict[str, list]] = {}
    for (_se, _cu, line), instances in barriers.items():
        acc = per_line.setdefault(line, {"instances": [], "spreads": [], "sizes": []})
        acc["instances"].extend(instances)
        for group in group_episodes(instances):
            if len(group) >= 2:
                arrivals = [a for a, _ in group]
                acc["spreads"].append(max(arrivals) - min(arrivals))
                acc["sizes"].append(len(group))
    out = []
    for line, acc in per_line.items():
        row = rows_by_line.get(line)
        spreads = acc["spreads"]
        out.append(BarrierStat(
            line, row.isa if row else "", row.source.label if row and row.source else "",
            len(acc["instances"]), sum(r - a for a, r in acc["instances"]), len(spreads),
            statistics.fmean(acc["sizes"]) if acc["sizes"] else 0.0,
            statistics.median(spreads) if spreads else None, max(spreads) if spreads else None))
    out.sort(key=lambda b: (-b.stall, b.line_number))
    return out
