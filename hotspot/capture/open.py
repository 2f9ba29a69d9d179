"""`open_capture`: one dispatch as the capture layer reads it, the model every analysis starts from.

The dispatch dir's listing and filenames.json, its code table, the kernel chosen in it (code.json may
hold several) with that kernel's rows, and the side files named with --meta. The rest is read when
first asked for, once per Capture (and once per command, capture/session.py): the arch (side files
and the ISA), the kernel's rows in the kernel trace / rocpd side files (its resources and launch),
occupancy.json, realtime.json, the source map (snapshots.json, --source-map) and the wave files.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from hotspot.capture.code_table import read_code_table
from hotspot.capture.codejson import EMPTY_TRACE_HINT
from hotspot.capture.layout import DispatchDir, WaveFile, open_dispatch
from hotspot.capture.model import CodeRow, CodeTable, KernelSymbol
from hotspot.capture.select import select_kernel
from hotspot.errors import EmptyTraceError
from hotspot.record import record

if TYPE_CHECKING:
    from hotspot.arch.arch import Arch
    from hotspot.capture.dispatch_rows import KernelRows
    from hotspot.capture.occupancy_json import OccupancyTrace
    from hotspot.capture.realtime import Realtime
    from hotspot.capture.snapshots import SourceMap
    from hotspot.capture.waves import Wave

T = TypeVar("T")


@record
class Capture:
    dispatch: DispatchDir
    table: CodeTable
    kernel: KernelSymbol | None
    rows: tuple[CodeRow, ...]        # the chosen kernel's rows
    meta: tuple[Path, ...] = ()      # side files or folders named explicitly (--meta)
    warnings: tuple[str, ...] = ()
    # what was read on demand: (value, the warnings reading it gave), by what was asked
    on_demand: dict[str, tuple[Any, tuple[str, ...]]] = field(default_factory=dict, compare=False,
                                                               repr=False)

    def _once(self, key: str, warnings: list[str] | None, build: Callable[[list[str]], T]) -> T:
        """`build`'s value, built on the first call; its warnings go to every caller's list."""
        if key not in self.on_demand:
            said: list[str] = []
            self.on_demand[key] = (build(said), tuple(said))
        value, said_then = self.on_demand[key]
        if warnings is not None:
            warnings.extend(said_then)
        return value  # type: ignore[no-any-return]  # what build() gave for this key

    @property
    def path(self) -> Path:
        return self.dispatch.path

    @property
    def wave_files(self) -> Sequence[WaveFile]:
        return self.dispatch.wave_files

    @property
    def pc_sampling(self) -> bool:
        return self.dispatch.pc_sampling

    @property
    def executed(self) -> list[CodeRow]:
        return [r for r in self.rows if r.hit > 0]

    def arch(self, override: str | None = None) -> Arch:
        """The GPU the capture ran on (capture/target.py): --arch, the executed ISA, side files."""
        from hotspot.capture.target import detect_arch

        return self._once(f"arch {override}", None, lambda _: detect_arch(
            self.path, (r.isa for r in self.executed), override, self.meta,
            self.kernel.symbol if self.kernel is not None else ""))

    def kernel_rows(self, warnings: list[str]) -> list[KernelRows]:
        """The traced kernel's rows in the side files listing dispatches, nearest file of each kind
        (capture/dispatch_rows.py): its resources and its launch."""
        from hotspot.capture.dispatch_rows import kernel_rows

        return self._once("kernel rows", warnings, lambda said: kernel_rows(
            self.path, self.dispatch.dispatch_id, self.kernel, said, self.meta))

    def occupancy(self) -> OccupancyTrace | None:
        """occupancy.json (None without one); an unreadable one is an InputError naming it."""
        from hotspot.capture.occupancy_json import read_occupancy_json

        path = self.path / "occupancy.json"
        return read_occupancy_json(path) if path.is_file() else None

    def realtime(self, warnings: list[str]) -> Realtime | None:
        """realtime.json's clock maps (None, with a warning when unusable)."""
        from hotspot.capture.realtime import read_dispatch_realtime

        return self._once("realtime", warnings, lambda said: read_dispatch_realtime(self.path, said))

    def source_map(self, warnings: list[str], remaps: tuple[tuple[str, str], ...] = ()) -> SourceMap:
        """snapshots.json with the --source-map checkouts to fall back on."""
        from hotspot.capture.snapshots import load_source_map

        return self._once(f"source map {remaps}", warnings,
                          lambda said: load_source_map(self.path, said, remaps))

    def read_wave(self, wf: WaveFile, max_bytes: int | None = None) -> Wave:
        """One of the capture's wave files, its values checked."""
        from hotspot.capture.waves import read_wave

        return read_wave(wf, max_bytes)


def open_capture(d: Path, kernel_regex: str | None = None, max_bytes: int | None = None,
                 meta: tuple[Path, ...] = ()) -> Capture:
    """The Capture of one dispatch dir; EmptyTraceError when no wave reached the traced CU."""
    disp = open_dispatch(d)
    table = read_code_table(d, max_bytes)
    if not disp.pc_sampling and not disp.wave_files:
        raise EmptyTraceError(f"{d}: empty trace: no wave files, so no wave reached the traced CU",
                              EMPTY_TRACE_HINT)
    warnings = list(disp.warnings) + list(table.warnings)
    kernel, rows = select_kernel(table, kernel_regex, warnings)
    if not disp.pc_sampling and not any(r.hit > 0 for r in rows):
        raise EmptyTraceError(f"{d}: empty trace: {len(disp.wave_files)} wave file(s) but no "
                              "executed instruction in code.json", EMPTY_TRACE_HINT)
    return Capture(disp, table, kernel, rows, meta, tuple(warnings))
