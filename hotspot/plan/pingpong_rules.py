"""`pingpong-barrier`: barriers of a ping-pong schedule, each classified by what precedes it.

An 8-wave ping-pong kernel splits the workgroup in two halves that take turns: while one half runs
its MFMA cluster the other loads the next tiles (global loads, LDS writes and reads). To start them
out of step, one half executes one extra `s_barrier` before the loop (a barrier inside a branch that
only part of the waves take). From then on every barrier a wave reaches after its *memory phase*
is the design — it waits while the other half computes, and the matrix core stays busy: removing
that wait gains nothing. A barrier reached after an *MFMA cluster* is real lost time: the matrix
core idles until the other half's memory phase ends. Only the second kind is an item.

The cause is read from the ISA and the execution counts: the conditional barriers (two barrier rows
outside the loops, each run by part of the traced waves, together by every wave once: one half
runs the first before the loop, the other catches up after it), and per barrier the rows
since the previous barrier of its loop (wrapping around the loop's back edge): more executed MFMA
rows than memory rows make an MFMA phase, otherwise memory rows make a memory phase.
"""

from __future__ import annotations

from hotspot.arch.classify import Category
from hotspot.att.code_totals import InstructionStat
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site

# The conditional barrier that offsets the two halves runs on "half the waves": with whole
# workgroups traced that is 1/2; partial traces and odd workgroup counts move it, so any share
# strictly inside this range counts (all or none of the waves is an ordinary barrier).
PINGPONG_AHEAD_SHARE = (0.25, 0.75)
# Instructions of a memory phase: what the loading half issues while the other half computes.
MEMORY_PHASE = frozenset({Category.VMEM_LOAD, Category.VMEM_STORE, Category.FLAT, Category.LDS,
                          Category.SCRATCH})
MFMA_PHASE = "mfma"
MEMORY = "memory"
OTHER = "other"


def _is_barrier(ins: InstructionStat) -> bool:
    return ins.isa.strip().lower().startswith("s_barrier")


def _innermost_loop(ctx: PlanContext, row: int) -> tuple[int, int] | None:
    inside = [(lo, hi) for lo, hi in ctx.loop_ranges if lo <= row <= hi]
    return min(inside, key=lambda r: r[1] - r[0]) if inside else None


def phase_rows(ctx: PlanContext, barrier: int) -> list[InstructionStat]:
    """The rows a wave runs between the previous barrier and this one: in a loop, from the
    previous barrier of the loop body, wrapping around the back edge for the first one."""
    loop = _innermost_loop(ctx, barrier)
    rows = [n for n in ctx.order if (loop is None or loop[0] <= n <= loop[1])]
    at = rows.index(barrier)
    before = list(reversed(rows[:at])) + (list(reversed(rows[at + 1:])) if loop is not None else [])
    out = []
    for n in before:
        ins = ctx.instructions[n]
        if _is_barrier(ins):
            break
        out.append(ins)
    return out


def phase_of(ctx: PlanContext, barrier: int) -> tuple[str, int, int]:
    """(kind, executed MFMA rows, executed memory rows) of the phase before `barrier`."""
    rows = [i for i in phase_rows(ctx, barrier) if i.hit > 0]
    mfma = sum(1 for i in rows if i.category == Category.MFMA)
    memory = sum(1 for i in rows if i.category in MEMORY_PHASE)
    if mfma and mfma >= memory:
        return MFMA_PHASE, mfma, memory
    return (MEMORY if memory else OTHER), mfma, memory


def conditional_barrier(ctx: PlanContext) -> InstructionStat | None:
    """The barrier that puts one half of a ping-pong schedule one step ahead: a barrier outside
    every repeating loop that part of the traced waves run, paired with another such barrier the
    other waves run (the catch-up after the loop): each wave runs exactly one of the two, so their
    executions add up to the traced waves. An early exit that skips a barrier has no such partner."""
    waves = ctx.traced_waves
    if not waves:
        return None
    lo, hi = PINGPONG_AHEAD_SHARE
    partial = [ctx.instructions[n] for n in ctx.order
               if _is_barrier(ctx.instructions[n]) and _innermost_loop(ctx, n) is None
               and lo < ctx.instructions[n].hit / waves < hi]
    for k, first in enumerate(partial):
        if any(first.hit + other.hit == waves for other in partial[k + 1:]):
            return first
    return None


def memory_phase_rows(ctx: PlanContext) -> frozenset[int]:
    """The rows of a ping-pong schedule's memory phases (the rows before each loop barrier whose
    phase is a memory phase): their waits are covered by the other half's MFMA cluster by design;
    what the cluster does not cover shows as the lost wait at the barrier after it, which this rule
    reports. Empty when the kernel is not a ping-pong schedule."""
    if not ctx.has("loops") or conditional_barrier(ctx) is None:
        return frozenset()
    out: set[int] = set()
    for b in ctx.executed(Category.BARRIER):
        if _is_barrier(b) and _innermost_loop(ctx, b.line_number) is not None \
                and phase_of(ctx, b.line_number)[0] == MEMORY:
            out |= {i.line_number for i in phase_rows(ctx, b.line_number)}
    return frozenset(out)


