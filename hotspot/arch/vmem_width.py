"""Bytes per lane of a vector-memory load or store, read from its mnemonic's size suffix (gfx9
buffer/global/flat/scratch encodings; the gfx950 ISA guide's `*_b32`-style names too).

The one reader of a VMEM access width: the trace's bytes requested per CU cycle
(hotspot/att/issue_share.py), the plan's narrow-load and narrow-store rules, the launch and
saturation byte estimates and the scratch-spill footprint all take it from here.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from hotspot.arch.classify import mnemonic_of

# Bytes per lane by size suffix (ISA: dword = 4 bytes, short = 2, byte = 1). A suffix is matched
# whole, as the start of the size (`dwordx4`, `ubyte_d16`) or as its last part (`d16_u8`); the
# first hit wins, so a longer suffix comes before any it starts with (`dwordx4` before `dword`) and
# the 8-bit ones before `d16`: gfx11/12's `*_d16_u8` and `*_d16_hi_i8` move one byte a lane (into
# half a register), not two.
LANE_BYTES = (("dwordx4", 16), ("dwordx3", 12), ("dwordx2", 8), ("dword", 4),
              ("b128", 16), ("b96", 12), ("b64", 8), ("b32", 4), ("b16", 2), ("b8", 1),
              ("ushort", 2), ("sshort", 2), ("short", 2), ("u16", 2), ("i16", 2),
              ("ubyte", 1), ("sbyte", 1), ("byte", 1), ("u8", 1), ("i8", 1), ("d16", 2))
SEGMENTS = ("buffer", "tbuffer", "global", "flat", "scratch")
_ACCESS = re.compile(r"^(?P<segment>" + "|".join(SEGMENTS) + r")_(?P<op>load|store)_(?:lds_)?"
                     r"(?P<size>[a-z0-9_]+?)(?:_d16_hi|_d16)?$")


class VmemAccess(NamedTuple):
    segment: str     # buffer, tbuffer, global, flat or scratch
    op: str          # "load" or "store"
    lane_bytes: int  # bytes each lane moves


def vmem_access(isa: str) -> VmemAccess | None:
    """The segment, direction and per-lane bytes of one VMEM load or store; None for any other
    instruction and for a size the table does not know (a `*_format_*` access)."""
    m = _ACCESS.match(mnemonic_of(isa))
    if m is None:
        return None
    size = m["size"]
    for suffix, width in LANE_BYTES:
        if size == suffix or size.startswith(suffix) or size.endswith("_" + suffix):
            return VmemAccess(m["segment"], m["op"], width)
    return None


def lane_bytes(isa: str) -> int | None:
    """Per-lane bytes of a VMEM load or store of any segment; None for anything else."""
    access = vmem_access(isa)
    return access.lane_bytes if access is not None else None
