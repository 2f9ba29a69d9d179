"""Run the rule table over a dispatch's analysis: estimate, Amdahl guard, priority, order."""

from __future__ import annotations

from dataclasses import replace

from hotspot.arch.classify import Category
from hotspot.att.model import AnalysisMode, DispatchAnalysis
from hotspot.plan.context import PlanContext
from hotspot.plan.model import (
    LIMITED,
    OK,
    PRIORITIES,
    REMOVES_BYTES,
    REMOVES_COMPUTE,
    UNREPRESENTATIVE,
    Candidate,
    Estimate,
    Evidence,
    Kind,
    PlanItem,
    Rule,
    Site,
    SkipStatus,
    Skipped,
    Trust,
)
from hotspot.plan.roofline import mfma_busy_fraction
from hotspot.plan.rules import RULES
from hotspot.pmc.analysis import KernelReport
from hotspot.record import record

# Amdahl guard: an item whose target is under 1% of all stall cannot move the kernel measurably.
AMDAHL_MIN_STALL_SHARE = 0.01
# Items shown, best estimate first; the rest are listed as capped with their share. One list for all
# rules, so a capped item never outranks a shown one.
MAX_PLAN_ITEMS = 8
# Priority from the high end of the estimate (percent of the traced waves' cycles).
HIGH_PRIORITY_MIN_PCT = 10.0
MED_PRIORITY_MIN_PCT = 3.0
PCT = 100.0
ROUND_DIGITS = 2


@record
class CategoryShare:
    category: Category
    stall: int
    share: float  # of total stall, 0..1 (4 digits)


@record
class StallSummary:
    total_cycles: int            # Σ latency over the traced waves' instructions
    total_stall: int
    stall_pct_of_cycles: float
    top_categories: list[CategoryShare]  # by stall desc


@record
class VerdictItem:
    rank: int
    id: str
    priority: str
    title: str
    low_pct: float | None
    high_pct: float | None
    file: str | None
    line: int | None
    line_number: int | None


@record
class Verdict:
    """What `--brief` prints and `data.verdict` carries: the plan in ten seconds."""

    trust: Trust
    stall_pct_of_cycles: float
    top_categories: list[CategoryShare]
    top_items: list[VerdictItem]
    more_items: int


VERDICT_ITEMS = 3
VERDICT_CATEGORIES = 3


def verdict_of(summary: StallSummary, items: list[PlanItem], trust: Trust) -> Verdict:
    items = [i for i in items if i.kind != Kind.CAPTURE]  # capture items are the trust line
    top = [VerdictItem(n, i.id, i.priority, i.title, i.estimate.low_pct, i.estimate.high_pct,
                       i.location.file, i.location.line, i.location.line_number)
           for n, i in enumerate(items[:VERDICT_ITEMS], 1)]
    return Verdict(trust, summary.stall_pct_of_cycles, summary.top_categories[:VERDICT_CATEGORIES], top,
                   max(0, len(items) - VERDICT_ITEMS))


@record
class PlanOutcome:
    summary: StallSummary
    items: list[PlanItem]
    skipped: list[Skipped]
    trust: Trust = Trust(OK, [])


# Findings that decide trust when the analysis has no `representativeness` section (a saved result
# of an older hotspot): a capture that saw a sliver of the kernel cannot rank anything.
UNREPRESENTATIVE_FINDINGS = ("idle-slice",)
LIMITING_FINDINGS = ("wave-mismatch",)
# Capture items take the priority of the finding they come from (same word in findings and plan).
SEVERITY_PRIORITY = {"high": "HIGH", "medium": "MED", "low": "LOW"}
CAPTURE_WITHHELD = "a capture item: it says what the plan can claim, it does not speed the kernel up"


