"""Which producers an s_waitcnt need not wait for, from the registers its consumers read
(used by waits_rules.assign_pairs to route pairs to `conservative-drain`, drain_rules.py).

Counters retire in order within one type (HARDWARE.md §3): `vmcnt(N)`/`lgkmcnt(N)` lets the N
newest operations stay in flight. When the instructions between a wait and the next wait read only
the registers of the older producers, the newest ones could stay outstanding: a counted wait
(`cnt(k)`, k = the unread newest loads) starts the consumer as soon as its own data is there.
The register read-set is taken from the operands (every operand after the destination; all operands
of stores and compares), which over-counts reads and so under-reports drains, never the reverse.
"""

from __future__ import annotations

import re

from hotspot.plan.context import PlanContext
from hotspot.result import JsonObject

_REG = re.compile(r"\b([vsa])(?:(\d+)|\[(\d+):(\d+)\])")
# Instructions whose first operand is read, not written.
ALL_SOURCES = ("store", "write", "atomic", "s_cmp", "s_bitcmp", "v_cmpx", "s_waitcnt", "s_cbranch")
STOP_PREFIXES = ("s_cbranch", "s_branch", "s_setpc", "s_swappc", "s_endpgm")


def _regs(text: str) -> list[tuple[str, int, int]]:
    out = []
    for m in _REG.finditer(text.lower()):
        if m[2] is not None:
            out.append((m[1], int(m[2]), int(m[2])))
        else:
            out.append((m[1], int(m[3]), int(m[4])))
    return out


def dest_regs(isa: str) -> list[tuple[str, int, int]]:
    parts = isa.strip().split(None, 1)
    if len(parts) < 2:
        return []
    return _regs(parts[1].split(",")[0])


def source_regs(isa: str) -> list[tuple[str, int, int]]:
    parts = isa.strip().split(None, 1)
    if len(parts) < 2:
        return []
    mn = parts[0].lower()
    ops = parts[1].split(",")
    return _regs(",".join(ops if any(k in mn for k in ALL_SOURCES) else ops[1:]))


def _overlap(a: tuple[str, int, int], b: tuple[str, int, int]) -> bool:
    return a[0] == b[0] and a[1] <= b[2] and b[1] <= a[2]


def consumer_reads(ctx: PlanContext, wait_row: int) -> list[tuple[str, int, int]] | None:
    """Registers read between the wait and the next wait; None when a branch comes first (the
    reads on the other path are unknown)."""
    reads: list[tuple[str, int, int]] = []
    order = ctx.order
    try:
        at = order.index(wait_row)
    except ValueError:
        return None
    for n in order[at + 1:]:
        ins = ctx.instructions[n]
        isa = str(ins.get("isa") or "")
        if str(ins.get("category", "")).startswith("wait-"):
            return reads
        if isa.lower().startswith(STOP_PREFIXES):
            return reads if isa.lower().startswith("s_endpgm") else None
        reads += source_regs(isa)
    return reads


def unneeded_newest(ctx: PlanContext, wait: JsonObject, producers: list[JsonObject]) -> list[JsonObject]:
    """The newest producers (nearest the wait) whose destination the consumers do not read before
    the next wait: a counted wait could leave them in flight. Empty when any of them is a store (a
    drain of stores is a fence) or the reads cannot be known."""
    if len(producers) < 2 or any(not dest_regs(str(p.get("isa") or "")) for p in producers):
        return []
    dist = [p.get("median_distance_instructions") for p in producers]
    if not all(isinstance(d, (int, float)) for d in dist):
        return []
    reads = consumer_reads(ctx, int(wait.get("line_number", -1)))
    if reads is None:
        return []
    newest_first = sorted(producers, key=lambda p: (p["median_distance_instructions"], -int(p.get("line_number", 0))))
    out = []
    for p in newest_first:
        mn = str(p.get("isa") or "").split(None, 1)[0].lower()
        if "store" in mn or "write" in mn or "atomic" in mn:
            return []
        if any(_overlap(d, r) for d in dest_regs(str(p.get("isa") or "")) for r in reads):
            break
        out.append(p)
    return out if len(out) < len(producers) else []  # nothing read at all: not a counted-wait case


def _is_lds_dma(p: JsonObject) -> bool:
    return "lds" in str(p.get("isa") or "").lower().replace(",", " ").split()[1:]


def drained_producers(ctx: PlanContext, wait: JsonObject) -> set[int]:
    """Rows of the producers `wait` need not wait for, per counter (vm and lgkm retire separately)."""
    producers = [p for p in wait.get("producers") or [] if isinstance(p, dict)]
    out: set[int] = set()
    for counter in (VM_PRODUCERS, LGKM_PRODUCERS):
        group = [p for p in producers if p.get("category") in counter]
        if any(_is_lds_dma(p) for p in group):
            continue  # DMA-to-LDS: the consumer reads LDS after a barrier, not registers
        if any(p.get("category") == "smem" for p in group):
            continue  # an outstanding SMEM makes lgkmcnt out of order: only lgkmcnt(0) is safe
        out |= {int(p["line_number"]) for p in unneeded_newest(ctx, wait, group)}
    return out


VM_PRODUCERS = frozenset({"vmem-load", "vmem-store", "vmem-atomic", "flat", "scratch"})
LGKM_PRODUCERS = frozenset({"smem", "lds"})
