"""The `analyze` use case's options and its typed result (serialized by orjson in field order; the
JSON contract is docs/schema/analyze.md). Shared by the cycles and PC-sampling analyses."""

from __future__ import annotations

import copy
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hotspot.arch.arch import Arch
from hotspot.att import code_totals as agg
from hotspot.att import findings as fnd
from hotspot.att.barriers import BarrierStat
from hotspot.att.issue_share import TraceCeilings
from hotspot.att.loops import Loop
from hotspot.att.dispatch_occupancy import DispatchOccupancy
from hotspot.att.representativeness import Representativeness
from hotspot.att.states import WaveStates
from hotspot.att.waits.reduce import Attribution, BlamedLine, LgkmBreakdown, WaitBlame
from hotspot.att.plan_items import PlanItem
from hotspot.record import record
from hotspot.strenum import TextEnum

if TYPE_CHECKING:
    pass
from hotspot.capture import DispatchCandidate

T = TypeVar("T")

DEFAULT_TOPK = 15
DETAIL_INSTRUCTIONS = 5  # worst instructions shown per hot line with --detail
MB = 1024 * 1024
# Real wave files are KBs to a few MB and code.json ~1 MB per 5,000 rows (the largest kernels ~40k
# rows). Peak RSS grows with the largest file: measured with `scripts/bench.py --hostile-rss 200`
# (docs/benchmark.md) at ~15x a code.json and ~18x a single wave file for analyze, ~37x a
# code.json with --plan. 32 MB keeps `analyze --plan` under 1.5 GB on any input; a larger file is
# refused before it is read, naming --max-file-mb.
DEFAULT_MAX_FILE_MB = 32.0


class PlanMode(TextEnum):
    """What the analysis use case (hotspot/plan/entry_point.py) adds: no plan, the plan attached to each
    dispatch (`analyze --plan`), or the plan alone (`hotspot plan`)."""

    NONE = ""
    ATTACHED = "attached"
    ALONE = "alone"


PLAN_NONE, PLAN_ATTACHED, PLAN_ALONE = PlanMode.NONE, PlanMode.ATTACHED, PlanMode.ALONE


class AnalysisMode(TextEnum):
    """What a dispatch's numbers are: traced cycles (ATT) or PC samples."""

    CYCLES = "cycles"
    PC_SAMPLING = "pc-sampling"


@record
class AnalyzeOptions:
    topk: int = DEFAULT_TOPK
    mode: str = "both"  # asm | src | both (which tables the text view shows)
    detail: bool = False
    context: int = 3
    kernel: str | None = None  # regex selecting a kernel when code.json holds several
    arch: str | None = None
    all_dispatches: bool = False
    # Refuse a code.json or wave file larger than this instead of exhausting memory (0 = no cap).
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    # worker processes for the wave pass; None = auto (hotspot/att/engine/worker_count.py decides)
    jobs: int | None = None
    max_waves: int | None = None  # read at most this many wave files (sampled evenly over SE/SIMD)
    meta: tuple[str, ...] = ()  # --meta: side files or folders named explicitly (searched first)
    # --source-map / HOTSPOT_SOURCE_MAP: (OLD prefix, local checkout) pairs for sources without snapshots
    source_map: tuple[tuple[str, str], ...] = ()
    # > 0: the best dispatch and up to this many in all of the same kernel (diff's noise estimate)
    replicates: int = 0
    # > 0: the wave pass also keeps the own values of up to this many waves per dispatch (diff's
    # samples, published in the capture session: hotspot/att/wave_samples.py)
    wave_samples: int = 0
    # The plan (hotspot/plan/entry_point.py `analyze`, the one entry point): PLAN_NONE, PLAN_ATTACHED to
    # each dispatch (`analyze --plan`), or PLAN_ALONE (`hotspot plan`: the plan without the tables)
    plan: PlanMode = PlanMode.NONE
    pmc: tuple[str, ...] = ()  # --pmc: counter files for the plan's memory verdicts

    @property
    def meta_paths(self) -> tuple[Path, ...]:
        return tuple(Path(m) for m in self.meta)


@record
class DispatchInfo:
    path: str
    agent_handle: int | None
    dispatch_id: int | None
    kernel: str
    symbol: str
    waves: int
    code_rows: int
    executed_instructions: int
    source_mapped_pct: float
    kernels_in_code: int


@record
class ArchOut:
    gfx: str
    product: str | None
    source: str
    known: bool
    candidates: list[str]
    features: list[str]


@record
class SnippetLine:
    """One line of source text around a hot line (--detail)."""

    line: int
    text: str
    hot: bool  # the hot line itself


@record
class DetailLine:
    file: str
    line: int | None
    source_available: bool
    snippet: list[SnippetLine]
    instructions: list[agg.InstructionStat]
    source_found: str = ""  # "snapshot", "source-map" or "" (not found)
    source_path: str = ""  # the local file read


@record
class SampleColumns:
    """The code.json columns the PC samples were read from (reasons: None when not written)."""

    issued: str
    stalled: str
    reasons: str | None


@record
class SampleCounts:
    """A PC-sampling dispatch's sample totals (`data.samples`)."""

    total: int
    issued: int
    stalled: int
    stall_reasons: dict[str, int]  # why stalled samples were not issued -> samples ({} when unknown)
    columns: SampleColumns


@record
class Selection:
    """Why this dispatch was analyzed when the path held several (capture/select.py ranking)."""

    chosen: str
    reason: str
    candidates: list[DispatchCandidate]


