"""`register-spill`: scratch reloads of spilled registers waited on inside a repeating loop.

When a kernel needs more registers than its occupancy's budget allows, the compiler stores values
to scratch (private memory, `scratch_store_*`) and reloads them (`scratch_load_*`) where they are
used. A reload is a vector memory load: its `s_waitcnt vmcnt` waits for global-memory latency, and
since vmcnt retires in order (HARDWARE.md §3) the same wait also drains every older vector memory
operation still in flight — the next tile's prefetch included. In a hot loop that is paid every
iteration. The cause is read from the ISA and the wait attribution: the producers of those waits
are the scratch loads; the registers in use and the budget come from the ISA and the arch table.
"""

from __future__ import annotations

import re

from hotspot.arch.classify import VM_PRODUCERS, Category, mnemonic_of
from hotspot.arch.vmem_width import lane_bytes
from hotspot.att.code_totals import InstructionStat
from hotspot.plan.context import PlanContext, in_loop
from hotspot.plan.conventions import PCT, ROUND_DIGITS
from hotspot.plan.def_use import reads, writes
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site
from hotspot.plan.register_budget import VgprBudget, budget_target, vgpr_budget, waves_for

DWORD_BYTES = 4  # a scratch access of a width hotspot/arch/vmem_width.py does not know counts as one dword
_OFFSET = re.compile(r"offset:\s*(0x[0-9a-f]+|\d+)", re.IGNORECASE)


def _is_scratch(ins_isa: str, category: Category | str) -> bool:
    return category == Category.SCRATCH or ins_isa.lower().startswith("scratch_")


def _is_load(isa: str) -> bool:
    return "load" in mnemonic_of(isa)


def _width(isa: str) -> int:
    return lane_bytes(isa) or DWORD_BYTES


