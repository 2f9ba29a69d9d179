"""What the capture itself says about its target when no side file names one (issue 33, point 5).

Three kinds of evidence, each recorded in the hint's `source` the way hotspot/arch/decide.py
records every decision:

- an ISA tag in the kernel name (vendor BLAS libraries name their code objects `..._ISA942_...`);
- instructions gfx940 introduced and gfx950 kept (gfx90a/gfx908 lack them): the capture is one of
  the CDNA 3/4 targets;
- the traced layout against the product tables: more distinct busy CUs on one shader engine than
  any product of a target has per SE rules that target out.

Only a conclusion every piece of evidence forces becomes a hint; otherwise nothing is said and the
arch stays "unknown" (never a wrong one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from hotspot.arch.classify import mnemonic_of
from hotspot.arch.decide import CAPTURE, ArchHint
from hotspot.arch.products import PRODUCTS
from hotspot.arch.targets import TARGETS

# `_ISA942_`, `_ISA90a_` in a kernel name (Tensile/hipBLASLt solution names carry the target's ISA).
ISA_TAG_RE = re.compile(r"(?:^|_)ISA(9[0-9a-f]{2})(?:_|$)", re.IGNORECASE)

# Instructions that exist on gfx940+ (gfx942, gfx950) and not on gfx90a/gfx908. Source: LLVM AMDGPU
# (isGFX940Plus: V_LSHL_ADD_U64, V_MOV_B64; the gfx940 MFMA renames `_bf16` (gfx90a:
# `bf16_1k`), the fp8/bf8 MFMAs, xf32 MFMAs); the `sc0`/`sc1`/`nt` cache-policy bits replace gfx90a's
# `glc`/`slc` on gfx940+ memory instructions.
GFX940_PLUS_MNEMONICS: tuple[str, ...] = (
    r"v_lshl_add_u64(?:_e64)?",
    r"v_mov_b64(?:_e32|_e64|_dpp)?",
    r"v_mfma_f32_(?:4x4x4|16x16x16|32x32x8|16x16x8|32x32x4)_(?:bf16|f16)",  # gfx90a: ..._1k or f16 without _
    r"v_mfma_f32_(?:16x16x32|32x32x16)_(?:fp8|bf8)_(?:fp8|bf8)",
    r"v_mfma_f32_(?:16x16x8|32x32x4)_xf32",
)
GFX940_PLUS_TARGETS: tuple[str, ...] = ("gfx942", "gfx950")
CACHE_POLICY_RE = re.compile(r"(?:^|\s)(?:sc0|sc1|nt)(?:\s|$)")
_FAMILY_RE = re.compile("|".join(f"(?:{p})" for p in GFX940_PLUS_MNEMONICS))


def name_tag_hint(kernel: str) -> ArchHint | None:
    """The target a kernel name's `_ISA<nnn>_` tag names, when hotspot has a table for it."""
    m = ISA_TAG_RE.search(kernel)
    if m is None:
        return None
    gfx = f"gfx{m.group(1).lower()}"
    if gfx not in TARGETS:
        return None
    return ArchHint(gfx, f"capture: the kernel name carries the ISA tag {m.group(0).strip('_')}", CAPTURE)


def family_evidence(isa: Iterable[str]) -> str | None:
    """The first instruction (or cache-policy bit) that only gfx940+ targets have, as evidence text."""
    for text in isa:
        token = mnemonic_of(text)
        if token and _FAMILY_RE.fullmatch(token):
            return f"{token} exists only on gfx940+ ({', '.join(GFX940_PLUS_TARGETS)})"
        if CACHE_POLICY_RE.search(text) and token.split("_", 1)[0] in ("global", "buffer", "flat", "scratch"):
            return f"the sc0/sc1/nt cache bits of `{text.strip()[:40]}` exist only on gfx940+"
    return None


def max_cus_per_se(cus_by_se: Mapping[int, Iterable[int]]) -> tuple[int, int] | None:
    """(shader engine, distinct CUs seen busy on it) for the SE with the most; None without events."""
    best: tuple[int, int] | None = None
    for se, cus in sorted(cus_by_se.items()):
        n = len(set(cus))
        if best is None or n > best[1]:
            best = (se, n)
    return best


def target_max_cus_per_se(gfx: str) -> float | None:
    """The most CUs per SE any product of the target has (None when the tables do not say)."""
    values = [p.cus_per_se for p in PRODUCTS.values() if p.gfx == gfx and p.cus_per_se is not None]
    return max(values) if values else None


def layout_excludes(candidates: Sequence[str], seen: tuple[int, int] | None) -> tuple[list[str], str]:
    """The candidates the traced layout leaves, and why the others are out ("" when none is)."""
    if seen is None:
        return list(candidates), ""
    se, n = seen
    kept, out = [], []
    for gfx in candidates:
        limit = target_max_cus_per_se(gfx)
        if limit is not None and n > limit:
            out.append(f"{gfx} has at most {limit:g} CUs per shader engine")
        else:
            kept.append(gfx)
    why = f"{n} distinct busy CUs on shader engine {se} in occupancy.json; " + "; ".join(out) if out else ""
    return kept, why


def capture_hint(kernel: str, isa: Sequence[str], cus_by_se: Mapping[int, Iterable[int]]) -> ArchHint | None:
    """The target the capture alone proves (name tag, or gfx940+ instructions plus a layout that
    leaves one candidate); None when it proves none."""
    tag = name_tag_hint(kernel)
    if tag is not None:
        return tag
    family = family_evidence(isa)
    if family is None:
        return None
    kept, why = layout_excludes(GFX940_PLUS_TARGETS, max_cus_per_se(cus_by_se))
    if len(kept) != 1:
        return None
    return ArchHint(kept[0], f"capture: {family}; {why}", CAPTURE)
