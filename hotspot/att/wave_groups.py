"""Fast path of the wave pass: waves that executed the same instruction sequence, summed by column.

Every wave-derived sum is linear in the per-record columns, and everything else the pass needs (the
vm/lgkm reconstruction, loop back-edges, barrier rows, wait -> producer pairs) depends only on the
executed sequence of code rows. All waves of a real dispatch run the same sequence (one per corpus
dispatch), so per wave we only add its columns element-wise onto its sequence's accumulators with
`map`/`accumulate`/`bisect` (loops in C), and fold the accumulators into the per-line dicts once per
sequence (`flush`).

The per-record path in hotspot/att/wavepass.py (`fold_wave_records`) defines the results; this path
produces the same integers. A wave takes it only when its columns are plain integers and its
timeline cycles are non-negative; anything else (and any error) goes the per-record way, which also
reports malformed records exactly as before.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from itertools import accumulate, repeat
from operator import add, mul, sub
from typing import Any

from hotspot.att.waits import (NO_PRODUCER, ROLE_BARRIER, BlameAccumulator, LineTables,
                               edge_keys, reconstruct)
from hotspot.att.waves import WAVE_STATES

# Decoder instruction category of a taken branch (FORMATS.md §1.2: 7 JUMP).
DECODER_JUMP = 7
N_STATES = len(WAVE_STATES)
# The five timeline states are packed into one int, FIELD_BITS per state, so charging a cycle range
# to an instruction is one integer operation instead of five. Fields never borrow: every charge is
# >= 0 (the fast path needs non-negative cycles) and a field stays below 2**FIELD_BITS because a
# wave has < MAX_WAVE_CYCLES cycles and a sequence sums < MAX_GROUP_WAVES waves before it is flushed.
FIELD_BITS = 64
MAX_WAVE_CYCLES = 1 << 32
MAX_GROUP_WAVES = 1 << 31
FIELD_MASK = (1 << FIELD_BITS) - 1
# Unit per decoder state value; states outside WAVE_STATES are not charged (as in the timeline
# totals). 256 entries cover any state byte; other values take the per-record path.
STATE_UNITS = [1 << (FIELD_BITS * s) for s in range(N_STATES)] + [0] * (256 - N_STATES)
# Accumulated positions (executed records) kept per partial before the sequences are folded into
# the per-line dicts: bounds memory (~150 B per position) when every wave runs its own sequence.
MAX_GROUP_POSITIONS = 250_000


def unpack_states(packed: int) -> list[int]:
    return [(packed >> (FIELD_BITS * s)) & FIELD_MASK for s in range(N_STATES)]


class SequenceGroup:
    """Column sums of the waves that ran one sequence of code rows, plus its static facts."""

    __slots__ = ("lines", "waves", "stall", "duration", "charge", "states", "entries", "positions",
                 "ooo", "expected_edges", "backedges", "barrier_rows", "producers", "pair_waits",
                 "pair_producers", "pair_lines", "blame_waves", "wait_stall", "distances")

    def __init__(self, ins: list[list[int]], lines: tuple[int, ...], cats: tuple[Any, ...],
                 tables: LineTables) -> None:
        n = len(lines)
        self.lines = lines
        self.waves = 0
        self.stall = [0] * n
        self.duration = [0] * n
        # Σ over waves of the packed timeline cycles before each instruction's window end
        # (the last instruction's entry is the wave's total): window j holds charge[j] - charge[j-1].
        self.charge = [0] * n
        self.states = 0  # packed timeline totals
        self.entries, self.positions, self.ooo = reconstruct(ins, tables)
        # The decoder edges this reconstruction stands for (compared to a wave's in C).
        self.expected_edges = [[lines[w], [[lines[p], 0] for p in prods]]
                               for w, prods in self.entries]
        self.backedges = _backedges(lines, cats)
        self.barrier_rows = _barrier_rows(lines, tables)
        # Producers per wait instance (lgkm entry then vm entry, as blame_wave joins them).
        producers: dict[int, list[int]] = {}
        for w, prods in self.entries:
            producers.setdefault(w, []).extend(prods)
        self.producers = producers
        self.pair_waits = [w for w in self.positions for _ in producers.get(w, ())]
        self.pair_producers = [p for w in self.positions for p in producers.get(w, ())]
        self.pair_lines = [(lines[w], lines[p]) for w, p in zip(self.pair_waits,
                                                                 self.pair_producers)]
        # Waves whose blame came from this reconstruction (edges equal to it, or no edges).
        self.blame_waves = 0
        self.wait_stall = [0] * len(self.positions)
        self.distances: Counter[tuple[int, int]] = Counter()  # (pair index, cycles) -> count

    def absorb(self, other: "SequenceGroup") -> None:
        self.waves += other.waves
        self.stall = list(map(add, self.stall, other.stall))
        self.duration = list(map(add, self.duration, other.duration))
        self.charge = list(map(add, self.charge, other.charge))
        self.states += other.states
        self.blame_waves += other.blame_waves
        self.wait_stall = list(map(add, self.wait_stall, other.wait_stall))
        self.distances.update(other.distances)


def _backedges(lines: tuple[int, ...], cats: tuple[Any, ...]) -> list[tuple[tuple[int, int], int]]:
    """(branch line, target line) of each backward taken branch and how often the sequence takes it."""
    taken: dict[tuple[int, int], int] = {}
    prev_line = -1
    prev_jump = False
    for line, cat in zip(lines, cats):
        if prev_jump and line < prev_line:
            key = (prev_line, line)
            taken[key] = taken.get(key, 0) + 1
        prev_jump = cat == DECODER_JUMP
        prev_line = line
    return list(taken.items())


def _barrier_rows(lines: tuple[int, ...], tables: LineTables) -> list[tuple[int, list[int]]]:
    roles = tables.roles
    rows: dict[int, list[int]] = {}
    for idx, line in enumerate(lines):
        if roles.get(line) == ROLE_BARRIER:
            rows.setdefault(line, []).append(idx)
    return list(rows.items())


class SequenceFolder:
    """The open sequence groups of one partial (see module doc)."""

    def __init__(self) -> None:
        self.groups: dict[tuple[tuple[int, ...], tuple[Any, ...]], SequenceGroup] = {}
        self.positions = 0  # Σ sequence lengths, bounded by MAX_GROUP_POSITIONS


def charge_points(ins_ends: list[int], timeline_states: tuple[int, ...],
                  timeline_cycles: tuple[int, ...], begin: int) -> tuple[list[int], int]:
    """Packed timeline cycles from `begin` up to each instruction's window end, and the total.

    Window j (wavepass docs) covers [end_{j-1}, end_j) with end the running max of time + duration;
    cycles before the first end go to the first instruction and after the last-but-one end to the
    last. F(t) = packed cycles of [begin, t) is linear inside each timeline segment, so with the
    segment k found by bisection F(t) = base[k] + t * unit[k].
    """
    units = list(map(STATE_UNITS.__getitem__, timeline_states))
    bounds = list(accumulate(timeline_cycles, initial=begin))
    packed = list(accumulate(map(mul, timeline_cycles, units), initial=0))
    # Index k = bisect_right(bounds, t): 0 before begin (F = 0), m + 1 after the end (F = total),
    # else segment k - 1.
    seg_units = [0] + units + [0]
    seg_starts = [0] + bounds[:-1] + [0]
    base = list(map(sub, [0] + packed, map(mul, seg_starts, seg_units)))
    head = ins_ends[:-1]
    k = list(map(bisect_right, repeat(bounds), head))
    points = list(map(add, map(base.__getitem__, k), map(mul, head, map(seg_units.__getitem__, k))))
    points.append(packed[-1])
    return points, packed[-1]


def fold_wave_columns(part: Any, ins: list[list[int]], timeline: list[list[int]], edges: list[Any],
                      begin: int, end: int, se: int, cu: int, tables: LineTables) -> bool:
    """Fold one wave into `part` (a WavePartial) through its sequence group; False (nothing
    changed) when the wave must take the per-record path. What can fail runs before any change."""
    try:
        prepared = _prepare(ins, timeline, begin)
    except (TypeError, ValueError, IndexError, KeyError, OverflowError):
        return False
    if prepared is None:
        return False
    times, cats, stalls, durations, lines, points, states_total = prepared
    folder: SequenceFolder = part.open_groups
    key = (lines, cats)
    group = folder.groups.get(key)
    if group is not None and group.waves >= MAX_GROUP_WAVES - 1:
        _close(part, folder, key)  # its packed fields are full
        group = None
    if group is None:
        group = SequenceGroup(ins, lines, cats, tables)
    matches = not edges or edges == group.expected_edges
    ekeys = None
    if not matches:
        try:
            ekeys = edge_keys(edges)  # malformed edges: per-record path, original error
        except (TypeError, ValueError, IndexError, KeyError):
            return False
    admit_group(part, folder, key, group)

    totals = part.totals
    totals.waves += 1
    totals.instructions += len(ins)
    totals.cycles += end - begin
    group.waves += 1
    group.stall = list(map(add, group.stall, stalls))
    group.duration = list(map(add, group.duration, durations))
    group.charge = list(map(add, group.charge, points))
    group.states += states_total
    barriers = part.barriers
    for line, idx in group.barrier_rows:
        t = list(map(times.__getitem__, idx))
        arr = barriers.get((se, cu, line))
        if arr is None:
            arr = barriers[(se, cu, line)] = []
        arr.extend(zip(t, map(add, t, map(stalls.__getitem__, idx))))

    blame: BlameAccumulator = part.blame
    if ekeys is not None:
        # Edges the reconstruction did not produce: placed and blamed the per-record way.
        blame.add_reconstructed(ins, ekeys, group.entries, group.positions, group.ooo)
        return True
    blame.out_of_order_waits += group.ooo
    if edges:
        blame.waves_edges += 1
        blame.edge_entries += len(edges)
        blame.edge_entries_reconstructed += len(edges)
    else:
        blame.waves_static += 1
    group.blame_waves += 1
    group.wait_stall = list(map(add, group.wait_stall, map(stalls.__getitem__, group.positions)))
    if group.pair_waits:
        # issue-to-wait cycles per (wait, producer) pair: wait time - (producer time + stall)
        cycles = map(sub, map(sub, map(times.__getitem__, group.pair_waits),
                              map(times.__getitem__, group.pair_producers)),
                     map(stalls.__getitem__, group.pair_producers))
        group.distances.update(zip(range(len(group.pair_waits)), cycles))
    return True


def admit_group(part: Any, folder: SequenceFolder, key: tuple, group: SequenceGroup) -> None:
    """Make `group` an open group of `folder`, flushing all groups first to bound memory."""
    if key in folder.groups:
        return
    if folder.positions + len(group.lines) > MAX_GROUP_POSITIONS:
        for open_key in list(folder.groups):
            _close(part, folder, open_key)
    folder.groups[key] = group
    folder.positions += len(group.lines)


def _close(part: Any, folder: SequenceFolder, key: tuple) -> None:
    group = folder.groups.pop(key)
    folder.positions -= len(group.lines)
    part.flush_group(group)


def _prepare(ins: list[list[int]], timeline: list[list[int]], begin: int):
    """Columns of a wave and its window charges, or None when the wave is not plain integers."""
    n = len(ins)
    if n == 0:
        return None
    cols = list(zip(*ins))
    if len(cols) < 5:
        return None
    times, cats, stalls, durations, lines = cols[:5]
    # Plain ints only (a float or string makes the sum non-int or raises): the per-record path
    # keeps the original semantics for anything else.
    for col in (times, stalls, durations, lines):
        if type(sum(col)) is not int:
            return None
    m = len(timeline)
    if m:
        tcols = list(zip(*timeline))
        if len(tcols) != 2 or sum(map(len, timeline)) != 2 * m:
            return None
        states, cycles = tcols
        total = sum(cycles)
        if (type(total) is not int or type(sum(states)) is not int or min(cycles) < 0
                or total >= MAX_WAVE_CYCLES or min(states) < 0 or max(states) >= len(STATE_UNITS)):
            return None
    else:
        states = cycles = ()
    ends = list(map(add, times, durations))
    if ends != sorted(ends):  # windows end at the running max (always sorted in real traces)
        ends = list(accumulate(ends, max))
    points, states_total = charge_points(ends, states, cycles, begin)
    return times, cats, stalls, durations, lines, points, states_total


def flush_group(group: SequenceGroup, per_line: dict[int, list[int]],
                line_states: dict[int, list[int]], states: list[int],
                backedges: dict[tuple[int, int], list[int]], blame: BlameAccumulator) -> None:
    """Fold a sequence group's sums into the per-line dicts (what the per-record path builds)."""
    if group.waves == 0:
        return
    waves = group.waves
    lines = group.lines
    for line, d, s in zip(lines, group.duration, group.stall):
        acc = per_line.get(line)
        if acc is None:
            per_line[line] = [waves, d, s]
        else:
            acc[0] += waves
            acc[1] += d
            acc[2] += s
    prev = 0
    for line, point in zip(lines, group.charge):
        window = point - prev
        prev = point
        if window:
            ls = line_states.get(line)
            if ls is None:
                ls = line_states[line] = [0] * N_STATES
            for i, v in enumerate(unpack_states(window)):
                ls[i] += v
    for i, v in enumerate(unpack_states(group.states)):
        states[i] += v
    for key, taken in group.backedges:
        be = backedges.get(key)
        if be is None:
            be = backedges[key] = [0, 0]
        be[0] += taken * waves
        be[1] += waves
    if group.blame_waves:
        _flush_blame(group, blame)


