"""The `Arch` value: a gfx target normalized once, with the evidence that decided it.

`gfx942:sramecc+:xnack-`, `GFX942` and ` gfx942 ` all name gfx942 (the target features are kept
apart). `known` is true only for targets in the arch table (targets.py): an unknown target such as
gfx1250 is carried by name with `known=False` and no analysis borrows another target's numbers for
it. An undecided gfx9 variant has `gfx=None` and the candidate targets.
"""

from __future__ import annotations

import re
from dataclasses import field

from hotspot.arch.targets import TARGETS, TESTED_GFX, ArchTarget
from hotspot.record import record

UNKNOWN_LABEL = "gfx9 (variant unknown)"
# A gfx target name with optional target features (LLVM target-id syntax: gfx942:sramecc+:xnack-).
TARGET_ID_RE = re.compile(r"^(gfx[0-9a-f]{3,4})((?::[a-z0-9_.-]+[+-]?)*)$")
# The targets an undecided gfx9 capture may be (filenames.json says only "gfxip 9").
CDNA_CANDIDATES: tuple[str, ...] = TESTED_GFX


@record
class Arch:
    gfx: str | None                 # normalized base name ("gfx942"); None when undecided
    product: str | None = None
    source: str = "undetermined"    # what decided, e.g. "agent_info: path/x_agent_info.csv"
    candidates: tuple[str, ...] = ()
    warnings: tuple[str, ...] = field(default=())
    features: tuple[str, ...] = ()  # target features as written ("sramecc+", "xnack-")

    @property
    def target(self) -> ArchTarget | None:
        return TARGETS.get(self.gfx) if self.gfx else None

    @property
    def known(self) -> bool:
        return self.target is not None

    @property
    def label(self) -> str:
        return self.gfx or UNKNOWN_LABEL

    @property
    def gfxip(self) -> int | None:
        """The major gfx IP version (which s_waitcnt rules apply): the target's, or, undecided, the
        one every candidate shares; None for a target hotspot has no table for."""
        if self.target is not None:
            return self.target.gfxip
        if self.gfx is not None or not self.candidates or any(c not in TARGETS for c in self.candidates):
            return None
        ips = {TARGETS[c].gfxip for c in self.candidates}
        return ips.pop() if len(ips) == 1 else None


def gfx_target_version(gfx: str) -> int:
    """KFD's gfx_target_version of a target (major * 10000 + minor * 100 + stepping, the last two
    hex digits of the name): gfx942 -> 90402, gfx90a -> 90010."""
    digits = gfx.removeprefix("gfx")
    return int(digits[:-2]) * 10000 + int(digits[-2], 16) * 100 + int(digits[-1], 16)


def split_target_id(text: str) -> tuple[str, tuple[str, ...]] | None:
    """(`gfx942`, (`sramecc+`, `xnack-`)) for `gfx942:sramecc+:xnack-`; None if not a gfx name."""
    m = TARGET_ID_RE.match(text.strip().lower())
    if m is None:
        return None
    return m.group(1), tuple(f for f in m.group(2).split(":") if f)


def parse_arch(text: str, source: str, product: str | None = None,
               warnings: tuple[str, ...] = ()) -> Arch:
    """An Arch from a name someone wrote (`--arch`, an agent_info row). A name that is not a gfx
    target at all is kept as written, unknown."""
    parsed = split_target_id(text)
    if parsed is None:
        return Arch(text.strip().lower() or None, product, source, (), warnings)
    gfx, features = parsed
    return Arch(gfx, product, source, (), warnings, features)