@record(frozen=False)
class OptionsEcho:
    """The options echoed as the command line gave them (docs/schema/analyze.md `options`): every
    analysis echoes topk and mode; a cycles one also detail, context, kernel and max_waves; the
    plan adds plan. A field not set is not in the JSON (init=False: set after construction)."""

    topk: int
    mode: str  # --mode: which hot-spot tables the text view shows (asm, src or both)
    detail: bool = field(default=False, init=False)
    context: int = field(default=0, init=False)
    kernel: str | None = field(default=None, init=False)
    max_waves: int | None = field(default=None, init=False)
    plan: bool = field(default=False, init=False)

    def planned(self, topk: int) -> OptionsEcho:
        """The echo of `analyze --plan`: the same keys in the same order, the shown topk, plan."""
        out = copy.copy(self)
        out.topk, out.plan = topk, True
        return out


@record(frozen=False)
class DispatchAnalysis:
    dispatch: DispatchInfo
    arch: ArchOut
    mode: AnalysisMode
    totals: agg.Totals
    stall_by_category: list[agg.CategoryStall]
    instructions: list[agg.InstructionStat]
    source_lines: list[agg.SourceLineStat]
    files: list[agg.FileStat]
    instruction_mix: list[agg.MixEntry]
    findings: list[fnd.Finding]
    wave_states: WaveStates | None = None
    occupancy: DispatchOccupancy | None = None  # theoretical vs achieved (hotspot/att/dispatch_occupancy.py)
    waits: list[WaitBlame] | None = None  # s_waitcnt -> producer blame (hotspot/att/waits/)
    blamed_lines: list[BlamedLine] | None = None
    lgkm_breakdown: LgkmBreakdown | None = None
    loops: list[Loop] | None = None
    barriers: list[BarrierStat] | None = None
    attribution: Attribution | None = None  # how the wait blame was obtained (edges/reconstruction)
    # does the capture represent the kernel (hotspot/att/representativeness.py); null for PC sampling
    representativeness: Representativeness | None = None
    # The slot of the plan in the JSON (docs/schema/analyze.md): null in an analysis. The plan is its
    # own value beside the analysis (hotspot/plan/api.py PlannedDispatch writes its items here); a
    # saved `analyze --plan` document reads its items back here (records of hotspot/att/plan_items.py,
    # below att/: the analysis holds what the plan produces without importing plan/).
    plan: list[PlanItem] | None = None
    samples: SampleCounts | None = None  # PC sampling only
    detail: list[DetailLine] | None = None
    selection: Selection | None = None
    # MFMA/VALU issue share per SIMD over the kernel and each loop, from the wave pass
    # (hotspot/att/issue_share.py): the trace ceilings the plan caps its estimates with
    ceilings: TraceCeilings | None = None
    # The options echoed as the command line gave them (att/analyze.py options_out: its keys differ
    # The options echoed as the command line gave them (att/analyze.py options_out: the fields set
    # differ by mode, and the plan adds its own); read through the typed accessors below.
    options: OptionsEcho | None = None
    # Every row of every ranked table is here (True), or `--topk` left rows out (False); null in a
    # document saved before this field. A saved analysis re-read (analyze, plan, report, diff of a
    # file) says what a cut one lacks.
    tables_complete: bool | None = None

    @property
    def asked_detail(self) -> bool:
        """`--detail` was given: the views show the big tables and the plan's evidence."""
        return self.options is not None and self.options.detail

    @property
    def asked_tables(self) -> str:
        """`--mode`: which hot-spot tables the text view shows (asm, src or both)."""
        return self.options.mode if self.options is not None else "both"

    @property
    def asked_topk(self) -> int | None:
        return self.options.topk if self.options is not None else None

    @property
    def asked_max_waves(self) -> int | None:
        """`--max-waves`: the wave files read were a sample of at most this many."""
        return self.options.max_waves if self.options is not None else None


@record(frozen=False)
class MultiAnalysis:
    """`analyze --all`: every usable dispatch, and the ranking of all of them."""

    dispatches: list[DispatchAnalysis]
    ranking: list[DispatchCandidate]


def arch_out(info: Arch) -> ArchOut:
    return ArchOut(info.label, info.product, info.source, info.known, list(info.candidates),
                   list(info.features))


def limit(items: list[T], topk: int) -> list[T]:
    return items if topk == 0 else items[:topk]


# Tables that `--topk` shortens for display. The analysis always keeps every row (the plan and diff
# need them all); `trimmed` is applied once, to what is printed.
TOPK_FIELDS = ("instructions", "source_lines", "waits", "blamed_lines", "loops", "barriers")


def trimmed(a: DispatchAnalysis, topk: int) -> DispatchAnalysis:
    """A copy of `a` whose ranked tables hold their first `topk` rows (0 = all), saying whether
    that left a row out (`tables_complete`)."""
    lists = [getattr(a, name) for name in TOPK_FIELDS if isinstance(getattr(a, name), list)]
    if a.wave_states is not None:
        lists += [a.wave_states.lines, a.wave_states.instructions]
    complete = not topk or all(len(rows) <= topk for rows in lists)
    if a.tables_complete is False:  # already cut (a saved analysis read back)
        complete = False
    if not topk:
        return replace(a, tables_complete=complete)
    values: dict[str, Any] = {name: getattr(a, name)[:topk] for name in TOPK_FIELDS
                                 if isinstance(getattr(a, name), list)}
    if a.wave_states is not None:
        values["wave_states"] = replace(a.wave_states, lines=a.wave_states.lines[:topk],
                                        instructions=a.wave_states.instructions[:topk])
    return replace(a, tables_complete=complete, **values)


def trimmed_data(data: DispatchAnalysis | MultiAnalysis, topk: int) -> DispatchAnalysis | MultiAnalysis:
    if isinstance(data, MultiAnalysis):
        return replace(data, dispatches=[trimmed(a, topk) for a in data.dispatches])
    return trimmed(data, topk)
