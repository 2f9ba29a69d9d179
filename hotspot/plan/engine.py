"""Run the rule table over a dispatch's analysis: estimate, Amdahl guard, priority, order."""

from __future__ import annotations

from dataclasses import field, replace

from hotspot.arch.classify import Category
from hotspot.att.model import AnalysisMode, DispatchAnalysis
from hotspot.plan.context import PlanContext
from hotspot.plan.conventions import AT_ROOF, PCT, ROUND_DIGITS, VERDICT_CATEGORIES, VERDICT_ITEMS
from hotspot.plan.model import (
    HIDES_LATENCY,
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
from hotspot.plan.ceiling_rules import bound_scope
from hotspot.plan.coverage import ClassCoverage, Coverage, coverage_of
from hotspot.plan.roofline import mfma_busy_fraction
from hotspot.plan.rules import RULES
from hotspot.att.issue_share import TraceCeilings, UnitBusy
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
    explained_share: float | None = None        # of all stall, at the rows the items name (coverage)
    explained_by_class: list[ClassCoverage] = field(default_factory=list)
    unexplained: str | None = None              # the top class is less than half explained: where it sits


def verdict_of(summary: StallSummary, items: list[PlanItem], trust: Trust,
               coverage: Coverage | None = None) -> Verdict:
    items = [i for i in items if i.kind != Kind.CAPTURE]  # capture items are the trust line
    top = [VerdictItem(i.rank if i.rank is not None else n, i.id, i.priority, i.title, i.estimate.low_pct,
                       i.estimate.high_pct, i.location.file, i.location.line, i.location.line_number)
           for n, i in enumerate(items[:VERDICT_ITEMS], 1)]
    return Verdict(trust, summary.stall_pct_of_cycles, summary.top_categories[:VERDICT_CATEGORIES], top,
                   max(0, len(items) - VERDICT_ITEMS),
                   coverage.share if coverage is not None else None,
                   list(coverage.by_class) if coverage is not None else [],
                   coverage.gap.message if coverage is not None and coverage.gap is not None else None)


@record
class PlanOutcome:
    summary: StallSummary
    items: list[PlanItem]
    skipped: list[Skipped]
    trust: Trust = Trust(OK, [])
    coverage: Coverage | None = None
    ceilings: TraceCeilings | None = None


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


# A reason that changes nothing: what the plan could not read, not what the capture is worth.
NOTE_PREFIX = "note: "


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
    notes = []
    if occ is not None and occ.available and occ.unknown_limits:
        # a side file missing, not a capture that misleads: the occupancy items are off (plan_skipped
        # says so), every other estimate stands
        missing = " and ".join(str(n) for n in occ.unknown_limits)
        notes.append(f"{NOTE_PREFIX}occupancy: the {missing} limit is unknown (no kernel trace or rocpd row "
                     "for this kernel near the capture; name one with --meta): occupancy items are off")
    max_waves = ctx.analysis.asked_max_waves
    if max_waves:
        reasons.append(f"--max-waves {max_waves}: wave-derived results cover a sample")
    return Trust(LIMITED if reasons else OK, reasons + notes)


# The roofs (hotspot/plan/roofline.py): a fix that does not remove bytes can win at most the time
# below the bandwidth roof; one that does not remove matrix-core work at most the time below the
# compute roof. A bandwidth share above 1 proves the bytes counted are not DRAM bytes (caches serve
# them): it bounds nothing.
MAX_ROOF_FRACTION = 1.0
# The items that state a roof: their own estimate is the headroom, never capped by it.
ROOF_VERDICTS = ("bandwidth-bound", "streaming-saturated")
# An item absorbed by a verdict is also absorbed by these, which state the same cause (a load that
# cannot move at the hardware wave limit is the streaming verdict), whether they claim a gain or not.
ALSO_STATED_BY = {"bandwidth-bound": ("streaming-saturated",)}


def bandwidth_fraction(items: list[PlanItem]) -> float | None:
    """The share of peak bandwidth the `bandwidth-bound` item measured (None when it did not fire)."""
    bound = next((i for i in items if i.id == "bandwidth-bound"), None)
    value = next((e.value for e in bound.evidence if e.metric == "fraction_of_peak"), None) if bound else None
    return float(value) if isinstance(value, (int, float)) else None


def streaming_fraction(items: list[PlanItem]) -> float | None:
    """The share of peak bandwidth `streaming-saturated` measured from the trace (None when it did
    not fire or could not measure it)."""
    from hotspot.plan.saturation_rules import TRACE_FRACTION_METRIC

    verdict = next((i for i in items if i.id == "streaming-saturated"), None)
    value = next((e.value for e in verdict.evidence if e.metric == TRACE_FRACTION_METRIC), None) if verdict else None
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _roof_caps(ctx: PlanContext, items: list[PlanItem]) -> dict[str, tuple[float, str]]:
    """{gain kind exempt from the cap: (cap in percent, why)} for the roofs this launch gives."""
    caps: dict[str, tuple[float, str]] = {}
    fraction = bandwidth_fraction(items)
    if fraction is not None and 0 <= fraction <= MAX_ROOF_FRACTION:
        caps[REMOVES_BYTES] = (round((1.0 - fraction) * PCT, ROUND_DIGITS),
                               f"the kernel already requests {fraction:.0%} of peak bandwidth")
    streaming = streaming_fraction(items)  # at the hardware wave limit: the bytes the trace moves
    if (streaming is not None and 0 <= streaming <= MAX_ROOF_FRACTION
            and (fraction is None or not 0 <= fraction <= MAX_ROOF_FRACTION or streaming > fraction)):
        caps[REMOVES_BYTES] = (round((1.0 - streaming) * PCT, ROUND_DIGITS),
                               f"the streaming bound: at the hardware wave limit the resident waves move "
                               f"{streaming:.0%} of peak bandwidth by the trace; more waves are not possible")
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
        if (rule is not None and it.kind != Kind.CAPTURE and it.id not in ROOF_VERDICTS
                and est.high_pct is not None):
            for exempt, (cap, why) in caps.items():
                if rule.gain != exempt and est.high_pct > cap:
                    est = replace(est, high_pct=cap, low_pct=min(est.low_pct or 0.0, cap),
                                  basis=est.basis + f"; capped at {cap:g}%: {why}")
            if est is not it.estimate:
                it = replace(it, estimate=est, priority=priority_of(est.high_pct or 0.0))
        out.append(it)
    return out


# A kernel at the bandwidth roof: >= 80% of the product's peak with nothing re-read (unique bytes =
# requested bytes, within 1%: the ISA byte count rounds per row). Only fewer bytes help; that is a
# verdict (LOW), not a HIGH "fewer bytes" item, and no code item beside it is HIGH.
AT_ROOF_BANDWIDTH_FRACTION = 0.80
NOTHING_REREAD_RATIO = 0.99
# Items that state the roof a kernel or loop sits at (evidence AT_ROOF): LOW whatever the
# headroom, ranked first.
VERDICT_PRIORITY = "LOW"
ROOF_KERNEL_MAX_PRIORITY = "MED"


def _evidence(item: PlanItem, metric: str) -> object:
    return next((e.value for e in item.evidence if e.metric == metric), None)


def at_bandwidth_roof(item: PlanItem) -> bool:
    """The `bandwidth-bound` item of a kernel at the roof (see AT_ROOF_BANDWIDTH_FRACTION)."""
    if item.id != "bandwidth-bound":
        return False
    fraction, unique, requested = (_evidence(item, m) for m in
                                   ("fraction_of_peak", "unique_bytes", "requested_bytes"))
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (fraction, unique, requested)):
        return False
    assert isinstance(fraction, (int, float)) and isinstance(unique, (int, float)) \
        and isinstance(requested, (int, float))
    return AT_ROOF_BANDWIDTH_FRACTION <= fraction <= MAX_ROOF_FRACTION and requested > 0 \
        and unique >= NOTHING_REREAD_RATIO * requested


