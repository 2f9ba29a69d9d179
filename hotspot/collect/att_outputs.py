"""What an ATT run produced: the dispatch dirs, which are empty, which is best, was anything truncated.

A dispatch whose waves never reached the traced CU still gets a directory with `"code": null` and no
wave files (FORMATS.md §1): it is marked empty and kept. The rest are ranked as every command ranks
them (hotspot/capture/select.py). A raw `.att` file close to the (one, shared) buffer size, or the decoder
saying data was lost, means the trace was cut short.
"""

from __future__ import annotations

import re
from pathlib import Path
from hotspot.record import record

ATT_FILE_RE = re.compile(r"_(\d+)_shader_engine_(\d+)_(\d+)\.att$")
# A raw trace within this fraction of att_buffer_size filled the buffer (issue 5: "within 5%").
TRUNCATION_MARGIN = 0.05
TRUNCATION_PHRASES = ("data lost", "buffer full")
# Next size to suggest: double, up to the largest the tool accepts in one 32-bit value.
BUFFER_GROWTH = 2
MAX_BUFFER_SIZE = 0xFFFFFFFF


@record
class DispatchOutput:
    path: Path
    agent: int
    dispatch_id: int
    waves: int
    executed_instructions: int  # rows with Hit > 0
    instructions_hit: int  # Σ Hit: wave-level instruction executions
    empty: bool
    truncated: bool = False
    note: str = ""


@record
class Truncation:
    file: Path
    dispatch_id: int | None
    size: int
    message: str


def find_dispatches(root: Path) -> list[DispatchOutput]:
    """Every dispatch dir the run produced, best first, by the ranking every command uses
    (hotspot/capture/select.py), so a later `hotspot analyze RUNDIR` picks the same one."""
    from hotspot.capture import OK, find_dispatch_dirs, parse_dir_name, rank_dispatches

    dirs = find_dispatch_dirs(root)
    ranking, _ = rank_dispatches(dirs) if dirs else ([], [])
    out = []
    for c in ranking:
        agent, dispatch = parse_dir_name(Path(c.path).name)
        note = "" if c.status == OK or c.status.startswith("empty") else c.status
        out.append(DispatchOutput(Path(c.path), agent if agent is not None else -1,
                                  dispatch if dispatch is not None else -1, c.waves,
                                  c.executed_instructions, c.instructions_hit, c.status != OK,
                                  note=note))
    return out


def next_buffer_size(buffer_size: int) -> int:
    return min(buffer_size * BUFFER_GROWTH, MAX_BUFFER_SIZE)


def find_truncation(root: Path, buffer_size: int, decoder_output: str) -> list[Truncation]:
    found: list[Truncation] = []
    limit = buffer_size * (1 - TRUNCATION_MARGIN)
    bigger = hex(next_buffer_size(buffer_size))
    for f in sorted(root.rglob("*.att")):
        size = f.stat().st_size
        if size >= limit:
            m = ATT_FILE_RE.search(f.name)
            did = int(m.group(3)) if m else None
            found.append(Truncation(f, did, size, (
                f"{f.name}: {size:,} bytes, within {TRUNCATION_MARGIN:.0%} of att_buffer_size "
                f"{hex(buffer_size)} (one buffer shared by all shader engines): the trace was probably "
                f"truncated; rerun with --buffer-size {bigger}")))
    low = decoder_output.lower()
    for phrase in TRUNCATION_PHRASES:
        if phrase in low:
            found.append(Truncation(Path(""), None, 0, (
                f"the profiler reported '{phrase}': the trace is incomplete; rerun with --buffer-size {bigger} "
                "or trace fewer shader engines/iterations")))
            break
    return found
