"""One streaming pass over the wave files, feeding every wave-derived result.

Map-reduce shaped for a process pool: `_run_chunk_worker` is a top-level, picklable worker
`(wave descriptors, PassOptions) -> WavePartial`, and partials `merge` (the pool's workers return
partials whose sequence groups are still open, so the parent adds those column-wise). Each wave
file is parsed, folded into the partial and dropped before the next one is read.

Per wave it collects: per-line hit/latency/stall (to cross-check code.json), the timeline states
attributed to instructions, wait blame (hotspot/att/waits/), barrier arrivals and backward taken
branches (loops). `fold_wave_records` below defines these record by record; waves are normally
folded column-wise by hotspot/att/engine/groups.py, which gives the same sums much faster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from hotspot.record import record

if TYPE_CHECKING:
    from concurrent.futures import ProcessPoolExecutor

    from hotspot.capture import WaitcntEdges
    from hotspot.diagnostics import Progress

import os
import sys
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import field
from pathlib import Path
from types import ModuleType

import orjson

from hotspot.att.engine.groups import (
    DECODER_JUMP,
    N_STATES,
    NativeFold,
    NativeIssue,
    SequenceFolder,
    SequenceGroup,
    _scanned_group,
    admit_group,
    flush_group,
    flush_groups,
    fold_wave_columns,
    fold_wave_scanned,
)
from hotspot.att.engine.worker_count import plan_pass, pool_possible
from hotspot.att.engine.native import ScannedWave, native, scan
from hotspot.att.engine.samples import (
    SequenceFacts,
    WaveSample,
    sample_scanned,
    sample_wave,
    wave_of_data,
)
from hotspot.att.issue_share import IssueAccumulator, IssueWeights
from hotspot.att.waits.accumulate import BlameAccumulator
from hotspot.att.waits.waitcnt_rules import ROLE_BARRIER, LineTables
from hotspot.capture import (
    Wave,
    WaveFile,
    WaveFiles,
    WaveTotals,
    check_wave,
    kept_paths,
    parse_json,
    read_wave_bytes,
    record_ranges,
    scanned_ranges,
    wave_from_doc,
)
from hotspot.errors import bad_file
from hotspot.gcpause import paused_cyclic_gc
from hotspot.jsontypes import JsonValue

# Wave files C reads and folds per call (NativeFold.files): the progress counter and any other
# thread of the process (an MCP server's event loop) get their turn at least this often.
FILES_PER_CALL = 64
# Wave files per work unit: small enough to balance a pool, large enough to amortise pickling.
CHUNK_WAVES = 64
# How long a killed worker is waited for (it dies at once; this only bounds a wedged reap).
KILL_JOIN_S = 0.2
# Work units per pool worker. One contiguous unit each: a worker builds the static facts of each
# sequence it meets once (~1 ms each, hotspot/att/engine/groups.py) and the parent adds one
# partial per worker; wave files are alike in size, so units of equal file counts balance.
CHUNKS_PER_JOB = 1

WaveDesc = tuple[str, int, int, int, int]  # (path, se, simd, slot, n): picklable


@record
class PassOptions:
    tables: LineTables
    max_bytes: int | None = None
    # the rows' unit costs: each wave's columns also go to the partial's IssueAccumulator
    # (hotspot/att/issue_share.py) while its file is in hand
    issue: IssueWeights | None = None
    # wave files whose own per-line values are kept too (diff's samples, engine/samples.py)
    sample: frozenset[str] = frozenset()


@record(frozen=False)
class WavePartial:
    totals: WaveTotals = field(default_factory=WaveTotals)
    # line_number -> cycles per timeline state (WAVE_STATES order) while this instruction was current
    line_states: dict[int, list[int]] = field(default_factory=dict)
    blame: BlameAccumulator = field(default_factory=BlameAccumulator.empty)
    # (se, cu, barrier line) -> [arrival time, release time, ...] over waves, flat (a 1 GB capture
    # holds ~10^6 barrier arrivals: an int64 array or a flat list, not a tuple each)
    barriers: dict[tuple[int, int, int], list[int] | array[int]] = field(default_factory=dict)
    # (branch line, target line) of backward taken branches -> [times taken, waves taking it]
    backedges: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    # wave file -> its own per-line values, for the files PassOptions.sample names
    samples: dict[str, WaveSample] = field(default_factory=dict)

    # MFMA/VALU issue and VMEM bytes per SIMD, kernel and loops (with PassOptions.issue)
    issue: IssueAccumulator | None = None

    def __post_init__(self) -> None:
        # Waves still summed by executed sequence (hotspot/att/engine/groups.py); not a field: the
        # dicts above hold the results once `finish` folds the groups in.
        self.open_groups = SequenceFolder()
        self.records_only = False  # set after a wave with non-integer values
        self.native: NativeFold | None = None  # the fused native pass while a run folds into this

    def flush_group(self, group: SequenceGroup) -> None:
        if self.native is not None:
            self.native.release(group)
        flush_group(group, self.totals, self.line_states, self.totals.states,
                    self.backedges, self.blame)

    def finish(self) -> "WavePartial":
        """Fold the open sequence groups into the per-line dicts."""
        groups = list(self.open_groups.groups.values())
        if self.native is not None:
            self.native.settle_all()
            for group in groups:
                self.native.release(group)
        # flush_group of each group in turn, its dict updates made at once (the releases above
        # only hand each group its own C sums)
        flush_groups(groups, self.totals, self.line_states, self.totals.states, self.backedges,
                     self.blame)
        self.open_groups = SequenceFolder()
        return self

    def merge(self, other: "WavePartial") -> "WavePartial":
        if self.records_only or other.records_only:
            # non-integer values: fold in the groups and add as the per-record path does
            self.finish()
            other.finish()
            self.records_only = True
        # Open groups of the same sequence are added column-wise; results are integer sums, so
        # merge order does not change them.
        for key, group in other.open_groups.groups.items():
            mine = self.open_groups.groups.get(key)
            if mine is None:
                admit_group(self, self.open_groups, key, group)
            else:
                mine.absorb(group)
        self.totals.merge(other.totals)
        for line, st in other.line_states.items():
            mine_st = self.line_states.get(line)
            if mine_st is None:
                self.line_states[line] = list(st)
            else:
                for i, v in enumerate(st):
                    mine_st[i] += v
        self.blame.merge(other.blame)
        for bkey, flat in other.barriers.items():
            mine_flat = self.barriers.get(bkey)
            if mine_flat is None:
                self.barriers[bkey] = flat
            elif isinstance(mine_flat, array) and not isinstance(flat, array):
                self.barriers[bkey] = [*mine_flat, *flat]  # the list may hold what int64 cannot
            else:
                mine_flat.extend(flat)
        for edge, (taken, waves) in other.backedges.items():
            acc = self.backedges.setdefault(edge, [0, 0])
            acc[0] += taken
            acc[1] += waves
        if other.issue is not None:
            if self.issue is None:
                self.issue = IssueAccumulator()
            self.issue.merge(other.issue)
        self.samples.update(other.samples)
        return self


def describe(files: Sequence[WaveFile]) -> list[WaveDesc]:
    if isinstance(files, WaveFiles):  # the listing's rows, without a WaveFile each
        return files.described()
    return [(w.where, w.se, w.simd, w.slot, w.n) for w in files]


def chunks(descs: list[WaveDesc], size: int = CHUNK_WAVES) -> list[list[WaveDesc]]:
    return [descs[i:i + size] for i in range(0, len(descs), size)]


def run_chunk_open(descs: list[WaveDesc], opts: PassOptions,
                   progress: "Progress | None" = None, part: WavePartial | None = None
                   ) -> WavePartial:
    """Fold the given wave files into a partial whose sequence groups stay open, so that the
    parent adds them column-wise and folds each sequence into the dicts once. `progress` (parent
    only) counts files done; `part`: an open partial to continue (default: a new one)."""
    if part is None:
        part = WavePartial()
    mod = native()
    tables = opts.tables
    fused = part.native = NativeFold(mod, part, tables, opts.issue) if mod is not None else None
    data: bytes | None  # dropped once the scanner's columns hold the wave
    sequences: dict[object, SequenceFacts] = {}  # of the sampled waves, by their executed order
    # a sampled wave is taken after the pass folded it (its sequence's replay is then the
    # group's): at the top of the next file, and after the last. Its columns are those of the
    # fold's one scan of the file (`NativeFold.kept`); its bytes are kept only when no scan read
    # them (None once the columns hold the wave).
    pending: tuple[WaveFile, bytes | None, ScannedWave | None] | None = None

    def take_sample() -> None:
        wf, raw, sc = pending  # type: ignore[misc]  # called only while a sample is pending
        if sc is None or mod is None:
            assert raw is not None  # a wave no scan read is pending with its bytes
            part.samples[wf.where] = sample_wave(wave_of_data(wf, raw), tables, sequences)
            return
        group = _scanned_group(part.open_groups.groups, sc)
        part.samples[wf.where] = sample_scanned(
            wf, sc, tables, sequences,
            (group.entries, group.positions, group.ooo) if group is not None else None,
            (lambda: group.expected_key(mod)) if group is not None else None)

    # Runs of files C reads and folds itself (`NativeFold.files`): not those whose bytes the
    # session keeps (read here, as before). C answers at each sampled file with its columns.
    special = kept_paths()
    stops = [k for k, d in enumerate(descs) if d[0] in special] if special else []
    stops.append(len(descs))
    paths = [d[0] for d in descs] if fused is not None else []
    ses = [d[1] for d in descs] if fused is not None else []
    simds = [d[2] for d in descs] if fused is not None else []
    keep = (bytes(d[0] in opts.sample for d in descs) if fused is not None and opts.sample
            else None)
    batched = fused is not None
    i = 0
    while i < len(descs):
        if pending is not None:
            take_sample()
            pending = None
        path, se, simd, slot, n = descs[i]
        c_res = None  # what C folded file i into, when Fold.files read it (as `data`)
        if batched and fused is not None and not part.records_only and path not in special:
            stop = min(i + FILES_PER_CALL, stops[bisect_right(stops, i)])
            got = fused.files(paths, ses, simds, i, stop, opts.max_bytes, keep)
            if got is None:
                batched = False
            else:
                j, data, c_res = got
                if progress is not None:
                    progress.advance(j - i)
                i = j
                if j == stop:
                    continue
                path, se, simd, slot, n = descs[i]
        i += 1
        if progress is not None:
            progress.advance()
        if c_res is None:
            raw = read_wave_bytes(path, opts.max_bytes)
        elif data is None:  # folded in C (the spill signal, or a sampled wave's columns)
            assert fused is not None  # only the fused pass reads files in C
            fused.folded(c_res, None, se, simd)
            if path in opts.sample:
                pending = (WaveFile(path, se, simd, slot, n), None, fused.kept)
            continue
        else:
            raw = data
        sampled = path in opts.sample
        in_c = fused is not None and not part.records_only
        # one scan of the bytes for both the issue accumulator and the sample off the C fold (the
        # C fold adds the issue sums of a wave it folds itself, and hands back its columns)
        pre = (scan(mod, raw) if mod is not None and not in_c and (sampled or opts.issue is not None)
               else None)
        doc: JsonValue = None  # orjson's parse when the issue accumulator took one: the fold reuses it
        if opts.issue is not None and not in_c:
            doc = observe_issue(part, opts.issue, mod, raw, path, se, simd, pre)
        if sampled and not in_c:  # from the bytes just read: the file is opened once
            pending = (WaveFile(path, se, simd, slot, n), raw, pre)
        if fused is not None and in_c:
            # Folded in C unless the wave needs the Python path below; a wave with values no
            # decoder writes (negative fields, begin > end, a state outside the enum) always
            # comes back, so a check of those values runs below, on the scanned columns or on
            # `fused.last_ranges()`, the same for both paths.
            done, scanned = (fused.folded(c_res, raw, se, simd) if c_res is not None
                             else fused.wave(raw, se, simd, sampled))
            if sampled:  # the columns of C's one scan (none: only orjson reads the file)
                pending = (WaveFile(path, se, simd, slot, n),
                           raw if fused.kept is None else None, fused.kept)
            if done:
                continue
            if opts.issue is not None:  # from C's scan (None: only orjson reads the file)
                doc = observe_issue(part, opts.issue, mod if scanned is not None else None, raw, path,
                                    se, simd, scanned)
        else:  # the scan taken above for the issue columns or the sample serves the fold too
            scanned = pre if pre is not None else scan(mod, raw) if mod is not None else None
        data = raw
        del raw
        if scanned is not None:
            data = None  # the columns hold the wave now (a long one: ~1x its file in bytes)
        try:
            if scanned is not None:
                assert mod is not None  # only the scanner makes a ScannedWave
                # values no decoder writes are refused on both paths by the same check
                check_wave(path, scanned.begin, scanned.end, *scanned_ranges(mod, scanned))
                cu = scanned.cu if scanned.cu is not None else -1
                if fold_wave_scanned(part, mod, scanned, se, cu, tables):
                    if fused is not None and not part.records_only:
                        fused.register(scanned)
                    continue
                wave = Wave(WaveFile(path, se, simd, slot, n), scanned.begin, scanned.end,
                            scanned.records(), scanned.timeline(), scanned.waitcnt, scanned.cu)
            else:
                assert data is not None  # kept: the scanner did not read this wave
                wave = wave_from_doc(WaveFile(path, se, simd, slot, n),
                                     doc if doc is not None else parse_json(Path(path), data))
                check_wave(path, wave.begin, wave.end,
                           *record_ranges(path, wave.instructions, wave.timeline))
                cu = wave.cu if wave.cu is not None else -1
                if fold_wave_columns(part, wave.instructions, wave.timeline, wave.waitcnt,
                                     wave.begin, wave.end, se, cu, tables):
                    continue
            fold_wave_records(part, wave.instructions, wave.timeline, wave.waitcnt, wave.begin,
                              wave.end, se, cu, tables)
        except (TypeError, ValueError, IndexError, KeyError) as exc:
            raise bad_file(Path(path), f"malformed wave record ({type(exc).__name__}: {exc}); "
                           "expected 'instructions' rows [time, category, stall, duration, line], "
                           "'timeline' rows [state, cycles] and 'waitcnt' rows [line, [[line, 0]]]")
    if pending is not None:
        take_sample()
    if fused is not None:
        fused.detach()
    return part


def observe_issue(part: WavePartial, w: IssueWeights, mod: ModuleType | None, data: bytes, path: str,
                  se: int, simd: int, scanned: ScannedWave | None = None) -> JsonValue:
    """Hand one wave's columns to the partial's issue accumulator (the scanner's int64 columns,
    else orjson's records; `scanned`: the bytes' scan when taken already). A file the fold will
    refuse is skipped here: the fold says why. Returns the document when it parsed the bytes with
    orjson (None otherwise), so that the fold does not parse them again."""
    if part.issue is None:
        part.issue = IssueAccumulator()
    # while the C fold is attached its sums are the partial's (in file order): add there
    acc: IssueAccumulator | NativeIssue = (
        part.native.issue if part.native is not None and part.native.issue is not None else part.issue)
    if scanned is None and mod is not None:
        scanned = scan(mod, data)
    parsed: JsonValue = None
    try:
        if scanned is not None:
            acc.add_wave(w, (se, int(scanned.cu if scanned.cu is not None else -1), simd),
                         int(scanned.begin), int(scanned.end), scanned.column("lines"),
                         scanned.column("times"), scanned.column("durations"),
                         (scanned.sequence_hash, scanned.lines))
            return None
        loaded: Any = orjson.loads(data)  # any shape: a wrong one is caught below
        parsed = loaded
        doc = loaded.get("wave") or {}
        ins = doc.get("instructions") or []
        acc.add_wave(w, (se, int(doc.get("cu", -1)), simd), int(doc.get("begin") or 0),
                     int(doc.get("end") or 0), [int(r[4]) for r in ins], [int(r[0]) for r in ins],
                     [int(r[3]) for r in ins])
    except (TypeError, ValueError, OverflowError, IndexError, KeyError, AttributeError,
            orjson.JSONDecodeError):  # OverflowError: a value past C's int64 (the fold refuses it)
        pass
    return parsed


def run_wave_pass(files: Sequence[WaveFile], opts: PassOptions, jobs: int | None = None,
                  meanwhile: Callable[[], None] | None = None) -> WavePartial:
    """Map-reduce over chunks: in this process, or a process pool where `plan_pass`
    (hotspot/att/engine/worker_count.py) says it pays; `jobs` None = auto. The first CHUNK_WAVES files
    are always read here (their distinct sequences feed the decision); pool partials are merged
    in chunk order after them (deterministic, and integer sums do not depend on the order).

    `meanwhile`, other work of the caller, runs while the pool's workers read the wave files (on
    a large capture the parent would otherwise idle), or after the sequential pass."""
    from hotspot.diagnostics import Progress

    descs = describe(files)
    progress = Progress("reading wave files", len(descs), "files")
    with paused_cyclic_gc():
        try:
            cpus = os.cpu_count() or 1
            if not pool_possible(jobs, cpus, len(descs), CHUNK_WAVES):
                # One partial for the whole sequential pass: groups span chunk boundaries.
                part = run_chunk_open(descs, opts, progress)
            else:
                head, rest = descs[:CHUNK_WAVES], descs[CHUNK_WAVES:]
                part = run_chunk_open(head, opts, progress)
                plan = plan_pass(jobs, _wave_bytes(files), len(descs), cpus,
                                 len(part.open_groups.groups), CHUNK_WAVES)
                if plan.workers <= 1:
                    part = run_chunk_open(rest, opts, progress, part)
                else:
                    size = max(CHUNK_WAVES, -(-len(rest) // (plan.workers * CHUNKS_PER_JOB)))
                    part = _run_pool(part, chunks(rest, size), opts, plan.workers, meanwhile,
                                     progress)
                    return part.finish()
            part.finish()
        finally:
            progress.close()
    if meanwhile is not None:
        meanwhile()
    return part


def _run_pool(total: WavePartial, work: list[list[WaveDesc]], opts: PassOptions, jobs: int,
              meanwhile: Callable[[], None] | None, progress: "Progress | None" = None) -> WavePartial:
    """Read the chunks in `jobs` worker processes and merge their partials into `total`."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from hotspot.capture import note_inputs

    note_inputs(d[0] for chunk in work for d in chunk)  # read by the workers, inputs all the same
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods and sys.version_info >= (3, 11):  # PYTHONSAFEPATH: see below
        # Workers forked from a small server that has imported only the wave pass, not from this
        # process, which by now holds the capture's file list: a 1 GB capture's workers would
        # otherwise each count ~70 MB of inherited pages.
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload([__name__])
        _start_forkserver_safely()
    else:
        ctx = multiprocessing.get_context("fork" if "fork" in methods else None)  # type: ignore[assignment]  # any context serves the pool
    pool = ProcessPoolExecutor(max_workers=min(jobs, len(work)), mp_context=ctx,
                               initializer=_worker_init)
    try:
        with _signals_held():  # a worker is started whole or not at all
            parts = pool.map(_run_chunk_worker, work, [opts] * len(work))  # all submitted now
        if meanwhile is not None:
            meanwhile()
        for chunk, part in zip(work, parts):
            total.merge(part)
            if progress is not None:
                progress.advance(len(chunk))
    except BaseException:
        # A signal (Ctrl-C, SIGTERM), an error in a worker or in `meanwhile`: the rest is not
        # wanted. Waiting for the running chunks took seconds and left workers behind the parent;
        # they are killed instead, and the command ends at once.
        _kill_pool(pool)
        raise
    pool.shutdown(wait=True)
    return total


