"""`narrow-loads`: memory traffic issued as many narrow per-lane loads (1-8 bytes) instead of 16-byte
ones. The first fix experts give for a load-bound kernel: every load instruction costs an issue slot
and a request whatever its width, so 2-byte loads move an eighth of what a dwordx4 moves per slot."""

from __future__ import annotations

import re
from collections import defaultdict

from hotspot.arch.classify import Category, mnemonic_of
from hotspot.plan.context import PlanContext
from hotspot.plan.model import Candidate, Evidence, Outcome, Rule, Site
from hotspot.plan.spin_rules import spin_rows

# Bytes per lane of a VMEM load, from its mnemonic's size suffix (gfx9 buffer/global/flat loads).
WIDTH_BYTES = (("dwordx4", 16), ("b128", 16), ("dwordx3", 12), ("b96", 12), ("dwordx2", 8),
               ("b64", 8), ("dword", 4), ("b32", 4), ("ushort", 2), ("sshort", 2), ("short", 2),
               ("u16", 2), ("i16", 2), ("d16", 2), ("ubyte", 1), ("sbyte", 1), ("byte", 1),
               ("u8", 1), ("i8", 1))
WIDE_BYTES = 16  # dwordx4: the widest per-lane load, what each narrow load could be
# The rule fires when narrow loads are at least this share of the executed VMEM load instructions.
NARROW_MIN_EXEC_SHARE = 0.5
# Vectorizing merges narrow loads of one lane: it needs at least two of them per wave.
NARROW_MIN_PER_WAVE = 2.0
VMEM_LOAD_CATEGORIES = (Category.VMEM_LOAD, Category.FLAT)  # in taxonomy order (the sites' order)
_LOAD = re.compile(r"^(buffer|global|flat|tbuffer)_load_(?:lds_)?(?P<size>[a-z0-9_]+?)(?:_d16_hi|_d16)?$")


def bytes_per_lane(isa: str) -> int | None:
    """Per-lane bytes of a VMEM load mnemonic; None for anything else (or an unknown size)."""
    mn = mnemonic_of(isa)
    m = _LOAD.match(mn)
    if m is None:
        return None
    size = m["size"]
    for suffix, width in WIDTH_BYTES:
        if size == suffix or size.endswith("_" + suffix) or size.startswith(suffix):
            return width
    return None


_STORE = re.compile(r"^(buffer|global|flat)_store_(?P<size>[a-z0-9_]+?)(?:_d16_hi|_d16)?$")


def store_bytes_per_lane(isa: str) -> int | None:
    """Per-lane bytes of a VMEM store mnemonic; None for anything else."""
    mn = mnemonic_of(isa)
    m = _STORE.match(mn)
    if m is None:
        return None
    for suffix, width in WIDTH_BYTES:
        if m["size"] == suffix or m["size"].startswith(suffix):
            return width
    return None


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
