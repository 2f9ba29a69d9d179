"""Achieved occupancy from an ATT `occupancy.json` (FORMATS.md §1.3): reader + pure computation.

Each shader engine lists wave start/end events `[time, cu, simd, slot, start(1)/end(0), kernel_id,
...]` (newer decoders append more fields; the format names none, so the first six are taken by
position and validated). A wave occupies (SE, CU, SIMD, slot) from its start to its end event.

Definition (what `achieved_occupancy` returns):
- the SIMDs counted are those (SE, CU, SIMD) that ever held a wave of the selected kernels;
- each SE's window runs from its first to its last event (shader-clock cycles; SE clocks are not
  compared with each other);
- mean = Σ over counted SIMDs of ∫ resident waves dt over its SE's window
         ÷ Σ over counted SIMDs of its SE's window length — so launch ramps, tails and idle SIMDs
         inside the window pull the mean down, as they do in reality;
- peak = the most waves resident on one SIMD at any instant (ends at a timestamp are applied before
  starts at the same timestamp, i.e. a slot freed and refilled in one cycle counts once).
A start with no end is resident until the window's end; an end with no start counts from the
window's start; a second start on a busy slot closes the first there. All three are counted in
`unmatched_*`.

Spread over the CUs (what `grid-underfill` reads when the launch is unknown):
- `busy_cus_per_se` = per SE, the distinct CUs that started a wave of the selected kernels;
- `one_round` (the one-round rule, `fits_one_round`): on every SE, no wave starts at or after that
  SE's first wave end (ends sort before starts at equal time, so a slot freed and refilled in one
  cycle is a second round): no CU ever got work after work ended, so the whole grid was resident
  at once. None when an SE has no wave end (the window stops before anything finished: unknown).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from itertools import compress
from types import ModuleType
from typing import Literal, NamedTuple

from hotspot.record import record


class OccupancyEvent(NamedTuple):
    """One wave start/end. A NamedTuple, not a dataclass: a 1 GB capture has ~300k of them."""

    time: int
    cu: int
    simd: int
    slot: int
    is_start: bool
    kernel_id: int


@record
class AchievedOccupancy:
    mean_waves_per_simd: float | None   # None when no window has any length
    peak_waves_per_simd: int
    simds: int                          # SIMDs that ever held a wave
    waves: int                          # wave start events counted
    window_cycles: dict[int, int]       # per SE: last event − first event
    unmatched_starts: int
    unmatched_ends: int
    busy_cus_per_se: dict[int, int]     # per SE: distinct CUs that started a wave
    one_round: bool | None              # the one-round rule (module doc); None when unknown


# --- reader ----------------------------------------------------------------------------------

_SimdKey = tuple[int, int, int]  # (se, cu, simd)


def _peak(intervals: list[tuple[int, int]]) -> int:
    # Sweep: ends (-1) sort before starts (+1) at the same time.
    edges = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    now = best = 0
    for _, delta in edges:
        now += delta
        best = max(best, now)
    return best


# One SE's events as columns (time, cu, simd, slot, is_start 0/1, kernel_id): what the reader
# keeps (hotspot/capture/occupancy_json.py); a 1 GB capture has ~300k events, ~0.4 us each as columns
# against ~2 us as OccupancyEvent tuples.
EventColumns = tuple[Sequence[int], Sequence[int], Sequence[int], Sequence[int], Sequence[int],
                     Sequence[int]]


def fits_one_round(first_end: int | None, last_start: int) -> bool | None:
    """The one-round rule on one SE (module doc): no wave starts at or after the first wave end;
    None without any wave end."""
    if first_end is None:
        return None
    return last_start < first_end


def events_to_columns(events: Sequence[OccupancyEvent]) -> EventColumns:
    if not events:
        return ((), (), (), (), (), ())
    time, cu, simd, slot, start, kernel = zip(*events)
    return time, cu, simd, slot, tuple(map(int, start)), kernel


def achieved_occupancy(events_by_se: Mapping[int, Sequence[OccupancyEvent]],
                       kernel_ids: Iterable[int] | None = None) -> AchievedOccupancy | None:
    """Time-weighted mean and peak waves resident per SIMD (see the module docstring).

    `kernel_ids` restricts to those kernels (occupancy.json may include other dispatches); None = all.
    Returns None when no wave of the selected kernels appears.
    """
    return achieved_from_columns({se: events_to_columns(ev) for se, ev in events_by_se.items()},
                                 kernel_ids)


def achieved_from_columns(columns_by_se: Mapping[int, EventColumns],
                          kernel_ids: Iterable[int] | None = None,
                          mod: ModuleType | None = None) -> AchievedOccupancy | None:
    """`achieved_occupancy` over event columns per SE: in C when the caller hands the native
    extension in `mod` (hotspot/att/engine/_wavescan.c `occupancy_se`; arch/ sits below the engine,
    so it does not fetch it itself), else (or for values C does not take) by `achieved_python`,
    its reference twin."""
    wanted = None if kernel_ids is None else set(kernel_ids)
    if mod is not None:
        done = _achieved_native(mod, columns_by_se, wanted)
        if done is not False:
            return done
    return achieved_python(columns_by_se, wanted)


def _achieved_native(mod: ModuleType, columns_by_se: Mapping[int, EventColumns],
                     wanted: set[int] | None) -> AchievedOccupancy | None | Literal[False]:
    """The sums per SE from C, combined as `achieved_python` combines its intervals; False when C
    declines an SE (a value outside its range)."""
    windows: dict[int, int] = {}
    busy_cus: dict[int, int] = {}
    rounds: list[bool | None] = []
    unmatched_starts = unmatched_ends = simds = busy = peak = waves = total_window = 0
    for se in sorted(columns_by_se):
        got = mod.occupancy_se(*columns_by_se[se][:6], wanted)
        if got is None:
            return False
        window, starts, ends, cus, one_round, n_simds, se_busy, se_peak, intervals = got
        if not intervals:  # no event of the selected kernels on this SE
            continue
        windows[se] = window
        unmatched_starts += starts
        unmatched_ends += ends
        if cus:
            busy_cus[se] = cus
        if one_round != mod.ROUND_NO_STARTS:
            rounds.append(None if one_round == mod.ROUND_UNKNOWN else bool(one_round))
        simds += n_simds
        busy += se_busy
        total_window += window * n_simds
        peak = max(peak, se_peak)
        waves += intervals
    if not simds:
        return None
    mean = busy / total_window if total_window > 0 else None
    one = None if not rounds or None in rounds else all(rounds)
    return AchievedOccupancy(mean, peak, simds, waves, windows, unmatched_starts, unmatched_ends,
                             busy_cus, one)


def achieved_python(columns_by_se: Mapping[int, EventColumns],
                    wanted: set[int] | None) -> AchievedOccupancy | None:
    """The reference computation of `achieved_from_columns` (`wanted`: kernel ids, None = all)."""
    intervals: dict[_SimdKey, list[tuple[int, int]]] = defaultdict(list)
    windows: dict[int, int] = {}
    unmatched_starts = unmatched_ends = 0
    busy_cus: dict[int, int] = {}
    rounds: list[bool | None] = []
    for se in sorted(columns_by_se):
        cols = columns_by_se[se]
        if wanted is not None:
            keep = [k in wanted for k in cols[5]]
            cols = tuple(tuple(compress(c, keep)) for c in cols)  # type: ignore[assignment]  # the same six columns, filtered
        time, cu, simd, slot, start = cols[:5]
        if not time:
            continue
        # ends before starts at equal time, file order otherwise (the index breaks every tie, so
        # this is the stable sort by (time, is_start))
        rows = sorted(zip(time, start, range(len(time)), cu, simd, slot))
        begin, end = rows[0][0], rows[-1][0]
        windows[se] = end - begin
        open_slots: dict[tuple[int, int, int], int] = {}  # (cu, simd, slot) -> start time
        started = {c for _t, is_start, _i, c, _s, _n in rows if is_start}
        if started:
            busy_cus[se] = len(started)
            first_end = next((t for t, is_start, *_ in rows if not is_start), None)
            last_start = max(t for t, is_start, *_ in rows if is_start)
            rounds.append(fits_one_round(first_end, last_start))
        for t, is_start, _i, c, s, n in rows:
            key = (c, s, n)
            if is_start:
                if key in open_slots:  # the decoder lost this slot's end: close it here
                    unmatched_starts += 1
                    intervals[(se, c, s)].append((open_slots[key], t))
                open_slots[key] = t
            elif key in open_slots:
                intervals[(se, c, s)].append((open_slots.pop(key), t))
            else:  # resident since before the window
                unmatched_ends += 1
                intervals[(se, c, s)].append((begin, t))
        for (c, s, _), t0 in open_slots.items():  # still resident at the window's end
            unmatched_starts += 1
            intervals[(se, c, s)].append((t0, end))
    if not intervals:
        return None
    busy = sum(e - s for spans in intervals.values() for s, e in spans)
    total_window = sum(windows[se] for se, _, _ in intervals)
    mean = busy / total_window if total_window > 0 else None
    peak = max(_peak(spans) for spans in intervals.values())
    waves = sum(len(spans) for spans in intervals.values())
    one_round = None if not rounds or None in rounds else all(rounds)
    return AchievedOccupancy(mean, peak, len(intervals), waves, windows, unmatched_starts, unmatched_ends,
                             busy_cus, one_round)
