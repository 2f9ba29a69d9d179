"""Fast path of the wave pass: waves that executed the same instruction sequence, summed by column.

Every wave-derived sum is linear in the per-record columns, and everything else the pass needs (the
vm/lgkm reconstruction, loop back-edges, barrier rows, wait -> producer pairs) depends only on the
executed sequence of code rows. All waves of a real dispatch run the same sequence (one per corpus
dispatch), so per wave we only add its columns element-wise onto its sequence's accumulators with
`map` (loops in C), charge its timeline to instruction positions in one tight loop, and fold the
accumulators into the per-line dicts once per sequence (`flush_group`). The reconstruction, edge
placement and blame of a sequence are computed once; a wave's decoder edges are compared to them
as a whole (one C-level `==`).

With the native extension (hotspot/att/engine/_wavescan.c) `NativeFold` folds a wave of a known
sequence entirely in C, in one call per file; a wave it hands back arrives as int64 columns and
`fold_wave_scanned` does the same fold with the per-wave loops in C; groups are then keyed by the
scanner's hash of the sequence. The first wave of a sequence always goes this way, and its group
is then registered with the C fold.

The per-record path in hotspot/att/engine/wavepass.py (`fold_wave_records`) defines the results; this path
produces the same integers. A wave takes it only when its columns are plain integers and its
timeline states and cycles are non-negative; other waves go the per-record way, which also reports
malformed records as before. After a wave with non-integer values the partial's groups are folded
in and the rest of its waves go record by record too.
"""

from __future__ import annotations

from array import array
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from itertools import accumulate, compress, repeat
from operator import add, eq, sub
from types import ModuleType
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from hotspot.att.engine.native import ScannedWave, native
from hotspot.att.issue_share import IssueAccumulator, IssueWeights, ScopeKey, SimdKey
from hotspot.att.waits.accumulate import BlameAccumulator
from hotspot.att.waits.waitcnt_rules import LGKM, NO_PRODUCER, ROLE_BARRIER, ROLE_MEM, ROLE_WAIT, VM, LineTables
from hotspot.att.waits.replay import edge_keys, reconstruct
from hotspot.capture import WAVE_STATES, WaitcntEdges, WaveTotals

# Decoder instruction category of a taken branch (FORMATS.md §1.2: 7 JUMP).
DECODER_JUMP = 7
N_STATES = len(WAVE_STATES)
# Stall and duration columns are kept until this many waves are pending and then summed with one
# `map(sum, zip(...))`: several times cheaper per element than adding them one wave at a time.
PENDING_WAVES = 16
# Accumulated positions (executed records) kept per partial before the sequences are folded into
# the per-line dicts: bounds memory (~300 B per position, so ~30 MB) when waves keep taking new
# paths; real dispatches hold one sequence.
MAX_GROUP_POSITIONS = 100_000
# Waves added into a group's int64 accumulators (native path) before they are spilled into its
# Python integers: the scanner admits per-wave entries below 2**40, so 2**22 waves stay < 2**62.
SPILL_WAVES = 1 << 22


# An open group's key: (lines, cats) on the Python path; the scanner's sequence hash, or
# (hash, lines, cats) when two sequences share a hash, on the native path.
GroupKey = Hashable


