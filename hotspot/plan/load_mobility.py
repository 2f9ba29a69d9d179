"""Can a load that is waited on too early move? Read from the ISA before a rule says "hoist it".

A load's latency is covered by the work between its issue and its wait. Two edits add work there:
issue the load earlier (above instructions it does not depend on, up to the wait its address
depends on) or wait later (move instructions that do not need its data above the s_waitcnt). When
neither has anything to move, the load is already as early as it can be and its wait as late: the
stall is exposed streaming latency, which only more bytes in flight per wave (or fewer bytes) can
change. Register dependences come from the operands (register_reads.py); they over-count reads, so
the room found is a lower bound, never more than is there.

Straight-line code only: a branch or a loop boundary ends the walk (a load in a loop can move one
iteration ahead, which is the loop rules' fix, so loads in loops are not judged here).
"""

from __future__ import annotations

from hotspot.arch.classify import LOADS, is_wait, mnemonic_of
from hotspot.att.code_totals import InstructionStat
from hotspot.plan.context import PlanContext, in_loop
from hotspot.plan.register_reads import ALL_SOURCES, STOP_PREFIXES, _overlap, dest_regs, source_regs
from hotspot.record import record

Reg = tuple[str, int, int]
LOAD_CATEGORIES = LOADS
# Rows that take no issue time of their own when moved past (labels, padding).
NO_WORK_PREFIXES = ("s_nop", "s_endpgm")


@record
class Mobility:
    """Room to cover a load's latency: cycles of work it could be issued above (`hoist_cycles`, up to
    `depends_on_wait`, the wait its operands come from) and cycles of work after its wait that do
    not need its data (`independent_cycles`)."""

    hoist_rows: list[int]
    hoist_cycles: float
    depends_on_wait: int | None
    independent_rows: list[int]
    independent_cycles: float

    @property
    def cycles(self) -> float:
        return self.hoist_cycles + self.independent_cycles


def _cycles(ctx: PlanContext, ins: InstructionStat) -> float:
    """Time the row takes per traced wave (its latency over the waves, stall included: a stalled
    wait the load moves above is time it overlaps; a loop row counts every iteration)."""
    waves = ctx.traced_waves or ins.hit
    return float(ins.latency) / waves if waves else 0.0


def _loop_ending_at(ctx: PlanContext, row: int) -> tuple[int, int] | None:
    return next(((lo, hi) for lo, hi in ctx.loop_ranges if hi == row and lo < row), None)


def _loop_is_independent(ctx: PlanContext, lo: int, hi: int, needed: list[Reg], written: list[Reg]) -> bool:
    """No row of the loop writes what the load reads, or reads or writes what it overwrites."""
    for n in ctx.order:
        if lo <= n <= hi:
            isa = ctx.instructions[n].isa
            if _reads_any(_writes(isa), needed) or _reads_any(source_regs(isa) + _writes(isa), written):
                return False
    return True


def _is_wait(ins: InstructionStat) -> bool:
    return is_wait(ins.category)


def _is_stop(ins: InstructionStat) -> bool:
    return ins.isa.lower().startswith(STOP_PREFIXES)


def _writes(isa: str) -> list[Reg]:
    """Registers the instruction writes (stores, compares, waits and branches write none)."""
    mn = mnemonic_of(isa)
    return [] if any(k in mn for k in ALL_SOURCES) else dest_regs(isa)


def _reads_any(regs: list[Reg], wanted: list[Reg]) -> bool:
    return any(_overlap(a, b) for a in regs for b in wanted)


def _loaded_before(ctx: PlanContext, order: list[int], at: int) -> list[Reg]:
    """Destination registers of the loads issued before the wait at index `at`, back to the
    previous wait (what that wait makes available)."""
    out: list[Reg] = []
    for n in reversed(order[:at]):
        ins = ctx.instructions[n]
        if _is_wait(ins) or _is_stop(ins):
            break
        if ins.category in LOAD_CATEGORIES:
            out += _writes(ins.isa)
    return out


def load_mobility(ctx: PlanContext, load_row: int, wait_row: int, waited: list[int]) -> Mobility | None:
    """The room to move the load at `load_row` (waited on at `wait_row` together with the loads
    `waited`); None when it cannot be judged (a loop, rows missing from the code)."""
    order = ctx.order
    if load_row not in ctx.instructions or wait_row not in ctx.instructions:
        return None
    if in_loop(ctx, load_row) or in_loop(ctx, wait_row):
        return None
    at, wat = order.index(load_row), order.index(wait_row)
    needed = source_regs(ctx.instructions[load_row].isa)
    written = dest_regs(ctx.instructions[load_row].isa)
    hoist_rows: list[int] = []
    hoist = 0.0
    depends_on: int | None = None
    i = at
    while i > 0:
        i -= 1
        n = order[i]
        ins = ctx.instructions[n]
        isa = ins.isa
        if _is_stop(ins):
            loop = _loop_ending_at(ctx, n)
            if loop is None or not _loop_is_independent(ctx, loop[0], loop[1], needed, written):
                break
            # a loop the load does not depend on: it can be issued before the whole loop
            body = [m for m in order if loop[0] <= m <= loop[1]]
            hoist_rows += body
            hoist += sum(_cycles(ctx, ctx.instructions[m]) for m in body)
            i = order.index(body[0])
            continue
        if _is_wait(ins):
            if _reads_any(needed, _loaded_before(ctx, order, i)):
                depends_on = n
                break
            hoist_rows.append(n)  # independent of what it waits for: the load can issue above it
            hoist += _cycles(ctx, ins)
            continue
        if _reads_any(source_regs(isa) + _writes(isa), written):
            break  # it uses the registers the load overwrites: the load cannot pass it
        if _reads_any(_writes(isa), needed) or ins.category in LOAD_CATEGORIES:
            # part of the address computation (or another load: issue order among loads is kept)
            needed = needed + source_regs(isa)
            continue
        if not isa.lower().startswith(NO_WORK_PREFIXES):
            hoist_rows.append(n)
            hoist += _cycles(ctx, ins)
    tainted: list[Reg] = []
    for r in waited:
        if r in ctx.instructions:
            tainted += dest_regs(ctx.instructions[r].isa)
    independent_rows: list[int] = []
    independent = 0.0
    for n in order[wat + 1:]:
        ins = ctx.instructions[n]
        isa = ins.isa
        if _is_wait(ins) or _is_stop(ins):
            break
        if _reads_any(source_regs(isa), tainted):
            tainted = tainted + _writes(isa)
            continue
        if not isa.lower().startswith(NO_WORK_PREFIXES):
            independent_rows.append(n)
            independent += _cycles(ctx, ins)
    return Mobility(sorted(hoist_rows), round(hoist, 1), depends_on, independent_rows, round(independent, 1))