def is_verdict(item: PlanItem) -> bool:
    return any(e.metric == AT_ROOF for e in item.evidence)


def trace_scope(ceilings: TraceCeilings, row: int | None) -> UnitBusy:
    """The innermost traced loop holding the row, else the kernel."""
    loops = [u for u in ceilings.loops if row is not None and u.first_row is not None
             and u.last_row is not None and u.first_row <= row <= u.last_row]
    return min(loops, key=lambda u: ((u.last_row or 0) - (u.first_row or 0), u.first_row or 0)) \
        if loops else ceilings.kernel


def trace_ceiling_pct(scope: UnitBusy) -> float:
    """What any fix that keeps the bounding unit's work can win on this scope, in percent of the
    waves' time: the scope's share of it × the idle share of its busiest unit."""
    return round(PCT * scope.time_share * (1.0 - scope.busy), ROUND_DIGITS)


def _apply_ceilings(ctx: PlanContext, items: list[PlanItem], rules: dict[str, Rule],
                    skipped: list[Skipped]) -> list[PlanItem]:
    """The trace's unit ceilings (hotspot/att/issue_share.py) on every estimate, the matrix-core and
    bandwidth verdicts (LOW, first), the latency items of a matrix-core-bound loop dropped, and no
    HIGH code item beside a kernel at the roof."""
    tc = ctx.ceilings
    bound = bound_scope(ctx) if any(i.id == "matrix-core-bound" for i in items) else None
    roof_kernel = any(at_bandwidth_roof(i) for i in items) or (bound is not None and bound.first_row is None)
    out = []
    for it in items:
        rule = rules.get(it.id)
        if it.id == "matrix-core-bound" or at_bandwidth_roof(it):
            out.append(replace(it, priority=VERDICT_PRIORITY, evidence=[*it.evidence, Evidence(AT_ROOF, True)]))
            continue
        if it.kind in (Kind.CAPTURE, Kind.LAUNCH) or rule is None or it.id == "bandwidth-bound":
            out.append(it)
            continue
        row = it.location.line_number
        if bound is not None and rule.gain == HIDES_LATENCY and (
                bound.first_row is None or (row is not None and bound.first_row <= row <= (bound.last_row or row))):
            where = f" at #{row}" if row is not None else ""
            skipped.append(Skipped(it.id, SkipStatus.NOT_TRIGGERED,
                                   f"{it.title}{where}: {bound.scope} is at {bound.mfma_busy:.0%} of the "
                                   f"matrix core: reported as matrix-core-bound", it.estimate.target_stall_pct))
            continue
        est = it.estimate
        if tc is not None and rule.gain != REMOVES_COMPUTE and est.high_pct is not None:
            scope = trace_scope(tc, row)
            cap = trace_ceiling_pct(scope)
            if est.high_pct > cap:
                est = replace(est, high_pct=cap, low_pct=min(est.low_pct or 0.0, cap),
                              basis=est.basis + f"; capped at {cap:g}%, the trace ceiling of {scope.scope}: "
                                                f"its {scope.bound_by} is {scope.busy:.0%} busy over "
                                                f"{scope.time_share:.0%} of the waves' time")
                it = replace(it, estimate=est, priority=priority_of(cap),
                             evidence=[*it.evidence, Evidence("trace_ceiling_pct", cap)])
        if roof_kernel and it.priority == "HIGH":
            it = replace(it, priority=ROOF_KERNEL_MAX_PRIORITY)
        out.append(it)
    return out


