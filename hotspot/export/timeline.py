"""Pure functions on wave-state timelines: pick representative waves, shrink long timelines."""

from __future__ import annotations

from collections.abc import Sequence

# Roles of the representative waves, in display order.
ROLE_LONGEST = "longest"
ROLE_MEDIAN = "median"
ROLE_SHORTEST = "shortest"


def pick_representative(durations: Sequence[int]) -> list[tuple[str, int]]:
    """(role, index) of the longest, median and shortest wave; each index appears once.

    Ties are broken by position (the earlier wave in `durations` wins), so the choice is stable.
    With fewer than three waves only the distinct ones are returned.
    """
    if not durations:
        return []
    order = sorted(range(len(durations)), key=lambda i: (durations[i], i))
    picks = [(ROLE_LONGEST, max(range(len(durations)), key=lambda i: (durations[i], -i))),
             (ROLE_MEDIAN, order[(len(order) - 1) // 2]),
             (ROLE_SHORTEST, order[0])]
    seen: set[int] = set()
    out = []
    for role, idx in picks:
        if idx not in seen:
            seen.add(idx)
            out.append((role, idx))
    return out


def segments(timeline: Sequence[Sequence[int]]) -> list[list[int]]:
    """[[state, cycles], ...] -> [[state, start_offset, cycles], ...], zero-length parts dropped and
    adjacent parts of the same state merged."""
    out: list[list[int]] = []
    t = 0
    for state, cycles in timeline:
        if cycles <= 0:
            continue
        if out and out[-1][0] == state:
            out[-1][2] += cycles
        else:
            out.append([int(state), t, int(cycles)])
        t += cycles
    return out


def downsample(segs: list[list[int]], max_segments: int) -> tuple[list[list[int]], bool]:
    """At most about `max_segments` segments: when there are more, the span is cut into
    `max_segments` equal bins, each bin takes the state holding most of its cycles (ties: the lower
    state number) and equal neighbours merge. Returns (segments, downsampled?)."""
    if len(segs) <= max_segments or max_segments <= 0:
        return segs, False
    total = segs[-1][1] + segs[-1][2]
    width = -(-total // max_segments)  # ceil: every cycle falls in a bin
    nbins = -(-total // width)
    bins: list[dict[int, int]] = [{} for _ in range(nbins)]
    for state, start, cycles in segs:
        t, end = start, start + cycles
        while t < end:
            b = t // width
            take = min(end, (b + 1) * width) - t
            acc = bins[b]
            acc[state] = acc.get(state, 0) + take
            t += take
    out: list[list[int]] = []
    for b, acc in enumerate(bins):
        state = min(acc, key=lambda s: (-acc[s], s))
        start = b * width
        cycles = min(total, start + width) - start
        if out and out[-1][0] == state:
            out[-1][2] += cycles
        else:
            out.append([state, start, cycles])
    return out, True
