"""Per-wave values of one dispatch's code rows: the samples `hotspot diff` resamples.

The wave pass (hotspot/att/engine/) adds every wave into column sums and never keeps a wave's own
values, which is what analyze needs and all it pays for. diff needs the spread between waves, so it
asks for this separate, simpler pass: each wave file read through the same reader and checks
(`read_wave`: the native scanner when built, else orjson; same values either way), its stall and
duration summed per code line, and its wait stall split over the producers as the wait attribution
does (hotspot/att/waits/). Only diff calls it; analyze is unchanged.

Per loop iteration values are not taken: the iterations of one wave share that wave's placement
and memory traffic, so they are not independent samples of the row; the wave is the unit.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from fractions import Fraction
from itertools import accumulate
from operator import itemgetter, sub

from hotspot.arch.waitcnt import GFX9, WaitcntRules
from hotspot.att.engine.native import Rows, read_wave
from hotspot.att.engine.wavepass import sample_wave_files
from hotspot.att.waits.accumulate import BlameAccumulator
from hotspot.att.waits.counters import NO_PRODUCER, LineTables, build_tables
from hotspot.att.waits.replay import edge_keys, reconstruct
from hotspot.capture import CodeRow, Wave, WaveFile
from hotspot.record import record


# Waves read per dispatch at most (spread over SE/SIMD groups like --max-waves): the resampling's
# cost grows with them, and a few hundred waves pin a mean down as well as thousands; the per-line
# lists cost ~8 bytes a wave a code line (a 30,000-wave capture would hold gigabytes).
MAX_SAMPLE_WAVES = 256


@record
class WaveSamples:
    """One dispatch's per-wave values, wave k at index k of every list."""

    waves: list[str]  # wave file names, in read order
    stall: dict[int, list[int]]  # code line number -> stall cycles per wave (0: not executed)
    latency: dict[int, list[int]]  # code line number -> latency (duration) cycles per wave
    hits: dict[int, list[int]]  # code line number -> executions per wave
    blame: dict[int, list[float]]  # producer code line -> wait stall blamed on it, per wave


def wave_samples(files: Sequence[WaveFile], all_rows: Sequence[CodeRow], max_waves: int | None,
                 max_bytes: int | None, rules: WaitcntRules | None = GFX9) -> WaveSamples:
    """Per-wave samples of the wave files analyze reads (the same `--max-waves` choice), at most
    MAX_SAMPLE_WAVES of them."""
    cap = MAX_SAMPLE_WAVES if max_waves is None else min(max_waves, MAX_SAMPLE_WAVES)
    chosen = sample_wave_files(files, cap)
    tables = build_tables(all_rows, rules)
    n = len(chosen)
    stall: dict[int, list[int]] = {}
    latency: dict[int, list[int]] = {}
    hits: dict[int, list[int]] = {}
    blame: dict[int, list[float]] = {}
    sequences: dict[tuple[int, ...], _Sequence] = {}  # executed order -> its static facts
    for k, wf in enumerate(chosen):
        wave = read_wave(wf, max_bytes)
        _, _, stalls, durations, lines = _columns(wave)
        key = tuple(lines)
        seq = sequences.get(key)
        if seq is None:
            seq = sequences[key] = _Sequence(key, tables)
        for line, s, d, h in zip(seq.lines, seq.sums(stalls), seq.sums(durations), seq.hits):
            col = stall.get(line)
            if col is None:
                col = stall[line] = [0] * n
                latency[line] = [0] * n
                hits[line] = [0] * n
            col[k] = s
            latency[line][k] = d
            hits[line][k] = h
        for pline, value in seq.blame(wave, stalls).items():
            col_b = blame.get(pline)
            if col_b is None:
                col_b = blame[pline] = [0.0] * n
            col_b[k] = value
    return WaveSamples([wf.path.name for wf in chosen], stall, latency, hits, blame)


class _Sequence:
    """What depends only on a wave's executed order (all waves of a real dispatch share one or a
    few): its records grouped by code line, and its wait/producer replay."""

    def __init__(self, lines: tuple[int, ...], tables: LineTables) -> None:
        self.order = sorted(range(len(lines)), key=lines.__getitem__)  # stable: by line, then position
        self.lines: list[int] = []
        self.hits: list[int] = []
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
        self.replay = reconstruct(lines, tables)
        entries, _, _ = self.replay
        self.entry_keys = [(lines[w], tuple(lines[p] for p in prods)) for w, prods in entries]
        # wait position -> its producers' lines (lgkm entry then vm entry, as blame_wave joins them)
        producers: dict[int, list[int]] = {}
        for w, prods in entries:
            producers.setdefault(w, []).extend(lines[p] for p in prods)
        self.producers = list(producers.items())

    def sums(self, column: Sequence[int]) -> list[int]:
        """Per code line sum of `column` (one value per record), in self.lines order (C loops:
        gather in line order, prefix sums, differences at the line boundaries)."""
        if len(self.order) < 2 or len(self.ends) < 2:  # itemgetter of one index is not a tuple
            prefix = list(accumulate(map(column.__getitem__, self.order), initial=0))
            return [prefix[e] - prefix[b] for b, e in zip(self.starts, self.ends)]
        prefix = list(accumulate(self.gather(column), initial=0))
        return list(map(sub, self.at_ends(prefix), self.at_starts(prefix)))

    def blame(self, wave: Wave, stalls: Sequence[int]) -> dict[int, float]:
        """Producer line -> wait stall blamed on it in this wave, as the wait attribution splits it
        (each wait instance's stall in equal parts over its producers)."""
        edges = edge_keys(wave.waitcnt) if wave.waitcnt else None
        out: dict[int, float] = {}
        if edges is None or edges == self.entry_keys:  # the decoder's edges are the replay's
            for w, plines in self.producers:
                share = stalls[w] / len(plines)
                for p in plines:
                    out[p] = out.get(p, 0.0) + share
            return out
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


def _columns(wave: Wave) -> tuple[Sequence[int], ...]:
    """(times, cats, stalls, durations, lines) of a wave's records, without a list per record."""
    ins = wave.instructions
    if isinstance(ins, Rows):
        return ins.cols[:5]
    if not ins:
        return ((),) * 5
    return tuple(zip(*ins))[:5]


@record
class DispatchSamples:
    """A dispatch dir's per-wave samples and its kernel's full instruction listing."""

    samples: WaveSamples
    code: list[tuple[int, str, str]]  # (code line number, ISA text, source label or "") per row


def dispatch_samples(d: Path, kernel: str | None, max_waves: int | None,
                     max_bytes: int | None) -> DispatchSamples:
    """Open the capture as analyze does and take its per-wave samples (capture warnings are
    analyze's, already reported by the caller's analysis of the same dir)."""
    from hotspot.att.analyze import _waitcnt_rules
    from hotspot.capture import open_capture

    cap = open_capture(d, kernel, max_bytes)
    ignored: list[str] = []
    arch = cap.arch()
    rules = _waitcnt_rules(cap.dispatch, arch, ignored)
    samples = wave_samples(cap.wave_files, cap.table.rows, max_waves, max_bytes, rules)
    code = [(r.line_number, r.isa, r.source.label if r.source else "") for r in cap.rows]
    return DispatchSamples(samples, code)
