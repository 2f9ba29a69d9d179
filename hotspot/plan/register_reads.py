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

from hotspot.arch.classify import LGKM_PRODUCERS, VM_PRODUCERS, Category, is_wait, mnemonic_of
from hotspot.att.waits.reduce import Producer, WaitBlame
from hotspot.plan.context import PlanContext

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
        isa = ins.isa
        if is_wait(ins.category):
            return reads
        if isa.lower().startswith(STOP_PREFIXES):
            return reads if isa.lower().startswith("s_endpgm") else None
        reads += source_regs(isa)
    return reads


def unneeded_newest(ctx: PlanContext, wait: WaitBlame, producers: list[Producer]) -> list[Producer]:
    """The newest producers (nearest the wait) whose destination the consumers do not read before
    the next wait: a counted wait could leave them in flight. Empty when any of them is a store (a
    drain of stores is a fence) or the reads cannot be known."""
    if len(producers) < 2 or any(not dest_regs(p.isa) for p in producers):
        return []
    if any(p.median_distance_instructions is None for p in producers):
        return []
    reads = consumer_reads(ctx, wait.line_number)
    if reads is None:
        return []
    newest_first = sorted(producers, key=lambda p: (p.median_distance_instructions, -(p.line_number or 0)))
    out = []
    for p in newest_first:
        mn = mnemonic_of(p.isa)
        if "store" in mn or "write" in mn or "atomic" in mn:
            return []
        if any(_overlap(d, r) for d in dest_regs(p.isa) for r in reads):
            break
        out.append(p)
    return out if len(out) < len(producers) else []  # nothing read at all: not a counted-wait case


def _is_lds_dma(p: Producer) -> bool:
    return "lds" in p.isa.lower().replace(",", " ").split()[1:]


def drained_producers(ctx: PlanContext, wait: WaitBlame) -> set[int]:
    """Rows of the producers `wait` need not wait for, per counter (vm and lgkm retire separately)."""
    out: set[int] = set()
    for counter in (VM_PRODUCERS, LGKM_PRODUCERS):
        group = [p for p in wait.producers if p.category in counter]
        if any(_is_lds_dma(p) for p in group):
            continue  # DMA-to-LDS: the consumer reads LDS after a barrier, not registers
        if any(p.category == Category.SMEM for p in group):
            continue  # an outstanding SMEM makes lgkmcnt out of order: only lgkmcnt(0) is safe
        out |= {p.line_number for p in unneeded_newest(ctx, wait, group) if p.line_number is not None}
    return out
