"""Register definitions and uses of one instruction from its operands, and straight-line blocks
from the execution counts: what a rule needs to say "#B needs the result of #A" only when the ISA
shows it (A writes a register B reads, and no branch lands between them).

Registers are single names: `v12`, `s3`, `a7`, `vcc_lo`, `exec_hi`, `m0` (a range `v[4:7]` is four
names, `vcc` the pair). The destination is the first operand, and the second one too for the
carry-out forms (`v_add_co_u32 v1, vcc, ...`, `v_div_scale`, `v_mad_u64_u32`); stores, compares
into SCC and the waits read every operand.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hotspot.att.code_totals import InstructionStat
from hotspot.plan.register_reads import ALL_SOURCES, STOP_PREFIXES

_TOKEN = re.compile(r"(?<!\w)(?:([vsa])(?:(\d+)|\[(\d+):(\d+)\])|(vcc|exec|flat_scratch|xnack_mask)(_lo|_hi)?|(m0))(?!\w)")
# VOP3b forms: a vector destination and a scalar carry/flag destination (the second operand).
TWO_DESTINATIONS = ("_co_", "v_div_scale", "v_mad_u64_u32", "v_mad_i64_i32")
# Instructions with no destination operand: every operand is read.
NO_DESTINATION = tuple(k for k in ALL_SOURCES if k != "v_cmpx") + ("s_nop", "s_barrier", "s_setprio",
                                                                   "s_sleep", "s_endpgm")


def registers(text: str) -> set[str]:
    """Every register an operand text names, one name per register (`v[4:7]` -> v4..v7)."""
    out: set[str] = set()
    for m in _TOKEN.finditer(text.lower()):
        kind, one, lo, hi, named, half, m0 = m.groups()
        if kind is not None:
            first, last = (int(one), int(one)) if one is not None else (int(lo), int(hi))
            out.update(f"{kind}{n}" for n in range(first, last + 1))
        elif named is not None:
            out.update([f"{named}{half}"] if half else [f"{named}_lo", f"{named}_hi"])
        elif m0 is not None:
            out.add("m0")
    return out


def _split(isa: str) -> tuple[str, list[str]]:
    parts = isa.strip().split(None, 1)
    if not parts:
        return "", []
    ops = [o.strip() for o in parts[1].split(",")] if len(parts) > 1 else []
    return parts[0].lower(), ops


def _dest_count(mnemonic: str, ops: list[str]) -> int:
    if any(k in mnemonic for k in NO_DESTINATION) or not ops:
        return 0
    if any(k in mnemonic for k in TWO_DESTINATIONS) and len(ops) > 1:
        second = registers(ops[1])
        if second and not any(n[0] == "v" and n[1:].isdigit() for n in second):  # a scalar carry out
            return 2
    return 1


def writes(isa: str) -> set[str]:
    """Registers the instruction writes (its destination operands; `v_cmpx` also writes EXEC)."""
    mnemonic, ops = _split(isa)
    out: set[str] = set()
    for op in ops[:_dest_count(mnemonic, ops)]:
        out |= registers(op)
    if mnemonic.startswith("v_cmpx"):
        out |= {"exec_lo", "exec_hi"}
    return out


def reads(isa: str) -> set[str]:
    """Registers the instruction reads (every operand after its destinations)."""
    mnemonic, ops = _split(isa)
    out: set[str] = set()
    for op in ops[_dest_count(mnemonic, ops):]:
        out |= registers(op)
    return out


def is_block_end(isa: str) -> bool:
    """A branch or the end of the program: the next row may be reached another way."""
    return isa.strip().lower().startswith(STOP_PREFIXES)


def straight_line(rows: Sequence[InstructionStat]) -> bool:
    """Rows in static order run as one straight-line piece: none is a branch (but the last may
    be) and all ran the same number of times. A branch landing on one of them (a control-flow
    join) would add executions to it and to what follows, so equal counts prove there is none."""
    if not rows:
        return False
    hits = {r.hit for r in rows}
    return len(hits) == 1 and not any(is_block_end(r.isa) for r in rows[:-1])