class SequenceGroup:
    """Column sums of the waves that ran one sequence of code rows, plus its static facts."""

    __slots__ = ("lines", "waves", "stall", "duration", "pending_stall", "pending_duration",
                 "charge", "entries", "positions", "ooo", "_expected_edges", "backedges",
                 "barrier_rows", "_producers", "pair_waits", "pair_producers", "_pair_lines",
                 "pair_counts",
                 "blame_waves", "wait_stall", "distances",
                 # native path only (fold_wave_scanned)
                 "acc_stall", "acc_duration", "acc_charge", "acc_waves", "acc_wait", "edges_key",
                 "pair_hists", "pair_entries", "pair_index", "native_rows", "scanned", "native_index")

    def __init__(self, lines: Sequence[int], cats: Sequence[int], tables: LineTables) -> None:
        """`lines`, `cats`: the sequence's columns, tuples (Python path) or int64 arrays (scanned)."""
        self.lines = lines
        self.waves = 0
        # Column sums (lists, or int64 arrays as the native pass hands them over); None until a
        # wave adds to them (zeros), so a long sequence costs no list of zeros per column.
        self.stall: Sequence[int] | None = None
        self.duration: Sequence[int] | None = None
        self.pending_stall: list[tuple[int, ...]] = []  # columns not yet added to `stall`
        self.pending_duration: list[tuple[int, ...]] = []
        # timeline cycles charged to the instruction at position j in state s: charge[j*N_STATES+s]
        self.charge: Sequence[int] | None = None
        self.entries, self.positions, self.ooo = replayed(lines, tables)
        self._expected_edges: list[list[Any]] | None = None  # made on first use
        mod = native() if _int64(lines) and _int64(cats) else None
        self.backedges = _backedges(lines, cats, mod)
        self.barrier_rows = _barrier_rows(lines, tables, mod)
        # per wait position in `positions` order its number of pairs (int64, when pair_index
        # made the pairs): with pair_producers, what `producers` says, for the C blame
        self.pair_counts: array[int] | None = None
        self._producers: dict[int, list[int]] | None = None
        self._pair_lines: list[tuple[int, int]] | None = None
        index = _pair_index(lines, self.positions, self.entries, mod)
        self.pair_waits: Sequence[int]  # lists (Python path) or int64 arrays (pair_index)
        self.pair_producers: Sequence[int]
        if index is not None:  # the dict and the line pairs are made on first use
            self.pair_waits, self.pair_producers, self.pair_counts = index
        else:
            self._producers, self.pair_waits, self.pair_producers, self._pair_lines = _pairs(
                lines, self.positions, self.entries, mod)
        # Waves whose blame came from this reconstruction (edges equal to it, or no edges).
        self.blame_waves = 0
        self.wait_stall: Sequence[int] | None = None  # per wait position, None until added to
        self.distances: Counter[tuple[int, int]] = Counter()  # (pair index, cycles) -> count
        # int64 sums of the natively scanned waves not yet in stall/duration/charge
        self.acc_stall: array[int] | None = None
        self.acc_duration: array[int] | None = None
        self.acc_charge: array[int] | None = None
        self.acc_waves = 0
        self.edges_key: bytes | None = None  # expected_edges encoded, made on first use
        # Native path: per pair, cycles -> count (what `distances` holds for the Python path),
        # and the pairs' (wait, producer) positions as int64 arrays for the C counter.
        self.pair_hists: list[dict[int, int]] | None = None
        # ... or, until a wave is counted into such dicts, the C fold's taken (pair, cycles, count)
        # entries as int64 triples in take order (the dicts they add up to, without making them)
        self.pair_entries: array[int] | None = None
        self.pair_index: tuple[array[int], array[int]] | None = None
        self.acc_wait: array[int] | None = None  # native path: wait_stall not yet added
        # native path: wait positions and barrier rows as int64 arrays, made on first use
        self.native_rows: tuple[array[int], list[tuple[int, array[int]]]] | None = None
        self.scanned: tuple[bytes, bytes] | None = None  # native path: (lines, cats) as int64
        self.native_index: int | None = None  # its index in the partial's NativeFold, if any

    @property
    def producers(self) -> dict[int, list[int]]:
        """Wait position -> its producer positions (the entries of one wait joined, in order)."""
        made = self._producers
        if made is None:
            made = self._producers = _producers(self.entries)
        return made

    @property
    def pair_lines(self) -> list[tuple[int, int]]:
        """(wait line, producer line) of each pair."""
        made = self._pair_lines
        if made is None:
            lines = self.lines
            made = self._pair_lines = [(lines[w], lines[p]) for w, p in
                                       zip(self.pair_waits, self.pair_producers)]
        return made

    def add_columns(self, stalls: tuple[int, ...], durations: tuple[int, ...]) -> None:
        self.pending_stall.append(stalls)
        self.pending_duration.append(durations)
        if len(self.pending_stall) >= PENDING_WAVES:
            self.settle()

    @property
    def expected_edges(self) -> list[list[Any]]:
        """The decoder edges this reconstruction stands for: [[wait line, [[producer line, 0],
        ...]], ...] (a wave's edges are compared to them as a whole)."""
        edges = self._expected_edges
        if edges is None:
            lines = self.lines
            edges = self._expected_edges = [[lines[w], [[lines[p], 0] for p in prods]]
                                            for w, prods in self.entries]
        return edges

    def expected_key(self, mod: ModuleType) -> bytes:
        """`expected_edges` in the scanner's canonical encoding (hotspot/att/engine/_wavescan.c);
        in C from the replay's entries for an int64 sequence (`entries_key`, the same bytes)."""
        key = self.edges_key
        if key is None:
            if _int64(self.lines) and hasattr(mod, "entries_key"):
                key = self.edges_key = mod.entries_key(self.lines, self.entries)
            else:
                key = self.edges_key = mod.edges_key(orjson.dumps(self.expected_edges))
        return key

    def add_scanned(self, mod: ModuleType, wave: ScannedWave) -> None:
        """Add a natively scanned wave's stall/duration columns and timeline charges (in C)."""
        if self.acc_stall is None:
            n = len(self.lines)
            self.acc_stall = array("q", bytes(8 * n))
            self.acc_duration = array("q", bytes(8 * n))
            self.acc_charge = array("q", bytes(8 * n * N_STATES))
        mod.add(self.acc_stall, wave.stalls)
        mod.add(self.acc_duration, wave.durations)
        mod.charge(self.acc_charge, wave.times, wave.durations, wave.states, wave.cycles,
                   wave.begin)
        self.acc_waves += 1
        if self.acc_waves >= SPILL_WAVES:
            self.settle()

    def settle(self) -> None:
        """Add the pending columns and the int64 accumulators into `stall`, `duration`, `charge`."""
        if self.pending_stall:
            self.stall = list(map(sum, zip(*self.pending_stall) if self.stall is None
                                  else zip(self.stall, *self.pending_stall)))
            self.duration = list(map(sum, zip(*self.pending_duration) if self.duration is None
                                     else zip(self.duration, *self.pending_duration)))
            self.pending_stall.clear()
            self.pending_duration.clear()
        if self.acc_wait is not None:
            self.wait_stall = _summed(self.wait_stall, self.acc_wait)
            self.acc_wait = None
        if self.acc_stall is not None:
            self.stall = _summed(self.stall, self.acc_stall)
            self.duration = _summed(self.duration, self.acc_duration)
            self.charge = _summed(self.charge, self.acc_charge)
            self.acc_stall = self.acc_duration = self.acc_charge = None
            self.acc_waves = 0

    def charge_list(self) -> list[int]:
        """`charge` as a list the Python path adds into in place."""
        if not isinstance(self.charge, list):
            self.charge = [0] * (len(self.lines) * N_STATES) if self.charge is None \
                else list(self.charge)
        return self.charge

    def absorb(self, other: "SequenceGroup") -> None:
        self.settle()
        other.settle()
        self.waves += other.waves
        self.stall = _summed(self.stall, other.stall)
        self.duration = _summed(self.duration, other.duration)
        self.charge = _summed(self.charge, other.charge)
        self.blame_waves += other.blame_waves
        self.wait_stall = _summed(self.wait_stall, other.wait_stall)
        self.distances.update(other.distances)
        if other.pair_hists is None and other.pair_entries is None:
            return
        if self.pair_hists is None and self.pair_entries is None:
            self.pair_hists, self.pair_entries = other.pair_hists, other.pair_entries
            self.pair_index = other.pair_index
        elif self.pair_hists is None and other.pair_hists is None:
            assert self.pair_entries is not None and other.pair_entries is not None
            self.pair_entries.extend(other.pair_entries)  # theirs after mine, as the dicts add
        else:
            for mine, theirs in zip(self.hist_dicts(), other.hist_dicts()):
                for c, count in theirs.items():
                    mine[c] = mine.get(c, 0) + count

    def hist_dicts(self) -> list[dict[int, int]]:
        """`pair_hists`, made (and the taken entries added into it) when the group has none."""
        hists = self.pair_hists
        if hists is None:
            hists = self.pair_hists = [{} for _ in self.pair_waits]
        if self.pair_entries is not None:
            add_entries(hists, self.pair_entries, native())
            self.pair_entries = None
        return hists

    def indexes(self) -> tuple[array[int], list[tuple[int, array[int]]]]:
        """Wait positions and barrier rows as int64 arrays (for the C gathers)."""
        if self.native_rows is None:
            self.native_rows = (array("q", self.positions),
                                [(line, array("q", idx)) for line, idx in self.barrier_rows])
        return self.native_rows

    def add_wait_stalls(self, mod: ModuleType, stalls: Sequence[int]) -> None:
        if self.acc_wait is None:
            self.acc_wait = array("q", bytes(8 * len(self.positions)))
        mod.gather_add(self.acc_wait, stalls, self.indexes()[0])

    def count_pairs(self, mod: ModuleType, times: Sequence[int], stalls: Sequence[int]) -> None:
        """Native path: issue-to-wait cycles of every (wait, producer) pair, counted in C."""
        mod.count_pairs(self.hist_dicts(), times, stalls, *self.pair_arrays())

    def pair_arrays(self) -> tuple[array[int], array[int]]:
        """The pairs' wait and producer positions as int64 arrays (the C fold's and counter's),
        made once."""
        if self.pair_index is None:
            waits, prods = self.pair_waits, self.pair_producers
            self.pair_index = (waits if isinstance(waits, array) else array("q", waits),
                               prods if isinstance(prods, array) else array("q", prods))
        return self.pair_index


