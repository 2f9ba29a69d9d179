"""MFMA pass counts per architecture (HARDWARE.md §4) and mnemonics only one target has (§2), read
from the arch table (targets.py -> mfma_tables.py).

One pass is 4 cycles. Pass counts are tabulated for gfx942 and gfx950 only (the reference gives no
gfx908/gfx90a table): `mfma_passes` returns None for anything it does not know rather than a guess.
Accepts a bare mnemonic or a whole disassembly line: for the gfx950 `*_f8f6f4` shapes the operand
formats come from the `cbsz:`/`blgp:` modifiers (absent = 0 = FP8, the hardware default).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from hotspot.arch.classify import mnemonic_of
from hotspot.arch.mfma_tables import FOUR_BY_FOUR_PASSES
from hotspot.arch.targets import TARGETS, find_target

CYCLES_PER_PASS = 4            # HARDWARE.md §4: 1 pass = 4 cycles
FP8_FORMATS = frozenset({0, 1})  # §4 / MFMA cbsz, blgp encoding: 0 = FP8 (E4M3), 1 = BF8 (E5M2)

_MFMA = re.compile(
    r"^v_(?P<op>mfma|smfmac)(?P<scale>_scale)?_(?P<out>f32|i32|f64)_"
    r"(?P<m>\d+)x(?P<n>\d+)x(?P<k>\d+)_?(?:(?P<blocks>\d+)b_)?(?P<ty>[a-z0-9_]+)$")
_MODIFIER = re.compile(r"\b(cbsz|blgp):(\d+)")


class MfmaShape(NamedTuple):
    m: int
    n: int
    k: int
    kind: str      # f16, bf16, fp8 (any fp8/bf8 pair), i8, xf32, f32, f64, f8f6f4
    blocks: int    # explicit `_Nb_` block count, else 1
    scale: bool
    sparse: bool


def _kind(ty: str) -> str | None:
    ty = ty.removesuffix("_1k")  # gfx90a `bf16_1k` = the same bf16 shape
    if ty in ("f16", "bf16", "i8", "xf32", "f32", "f64", "f8f6f4"):
        return ty
    parts = ty.split("_")
    if len(parts) == 2 and all(p in ("fp8", "bf8") for p in parts):
        return "fp8"
    return None


def parse_mfma(mnemonic: str) -> MfmaShape | None:
    """The shape of an MFMA mnemonic (first token of `mnemonic`), or None if it is not one."""
    token = mnemonic_of(mnemonic)
    match = _MFMA.match(token)
    if match is None:
        return None
    kind = _kind(match["ty"])
    if kind is None:
        return None
    return MfmaShape(int(match["m"]), int(match["n"]), int(match["k"]), kind,
                     int(match["blocks"] or 1), bool(match["scale"]), match["op"] == "smfmac")


def _uses_fp8(line: str) -> bool:
    formats = {name: int(value) for name, value in _MODIFIER.findall(line.lower())}
    return formats.get("cbsz", 0) in FP8_FORMATS or formats.get("blgp", 0) in FP8_FORMATS


def mfma_passes(mnemonic: str, gfx: str) -> int | None:
    """Passes of one MFMA on `gfx` (latency = 4 × passes cycles); None if unknown or unsupported."""
    target = find_target(gfx)
    table = target.mfma_passes if target else None
    shape = parse_mfma(mnemonic)
    if target is None or table is None or shape is None or shape.sparse:
        return None
    if shape.kind == "f8f6f4":
        f8 = target.mfma_f8f6f4_passes
        pair = f8.get((shape.m, shape.n, shape.k)) if f8 else None
        if pair is None:
            return None
        return pair[0] if _uses_fp8(mnemonic) else pair[1]
    if shape.scale:
        return None
    if shape.m == shape.n == 4:  # 4x4 shapes are multi-block by nature: the block count says nothing
        if shape.kind == "f64":
            return table.get((4, 4, shape.k, "f64"))
        return FOUR_BY_FOUR_PASSES
    if shape.blocks != 1:
        return None
    return table.get((shape.m, shape.n, shape.k, shape.kind))


def faster_shape(gfx: str, mnemonic: str) -> str | None:
    """The shape `gfx` runs at a higher rate than this older one (same passes, more K), or None."""
    target = find_target(gfx)
    shape = parse_mfma(mnemonic)
    if target is None or not target.mfma_faster_shapes or shape is None or shape.blocks != 1 \
            or shape.scale or shape.sparse:
        return None
    return target.mfma_faster_shapes.get((shape.m, shape.n, shape.k, shape.kind))


def k_ratio(gfx: str, mnemonic: str) -> int | None:
    """How many times the K of the faster shape is the K of this one (its matrix-pipe speed-up)."""
    repl = faster_shape(gfx, mnemonic)
    old, new = parse_mfma(mnemonic), parse_mfma(repl) if repl else None
    if old is None or new is None or old.k <= 0:
        return None
    return new.k // old.k


def exclusive_target(mnemonic: str) -> str | None:
    """The one target whose table lists this mnemonic as existing only there, or None."""
    text = mnemonic.strip()
    if not text:
        return None
    token = mnemonic_of(text)
    for gfx, pattern in _EXCLUSIVE.items():
        if pattern.fullmatch(token):
            return gfx
    return None


_EXCLUSIVE = {t.gfx: re.compile("|".join(f"(?:{p})" for p in t.exclusive_mnemonics))
              for t in TARGETS.values() if t.exclusive_mnemonics}
