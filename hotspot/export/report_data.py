"""Use case behind `hotspot report`: the analyze Result plus what only a picture needs.

The HTML page is rendered from a `ReportPage` (hotspot/render/report_model.py): the typed `analyze`
data (all rows, `--topk 0`, with the plan) plus the kernel's full listing and the wave-state
timelines of a few representative waves. A saved `hotspot analyze --format json` document renders
too (read back as the typed analysis, without those two extras).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from hotspot.att.kernel_roofline import CounterInput
from hotspot.att.model import AnalysisMode, DispatchAnalysis
from hotspot.plan.api import DispatchPlan, PlanData, PlannedDispatch, PlannedMulti
from hotspot.record import record
from hotspot.render.report_model import (
    ListingRow,
    ReportDispatch,
    ReportPage,
    TimelineWave,
    WaveTimelines,
    page_of,
)
from hotspot.result import Result

# Segments kept per wave in the timeline chart: the chart is about 1,200 px wide, so more
# rectangles than this only cost bytes (state totals stay exact; see timeline.downsample).
TIMELINE_MAX_SEGMENTS = 1500
MB = 1024 * 1024
# The report holds the full listing and the topk-0 analysis as data and written as the page in
# pieces: ~16x a code.json in peak RSS (457 MiB for 28.6 MB; scripts/bench.py --hostile-rss,
# docs/benchmark.md), so analyze's cap (hotspot.att.model.DEFAULT_MAX_FILE_MB) keeps it far under 1.5 GB.
REPORT_MAX_FILE_MB = 32.0


@record
class ReportOptions:
    kernel: str | None = None
    arch: str | None = None
    max_file_mb: float | None = None
    meta: tuple[str, ...] = ()
    # --source-map: (OLD prefix, local checkout) pairs for sources the capture has no snapshot of
    source_map: tuple[tuple[str, str], ...] = ()
    # --pmc: counter files (as `hotspot pmc` reads them): the plan's memory verdicts, as `analyze --pmc`
    # gives them, and the roofline's second point
    pmc: tuple[str, ...] = ()


def report_data(path: Path, opts: ReportOptions = ReportOptions()) -> Result[ReportPage]:
    """Everything the report shows: a Result whose data is a `ReportPage`."""
    if path.is_file():
        return load_saved(path, opts.pmc)
    from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
    from hotspot.plan.entry_point import analyze

    cap = REPORT_MAX_FILE_MB if opts.max_file_mb is None else opts.max_file_mb
    max_bytes = int(cap * MB) if cap else None
    # The wave timelines need a few wave files the wave pass reads anyway: keep their bytes then,
    # so the report reads every capture file once. With the result cache on, the pass and the
    # timelines are usually answered from it and listing the waves here would be wasted.
    from hotspot.cache.store import disabled_reason

    if disabled_reason():
        _keep_representative_waves(path, opts.kernel, max_bytes)
    # The report shows the plan too: same analysis as `analyze --plan`, full listing (topk 0).
    # detail: the source text around every line (snapshot or --source-map checkout) for its panel
    result = analyze(path, AnalyzeOptions(topk=0, kernel=opts.kernel, arch=opts.arch, meta=opts.meta,
                                          max_file_mb=cap, detail=True, source_map=opts.source_map,
                                          plan=PLAN_ATTACHED, pmc=opts.pmc))
    a = result.data
    assert not isinstance(a, PlanData)  # PLAN_ATTACHED: the analysis with its plan
    warnings = list(result.warnings)
    page = page_of(a)
    if isinstance(a, PlannedDispatch) and a.analysis.mode == AnalysisMode.CYCLES:
        from hotspot.cache.derived import cached

        one = a.analysis
        ddir = Path(one.dispatch.path)
        symbol = one.dispatch.symbol or ""
        # kept in the result cache with the analysis: a repeated report reads no capture file
        rows, timelines = cached(
            "report-views", (str(ddir), os.path.abspath(ddir), symbol),
            lambda _: (listing(ddir, symbol, max_bytes), wave_timelines(ddir, max_bytes)), warnings,
            max_bytes)
        counters = counter_input(a.plan) if opts.pmc else None
        page = ReportPage([ReportDispatch(one, rows, timelines, a.plan.items, counters)])
    return Result("report", page, warnings)


def counter_input(plan: DispatchPlan) -> CounterInput | None:
    """The counters of the traced kernel in the --pmc files as the plan read them (`hotspot pmc` on
    them, with the dispatch's arch; the kernel matched by its full identity), per dispatch: the
    median the counter analysis gives. The plan's read is the only one: the files are parsed once."""
    if plan.pmc is None:
        return None
    files, chosen = plan.pmc.files, plan.counters
    if chosen is None:
        return CounterInput(files, None, plan.pmc.match)
    per = chosen.median_per_dispatch
    b = per.fabric_read_bytes
    return CounterInput(files, chosen.kernel, plan.pmc.match, chosen.dispatches, b.low, b.high,
                        "" if b.exact else b.reason, per.duration_ns)


def _keep_representative_waves(path: Path, kernel: str | None, max_bytes: int | None) -> None:
    from hotspot.capture import choose_dispatch, keep_bytes, open_dispatch
    from hotspot.errors import HotspotError
    from hotspot.export.timeline import pick_representative

    try:
        ddir, _ = choose_dispatch(path, kernel, max_bytes)
        files = open_dispatch(ddir).wave_files
    except HotspotError:
        return  # the analysis reports the problem
    spans = [wf.end - wf.begin for wf in files if wf.begin is not None and wf.end is not None]
    if len(spans) == len(files):  # every wave file's extent is known
        keep_bytes(files[i].where for _, i in pick_representative(spans))


def load_saved(path: Path, pmc: tuple[str, ...] = ()) -> Result[ReportPage]:
    """A saved `hotspot analyze --format json` envelope (or its bare `data` object) as the page's
    data; the plan items it holds (read back into the analysis's `plan` slot) are the page's plan.
    With counter files (`--pmc`) it is planned again with their memory verdicts, as `hotspot plan
    SAVED.json --pmc` plans it, and each dispatch's roofline gets the counters' point."""
    lacks = (f"{path}: a saved analysis holds its executed instructions only (no full listing) and no wave "
             "timelines: the report shows its tables and plan; report the capture directory for those")
    if pmc:
        from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
        from hotspot.plan.entry_point import analyze

        result = analyze(path, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED, pmc=pmc))
        planned = result.data
        assert isinstance(planned, (PlannedDispatch, PlannedMulti))  # PLAN_ATTACHED
        plans = [p.plan for p in planned.dispatches] if isinstance(planned, PlannedMulti) else [planned.plan]
        page = page_of(planned)
        views = [replace(view, counters=counter_input(plan)) for view, plan in zip(page.dispatches, plans)]
        return Result("report", replace(page, dispatches=views), [*result.warnings, lacks])
    from hotspot.att.load import read_analysis

    analysis, warnings = read_analysis(path)
    page = page_of(analysis)
    views = [replace(view, plan=view.analysis.plan) if view.analysis.plan else view
             for view in page.dispatches]
    return Result("report", replace(page, dispatches=views), [*warnings, lacks])


