"""Per-wave values of the code rows, taken in the wave pass itself (diff's resampling input).

The wave pass adds every wave into column sums and keeps no wave's own values. diff needs the
spread between waves, so for the waves it asks for (PassOptions.sample) the pass also sums each of
those waves' stall and duration per code line and splits its wait stall over the producers as the
wait attribution does (hotspot/att/waits/), from the bytes it already read: each wave file is
opened once (hotspot/att/wave_samples.py assembles the result).

Per loop iteration values are not taken: the iterations of one wave share that wave's placement
and memory traffic, so they are not independent samples of the row; the wave is the unit.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable, Sequence
from fractions import Fraction
from itertools import accumulate, chain, compress
from operator import itemgetter, sub, truediv
from types import ModuleType
from typing import Any

from hotspot.att.engine.native import Rows, ScannedWave, native, scan
from hotspot.att.waits.accumulate import BlameAccumulator
from hotspot.att.waits.waitcnt_rules import NO_PRODUCER, LineTables
from hotspot.att.waits.replay import edge_keys, reconstruct
from hotspot.capture import WAVE_STATES, Wave, WaveFile, check_wave, scanned_ranges, wave_of_bytes

N_STATES = len(WAVE_STATES)

# One wave's values: (code lines it executed, Σ stall, Σ duration, executions per line, wait stall
# blamed per producer line, (CU, begin cycle)). Plain values: picklable from a pool worker.
WaveSample = tuple[list[int], list[int], list[int], list[int], dict[int, float], tuple[int, int]]


class SequenceFacts:
    """What depends only on a wave's executed order (all waves of a real dispatch share one or a
    few): its records grouped by code line, and its wait/producer replay."""

    def __init__(self, lines: tuple[int, ...], tables: LineTables,
                 replay: tuple[list[tuple[int, list[int]]], list[int], int] | None = None) -> None:
        """`replay`: the sequence's wait replay when the wave pass has it already."""
        self.sequence = lines
        # the lines in first-run order and their executions (the native path's per-line sums)
        self.line_order: list[int] | None = None
        self.line_hits: list[int] = []
        self.grouped = False  # the records grouped by line: made when `sums` first needs them
        self.replay = replay if replay is not None else reconstruct(lines, tables)
        entries, _, _ = self.replay
        # wait position -> its producers' lines (lgkm entry then vm entry, as blame_wave joins them)
        producers: dict[int, list[int]] = {}
        for w, prods in entries:
            producers.setdefault(w, []).extend(lines[p] for p in prods)
        # per producer line, in first-met order: the wait positions whose stall it shares and in
        # how many parts (the terms `replayed_blame` adds, in the order it adds them)
        terms: dict[int, tuple[list[int], list[int]]] = {}
        for w, plines in producers.items():
            for p in plines:
                ws, ks = terms.setdefault(p, ([], []))
                ws.append(w)
                ks.append(len(plines))
        self.terms = list(terms.items())
        self._entry_keys: list[tuple[int, tuple[int, ...]]] | None = None
        self._runs: StraightRuns | None | bool = False  # False: not made yet

    def straight_runs(self, mod: ModuleType, lines: bytes) -> "StraightRuns | None":
        """The sequence's straight runs (`lines`: its int64 line column), made on first use; None
        when the per-record fold is the cheaper (short runs) or the only exact one (a huge wave,
        line numbers no code listing has)."""
        if self._runs is False:
            n = len(lines) // 8
            span: tuple[int, int] | None = mod.col_range(lines) if 0 < n < RUN_MAX_RECORDS else None
            if span is not None and span[0] >= 0 and span[1] < RUN_MAX_LINE:
                self._runs = StraightRuns.of(mod, lines, span[1] + 1)
            else:
                self._runs = None
        return self._runs  # type: ignore[return-value]  # made above: never False here

    @property
    def entry_keys(self) -> list[tuple[int, tuple[int, ...]]]:
        """The replay's edges as the decoder writes them (made when a wave's edges are compared)."""
        if self._entry_keys is None:
            lines = self.sequence
            self._entry_keys = [(lines[w], tuple(lines[p] for p in prods))
                                for w, prods in self.replay[0]]
        return self._entry_keys

    def group_by_line(self) -> None:
        lines = self.sequence
        self.order = sorted(range(len(lines)), key=lines.__getitem__)  # stable: by line, then position
        self.lines: list[int] = []
        self.ends: list[int] = []  # in `order`, the records of self.lines[i] end before ends[i]
        for pos, idx in enumerate(self.order):
            if not self.lines or lines[idx] != self.lines[-1]:
                if self.lines:
                    self.ends.append(pos)
                self.lines.append(lines[idx])
        if self.lines:
            self.ends.append(len(lines))
        self.starts = [0, *self.ends[:-1]]
        self.hits = list(map(sub, self.ends, self.starts))
        self.gather = itemgetter(*self.order)
        self.at_ends = itemgetter(*self.ends)
        self.at_starts = itemgetter(*self.starts)
        self.grouped = True

    def sums(self, column: Sequence[int]) -> list[int]:
        """Per code line sum of `column` (one value per record), in self.lines order (C loops:
        gather in line order, prefix sums, differences at the line boundaries)."""
        if not self.grouped:
            self.group_by_line()
        if len(self.order) < 2 or len(self.ends) < 2:  # itemgetter of one index is not a tuple
            prefix = list(accumulate(map(column.__getitem__, self.order), initial=0))
            return [prefix[e] - prefix[b] for b, e in zip(self.starts, self.ends)]
        prefix = list(accumulate(self.gather(column), initial=0))
        return list(map(sub, self.at_ends(prefix), self.at_starts(prefix)))

    def replayed_blame(self, stalls: Sequence[int]) -> dict[int, float]:
        """`blame` when the wave's decoder edges are this sequence's replay (or it has none)."""
        # each wait instance's stall in equal parts over its producers, summed per producer in
        # wait order (C-level maps per producer)
        at = stalls.__getitem__
        return {p: sum(map(truediv, map(at, ws), ks), 0.0) for p, (ws, ks) in self.terms}

    def blame(self, wave: Wave, stalls: Sequence[int]) -> dict[int, float]:
        """Producer line -> wait stall blamed on it in this wave, as the wait attribution splits it
        (each wait instance's stall in equal parts over its producers)."""
        edges = edge_keys(wave.waitcnt) if wave.waitcnt else None
        out: dict[int, float] = {}
        if edges is None or edges == self.entry_keys:  # the decoder's edges are the replay's
            return self.replayed_blame(stalls)
        entries, positions, ooo = self.replay
        acc = BlameAccumulator.empty()
        ins = wave.instructions
        acc.add_reconstructed(ins if isinstance(ins, list) else list(ins), edges, entries,
                              positions, ooo)
        exact: dict[int, Fraction] = {}
        for (_, pline, k), s in acc.blame.items():
            if pline != NO_PRODUCER:
                exact[pline] = exact.get(pline, Fraction(0)) + Fraction(s, k)
        return {p: float(v) for p, v in exact.items()}