def add_entries(hists: list[dict[int, int]], entries: Sequence[int], mod: ModuleType | None) -> None:
    """hists[pair][cycles] += count for each int64 (pair, cycles, count) triple of `entries` (a
    group's takes from the C fold), in order (in C with `mod`: `add_entries`)."""
    if mod is not None:
        mod.add_entries(hists, entries)
        return
    it = iter(entries)
    for pair, cycles, count in zip(it, it, it):
        h = hists[pair]
        h[cycles] = h.get(cycles, 0) + count


def merge_entries(dcyc: dict[tuple[int, int], dict[int, int]], pair_lines: list[tuple[int, int]],
                  entries: Sequence[int]) -> None:
    """The dist_cycles merge (`_merge_distances`) of the histograms the (pair, cycles, count)
    triples `entries` add up to, without making them: pair by pair, each pair's triples in their
    order (C, for int64 columns: `merge_entries_all`)."""
    triples = list(zip(entries[0::3], entries[1::3], entries[2::3]))
    for pair, c, count in sorted(triples, key=lambda t: t[0]):  # stable: in order within a pair
        hc = dcyc[pair_lines[pair]]
        hc[c] = hc.get(c, 0) + count


def _summed(total: Sequence[int] | None, part: Iterable[int] | None) -> Sequence[int] | None:
    """total + part element-wise, either None for zeros (an int64 array is taken as it is: its
    values came from int64 accumulators)."""
    if part is None:
        return total
    if total is None:
        return part if isinstance(part, (list, array)) else list(part)
    return list(map(add, total, part))


# Line numbers the native replay's table covers (4 int64 per line); a code object with rows beyond
# this replays in Python.
REPLAY_TABLE_MAX_LINES = 1 << 20


def replayed(lines: Sequence[int], tables: LineTables
             ) -> tuple[list[tuple[int, list[int]]], list[int], int]:
    """`reconstruct(lines, tables)`, in C for an int64 column (the native pass's groups) when the
    tables fit its per-line table; the Python replay otherwise (same results: test_native_equal)."""
    mod = native() if isinstance(lines, array) and lines.typecode == "q" else None
    fn = getattr(mod, "replay", None)  # None: a build without it
    if fn is not None:
        table = replay_table(tables)
        if table is not None:
            result: tuple[list[tuple[int, list[int]]], list[int], int] = fn(lines, table)
            return result
    return reconstruct(lines, tables)


def replay_table(tables: LineTables) -> array[int] | None:
    """`tables` as the native replay reads them, 4 int64 per line number: [1, pushes VM, pushes
    LGKM, scalar] for a memory row, [2, vm N, lgkm N, 0] for an s_waitcnt, zeros otherwise; None
    when a row does not fit (a line number that is not a small non-negative int, a memory row
    without its counter mask, a wait without thresholds): the Python replay decides those."""
    derived = tables.derived  # kept with the tables: built once per analysis
    if "replay table" not in derived:
        derived["replay table"] = _build_replay_table(tables)
    table: array[int] | None = derived["replay table"]
    return table


def _build_replay_table(tables: LineTables) -> array[int] | None:
    roles = tables.roles
    if not all(type(line) is int and 0 <= line < REPLAY_TABLE_MAX_LINES for line in roles):
        return None
    table = array("q", bytes(32 * (max(roles, default=-1) + 1)))
    for line, role in roles.items():
        if role == ROLE_MEM:
            mask = tables.pushes.get(line)
            if type(mask) is not int:
                return None
            row = (1, 1 if mask & VM else 0, 1 if mask & LGKM else 0, 1 if line in tables.scalar else 0)
        elif role == ROLE_WAIT:
            thresholds = tables.waits.get(line)
            if not (isinstance(thresholds, tuple) and len(thresholds) == 2
                    and all(type(t) is int and -(1 << 62) < t < 1 << 62 for t in thresholds)):
                return None
            row = (2, thresholds[0], thresholds[1], 0)
        else:
            continue
        table[4 * line:4 * line + 4] = array("q", row)
    return table


def _pairs(lines: Sequence[int], positions: list[int], entries: list[tuple[int, list[int]]],
           mod: ModuleType | None = None
           ) -> tuple[dict[int, list[int]], list[int], list[int], list[tuple[int, int]]]:
    """Producers per wait instance (lgkm entry then vm entry, as blame_wave joins them), and the
    (wait, producer) pairs in wait-position order: their positions and their lines (`mod`: in C,
    `pair_lists`, for an int64 sequence)."""
    if mod is not None and type(positions) is list and type(entries) is list:
        made: tuple[dict[int, list[int]], list[int], list[int], list[tuple[int, int]]] = \
            mod.pair_lists(lines, positions, entries)
        return made
    producers = _producers(entries)
    pair_waits = [w for w in positions for _ in producers.get(w, ())]
    pair_producers = [p for w in positions for p in producers.get(w, ())]
    return producers, pair_waits, pair_producers, [(lines[w], lines[p]) for w, p in
                                                   zip(pair_waits, pair_producers)]


def _producers(entries: list[tuple[int, list[int]]]) -> dict[int, list[int]]:
    producers: dict[int, list[int]] = {}
    for w, prods in entries:
        producers.setdefault(w, []).extend(prods)
    return producers


def _pair_index(lines: Sequence[int], positions: list[int], entries: list[tuple[int, list[int]]],
                mod: ModuleType | None) -> tuple[array[int], array[int], array[int]] | None:
    """`_pairs`' pair_waits and pair_producers as int64 arrays, with each wait position's number
    of pairs, made in C (`pair_index`) without the producers dict or the line pairs; None without
    `mod`, or for a value `_pairs` must decide."""
    if mod is None or type(positions) is not list or type(entries) is not list:
        return None
    made = mod.pair_index(lines, positions, entries)
    if made is None:
        return None
    cols = (array("q"), array("q"), array("q"))
    for col, raw in zip(cols, made):
        col.frombytes(raw)
    return cols


def _int64(column: Sequence[int]) -> bool:
    """An int64 column (the native pass's), which the C helpers read."""
    return isinstance(column, array) and column.typecode == "q"