def _capture_reasons(ctx: PlanContext) -> tuple[list[str], list[str]]:
    """(unrepresentative, limiting) reasons about the capture: the analysis's representativeness
    model (hotspot/att/representativeness.py), each with what to re-capture; notes (source
    collapse, corrected early exits) never change trust."""
    rep = ctx.analysis.representativeness
    if rep is not None:
        unrep, limiting = [], []
        for r in rep.reasons:
            text = f"{r.id}: {r.message}" + (f" — {r.recapture}" if r.recapture else "")
            if r.level == UNREPRESENTATIVE:
                unrep.append(text)
            elif r.level == LIMITED:
                limiting.append(text)
        return unrep, limiting
    findings = ctx.analysis.findings
    return ([f"{f.id}: {f.message}" for f in findings if f.id in UNREPRESENTATIVE_FINDINGS],
            [f"{f.id}: {f.message}" for f in findings if f.id in LIMITING_FINDINGS])


def trust_of(ctx: PlanContext) -> Trust:
    """The capture's trust level and the reasons: the representativeness model, then what the
    analysis lacks (arch, occupancy inputs, a --max-waves sample)."""
    unrep, reasons = _capture_reasons(ctx)
    if unrep:
        return Trust(UNREPRESENTATIVE, unrep + reasons)
    arch = ctx.analysis.arch
    if not arch.known:
        reasons.append(f"arch {arch.gfx} not known to hotspot's tables: arch-specific rules "
                       "(MFMA shapes, occupancy) are off; pass --arch")
    occ = ctx.occupancy()
    if occ is not None and not occ.available:
        reasons.append(f"occupancy unknown: {occ.reason}")
    elif occ is not None and occ.unknown_limits:
        missing = " and ".join(str(n) for n in occ.unknown_limits)
        reasons.append(f"occupancy: the {missing} limit is unknown (no kernel trace or rocpd row for "
                       "this kernel near the capture; name one with --meta): occupancy items are off")
    max_waves = ctx.analysis.asked_max_waves
    if max_waves:
        reasons.append(f"--max-waves {max_waves}: wave-derived results cover a sample")
    return Trust(LIMITED if reasons else OK, reasons)


# The roofs (hotspot/plan/roofline.py): a fix that does not remove bytes can win at most the time
# below the bandwidth roof; one that does not remove matrix-core work at most the time below the
# compute roof. A bandwidth share above 1 proves the bytes counted are not DRAM bytes (caches serve
# them): it bounds nothing.
MAX_ROOF_FRACTION = 1.0


def bandwidth_fraction(items: list[PlanItem]) -> float | None:
    """The share of peak bandwidth the `bandwidth-bound` item measured (None when it did not fire)."""
    bound = next((i for i in items if i.id == "bandwidth-bound"), None)
    value = next((e.value for e in bound.evidence if e.metric == "fraction_of_peak"), None) if bound else None
    return float(value) if isinstance(value, (int, float)) else None


def _roof_caps(ctx: PlanContext, items: list[PlanItem]) -> dict[str, tuple[float, str]]:
    """{gain kind exempt from the cap: (cap in percent, why)} for the roofs this launch gives."""
    caps: dict[str, tuple[float, str]] = {}
    fraction = bandwidth_fraction(items)
    if fraction is not None and 0 <= fraction <= MAX_ROOF_FRACTION:
        caps[REMOVES_BYTES] = (round((1.0 - fraction) * PCT, ROUND_DIGITS),
                               f"the kernel already requests {fraction:.0%} of peak bandwidth")
    busy = mfma_busy_fraction(ctx)
    if busy is not None and 0 <= busy <= MAX_ROOF_FRACTION:
        caps[REMOVES_COMPUTE] = (round((1.0 - busy) * PCT, ROUND_DIGITS),
                                 f"the grid's MFMAs keep the matrix cores busy {busy:.0%} of the kernel's time")
    return caps


def _cap_at_roofs(ctx: PlanContext, items: list[PlanItem],
                  rules: dict[str, Rule]) -> list[PlanItem]:
    caps = _roof_caps(ctx, items)
    if not caps:
        return items
    out = []
    for it in items:
        rule = rules.get(it.id)
        est = it.estimate
        if rule is not None and it.kind != Kind.CAPTURE and it.id != "bandwidth-bound" and est.high_pct is not None:
            for exempt, (cap, why) in caps.items():
                if rule.gain != exempt and est.high_pct > cap:
                    est = replace(est, high_pct=cap, low_pct=min(est.low_pct or 0.0, cap),
                                  basis=est.basis + f"; capped at {cap:g}%: {why}")
            if est is not it.estimate:
                it = replace(it, estimate=est, priority=priority_of(est.high_pct or 0.0))
        out.append(it)
    return out


