"""`kernarg-loads`: kernel arguments read by separate scalar loads, each waited on in turn.

Every `s_load` outside a loop is a kernel argument (or a descriptor built from one): its latency is a
full memory round trip (hundreds of cycles) that no wave can hide at kernel start. The expert fix is
fewer round trips, not moving them: one wide `s_load_dwordx8/x16` over contiguous fields waited on
once, or kernel-argument preloading into SGPRs; loads issued mid-kernel are hoisted to the entry to
join that batch. Loads already at the entry must not be told to "hoist".
"""

from __future__ import annotations

from hotspot.arch.classify import is_wait
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule
from hotspot.plan.waits_rules import KERNARG_FAMILY, _blamed, _common_evidence, pairs_of, row_of, sites_of

# Batching N waits into one leaves one round trip: (N-1)/N of the stall goes at most; half of that
# is the conservative end (the batched wait still waits for the slowest field).
BATCH_LOW_FACTOR = 0.5
# Preloading the arguments into SGPRs removes the last round trip too; the rest is SGPR setup.
PRELOAD_HIGH_FRACTION = 0.9

ENTRY_FIX = (" These loads are already at the kernel entry: they cannot move earlier, only become fewer "
             "(batched) or preloaded.")
MID_FIX = (" Rows {rows} run after the kernel's first wait: move them to the entry with the others so "
           "one wait covers all of them.")


def first_wait_row(ctx: PlanContext) -> int | None:
    """The first s_waitcnt in static order (anything before it is the kernel entry)."""
    return next((n for n in ctx.order if is_wait(ctx.instructions[n].category)), None)


def kernarg_loads(ctx: PlanContext, rule: Rule) -> Outcome:
    pairs = pairs_of(ctx, rule)
    if not pairs:
        return "no kernel-argument scalar load outside loops is waited on with little cover"
    entry_end = first_wait_row(ctx)
    rows = sorted({row_of(p.producer) for p in pairs})
    mid = [r for r in rows if entry_end is not None and r > entry_end]
    waits = sorted({p.wait.line_number for p in pairs})
    n = len(waits)
    batch = 1.0 - 1.0 / n
    removable = (BATCH_LOW_FACTOR * batch, max(batch, PRELOAD_HIGH_FRACTION))
    basis = (f"{n} separate wait(s) on kernel arguments; one batched load leaves one round trip "
             f"({batch:.0%} of them go), preloading into SGPRs removes the last one")
    extra = MID_FIX.format(rows=", ".join(f"#{r}" for r in mid)) if mid else ENTRY_FIX
    ev = [Evidence("scalar_load_rows", len(rows)), Evidence("waits", n),
          Evidence("entry_loads", len(rows) - len(mid)), Evidence("mid_kernel_loads", len(mid)),
          Evidence("family", KERNARG_FAMILY)]
    top = max(pairs, key=lambda p: (p.producer.blamed_stall, -row_of(p.producer))).producer
    root = (f"{len(rows)} kernel-argument scalar load(s) are waited on in {n} separate round trips: each "
            "s_waitcnt lgkmcnt exposes a full memory latency" if n > 1 else
            f"{len(rows)} kernel-argument scalar load(s) are waited on right after issue: the wave starts "
            "only after a full memory round trip")
    return [Candidate(ctx.location_of(top), _common_evidence(ctx, pairs) + ev, int(_blamed(pairs)), root,
                      title=("kernel arguments read in separate round trips" if n > 1
                             else "kernel-argument load waited on at once"),
                      fix_extra=extra, removable=removable, basis=basis, sites=sites_of(ctx, pairs))]