def _backedges(lines: Sequence[int], cats: Sequence[int], mod: ModuleType | None = None
               ) -> list[tuple[tuple[int, int], int]]:
    """(branch line, target line) of each backward taken branch, with how often it is taken
    (`mod`: counted in C, `backedges`, for int64 columns)."""
    if mod is not None:
        counted: list[tuple[tuple[int, int], int]] = mod.backedges(lines, cats, DECODER_JUMP)
        return counted
    taken: dict[tuple[int, int], int] = {}
    n = min(len(lines), len(cats))
    # only the rows after a jump can be a taken branch's target: picked out at C speed
    for j in compress(range(n - 1), map(eq, cats, repeat(DECODER_JUMP))):
        line, prev_line = lines[j + 1], lines[j]
        if line < prev_line:
            key = (prev_line, line)
            taken[key] = taken.get(key, 0) + 1
    return list(taken.items())


def _barrier_rows(lines: Sequence[int], tables: LineTables, mod: ModuleType | None = None
                  ) -> list[tuple[int, list[int]]]:
    """The positions of each barrier line in `lines`, lines in first-position order (`mod`: found
    in C, `barrier_rows`, for an int64 column)."""
    barrier, column = _barrier_lines(tables)
    if mod is not None and column is not None:
        found: list[tuple[int, list[int]]] = mod.barrier_rows(lines, column)
        return found
    rows: dict[int, list[int]] = {}
    for idx, line in compress(enumerate(lines), map(barrier.__contains__, lines)):
        rows.setdefault(line, []).append(idx)
    return list(rows.items())


def _barrier_lines(tables: LineTables) -> tuple[set[int], array[int] | None]:
    """The barrier lines of `tables`, as a set and as an int64 column (None when one does not fit
    int64), made once per tables."""
    held = tables.derived.get("barrier lines")
    if held is None:
        barrier = {line for line, role in tables.roles.items() if role == ROLE_BARRIER}
        try:
            column: array[int] | None = array("q", sorted(barrier))
        except (OverflowError, TypeError):
            column = None
        held = tables.derived["barrier lines"] = (barrier, column)
    return held


class SequenceFolder:
    """The open sequence groups of one partial (see module doc)."""

    def __init__(self) -> None:
        self.groups: dict[GroupKey, SequenceGroup] = {}
        self.positions = 0  # Σ sequence lengths, bounded by MAX_GROUP_POSITIONS


def charge_windows(ends: list[int], states: tuple[int, ...], cycles: tuple[int, ...], begin: int,
                   charge: list[int]) -> None:
    """`_attribute_states` of hotspot/att/engine/wavepass.py by position: each timeline cycle goes to the
    instruction whose window covers it, into charge[j * N_STATES + state].

    `ends` is the running max of time + duration (window j ends there), so no record or line is
    looked up per charge. Needs states >= 0 and cycles >= 0 (checked by the caller), where it
    equals the per-record loop.
    """
    n_states = N_STATES
    last = len(ends) - 1
    j = 0
    slot = 0  # j * N_STATES
    t = begin
    end_j = ends[0]
    # Invariant between segments: window j is still open at t (end_j > t) or j is the last one.
    while end_j <= t and j < last:
        j += 1
        end_j = ends[j]
        slot += n_states
    for state, c in zip(states, cycles):
        seg_end = t + c
        if state < n_states:
            if seg_end <= end_j or j == last:
                charge[slot + state] += c  # the common case: the segment lies in one window
            else:
                while True:  # split the segment at the window ends inside it
                    charge[slot + state] += end_j - t
                    t = end_j
                    while end_j <= t and j < last:
                        j += 1
                        end_j = ends[j]
                        slot += n_states
                    if seg_end <= end_j or j == last:
                        charge[slot + state] += seg_end - t
                        break
        t = seg_end
        while end_j <= t and j < last:
            j += 1
            end_j = ends[j]
            slot += n_states


def fold_wave_columns(part: Partial, ins: Sequence[list[int]], timeline: Sequence[list[int]], edges: WaitcntEdges,
                      begin: int, end: int, se: int, cu: int, tables: LineTables) -> bool:
    """Fold one wave into `part` (a Partial) through its sequence group; False (nothing
    changed) when the wave must take the per-record path. What can fail runs before any change."""
    if part.records_only:
        return False
    try:
        prepared = _prepare(ins, timeline, begin)
    except (NotPlainIntegers, TypeError, ValueError, IndexError, KeyError, OverflowError):
        # From here on this partial folds record by record, on the dicts the per-record path
        # would have built so far (so float sums keep their order and errors stay the same).
        part.records_only = True
        part.finish()
        return False
    if prepared is None:
        return False
    times, cats, stalls, durations, lines, ends, states, cycles = prepared
    key = (lines, cats)
    group = part.open_groups.groups.get(key)
    if group is None:
        group = SequenceGroup(lines, cats, tables)

    def add_sums(g: SequenceGroup) -> None:
        g.add_columns(stalls, durations)
        charge_windows(ends, states, cycles, begin, g.charge_list())

    matches = not edges or edges == group.expected_edges
    return _fold(part, key, group, add_sums, lambda: ins, times, stalls, matches, lambda: edges,
                 len(edges), begin, end, se, cu, tables, None)


def fold_wave_scanned(part: Partial, mod: ModuleType, wave: ScannedWave, se: int, cu: int,
                      tables: LineTables) -> bool:
    """`fold_wave_columns` for a wave read by the native scanner (hotspot/att/engine/native.py): the
    columns are int64 buffers and the per-wave sums are added in C."""
    if part.records_only:
        return False
    # Keyed by the scanner's hash of the sequence (hashing ~12 KB of columns per wave in Python
    # costs more than the rest of the lookup); a different sequence under the same hash gets the
    # full key.
    groups = part.open_groups.groups
    key: GroupKey = wave.sequence_hash
    group = groups.get(key)
    if group is not None and group.scanned != (wave.lines, wave.cats):
        key = (wave.sequence_hash, wave.lines, wave.cats)
        group = groups.get(key)
    if group is None:
        group = SequenceGroup(array("q", wave.lines), array("q", wave.cats), tables)
        group.scanned = (wave.lines, wave.cats)
    matches = not wave.edges_key or wave.edges_key == group.expected_key(mod)
    return _fold(part, key, group, lambda g: g.add_scanned(mod, wave), wave.records,
                 wave.column("times"), wave.column("stalls"), matches, lambda: wave.waitcnt,
                 wave.edge_count, wave.begin, wave.end, se, cu, tables, mod)