def _apply_trust(trust: Trust, items: list[PlanItem]) -> list[PlanItem]:
    """Unrepresentative: code items lose their estimates (capture items come first); limited:
    code items are at most MED."""
    out = []
    for it in items:
        if it.kind in (Kind.CAPTURE, Kind.LAUNCH):  # about the capture or the launch, not the traced waves
            out.append(it)
        elif trust.level == UNREPRESENTATIVE:
            why = ("the capture does not represent the kernel (" + ", ".join(r.split(":", 1)[0] for r in trust.reasons)
                   + ": see the trust reasons); re-capture, then re-plan")
            out.append(replace(it, priority="LOW", estimate=replace(it.estimate, low_pct=None,
                                                                  high_pct=None, withheld=why)))
        elif trust.level == LIMITED and it.priority == "HIGH":
            out.append(replace(it, priority="MED"))
        else:
            out.append(it)
    if trust.level == UNREPRESENTATIVE:
        out.sort(key=lambda i: (i.kind != Kind.LAUNCH,))  # stable: launch items keep their estimates
    return out

def priority_of(high_pct: float) -> str:
    if high_pct >= HIGH_PRIORITY_MIN_PCT:
        return "HIGH"
    if high_pct >= MED_PRIORITY_MIN_PCT:
        return "MED"
    return "LOW"


def _missing(ctx: PlanContext, rule: Rule) -> list[str]:
    return [name for name in rule.reads if not ctx.has(name)]


def _estimate(ctx: PlanContext, rule: Rule, c: Candidate) -> Estimate:
    low_f, high_f = c.removable if c.removable is not None else rule.removable
    # a fix removes at most all of its target: the share of the waves' time the target sits on
    high_f = min(1.0, max(0.0, high_f))
    low_f = min(high_f, max(0.0, low_f))
    cycles = ctx.total_cycles
    target_pct_cycles = PCT * c.target_cycles / cycles if cycles else 0.0
    stall_pct = PCT * c.target_cycles / ctx.total_stall if ctx.total_stall else 0.0
    low = round(min(PCT, low_f * target_pct_cycles), ROUND_DIGITS)
    high = round(min(PCT, high_f * target_pct_cycles), ROUND_DIGITS)
    if c.kernel_time:  # a share of the kernel's time: the basis says how it is bounded
        return Estimate(round(PCT * low_f, ROUND_DIGITS), round(PCT * high_f, ROUND_DIGITS),
                        c.basis or rule.basis, int(c.target_cycles), round(min(PCT, stall_pct), ROUND_DIGITS))
    basis = (f"targets {c.target_cycles:,} cycles = {stall_pct:.1f}% of stall, "
             f"{target_pct_cycles:.1f}% of the waves' cycles; ")
    if high_f > 0:
        basis += f"the fix removes {low_f:.0%}–{high_f:.0%} of it: "
    basis += c.basis or rule.basis
    return Estimate(low, high, basis, int(c.target_cycles), round(stall_pct, ROUND_DIGITS))


def _item(ctx: PlanContext, rule: Rule, c: Candidate) -> PlanItem:
    est = _estimate(ctx, rule, c)
    priority = priority_of(est.high_pct or 0.0)  # HIGH needs a bound of at least 10%
    if rule.kind == Kind.CAPTURE:
        # trust, not a speed-up: no estimate, and the priority only orders the trust block
        est = replace(est, low_pct=None, high_pct=None, withheld=CAPTURE_WITHHELD)
        priority = SEVERITY_PRIORITY.get(c.severity or "", "LOW")
    sites = c.sites or [Site(None, [c.location.line_number] if c.location.line_number is not None else [],
                             c.location.file, c.location.line, int(c.target_cycles))]
    title = c.title or rule.title
    if len(sites) > 1 and not title.endswith(")"):  # a title with its own count keeps it
        unit = "waits" if all(st.wait_row is not None for st in sites) else "sites"
        title += f" ({len(sites)} {unit})"
    return PlanItem(rule.id, priority, title, rule.kind, c.location,
                    list(c.evidence), c.root_cause, (c.fix or rule.fix) + c.fix_extra, est, sites)


