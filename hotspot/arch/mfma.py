"""MFMA pass counts per architecture (HARDWARE.md §4) and the gfx950-only mnemonics (§2).

One pass is 4 cycles. Pass counts are tabulated for gfx942 and gfx950 only (the reference gives no
gfx908/gfx90a table): `mfma_passes` returns None for anything it does not know rather than a guess.
Accepts a bare mnemonic or a whole disassembly line: for the gfx950 `*_f8f6f4` shapes the operand
formats come from the `cbsz:`/`blgp:` modifiers (absent = 0 = FP8, the hardware default).
"""

from __future__ import annotations

import re
from typing import NamedTuple

from hotspot.arch.targets import normalize_gfx

CYCLES_PER_PASS = 4            # HARDWARE.md §4: 1 pass = 4 cycles
DEPENDENT_READ_EXTRA_WAIT = 3  # §4: dependent VALU/VMEM read of an MFMA result needs passes + 3
GFX950_EXTRA_WAIT_WHEN_NOT_2_PASSES = 1  # §4: gfx950 needs +1 more when passes != 2
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
    token = mnemonic.strip().split(None, 1)[0].lower() if mnemonic.strip() else ""
    match = _MFMA.match(token)
    if match is None:
        return None
    kind = _kind(match["ty"])
    if kind is None:
        return None
    return MfmaShape(int(match["m"]), int(match["n"]), int(match["k"]), kind,
                     int(match["blocks"] or 1), bool(match["scale"]), match["op"] == "smfmac")


# (m, n, k, kind) -> passes for single-block dense MFMA; HARDWARE.md §4.
_GFX942_PASSES: dict[tuple[int, int, int, str], int] = {
    (16, 16, 16, "f16"): 4, (16, 16, 16, "bf16"): 4,
    (16, 16, 32, "fp8"): 4, (16, 16, 32, "i8"): 4,
    (16, 16, 8, "xf32"): 4,
    (32, 32, 8, "f16"): 8, (32, 32, 8, "bf16"): 8,
    (32, 32, 16, "fp8"): 8, (32, 32, 16, "i8"): 8,
    (32, 32, 4, "xf32"): 8,
    (16, 16, 4, "f32"): 8,
    (32, 32, 2, "f32"): 16,
    (4, 4, 4, "f64"): 4,
    (16, 16, 4, "f64"): 8,
}
_FOUR_BY_FOUR_PASSES = 2  # §4: "4x4 variants 2 passes" (except f64 4x4x4, tabulated above)

# gfx950: gfx942 shapes keep their counts, xf32 is removed, f64 16x16x4 doubles, new shapes added.
_GFX950_PASSES: dict[tuple[int, int, int, str], int] = {
    **{key: p for key, p in _GFX942_PASSES.items() if key[3] != "xf32"},
    (16, 16, 4, "f64"): 16,
    (16, 16, 32, "f16"): 4, (16, 16, 32, "bf16"): 4,
    (32, 32, 16, "f16"): 8, (32, 32, 16, "bf16"): 8,
    (16, 16, 64, "i8"): 4,
    (32, 32, 32, "i8"): 8,
}
# f8f6f4 shapes: (passes if either operand is FP8/BF8, passes otherwise); §4.
_GFX950_F8F6F4_PASSES: dict[tuple[int, int, int], tuple[int, int]] = {
    (16, 16, 128): (8, 4),
    (32, 32, 64): (16, 8),
}

_PASS_TABLES: dict[str, dict[tuple[int, int, int, str], int]] = {
    "gfx942": _GFX942_PASSES,
    "gfx950": _GFX950_PASSES,
}

# gfx942 shape -> the gfx950 shape doing twice the work in the same passes (§4: old shapes run at
# half of peak on gfx950).
_GFX950_REPLACEMENT: dict[tuple[int, int, int, str], str] = {
    (16, 16, 16, "f16"): "v_mfma_f32_16x16x32_f16",
    (16, 16, 16, "bf16"): "v_mfma_f32_16x16x32_bf16",
    (32, 32, 8, "f16"): "v_mfma_f32_32x32x16_f16",
    (32, 32, 8, "bf16"): "v_mfma_f32_32x32x16_bf16",
    (16, 16, 32, "i8"): "v_mfma_i32_16x16x64_i8",
    (32, 32, 16, "i8"): "v_mfma_i32_32x32x32_i8",
    (16, 16, 32, "fp8"): "v_mfma_f32_16x16x128_f8f6f4",
    (32, 32, 16, "fp8"): "v_mfma_f32_32x32x64_f8f6f4",
}


