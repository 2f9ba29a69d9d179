"""Pure functions: dispatches or stats rows -> ranked kernel rows; markers -> per-region tables."""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Sequence

from hotspot.capture import DispatchRecord, KernelStatRecord, MarkerRecord
from hotspot.trace.family import kernel_family
from hotspot.trace.model import GpuRow, KernelResources, KernelRow, RegionRow
from hotspot.userregex import UserRegex, user_regex

PERCENT = 100.0


def pct_of(part: int, base: int) -> float:
    return part * PERCENT / base if base > 0 else 0.0


def rank(rows: Iterable[KernelRow]) -> list[KernelRow]:
    """Total time descending; the name breaks ties so the order is stable."""
    return sorted(rows, key=lambda r: (-r.total_ns, r.name))


def pct_base(rows: Iterable[KernelRow | KernelStatRecord], excluded: frozenset[str]) -> int:
    return sum(r.total_ns for r in rows
               if kernel_family(r.name) not in excluded)


def _max(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return max(present) if present else None


def _resources(group: Sequence[DispatchRecord]) -> KernelResources | None:
    wgs = [d.workgroup for d in group if d.workgroup is not None]
    res = KernelResources(
        vgpr=_max(d.vgpr for d in group),
        accum_vgpr=_max(d.accum_vgpr for d in group),
        sgpr=_max(d.sgpr for d in group),
        lds_bytes=_max(d.lds_bytes for d in group),
        lds_includes_dynamic=any(d.lds_includes_dynamic for d in group),
        scratch_bytes=_max(d.scratch_bytes for d in group),
        workgroup=max(wgs, key=lambda w: (w[0] * w[1] * w[2], w)) if wgs else None,
    )
    if all(v is None for v in (res.vgpr, res.accum_vgpr, res.sgpr, res.lds_bytes, res.scratch_bytes,
                               res.workgroup)):
        return None
    return res


def kernel_rows(dispatches: Sequence[DispatchRecord], regexes: dict[str, str],
                excluded: frozenset[str] = frozenset()) -> tuple[list[KernelRow], int]:
    """One ranked row per kernel name, and the % base. Every dispatch must have both timestamps."""
    groups: dict[str, list[DispatchRecord]] = defaultdict(list)
    for d in dispatches:
        groups[d.kernel_name].append(d)
    base = sum(d.duration_ns or 0 for d in dispatches if kernel_family(d.kernel_name) not in excluded)
    rows = []
    for name, group in groups.items():
        durations = [d.duration_ns or 0 for d in group]
        total = sum(durations)
        family = kernel_family(name)
        rows.append(KernelRow(
            name=name, family=family, calls=len(group), total_ns=total, avg_ns=total / len(group),
            min_ns=min(durations), max_ns=max(durations),
            pct=None if family in excluded else pct_of(total, base),
            regex=regexes[name], resources=_resources(group),
        ))
    return rank(rows), base


def stats_rows(stats: Sequence[KernelStatRecord], regexes: dict[str, str],
               excluded: frozenset[str] = frozenset()) -> tuple[list[KernelRow], int]:
    """Rows from an already aggregated stats file; pct recomputed so exclusions apply."""
    base = pct_base(stats, excluded)
    rows = []
    for s in stats:
        family = kernel_family(s.name)
        rows.append(KernelRow(
            name=s.name, family=family, calls=s.calls, total_ns=s.total_ns, avg_ns=s.avg_ns,
            min_ns=s.min_ns, max_ns=s.max_ns, pct=None if family in excluded else pct_of(s.total_ns, base),
            regex=regexes[s.name],
        ))
    return rank(rows), base


def gpu_rows(dispatches: Sequence[DispatchRecord]) -> list[GpuRow]:
    groups: dict[tuple[int | None, str | None], list[DispatchRecord]] = defaultdict(list)
    for d in dispatches:
        groups[(d.gpu_id, d.agent)].append(d)
    rows = [GpuRow(gpu=g, agent=a, dispatches=len(ds), gpu_ns=sum(d.duration_ns or 0 for d in ds))
            for (g, a), ds in groups.items()]
    return sorted(rows, key=lambda r: (r.gpu is None, r.gpu or 0, r.agent or ""))


def _merge(spans: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Disjoint, sorted union of closed intervals."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _inside(t: int, starts: list[int], union: list[tuple[int, int]]) -> bool:
    i = bisect_right(starts, t) - 1
    return i >= 0 and t <= union[i][1]


def select_markers(markers: Iterable[MarkerRecord], pattern: str | UserRegex
                   ) -> tuple[dict[str, list[MarkerRecord]], int]:
    """Ranges whose name matches `pattern` (re.search), grouped by name; and the count of instant
    marks (start == end, e.g. roctxMark) that were skipped because they bound no time."""
    rx = pattern if isinstance(pattern, UserRegex) else user_regex(pattern, "--marker")
    by_name: dict[str, list[MarkerRecord]] = defaultdict(list)
    instants = 0
    for m in markers:
        if not rx.search(m.name):
            continue
        if m.end_ns <= m.start_ns:
            instants += 1
            continue
        by_name[m.name].append(m)
    return dict(by_name), instants


def region_rows(dispatches: Sequence[DispatchRecord], markers: dict[str, list[MarkerRecord]],
                regexes: dict[str, str], excluded: frozenset[str], top: int) -> tuple[list[RegionRow], int]:
    """Per marker name: the kernels whose start lies inside any occurrence [start, end] (nested
    regions each count their own kernels). Also the GPU time of dispatches inside no region."""
    inside_any: set[int] = set()
    regions = []
    for name, occurrences in markers.items():
        union = _merge((m.start_ns, m.end_ns) for m in occurrences)
        starts = [s for s, _ in union]
        members = [i for i, d in enumerate(dispatches)
                   if d.start_ns is not None and _inside(d.start_ns, starts, union)]
        inside_any.update(members)
        picked = [dispatches[i] for i in members]
        rows, _ = kernel_rows(picked, regexes, excluded)
        regions.append(RegionRow(
            name=name, count=len(occurrences), start_ns=union[0][0], end_ns=union[-1][1],
            wall_ns=sum(e - s for s, e in union), gpu_ns=sum(d.duration_ns or 0 for d in picked),
            dispatches=len(picked), kernels=rows[:top] if top > 0 else rows,
        ))
    regions.sort(key=lambda r: (r.start_ns, r.name))
    outside = sum(d.duration_ns or 0 for i, d in enumerate(dispatches) if i not in inside_any)
    return regions, outside
