"""Memory verdicts from `hotspot pmc` (--pmc), tied to the memory stall seen in the trace."""

from __future__ import annotations

from collections.abc import Callable

from hotspot.arch.classify import MEMORY_STALL, VMCNT_WAITS
from hotspot.pmc.estimate import Estimate
from hotspot.pmc.verdicts import Verdict
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule

# Stall a memory-side fix can shrink: waiting on vmcnt (and mixed waits), plus VMEM issue stalls.
MEMORY_STALL_CATEGORIES = MEMORY_STALL


def verdict(ctx: PlanContext, verdict_id: str) -> Verdict | None:
    return next((v for v in ctx.pmc.verdicts if v.id == verdict_id), None) if ctx.pmc else None


def _verdict_evidence(v: Verdict) -> list[Evidence]:
    out = []
    for key, measured in v.evidence.items():
        value: float | str | None
        if isinstance(measured, Estimate):  # its value, or low–high
            if measured.value is not None:
                value = measured.value
            elif measured.low is not None:
                value = f"{measured.low:.3g}–{measured.high:.3g}"
            else:
                continue
        else:
            value = measured
        if value is None:
            continue
        out.append(Evidence(key, round(value, 3) if isinstance(value, float) else value))
    return out


def _over_fetch_ratio(ctx: PlanContext) -> float | None:
    of = ctx.pmc.over_fetch if ctx.pmc else None
    for v in (of.value, of.low) if of else ():
        if v is not None and v > 0:
            return float(v)
    return None


def memory_rule(verdict_id: str) -> Callable[[PlanContext, Rule], Outcome]:
    def evaluate(ctx: PlanContext, rule: Rule) -> Outcome:
        v = verdict(ctx, verdict_id)
        if v is None:
            return f"hotspot pmc gave no '{verdict_id}' verdict for this kernel"
        target = ctx.category_stall(*MEMORY_STALL_CATEGORIES)
        ev = [Evidence("pmc_kernel", ctx.pmc.kernel if ctx.pmc else None),
              Evidence("memory_stall_cycles", target)] + _verdict_evidence(v)
        if not v.certain:
            ev.append(Evidence("undecided_by", ", ".join(v.undecided_by)))
        removable = None
        basis = None
        if verdict_id == "over-fetch":
            ratio = _over_fetch_ratio(ctx)
            if ratio and ratio > 1:
                redundant = 1 - 1 / ratio
                removable = (rule.removable[0] * redundant, rule.removable[1] * redundant)
                basis = (f"{redundant:.0%} of the fabric bytes are redundant (over-fetch {ratio:.2f}x); "
                         f"removing them shortens the memory stall by {rule.removable[0]:.0%}–"
                         f"{rule.removable[1]:.0%} of that share")
        hot = ctx.hottest(*VMCNT_WAITS)
        return [Candidate(ctx.location_of(hot) if hot else ctx.kernel_location(), ev, target,
                          v.text or verdict_id, fix_extra=f" {v.next}" if v.next else "",
                          removable=removable, basis=basis)]
    return evaluate