def _fold(part: Partial, key: GroupKey, group: SequenceGroup, add_sums: Callable[[SequenceGroup], None],
          records: Callable[[], Sequence[list[int]]], times: Sequence[int], stalls: Sequence[int],
          matches: bool, edges: Callable[[], WaitcntEdges], n_edges: int, begin: int, end: int,
          se: int, cu: int, tables: LineTables, mod: ModuleType | None) -> bool:
    """The part of a wave's fold both column paths share: totals, barriers and wait blame.
    `matches`: the wave has no decoder edges or exactly those of its sequence's reconstruction;
    `mod`: the native module on the native path (None on the Python path)."""
    ekeys = None
    if not matches:
        try:
            ekeys = edge_keys(edges())  # malformed edges: per-record path, original error
        except (TypeError, ValueError, IndexError, KeyError):
            return False
    admit_group(part, part.open_groups, key, group)

    totals = part.totals
    totals.waves += 1
    totals.instructions += len(times)
    totals.cycles += end - begin
    group.waves += 1
    add_sums(group)
    # barrier instances, flat [arrival, release, ...]: int64 arrays on the native path (bounded
    # values), lists on the Python path (any integers)
    barriers = part.barriers
    if mod is not None:
        for line, idx in group.indexes()[1]:
            pairs = mod.arrivals(times, stalls, idx)
            arr = barriers.get((se, cu, line))
            if arr is None:
                barriers[(se, cu, line)] = array("q", pairs)
            elif isinstance(arr, array):
                arr.frombytes(pairs)
            else:
                arr.extend(memoryview(pairs).cast("q"))
    else:
        for line, rows in group.barrier_rows:
            t = list(map(times.__getitem__, rows))
            flat = t + t
            flat[0::2] = t
            flat[1::2] = map(add, t, map(stalls.__getitem__, rows))
            arr = barriers.get((se, cu, line))
            if arr is None:
                barriers[(se, cu, line)] = flat
            else:
                arr.extend(flat)

    blame: BlameAccumulator = part.blame
    if ekeys is not None:
        # Edges the reconstruction did not produce: placed and blamed the per-record way.
        blame.add_reconstructed(records(), ekeys, group.entries, group.positions, group.ooo)
        return True
    blame.out_of_order_waits += group.ooo
    if n_edges:
        blame.waves_edges += 1
        blame.edge_entries += n_edges
        blame.edge_entries_reconstructed += n_edges
    else:
        blame.waves_static += 1
    group.blame_waves += 1
    if mod is not None:
        group.add_wait_stalls(mod, stalls)
    else:
        group.wait_stall = _summed(group.wait_stall, map(stalls.__getitem__, group.positions))
    if not group.pair_waits:
        return True
    if mod is not None:
        group.count_pairs(mod, times, stalls)
    else:
        # issue-to-wait cycles per (wait, producer) pair: wait time - (producer time + stall)
        cycles = map(sub, map(sub, map(times.__getitem__, group.pair_waits),
                              map(times.__getitem__, group.pair_producers)),
                     map(stalls.__getitem__, group.pair_producers))
        group.distances.update(zip(range(len(group.pair_waits)), cycles))
    return True


# Waves a NativeFold adds into int64 before its sums go to Python integers: per-wave values are
# below 2**41 in magnitude (the scanner's bound), so 2**20 waves stay far below 2**63.
FOLD_SPILL_WAVES = 1 << 20
# Bits of the scanner's sequence hash NativeFold keys groups by (tests narrow it to force
# collisions: groups must then be told apart by their columns).
FOLD_HASH_MASK = (1 << 64) - 1
# Executed records above which a sequence is not registered with the C fold: its waves take the
# column path (fold_wave_scanned, the per-position work in C there too), whose per-wave Python
# overhead is nothing next to the positions, and no C copy of the group (~80 bytes per position)
# nor second scan of its first wave is made. Real waves execute a few thousand records; a single
# 30 MB wave file holds ~1.2 million.
NATIVE_GROUP_MAX_POSITIONS = 1 << 16


