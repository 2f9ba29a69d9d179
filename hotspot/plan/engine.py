"""Run the rule table over plain analysis data: estimate, Amdahl guard, priority, order."""

from __future__ import annotations

from dataclasses import dataclass

from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Estimate, PlanItem, Rule, Skipped
from hotspot.plan.rules import RULES
from hotspot.plan.waits_rules import MAX_ITEMS_PER_RULE
from hotspot.result import JsonObject

# Amdahl guard: an item whose target is under 1% of all stall cannot move the kernel measurably.
AMDAHL_MIN_STALL_SHARE = 0.01
# Priority from the high end of the estimate (percent of the traced waves' cycles).
HIGH_PRIORITY_MIN_PCT = 10.0
MED_PRIORITY_MIN_PCT = 3.0
PCT = 100.0
ROUND_DIGITS = 2


@dataclass(frozen=True)
class StallSummary:
    total_cycles: int            # Σ latency over the traced waves' instructions
    total_stall: int
    stall_pct_of_cycles: float
    top_categories: list[JsonObject]  # [{category, stall, share}] by stall desc


@dataclass(frozen=True)
class PlanOutcome:
    summary: StallSummary
    items: list[PlanItem]
    skipped: list[Skipped]


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
    cycles = ctx.total_cycles
    target_pct_cycles = PCT * c.target_cycles / cycles if cycles else 0.0
    stall_pct = PCT * c.target_cycles / ctx.total_stall if ctx.total_stall else 0.0
    low = round(min(PCT, low_f * target_pct_cycles), ROUND_DIGITS)
    high = round(min(PCT, high_f * target_pct_cycles), ROUND_DIGITS)
    basis = (f"targets {c.target_cycles:,} cycles = {stall_pct:.1f}% of stall, "
             f"{target_pct_cycles:.1f}% of the waves' cycles; ")
    if high_f > 0:
        basis += f"the fix removes {low_f:.0%}–{high_f:.0%} of it: "
    basis += c.basis or rule.basis
    return Estimate(low, high, basis, int(c.target_cycles), round(stall_pct, ROUND_DIGITS))


def _item(ctx: PlanContext, rule: Rule, c: Candidate) -> PlanItem:
    est = _estimate(ctx, rule, c)
    return PlanItem(rule.id, priority_of(est.high_pct), c.title or rule.title, rule.kind, c.location,
                    list(c.evidence), c.root_cause, rule.fix + c.fix_extra, est)


def run_plan(data: JsonObject, pmc: JsonObject | None = None,
             rules: tuple[Rule, ...] = RULES) -> PlanOutcome:
    """The plan for one dispatch's plain analysis data (`Result.plain_data()` of analyze)."""
    ctx = PlanContext(data, pmc)
    summary = _summary(ctx)
    items: list[PlanItem] = []
    skipped: list[Skipped] = []
    if data.get("mode", "cycles") != "cycles":
        for rule in rules:
            skipped.append(Skipped(rule.id, "missing-input",
                                   f"{data.get('mode')} capture: no per-instruction stall cycles"))
        return PlanOutcome(summary, items, skipped)
    if ctx.total_stall <= 0:
        for rule in rules:
            skipped.append(Skipped(rule.id, "not-triggered", "the traced waves show no stall"))
        return PlanOutcome(summary, items, skipped)
    for rule in rules:
        missing = _missing(ctx, rule)
        if missing:
            skipped.append(Skipped(rule.id, "missing-input",
                                   "needs " + ", ".join(f"data.{m}" if m != "pmc" else "--pmc counter files"
                                                        for m in missing) + " (not in this analysis)"))
            continue
        outcome = rule.evaluate(ctx, rule)
        if isinstance(outcome, str):
            skipped.append(Skipped(rule.id, "not-triggered", outcome))
            continue
        kept = []
        for c in outcome:
            share = c.target_cycles / ctx.total_stall
            if share < AMDAHL_MIN_STALL_SHARE:
                where = f" at #{c.location.line_number}" if c.location.line_number is not None else ""
                skipped.append(Skipped(rule.id, "below-guard",
                                       f"target{where} is {share:.2%} of stall "
                                       f"(< {AMDAHL_MIN_STALL_SHARE:.0%} Amdahl guard)"))
                continue
            kept.append(_item(ctx, rule, c))
        kept.sort(key=_order)
        if len(kept) > MAX_ITEMS_PER_RULE:
            rest = kept[MAX_ITEMS_PER_RULE:]
            skipped.append(Skipped(rule.id, "capped",
                                   f"{len(rest)} more location(s) below the top {MAX_ITEMS_PER_RULE}: "
                                   + ", ".join(f"#{i.location.line_number}" for i in rest)))
            kept = kept[:MAX_ITEMS_PER_RULE]
        items.extend(kept)
    items.sort(key=_order)
    return PlanOutcome(summary, items, skipped)


def _order(item: PlanItem) -> tuple:
    loc = item.location.line_number if item.location.line_number is not None else -1
    return (-item.estimate.high_pct, -item.estimate.low_pct, item.id, loc)


def _summary(ctx: PlanContext) -> StallSummary:
    cats = sorted(((c.get("category"), int(c.get("stall") or 0))
                   for c in ctx.data.get("stall_by_category") or [] if (c.get("stall") or 0) > 0),
                  key=lambda x: (-x[1], str(x[0])))
    stall, cycles = ctx.total_stall, ctx.total_cycles
    return StallSummary(cycles, stall, round(PCT * stall / cycles, ROUND_DIGITS) if cycles else 0.0,
                        [{"category": c, "stall": s, "share": round(s / stall, 4) if stall else 0.0}
                         for c, s in cats])
