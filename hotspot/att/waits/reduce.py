"""Reductions of the blame bookkeeping into the typed results: per wait, per blamed line, the lgkm
breakdown and how the attribution was obtained."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import field
from fractions import Fraction

from hotspot.arch.classify import Category, classify
from hotspot.att.waits.accumulate import BlameAccumulator
from hotspot.att.waits.waitcnt_rules import (
    BREAKDOWN_CLASSES,
    LGKM_CLASSES,
    LGKM_WAIT_CATEGORIES,
    NO_PRODUCER,
)
from hotspot.capture import NO_SOURCE, CodeRow, SourceRef
from hotspot.record import record

# ---------------------------------------------------------------------------------------------
# reduce: typed results


@record
class Producer:
    line_number: int | None  # None: the "no producer" bucket (nothing outstanding)
    isa: str
    category: str  # stall taxonomy category of the producer ("none" for the bucket)
    source: SourceRef
    blamed_stall: float  # cycles of the wait's stall split onto this producer
    share: float  # of this waitcnt's stall, 0..1
    instances: int  # (wait instance, producer instance) pairs
    median_distance_cycles: float | None  # wait record time - (producer time + stall)
    median_distance_instructions: float | None  # executed instructions strictly between them


@record
class WaitBlame:
    line_number: int
    isa: str
    category: Category
    source: SourceRef
    stall: int  # Σ stall of this s_waitcnt over the waves read
    hits: int
    share: float  # of the total stall over the waves read
    producers: list[Producer]


@record
class BlamedLine:
    label: str  # "file:line", or "#<line_number> <isa>" when the producer has no source
    file: str
    line: int | None
    blamed_stall: float
    share: float  # of all s_waitcnt stall over the waves read
    categories: dict[str, float]  # producer category -> blamed stall
    instructions: list[int]  # producer line numbers (code.json ordinals)
    median_distance_cycles: float | None
    median_distance_instructions: float | None


@record
class LgkmClass:
    producer_class: str  # one of LGKM_CLASSES
    stall: float  # blamed stall, cycles
    share: float  # of the breakdown's `stall` (all wait-lgkmcnt/wait-mixed stall), 0..1


@record
class LgkmBreakdown:
    stall: int  # Σ stall of wait-lgkmcnt and wait-mixed instructions over the waves read
    lgkm_stall: float  # blamed on lgkm producers: Σ classes
    classes: list[LgkmClass]  # lds, smem, cross-lane, message, flat (value desc)
    vmem_stall: float  # blamed on the vm producers of wait-mixed instructions
    no_producer_stall: float  # wait instances with nothing outstanding
    cross_lane_share: float  # of lgkm_stall
    smem_share: float  # of lgkm_stall


def hist_median(hist: dict[int, int]) -> float | None:
    """Median of a value -> count histogram (mean of the two middle values for even totals)."""
    n = sum(hist.values())
    if n == 0:
        return None
    lo_rank, hi_rank = (n - 1) // 2, n // 2
    lo = hi = None
    seen = 0
    for value in sorted(hist):
        seen += hist[value]
        if lo is None and seen > lo_rank:
            lo = value
        if seen > hi_rank:
            hi = value
            break
    assert lo is not None and hi is not None
    return (lo + hi) / 2


def _merge_hists(hists: Iterable[dict[int, int]]) -> dict[int, int]:
    out: dict[int, int] = {}
    for h in hists:
        for v, c in h.items():
            out[v] = out.get(v, 0) + c
    return out


def exact_blame(acc: BlameAccumulator) -> dict[tuple[int, int], Fraction]:
    """(wait line, producer line) -> exact blamed stall."""
    out: dict[tuple[int, int], Fraction] = {}
    for (wline, pline, k), stall in acc.blame.items():
        key = (wline, pline)
        out[key] = out.get(key, Fraction(0)) + Fraction(stall, k)
    return out


def _ratio(a: float | Fraction, b: float | Fraction) -> float:
    return float(Fraction(a) / Fraction(b)) if b else 0.0


def _label(row: CodeRow | None) -> SourceRef:
    return row.source.label if row is not None and row.source is not None else NO_SOURCE


def wait_blames(acc: BlameAccumulator, rows_by_line: dict[int, CodeRow], total_stall: int
                ) -> list[WaitBlame]:
    exact = exact_blame(acc)
    by_wait: dict[int, list[tuple[int, Fraction]]] = {}
    for (wline, pline), value in exact.items():
        by_wait.setdefault(wline, []).append((pline, value))
    out: list[WaitBlame] = []
    for wline, stall in acc.wait_stall.items():
        wrow = rows_by_line.get(wline)
        producers = []
        for pline, value in by_wait.get(wline, []):
            if pline == NO_PRODUCER:
                producers.append(Producer(None, "(nothing outstanding)", "none", NO_SOURCE, float(value),
                                          _ratio(value, stall), 0, None, None))
                continue
            prow = rows_by_line.get(pline)
            key = (wline, pline)
            hc = acc.dist_cycles.get(key, {})
            producers.append(Producer(
                pline, prow.isa if prow else "", classify(prow.isa).category if prow else "other",
                _label(prow), float(value), _ratio(value, stall), sum(hc.values()),
                hist_median(hc), hist_median(acc.dist_instructions.get(key, {}))))
        producers.sort(key=lambda p: (-p.blamed_stall, p.line_number is None, p.line_number or 0))
        out.append(WaitBlame(wline, wrow.isa if wrow else "",
                             classify(wrow.isa).category if wrow else Category.OTHER, _label(wrow), stall,
                             acc.wait_hits.get(wline, 0), _ratio(stall, total_stall), producers))
    out.sort(key=lambda w: (-w.stall, w.line_number))
    return out


@record(frozen=False)
class _LineBlame:
    """The blame gathered on one producer source line: exact shares by category, its rows, and
    the (wait, producer) pairs whose distance histograms it merges."""

    file: str
    line: int | None
    blamed: Fraction = Fraction(0)
    cats: dict[str, Fraction] = field(default_factory=dict)
    instructions: set[int] = field(default_factory=set)
    keys: list[tuple[int, int]] = field(default_factory=list)


def blamed_lines(acc: BlameAccumulator, rows_by_line: dict[int, CodeRow]) -> list[BlamedLine]:
    """Producer source lines (instructions when no source) ranked by the waiting they cost."""
    exact = exact_blame(acc)
    waits_total = sum(acc.wait_stall.values())
    groups: dict[str, _LineBlame] = {}
    for (wline, pline), value in exact.items():
        if pline == NO_PRODUCER:
            continue
        prow = rows_by_line.get(pline)
        label: str
        if prow is not None and prow.source is not None:
            label, file, line = prow.source.label, prow.source.file, prow.source.line
        else:
            label, file, line = f"#{pline} {prow.isa if prow else ''}".rstrip(), "", None
        g = groups.setdefault(label, _LineBlame(file, line))
        g.blamed += value
        cat = classify(prow.isa).category if prow else "other"
        g.cats[cat] = g.cats.get(cat, Fraction(0)) + value
        g.instructions.add(pline)
        g.keys.append((wline, pline))
    out = []
    for label, g in groups.items():
        hc = _merge_hists(acc.dist_cycles.get(k, {}) for k in g.keys)
        hi = _merge_hists(acc.dist_instructions.get(k, {}) for k in g.keys)
        cats = {c: float(v) for c, v in sorted(g.cats.items(), key=lambda kv: (-kv[1], kv[0]))}
        out.append(BlamedLine(label, g.file, g.line, float(g.blamed),
                              _ratio(g.blamed, waits_total), cats, sorted(g.instructions),
                              hist_median(hc), hist_median(hi)))
    out.sort(key=lambda b: (-b.blamed_stall, b.label))
    return out


def producer_class(isa: str) -> str:
    """lgkm breakdown class of a producer; vm-only producers (of mixed waits) are `vmem`."""
    cat = classify(isa).category
    return cat if cat in LGKM_CLASSES else "vmem"


def lgkm_breakdown(acc: BlameAccumulator, rows_by_line: dict[int, CodeRow]) -> LgkmBreakdown | None:
    exact = exact_blame(acc)
    lgkm_waits = {line for line in acc.wait_stall
                  if line in rows_by_line and classify(rows_by_line[line].isa).category
                  in LGKM_WAIT_CATEGORIES}
    if not lgkm_waits:
        return None
    stall = sum(acc.wait_stall[line] for line in lgkm_waits)
    by_class: dict[str, Fraction] = {c: Fraction(0) for c in BREAKDOWN_CLASSES}
    for (wline, pline), value in exact.items():
        if wline not in lgkm_waits:
            continue
        if pline == NO_PRODUCER:
            by_class["none"] += value
            continue
        prow = rows_by_line.get(pline)
        cls = producer_class(prow.isa) if prow else "vmem"
        by_class[cls] += value
    lgkm_stall = sum(by_class[c] for c in LGKM_CLASSES)
    classes = [LgkmClass(c, float(by_class[c]), _ratio(by_class[c], stall)) for c in LGKM_CLASSES]
    classes.sort(key=lambda c: (-c.stall, LGKM_CLASSES.index(c.producer_class)))
    return LgkmBreakdown(stall, float(lgkm_stall), classes, float(by_class["vmem"]),
                         float(by_class["none"]), _ratio(by_class[Category.CROSS_LANE], lgkm_stall),
                         _ratio(by_class[Category.SMEM], lgkm_stall))


@record
class Attribution:
    """How the wait blame was obtained, over which waves."""

    waves_read: int
    waves_total: int
    sampled: bool  # --max-waves read a subset
    waves_with_edges: int  # blame from the decoder's waitcnt edges
    waves_reconstructed: int  # no edges: blame from the static counter reconstruction
    edge_entries: int
    edge_entries_reconstructed: int  # edge entries the reconstruction reproduced exactly
    reconstruction_agreement: float | None  # edge_entries_reconstructed / edge_entries
    out_of_order_waits: int  # lgkmcnt(N>0) waits while an SMEM was outstanding (best-guess producers)
    waits_stall: int  # Σ stall of every s_waitcnt over the waves read
    no_producer_stall: float  # part of it with nothing outstanding


def attribution(acc: BlameAccumulator, waves_read: int, waves_total: int) -> Attribution:
    no_prod = sum(Fraction(v, k) for (w, p, k), v in acc.blame.items() if p == NO_PRODUCER)
    return Attribution(
        waves_read, waves_total, waves_read < waves_total, acc.waves_edges, acc.waves_static,
        acc.edge_entries, acc.edge_entries_reconstructed,
        acc.edge_entries_reconstructed / acc.edge_entries if acc.edge_entries else None,
        acc.out_of_order_waits, sum(acc.wait_stall.values()), float(no_prod))
