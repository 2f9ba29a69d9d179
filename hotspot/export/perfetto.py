"""Use case of `hotspot export perfetto`: wave timelines as Chrome trace-event JSON.

Perfetto (ui.perfetto.dev) and chrome://tracing open the file. Layout:
- one process per shader engine (pid = SE number, named "SE<n>");
- per traced wave one thread track (tid numbered within the SE in (SIMD, slot, wave) order, named
  "SIMD<m> slot<l> wave<n>") with a complete ("X") slice per wave-state run (EXEC, WAIT, STALL,
  IDLE); with `--instructions`, a second track per wave with one slice per executed instruction
  (stall and duration in its args);
- timestamps in microseconds of wall time when realtime.json maps each SE's shader clock to the
  100 MHz real-time clock (a least-squares line per SE), origin = the earliest wave begin; else shader
  cycles written as the "microseconds" of the format, which `otherData.time_unit` says.
Events are streamed to the file one at a time: wave files are never all in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from hotspot._version import __version__
from hotspot.diagnostics import Progress
from hotspot.errors import EmptyTraceError, InputError, bad_file
from hotspot.result import JsonObject, Result
from hotspot.record import record

if TYPE_CHECKING:
    from hotspot.capture import Wave, WaveFile

DEFAULT_TRACE = "trace.json"
US_PER_S = 1_000_000
TIME_REALTIME = "realtime"
TIME_CYCLES = "shader-cycles"
STATE_SLICE_NAMES = ("EMPTY", "IDLE", "EXEC", "WAIT", "STALL")  # decoder enum (FORMATS.md §1.2)
# Legacy trace-viewer colour names (Perfetto ignores them), close to the viewer palette.
STATE_CNAMES = {"EMPTY": "white", "IDLE": "grey", "EXEC": "good", "WAIT": "yellow", "STALL": "terrible"}
EMIT_CHUNK = 256  # events serialized before one write: ~40 KB, under malloc's mmap threshold (larger chunks page-fault on every write)


@record
class PerfettoOptions:
    instructions: bool = False
    max_file_mb: float | None = None


@record
class TraceWritten:
    output: str
    bytes: int
    dispatch: str
    kernel: str
    waves: int
    tracks: int
    events: int
    time_base: str  # "realtime" or "shader-cycles"
    instructions: bool


class TimeBase:
    """Shader cycle on a shader engine -> trace timestamp."""

    def __init__(self, name: str, unit: str, convert: Callable[[int, int], float],
                 origin_note: JsonObject) -> None:
        self.name, self.unit, self._convert, self.origin_note = name, unit, convert, origin_note

    def us(self, se: int, cycle: int) -> float:
        return self._convert(se, cycle)


def export_perfetto(path: Path, output: str | None, force: bool,
                    opts: PerfettoOptions = PerfettoOptions()) -> Result[TraceWritten]:
    from hotspot.outfile import resolve_output, write_output

    warnings: list[str] = []
    ddir = select_dispatch(path, warnings)  # the input first: a missing one is the error to report
    target = resolve_output(output, DEFAULT_TRACE, force, inputs=[Path(path)])
    holder: dict[str, Any] = {}  # the TraceWritten fields write_trace gives

    def write(fh: BinaryIO) -> None:
        holder.update(write_trace(ddir, fh, opts, warnings))

    if target is None:
        raise InputError("export_perfetto writes a file", "use write_trace for a stream")
    size = write_output(target, write)
    return Result("export", TraceWritten(output=str(target), bytes=size, **holder), warnings)


def select_dispatch(path: Path, warnings: list[str]) -> Path:
    """The dispatch dir to export: the one every command picks (hotspot/capture/select.py). A
    saved analysis cannot stand in for it: it keeps no per-wave timeline."""
    from hotspot.capture import choose_dispatch, is_saved_input

    if is_saved_input(path):
        from hotspot.att.load import read_analysis

        read_analysis(path)  # a file that is no saved analysis is refused as such first
        raise InputError(f"{path}: a saved analysis holds no wave timelines, which a Perfetto trace "
                         "is made of", "export the capture directory it was saved from "
                         "(ui_output_agent_*_dispatch_*)")

    chosen, notes = choose_dispatch(path)
    warnings.extend(notes)
    return chosen


def write_trace(ddir: Path, fh: BinaryIO, opts: PerfettoOptions, warnings: list[str]) -> JsonObject:
    """Stream the trace of dispatch dir `ddir` to `fh`; returns the TraceWritten fields but
    output/bytes."""
    from hotspot.capture import EMPTY_TRACE_HINT, open_dispatch
    from hotspot.att.engine.native import read_wave

    disp = open_dispatch(ddir)
    warnings.extend(disp.warnings)
    if disp.pc_sampling:
        raise InputError(f"{ddir}: a PC-sampling capture has no wave timelines to export",
                         "export an ATT (thread trace) capture")
    if not disp.wave_files:
        raise EmptyTraceError(f"{ddir}: empty trace: no wave files, so no wave reached the traced CU",
                              EMPTY_TRACE_HINT)
    from hotspot.att.model import DEFAULT_MAX_FILE_MB

    cap = DEFAULT_MAX_FILE_MB if opts.max_file_mb is None else opts.max_file_mb
    max_bytes = int(cap * 1024 * 1024) if cap else None
    kernel, isa = _code_info(ddir, max_bytes)
    files = sorted(disp.wave_files, key=lambda w: (w.se, w.simd, w.slot, w.n))
    begins = []
    for wf in files:  # filenames.json lists begin/end; otherwise read them from the wave files
        begins.append((wf.se, wf.begin if wf.begin is not None else read_wave(wf, max_bytes).begin))
    tb = time_base(ddir, begins, warnings)

    count = 0
    first = True

    def emit(ev: JsonObject) -> None:
        emit_all((ev,))

    def emit_all(events: Iterable[JsonObject]) -> None:
        # a wave's events serialized a chunk at a time and written in one call: one write per
        # event was a fifth of an export's time
        nonlocal count, first
        dumps = orjson.dumps
        it = iter(events)
        while True:
            chunk = [dumps(ev) for ev in islice(it, EMIT_CHUNK)]
            if not chunk:
                return
            fh.write((b"" if first else b",\n") + b",\n".join(chunk))
            first = False
            count += len(chunk)

    fh.write(b'{"traceEvents":[\n')
    tracks = 0
    index_in_se: dict[int, int] = {}
    for se in sorted({wf.se for wf in files}):
        name = f"SE{se}" + ("" if tb.name == TIME_REALTIME else " (time axis = shader cycles)")
        emit(_meta("process_name", se, 0, {"name": name}))
        emit(_meta("process_sort_index", se, 0, {"sort_index": se}))
    progress = Progress("writing wave timelines", len(files), "waves")
    try:
        for wf in files:
            tracks += _emit_wave(wf, index_in_se, read_wave(wf, max_bytes), tb, isa, opts, emit, emit_all)
            progress.advance()
    finally:
        progress.close()
    other = {"generator": f"hotspot {__version__}", "dispatch_dir": str(ddir), "kernel": kernel,
             "waves": len(files), "time_base": tb.name, "time_unit": tb.unit, **tb.origin_note}
    fh.write(b'\n],"displayTimeUnit":"ns","otherData":' + orjson.dumps(other) + b"}\n")
    return {"dispatch": str(ddir), "kernel": kernel, "waves": len(files), "tracks": tracks,
            "events": count, "time_base": tb.name, "instructions": opts.instructions}


def _emit_wave(wf: WaveFile, index_in_se: dict[int, int], wave: Wave, tb: TimeBase,
               isa: dict[int, tuple[str, str]], opts: PerfettoOptions,
               emit: Callable[[JsonObject], None], emit_all: Callable[[Iterable[JsonObject]], None]) -> int:
    """The state track (and the instruction track) of one wave; returns the tracks added."""
    i = index_in_se.get(wf.se, 0)
    index_in_se[wf.se] = i + 1
    label = f"SIMD{wf.simd} slot{wf.slot} wave{wf.n}"
    state_tid = 2 * i + 1
    emit(_meta("thread_name", wf.se, state_tid, {"name": label}))
    emit(_meta("thread_sort_index", wf.se, state_tid, {"sort_index": state_tid}))
    emit_all(state_events(wf.se, state_tid, wave.begin, wave.timeline, tb, wf.path))
    if not opts.instructions:
        return 1
    inst_tid = state_tid + 1
    emit(_meta("thread_name", wf.se, inst_tid, {"name": f"{label} instructions"}))
    emit(_meta("thread_sort_index", wf.se, inst_tid, {"sort_index": inst_tid}))
    emit_all(instruction_events(wf.se, inst_tid, wave.instructions, tb, isa, wf.path))
    return 2


def _meta(name: str, pid: int, tid: int, args: JsonObject) -> JsonObject:
    return {"name": name, "ph": "M", "pid": pid, "tid": tid, "args": args}


def _code_info(ddir: Path, max_bytes: int | None) -> tuple[str, dict[int, tuple[str, str]]]:
    from hotspot.capture import read_code_table

    try:
        table = read_code_table(ddir, max_bytes)
    except EmptyTraceError:
        return "", {}
    kernel = ""
    if table.kernels:
        k = table.kernels[0]
        kernel = k.demangled or k.symbol
    return kernel, {r.line_number: (r.isa, r.source.label if r.source else "") for r in table.rows}


def time_base(ddir: Path, begins: list[tuple[int, int]], warnings: list[str]) -> TimeBase:
    """Wall time from realtime.json when it maps every SE that has waves, else shader cycles."""
    from hotspot.capture import read_dispatch_realtime

    rt = read_dispatch_realtime(ddir, warnings)
    ses = {se for se, _ in begins}
    if rt is not None and ses <= set(rt.maps):
        maps, hz = rt.maps, rt.frequency_hz
        # Real-time ticks are ~1e14, where a double resolves only ~0.03 ticks (0.7 cycle): work
        # relative to one SE's intercept (differences of close numbers are exact), and compute the
        # origin with the same expression as every timestamp so the earliest one is exactly 0.
        ref = next(iter(maps.values())).intercept
        rel = {se: m.intercept - ref for se, m in maps.items()}
        origin = min(rel[se] + maps[se].slope * b for se, b in begins)

        def convert(se: int, cycle: int) -> float:
            return ((rel[se] + maps[se].slope * cycle) - origin) * US_PER_S / hz

        return TimeBase(TIME_REALTIME, "microseconds of wall time (realtime.json)", convert,
                        {"realtime_frequency_hz": hz, "origin_realtime_ticks": ref + origin,
                         "clock_fit": {f"SE{se}": {"realtime_ticks_per_cycle": m.slope,
                                                   "anchors": m.anchors}
                                       for se, m in sorted(maps.items())}})
    if rt is not None:
        missing = sorted(ses - set(rt.maps))
        warnings.append(f"{ddir / 'realtime.json'}: no clock for SE {missing}; timestamps are "
                        "shader cycles")
    origin_cycle = min(b for _, b in begins)

    def cycles(se: int, cycle: int) -> float:
        return cycle - origin_cycle

    return TimeBase(TIME_CYCLES, "shader cycles (the trace's 'us' are cycles)", cycles,
                    {"origin_cycle": origin_cycle})


def _ints(rec: object, n: int) -> bool:
    return isinstance(rec, list) and len(rec) >= n and all(
        isinstance(x, int) and not isinstance(x, bool) for x in rec[:n])


def state_events(se: int, tid: int, begin: int, timeline: Sequence[list[int]], tb: TimeBase,
                 path: Path) -> Iterator[JsonObject]:
    """One X slice per wave-state run; runs are consecutive from `begin` (FORMATS.md §1.2)."""
    t = begin
    us = tb._convert  # tb.us without the extra call (~180,000 calls on an 8 MB capture)
    names, known = STATE_SLICE_NAMES, len(STATE_SLICE_NAMES)
    for part in timeline:
        # the shape JSON gives (a list of two exact ints) checked inline, anything else by _ints
        plain = type(part) is list and len(part) >= 2 and type(part[0]) is int and type(part[1]) is int
        if not (plain or _ints(part, 2)) or part[1] < 0:
            raise bad_file(path, f"field 'wave.timeline' entry {part!r} is not [state, cycles]")
        state, cycles = part[0], part[1]
        if cycles:
            name = names[state] if 0 <= state < known else f"STATE{state}"
            ts = us(se, t)
            yield {"name": name, "cat": "wave-state", "ph": "X", "pid": se, "tid": tid, "ts": ts,
                   "dur": us(se, t + cycles) - ts, "cname": STATE_CNAMES.get(name, "generic_work"),
                   "args": {"cycles": cycles, "start_cycle": t}}
        t += cycles


def instruction_events(se: int, tid: int, records: Sequence[list[int]], tb: TimeBase,
                       isa: dict[int, tuple[str, str]], path: Path) -> Iterator[JsonObject]:
    """One X slice per executed instruction, from its first issue attempt for its duration
    (stall included). A slice that would run past the next instruction's start is cut there
    (args keep the real duration), so slices on the track never overlap."""
    from hotspot.capture import DECODER_CATEGORIES

    for rec in records:
        if not _ints(rec, 5):
            raise bad_file(path, f"field 'wave.instructions' entry {rec!r} is not [time, category, "
                           "stall, duration, line_number]")
    recs = sorted(records, key=lambda r: r[0])
    for k, (time, cat, stall, duration, line) in enumerate(r[:5] for r in recs):
        end = time + max(0, duration)
        nxt = recs[k + 1][0] if k + 1 < len(recs) else None
        clipped = nxt is not None and end > nxt
        if nxt is not None and clipped:
            end = nxt
        text, source = isa.get(line, ("", ""))
        ts = tb.us(se, time)
        args: JsonObject = {"line_number": line, "isa": text,
                                "category": DECODER_CATEGORIES[cat] if 0 <= cat < len(DECODER_CATEGORIES) else str(cat),
                                "stall_cycles": stall, "duration_cycles": duration, "start_cycle": time}
        if source:
            args["source"] = source
        if clipped:
            args["clipped_at_next_instruction"] = True
        yield {"name": text.split(" ", 1)[0] if text else f"#{line}", "cat": "instruction", "ph": "X",
               "pid": se, "tid": tid, "ts": ts, "dur": tb.us(se, end) - ts, "args": args}
