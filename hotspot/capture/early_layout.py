"""The early format-3.0.0 code.json (2025 decoders): Stall and Idle rebuilt from the wave files.

Such a code.json has only `version` and `code`, rows of eight columns (ISA, _, LineNumber, Source,
Codeobj, Vaddr, Hit, Latency). Its wave files are the modern ones, and the two missing columns are
sums over them (FORMATS.md §1.1; exact on every modern corpus capture, tests/test_early_layout.py):
- Stall of a row = Σ over the waves of the row's per-execution stall (`instructions[i][2]`);
- Idle of a row = Σ over its executions of max(0, time − the latest time + duration of the wave's
  earlier instructions), the latest starting at the wave's `begin` (`time` is the first attempt).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import replace

from hotspot.capture.layout import WaveFile
from hotspot.capture.model import CodeRow, CodeTable
from hotspot.capture.session import keep_bytes
from hotspot.capture.waves import read_wave
from hotspot.errors import bad_file

# Wave bytes kept for the wave pass after the rebuild read them (a 1 GB capture's are not: it reads
# them again).
KEEP_MAX_BYTES = 256 << 20
_DIFFERENT_DECODES = ("the wave files and code.json come from different decodes, or one was edited; "
                      "re-run the decoder on the .att files")


def wave_stall_idle(records: Iterable[Sequence[int]], begin: int,
                    stall: dict[int, int], idle: dict[int, int]) -> None:
    """Add one wave's per-line stall and idle (records [time, category, stall, duration, line] in
    the order the wave executed them) into `stall` and `idle`."""
    latest = begin
    for rec in records:
        time, line = rec[0], rec[4]
        stall[line] = stall.get(line, 0) + rec[2]
        gap = time - latest
        if gap > 0:
            idle[line] = idle.get(line, 0) + gap
        end = time + rec[3]
        if end > latest:
            latest = end


def rebuild_columns(table: CodeTable, waves: Sequence[WaveFile], max_bytes: int | None) -> CodeTable:
    """`table` with its missing Stall and Idle columns rebuilt from every wave file of the
    dispatch (all of them, whatever --max-waves: code.json's Hit and Latency are over all)."""
    # Within a command the wave pass reads these files next: their bytes are kept for it (up to
    # KEEP_MAX_BYTES in all), so each wave file is opened once.
    sizes = []
    for wf in waves:
        try:
            sizes.append(os.stat(wf.where).st_size)
        except OSError:
            sizes.append(0)  # its reader names the problem
    if sum(sizes) <= KEEP_MAX_BYTES:
        keep_bytes(wf.where for wf in waves)
    stall: dict[int, int] = {}
    idle: dict[int, int] = {}
    for wf in waves:
        wave = read_wave(wf, max_bytes)
        wave_stall_idle(wave.instructions, wave.begin, stall, idle)
    rows: list[CodeRow] = []
    for row in table.rows:
        s = stall.get(row.line_number, 0)
        if s > row.latency:
            raise bad_file(table.path, f"line {row.line_number}: the stall rebuilt from the wave "
                           f"files ({s}) is larger than code.json's Latency ({row.latency})",
                           _DIFFERENT_DECODES, code="bad-value")
        rows.append(replace(row, stall=s, idle=idle.get(row.line_number, 0)))
    names = " and ".join(table.missing)
    warning = (f"{table.path}: early format-3.0.0 code.json (no header, rows without {names}): "
               f"{names} rebuilt from the {len(waves)} wave file(s) (stall: the sum of each "
               "instruction's stall; idle: the gaps before each instruction)")
    return replace(table, rows=tuple(rows), warnings=(*table.warnings, warning),
                   rebuilt_from=len(waves))