def _family_total(ev: Evidence, total: int, members: list[Candidate]) -> Evidence:
    """Evidence of the largest member, with the blamed-stall figures summed over the family."""
    if ev.metric == "blamed_stall_cycles":
        return replace(ev, value=int(total))
    if ev.metric == "blamed_stall_pct" and isinstance(ev.value, (int, float)) and members[0].target_cycles:
        per_cycle = ev.value / max(1, max(c.target_cycles for c in members))
        return replace(ev, value=round(per_cycle * total, 2))
    return ev


def merge_families(cands: list[Candidate]) -> list[Candidate]:
    """One candidate per root cause: candidates of a rule that share a family are summed into the
    largest of them, which keeps its location and lists every site."""
    fams: dict[str, list[Candidate]] = {}
    out: list[Candidate] = []
    for c in cands:
        if c.family is None:
            out.append(c)
        else:
            fams.setdefault(c.family, []).append(c)
    for family, members in fams.items():
        if len(members) == 1:
            out.append(members[0])
            continue
        top = max(members, key=lambda c: (c.target_cycles, -(c.location.line_number or 0)))
        total = sum(c.target_cycles for c in members)
        sites: dict[int | None, Site] = {}
        for c in members:
            for s in c.sites:
                old = sites.get(s.wait_row)
                if old is None:
                    sites[s.wait_row] = s
                else:  # one wait reached through several producers: one site, all producers
                    sites[s.wait_row] = Site(s.wait_row, sorted(set(old.producer_rows) | set(s.producer_rows)),
                                             old.file if old.target_cycles >= s.target_cycles else s.file,
                                             old.line if old.target_cycles >= s.target_cycles else s.line,
                                             old.target_cycles + s.target_cycles)
        ordered = sorted(sites.values(), key=lambda s: (-s.target_cycles, s.wait_row or -1))
        out.append(replace(
            top, target_cycles=total, sites=ordered,
            evidence=[_family_total(ev, total, members) for ev in top.evidence] + [Evidence("family", family),
                                           Evidence("sites", len(ordered)),
                                           Evidence("family_stall_cycles", int(total))],
            root_cause=top.root_cause + f"; the same pattern repeats at {len(ordered)} waits of "
                       f"{family}, which one change fixes together"))
    return out


