"""Native fast path for wave files (hotspot/att/engine/_wavescan.c), and what to do without it.

The extension is built by `pip install` when a C compiler is present (setup.py marks it optional);
without it, or with HOTSPOT_PURE_PYTHON=1 in the environment, every wave file is parsed by orjson
and folded by the Python code, with the same results. `native_status()` says which one runs.

A scanned wave holds its columns as int64 buffers: `times`, `cats`, `stalls`, `durations`, `lines`
(one entry per executed instruction) and `states`, `cycles` (one per timeline segment).
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import NamedTuple

import orjson

from hotspot.result import JsonValue

try:
    from hotspot.att.engine import _wavescan as _native
except ImportError:  # no compiler at install time: the Python path does the same work
    _native = None

PURE_PYTHON_ENV = "HOTSPOT_PURE_PYTHON"


def native() -> ModuleType | None:
    """The extension module, or None when absent or disabled by HOTSPOT_PURE_PYTHON."""
    if _native is None or os.environ.get(PURE_PYTHON_ENV, "") not in ("", "0"):
        return None
    return _native


def native_status() -> str:
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
    def waitcnt(self) -> list[JsonValue]:
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
