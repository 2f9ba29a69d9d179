"""Native fast path for wave files (hotspot/att/engine/_wavescan.c), and what to do without it.

The extension is built by `pip install` when a C compiler is present (setup.py marks it optional);
without it, or with HOTSPOT_PURE_PYTHON=1 in the environment, every wave file is parsed by orjson
and folded by the Python code, with the same results. `native_status()` says which one runs.

A scanned wave holds its columns as int64 buffers: `times`, `cats`, `stalls`, `durations`, `lines`
(one entry per executed instruction) and `states`, `cycles` (one per timeline segment).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from types import ModuleType
from typing import Any, NamedTuple

import orjson

from hotspot.capture import (
    Wave,
    WaveFile,
    check_wave,
    read_wave_bytes,
    scanned_ranges,
    wave_of_bytes,
)
from hotspot.capture import read_wave as read_wave_checked
from hotspot.capture import WaitcntEdges

# WAVESCAN_ABI in _wavescan.c: the calls this module makes. A build from older source (an editable
# install not rebuilt after an update) has another value and is not used: it would fail mid-run.
NATIVE_ABI = 6

_built: ModuleType | None
try:
    from hotspot.att.engine import _wavescan  # type: ignore[attr-defined]  # a C extension: no stub
    _built = _wavescan
except ImportError:  # no compiler at install time: the Python path does the same work
    _built = None


def is_current(module: ModuleType) -> bool:
    """True when `module` was built from the _wavescan.c this package calls."""
    return getattr(module, "ABI", None) == NATIVE_ABI


_stale = _built is not None and not is_current(_built)
_native = None if _stale else _built

PURE_PYTHON_ENV = "HOTSPOT_PURE_PYTHON"


def native() -> ModuleType | None:
    """The extension module, or None when absent, out of date or disabled by HOTSPOT_PURE_PYTHON."""
    if _native is None or os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return None
    return _native


def native_status() -> str:
    if _stale:
        return "out of date (built from an older _wavescan.c; rebuild: pip install -e . or pip install .)"
    if _native is None:
        return "absent (built by pip install when a C compiler is present)"
    if native() is None:
        return f"disabled by {PURE_PYTHON_ENV}"
    return "enabled"


class ScannedWave(NamedTuple):
    begin: int
    end: int
    cu: int | None
    times: bytes
    cats: bytes
    stalls: bytes
    durations: bytes
    lines: bytes
    states: bytes
    cycles: bytes
    waitcnt_json: bytes | None  # the 'waitcnt' array as written (None when null or absent)
    edges_key: bytes  # its canonical int64 encoding (equal keys <=> equal lists); b"" when empty
    edge_count: int  # entries in it
    sequence_hash: int  # 64-bit hash of the cats and lines columns (equal columns, equal hash)

    @property
    def waitcnt(self) -> WaitcntEdges:
        """The decoder edges as orjson would have returned them (parsed on demand: waves whose
        edges equal their sequence's reconstruction never need them as objects)."""
        return orjson.loads(self.waitcnt_json) if self.waitcnt_json else []

    def column(self, name: str) -> memoryview:
        return memoryview(getattr(self, name)).cast("q")

    def records(self) -> list[list[int]]:
        """The 'instructions' rows as orjson would have returned them."""
        return [list(r) for r in zip(*(self.column(c) for c in
                                       ("times", "cats", "stalls", "durations", "lines")))]

    def timeline(self) -> list[list[int]]:
        return [list(r) for r in zip(self.column("states"), self.column("cycles"))]


def scan(mod: ModuleType, data: bytes) -> ScannedWave | None:
    """Columns of a plain wave file, or None when only the full JSON parser can read it."""
    found = mod.scan(data)
    return ScannedWave(*found) if found is not None else None


class Rows(Sequence[list[int]]):
    """Rows of int64 columns as the lists orjson would have returned, made on access: a long wave
    read for its timeline or its records (report, export) is held as ~8 bytes per value instead
    of a list per row."""

    __slots__ = ("cols",)

    def __init__(self, *cols: memoryview) -> None:
        self.cols = cols

    def __len__(self) -> int:
        return len(self.cols[0])

    def __getitem__(self, i: Any) -> Any:  # int or slice, as a list
        if isinstance(i, slice):
            return [list(r) for r in zip(*(c[i] for c in self.cols))]
        return [c[i] for c in self.cols]

    def __iter__(self) -> Iterator[list[int]]:
        return map(list, zip(*self.cols))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Rows, list)):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # a list-like value

    def __repr__(self) -> str:
        return f"Rows({list(self)!r})"


def read_wave(wf: WaveFile, max_bytes: int | None = None) -> Wave:
    """`hotspot.capture.waves.read_wave` through the scanner when it is in use: the same values
    and checks, with the records and timeline kept as int64 columns (Rows) rather than parsed
    into a list per row (a 10 MB wave file: ~30 MB instead of ~180 MB at the peak)."""
    mod = native()
    if mod is None:
        return read_wave_checked(wf, max_bytes)
    data = read_wave_bytes(wf.path, max_bytes)
    scanned = scan(mod, data)
    if scanned is None:
        return wave_of_bytes(wf, data)
    del data
    check_wave(wf.where, scanned.begin, scanned.end, *scanned_ranges(mod, scanned))
    records = Rows(*(scanned.column(c) for c in ("times", "cats", "stalls", "durations", "lines")))
    return Wave(wf, scanned.begin, scanned.end, records,
                Rows(scanned.column("states"), scanned.column("cycles")), scanned.waitcnt,
                scanned.cu)
