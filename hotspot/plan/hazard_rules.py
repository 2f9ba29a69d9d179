"""`valu-dependency-chain`: s_nop wait states between dependent VALU instructions.

The compiler pads a VALU that reads a result needing extra wait states (`v_cmp` writing VCC/SGPRs
then `v_cndmask`/`v_readlane`, DPP and permlane sources, trans ops) with `s_nop N`: the wave issues
nothing for N+1 cycles. When independent work exists it can fill those slots instead; long serial
chains of this form (compare -> select -> compare ...) are the pattern experts break up.
"""

from __future__ import annotations

from collections import defaultdict

from hotspot.arch.classify import VECTOR_ALU, mnemonic_of
from hotspot.att.code_totals import InstructionStat
from hotspot.plan.context import PlanContext
from hotspot.plan.conventions import PCT, ROUND_DIGITS
from hotspot.plan.def_use import reads, straight_line, writes
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site

Chain = tuple[InstructionStat, InstructionStat, InstructionStat]  # (producer VALU, s_nop, VALU)

# The farthest a producer can sit above the VALU whose hazard an s_nop pads: every instruction in
# between is at least one wait state, and the longest VALU-side hazard on gfx9 is an MFMA result read
# by a VALU, passes + 3 wait states (+1 on gfx950), 16 passes at most (HARDWARE.md §4): 20.
HAZARD_MAX_WAIT_STATES = 20


def _producer(ctx: PlanContext, nop: InstructionStat, after: InstructionStat) -> InstructionStat | None:
    """The nearest vector ALU row above the s_nop, in the same straight-line piece, that writes a
    register `after` reads; None when there is no such def-use chain (padding for another reason,
    or a branch landing between them)."""
    used = reads(after.isa)
    if not used:
        return None
    above = ctx.preceding(nop.line_number, HAZARD_MAX_WAIT_STATES)
    for k, prev in enumerate(above):
        if not straight_line(list(reversed(above[:k + 1])) + [nop, after]):
            return None
        if prev.category in VECTOR_ALU and writes(prev.isa) & used:
            return prev
    return None


def _chain_nops(ctx: PlanContext) -> list[Chain]:
    """Executed s_nop rows right before a VALU that reads a register an earlier VALU of the same
    straight-line piece writes (padding inside a real dependency chain)."""
    out = []
    for n in ctx.order:
        ins = ctx.instructions[n]
        if not ins.isa.lower().startswith("s_nop") or not ins.hit:
            continue
        after = ctx.following(n, 1)
        if not after or after[0].category not in VECTOR_ALU:
            continue
        producer = _producer(ctx, ins, after[0])
        if producer is not None:
            out.append((producer, ins, after[0]))
    return out


def valu_dependency_chain(ctx: PlanContext, rule: Rule) -> Outcome:
    chains = [c for c in _chain_nops(ctx) if c[1].stall > 0]
    if not chains:
        return ("no stalled s_nop between a VALU and an earlier VALU of the same straight-line code "
                "that writes a register it reads")
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
        example = f"{mnemonic_of(before.isa)} -> {nop.isa} -> {mnemonic_of(after.isa)}"
        ev = [Evidence("nop_rows", len(sites)), Evidence("nop_stall_cycles", target),
              Evidence("nop_stall_pct", round(PCT * target / ctx.total_stall, ROUND_DIGITS) if ctx.total_stall else 0.0),
              Evidence("example_chain", example), Evidence("family", family)]
        out.append(Candidate(
            ctx.location_of(after), ev, target,
            f"the VALU at #{after.line_number} reads {_shared(before, after)} written by "
            f"#{before.line_number} and needs it after extra "
            f"wait states, so the compiler inserted {nop.isa} and the wave issues nothing meanwhile "
            f"({example}); {len(sites)} such padding row(s) in {family}",
            title="s_nop padding in VALU dependency chains", sites=sites))
    return out


def _shared(producer: InstructionStat, consumer: InstructionStat) -> str:
    regs = sorted(writes(producer.isa) & reads(consumer.isa))
    return ", ".join(regs[:4]) + (" ..." if len(regs) > 4 else "")
