"""What the generator needs to know about a gfx9 instruction: decoder category, counters, sizes.

Sources: FORMATS.md §1.2 (decoder category enum, waitcnt list rules), HARDWARE.md §3 (s_waitcnt
counters and their maxima), §4 (MFMA pass counts), §5 (engine clocks). Instructions are classified by
hotspot/arch/classify.py (the ISA's instruction classes), below the analyses the generator tests.
"""

from __future__ import annotations

import re

from hotspot.arch.classify import WAIT_CATEGORIES, Category
from hotspot.arch.classify import classify as stall_category
from hotspot.record import record

# Decoder instruction categories (FORMATS.md §1.2).
CAT_SMEM, CAT_SALU, CAT_VMEM, CAT_FLAT, CAT_LDS, CAT_VALU = 1, 2, 3, 4, 5, 6
CAT_JUMP, CAT_NEXT, CAT_IMMED, CAT_MESSAGE = 7, 8, 9, 11

# Wave timeline states (FORMATS.md §1.2).
STATE_IDLE, STATE_EXEC, STATE_WAIT, STATE_STALL = 1, 2, 3, 4

# Counter maxima on gfx9 (HARDWARE.md §3): vmcnt 6 bits, lgkmcnt 4 bits.
VMCNT_MAX = 63
LGKMCNT_MAX = 15

# Engine clock in MHz, for realtime.json (HARDWARE.md §5: MI300X 2100, MI350X 2200 (unverified)).
ENGINE_CLOCK_MHZ = {"gfx942": 2100, "gfx950": 2200}
# Product facts for the optional agent_info CSV (HARDWARE.md §1 and §5).
PRODUCT = {
    "gfx942": {"Product_Name": "AMD Instinct MI300X", "Gfx_Target_Version": 90402, "Cu_Count": 304,
               "Lds_Size_In_Kb": 64, "Num_Xcc": 8},
    "gfx950": {"Product_Name": "AMD Instinct MI350X", "Gfx_Target_Version": 90500, "Cu_Count": 256,
               "Lds_Size_In_Kb": 160, "Num_Xcc": 8},
}
ARCHES = tuple(sorted(ENGINE_CLOCK_MHZ))

# MFMA passes (1 pass = 4 cycles), HARDWARE.md §4. Keyed by mnemonic; arch-specific where it differs.
MFMA_PASSES: dict[str, int] = {
    "v_mfma_f32_4x4x4_16b_f16": 2,
    "v_mfma_f32_16x16x16_f16": 4,
    "v_mfma_f32_16x16x16_bf16": 4,
    "v_mfma_f32_32x32x8_f16": 8,
    "v_mfma_f32_32x32x8_bf16": 8,
    "v_mfma_f32_16x16x32_fp8_fp8": 4,
    "v_mfma_f32_32x32x16_fp8_fp8": 8,
    "v_mfma_f32_16x16x4_f32": 8,
    "v_mfma_f32_32x32x2_f32": 16,
    "v_mfma_f64_16x16x4_f64": 8,
    # gfx950 only
    "v_mfma_f32_16x16x32_f16": 4,
    "v_mfma_f32_16x16x32_bf16": 4,
    "v_mfma_f32_32x32x16_f16": 8,
    "v_mfma_f32_32x32x16_bf16": 8,
    "v_mfma_i32_16x16x64_i8": 4,
}
MFMA_PASSES_GFX950_OVERRIDE = {"v_mfma_f64_16x16x4_f64": 16}
GFX950_ONLY_MFMA = frozenset({
    "v_mfma_f32_16x16x32_f16", "v_mfma_f32_16x16x32_bf16", "v_mfma_f32_32x32x16_f16",
    "v_mfma_f32_32x32x16_bf16", "v_mfma_i32_16x16x64_i8",
})
CYCLES_PER_PASS = 4
DEFAULT_MFMA = {"gfx942": "v_mfma_f32_32x32x8_f16", "gfx950": "v_mfma_f32_16x16x32_bf16"}

_WAITCNT_FIELD = re.compile(r"\b(vmcnt|lgkmcnt|expcnt)\((\d+)\)")


def mnemonic(isa: str) -> str:
    return isa.split(None, 1)[0] if isa else ""


