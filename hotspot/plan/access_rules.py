"""`narrow-loads`: memory traffic issued as many narrow per-lane loads (1-8 bytes) instead of 16-byte
ones. The first fix experts give for a load-bound kernel: every load instruction costs an issue slot
and a request whatever its width, so 2-byte loads move an eighth of what a dwordx4 moves per slot."""

from __future__ import annotations

from collections import defaultdict

from hotspot.arch.classify import Category
from hotspot.arch.vmem_width import vmem_access
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site
from hotspot.plan.spin_rules import spin_rows

WIDE_BYTES = 16  # dwordx4: the widest per-lane load, what each narrow load could be
# The rule fires when narrow loads are at least this share of the executed VMEM load instructions.
NARROW_MIN_EXEC_SHARE = 0.5
# Vectorizing merges narrow loads of one lane: it needs at least two of them per wave.
NARROW_MIN_PER_WAVE = 2.0
VMEM_LOAD_CATEGORIES = (Category.VMEM_LOAD, Category.FLAT)  # in taxonomy order (the sites' order)
# The global-memory accesses the rules weigh: scratch (spills) has a rule of its own.
LOAD_SEGMENTS = frozenset({"buffer", "tbuffer", "global", "flat"})
STORE_SEGMENTS = frozenset({"buffer", "global", "flat"})


def bytes_per_lane(isa: str) -> int | None:
    """Per-lane bytes of a global-memory load; None for anything else (or an unknown size)."""
    a = vmem_access(isa)
    return a.lane_bytes if a is not None and a.op == "load" and a.segment in LOAD_SEGMENTS else None


def store_bytes_per_lane(isa: str) -> int | None:
    """Per-lane bytes of a global-memory store; None for anything else."""
    a = vmem_access(isa)
    return a.lane_bytes if a is not None and a.op == "store" and a.segment in STORE_SEGMENTS else None


def _is_lds_dma(isa: str) -> bool:
    words = isa.lower().replace(",", " ").split()
    return "lds" in words[1:] or "_lds_" in (words[0] if words else "")


def narrow_loads(ctx: PlanContext, rule: Rule) -> Outcome:
    # LDS-DMA loads (`... lds`) write LDS directly and are dword-only on gfx942: not vectorizable
    loads = [i for cat in VMEM_LOAD_CATEGORIES for i in ctx.executed(cat)
             if bytes_per_lane(i.isa) is not None and not _is_lds_dma(i.isa)
             and i.line_number not in spin_rows(ctx)]  # a flag poll reads one word on purpose
    if not loads:
        return "no executed VMEM load"
    narrow = [i for i in loads if (bytes_per_lane(i.isa) or WIDE_BYTES) < WIDE_BYTES]
    total_exec = sum(i.hit for i in loads)
    narrow_exec = sum(i.hit for i in narrow)
    share = narrow_exec / total_exec if total_exec else 0.0
    if share < NARROW_MIN_EXEC_SHARE:
        return (f"narrow (< {WIDE_BYTES} B/lane) loads are {share:.0%} of VMEM load executions "
                f"(< {NARROW_MIN_EXEC_SHARE:.0%})")
    waves = ctx.traced_waves
    if waves and narrow_exec / waves < NARROW_MIN_PER_WAVE:
        # one narrow load per wave has nothing to merge with: widening needs several per lane
        return (f"{narrow_exec / waves:.1f} narrow load(s) per wave (< {NARROW_MIN_PER_WAVE:g}): a lone "
                "narrow load cannot be merged into a wider one")
    rows = {i.line_number for i in narrow}
    issue_stall = sum(i.stall for i in narrow)
    blamed: defaultdict[int, float] = defaultdict(float)  # row -> wait stall blamed on it
    for w in ctx.waits():
        for p in w.producers:
            n = p.line_number
            if n is not None and n in rows:
                blamed[n] += p.blamed_stall
    target = issue_stall + int(sum(blamed.values()))
    widths = sorted({bytes_per_lane(i.isa) or 0 for i in narrow})
    per_wave = round(narrow_exec / waves, 1) if waves else None
    top = max(narrow, key=lambda i: (i.stall + blamed[i.line_number], -i.line_number))
    sites = []
    for i in sorted(narrow, key=lambda i: -(i.stall + blamed[i.line_number])):
        loc = ctx.location_of(i)
        sites.append(Site(None, [i.line_number], loc.file, loc.line,
                          int(i.stall + blamed[i.line_number])))
    narrowest = widths[0]
    ev = [Evidence("narrow_share_of_vmem_load_executions", round(share, 3), NARROW_MIN_EXEC_SHARE, ">="),
          Evidence("bytes_per_lane", ", ".join(str(w) for w in widths), WIDE_BYTES, "<"),
          Evidence("narrow_load_rows", len(narrow)),
          Evidence("narrow_loads_per_wave", per_wave),
          Evidence("issue_stall_cycles", issue_stall),
          Evidence("blamed_wait_stall_cycles", int(sum(blamed.values())))]
    return [Candidate(
        ctx.location_of(top), ev, target,
        f"{narrow_exec:,} load instructions move {', '.join(str(w) for w in widths)} B per lane each: "
        f"every one costs an issue slot and a memory request, so the kernel issues up to "
        f"{WIDE_BYTES // narrowest}x more loads than 16-byte ones would need and waits on each",
        title=f"narrow {narrowest}-byte loads dominate the memory traffic",  # the engine adds "(N sites)"
        sites=sites)]
