"""s_waitcnt counter rules per GPU generation (HARDWARE.md §3, FORMATS.md §1.2): which memory
instructions increment which counter. The decoder applies the same rules to draw its edges.

Keyed by the major gfx IP version (filenames.json `gfxip`), which every capture states even when the
exact target is undecided: gfx908, gfx90a, gfx942 and gfx950 all follow the gfx9 rules. Without it
the IP is the arch table's (`Arch.gfxip`); a target with no table has none, and gets no rules.
"""

from __future__ import annotations

from hotspot.record import record



@record
class WaitcntRules:
    vm_prefixes: tuple[str, ...]    # increment vmcnt (loads AND stores: no separate store counter)
    flat_prefix: str                # increments both vmcnt and lgkmcnt
    lgkm_prefixes: tuple[str, ...]  # increment lgkmcnt (SMEM is recognised by the taxonomy)
    counters: tuple[str, ...]       # counter names an s_waitcnt may name
    source: str


GFX9 = WaitcntRules(
    vm_prefixes=("buffer_", "tbuffer_", "global_", "scratch_"),
    flat_prefix="flat_",
    lgkm_prefixes=("ds_", "s_sendmsg"),
    counters=("vmcnt", "lgkmcnt", "expcnt"),
    source="HARDWARE.md §3 counter table; FORMATS.md §1.2 decoder push rules",
)

BY_GFXIP: dict[int, WaitcntRules] = {9: GFX9}


def rules_for_gfxip(gfxip: int | None) -> WaitcntRules | None:
    """The rules of a GPU generation (None: not one hotspot has rules for)."""
    return BY_GFXIP.get(gfxip) if gfxip is not None else None
