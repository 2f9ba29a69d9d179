"""What an ATT run produced: the dispatch dirs, which are empty, which is best, was anything truncated.

A dispatch whose waves never reached the traced CU still gets a directory with `"code": null` and no
wave files (FORMATS.md §1): it is marked empty and kept. The rest are ranked by traced waves, then
executed instructions. A raw `.att` file close to the (one, shared) buffer size, or the decoder
saying data was lost, means the trace was cut short.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

DISPATCH_DIR_RE = re.compile(r"^ui_output_agent_(\d+)_dispatch_(\d+)$")
WAVE_FILE_RE = re.compile(r"^se\d+_sm\d+_sl\d+_wv\d+\.json$")
ATT_FILE_RE = re.compile(r"_(\d+)_shader_engine_(\d+)_(\d+)\.att$")
# A raw trace within this fraction of att_buffer_size filled the buffer (issue 5: "within 5%").
TRUNCATION_MARGIN = 0.05
TRUNCATION_PHRASES = ("data lost", "buffer full")
# Next size to suggest: double, up to the largest the tool accepts in one 32-bit value.
BUFFER_GROWTH = 2
MAX_BUFFER_SIZE = 0xFFFFFFFF
HIT_COLUMN = "hit"  # code.json header name of the per-row execution count (FORMATS.md §1.1)
HIT_INDEX = 6


@dataclass(frozen=True)
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

    def rank_key(self) -> tuple:
        return (-self.waves, -self.instructions_hit, -self.executed_instructions, self.dispatch_id, str(self.path))


@dataclass(frozen=True)
class Truncation:
    file: Path
    dispatch_id: int | None
    size: int
    message: str


def _hit_index(header: object) -> int:
    names = header if isinstance(header, list) else str(header or "").split(",")
    for i, n in enumerate(names):
        if str(n).strip().lower() == HIT_COLUMN:
            return i
    return HIT_INDEX


def summarize_dispatch(path: Path) -> DispatchOutput:
    m = DISPATCH_DIR_RE.match(path.name)
    agent, dispatch = (int(m.group(1)), int(m.group(2))) if m else (-1, -1)
    waves = sum(1 for p in path.iterdir() if WAVE_FILE_RE.match(p.name))
    note = ""
    executed = hits = 0
    try:
        doc = json.loads((path / "code.json").read_bytes())
        rows = doc.get("code") if isinstance(doc, dict) else None
        if isinstance(rows, list):
            idx = _hit_index(doc.get("header"))
            for row in rows:
                if isinstance(row, list) and len(row) > idx and isinstance(row[idx], (int, float)) and row[idx] > 0:
                    executed += 1
                    hits += int(row[idx])
        elif rows is not None:
            note = "code.json: 'code' is neither a list nor null"
    except (OSError, ValueError) as exc:
        note = f"code.json unreadable: {exc}"
    empty = waves == 0 or executed == 0
    return DispatchOutput(path, agent, dispatch, waves, executed, hits, empty, note=note)


def find_dispatches(root: Path) -> list[DispatchOutput]:
    found = sorted(p for p in root.rglob("ui_output_agent_*") if p.is_dir() and (p / "code.json").is_file())
    return sorted((summarize_dispatch(p) for p in found), key=DispatchOutput.rank_key)


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