def partners(ctx: PlanContext, barriers: list[int]) -> dict[int, tuple[int, int]]:
    """{loop barrier: (the next, the previous) barrier of its loop body, cyclic}: with one half a
    barrier ahead, a wave of the trailing half at barrier b is released by the leading half
    arriving at the next one, a wave of the leading half by the trailing half at the previous one."""
    out: dict[int, tuple[int, int]] = {}
    by_loop: dict[tuple[int, int] | None, list[int]] = {}
    for b in sorted(barriers):
        by_loop.setdefault(_innermost_loop(ctx, b), []).append(b)
    for rows in by_loop.values():
        for k, b in enumerate(rows):
            out[b] = (rows[(k + 1) % len(rows)], rows[k - 1])
    return out


def pingpong_barrier(ctx: PlanContext, rule: Rule) -> Outcome:
    ahead = conditional_barrier(ctx)
    if ahead is None:
        return ("no barrier outside the loops that only part of the waves run: not a ping-pong "
                "schedule (barrier-dominated judges its barriers)")
    barriers = [i for i in ctx.executed(Category.BARRIER) if _is_barrier(i) and i.line_number != ahead.line_number
                and _innermost_loop(ctx, i.line_number) is not None]
    if not barriers:
        return "a conditional barrier but no barrier inside a repeating loop: no ping-pong loop"
    kinds = {b.line_number: phase_of(ctx, b.line_number) for b in barriers}
    pair = partners(ctx, [b.line_number for b in barriers])
    # the share of a barrier's stall that is lost: half of its waves are released by each partner
    # (the two halves are taken to wait alike); a wait while the partner half runs its MFMA cluster
    # keeps the matrix core busy (the design), a wait on a partner's memory phase leaves it idle
    lost_share = {b: sum(kinds[p][0] != MFMA_PHASE for p in pair[b]) / len(pair[b]) for b in pair}
    lost = [b for b in barriers if lost_share[b.line_number] > 0 and b.stall > 0]
    lost_stall = sum(b.stall * lost_share[b.line_number] for b in lost)
    design_stall = sum(b.stall * (1 - lost_share[b.line_number]) for b in barriers)
    described = ", ".join(f"#{b.line_number} after {kinds[b.line_number][0]}" for b in barriers)
    if not lost:
        return (f"ping-pong schedule (#{ahead.line_number} runs on {ahead.hit} of {ctx.traced_waves} "
                f"waves): every loop barrier ({described}) is released by the other half's MFMA "
                f"cluster — the design ({design_stall:,.0f} stall cycles gain nothing)")
    top = max(lost, key=lambda b: (b.stall * lost_share[b.line_number], -b.line_number))
    sites = []
    for b in sorted(lost, key=lambda b: (-b.stall * lost_share[b.line_number], b.line_number)):
        loc = ctx.location_of(b)
        sites.append(Site(None, [b.line_number], loc.file, loc.line, int(b.stall * lost_share[b.line_number])))
    ev = [Evidence("ahead_barrier_row", ahead.line_number),
          Evidence("ahead_share_of_waves", round(ahead.hit / ctx.traced_waves, 3), f"{PINGPONG_AHEAD_SHARE}", "in"),
          Evidence("loop_barriers", described),
          Evidence("lost_share_per_barrier", ", ".join(f"#{b}: {v:.0%}" for b, v in sorted(lost_share.items()))),
          Evidence("lost_barrier_stall_cycles", int(lost_stall)),
          Evidence("design_barrier_stall_cycles", int(design_stall))]
    nxt, prv = pair[top.line_number]
    return [Candidate(
        ctx.location_of(top), ev, int(lost_stall),
        f"a ping-pong schedule (#{ahead.line_number}, a barrier {ahead.hit} of {ctx.traced_waves} waves "
        f"run, puts half the waves one barrier ahead): a wave at a loop barrier is released by the other "
        f"half reaching the next (or previous) one, so its wait is the design when that half runs its MFMA "
        f"cluster and lost matrix-core time when it runs a memory phase. #{top.line_number} (after "
        f"{kinds[top.line_number][0]}) is released by #{nxt} (after {kinds[nxt][0]}) and #{prv} (after "
        f"{kinds[prv][0]}); {lost_stall:,.0f} barrier cycles are lost this way, {design_stall:,.0f} are "
        "the design (gain 0: the other half computes)",
        title="ping-pong barriers released by a memory phase: the matrix core waits",
        sites=sites)]
