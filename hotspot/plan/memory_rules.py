"""Memory verdicts from `hotspot pmc` (--pmc), tied to the memory stall seen in the trace."""

from __future__ import annotations

from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule
from hotspot.result import JsonObject

# Stall a memory-side fix can shrink: waiting on vmcnt (and mixed waits), plus VMEM issue stalls.
MEMORY_STALL_CATEGORIES = ("wait-vmcnt", "wait-mixed", "vmem-load", "vmem-store", "vmem-atomic",
                           "flat", "scratch")


def verdict(ctx: PlanContext, verdict_id: str) -> JsonObject | None:
    for v in (ctx.pmc or {}).get("verdicts") or []:
        if isinstance(v, dict) and v.get("id") == verdict_id:
            return v
    return None


def _plain_evidence(ev: JsonObject) -> list[Evidence]:
    out = []
    for key, value in ev.items():
        if isinstance(value, dict):  # an Estimate: value, or low–high
            if value.get("value") is not None:
                value = value["value"]
            elif value.get("low") is not None:
                value = f"{value['low']:.3g}–{value['high']:.3g}"
            else:
                continue
        if value is None:
            continue
        out.append(Evidence(key, round(value, 3) if isinstance(value, float) else value))
    return out


def _over_fetch_ratio(ctx: PlanContext) -> float | None:
    of = (ctx.pmc or {}).get("over_fetch") or {}
    for key in ("value", "low"):
        v = of.get(key)
        if isinstance(v, (int, float)) and v > 0:
            return float(v)
    return None


def memory_rule(verdict_id: str):
    def evaluate(ctx: PlanContext, rule: Rule) -> Outcome:
        v = verdict(ctx, verdict_id)
        if v is None:
            return f"hotspot pmc gave no '{verdict_id}' verdict for this kernel"
        target = ctx.category_stall(*MEMORY_STALL_CATEGORIES)
        ev = [Evidence("pmc_kernel", (ctx.pmc or {}).get("kernel")),
              Evidence("memory_stall_cycles", target)] + _plain_evidence(v.get("evidence") or {})
        if not v.get("certain", True):
            ev.append(Evidence("undecided_by", ", ".join(v.get("undecided_by") or [])))
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
        hot = ctx.hottest("wait-vmcnt", "wait-mixed")
        return [Candidate(ctx.location_of(hot) if hot else ctx.kernel_location(), ev, target,
                          str(v.get("text") or verdict_id), fix_extra=f" {v.get('next')}" if v.get("next") else "",
                          removable=removable, basis=basis)]
    return evaluate
