"""A lower bound on the LDS a kernel uses, read from its ISA.

rocprofv3's kernel trace reports static LDS only (`LDS_Block_Size`), so a kernel that allocates its
LDS dynamically shows 0 there while its `ds_*` instructions write kilobytes. An LDS access reaches
address `vaddr + offset` with an unsigned `vaddr`, so the highest constant offset plus the access
width is a floor on the LDS the kernel needs, whatever the address register holds. LDS-DMA loads
(`buffer_load_* ... lds`) write at `M0 + offset + lane x 4`: a literal moved into M0 gives one more
floor. Pure: code rows in, the bound and the row that sets it out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hotspot.arch.classify import mnemonic_of
from hotspot.capture import CodeRow
from hotspot.record import record

# ds_* mnemonics that move no LDS data (lane shuffles, counters, GWS): no address to bound.
_NO_LDS_ACCESS = re.compile(r"^ds_(bpermute|permute|swizzle|append|consume|gws_|nop|ordered_count)")
# Access width per element from the mnemonic's type suffix (`_b128`, `_u16`, `_f32`, `_b64_tr_b8`:
# the first suffix is the per-lane width; the `_tr_` part names the transpose element).
_TYPE = re.compile(r"_(?:[bfiu]|pk_f|pk_bf)(8|16|32|64|96|128)(?:_|$)")
_OFFSET = re.compile(r"(?<![\w])offset:(\d+|0x[0-9a-fA-F]+)")
_OFFSET01 = re.compile(r"offset([01]):(\d+|0x[0-9a-fA-F]+)")
_M0_LITERAL = re.compile(r"^s_mov_b32\s+m0\s*,\s*(-?\d+|0x[0-9a-fA-F]+)\s*$")
BITS_PER_BYTE = 8
# LDS-DMA writes one dword per lane (buffer_load_dword ... lds).
LDS_DMA_BYTES_PER_LANE = 4
# ds_read2st64/ds_write2st64: offset0/offset1 count units of 64 elements.
ST64_ELEMENTS = 64


@record
class LdsBound:
    """The ISA's LDS floor: `bytes` reached by the access at code row `line_number`."""

    bytes: int
    line_number: int
    isa: str
    offset: int
    width: int
    basis: str  # "ds offset + width" or "m0 + offset + width (LDS-DMA)"


def _int(text: str) -> int:
    return int(text, 16) if text.lower().startswith("0x") else int(text)


def _width(mnemonic: str) -> int | None:
    m = _TYPE.search(mnemonic)
    return int(m.group(1)) // BITS_PER_BYTE if m else None


def _ds_reach(isa: str) -> tuple[int, int] | None:
    """(offset, reach) of one ds_* access: reach = the highest byte it touches + 1 at vaddr 0."""
    mnemonic = mnemonic_of(isa)
    if _NO_LDS_ACCESS.match(mnemonic) or re.search(r"\bgds\b", isa):
        return None  # GDS accesses are not LDS
    width = _width(mnemonic)
    if width is None:
        return None
    pair = _OFFSET01.findall(isa)
    if mnemonic.startswith(("ds_read2", "ds_write2", "ds_load_2", "ds_store_2", "ds_wrxchg2")):
        # two accesses at offset0/offset1 in units of the element (x64 for the st64 forms)
        unit = width * (ST64_ELEMENTS if "st64" in mnemonic else 1)
        offsets = [_int(v) * unit for _, v in pair] or [0]
        top = max(offsets)
        return top, top + width
    m = _OFFSET.search(isa)
    offset = _int(m.group(1)) if m else 0
    return offset, offset + width


def lds_lower_bound(rows: Iterable[CodeRow]) -> LdsBound | None:
    """The largest LDS reach any instruction of the listing shows (executed or not: the allocation
    covers every path), or None when no access has a constant reach above 0."""
    best: LdsBound | None = None
    m0: int | None = None
    for r in rows:
        isa = r.isa.strip()
        if not isa or isa.startswith(";"):
            continue
        lit = _M0_LITERAL.match(isa)
        if lit:
            m0 = _int(lit.group(1))
            continue
        if re.match(r"^s_\w+\s+m0\b", isa):
            m0 = None  # M0 set from a register: unknown from here on
        cand: LdsBound | None = None
        if isa.startswith("ds_"):
            got = _ds_reach(isa)
            if got is not None:
                cand = LdsBound(got[1], r.line_number, isa, got[0], got[1] - got[0], "ds offset + width")
        elif m0 is not None and m0 >= 0 and re.search(r"\blds\b", isa) and isa.startswith(
                ("buffer_load", "global_load")):
            m = _OFFSET.search(isa)
            offset = _int(m.group(1)) if m else 0
            cand = LdsBound(m0 + offset + LDS_DMA_BYTES_PER_LANE, r.line_number, isa, m0 + offset,
                            LDS_DMA_BYTES_PER_LANE, "m0 + offset + width (LDS-DMA)")
        if cand is not None and cand.bytes > 0 and (best is None or cand.bytes > best.bytes):
            best = cand
    return best
