"""`spin-wait-barrier`: the barrier is held by one wave polling a flag (split-K / stream-K fix-up).

The pattern: a loop whose body re-reads memory with a cache-bypassing load (`sc1`/`glc`/`nt`...)
and branches back until a value changes, in a kernel that also signals with a global atomic. The
other waves of the workgroup then sit at s_barrier for as long as the poll lasts. That barrier stall
is not uneven work: "balance the waves / double-buffer LDS" does not apply. The lever is the wait
itself: have the producing workgroups finish earlier, or remove the flag.
"""

from __future__ import annotations

from hotspot.arch.classify import Category
from hotspot.att.code_totals import InstructionStat
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule

# Cache-policy bits that make a load observe another workgroup's writes (gfx940+: sc0/sc1/nt,
# older gfx9: glc/slc).
COHERENT_BITS = ("sc1", "sc0", "glc")
ATOMIC_PREFIXES = ("global_atomic", "buffer_atomic", "flat_atomic")
POLL_LOAD_PREFIXES = ("global_load", "buffer_load", "flat_load")
# The spin must hold a real part of the stall for the barrier advice to change (same bar as
# barrier-dominated's BARRIER_MIN_SHARE).
SPIN_MIN_SHARE = 0.10
# A poll loop is short: load, wait, compare, branch (plus a back-off s_sleep); a longer loop with
# coherent loads is real work (e.g. a streaming main loop), not a poll.
SPIN_MAX_LOOP_ROWS = 16
COMPARE_PREFIXES = ("v_cmp", "s_cmp", "v_cmpx")


def _words(isa: str) -> list[str]:
    return isa.lower().replace(",", " ").split()


def spin_loop(ctx: PlanContext) -> tuple[tuple[int, int], InstructionStat, InstructionStat] | None:
    """(loop rows, poll load, atomic) when a loop polls memory with a coherent load and the kernel
    signals with a global atomic; the innermost such loop."""
    atomics = [i for i in ctx.instructions.values() if i.isa.lower().startswith(ATOMIC_PREFIXES) and i.hit > 0]
    if not atomics:
        return None
    for lo, hi in sorted(ctx.loop_ranges, key=lambda r: r[1] - r[0]):
        if hi - lo + 1 > SPIN_MAX_LOOP_ROWS:
            continue
        body = [ctx.instructions[n] for n in range(lo, hi + 1) if n in ctx.instructions]
        loads = [i for i in body if _words(i.isa)[:1] and _words(i.isa)[0].startswith(POLL_LOAD_PREFIXES)]
        coherent = [i for i in loads if i.hit > 0 and any(b in _words(i.isa)[1:] for b in COHERENT_BITS)]
        compares = any(i.isa.lower().startswith(COMPARE_PREFIXES) for i in body)
        if coherent and len(coherent) == len(loads) and compares \
                and not any(i.category == Category.MFMA for i in body):
            return (lo, hi), coherent[0], atomics[0]
    return None


def spin_rows(ctx: PlanContext) -> frozenset[int]:
    """Rows of the poll loop (empty without one): other rules leave its loads and waits alone, since
    "hoist" or "vectorize" advice does not apply to a flag poll."""
    if ctx.poll_rows is None:
        found = spin_loop(ctx) if ctx.has("loops") else None
        ctx.poll_rows = frozenset(range(found[0][0], found[0][1] + 1)) if found else frozenset()
    return ctx.poll_rows


def spin_wait_barrier(ctx: PlanContext, rule: Rule) -> Outcome:
    found = spin_loop(ctx)
    if found is None:
        return "no loop polls memory with a coherent load next to a global atomic"
    (lo, hi), poll, atomic = found
    barrier = ctx.category_stall(Category.BARRIER)
    spin = sum(i.stall for n, i in ctx.instructions.items() if lo <= n <= hi)
    target = barrier + spin
    share = target / ctx.total_stall if ctx.total_stall else 0.0
    if share < SPIN_MIN_SHARE:
        return f"barrier + spin-loop stall is {share:.0%} of stall (< {SPIN_MIN_SHARE:.0%})"
    loop = next((lp for lp in ctx.analysis.loops or [] if lp.first_line_number == lo), None)
    ev = [Evidence("spin_loop_rows", f"#{lo}-#{hi}"), Evidence("poll_load", f"#{poll.line_number} {poll.isa}"),
          Evidence("signal_atomic", f"#{atomic.line_number} {atomic.isa}"),
          Evidence("barrier_stall_cycles", barrier), Evidence("spin_loop_stall_cycles", spin),
          Evidence("share_of_stall", round(share, 3), SPIN_MIN_SHARE, ">=")]
    if loop is not None:
        ev.append(Evidence("poll_iterations", loop.iterations))
    held = "barrier held by a wave spinning on a flag" if barrier else "wave spinning on a flag"
    return [Candidate(
        ctx.location_of(poll), ev, target,
        f"one wave polls memory at #{poll.line_number} until another workgroup's atomic "
        f"(#{atomic.line_number}) lands, and the rest of the workgroup waits at s_barrier for it: "
        "the barrier stall is the time to the other workgroup's signal, not uneven work",
        title=f"{held} (poll loop #{lo}-#{hi})")]