class NativeFold:
    """The fused native pass (`Fold` in hotspot/att/engine/_wavescan.c) for one partial.

    `wave(data, se)` folds a wave file entirely in C when its sequence group is registered and its
    edges are its reconstruction's; otherwise it returns the ScannedWave (None when the scanner
    cannot read the file) for the Python path, after handing the C sums that path could see out of
    order (barrier times, the group's histograms) to Python. `register` makes a group known to C
    once the Python path has built it. Sums reach the partial's Python objects in `settle_all`
    (end of a run), `release` (a group being flushed) and on the spill signal.
    """

    def __init__(self, mod: ModuleType, part: Partial, tables: LineTables,
                 issue: IssueWeights | None = None) -> None:
        self.mod = mod
        self.fold = mod.Fold(FOLD_SPILL_WAVES, FOLD_HASH_MASK)
        self.part = part
        self.tables = tables
        self.members: list[SequenceGroup | None] = []  # by C index
        # the columns of the last wave answered with them: handed back, or folded and kept (`keep`)
        self.kept: ScannedWave | None = None
        # with the rows' unit costs, C adds each folded wave's issue sums too (no second scan)
        self.issue: NativeIssue | None = None
        if issue is not None:
            if part.issue is None:
                part.issue = IssueAccumulator()
            self.issue = NativeIssue(self.fold, issue, part.issue)

    def wave(self, data: bytes, se: int, simd: int = -1, keep: bool = False
             ) -> "tuple[bool, ScannedWave | None]":
        """(done, scanned): done when C folded the wave (and, with issue weights, added its issue
        sums); else the Python path takes `scanned`. `keep`: the wave's columns are wanted either
        way (`kept`), from the one scan."""
        return self.folded(self.fold.wave(data, se, simd, keep), data, se, simd)

    def files(self, paths: list[str], ses: list[int], simds: list[int], start: int, stop: int,
              max_bytes: int | None, keep: bytes | None = None
              ) -> "tuple[int, bytes | None, tuple[Any, int] | None] | None":
        """Read and fold files start..stop-1 in C while C folds them (`Fold.files`): (i, data,
        res), i == stop when all were; else file i is either not read (res None: the caller reads
        it in Python, which refuses what C left) or read as `data` with `res` what `fold.wave`
        gave for it (for `folded`; data None when C folded it). `keep`: one byte per path, nonzero
        for a file whose columns are wanted (`kept`): C answers at that file even when it folds
        it. None without Fold.files (a platform without its calls)."""
        batch = getattr(self.fold, "files", None)
        if batch is None:
            return None
        from hotspot.capture import read_natively

        got: tuple[int, bytes | None, tuple[Any, int] | None] = read_natively(
            batch, paths, ses, simds, start, stop, max_bytes, keep)
        return got

    def folded(self, res: tuple[Any, int] | None, data: bytes | None, se: int, simd: int
               ) -> "tuple[bool, ScannedWave | None]":
        """`wave`'s answer from what `fold.wave` returned for `data`; the wave's columns, when the
        answer holds them, are left in `kept`."""
        self.kept = None
        if res is None:
            return True, None
        found, index = res
        if index <= -2:  # folded; -3/-4 with its columns (keep); -2/-4: the int64 sums are due
            if found is not None:
                self.kept = ScannedWave(*found)
            if index != -3:
                self.settle_all()
            return True, None
        if index == -1 and found is not None:
            # A sequence C does not know: build its group once, register it, fold again in C.
            scanned = self.kept = ScannedWave(*found)
            assert data is not None  # Fold.files hands the bytes back with every such answer
            if registrable(scanned) and self._adopt(scanned, data, se, simd):
                return True, None
            self.take_barriers()
            return False, scanned
        self.take_barriers()
        if index >= 0:
            self._take(index)
        self.kept = ScannedWave(*found) if found is not None else None
        return False, self.kept

    def _adopt(self, wave: ScannedWave, data: bytes, se: int, simd: int) -> bool:
        """Register the group of `wave` (built here when new) and fold the wave in C; False (and
        nothing changed) when C hands it back again, for the Python path to decide as before."""
        groups = self.part.open_groups.groups
        key: GroupKey = wave.sequence_hash
        group = groups.get(key)
        if group is not None and group.scanned != (wave.lines, wave.cats):
            key = (wave.sequence_hash, wave.lines, wave.cats)
            group = groups.get(key)
        new = group is None
        if group is None:
            group = SequenceGroup(array("q", wave.lines), array("q", wave.cats), self.tables)
            group.scanned = (wave.lines, wave.cats)
        elif group.native_index is not None:
            return False
        self._register(group, wave)
        # the wave C just handed back, still in its columns, folded without a second scan (a
        # build without `again`, or a wave whose columns C did not keep, is scanned again below)
        again = getattr(self.fold, "again", None)
        folded = again(se, simd) if again is not None else -1
        if folded > 0:
            if new:
                admit_group(self.part, self.part.open_groups, key, group)
            if folded == 2:
                self.settle_all()
            return True
        # 0: C declined the columns it holds (other edges, odd values), as a scan would
        res = self.fold.wave(data, se, simd) if folded < 0 else (None, -1)
        if res is not None and res[1] != -2:  # other edges or odd values: not folded
            if new:
                assert group.native_index is not None  # given by _register
                self.fold.drop_group(group.native_index)
                self.members[group.native_index] = None
                group.native_index = None
            return False
        if new:  # admitted once a wave is folded into it, as the Python path does
            admit_group(self.part, self.part.open_groups, key, group)
        if res is not None:
            self.settle_all()
        return True

    def last_ranges(self) -> tuple[list[Any], tuple[int, int] | None, tuple[int, int] | None]:
        """Ranges of the last wave's columns ([time, category, stall, duration, line], states,
        cycles; (min, max) or None): the hook for a check of a wave's values on the Python path."""
        ranges: tuple[list[Any], tuple[int, int] | None, tuple[int, int] | None] = \
            self.fold.last_ranges()
        return ranges

    def register(self, wave: ScannedWave) -> None:
        """Make the group the Python path just folded `wave` into known to C."""
        group = _scanned_group(self.part.open_groups.groups, wave)
        if group is not None and group.native_index is None and registrable(wave):
            self._register(group, wave)

    def _register(self, group: SequenceGroup, wave: ScannedWave) -> None:
        positions, rows = group.indexes()
        group.native_index = self.fold.add_group(
            wave.sequence_hash, wave.lines, wave.cats, group.expected_key(self.mod) or b"",
            group.ooo, positions, *group.pair_arrays(), rows,
            self.issue.shape_args(wave) if self.issue is not None else None)
        self.members.append(group)

    def release(self, group: SequenceGroup) -> None:
        """Hand a group's C sums to it and forget it in C (the group is being flushed)."""
        if group.native_index is not None:
            self._take(group.native_index)
            self.fold.drop_group(group.native_index)
            self.members[group.native_index] = None
            group.native_index = None

    def settle_all(self) -> None:
        self.take_barriers()
        waves, instructions, cycles, ooo, waves_edges, entries, waves_static = self.fold.take_totals()
        totals, blame = self.part.totals, self.part.blame
        totals.waves += waves
        totals.instructions += instructions
        totals.cycles += cycles
        blame.out_of_order_waits += ooo
        blame.waves_edges += waves_edges
        blame.edge_entries += entries
        blame.edge_entries_reconstructed += entries
        blame.waves_static += waves_static
        if self.issue is not None:
            self.issue.take()
        for i, group in enumerate(self.members):
            if group is not None:
                self._take(i)

    def detach(self) -> None:
        """Settle everything and leave the groups to Python (the partial is pickled or reused)."""
        self.settle_all()
        for group in self.members:
            if group is not None:
                group.native_index = None
        self.members = []
        self.part.native = None

    def take_barriers(self) -> None:
        barriers = self.part.barriers
        for key, pairs in self.fold.take_barriers():
            arr = barriers.get(key)
            if arr is None:
                barriers[key] = array("q", pairs)
            elif isinstance(arr, array):
                arr.frombytes(pairs)
            else:
                arr.extend(memoryview(pairs).cast("q"))

    def _take(self, index: int) -> None:
        taken = self.fold.take_group(index)
        group = self.members[index]
        if taken is None or group is None:
            return
        waves, blame_waves, stall, duration, charge, wait, entries = taken
        group.settle()
        # C's int64 sums as arrays when the group has none yet, else added into its integers
        group.stall = _summed(group.stall, array("q", stall))
        group.duration = _summed(group.duration, array("q", duration))
        group.charge = _summed(group.charge, array("q", charge))
        group.wait_stall = _summed(group.wait_stall, array("q", wait))
        group.waves += waves
        group.blame_waves += blame_waves
        if entries:  # (pair, cycles, count) int64 triples, first-seen order as per-wave counting
            if group.pair_hists is not None:  # dicts already: added into them
                add_entries(group.pair_hists, entries, self.mod)
            elif group.pair_entries is None:
                group.pair_entries = array("q")
                group.pair_entries.frombytes(entries)
            else:
                group.pair_entries.frombytes(entries)