def _flush_blame(group: SequenceGroup, acc: BlameAccumulator) -> None:
    """The blame_wave bookkeeping of the group's reconstructed waves, from its column sums."""
    bw = group.blame_waves
    lines = group.lines
    blame, wait_stall, wait_hits = acc.blame, acc.wait_stall, acc.wait_hits
    dcyc, dins = acc.dist_cycles, acc.dist_instructions
    for w, stall in zip(group.positions, group.wait_stall):
        wline = lines[w]
        wait_stall[wline] = wait_stall.get(wline, 0) + stall
        wait_hits[wline] = wait_hits.get(wline, 0) + bw
        prods = group.producers.get(w)
        if not prods:
            key = (wline, NO_PRODUCER, 1)
            blame[key] = blame.get(key, 0) + stall
            continue
        k = len(prods)
        for p in prods:
            pline = lines[p]
            key3 = (wline, pline, k)
            blame[key3] = blame.get(key3, 0) + stall
            dkey = (wline, pline)
            if dkey not in dcyc:
                dcyc[dkey] = {}
                dins[dkey] = {}
            hi = dins[dkey]
            d = w - p - 1
            hi[d] = hi.get(d, 0) + bw
    pair_lines = group.pair_lines
    for (pair, c), count in group.distances.items():
        hc = dcyc[pair_lines[pair]]
        hc[c] = hc.get(c, 0) + count
