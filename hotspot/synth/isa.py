"""What the generator needs to know about a gfx9 instruction: decoder category, counters, sizes.

Sources: FORMATS.md §1.2 (decoder category enum, waitcnt list rules). The hardware facts (s_waitcnt
counter maxima, MFMA pass counts, engine clocks, products) are the arch tables' (hotspot/arch/), the
ones the analysis reads: one place to correct a number. Instructions are classified by
hotspot/arch/classify.py, the one instruction classifier (below the analyses the generator tests).
"""

from __future__ import annotations

import re
from typing import Any

from hotspot.arch.arch import gfx_target_version
from hotspot.arch.classify import WAIT_CATEGORIES, Category, mnemonic_of
from hotspot.arch.classify import classify as stall_category
from hotspot.arch.mfma import CYCLES_PER_PASS as CYCLES_PER_PASS  # the generator's, re-exported
from hotspot.arch.mfma import mfma_passes as table_passes
from hotspot.arch.products import Product, find_product
from hotspot.arch.targets import TARGETS
from hotspot.record import record

# Decoder instruction categories (FORMATS.md §1.2).
CAT_SMEM, CAT_SALU, CAT_VMEM, CAT_FLAT, CAT_LDS, CAT_VALU = 1, 2, 3, 4, 5, 6
CAT_JUMP, CAT_NEXT, CAT_IMMED, CAT_MESSAGE = 7, 8, 9, 11

# Wave timeline states (FORMATS.md §1.2).
STATE_IDLE, STATE_EXEC, STATE_WAIT, STATE_STALL = 1, 2, 3, 4

# The product a synthetic capture of each target claims to be: its agent_info row and its engine
# clock (realtime.json) come from the arch tables (hotspot/arch/products.py, targets.py).
SYNTH_PRODUCT = {"gfx942": "MI300X", "gfx950": "MI350X"}
ARCHES = tuple(sorted(SYNTH_PRODUCT))


def _product(arch: str) -> Product:
    product = find_product(SYNTH_PRODUCT[arch])
    assert product is not None and product.gfx == arch, SYNTH_PRODUCT[arch]  # a table bug
    return product


# Counter maxima (the arch table's s_waitcnt field widths; every synthesized target is gfx9).
VMCNT_MAX = min(TARGETS[a].vmcnt_max for a in ARCHES)
LGKMCNT_MAX = min(TARGETS[a].lgkmcnt_max for a in ARCHES)
ENGINE_CLOCK_MHZ = {a: _product(a).peak_engine_clock_mhz for a in ARCHES}
# Product facts for the optional agent_info CSV.
PRODUCT: dict[str, dict[str, Any]] = {a: {"Product_Name": f"AMD Instinct {_product(a).name}", "Gfx_Target_Version": gfx_target_version(a),
               "Cu_Count": _product(a).cus, "Lds_Size_In_Kb": TARGETS[a].lds_per_cu_bytes // 1024,
               "Num_Xcc": _product(a).xcds}
           for a in ARCHES}
# The MFMA a mix uses unless it names one (each exists on its target: the arch table's passes).
DEFAULT_MFMA = {"gfx942": "v_mfma_f32_32x32x8_f16", "gfx950": "v_mfma_f32_16x16x32_bf16"}
# An MFMA shape the arch table does not know is timed as this many passes.
UNKNOWN_MFMA_PASSES = 8

_WAITCNT_FIELD = re.compile(r"\b(vmcnt|lgkmcnt|expcnt)\((\d+)\)")


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
    """Passes of an MFMA on `arch` (the arch table, HARDWARE.md §4); UNKNOWN_MFMA_PASSES for a
    shape it does not list there."""
    passes = table_passes(mn, arch)
    return passes if passes is not None else UNKNOWN_MFMA_PASSES


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
    mn = mnemonic_of(isa)
    if mn == "s_endpgm":
        return OpInfo(CAT_MESSAGE, "endpgm", ())
    category = stall_category(isa).category
    decoder, kind = _DECODER[category]
    if category is C.SCRATCH and ("store" in mn or "atomic" in mn):
        kind = "vmem_store"
    if kind == "mfma":
        return OpInfo(decoder, kind, (), mfma_passes(mn, arch))
    return OpInfo(decoder, kind, counters(mn) if kind in _COUNTED else ())


def instruction_size(isa: str) -> int:
    """Encoded size in bytes: VOP3/VOP3P/MUBUF/DS/SMEM/FLAT and literals use 8, the rest 4."""
    mn = mnemonic_of(isa)
    if mn.startswith(("v_mfma", "buffer_", "global_", "flat_", "scratch_", "ds_", "s_load", "s_buffer")):
        return 8
    if "0x" in isa or mn.endswith("_e64") or mn.startswith(("v_lshl_or", "v_lshl_add", "v_or3", "v_bfe")):
        return 8
    return 4
