"""Typed, immutable model of one ATT dispatch as read from disk."""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

from hotspot.capture.source import SourceLoc
from hotspot.result import JsonObject
from hotspot.record import record


# The `extra` of every row of a code.json without extra columns: one shared empty dict (read-only).
NO_EXTRA: JsonObject = {}


@record
class CodeRow:
    """One code.json instruction row (kernel pseudo rows are kept separately)."""

    line_number: int  # instruction ordinal (code.json column 2), not a source line
    isa: str
    source_text: str
    source: SourceLoc | None
    codeobj: int
    vaddr: int
    hit: int
    latency: int
    stall: int
    idle: int
    extra: JsonObject = field(default_factory=dict)  # extra columns by header name

    @property
    def issue(self) -> int:
        return self.latency - self.stall


@record
class KernelSymbol:
    """A `; name` pseudo row: the kernel symbol that the following rows belong to."""

    line_number: int
    symbol: str
    demangled: str  # the pseudo row's Source when the decoder wrote it, else ""
    row_index: int  # index in the code list where this kernel's rows start


@record
class CodeTable:
    path: Path
    version: str
    header: tuple[str, ...]
    rows: tuple[CodeRow, ...]
    kernels: tuple[KernelSymbol, ...]
    extra_columns: tuple[str, ...]
    warnings: tuple[str, ...] = ()  # e.g. an unknown decoder version: what was trusted
    # columns the file lacks (the early format-3.0.0 layout: Stall, Idle), read as 0 until
    # rebuilt from the wave files (capture/early_layout.py); `rebuilt_from`: how many wave files
    missing: tuple[str, ...] = ()
    rebuilt_from: int = 0

    def kernel_rows(self, kernel: KernelSymbol) -> tuple[CodeRow, ...]:
        """Rows belonging to `kernel` (up to the next pseudo row)."""
        later = [k.row_index for k in self.kernels if k.row_index > kernel.row_index]
        end = min(later) if later else len(self.rows)
        return self.rows[kernel.row_index:end]