def _apply_trust(trust: Trust, items: list[PlanItem]) -> list[PlanItem]:
    """Unrepresentative: code items lose their estimates (capture items come first); limited:
    code items are at most MED."""
    out = []
    for it in items:
        if it.kind == Kind.LAUNCH and trust.level == UNREPRESENTATIVE and it.priority == "HIGH":
            # the launch's numbers stand, but a capture that does not represent the kernel (a
            # runtime fill, an idle slice) carries no HIGH item: re-capture first
            out.append(replace(it, priority="MED"))
        elif it.kind in (Kind.CAPTURE, Kind.LAUNCH):  # about the capture or the launch, not the traced waves
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
    items = _apply_ceilings(ctx, items, {r.id: r for r in rules}, skipped)
    items = _verdicts_first(sorted(items, key=_order))
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
    final = capture + [replace(it, rank=n) for n, it in enumerate(_apply_trust(trust, items), 1)]
    return PlanOutcome(summary, final, skipped, trust,
                       coverage_of(final, ctx.analysis.instructions, ctx.analysis.waits,
                                   bound_scope(ctx)), ctx.ceilings)


def _absorb(items: list[PlanItem], absorbed: list[tuple[PlanItem, str]],
            skipped: list[Skipped]) -> list[PlanItem]:
    """Drop the items whose cause another item in the plan states (and claims a gain for): a load
    that cannot move, near the bandwidth roof, is the roof."""
    claims = {i.id for i in items if (i.estimate.high_pct or 0.0) > 0}
    present = {i.id for i in items}
    gone = []
    for it, by in absorbed:
        if by in claims:
            gone.append((it, by))
            continue
        other = next((v for v in ALSO_STATED_BY.get(by, ()) if v in present and v != it.id), None)
        if other is not None:
            gone.append((it, other))
    for it, by in gone:
        where = f" at #{it.location.line_number}" if it.location.line_number is not None else ""
        skipped.append(Skipped(it.id, SkipStatus.NOT_TRIGGERED,
                               f"{it.title}{where}: the load cannot move and the kernel is near the "
                               f"roof: reported as {by}", it.estimate.target_stall_pct))
    drop = {id(it) for it, _ in gone}
    return [i for i in items if id(i) not in drop]


def _verdicts_first(ordered: list[PlanItem]) -> list[PlanItem]:
    """The roof verdicts (matrix core, bandwidth) before every code and memory item: they say what
    bounds the waves, which the latency items cannot change. Launch items ranked above the first
    code item keep their place: an idle GPU is bigger than any roof of the busy part."""
    verdicts = [i for i in ordered if is_verdict(i)]
    if not verdicts:
        return ordered
    out: list[PlanItem] = []
    for it in ordered:
        if is_verdict(it):
            continue
        if verdicts and it.kind not in (Kind.CAPTURE, Kind.LAUNCH):
            out += verdicts
            verdicts = []
        out.append(it)
    return out + verdicts


def _order(item: PlanItem) -> tuple[bool, int, float, float, bool, str, int]:
    """Capture items (trust) first, by severity; then every other item by its bounded estimate (the
    middle of the range, then the high end): a launch item ranks by the idle share it can win like
    any other item by its gain."""
    loc = item.location.line_number if item.location.line_number is not None else -1
    severity = PRIORITIES.index(item.priority) if item.priority in PRIORITIES else len(PRIORITIES)
    return (item.kind != Kind.CAPTURE, severity if item.kind == Kind.CAPTURE else 0,
            -expected_pct(item.estimate), -(item.estimate.high_pct or 0.0),
            item.id not in ROOF_VERDICTS,  # at an equal bound the roof is the statement
            item.id, loc)


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