class NativeIssue:
    """A partial's issue sums (hotspot/att/issue_share.py) while a NativeFold folds into it.

    C holds each (scope, SIMD)'s running float sums, seeded with the partial's, so that the waves C
    folds and those of the Python path (`add_wave`, the IssueAccumulator's signature) are added in
    file order, as one IssueAccumulator would add them: the same floats. `take` hands them over."""

    def __init__(self, fold: Any, weights: IssueWeights, acc: IssueAccumulator) -> None:
        self.fold = fold
        self.weights = weights
        self.acc = acc
        self.keys: list[ScopeKey] = [None, *weights.loops]  # C's scope index -> scope
        self.scopes = {scope: i for i, scope in enumerate(self.keys)}
        for (scope, (se, cu, simd)), sums in acc.sums.items():
            fold.issue_seed(self.scopes[scope], se, cu, simd, sums[0], sums[1], sums[2])

    def shape_args(self, wave: ScannedWave) -> tuple[Any, ...]:
        """The issue shape of the sequence of `wave` as Fold.add_group takes it."""
        # an int64 array (not the memoryview): `shape` counts it in C (count_lines) and finds the
        # loops' rows with array.index, where a memoryview was copied to a list and Counted
        lines = array("q")
        lines.frombytes(wave.lines)
        kernel, loops = self.acc.shape(self.weights, lines, (wave.sequence_hash, wave.lines))
        return (*kernel, [(self.scopes[scope], first, last, *sums)
                          for scope, first, last, sums in loops])

    def add_wave(self, w: IssueWeights, key: SimdKey, begin: int, end: int, lines: Sequence[int],
                 times: Sequence[int], durations: Sequence[int],
                 sequence: tuple[int, bytes] | None = None) -> None:
        self.acc.waves += 1
        se, cu, simd = key
        for scope, (lo, hi), sums in self.acc.wave_scopes(w, begin, end, lines, times, durations,
                                                          sequence):
            self.fold.issue_add(self.scopes[scope], se, cu, simd, lo, hi, *sums)

    def take(self) -> None:
        waves, slots, times = self.fold.take_issue()
        acc = self.acc
        acc.waves += waves
        for index, se, cu, simd, mfma, valu, vmem, n, spans in slots:
            slot = (self.keys[index], (se, cu, simd))
            sums = acc.sums.setdefault(slot, [0.0, 0.0, 0.0, 0.0])
            sums[0], sums[1], sums[2] = mfma, valu, vmem  # C's running sums continue these
            sums[3] += n
            flat = memoryview(spans).cast("q")
            acc.spans.setdefault(slot, []).extend(zip(flat[0::2].tolist(), flat[1::2].tolist()))
        for index, t in enumerate(times):
            if t is not None:  # a scope some wave was added to, even with no time
                scope = self.keys[index]
                acc.wave_time[scope] = acc.wave_time.get(scope, 0) + t


def registrable(wave: ScannedWave) -> bool:
    """The sequence of `wave` is short enough to be registered with the C fold."""
    return len(wave.lines) <= NATIVE_GROUP_MAX_POSITIONS * 8  # int64 column


def _scanned_group(groups: dict[GroupKey, SequenceGroup], wave: ScannedWave) -> SequenceGroup | None:
    """The open group of a natively scanned wave (the lookup of fold_wave_scanned)."""
    key: GroupKey = wave.sequence_hash
    group = groups.get(key)
    if group is not None and group.scanned != (wave.lines, wave.cats):
        group = groups.get((wave.sequence_hash, wave.lines, wave.cats))
    return group



class Partial(Protocol):
    """What folding a wave needs of the partial result it folds into (hotspot/att/engine/wavepass.py
    `WavePartial`), declared here so that this module does not import the one that imports it."""

    totals: WaveTotals
    blame: BlameAccumulator
    barriers: dict[tuple[int, int, int], list[int] | array[int]]
    open_groups: SequenceFolder
    records_only: bool
    native: NativeFold | None
    issue: IssueAccumulator | None

    def finish(self) -> object: ...

    def flush_group(self, group: SequenceGroup) -> None: ...


def admit_group(part: Partial, folder: SequenceFolder, key: GroupKey, group: SequenceGroup) -> None:
    """Make `group` an open group of `folder`, flushing all groups first to bound memory."""
    if key in folder.groups:
        return
    if folder.positions + len(group.lines) > MAX_GROUP_POSITIONS:
        for open_key in list(folder.groups):
            _close(part, folder, open_key)
    folder.groups[key] = group
    folder.positions += len(group.lines)


def _close(part: Partial, folder: SequenceFolder, key: GroupKey) -> None:
    group = folder.groups.pop(key)
    folder.positions -= len(group.lines)
    part.flush_group(group)


class NotPlainIntegers(Exception):
    """A wave holds numbers that are not ints (or not numbers): only the per-record path keeps
    their exact semantics (float sums in wave order, errors where the records raise)."""


def _prepare(ins: Sequence[list[int]], timeline: Sequence[list[int]], begin: int) -> tuple[Any, ...] | None:
    """Columns of a wave, its window ends and timeline columns; None when the wave is empty, has
    short rows or negative states/cycles; NotPlainIntegers when a value is not an int."""
    n = len(ins)
    m = len(timeline)
    if m:
        tcols = list(zip(*timeline))
        if len(tcols) != 2 or sum(map(len, timeline)) != 2 * m:
            return None
        states, cycles = tcols
        # a float or string makes a sum non-int or raises TypeError
        if type(sum(cycles)) is not int or type(sum(states)) is not int:
            raise NotPlainIntegers
        if min(cycles) < 0 or min(states) < 0:
            return None
    else:
        states = cycles = ()
    if n == 0:
        return None
    cols = list(zip(*ins))
    if len(cols) < 5:
        return None
    times, cats, stalls, durations, lines = cols[:5]
    for col in (times, stalls, durations, lines):
        if type(sum(col)) is not int:
            raise NotPlainIntegers
    ends = list(map(add, times, durations))
    if ends != sorted(ends):  # windows end at the running max (always sorted in real traces)
        ends = list(accumulate(ends, max))
    return times, cats, stalls, durations, lines, ends, states, cycles


def flush_group(group: SequenceGroup, totals: WaveTotals,
                line_states: dict[int, list[int]], states: list[int],
                backedges: dict[tuple[int, int], list[int]], blame: BlameAccumulator) -> None:
    """Fold a sequence group's sums into the per-line dicts (what the per-record path builds)."""
    if group.waves == 0:
        return
    group.settle()
    mod = native()
    _fold_group_lines(group, totals.per_line, line_states, mod)
    _flush_totals(group, totals, states, backedges, mod)
    if group.blame_waves:
        _flush_blame(group, blame, mod)


