"""How much of the stall the plan's items explain (issue 33, point 1).

Each item's sites carry the stall they target at a row (the wait, or for a site without a wait its
last producer row: the narrow load, the VALU after an s_nop). Summed per row and capped at the row's
own stall (two items on one wait explain it at most once), over all rows, that is the stall the
plan explains; split by the rows' categories, what it explains of each top class. A roof verdict
explains the whole stall of the rows it bounds (`roof_rows`). Other kernel-wide items (launch,
occupancy) name no row and explain no row's stall: they are listed by id.

When the top class is less than half explained, `gap` names the rows that hold most of that class's
unexplained stall and, for waits, the producers their stall is blamed on, so a plan never looks
complete while it is silent about its biggest cost.
"""

from __future__ import annotations

from hotspot.arch.classify import Category, mnemonic_of
from hotspot.att.code_totals import InstructionStat
from hotspot.att.issue_share import UnitBusy
from hotspot.att.waits.reduce import WaitBlame
from hotspot.plan.conventions import AT_ROOF
from hotspot.plan.model import Kind, PlanItem, Site
from hotspot.record import record

TOP_CLASSES = 3
# Below this share of its top class explained, the verdict says so and `gap` names the rows.
HALF_EXPLAINED = 0.5
GAP_ROWS = 3          # rows named in the gap entry
GAP_PRODUCERS = 3     # producers named per wait row
ROUND = 4


@record
class ClassCoverage:
    category: Category
    stall: int               # the class's stall over the traced waves
    explained: int           # of it, at the rows the items name
    share: float             # explained ÷ stall


@record
class GapProducer:
    line_number: int | None
    isa: str
    category: str
    blamed_stall: float


@record
class GapRow:
    line_number: int
    isa: str
    stall: int
    unexplained: int
    producers: list[GapProducer]


@record
class CoverageGap:
    """The top class's stall the items do not explain: where it sits and what it waits for."""

    category: Category
    share_explained: float
    rows: list[GapRow]
    message: str


@record
class RowCoverage:
    line_number: int
    stall: int               # the row's own stall
    explained: int           # min(Σ the items' site targets at the row, stall)


@record
class Coverage:
    total_stall: int         # Σ stall of the instruction table the rules read
    explained: int           # Σ over rows of min(Σ item site targets at the row, the row's stall)
    share: float             # explained ÷ total_stall
    by_class: list[ClassCoverage]  # the top classes by stall
    rows: list[RowCoverage]  # the rows the items name, by row
    kernel_wide_items: list[str]  # items naming no row (they explain no row's stall)
    gap: CoverageGap | None


# The stall a roof verdict explains: at the bandwidth roof, the memory waits and memory issue stall
# (what the roof looks like from inside a wave); at the matrix core, everything in its loop (its
# latency items were dropped for it), or the kernel when the kernel is the scope.
BANDWIDTH_ROOF_CLASSES = frozenset({Category.WAIT_VMCNT, Category.WAIT_MIXED, Category.VMEM_LOAD,
                                    Category.VMEM_STORE, Category.VMEM_ATOMIC, Category.FLAT})


def roof_rows(item: PlanItem, instructions: list[InstructionStat], bound: UnitBusy | None
              ) -> list[int] | None:
    """The rows a roof verdict (evidence `at_the_roof`) explains, or None for any other item;
    `bound`: the scope at the matrix core (hotspot/plan/ceiling_rules.py `bound_scope`), whose
    rows the `matrix-core-bound` verdict names."""
    if not any(e.metric == AT_ROOF and e.value for e in item.evidence):
        return None
    if item.id == "bandwidth-bound":
        return [i.line_number for i in instructions if i.category in BANDWIDTH_ROOF_CLASSES]
    lo, hi = (bound.first_row, bound.last_row) if bound is not None else (None, None)
    if lo is not None and hi is not None:
        return [i.line_number for i in instructions if lo <= i.line_number <= hi]
    return [i.line_number for i in instructions]