def listing(ddir: Path, symbol: str, max_bytes: int | None) -> list[ListingRow]:
    """Every code row of the kernel named `symbol` (all rows when code.json names no kernel), from
    the Capture the analysis read (its code table is read once per command)."""
    from hotspot.arch.classify import classify
    from hotspot.capture import open_capture

    table = open_capture(ddir, None, max_bytes).table
    rows = table.rows
    match = [k for k in table.kernels if k.symbol == symbol]
    if match:
        rows = table.kernel_rows(match[0])
    return [ListingRow(r.line_number, r.isa, classify(r.isa).category, r.hit, r.latency, r.stall,
                       r.idle, r.source.label if r.source else "") for r in rows]


def wave_timelines(ddir: Path, max_bytes: int | None) -> WaveTimelines:
    """Wave-state timelines of the longest, median and shortest traced wave."""
    from hotspot.att.engine.native import read_wave
    from hotspot.capture import WAVE_STATES, open_capture
    from hotspot.export.timeline import downsample, pick_representative, segments

    files = list(open_capture(ddir, None, max_bytes).wave_files)
    # filenames.json gives every wave's begin/end; without it, the wave files themselves must be read.
    spans = []
    for wf in files:
        if wf.begin is not None and wf.end is not None:
            spans.append(wf.end - wf.begin)
        else:
            w = read_wave(wf, max_bytes)
            spans.append(w.end - w.begin)
    waves = []
    for role, idx in pick_representative(spans):
        wave = read_wave(files[idx], max_bytes)
        segs = segments(wave.timeline)
        states = [0] * len(WAVE_STATES)
        for state, _start, cycles in segs:
            if 0 <= state < len(states):
                states[state] += cycles
        shown, reduced = downsample(segs, TIMELINE_MAX_SEGMENTS)
        wf = wave.file
        waves.append(TimelineWave(
            role, wf.path.name, wf.se, wf.simd, wf.slot, wf.n, wave.begin, wave.end,
            wave.end - wave.begin, len(wave.instructions), dict(zip(WAVE_STATES, states)),
            [(WAVE_STATES[s] if 0 <= s < len(WAVE_STATES) else f"state-{s}", start, c)
             for s, start, c in shown],
            reduced))
    return WaveTimelines(len(files), TIMELINE_MAX_SEGMENTS, waves)