def spilled_dwords(rows: list[InstructionStat]) -> int:
    """Distinct scratch dwords per lane the ISA touches (the union of offset..offset+width of every
    scratch access): the spill slots."""
    touched: set[int] = set()
    for r in rows:
        m = _OFFSET.search(r.isa)
        base = int(m[1], 0) if m else 0
        touched.update(range(base // DWORD_BYTES, (base + _width(r.isa) + DWORD_BYTES - 1) // DWORD_BYTES))
    return len(touched)


def _budget_text(budget: VgprBudget | None, spilled: int) -> str:
    if budget is None:
        return (f"{spilled} dword(s) per lane are spilled; the register budget is unknown (no arch or "
                "occupancy)")
    return (f"the ISA uses {budget.in_use} VGPRs ({budget.arch_vgprs} arch + {budget.agprs} AGPRs) of the "
            f"{budget.allowed} one wave may hold at {budget.waves} waves/SIMD, and spills {spilled} more "
            f"dword(s) per lane to scratch")


def staged_to_scratch(ctx: PlanContext, load_row: int, wait_row: int) -> bool:
    """The load's data goes straight to scratch: after its wait, the first row of the loop that
    reads one of its destination registers is a scratch store (before anything overwrites them).
    Its wait exists only to spill the tile it fetched."""
    load = ctx.instructions.get(load_row)
    if load is None:
        return False
    dest = writes(load.isa)
    if not dest:
        return False
    loop = next(((lo, hi) for lo, hi in sorted(ctx.loop_ranges, key=lambda r: r[1] - r[0])
                 if lo <= wait_row <= hi), None)
    if loop is None:
        return False
    for n in ctx.order:
        if n <= wait_row or n > loop[1]:
            continue
        ins = ctx.instructions[n]
        if reads(ins.isa) & dest:
            return _is_scratch(ins.isa, ins.category) and not _is_load(ins.isa)
        if writes(ins.isa) & dest:
            return False
    return False


def reload_rows(ctx: PlanContext) -> set[int]:
    """Executed scratch loads inside a repeating loop (the spill reloads this rule is about)."""
    return {i.line_number for i in ctx.instructions.values()
            if _is_scratch(i.isa, i.category) and _is_load(i.isa) and i.hit > 0 and in_loop(ctx, i.line_number)}


def spill_pairs(ctx: PlanContext) -> set[tuple[int, int]]:
    """(wait row, load row) pairs register-spill claims besides the reloads themselves: the older
    global loads a reload's wait drains (vmcnt retires in order: the prefetch is waited for only
    because the reload is), and global loads in a spilling loop whose data goes straight to
    scratch. No other wait rule tells to prefetch them: the registers that would need are missing."""
    reloads = reload_rows(ctx)
    if not reloads:
        return set()
    out = set()
    for w in ctx.waits():
        if not in_loop(ctx, w.line_number):
            continue
        if any(p.line_number in reloads for p in w.producers):
            out |= {(w.line_number, p.line_number) for p in w.producers
                    if p.line_number is not None and p.line_number not in reloads and p.category in VM_PRODUCERS}
            continue
        for p in w.producers:
            if (p.line_number is not None and p.category in VM_PRODUCERS and not _is_scratch(p.isa, p.category)
                    and _is_load(p.isa) and staged_to_scratch(ctx, p.line_number, w.line_number)):
                out.add((w.line_number, p.line_number))
    return out


def register_spill(ctx: PlanContext, rule: Rule) -> Outcome:
    scratch = [i for i in ctx.instructions.values() if _is_scratch(i.isa, i.category) and i.hit > 0]
    if not scratch:
        return "no scratch (spill) instruction executed"
    reloads = reload_rows(ctx)
    if not reloads:
        return "no scratch reload inside a loop that repeats (spills outside loops run once per wave)"
    sites: list[Site] = []
    reload_stall = drained_stall = staged_stall = 0.0
    per_row: dict[int, float] = {}
    drained_rows: set[int] = set()
    staged_rows: set[int] = set()
    for w in ctx.waits():
        ours = [p for p in w.producers if p.line_number in reloads]
        staged = []
        if not ours and in_loop(ctx, w.line_number):
            # a load whose data goes straight to scratch: its wait is part of the spill
            staged = [p for p in w.producers if p.line_number is not None and p.category in VM_PRODUCERS
                      and not _is_scratch(p.isa, p.category) and _is_load(p.isa)
                      and staged_to_scratch(ctx, p.line_number, w.line_number)]
            staged_rows |= {p.line_number for p in staged if p.line_number is not None}
            staged_stall += sum(p.blamed_stall for p in staged)
            ours = staged
        if not ours:
            continue
        newest = min((p.median_distance_cycles for p in ours if p.median_distance_cycles is not None),
                     default=None)
        # vmcnt retires in order: the older VMEM operations this wait also drains (a prefetch)
        drained = [p for p in w.producers if p not in ours and p.category in VM_PRODUCERS
                   and not _is_scratch(p.isa, p.category)
                   and (newest is None or (p.median_distance_cycles or 0) >= newest)]
        blamed = sum(p.blamed_stall for p in ours)
        extra = sum(p.blamed_stall for p in drained)
        if not staged:
            for p in ours:
                per_row[p.line_number or 0] = per_row.get(p.line_number or 0, 0.0) + p.blamed_stall
            reload_stall += blamed
        drained_rows |= {p.line_number for p in drained if p.line_number is not None}
        drained_stall += extra
        src = ctx.location_of(max(ours, key=lambda p: p.blamed_stall))
        sites.append(Site(w.line_number, sorted(p.line_number for p in ours if p.line_number is not None),
                          src.file, src.line, int(blamed + extra)))
    stores_in_loop = [i for i in scratch if not _is_load(i.isa) and in_loop(ctx, i.line_number)]
    store_stall = sum(i.stall for i in stores_in_loop)
    target = reload_stall + staged_stall + drained_stall + store_stall
    if not per_row or target <= 0:
        return "the scratch reloads in loops carry no wait stall"
    sites.sort(key=lambda s: (-s.target_cycles, s.wait_row or -1))
    top = ctx.instructions[max(per_row, key=lambda n: (per_row[n], -n))]
    spilled = spilled_dwords(scratch)
    budget = vgpr_budget(ctx)
    loads_per_wave = sum(ctx.instructions[n].hit for n in reloads) / max(1, ctx.traced_waves)
    ev = [Evidence("scratch_reload_rows_in_loops", len(reloads)),
          Evidence("scratch_reloads_per_wave", round(loads_per_wave, 1)),
          Evidence("scratch_store_rows_in_loops", len(stores_in_loop)),
          Evidence("reload_wait_stall_cycles", int(reload_stall)),
          Evidence("reload_wait_stall_pct", round(PCT * reload_stall / ctx.total_stall, ROUND_DIGITS)),
          Evidence("drained_vmem_stall_cycles", int(drained_stall)),
          Evidence("loads_staged_to_scratch", ", ".join(f"#{n}" for n in sorted(staged_rows)) or "none"),
          Evidence("staged_wait_stall_cycles", int(staged_stall)),
          Evidence("drained_vmem_rows", ", ".join(f"#{n}" for n in sorted(drained_rows)) or "none"),
          Evidence("spilled_dwords_per_lane", spilled)]
    if budget is not None:
        ev += [Evidence("vgprs_in_use_isa", budget.in_use, budget.allowed, ">="),
               Evidence("vgprs_allowed_at_waves", budget.allowed), Evidence("waves_per_simd", budget.waves)]
    drain_text = (f"; they also drain {len(drained_rows)} older VMEM load(s) in flight ({int(drained_stall):,} "
                  "cycles: vmcnt retires in order, so the prefetch is waited for too)" if drained_rows else
                  "; vmcnt retires in order, so any prefetch issued before a reload is drained with it")
    budget_fix = ""
    if budget is not None:
        need = budget.in_use + spilled
        fit = waves_for(budget_target(ctx), need)
        budget_fix = (f" Budget: the ISA uses {budget.in_use} VGPRs of the {budget.allowed} allowed at "
                      f"{budget.waves} waves/SIMD; holding the {spilled} spilled dwords too needs about "
                      f"{need}, which "
                      + (f"fits at {fit} wave(s)/SIMD (trade occupancy only if fewer waves still hide "
                         "the memory latency)." if fit else "no occupancy allows: free registers."))
    return [Candidate(
        ctx.location_of(top), ev, int(target),
        f"{len(reloads)} scratch reload(s) of spilled registers run every loop iteration "
        f"({loads_per_wave:,.0f} per wave) and each is waited on with s_waitcnt vmcnt at global-memory "
        f"latency{drain_text}"
        + (f"; {len(staged_rows)} global load(s) in the loop are waited on only to store their data to "
           f"scratch ({', '.join(f'#{n}' for n in sorted(staged_rows))})" if staged_rows else "")
        + f"; {_budget_text(budget, spilled)}",
        title=f"register spills reloaded from scratch inside the loop ({len(sites)} waits)",
        fix_extra=budget_fix, sites=sites)]
