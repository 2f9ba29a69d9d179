"""The ATT analysis of one dispatch dir (or of the one chosen among several) into one Result: the
step hotspot/plan/entry_point.py `analyze`, the one analysis use case, runs."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from hotspot.att import code_totals as agg
from hotspot.att import findings as fnd
from hotspot.att.findings import Finding
from hotspot.att.model import (
    DETAIL_INSTRUCTIONS,
    MB,
    AnalysisMode,
    AnalyzeOptions,
    DetailLine,
    DispatchAnalysis,
    DispatchInfo,
    MultiAnalysis,
    OptionsEcho,
    Selection,
    SnippetLine,
    arch_out,
    limit,
    trimmed_data,
)
from hotspot.att.dispatch_occupancy import DispatchOccupancy
from hotspot.att.representativeness import assess, working_waits
from hotspot.att.waits.generation import waitcnt_rules
from hotspot.capture import (
    OK,
    DispatchCandidate,
    check_meta,
    kernel_name,
    pct,
    rank_dispatches,
    require_dispatch_dirs,
    selection_reason,
)
from hotspot.errors import UsageError
from hotspot.gcpause import paused_cyclic_gc
from hotspot.result import JsonObject, Result

if TYPE_CHECKING:
    from collections.abc import Sequence

    from hotspot.capture import Capture, SourceMap, WaveFile

# The readers and the wave pass (hotspot.capture.open/target/snapshots, hotspot.att.wave_results)
# are imported where they run: an analysis answered by the result cache never needs them.

# ----------------------------------------------------------------------------------------------


def analyze_full(path: Path, opts: AnalyzeOptions = AnalyzeOptions()) -> Result[DispatchAnalysis | MultiAnalysis]:
    """The ATT analysis of `path` with every row: one dispatch dir, the best of several, all of
    them (`all_dispatches`), or the best and its replicates (`replicates`). The step the one
    analysis use case runs (hotspot/plan/entry_point.py `analyze`: the plan, the tables shortened to
    --topk); nothing else calls it."""
    with paused_cyclic_gc():
        return _analyze_path(path, opts)


# Counts given on the command line (rows, lines, processes, wave files) beyond this are typos:
# no capture has 2**31 rows, and the options are echoed into the JSON (64-bit integers).
COUNT_OPTION_LIMIT = (1 << 31) - 1


def _analyze_path(path: Path, opts: AnalyzeOptions) -> Result[DispatchAnalysis | MultiAnalysis]:
    if opts.mode not in ("asm", "src", "both"):
        raise UsageError(f"--mode {opts.mode}: expected asm, src or both")
    if opts.topk < 0:
        raise UsageError("--topk must be 0 (all) or a positive number")
    if opts.context < 0:
        raise UsageError(f"--context {opts.context}: must be 0 or a positive number of lines")
    if opts.jobs is not None and opts.jobs < 1:
        raise UsageError("--jobs must be auto or at least 1")
    if opts.max_waves is not None and opts.max_waves < 1:
        raise UsageError("--max-waves must be a positive number of wave files")
    for name, value in (("--topk", opts.topk), ("--context", opts.context), ("--jobs", opts.jobs),
                        ("--max-waves", opts.max_waves)):
        if value is not None and value > COUNT_OPTION_LIMIT:
            raise UsageError(f"{name} {value}: larger than any capture needs (at most "
                             f"{COUNT_OPTION_LIMIT})")
    check_meta(opts.meta_paths)
    if opts.replicates > 0:
        return _replicates(path, opts)
    dirs = require_dispatch_dirs(path)
    if len(dirs) == 1:
        warnings: list[str] = []
        data = _analyze_dispatch_dir(dirs[0], opts, warnings)
        return Result("analyze", data, warnings)
    ranking, warnings = rank_dispatches(dirs, opts.kernel, _max_bytes(opts))
    usable = [c for c in ranking if c.status == OK]
    if opts.all_dispatches:
        analyses = [_analyze_dispatch_dir(Path(c.path), opts, warnings) for c in usable]
        if not analyses:
            _raise_all_empty(path, ranking, opts)
        return Result("analyze", MultiAnalysis(analyses, ranking), warnings)
    if not usable:
        _raise_all_empty(path, ranking, opts)
    best = usable[0]
    data = _analyze_dispatch_dir(Path(best.path), opts, warnings)
    data.selection = Selection(best.path, selection_reason(best, len(dirs)), ranking)
    return Result("analyze", data, warnings)


def _replicates(path: Path, opts: AnalyzeOptions) -> Result[DispatchAnalysis | MultiAnalysis]:
    """The best usable dispatch under `path` and the next ones of the same kernel, at most
    `opts.replicates` in all (a diff's side: replicates measure the capture noise)."""
    from hotspot.capture import usable_ranking

    usable, ranking, warnings = usable_ranking(path, opts.kernel)
    best = usable[0]
    same = [c for c in usable if c.kernel == best.kernel][:opts.replicates]
    analyses = [_analyze_dispatch_dir(Path(c.path), opts, warnings) for c in same]
    return Result("analyze", MultiAnalysis(analyses, ranking), warnings)


def _raise_all_empty(path: Path, ranking: list[DispatchCandidate], opts: AnalyzeOptions) -> None:
    from hotspot.capture import raise_none_usable

    raise_none_usable(path, ranking, opts.kernel, _max_bytes(opts))


def _max_bytes(opts: AnalyzeOptions) -> int | None:
    return int(opts.max_file_mb * MB) if opts.max_file_mb else None


def _analyze_dispatch_dir(d: Path, opts: AnalyzeOptions, warnings: list[str]) -> DispatchAnalysis:
    """The analysis of one dispatch dir. Its core (everything but the --detail snippets and the
    echoed options) is kept in the result cache (hotspot/cache/derived.py) while no file it read
    has changed, so analyze, plan, report, diff and export share one wave pass per capture."""
    from hotspot.cache.derived import cached

    a = cached("dispatch", _core_key(d, opts), lambda added: _analyze_core(d, opts, added), warnings,
               _max_bytes(opts))
    if opts.detail and a.mode == AnalysisMode.CYCLES:
        from hotspot.capture import load_source_map

        a.detail = _detail(a.source_lines, a.instructions, load_source_map(d, warnings, opts.source_map),
                           opts)
    a.options = options_out(a.mode, opts)
    return a


def _core_key(d: Path, opts: AnalyzeOptions) -> tuple[object, ...]:
    """Everything besides the files read that the core analysis depends on (marshal-able)."""
    return (str(d), os.path.abspath(d), opts.kernel, opts.arch, opts.max_waves,
            tuple(os.path.abspath(m) for m in opts.meta))


def _analyze_core(d: Path, opts: AnalyzeOptions, warnings: list[str]) -> DispatchAnalysis:
    from hotspot.capture import open_capture

    cap = open_capture(d, opts.kernel, _max_bytes(opts), opts.meta_paths)
    warnings.extend(cap.warnings)
    if cap.pc_sampling:
        return _analyze_pc_sampling(cap, opts, warnings)
    return analyze_capture(cap, opts, warnings)


def options_out(mode: AnalysisMode, opts: AnalyzeOptions) -> OptionsEcho:
    """The options echoed in the result's `options` field."""
    echo = OptionsEcho(opts.topk, opts.mode)
    if mode == AnalysisMode.CYCLES:
        echo.detail, echo.context, echo.kernel, echo.max_waves = opts.detail, opts.context, opts.kernel, opts.max_waves
    return echo


def analyze_capture(cap: Capture, opts: AnalyzeOptions, warnings: list[str]) -> DispatchAnalysis:
    """Every analysis of one cycle-mode capture (pure over the Capture and its readers)."""
    from hotspot.att.wave_results import analyze_waves

    d, disp, table, kernel, rows = cap.path, cap.dispatch, cap.table, cap.kernel, cap.rows
    executed = cap.executed
    mapped = sum(1 for r in executed if r.source)
    totals = agg.totals_of(rows)
    arch = cap.arch(opts.arch)
    warnings.extend(arch.warnings)
    lines = agg.source_line_stats(rows, totals.stall)
    instructions = agg.instruction_stats(rows, totals.stall)

    from hotspot.att.dispatch_occupancy import dispatch_occupancy

    # Occupancy reads occupancy.json (~300k events on a 1 GB capture): done while the pool's
    # workers read the wave files; its warnings still follow the wave pass's.
    occupancy_warnings: list[str] = []
    occupancy_out: list[tuple[DispatchOccupancy, Finding | None]] = []

    def occupancy_meanwhile() -> None:
        occupancy_out.append(dispatch_occupancy(cap, arch, occupancy_warnings))

    rules = waitcnt_rules(disp, arch, warnings)
    sample: Sequence[WaveFile] = ()
    if opts.wave_samples:
        from hotspot.att.engine.wavepass import sample_wave_files

        # of the waves the pass reads (hotspot/att/wave_samples.py sample_files)
        sample = sample_wave_files(sample_wave_files(disp.wave_files, opts.max_waves),
                                   opts.wave_samples)
    wr = analyze_waves(disp.wave_files, table.rows, rows, opts.max_waves, _max_bytes(opts), warnings,
                       opts.jobs, occupancy_meanwhile, rules=rules, gfx=arch.gfx if arch.known else None,
                       sample=sample)
    if sample:
        # diff's per-wave samples, taken in this pass, for the diff step of this command
        from hotspot.att.wave_samples import publish_samples

        publish_samples(cap, sample, wr.samples)
    warnings.extend(occupancy_warnings)
    occupancy, gap = occupancy_out[0]
    findings = [f for f in (
        fnd.rebuilt_columns(table.missing, table.rebuilt_from),
        fnd.source_collapse(lines),
        fnd.no_source(len(executed), mapped),
        fnd.idle_slice(len(rows), len(executed)),
        None if wr.sampled else fnd.wave_mismatch(
            totals, wr.totals,
            ((r.line_number, (r.hit, r.latency, r.stall)) for r in rows if r.hit or r.latency)),
    ) if f is not None] + wr.findings

    if gap is not None:
        findings.append(gap)
    mismatch = next((f for f in findings if f.id == "wave-mismatch"), None)
    if mismatch is not None:
        warnings.append(f"wave-mismatch: {mismatch.message}")
    names = [kernel_name(kernel, d)] + ([kernel.symbol] if kernel else [])
    rep, working = assess(rows, wr.totals, names, findings, wr.loops,
                          occupancy.resources.wg if occupancy.resources else None,
                          arch.target.wave_size if arch.target else None)
    if working is not None:
        # the shares the plan reads are the working waves': early-exit waves left out
        warnings.append(f"{rep.waves_early_exit} of {rep.waves_traced} traced waves retired after at "
                        f"most {rep.early_exit_max_records} instructions: totals and shares are over "
                        f"the {rep.waves_working} working waves")
        totals = agg.totals_of(working)
        lines = agg.source_line_stats(working, totals.stall)
        instructions = agg.instruction_stats(working, totals.stall)
        wr = replace(wr, waits=working_waits(wr.waits, rows, working, totals.stall))
    share_rows = working if working is not None else rows
    info = DispatchInfo(str(d), disp.agent_handle, disp.dispatch_id, kernel_name(kernel, d),
                        kernel.symbol if kernel else "", len(disp.wave_files), len(rows),
                        len(executed), pct(mapped, len(executed)), len(table.kernels))
    return DispatchAnalysis(
        dispatch=info, arch=arch_out(arch), mode=AnalysisMode.CYCLES, totals=totals,
        stall_by_category=agg.stall_by_category(share_rows, totals.stall),
        instructions=instructions, source_lines=lines,
        files=agg.file_stats(lines, totals.stall), instruction_mix=agg.instruction_mix(rows),
        findings=findings,
        wave_states=wr.wave_states,
        waits=wr.waits, blamed_lines=wr.blamed_lines,
        lgkm_breakdown=wr.lgkm_breakdown, loops=wr.loops,
        barriers=wr.barriers, attribution=wr.attribution,
        occupancy=occupancy,
        representativeness=rep,
        ceilings=wr.ceilings,
        options=options_out(AnalysisMode.CYCLES, opts),
    )


def _detail(lines: list[agg.SourceLineStat], instructions: list[agg.InstructionStat],
            smap: SourceMap, opts: AnalyzeOptions) -> list[DetailLine]:
    """Source snippet and worst instructions of each hot line (snapshots or --source-map files
    are read only here). `instructions` is every executed instruction in worst-first order, so a
    line's worst ones are its members in that order."""
    from hotspot.capture import read_source_lines

    out = []
    texts: dict[Path, list[str] | None] = {}  # each source file read once, however many lines
    shown = limit(lines, opts.topk)
    # each line's worst instructions, in one pass over `instructions` (a code row belongs to one
    # source line)
    line_of = {n: k for k, s in enumerate(shown) for n in s.instructions}
    worst_of: list[list[agg.InstructionStat]] = [[] for _ in shown]
    for i in instructions:
        k = line_of.get(i.line_number)
        if k is not None and len(worst_of[k]) < DETAIL_INSTRUCTIONS:
            worst_of[k].append(i)
    del line_of
    for s, worst in zip(shown, worst_of):
        snippet: list[SnippetLine] = []
        local, found = smap.find(s.file)
        if local and local not in texts:
            texts[local] = read_source_lines(local)
        text = texts[local] if local else None
        if text is not None and s.line is not None:
            lo = max(1, s.line - opts.context)
            hi = min(len(text), s.line + opts.context)
            snippet = [SnippetLine(n, text[n - 1], n == s.line) for n in range(lo, hi + 1)]
        out.append(DetailLine(s.file, s.line, bool(snippet), snippet, worst,
                              found if snippet else "", str(local) if snippet and local else ""))
    return out


def _analyze_pc_sampling(cap: Capture, opts: AnalyzeOptions, warnings: list[str]) -> DispatchAnalysis:
    from hotspot.att.pcsampling_analysis import analyze_samples

    return analyze_samples(cap.path, cap.dispatch, cap.table, cap.kernel, cap.rows, opts, warnings)
