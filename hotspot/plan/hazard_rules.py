"""`valu-dependency-chain`: s_nop wait states between dependent VALU instructions.

The compiler pads a VALU that reads a result needing extra wait states (`v_cmp` writing VCC/SGPRs
then `v_cndmask`/`v_readlane`, DPP and permlane sources, trans ops) with `s_nop N`: the wave issues
nothing for N+1 cycles. When independent work exists it can fill those slots instead; long serial
chains of this form (compare -> select -> compare ...) are the pattern experts break up.
"""

from __future__ import annotations

from collections import defaultdict

from hotspot.arch.classify import VECTOR_ALU
from hotspot.att.aggregate import InstructionStat
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site

Chain = tuple[InstructionStat, InstructionStat, InstructionStat]  # (VALU, s_nop, VALU)


def _chain_nops(ctx: PlanContext) -> list[Chain]:
    """Executed s_nop rows with a VALU right before and right after them (padding inside a chain)."""
    out = []
    for n in ctx.order:
        ins = ctx.instructions[n]
        if not ins.isa.lower().startswith("s_nop") or not ins.hit:
            continue
        before, after = ctx.preceding(n, 1), ctx.following(n, 1)
        if before and after and before[0].category in VECTOR_ALU and after[0].category in VECTOR_ALU:
            out.append((before[0], ins, after[0]))
    return out


def valu_dependency_chain(ctx: PlanContext, rule: Rule) -> Outcome:
    chains = [c for c in _chain_nops(ctx) if c[1].stall > 0]
    if not chains:
        return "no stalled s_nop between dependent VALU instructions"
    fams: dict[str, list[Chain]] = defaultdict(list)
    for c in chains:
        n = c[1].line_number
        loop = next(((lo, hi) for lo, hi in sorted(ctx.loop_ranges, key=lambda r: r[1] - r[0]) if lo <= n <= hi),
                    None)
        fams[f"loop #{loop[0]}-#{loop[1]}" if loop else "kernel body"].append(c)
    out = []
    for family, group in fams.items():
        sites = []
        for before, nop, after in group:
            loc = ctx.location_of(after)
            sites.append(Site(None, [before.line_number, nop.line_number, after.line_number],
                              loc.file, loc.line, nop.stall))
        sites.sort(key=lambda s: (-s.target_cycles, s.producer_rows[1]))
        target = sum(s.target_cycles for s in sites)
        before, nop, after = max(group, key=lambda c: (c[1].stall, -c[1].line_number))
        example = f"{before.isa.split(None, 1)[0]} -> {nop.isa} -> {after.isa.split(None, 1)[0]}"
        ev = [Evidence("nop_rows", len(sites)), Evidence("nop_stall_cycles", target),
              Evidence("nop_stall_pct", round(100 * target / ctx.total_stall, 2) if ctx.total_stall else 0.0),
              Evidence("example_chain", example), Evidence("family", family)]
        out.append(Candidate(
            ctx.location_of(after), ev, target,
            f"the VALU at #{after.line_number} needs the result of #{before.line_number} after extra "
            f"wait states, so the compiler inserted {nop.isa} and the wave issues nothing meanwhile "
            f"({example}); {len(sites)} such padding row(s) in {family}",
            title="s_nop padding in VALU dependency chains", sites=sites))
    return out
