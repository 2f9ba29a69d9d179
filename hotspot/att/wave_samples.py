"""Per-wave values of one dispatch's code rows: the samples `hotspot diff` resamples.

They come from the analysis's own wave pass (hotspot/att/engine/samples.py): diff asks for them
(`AnalyzeOptions.wave_samples`), the pass keeps the own per-line values of those waves from the
bytes it reads, and `publish_samples` hands them to the diff step of the same command through the
capture session, so each wave file is opened once per side. Only when the analysis came from the
result cache without them does `dispatch_samples` read the sampled waves itself, once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import chain, repeat
from pathlib import Path
from typing import TYPE_CHECKING

from hotspot.arch.waitcnt import GFX9, WaitcntRules
from hotspot.att.engine.samples import (
    SequenceFacts,
    WaveSample,
    picker,
    sample_wave,
    wave_of_data,
)
from hotspot.att.engine.wavepass import sample_wave_files
from hotspot.att.waits.waitcnt_rules import build_tables
from hotspot.capture import CodeRow, WaveFile, read_wave_bytes
from hotspot.record import record

if TYPE_CHECKING:
    from hotspot.capture import Capture

# Waves sampled per dispatch at most (spread over SE/SIMD groups like --max-waves): the resampling's
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
    # (shader engine, CU, begin cycle) per wave: what groups waves into workgroups
    placement: list[tuple[int, int, int]] | None = None


def assemble(chosen: Sequence[WaveFile], got: Mapping[str, WaveSample]) -> WaveSamples:
    """The samples of `chosen` (in that order) from their per-wave values. Waves of one sequence
    (or of sequences meeting their lines in one order) share a list of lines: their values are
    transposed together (C-level zips); when waves met different lines, each wave's values are
    gathered over the union of lines by its sequence's itemgetter (0 where it did not run one)
    and transposed, in C as well."""
    values = [got[wf.where] for wf in chosen]
    by_lines: dict[int, tuple[list[int], list[int]]] = {}  # id of a lines list -> (it, waves)
    # sequences that differ only in trip counts meet their lines in one order: equal lists are
    # one key (the first met), so their waves are transposed together too
    same: dict[int, int] = {}  # id of a lines list -> the key of the first equal one
    for k, v in enumerate(values):
        key = same.get(id(v[0]))
        if key is None:
            key = same[id(v[0])] = next((other for other, (lines, _) in by_lines.items()
                                         if lines == v[0]), id(v[0]))
        by_lines.setdefault(key, (v[0], []))[1].append(k)
    fields: list[dict[int, list[int]]] = [{}, {}, {}]  # stall, latency, hits
    if len(by_lines) == 1:  # every wave ran one sequence: its columns as they are
        lines = values[0][0] if values else []
        for field, dest in zip((1, 2, 3), fields):
            for line, col in zip(lines, zip(*(v[field] for v in values))):
                dest[line] = list(col)
    elif values:
        # the union of lines in first-met order (the order every consumer has seen them in)
        union = list(dict.fromkeys(chain.from_iterable(lines for lines, _ in by_lines.values())))
        # per sequence, where each union line sits in its lists (past the end: a 0 appended)
        getters: dict[int, Callable[[Sequence[int]], Sequence[int]]] = {}
        for key, (lines, _) in by_lines.items():
            at = {line: i for i, line in enumerate(lines)}
            idx = [at.get(line, len(lines)) for line in union]
            getters[key] = picker(idx)
        for field, dest in zip((1, 2, 3), fields):
            rows = [getters[same[id(v[0])]]([*v[field], 0]) for v in values]
            dest.update(zip(union, map(list, zip(*rows))))
    stall, latency, hits = fields
    plines = list(dict.fromkeys(chain.from_iterable(v[4] for v in values)))
    blame: dict[int, list[float]] = dict(zip(plines, map(list, zip(
        *[list(map(v[4].get, plines, repeat(0.0))) for v in values])))) if plines else {}
    placement = [(wf.se, *v[5]) for wf, v in zip(chosen, values)]
    return WaveSamples([wf.path.name for wf in chosen], stall, latency, hits, blame, placement)


def sample_files(files: Sequence[WaveFile], max_waves: int | None) -> Sequence[WaveFile]:
    """The waves diff samples: of those analyze reads (the same --max-waves choice), at most
    MAX_SAMPLE_WAVES, spread over SE/SIMD groups."""
    cap = MAX_SAMPLE_WAVES if max_waves is None else min(max_waves, MAX_SAMPLE_WAVES)
    return sample_wave_files(sample_wave_files(files, max_waves), cap)


def wave_samples(files: Sequence[WaveFile], all_rows: Sequence[CodeRow], max_waves: int | None,
                 max_bytes: int | None, rules: WaitcntRules | None = GFX9) -> WaveSamples:
    """Per-wave samples read afresh (the analysis came from the result cache without them)."""
    chosen = sample_files(files, max_waves)
    tables = build_tables(all_rows, rules)
    sequences: dict[tuple[int, ...], SequenceFacts] = {}
    got: dict[str, WaveSample] = {}
    for wf in chosen:
        wave = wave_of_data(wf, read_wave_bytes(wf.path, max_bytes))
        got[wf.where] = sample_wave(wave, tables, sequences)
    return assemble(chosen, got)


@record
class DispatchSamples:
    """A dispatch dir's per-wave samples and its kernel's full instruction listing."""

    samples: WaveSamples
    code: list[tuple[int, str, str]]  # (code line number, ISA text, source label or "") per row


SHARED_KIND = "wave-samples"


def publish_samples(cap: "Capture", chosen: Sequence[WaveFile], got: Mapping[str, WaveSample]
                    ) -> None:
    """Hand the samples the analysis's pass took to the diff step of this command."""
    from hotspot.capture import share

    code = [(r.line_number, r.isa, r.source.label if r.source else "") for r in cap.rows]
    read = [wf.where for wf in chosen] + [str(cap.path / n) for n in ("code.json", "filenames.json")]
    share(SHARED_KIND, str(cap.path), DispatchSamples(assemble(chosen, got), code), read)


def dispatch_samples(d: Path, kernel: str | None, max_waves: int | None,
                     max_bytes: int | None) -> DispatchSamples:
    """The per-wave samples of a dispatch dir: those its analysis took in this command, else read
    once here (capture warnings are the analysis's, already reported)."""
    from hotspot.capture import shared

    taken = shared(SHARED_KIND, str(d))
    if isinstance(taken, DispatchSamples):
        return taken
    from hotspot.att.waits.generation import waitcnt_rules
    from hotspot.capture import open_capture

    cap = open_capture(d, kernel, max_bytes)
    ignored: list[str] = []
    rules = waitcnt_rules(cap.dispatch, cap.arch(), ignored)
    samples = wave_samples(cap.wave_files, cap.table.rows, max_waves, max_bytes, rules)
    code = [(r.line_number, r.isa, r.source.label if r.source else "") for r in cap.rows]
    return DispatchSamples(samples, code)
