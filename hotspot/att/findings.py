"""Findings about the capture and the attribution itself (not yet optimization advice)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, TypeVar, Union

from hotspot.arch.classify import Category
from hotspot.att.code_totals import SourceLineStat, Totals
from hotspot.capture import IDLE_SLICE_EXECUTED_SHARE, WaveTotals
from hotspot.record import record

if TYPE_CHECKING:
    from hotspot.att.waits.reduce import LgkmBreakdown

# One source line holding at least this share of all stall, over at least this many categories,
# is compiler-generated code collapsed onto one line (typically the kernel entry/decorator).
SOURCE_COLLAPSE_SHARE = 0.50
SOURCE_COLLAPSE_MIN_CATEGORIES = 3
# Below this share of executed instructions with a Source, line-level results are unreliable.
NO_SOURCE_MAPPED_SHARE = 0.50
# Below this share of code rows executed, the traced waves saw only a sliver of the kernel.
# code.json vs wave files: relative difference tolerated before reporting a mismatch.
WAVE_MISMATCH_TOLERANCE = 0.001
NEXT_HOT_LINES = 3

LINE_INFO_HINT = ("build with line tables (hipcc/clang: -gline-tables-only or -g; JIT DSLs such as "
                  "Triton/FlyDSL: enable their debug line-info option) and re-capture")


# The evidence of each kind of finding: one record per `Finding.id`, its fields in the order the
# JSON writes them (docs/schema/analyze.md `findings[].evidence`). No two share their set of field
# names, which is how a saved document's evidence is read back (hotspot/decode.py, unions of records).


@record
class NextLine:
    """A hot source line after the collapsed one."""

    file: str
    line: int | None
    share: float
    dominant_category: str


@record
class SourceCollapseEvidence:
    file: str
    line: int | None
    share: float
    categories: list[str]
    threshold_share: float
    threshold_categories: int
    next_lines: list[NextLine]


@record
class NoSourceEvidence:
    executed_instructions: int
    mapped_instructions: int
    mapped_share: float
    threshold_share: float


@record
class IdleSliceEvidence:
    code_rows: int
    executed_instructions: int
    executed_share: float
    threshold_share: float


@record
class RebuiltColumnsEvidence:
    layout: str
    columns: list[str]
    wave_files: int


@record
class TotalPair:
    """One total as code.json has it and as the wave files sum to."""

    code_json: int
    wave_files: int


@record
class WaveMismatchEvidence:
    totals: dict[str, TotalPair]  # hit | latency | stall: only the totals that disagree
    rows_differing: int
    first_rows: list[int]
    waves_read: int


@record
class LgkmCrossLaneEvidence:
    cross_lane_share_of_lgkm: float
    cross_lane_stall: float
    lgkm_stall: float
    share_of_total_stall: float
    producers: list[str]
    threshold_share: float
    threshold_min_stall_share: float


@record
class LgkmSmemEvidence:
    smem_share_of_lgkm: float
    smem_stall: float
    lgkm_stall: float
    share_of_total_stall: float
    prologue: bool
    producers: list[str]
    threshold_share: float
    threshold_min_stall_share: float


@record
class OccupancyGapEvidence:
    theoretical_waves_per_simd: int
    achieved_mean_waves_per_simd: float
    achieved_peak_waves_per_simd: int
    ratio: float
    threshold_ratio: float


FindingEvidence = Union[SourceCollapseEvidence, NoSourceEvidence, IdleSliceEvidence,
                        RebuiltColumnsEvidence, WaveMismatchEvidence, LgkmCrossLaneEvidence,
                        LgkmSmemEvidence, OccupancyGapEvidence]
E = TypeVar("E", bound=FindingEvidence)


@record
class Finding:
    id: str
    severity: str  # "high" | "medium" | "low" | "info"
    message: str
    evidence: FindingEvidence
    hint: str = ""


def finding_of(findings: Iterable[Finding], kind: type[E]) -> tuple[Finding, E] | None:
    """The first finding whose evidence is a `kind`, with that evidence typed."""
    for f in findings:
        if isinstance(f.evidence, kind):
            return f, f.evidence
    return None


def source_collapse(lines: Sequence[SourceLineStat]) -> Finding | None:
    if not lines:
        return None
    top = lines[0]
    cats = [c for c, s in top.categories.items() if s > 0] or list(top.categories)
    if top.share < SOURCE_COLLAPSE_SHARE or len(top.categories) < SOURCE_COLLAPSE_MIN_CATEGORIES:
        return None
    nxt = [NextLine(s.file, s.line, s.share, s.dominant_category) for s in lines[1:1 + NEXT_HOT_LINES]]
    nxt_text = ", ".join(f"{s.file.rsplit('/', 1)[-1]}:{s.line} ({s.share:.0%})"
                         for s in lines[1:1 + NEXT_HOT_LINES])
    return Finding(
        "source-collapse", "high",
        f"{top.file}:{top.line} holds {top.share:.0%} of all stall across "
        f"{len(top.categories)} instruction categories: compiler-generated code was attributed to "
        f"one line (typically the kernel entry or decorator), so line-level blame is coarse here"
        + (f"; next hot lines: {nxt_text}" if nxt_text else ""),
        SourceCollapseEvidence(top.file, top.line, top.share, cats, SOURCE_COLLAPSE_SHARE,
                               SOURCE_COLLAPSE_MIN_CATEGORIES, nxt),
        "use the instruction view (--mode asm) for this line, and " + LINE_INFO_HINT)


def no_source(executed: int, mapped: int) -> Finding | None:
    if executed == 0 or mapped / executed >= NO_SOURCE_MAPPED_SHARE:
        return None
    share = mapped / executed
    return Finding(
        "no-source", "medium",
        f"only {share:.0%} of executed instructions carry a source location; source-line results "
        "are partial and the instruction view is the reliable one",
        NoSourceEvidence(executed, mapped, share, NO_SOURCE_MAPPED_SHARE),
        LINE_INFO_HINT)


def idle_slice(code_rows: int, executed: int) -> Finding | None:
    if code_rows == 0 or executed / code_rows >= IDLE_SLICE_EXECUTED_SHARE:
        return None
    share = executed / code_rows
    return Finding(
        "idle-slice", "high",
        f"only {executed} of {code_rows} code rows ({share:.1%}) executed on the traced waves: the "
        "capture saw a sliver of the kernel (waves that retired early or an idle CU), so these "
        "numbers do not represent the kernel",
        IdleSliceEvidence(code_rows, executed, share, IDLE_SLICE_EXECUTED_SHARE),
        "re-capture with another att_target_cu or att_shader_engine_mask, a larger grid, or a later "
        "kernel_iteration_range so the traced CU runs full waves")


def rebuilt_columns(missing: Sequence[str], wave_files: int) -> Finding | None:
    """The code table came from an early format-3.0.0 code.json: its `missing` columns were
    rebuilt from `wave_files` wave files (hotspot/capture/early_layout.py)."""
    if not missing or not wave_files:
        return None
    names = " and ".join(missing)
    return Finding(
        "rebuilt-columns", "info",
        f"code.json is the early format-3.0.0 layout (no header, no {names} columns): {names} were "
        f"rebuilt from the {wave_files} wave files (stall: the sum of each instruction's stall; "
        "idle: the gaps before each instruction); the same sums a current decoder writes",
        RebuiltColumnsEvidence("early-3.0.0", list(missing), wave_files),
        "nothing to do; a current decoder writes these columns itself")


def wave_mismatch(totals: Totals, waves: WaveTotals,
                  code_lines: Iterable[tuple[int, tuple[int, int, int]]]) -> Finding | None:
    """`code_lines`: (line, (hit, latency, stall)) of each code row with hits or latency (read
    only when the totals disagree)."""
    w_hit = sum(v[0] for v in waves.per_line.values())
    w_lat = sum(v[1] for v in waves.per_line.values())
    w_stall = sum(v[2] for v in waves.per_line.values())
    diffs: dict[str, tuple[int, int]] = {}  # total -> (code.json, wave files)
    for name, code_v, wave_v in (("hit", totals.hit, w_hit), ("latency", totals.latency, w_lat),
                                 ("stall", totals.stall, w_stall)):
        if abs(code_v - wave_v) > WAVE_MISMATCH_TOLERANCE * max(code_v, wave_v, 1):
            diffs[name] = (code_v, wave_v)
    if not diffs:
        return None
    rows_off = sorted(line for line, (h, lat, st) in code_lines
                      if tuple(waves.per_line.get(line, (0, 0, 0))) != (h, lat, st))
    return Finding(
        "wave-mismatch", "medium",
        "code.json totals disagree with the sum over the wave files ("
        + ", ".join(f"{k}: {c:,} vs {w:,}" for k, (c, w) in diffs.items())
        + "): some wave files are missing, truncated, or from another decode",
        WaveMismatchEvidence({k: TotalPair(c, w) for k, (c, w) in diffs.items()}, len(rows_off),
                             list(rows_off[:10]), waves.waves),
        "re-decode the .att files into a fresh directory; check for truncation warnings")


# lgkm breakdown findings. A class "dominates" at half of the lgkm-blamed wait stall; below
# LGKM_MIN_STALL_SHARE of all stall the lgkm waits are not worth a finding.
LGKM_CROSS_LANE_SHARE = 0.50
LGKM_SMEM_SHARE = 0.50
LGKM_MIN_STALL_SHARE = 0.05


def lgkm_cross_lane(bd: "LgkmBreakdown | None", total_stall: int,
                    top_producers: Sequence[str] = ()) -> Finding | None:
    if bd is None or not total_stall or bd.lgkm_stall < LGKM_MIN_STALL_SHARE * total_stall:
        return None
    if bd.cross_lane_share < LGKM_CROSS_LANE_SHARE:
        return None
    cross = next(c.stall for c in bd.classes if c.producer_class == Category.CROSS_LANE)
    return Finding(
        "lgkm-cross-lane", "medium",
        f"{bd.cross_lane_share:.0%} of the lgkmcnt wait stall ({cross:,.0f} cycles, "
        f"{cross / total_stall:.0%} of all stall) waits on ds_bpermute/ds_permute/ds_swizzle: these "
        "are lane-shuffle steps (typically a reduction) that retire on lgkmcnt without any LDS "
        "traffic, so the wait is the serial shuffle chain, not LDS bandwidth",
        LgkmCrossLaneEvidence(bd.cross_lane_share, cross, bd.lgkm_stall, cross / total_stall,
                              list(top_producers), LGKM_CROSS_LANE_SHARE, LGKM_MIN_STALL_SHARE),
        "use DPP row/broadcast forms or v_permlane*_swap (gfx950) for the shuffles, or restructure "
        "the reduction to need fewer serial steps (reduce more per lane first, then shuffle)")


def lgkm_smem(bd: "LgkmBreakdown | None", total_stall: int, prologue: bool,
              top_producers: Sequence[str] = ()) -> Finding | None:
    if bd is None or not total_stall or bd.lgkm_stall < LGKM_MIN_STALL_SHARE * total_stall:
        return None
    if bd.smem_share < LGKM_SMEM_SHARE:
        return None
    smem = next(c.stall for c in bd.classes if c.producer_class == Category.SMEM)
    message = (f"scalar loads hold {bd.smem_share:.0%} of the lgkmcnt wait stall ({smem:,.0f} "
               f"cycles, {smem / total_stall:.0%} of all stall)")
    if prologue:
        message += ("; they are the loads at kernel entry (kernel arguments), a fixed cost per "
                    "wave that short waves cannot hide")
        hint = ("give each wave more work (more elements per thread or a grid-stride loop) so the "
                "entry cost is amortised, and issue the scalar loads before unrelated setup code")
    else:
        hint = ("hoist loop-invariant scalar loads out of the loop, or issue them earlier "
                "(software prefetch into SGPRs) so their latency overlaps other work")
    return Finding(
        "lgkm-smem", "medium", message,
        LgkmSmemEvidence(bd.smem_share, smem, bd.lgkm_stall, smem / total_stall, prologue,
                         list(top_producers), LGKM_SMEM_SHARE, LGKM_MIN_STALL_SHARE),
        hint)