# Held while the pool starts its workers (pool.map spawns them): a signal cutting a worker's start
# short (the request sent to the fork server, its pid not yet read back) left a worker no list
# knew of, a fork server dying with a traceback (EOF mid-request), or a worker failing to open the
# queue's semaphore after the parent removed it. Delivered, as ever, once the start is done.
HELD_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")


@contextmanager
def _signals_held() -> Iterator[None]:
    import signal
    import threading

    held = {getattr(signal, name) for name in HELD_SIGNALS}
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _worker_init() -> None:
    """In each worker: Ctrl-C is the parent's to handle (it kills the pool), and a worker never
    outlives the parent (Linux: the kernel kills it when the parent dies, even by SIGKILL)."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if hasattr(signal, "pthread_sigmask"):  # a worker forked while the parent held them
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {getattr(signal, name) for name in HELD_SIGNALS})
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
        if os.getppid() == 1:  # the parent died before the line above
            os._exit(1)
    except (OSError, AttributeError):  # not Linux: the parent's _kill_pool still stops us
        pass


def _kill_pool(pool: ProcessPoolExecutor) -> None:
    """Stop a pool now: no new chunks, running workers killed and reaped (bounded)."""
    procs = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        try:
            proc.kill()
        except (OSError, AttributeError, ValueError):
            pass
    for proc in procs:
        try:
            proc.join(KILL_JOIN_S)
        except (OSError, AttributeError, ValueError, AssertionError):
            pass


def _start_forkserver_safely() -> None:
    """Start the fork server so that it imports this package, not a folder of the cwd.

    The server runs `python -c ...`, which puts the cwd first on sys.path (and Python 3.11 does not
    apply the parent's sys.path there): run from a folder holding a directory named `hotspot` (the
    clone's parent folder after an editable install), the workers imported that directory as a
    namespace package and died. PYTHONSAFEPATH (3.11+) drops the cwd entry; the server's path is
    then the interpreter's own, where the installed package (or its editable finder) lives."""
    from multiprocessing import forkserver

    saved = os.environ.get("PYTHONSAFEPATH")
    os.environ["PYTHONSAFEPATH"] = "1"
    try:
        forkserver.ensure_running()  # no-op when this process already started one
    finally:
        if saved is None:
            del os.environ["PYTHONSAFEPATH"]
        else:
            os.environ["PYTHONSAFEPATH"] = saved


def _run_chunk_worker(descs: list[WaveDesc], opts: PassOptions) -> WavePartial:
    with paused_cyclic_gc():
        part = run_chunk_open(descs, opts)
    for group in part.open_groups.groups.values():
        group.settle()  # pickle sums, not pending columns
    return part


def _wave_bytes(files: Sequence[WaveFile]) -> int:
    size = 0
    for w in files:
        try:
            size += os.stat(w.where).st_size
        except OSError:
            pass  # reported by the reader when the file is opened
    return size


def fold_wave_records(part: WavePartial, ins: Sequence[list[int]], timeline: Sequence[list[int]],
                      edges: WaitcntEdges, begin: int, end: int, se: int, cu: int, tables: LineTables
                      ) -> None:
    """Fold one wave record by record: the reference semantics of every wave-derived sum (the
    column-wise fast path must equal it; tests/test_wave_groups.py checks)."""
    totals = part.totals
    totals.waves += 1
    totals.instructions += len(ins)
    totals.cycles += end - begin
    states = totals.states
    for state, cycles in timeline:
        if 0 <= state < N_STATES:
            states[state] += cycles

    totals.add_records(ins)
    per_line = totals.per_line
    roles = tables.roles
    barriers = part.barriers
    backedges = part.backedges
    seen_back: set[tuple[int, int]] = set()
    prev_line = -1
    prev_jump = False
    for rec in ins:
        time, cat, stall, duration, line = rec[0], rec[1], rec[2], rec[3], rec[4]
        acc = per_line.get(line)
        if acc is None:
            per_line[line] = [1, duration, stall]
        else:
            acc[0] += 1
            acc[1] += duration
            acc[2] += stall
        if prev_jump and line < prev_line:
            key = (prev_line, line)
            be = backedges.get(key)
            if be is None:
                be = backedges[key] = [0, 0]
            be[0] += 1
            if key not in seen_back:
                seen_back.add(key)
                be[1] += 1
        prev_jump = cat == DECODER_JUMP
        prev_line = line
        if roles.get(line) == ROLE_BARRIER:
            bkey = (se, cu, line)
            arr = barriers.get(bkey)
            if arr is None:
                arr = barriers[bkey] = []
            elif isinstance(arr, array):  # from the native path; these values may not fit int64
                arr = barriers[bkey] = arr.tolist()
            arr.extend((time, time + stall))

    _attribute_states(ins, timeline, begin, part.line_states)
    part.blame.add_wave(ins, edges, tables)


def _attribute_states(ins: Sequence[list[int]], timeline: Sequence[list[int]], begin: int,
                      line_states: dict[int, list[int]]) -> None:
    """Charge each timeline cycle to the instruction whose window covers it.

    Instruction i's window runs from the end of the previous one (wave begin for the first) to its
    own end (time + duration, kept monotone): the gap before it (idle), its stall and its issue.
    Cycles after the last instruction's end go to the last instruction. Σ over lines = timeline.
    """
    n = len(ins)
    if n == 0:
        return
    j = 0
    end_j = ins[0][0] + ins[0][3]
    last = n - 1
    t = begin
    for state, cycles in timeline:
        seg_end = t + cycles
        if not 0 <= state < N_STATES:
            t = seg_end
            continue
        while t < seg_end:
            while j < last and end_j <= t:
                j += 1
                e = ins[j][0] + ins[j][3]
                if e > end_j:
                    end_j = e
            upto = seg_end if (j == last or end_j >= seg_end) else end_j
            line = ins[j][4]
            ls = line_states.get(line)
            if ls is None:
                ls = line_states[line] = [0] * N_STATES
            ls[state] += upto - t
            t = upto


def sample_wave_files(files: Sequence[WaveFile], max_waves: int | None) -> Sequence[WaveFile]:
    """At most `max_waves` files, spread evenly over (SE, SIMD) groups and within each group;
    `files` itself when that is all of them (a WaveFiles listing stays one)."""
    if max_waves is None or max_waves >= len(files):
        return files
    groups: dict[tuple[int, int], list[WaveFile]] = {}
    for wf in files:
        groups.setdefault((wf.se, wf.simd), []).append(wf)
    total = len(files)
    # Largest-remainder apportionment of max_waves over the groups, by group size.
    exact = {k: max_waves * len(g) / total for k, g in groups.items()}
    quota = {k: int(v) for k, v in exact.items()}
    short = max_waves - sum(quota.values())
    for k in sorted(groups, key=lambda k: (-(exact[k] - quota[k]), k))[:short]:
        quota[k] += 1
    chosen: list[WaveFile] = []
    for k, g in groups.items():
        q = quota[k]
        chosen.extend(g[(2 * i + 1) * len(g) // (2 * q)] for i in range(q))
    return sorted(chosen, key=lambda w: (w.se, w.simd, w.slot, w.n))