def counters(mn: str) -> tuple[str, ...]:
    """Counter lists an instruction is pushed on (FORMATS.md §1.2 decoder rule)."""
    if mn.startswith("flat_"):
        return ("vm", "lgkm")
    if mn.startswith(("buffer_", "global_", "scratch_")):
        return ("vm",)
    if mn.startswith(("s_load", "s_buffer_load", "s_store", "s_buffer_store", "s_sendmsg", "ds_")):
        return ("lgkm",)
    return ()


def waitcnt_fields(isa: str) -> dict[str, int]:
    """`s_waitcnt vmcnt(3) lgkmcnt(0)` -> {"vm": 3, "lgkm": 0}; absent counters are not waited on."""
    out: dict[str, int] = {}
    for name, value in _WAITCNT_FIELD.findall(isa):
        if name != "expcnt":
            out[name[:-3]] = int(value)
    return out


def mfma_passes(mn: str, arch: str) -> int:
    if arch == "gfx950" and mn in MFMA_PASSES_GFX950_OVERRIDE:
        return MFMA_PASSES_GFX950_OVERRIDE[mn]
    return MFMA_PASSES[mn]


@record
class OpInfo:
    """Static facts of one instruction row used by the timing model."""

    category: int
    kind: str          # smem, salu, vmem_load, vmem_store, flat, lds, bperm, valu, mfma, branch, waitcnt,
                       # barrier, nop, endpgm, message
    counters: tuple[str, ...]
    mfma_passes: int = 0


# Decoder category and timing kind of each stall-taxonomy category (hotspot/arch/classify.py, the
# one instruction classifier); every category has its entry, so a new one fails here, not silently.
C = Category
_DECODER: dict[Category, tuple[int, str]] = {
    C.VMEM_LOAD: (CAT_VMEM, "vmem_load"), C.VMEM_STORE: (CAT_VMEM, "vmem_store"),
    C.VMEM_ATOMIC: (CAT_VMEM, "vmem_store"), C.SCRATCH: (CAT_VMEM, "vmem_load"), C.FLAT: (CAT_FLAT, "flat"),
    C.SMEM: (CAT_SMEM, "smem"), C.LDS: (CAT_LDS, "lds"), C.CROSS_LANE: (CAT_LDS, "bperm"),
    **{w: (CAT_IMMED, "waitcnt") for w in WAIT_CATEGORIES}, C.BARRIER: (CAT_IMMED, "barrier"),
    C.NOP: (CAT_IMMED, "nop"), C.MFMA: (CAT_VALU, "mfma"), C.VALU: (CAT_VALU, "valu"),
    C.SALU: (CAT_SALU, "salu"), C.BRANCH: (CAT_NEXT, "branch"), C.MESSAGE: (CAT_MESSAGE, "message"),
    C.OTHER: (CAT_VALU, "valu"),
}
assert set(_DECODER) == set(Category), "synth/isa.py: a stall category without its decoder category"
# Kinds whose instructions count on the vm/lgkm counters (FORMATS.md §1.2): the rest push nothing.
_COUNTED = frozenset({"vmem_load", "vmem_store", "flat", "smem", "lds", "bperm", "message"})


def classify(isa: str, arch: str) -> OpInfo:
    """Decoder category and timing kind of one instruction text (taken branches are fixed up later)."""
    mn = mnemonic(isa)
    if mn == "s_endpgm":
        return OpInfo(CAT_MESSAGE, "endpgm", ())
    category = stall_category(isa).category
    decoder, kind = _DECODER[category]
    if category is C.SCRATCH and ("store" in mn or "atomic" in mn):
        kind = "vmem_store"
    if kind == "mfma":
        return OpInfo(decoder, kind, (), mfma_passes(mn, arch) if mn in MFMA_PASSES else 8)
    return OpInfo(decoder, kind, counters(mn) if kind in _COUNTED else ())


def instruction_size(isa: str) -> int:
    """Encoded size in bytes: VOP3/VOP3P/MUBUF/DS/SMEM/FLAT and literals use 8, the rest 4."""
    mn = mnemonic(isa)
    if mn.startswith(("v_mfma", "buffer_", "global_", "flat_", "scratch_", "ds_", "s_load", "s_buffer")):
        return 8
    if "0x" in isa or mn.endswith("_e64") or mn.startswith(("v_lshl_or", "v_lshl_add", "v_or3", "v_bfe")):
        return 8
    return 4
