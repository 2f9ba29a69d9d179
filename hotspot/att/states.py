"""Wave states (EMPTY/IDLE/EXEC/WAIT/STALL) in total and per source line / instruction.

Per-instruction cycles come from the wave pass (hotspot/att/engine/wavepass.py `_attribute_states`):
each timeline cycle is charged to the instruction current at that time, so the per-line numbers
sum to the timeline totals. WAIT is waiting on a counter or a barrier; STALL is issue blocked
(pipe busy / back-pressure); IDLE is nothing to issue (FORMATS.md §1.2).
"""

from __future__ import annotations


from hotspot.capture import WAVE_STATES, CodeRow
from hotspot.record import record

_EMPTY, _IDLE, _EXEC, _WAIT, _STALL = range(len(WAVE_STATES))


@record
class StateRow:
    label: str  # "file:line" or "#<line_number> <isa>"
    file: str
    line: int | None
    exec: int
    wait: int
    stall: int
    idle: int
    empty: int
    instructions: list[int]  # code.json line numbers charged to this row


@record
class WaveStates:
    waves_read: int
    waves_total: int  # wave files in the dispatch (waves_read < waves_total with --max-waves)
    cycles: int  # Σ (end - begin) over the waves read
    states: dict[str, int]  # state -> cycles, from the timelines
    lines: list[StateRow]  # per source line, by wait + stall desc
    instructions: list[StateRow]  # per instruction, by wait + stall desc


def _row(label: str, file: str, line: int | None, st: list[int], members: list[int]) -> StateRow:
    return StateRow(label, file, line, st[_EXEC], st[_WAIT], st[_STALL], st[_IDLE], st[_EMPTY],
                    sorted(members))


def _order(r: StateRow) -> tuple[int, int, str]:
    return (-(r.wait + r.stall), -r.exec, r.label)


def wave_states(states: list[int], waves_read: int, waves_total: int, cycles: int,
                line_states: dict[int, list[int]], rows_by_line: dict[int, CodeRow]) -> WaveStates:
    by_source: dict[str, tuple[str, int | None, list[int], list[int]]] = {}
    per_instruction: list[StateRow] = []
    for line_number, st in line_states.items():
        row = rows_by_line.get(line_number)
        isa = row.isa if row else ""
        per_instruction.append(_row(f"#{line_number} {isa}".rstrip(), "", None, st, [line_number]))
        if row is None or row.source is None:
            continue
        src = row.source
        acc = by_source.get(src.label)
        if acc is None:
            acc = by_source[src.label] = (src.file, src.line, [0] * len(WAVE_STATES), [])
        for i, v in enumerate(st):
            acc[2][i] += v
        acc[3].append(line_number)
    lines = [_row(label, f, ln, st, members) for label, (f, ln, st, members) in by_source.items()]
    lines.sort(key=_order)
    per_instruction.sort(key=_order)
    return WaveStates(waves_read, waves_total, cycles, dict(zip(WAVE_STATES, states)), lines,
                      per_instruction)
