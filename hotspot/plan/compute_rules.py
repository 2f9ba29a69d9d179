"""Matrix-core rules: MFMA dependency chains and gfx942-era MFMA shapes running at half rate on gfx950."""

from __future__ import annotations

import re
from collections import defaultdict

from hotspot.arch.mfma import (
    CYCLES_PER_PASS,
    faster_shape,
    k_ratio,
    mfma_passes,
    parse_mfma,
)
from hotspot.arch.classify import Category, mnemonic_of
from hotspot.arch.targets import find_target
from hotspot.att.code_totals import InstructionStat
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule

# An MFMA that stalls at least one issue slot (4 cycles) per execution on average is waiting on
# something; below that the stall is issue-grid noise.
MFMA_CHAIN_MIN_STALL_PER_HIT = 4.0
# Look this many instructions back for the MFMA that produced an operand: the longest gfx9 MFMA is
# 16 passes, and each MFMA in between covers at least 2 passes, so a producer further back than 8
# rows has finished (HARDWARE.md §4).
MFMA_CHAIN_LOOKBACK_INSTRUCTIONS = 8

_REG = re.compile(r"^(?P<bank>[va])(?:(?P<one>\d+)|\[(?P<lo>\d+):(?P<hi>\d+)\])$")


def _regs(operand: str) -> tuple[str, int, int] | None:
    m = _REG.match(operand.strip().lower())
    if m is None:
        return None
    if m["one"] is not None:
        n = int(m["one"])
        return (m["bank"], n, n)
    return (m["bank"], int(m["lo"]), int(m["hi"]))


def mfma_operands(isa: str) -> tuple[tuple[str, int, int] | None, list[tuple[str, int, int]]]:
    """(destination, sources A/B/C) register ranges of an MFMA line; constants are skipped."""
    parts = isa.strip().split(None, 1)
    if len(parts) < 2:
        return None, []
    ops = [o.strip() for o in parts[1].split(",")]
    ops = [o.split()[0] for o in ops if o]  # drop trailing modifiers (cbsz:1 abid:1 blgp:2)
    regs = [_regs(o) for o in ops[:4]]
    dst = regs[0] if regs else None
    return dst, [r for r in regs[1:] if r is not None]


def _overlap(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    return a[0] == b[0] and a[1] <= b[2] and b[1] <= a[2]


def _chain_producer(ctx: PlanContext, ins: InstructionStat) -> tuple[InstructionStat, int] | None:
    """The recent MFMA whose result this one reads as A/B, or as a partially overlapping C. An
    accumulator read as C in exactly the same registers is forwarded (LLVM's hazard recognizer needs
    no wait states for it), so a same-accumulator sequence is pipe-bound, not a dependency chain."""
    _, sources = mfma_operands(ins.isa)
    if not sources:
        return None
    for distance, prev in enumerate(ctx.preceding(ins.line_number, MFMA_CHAIN_LOOKBACK_INSTRUCTIONS), 1):
        if prev.category != Category.MFMA:
            continue
        dst, _ = mfma_operands(prev.isa)
        if dst is None:
            continue
        src_ab, src_c = sources[:2], sources[2:]
        if any(_overlap(dst, s) for s in src_ab) or any(_overlap(dst, c) and c != dst for c in src_c):
            return prev, distance
    return None


def mfma_dependency_chain(ctx: PlanContext, rule: Rule) -> Outcome:
    chained = []
    for ins in ctx.executed(Category.MFMA):
        hit = ins.hit
        if not hit or ins.stall / hit < MFMA_CHAIN_MIN_STALL_PER_HIT:
            continue
        found = _chain_producer(ctx, ins)
        if found:
            chained.append((ins, found[0], found[1]))
    if not chained:
        return "no stalled MFMA reads the result of an MFMA issued just before it"
    stall = sum(c[0].stall for c in chained)
    worst, producer, distance = max(chained, key=lambda c: (c[0].stall, -c[0].line_number))
    from hotspot.att.issue_share import passes_known

    passes = passes_known(producer.isa, ctx.gfx)  # the arch unknown: the count gfx942/gfx950 share
    ev = [Evidence("chained_mfma_rows", len(chained)),
          Evidence("chained_mfma_stall_cycles", stall),
          Evidence("worst_stall_per_hit", round(worst.stall / worst.hit, 1),
                   MFMA_CHAIN_MIN_STALL_PER_HIT, ">="),
          Evidence("distance_to_producer_instructions", distance, MFMA_CHAIN_LOOKBACK_INSTRUCTIONS, "<="),
          Evidence("producer", f"#{producer.line_number} {producer.isa}")]
    if passes:
        ev.append(Evidence("producer_latency_cycles", passes * CYCLES_PER_PASS))
    return [Candidate(ctx.location_of(worst), ev, stall,
                      f"the MFMA reads registers written by the MFMA {distance} instruction(s) "
                      "earlier, so it waits for that result instead of issuing back to back")]


def legacy_mfma_shape(ctx: PlanContext, rule: Rule) -> Outcome:
    gfx = ctx.gfx
    if gfx is None:
        return "arch unknown"
    target = find_target(gfx)
    if target is None or not target.mfma_faster_shapes:
        return f"arch {gfx}: no MFMA shape runs below peak there (arch table)"
    by_mnemonic: dict[str, list[InstructionStat]] = defaultdict(list)
    for ins in ctx.executed(Category.MFMA):
        isa = ins.isa
        if faster_shape(gfx, isa) is not None:
            by_mnemonic[mnemonic_of(isa)].append(ins)
    if not by_mnemonic:
        return f"every executed MFMA uses a current {gfx} shape"
    out = []
    for mnemonic, rows in by_mnemonic.items():
        busy = 0
        for r in rows:
            passes = mfma_passes(r.isa, gfx) or 0
            busy += r.hit * passes * CYCLES_PER_PASS
        top = max(rows, key=lambda r: (r.hit, r.stall, -r.line_number))
        repl = faster_shape(gfx, mnemonic)
        kx = k_ratio(gfx, mnemonic)
        old_passes, new_passes = mfma_passes(mnemonic, gfx), mfma_passes(repl or "", gfx)
        speedup = (kx * old_passes / new_passes) if kx and old_passes and new_passes else None
        shape = parse_mfma(mnemonic)
        kind = shape.kind if shape else "?"
        ev = [Evidence("legacy_mfma", mnemonic), Evidence("data_type", kind), Evidence("rows", len(rows)),
              Evidence("executions", sum(r.hit for r in rows)),
              Evidence("mfma_pipe_cycles", busy)]
        if repl:
            ev.append(Evidence("faster_shape", repl))
        if kx:
            ev.append(Evidence("k_ratio", kx))
        if speedup:
            ev.append(Evidence("matrix_rate_ratio", round(speedup, 2)))
        removable = (rule.removable[0], 1.0 - 1.0 / speedup) if speedup and speedup > 1 else None
        why = (f"{mnemonic} ({kind}) is an older shape: {repl} does {kx}x its K in "
               f"{new_passes} passes instead of {old_passes}, so the matrix core runs this loop at "
               f"1/{speedup:g} of its {gfx} rate" if repl and kx and speedup else
               f"{mnemonic} is an older shape that runs below peak on {gfx}")
        out.append(Candidate(
            ctx.location_of(top), ev, busy, why,
            title=f"older MFMA shape {mnemonic} on {gfx}" + (f" ({speedup:g}x slower)" if speedup else ""),
            fix_extra=(f" Use {repl} ({kx}x the K per instruction)." if repl and kx else ""),
            removable=removable))
    return out