def site_row(s: Site) -> int | None:
    """The row a site's stall sits on: its wait, else its last producer row."""
    if s.wait_row is not None:
        return s.wait_row
    return s.producer_rows[-1] if s.producer_rows else None


def coverage_of(items: list[PlanItem], instructions: list[InstructionStat],
                waits: list[WaitBlame] | None, bound: UnitBusy | None = None) -> Coverage:
    """The plan's coverage of the stall: per row, per top class, and the gap of the top class
    (`bound`: the scope at the matrix core, see roof_rows)."""
    stall_at = {i.line_number: i.stall for i in instructions}
    by_row: dict[int, int] = {}
    kernel_wide: list[str] = []
    for it in items:
        if it.kind == Kind.CAPTURE:
            continue
        roof = roof_rows(it, instructions, bound)
        if roof is not None:  # a roof verdict explains the whole stall of the rows it bounds
            for n in roof:
                by_row[n] = max(by_row.get(n, 0), stall_at.get(n, 0))
            continue
        named = False
        for s in it.sites:
            row = site_row(s)
            if row is None or row not in stall_at:
                continue
            named = True
            by_row[row] = by_row.get(row, 0) + int(s.target_cycles)
        if not named:
            kernel_wide.append(it.id)
    rows = {r: min(c, stall_at[r]) for r, c in sorted(by_row.items()) if min(c, stall_at[r]) > 0}
    cat_of = {i.line_number: i.category for i in instructions}
    class_stall: dict[Category, int] = {}
    for i in instructions:
        if i.stall > 0:
            class_stall[i.category] = class_stall.get(i.category, 0) + i.stall
    top = sorted(class_stall.items(), key=lambda kv: (-kv[1], str(kv[0])))[:TOP_CLASSES]
    by_class = []
    for cat, stall in top:
        got = sum(c for r, c in rows.items() if cat_of.get(r) == cat)
        by_class.append(ClassCoverage(cat, stall, got, round(got / stall, ROUND) if stall else 0.0))
    explained = sum(rows.values())
    total_stall = sum(class_stall.values())
    gap = _gap(by_class[0], instructions, rows, waits) if by_class and by_class[0].share < HALF_EXPLAINED else None
    return Coverage(total_stall, explained, round(explained / total_stall, ROUND) if total_stall else 0.0,
                    by_class, [RowCoverage(r, stall_at[r], c) for r, c in rows.items()],
                    sorted(set(kernel_wide)), gap)


def _gap(top: ClassCoverage, instructions: list[InstructionStat], rows: dict[int, int],
         waits: list[WaitBlame] | None) -> CoverageGap:
    blame = {w.line_number: w for w in waits or []}
    pool = sorted((i for i in instructions if i.category == top.category and i.stall > 0),
                  key=lambda i: (-(i.stall - rows.get(i.line_number, 0)), i.line_number))
    named = []
    for i in pool[:GAP_ROWS]:
        w = blame.get(i.line_number)
        producers = sorted(w.producers, key=lambda p: -p.blamed_stall)[:GAP_PRODUCERS] if w else []
        named.append(GapRow(i.line_number, i.isa, i.stall, i.stall - rows.get(i.line_number, 0),
                            [GapProducer(p.line_number, p.isa, p.category, round(p.blamed_stall, 1))
                             for p in producers]))
    where = "; ".join(gap_row_text(g) for g in named)
    message = f"{top.category}: {1 - top.share:.0%} of its stall is in no item — {where}"
    return CoverageGap(top.category, top.share, named, message)


def gap_row_text(g: GapRow) -> str:
    """`#1135 s_waitcnt vmcnt(0) ← scratch_load_dword #1133, scratch_load_dwordx4 #1134`."""
    head = f"#{g.line_number} {mnemonic_of(g.isa)}".rstrip()
    return head + (" ← " + ", ".join(_producer_text(p) for p in g.producers) if g.producers else "")


def _producer_text(p: GapProducer) -> str:
    mnemonic = mnemonic_of(p.isa) or "nothing outstanding"
    return f"{mnemonic} #{p.line_number}" if p.line_number is not None else mnemonic
