"""Which s_waitcnt counter rules apply to a capture: its GPU generation's (docs/waits.md)."""

from __future__ import annotations

from hotspot.arch.arch import Arch
from hotspot.arch.waitcnt import WaitcntRules, rules_for_gfxip
from hotspot.capture import DispatchDir


def waitcnt_rules(disp: DispatchDir, arch: Arch, warnings: list[str]) -> WaitcntRules | None:
    """The s_waitcnt rules of the capture's GPU generation: filenames.json `gfxip`, else the arch's
    (its table, or the IP every undecided candidate shares). None (no wait is attributed to a
    load) for a generation hotspot has no rules for, or an unknown one: another generation's
    counters would name the wrong loads."""
    gfxip = disp.filenames_doc.get("gfxip")
    if not isinstance(gfxip, int) or isinstance(gfxip, bool):
        gfxip = arch.gfxip
    if gfxip is None:
        warnings.append(f"gfx IP of {arch.label} unknown (no 'gfxip' in filenames.json, no table for the "
                        "target): waits are not attributed to the loads they wait for (hotspot has rules for "
                        "gfx IP 9: gfx908, gfx90a, gfx942, gfx950)")
        return None
    rules = rules_for_gfxip(gfxip)
    if rules is None:
        warnings.append(f"no s_waitcnt counter rules for gfx IP {gfxip}: waits are not attributed to "
                        "the loads they wait for (hotspot has rules for gfx IP 9: gfx942, gfx950)")
    return rules