def columns(wave: Wave) -> tuple[Sequence[int], ...]:
    """(times, cats, stalls, durations, lines) of a wave's records, without a list per record."""
    ins: Any = wave.instructions
    if isinstance(ins, Rows):
        return tuple(ins.cols[:5])
    if not ins:
        return ((),) * 5
    return tuple(zip(*ins))[:5]


def wave_of_data(wf: WaveFile, data: bytes, scanned: ScannedWave | None = None) -> Wave:
    """The checked Wave of a wave file's bytes, through the native scanner when it is in use (the
    records kept as int64 columns; `scanned`: its scan when taken already), else orjson: the same
    values either way."""
    mod = native()
    if scanned is None and mod is not None:
        scanned = scan(mod, data)
    if scanned is None or mod is None:
        return wave_of_bytes(wf, data)
    return wave_of_scanned(wf, mod, scanned)


def wave_of_scanned(wf: WaveFile, mod: ModuleType, scanned: ScannedWave) -> Wave:
    """The checked Wave of a wave's scanned columns (`wave_of_data` once the bytes are scanned)."""
    check_wave(wf.where, scanned.begin, scanned.end, *scanned_ranges(mod, scanned))
    records = Rows(*(scanned.column(c) for c in ("times", "cats", "stalls", "durations", "lines")))
    return Wave(wf, scanned.begin, scanned.end, records,
                Rows(scanned.column("states"), scanned.column("cycles")), scanned.waitcnt,
                scanned.cu)


Replay = tuple[list[tuple[int, list[int]]], list[int], int]


def sample_wave(wave: Wave, tables: LineTables, sequences: dict[Any, SequenceFacts],
                replay: Callable[[], Replay | None] | None = None) -> WaveSample:
    """One wave's per-line sums and blame (`sequences`: the static facts met so far, by order;
    `replay`: the pass's replay of this wave's sequence, asked for when the sequence is new)."""
    _, _, stalls, durations, lines = columns(wave)
    key = tuple(lines)
    seq = sequences.get(key)
    if seq is None:
        seq = sequences[key] = SequenceFacts(key, tables, replay() if replay is not None else None)
    stall_sums, duration_sums = seq.sums(stalls), seq.sums(durations)
    return (seq.lines, stall_sums, duration_sums, seq.hits, seq.blame(wave, stalls),
            (wave.cu if wave.cu is not None else -1, wave.begin))


