"""`valu-dependency-chain`: s_nop wait states between dependent VALU instructions.

The compiler pads a VALU that reads a result needing extra wait states (`v_cmp` writing VCC/SGPRs
then `v_cndmask`/`v_readlane`, DPP and permlane sources, trans ops) with `s_nop N`: the wave issues
nothing for N+1 cycles. When independent work exists it can fill those slots instead; long serial
chains of this form (compare -> select -> compare ...) are the pattern experts break up.
"""

from __future__ import annotations

from collections import defaultdict

from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site
from hotspot.result import JsonObject

VALU_CATEGORIES = frozenset({"valu", "mfma"})


def _chain_nops(ctx: PlanContext) -> list[tuple[JsonObject, JsonObject, JsonObject]]:
    """Executed s_nop rows with a VALU right before and right after them (padding inside a chain)."""
    out = []
    for n in ctx.order:
        ins = ctx.instructions[n]
        if not str(ins.get("isa") or "").lower().startswith("s_nop") or not (ins.get("hit") or 0):
            continue
        before, after = ctx.preceding(n, 1), ctx.following(n, 1)
        if before and after and before[0].get("category") in VALU_CATEGORIES \
                and after[0].get("category") in VALU_CATEGORIES:
            out.append((before[0], ins, after[0]))
    return out


def valu_dependency_chain(ctx: PlanContext, rule: Rule) -> Outcome:
    chains = [c for c in _chain_nops(ctx) if (c[1].get("stall") or 0) > 0]
    if not chains:
        return "no stalled s_nop between dependent VALU instructions"
    fams: dict[str, list[tuple[JsonObject, JsonObject, JsonObject]]] = defaultdict(list)
    for c in chains:
        n = c[1]["line_number"]
        loop = next(((lo, hi) for lo, hi in sorted(ctx.loop_ranges, key=lambda r: r[1] - r[0]) if lo <= n <= hi),
                    None)
        fams[f"loop #{loop[0]}-#{loop[1]}" if loop else "kernel body"].append(c)
    out = []
    for family, group in fams.items():
        sites = []
        for before, nop, after in group:
            loc = ctx.location_of(after)
            sites.append(Site(None, [int(before["line_number"]), int(nop["line_number"]), int(after["line_number"])],
                              loc.file, loc.line, int(nop.get("stall") or 0)))
        sites.sort(key=lambda s: (-s.target_cycles, s.producer_rows[1]))
        target = sum(s.target_cycles for s in sites)
        before, nop, after = max(group, key=lambda c: (c[1].get("stall") or 0, -c[1]["line_number"]))
        example = (f"{str(before.get('isa') or '').split(None, 1)[0]} -> {nop.get('isa')} -> "
                   f"{str(after.get('isa') or '').split(None, 1)[0]}")
        ev = [Evidence("nop_rows", len(sites)), Evidence("nop_stall_cycles", target),
              Evidence("nop_stall_pct", round(100 * target / ctx.total_stall, 2) if ctx.total_stall else 0.0),
              Evidence("example_chain", example), Evidence("family", family)]
        out.append(Candidate(
            ctx.location_of(after), ev, target,
            f"the VALU at #{after['line_number']} needs the result of #{before['line_number']} after extra "
            f"wait states, so the compiler inserted {nop.get('isa')} and the wave issues nothing meanwhile "
            f"({example}); {len(sites)} such padding row(s) in {family}",
            title="s_nop padding in VALU dependency chains", sites=sites))
    return out
