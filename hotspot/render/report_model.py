"""What the HTML page renders: the typed analysis of each dispatch plus the two views only a
picture needs (built by hotspot/export/report_data.py, read by hotspot/render/html.py).

- `listing`: every code row of the analyzed kernel, executed or not (the ISA view), and
- `wave_timelines`: the wave-state timelines of a few representative waves (longest, median,
  shortest), read from their wave files.
A saved `hotspot analyze --format json` document renders without those two (None).
"""

from __future__ import annotations

from dataclasses import field

from hotspot.att.kernel_roofline import CounterInput
from hotspot.att.model import DispatchAnalysis, MultiAnalysis
from hotspot.capture import DispatchCandidate
from hotspot.plan.api import PlannedDispatch, PlannedMulti
from hotspot.plan.model import PlanItem
from hotspot.record import record


@record
class ListingRow:
    """One code row of the kernel (the ISA view): its decoder counts, category and source."""

    line_number: int
    isa: str
    category: str
    hit: int
    latency: int
    stall: int
    idle: int
    source: str  # leaf "file:line" or ""


@record
class TimelineWave:
    """The state timeline of one representative wave, merged to the chart's resolution."""

    role: str  # "longest", "median" or "shortest"
    file: str
    se: int
    simd: int
    slot: int
    wave: int
    begin: int
    end: int
    cycles: int
    instructions: int
    states: dict[str, int]  # state -> cycles (exact, before merging)
    segments: list[tuple[str, int, int]]  # (state, start offset, cycles)
    downsampled: bool


@record
class WaveTimelines:
    waves_total: int
    max_segments: int
    waves: list[TimelineWave]


@record
class ReportDispatch:
    """One dispatch of the page."""

    analysis: DispatchAnalysis
    listing: list[ListingRow] | None = None
    wave_timelines: WaveTimelines | None = None
    plan: list[PlanItem] | None = None  # with the plan (the report; a saved `analyze --plan`)
    counters: CounterInput | None = None  # `report --pmc`: the counters of the traced kernel (the roofline's second point)


@record
class ReportPage:
    """Every dispatch the page shows (several for a saved `analyze --all`), and their ranking."""

    dispatches: list[ReportDispatch]
    ranking: list[DispatchCandidate] = field(default_factory=list)


def page_of(data: DispatchAnalysis | MultiAnalysis | PlannedDispatch | PlannedMulti | ReportPage
            ) -> ReportPage:
    """The page of an analysis, with its plan when it has one (`analyze [--plan] --format html`),
    or of the report's data."""
    if isinstance(data, ReportPage):
        return data
    if isinstance(data, MultiAnalysis):
        return ReportPage([ReportDispatch(a) for a in data.dispatches], list(data.ranking))
    if isinstance(data, PlannedMulti):
        return ReportPage([ReportDispatch(p.analysis, plan=p.plan.items) for p in data.dispatches],
                          list(data.ranking))
    if isinstance(data, PlannedDispatch):
        return ReportPage([ReportDispatch(data.analysis, plan=data.plan.items)])
    return ReportPage([ReportDispatch(data)])