def run_plan(analysis: DispatchAnalysis, pmc: KernelReport | None = None,
             rules: tuple[Rule, ...] = RULES) -> PlanOutcome:
    """The plan for one dispatch's analysis (and the counter report of its kernel, with --pmc)."""
    ctx = PlanContext(analysis, pmc)
    summary = _summary(ctx)
    items: list[PlanItem] = []
    skipped: list[Skipped] = []
    absorbed: list[tuple[PlanItem, str]] = []  # items another rule's item states better when it fires
    if analysis.mode != AnalysisMode.CYCLES:
        for rule in rules:
            skipped.append(Skipped(rule.id, SkipStatus.MISSING_INPUT,
                                   f"{analysis.mode} capture: no per-instruction stall cycles"))
        return PlanOutcome(summary, items, skipped, trust_of(ctx))
    if ctx.total_stall <= 0:
        for rule in rules:
            skipped.append(Skipped(rule.id, SkipStatus.NOT_TRIGGERED, "the traced waves show no stall"))
        return PlanOutcome(summary, items, skipped, trust_of(ctx))
    for rule in rules:
        missing = _missing(ctx, rule)
        if missing:
            skipped.append(Skipped(rule.id, SkipStatus.MISSING_INPUT,
                                   "needs " + ", ".join(f"data.{m}" if m != "pmc" else "--pmc counter files"
                                                        for m in missing) + " (not in this analysis)"))
            continue
        outcome = rule.evaluate(ctx, rule)
        if isinstance(outcome, str):
            skipped.append(Skipped(rule.id, SkipStatus.NOT_TRIGGERED, outcome))
            continue
        for c in merge_families(outcome):
            share = c.target_cycles / ctx.total_stall
            if share < AMDAHL_MIN_STALL_SHARE:
                where = f" at #{c.location.line_number}" if c.location.line_number is not None else ""
                skipped.append(Skipped(rule.id, SkipStatus.BELOW_GUARD,
                                       f"target{where} is {share:.2%} of stall "
                                       f"(< {AMDAHL_MIN_STALL_SHARE:.0%} Amdahl guard)",
                                       round(PCT * share, ROUND_DIGITS)))
                continue
            items.append(_item(ctx, rule, c))
            if c.absorbed_by:
                absorbed.append((items[-1], c.absorbed_by))
    items = _absorb(items, absorbed, skipped)
    items = _cap_at_roofs(ctx, items, {r.id: r for r in rules})
    items.sort(key=_order)
    capture = [i for i in items if i.kind == Kind.CAPTURE]  # trust: first, and no slot among the rest
    items = [i for i in items if i.kind != Kind.CAPTURE]
    if len(items) > MAX_PLAN_ITEMS:
        for i in items[MAX_PLAN_ITEMS:]:
            where = f" at #{i.location.line_number}" if i.location.line_number is not None else ""
            skipped.append(Skipped(i.id, SkipStatus.CAPPED,
                                   f"{i.title}{where}: estimate {i.estimate.low_pct:.1f}–"
                                   f"{i.estimate.high_pct:.1f}% ranks below the top {MAX_PLAN_ITEMS} items",
                                   i.estimate.target_stall_pct, i.estimate.high_pct, i.estimate.low_pct))
        items = items[:MAX_PLAN_ITEMS]
    trust = trust_of(ctx)
    return PlanOutcome(summary, capture + _apply_trust(trust, items), skipped, trust)


def _absorb(items: list[PlanItem], absorbed: list[tuple[PlanItem, str]],
            skipped: list[Skipped]) -> list[PlanItem]:
    """Drop the items whose cause another item in the plan states (and claims a gain for): a load
    that cannot move, near the bandwidth roof, is the roof."""
    claims = {i.id for i in items if (i.estimate.high_pct or 0.0) > 0}
    gone = [(it, by) for it, by in absorbed if by in claims]
    for it, by in gone:
        where = f" at #{it.location.line_number}" if it.location.line_number is not None else ""
        skipped.append(Skipped(it.id, SkipStatus.NOT_TRIGGERED,
                               f"{it.title}{where}: the load cannot move and the kernel is near the "
                               f"roof: reported as {by}", it.estimate.target_stall_pct))
    drop = {id(it) for it, _ in gone}
    return [i for i in items if id(i) not in drop]


def _order(item: PlanItem) -> tuple[bool, int, float, float, str, int]:
    """Capture items (trust) first, by severity; then every other item by its bounded estimate (the
    middle of the range, then the high end): a launch item ranks by the idle share it can win like
    any other item by its gain."""
    loc = item.location.line_number if item.location.line_number is not None else -1
    severity = PRIORITIES.index(item.priority) if item.priority in PRIORITIES else len(PRIORITIES)
    return (item.kind != Kind.CAPTURE, severity if item.kind == Kind.CAPTURE else 0,
            -expected_pct(item.estimate), -(item.estimate.high_pct or 0.0), item.id, loc)


def expected_pct(est: Estimate) -> float:
    """The middle of the bounded range: a surer gain ranks before a wider one with the same high end
    (0-25% may be nothing; 13-23% is something either way)."""
    return ((est.low_pct or 0.0) + (est.high_pct or 0.0)) / 2


def _summary(ctx: PlanContext) -> StallSummary:
    cats = sorted(((c.category, c.stall) for c in ctx.analysis.stall_by_category if c.stall > 0),
                  key=lambda x: (-x[1], str(x[0])))
    stall, cycles = ctx.total_stall, ctx.total_cycles
    return StallSummary(cycles, stall, round(PCT * stall / cycles, ROUND_DIGITS) if cycles else 0.0,
                        [CategoryShare(c, s, round(s / stall, 4) if stall else 0.0) for c, s in cats])
