"""Loops, two ways that answer two questions (hence two finders, not one):

- `loops_taken`: the loops the waves ran, from the executed order (a taken branch to a lower line
  number closes a loop), measured (iterations, stall, hot wait): the report's loops.
- `loops_in_code`: every backward branch in the ISA, from its offsets, known before any wave is
  read: the scopes the wave pass times for the matrix-core/VALU issue shares.

The loop spans code rows [target, branch]. Iterations are the executions of its first row (the
header) over the waves read, so they include the first entry of each wave; the back-edge count is
reported beside them. Stall is the wave-read stall of the rows in the range (nested loops overlap,
so loop shares are not additive).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hotspot.arch.classify import Category, classify, is_wait
from hotspot.att.waits.reduce import WaitBlame
from hotspot.capture import CodeRow
from hotspot.record import record

# gfx9 SOPP branches: `s_branch`/`s_cbranch_*` with a signed 16-bit dword offset from the next
# instruction (the decoder prints it unsigned: 64831 = -705).
_BRANCH = re.compile(r"^s_(?:c)?branch\w*\s+(\d+)\s*$")
SIMM16 = 1 << 16
SIMM16_SIGN = 1 << 15
BRANCH_BYTES = 4
DWORD_BYTES = 4


@record
class HotWait:
    line_number: int
    isa: str
    category: str
    stall: int
    share_of_loop: float  # of the loop's stall
    top_producer: str  # "#<line> <isa>" of the producer blamed most, "" when none
    top_producer_source: str
    top_producer_share: float  # of this wait's stall


@record
class Loop:
    first_line_number: int  # header: the backward branch's target (code.json line number)
    last_line_number: int  # the backward branch
    source_range: str  # "file:lo-hi" of the rows in the range (most common file), "" without source
    iterations: int  # executions of the header over the waves read
    back_edges: int  # backward branches taken
    waves: int  # waves that took the backward branch
    iterations_per_wave: float
    stall: int
    share: float  # of the stall over the waves read
    hot_wait: HotWait | None


def _source_range(members: Sequence[CodeRow]) -> str:
    by_file: dict[str, list[int]] = {}
    for r in members:
        if r.source is not None and r.source.line is not None:
            by_file.setdefault(r.source.file, []).append(r.source.line)
    if not by_file:
        return ""
    file = min(by_file, key=lambda f: (-len(by_file[f]), f))
    lines = by_file[file]
    lo, hi = min(lines), max(lines)
    return f"{file}:{lo}" if lo == hi else f"{file}:{lo}-{hi}"


def loops_taken(backedges: dict[tuple[int, int], list[int]], rows: Sequence[CodeRow],
                per_line: dict[int, list[int]], waits: Sequence[WaitBlame], total_stall: int
                ) -> list[Loop]:
    """The loops the waves ran, measured: one per backward branch taken in the wave pass
    ((branch, target) -> [times taken, waves]). Not `loops_in_code` (every backward branch in the
    ISA, found before the waves are read): a loop no traced wave entered is not reported here."""
    waits_by_line = {w.line_number: w for w in waits}
    out = []
    for (branch, target), (taken, waves) in backedges.items():
        members = [r for r in rows if target <= r.line_number <= branch]
        stall = sum(per_line.get(r.line_number, (0, 0, 0))[2] for r in members)
        iterations = per_line.get(target, (0, 0, 0))[0]
        hot = _hot_wait(members, per_line, waits_by_line, stall)
        out.append(Loop(target, branch, _source_range(members), iterations, taken, waves,
                        iterations / waves if waves else 0.0, stall,
                        stall / total_stall if total_stall else 0.0, hot))
    out.sort(key=lambda lp: (-lp.stall, lp.first_line_number, lp.last_line_number))
    return out


def _hot_wait(members: Sequence[CodeRow], per_line: dict[int, list[int]],
              waits_by_line: dict[int, WaitBlame], loop_stall: int) -> HotWait | None:
    best: CodeRow | None = None
    best_stall = 0
    for r in members:
        cat = classify(r.isa).category
        if not (is_wait(cat) or cat is Category.BARRIER):
            continue
        st = per_line.get(r.line_number, (0, 0, 0))[2]
        if st > best_stall:
            best, best_stall = r, st
    if best is None:
        return None
    blame = waits_by_line.get(best.line_number)
    top = next((p for p in blame.producers if p.line_number is not None), None) if blame else None
    return HotWait(best.line_number, best.isa, classify(best.isa).category, best_stall,
                   best_stall / loop_stall if loop_stall else 0.0,
                   f"#{top.line_number} {top.isa}" if top else "", top.source if top else "",
                   top.share if top else 0.0)


def loops_in_code(rows: Sequence[CodeRow]) -> list[tuple[int, int]]:
    """(target row, branch row) of every backward branch the code has, from the ISA's offsets and
    the rows' addresses: the loops a wave can run, known before any wave is read.

    Not `loops_taken`: that one reads the branches the waves took (only known after the wave
    pass) and measures them; this one is what the wave pass needs up front (the issue-share
    accumulator times each loop as it reads the waves, hotspot/att/issue_share.py), taken or not.
    trace_ceilings keeps the scopes `loops_taken` also found."""
    at = {(r.codeobj, r.vaddr): r.line_number for r in rows}
    out = []
    for r in rows:
        m = _BRANCH.match(r.isa.strip().lower())
        if m is None:
            continue
        imm = int(m.group(1)) % SIMM16
        offset = imm - SIMM16 if imm >= SIMM16_SIGN else imm
        target = at.get((r.codeobj, r.vaddr + BRANCH_BYTES + offset * DWORD_BYTES))
        if target is not None and target < r.line_number:
            out.append((target, r.line_number))
    return sorted(set(out))