def flush_groups(groups: Sequence[SequenceGroup], totals: WaveTotals,
                 line_states: dict[int, list[int]], states: list[int],
                 backedges: dict[tuple[int, int], list[int]], blame: BlameAccumulator) -> None:
    """`flush_group` of each group in turn (the dicts end up the same, in the same order: the sums
    are integers, so adding a line's groups at once equals adding them in turn), with the
    per-line and blame dict updates of all groups made at once in C (`fold_lines_all`,
    `blame_waits_all`): a kernel's sequences share its lines, so each line's entries are touched
    once per call instead of once per sequence. Each phase writes its own dicts, so running one
    phase for all groups before the next leaves every dict's insertion order as the loop leaves it."""
    mod = native()
    if mod is None:
        for group in groups:
            flush_group(group, totals, line_states, states, backedges, blame)
        return
    live = [g for g in groups if g.waves]
    for group in live:
        group.settle()
    if not mod.fold_lines_all(totals.per_line, line_states,
                              [(g.lines, g.waves, g.duration, g.stall, g.charge) for g in live]):
        for group in live:  # a column of Python integers, or sums past int64
            _fold_group_lines(group, totals.per_line, line_states, mod)
    for group in live:
        _flush_totals(group, totals, states, backedges, mod)
    blamed = [g for g in live if g.blame_waves]
    if not mod.blame_waits_all(
            [(g.lines, g.positions, () if g.wait_stall is None else g.wait_stall,
              g.producers if g.pair_counts is None
              else (g.pair_counts, g.pair_producers), g.blame_waves) for g in blamed],
            NO_PRODUCER, blame.blame, blame.wait_stall, blame.wait_hits, blame.dist_cycles,
            blame.dist_instructions):
        for group in blamed:
            _blame_waits_call(group, blame, mod)
    # the groups' cycle histograms, at once when they are all the C fold's taken entries
    if all(not g.distances and g.pair_hists is None for g in blamed) and mod.merge_entries_all(
            blame.dist_cycles, [(g.lines, *g.pair_arrays(), g.pair_entries) for g in blamed
                                if g.pair_entries is not None]):
        return
    for group in blamed:
        _merge_distances(group, blame, mod)


def _fold_group_lines(group: SequenceGroup, per_line: dict[int, list[int]],
                      line_states: dict[int, list[int]], mod: ModuleType | None) -> None:
    """The per-line dicts' part of flush_group (of a settled group with waves)."""
    duration, stall, charge = group.duration, group.stall, group.charge
    assert duration is not None and stall is not None and charge is not None  # settled
    if mod is not None:
        mod.fold_lines(per_line, line_states, group.lines, group.waves, duration, stall, charge)
    else:
        _fold_lines(per_line, line_states, group.lines, group.waves, duration, stall, charge)


def _flush_totals(group: SequenceGroup, totals: WaveTotals, states: list[int],
                  backedges: dict[tuple[int, int], list[int]], mod: ModuleType | None) -> None:
    """The length histogram, state totals and back-edges part of flush_group."""
    waves = group.waves
    duration, stall, charge = group.duration, group.stall, group.charge
    assert duration is not None and stall is not None and charge is not None  # settled
    totals.add_sequence(group.lines, duration, stall, waves)
    # Every in-range timeline cycle is charged to some instruction, so these are the totals.
    sums = (mod.charge_sums(charge) if mod is not None and isinstance(charge, array)
            and charge.typecode == "q" else None)
    for i in range(N_STATES):
        states[i] += sums[i] if sums is not None else sum(charge[i::N_STATES])
    for key, taken in group.backedges:
        be = backedges.get(key)
        if be is None:
            be = backedges[key] = [0, 0]
        be[0] += taken * waves
        be[1] += waves


def _fold_lines(per_line: dict[int, list[int]], line_states: dict[int, list[int]],
                lines: Sequence[int], waves: int, duration: Sequence[int], stall: Sequence[int],
                charge: Sequence[int]) -> None:
    """Per-line hit/latency/stall and per-line wave states of a group (fold_lines in C)."""
    for line, d, s in zip(lines, duration, stall):
        acc = per_line.get(line)
        if acc is None:
            per_line[line] = [waves, d, s]
        else:
            acc[0] += waves
            acc[1] += d
            acc[2] += s
    for j, line in enumerate(lines):
        window = charge[j * N_STATES:(j + 1) * N_STATES]
        if any(window):  # the per-record path creates a line's entry on its first charge
            ls = line_states.get(line)
            if ls is None:
                line_states[line] = list(window)
            else:
                for i, v in enumerate(window):
                    ls[i] += v


def _flush_blame(group: SequenceGroup, acc: BlameAccumulator, mod: ModuleType | None) -> None:
    """The blame_wave bookkeeping of the group's reconstructed waves, from its column sums; the
    dict updates in C with `mod` (`blame_waits`, `merge_hists`: the same operations in the same
    order as the loops here, which are their twins)."""
    _blame_waits_call(group, acc, mod)
    _merge_distances(group, acc, mod)


def _blame_waits_call(group: SequenceGroup, acc: BlameAccumulator, mod: ModuleType | None) -> None:
    if mod is not None:
        mod.blame_waits(group.lines, group.positions, group.wait_stall or (), group.producers,
                        group.blame_waves, NO_PRODUCER, acc.blame, acc.wait_stall, acc.wait_hits,
                        acc.dist_cycles, acc.dist_instructions)
    else:
        _blame_waits(group, acc)


def _merge_distances(group: SequenceGroup, acc: BlameAccumulator, mod: ModuleType | None) -> None:
    """The group's issue-to-wait cycle histograms added into dist_cycles (whose keys the blame
    of the group made)."""
    dcyc = acc.dist_cycles
    pair_lines = group.pair_lines
    for (pair, c), count in group.distances.items():
        hc = dcyc[pair_lines[pair]]
        hc[c] = hc.get(c, 0) + count
    if group.pair_entries is not None:  # only when there are no pair_hists
        # in C as flush_groups merges them (False: a sum past int64, for the twin)
        if mod is None or not _int64(group.lines) or not mod.merge_entries_all(
                dcyc, [(group.lines, *group.pair_arrays(), group.pair_entries)]):
            merge_entries(dcyc, pair_lines, group.pair_entries)
        return
    if mod is not None:
        mod.merge_hists(dcyc, pair_lines, group.pair_hists or [])
        return
    for pair, hist in enumerate(group.pair_hists or ()):
        hc = dcyc[pair_lines[pair]]
        for c, count in hist.items():
            hc[c] = hc.get(c, 0) + count


def _blame_waits(group: SequenceGroup, acc: BlameAccumulator) -> None:
    """Each wait position's stall and hits, its blame per producer and the instruction-distance
    histograms (C: `blame_waits`)."""
    bw = group.blame_waves
    lines = group.lines
    blame, wait_stall, wait_hits = acc.blame, acc.wait_stall, acc.wait_hits
    dcyc, dins = acc.dist_cycles, acc.dist_instructions
    for w, stall in zip(group.positions, group.wait_stall or ()):
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
