"""`open_capture`: one dispatch as the capture layer reads it, the model every analysis starts from.

The dispatch dir's listing and filenames.json, its code table, the kernel chosen in it (code.json may
hold several) with that kernel's rows, and the side files named with --meta. Heavy parts (wave
files, occupancy.json, snapshots, side files) stay behind their readers and are read on demand, once
per command (capture/session.py).
"""

from __future__ import annotations

from pathlib import Path

from hotspot.capture.codejson import EMPTY_TRACE_HINT, read_code_json
from hotspot.capture.layout import DispatchDir, WaveFile, open_dispatch
from hotspot.capture.model import CodeRow, CodeTable, KernelSymbol
from hotspot.capture.select import select_kernel
from hotspot.errors import EmptyTraceError
from hotspot.record import record


@record
class Capture:
    dispatch: DispatchDir
    table: CodeTable
    kernel: KernelSymbol | None
    rows: tuple[CodeRow, ...]        # the chosen kernel's rows
    meta: tuple[Path, ...] = ()      # side files or folders named explicitly (--meta)
    warnings: tuple[str, ...] = ()

    @property
    def path(self) -> Path:
        return self.dispatch.path

    @property
    def wave_files(self) -> tuple[WaveFile, ...]:
        return self.dispatch.wave_files

    @property
    def pc_sampling(self) -> bool:
        return self.dispatch.pc_sampling

    @property
    def executed(self) -> list[CodeRow]:
        return [r for r in self.rows if r.hit > 0]


def open_capture(d: Path, kernel_regex: str | None = None, max_bytes: int | None = None,
                 meta: tuple[Path, ...] = ()) -> Capture:
    """The Capture of one dispatch dir; EmptyTraceError when no wave reached the traced CU."""
    disp = open_dispatch(d)
    table = read_code_json(d / "code.json", max_bytes)
    if not disp.pc_sampling and not disp.wave_files:
        raise EmptyTraceError(f"{d}: empty trace: no wave files, so no wave reached the traced CU",
                              EMPTY_TRACE_HINT)
    warnings = list(disp.warnings) + list(table.warnings)
    kernel, rows = select_kernel(table, kernel_regex, warnings)
    if not disp.pc_sampling and not any(r.hit > 0 for r in rows):
        raise EmptyTraceError(f"{d}: empty trace: {len(disp.wave_files)} wave file(s) but no "
                              "executed instruction in code.json", EMPTY_TRACE_HINT)
    return Capture(disp, table, kernel, rows, meta, tuple(warnings))