def _uses_fp8(line: str) -> bool:
    formats = {name: int(value) for name, value in _MODIFIER.findall(line.lower())}
    return formats.get("cbsz", 0) in FP8_FORMATS or formats.get("blgp", 0) in FP8_FORMATS


def mfma_passes(mnemonic: str, gfx: str) -> int | None:
    """Passes of one MFMA on `gfx` (latency = 4 × passes cycles); None if unknown or unsupported."""
    gfx = normalize_gfx(gfx)
    table = _PASS_TABLES.get(gfx)
    shape = parse_mfma(mnemonic)
    if table is None or shape is None or shape.sparse:
        return None
    if shape.kind == "f8f6f4":
        pair = _GFX950_F8F6F4_PASSES.get((shape.m, shape.n, shape.k)) if gfx == "gfx950" else None
        if pair is None:
            return None
        return pair[0] if _uses_fp8(mnemonic) else pair[1]
    if shape.scale:
        return None
    if shape.m == shape.n == 4:  # 4x4 shapes are multi-block by nature: the block count says nothing
        if shape.kind == "f64":
            return table.get((4, 4, shape.k, "f64"))
        return _FOUR_BY_FOUR_PASSES
    if shape.blocks != 1:
        return None
    return table.get((shape.m, shape.n, shape.k, shape.kind))


def mfma_latency_cycles(mnemonic: str, gfx: str) -> int | None:
    passes = mfma_passes(mnemonic, gfx)
    return None if passes is None else passes * CYCLES_PER_PASS


def mfma_dependent_wait_states(mnemonic: str, gfx: str) -> int | None:
    """Wait states before a dependent VALU/VMEM read of this MFMA's result (§4)."""
    passes = mfma_passes(mnemonic, gfx)
    if passes is None:
        return None
    extra = GFX950_EXTRA_WAIT_WHEN_NOT_2_PASSES if normalize_gfx(gfx) == "gfx950" and passes != 2 else 0
    return passes + DEPENDENT_READ_EXTRA_WAIT + extra


def gfx950_replacement(mnemonic: str) -> str | None:
    """The gfx950 shape that does the same work at twice the rate, for a gfx942-era MFMA."""
    shape = parse_mfma(mnemonic)
    if shape is None or shape.blocks != 1 or shape.scale or shape.sparse:
        return None
    return _GFX950_REPLACEMENT.get((shape.m, shape.n, shape.k, shape.kind))


def is_legacy_shape_on(gfx: str, mnemonic: str) -> bool:
    """True when `mnemonic` is a gfx942 shape that runs at half of peak on `gfx` (gfx950 only)."""
    return normalize_gfx(gfx) == "gfx950" and gfx950_replacement(mnemonic) is not None


# Mnemonics only gfx950 has (HARDWARE.md §2, plus the §4 additions). Regexes, full-match against the
# lower-case mnemonic. Their absence does NOT prove gfx942.
GFX950_ONLY_PATTERNS: tuple[str, ...] = (
    r"v_mfma_scale_f32_\w+",
    r"v_mfma_f32_16x16x128_f8f6f4",
    r"v_mfma_f32_32x32x64_f8f6f4",
    r"v_mfma_f32_16x16x32_(?:f16|bf16)",
    r"v_mfma_f32_32x32x16_(?:f16|bf16)",
    r"v_mfma_i32_16x16x64_i8",
    r"v_mfma_i32_32x32x32_i8",          # §4 "gfx950 adds"
    r"ds_read_b64_tr_b16",
    r"v_cvt_scalef32_\w+",
    r"v_permlane(?:16|32)_swap(?:_b32)?(?:_e32|_e64)?",
)
_GFX950_ONLY = re.compile("|".join(f"(?:{p})" for p in GFX950_ONLY_PATTERNS))


def is_gfx950_only(mnemonic: str) -> bool:
    """True if the mnemonic (first token of a line) exists only on gfx950."""
    text = mnemonic.strip()
    return bool(text) and _GFX950_ONLY.fullmatch(text.split(None, 1)[0].lower()) is not None