def sample_scanned(wf: WaveFile, scanned: ScannedWave, tables: LineTables,
                   sequences: dict[Any, SequenceFacts], replay: Replay | None,
                   expected_edges: Callable[[], bytes] | None) -> WaveSample:
    """`sample_wave` of a natively scanned wave (the columns of the fold's own scan of its
    file), without turning its columns or its decoder edges into Python lists unless they differ
    from its sequence's replay (`expected_edges`: that replay's edges in the scanner's encoding,
    when the pass has them)."""
    mod = native()
    assert mod is not None
    check_wave(wf.where, scanned.begin, scanned.end, *scanned_ranges(mod, scanned))
    key = scanned.lines  # int64 bytes: hashed in C
    seq = sequences.get(key)
    if seq is None:
        seq = sequences[key] = SequenceFacts(tuple(scanned.column("lines")), tables, replay)
    stalls = scanned.column("stalls")
    if not scanned.edge_count or (expected_edges is not None
                                  and scanned.edges_key == expected_edges()):
        blamed = seq.replayed_blame(stalls)
    else:  # other edges than the replay's: the exact split, over the parsed records
        blamed = seq.blame(wave_of_scanned(wf, mod, scanned), stalls)
    runs = seq.straight_runs(mod, scanned.lines)
    if runs is not None:  # per line Σ stall and Σ duration: one C vector add per straight run
        return (runs.order, runs.sums(scanned.stalls), runs.sums(scanned.durations), runs.hits,
                blamed, (scanned.cu if scanned.cu is not None else -1, scanned.begin))
    # per line [executions, Σ duration, Σ stall], summed in C (the pass's own per-line fold, one
    # wave at a time; no timeline charge)
    per_line: dict[int, list[int]] = {}
    n = len(stalls)
    mod.fold_lines(per_line, {}, scanned.lines, 1, scanned.durations, scanned.stalls,
                   bytes(8 * N_STATES * n))
    sums = list(per_line.values())
    if seq.line_order is None:  # the same order for every wave of the sequence: one shared list
        seq.line_order = list(per_line)
        seq.line_hits = [v[0] for v in sums]
    return (seq.line_order, [v[2] for v in sums], [v[1] for v in sums], seq.line_hits,
            blamed, (scanned.cu if scanned.cu is not None else -1, scanned.begin))


# A straight run costs one C call (~0.4 µs, slicing included) where the per-record fold costs
# ~0.08 µs a record: runs pay when they hold this many records on average.
RUN_RECORDS = 8
# Per-wave int64 sums stay exact below this many records (scanned values are under 2**40).
RUN_MAX_RECORDS = 1 << 22
# The per-line array is indexed by line number: code listings hold far fewer rows.
RUN_MAX_LINE = 1 << 20


class StraightRuns:
    """A sequence cut into straight runs: maximal stretches of records whose code lines go up by
    one (straight-line code between taken branches; a loop body is a run per iteration). The
    records of a run add to a slice of a per-line array indexed by line number, so a wave's
    per-line sums are one C vector add per run (`_wavescan.add`), not a dict update per record.
    The sums are the per-record fold's (`_wavescan.fold_lines`), in its order: exact integers."""

    @staticmethod
    def of(mod: ModuleType, lines: bytes, size: int) -> "StraightRuns | None":
        """The runs of a sequence's int64 line column (line numbers 0 <= line < size); None when
        they are too short to pay."""
        n = len(lines) // 8
        starts = [0]
        if n > 1:
            # a run starts wherever a record's line is not the previous record's + 1: the words
            # where (previous + 1) XOR line is not 0 (vector add, big-integer XOR, compress: C)
            view = memoryview(lines)
            after = array("q")
            after.frombytes(view[:-8])
            mod.add(after, array("q", [1]) * (n - 1))
            moved = array("q")
            moved.frombytes((int.from_bytes(after.tobytes(), "little")
                             ^ int.from_bytes(view[8:], "little")).to_bytes(8 * (n - 1), "little"))
            starts += compress(range(1, n), moved)
        if len(starts) * RUN_RECORDS > n:
            return None
        return StraightRuns(mod, memoryview(lines).cast("q"), starts, size)

    def __init__(self, mod: ModuleType, lines: memoryview, starts: list[int], size: int) -> None:
        self._add = mod.add
        n = len(lines)
        ends = [*starts[1:], n]
        firsts = list(map(lines.__getitem__, starts))
        lengths = list(map(sub, ends, starts))
        self.runs = list(zip(firsts, lengths, starts, ends))
        self.size = size
        # lines in first-run order (as the per-record fold meets them; a repeated run, a loop's
        # next iteration, adds none) and their executions
        distinct = dict.fromkeys(zip(firsts, lengths))
        self.order = list(dict.fromkeys(chain.from_iterable(
            range(first, first + length) for first, length in distinct)))
        self._back = picker(self.order)
        self.hits = self.sums(array("q", [1]) * n)

    def sums(self, column: bytes | array[int]) -> list[int]:
        """Per line (in `order`) the sum of an int64 column (one value per record)."""
        vector_add = self._add
        acc = array("q", bytes(8 * self.size))
        out = memoryview(acc)
        col = memoryview(column).cast("B").cast("q")
        for first, length, start, end in self.runs:
            vector_add(out[first:first + length], col[start:end])
        return list(self._back(acc))


def picker(idx: list[int]) -> Callable[[Sequence[int]], Sequence[int]]:
    """xs -> (xs[i] for i in idx), as a tuple (itemgetter of one index gives no tuple)."""
    if len(idx) > 1:
        return itemgetter(*idx)
    return lambda xs: tuple(xs[i] for i in idx)
