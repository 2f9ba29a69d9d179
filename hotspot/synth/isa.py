"""What the generator needs to know about a gfx9 instruction: decoder category, counters, sizes.

Sources: FORMATS.md §1.2 (decoder category enum, waitcnt list rules). The hardware facts (s_waitcnt
counter maxima, MFMA pass counts, engine clocks, products) are the arch tables' (hotspot/arch/), the
ones the analysis reads: one place to correct a number. The generator does not use the analysis
code it is used to test.
"""

from __future__ import annotations

import re

from hotspot.arch.arch import gfx_target_version
from hotspot.arch.mfma import CYCLES_PER_PASS
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
PRODUCT = {a: {"Product_Name": f"AMD Instinct {_product(a).name}", "Gfx_Target_Version": gfx_target_version(a),
               "Cu_Count": _product(a).cus, "Lds_Size_In_Kb": TARGETS[a].lds_per_cu_bytes // 1024,
               "Num_Xcc": _product(a).xcds}
           for a in ARCHES}
# The MFMA a mix uses unless it names one (each exists on its target: the arch table's passes).
DEFAULT_MFMA = {"gfx942": "v_mfma_f32_32x32x8_f16", "gfx950": "v_mfma_f32_16x16x32_bf16"}
# An MFMA shape the arch table does not know is timed as this many passes.
UNKNOWN_MFMA_PASSES = 8

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


def classify(isa: str, arch: str) -> OpInfo:
    """Decoder category and timing kind of one instruction text (taken branches are fixed up later)."""
    mn = mnemonic(isa)
    cnt = counters(mn)
    if mn == "s_waitcnt" or mn.startswith("s_waitcnt"):
        return OpInfo(CAT_IMMED, "waitcnt", ())
    if mn == "s_barrier":
        return OpInfo(CAT_IMMED, "barrier", ())
    if mn.startswith("s_nop") or mn.startswith("s_sleep"):
        return OpInfo(CAT_IMMED, "nop", ())
    if mn == "s_endpgm":
        return OpInfo(CAT_MESSAGE, "endpgm", ())
    if mn.startswith("s_sendmsg"):
        return OpInfo(CAT_MESSAGE, "message", cnt)
    if mn.startswith(("s_cbranch", "s_branch")):
        return OpInfo(CAT_NEXT, "branch", ())
    if mn.startswith(("s_load", "s_buffer_load", "s_store", "s_buffer_store", "s_dcache")):
        return OpInfo(CAT_SMEM, "smem", cnt)
    if mn.startswith("s_"):
        return OpInfo(CAT_SALU, "salu", ())
    if mn.startswith("flat_"):
        return OpInfo(CAT_FLAT, "flat", cnt)
    if mn.startswith(("buffer_", "global_", "scratch_")):
        store = "store" in mn or "atomic" in mn
        return OpInfo(CAT_VMEM, "vmem_store" if store else "vmem_load", cnt)
    if mn.startswith(("ds_bpermute", "ds_permute", "ds_swizzle")):
        return OpInfo(CAT_LDS, "bperm", cnt)
    if mn.startswith("ds_"):
        return OpInfo(CAT_LDS, "lds", cnt)
    if mn.startswith(("v_mfma", "v_smfmac")):
        passes = mfma_passes(mn, arch)
        return OpInfo(CAT_VALU, "mfma", (), passes)
    return OpInfo(CAT_VALU, "valu", ())


def instruction_size(isa: str) -> int:
    """Encoded size in bytes: VOP3/VOP3P/MUBUF/DS/SMEM/FLAT and literals use 8, the rest 4."""
    mn = mnemonic(isa)
    if mn.startswith(("v_mfma", "buffer_", "global_", "flat_", "scratch_", "ds_", "s_load", "s_buffer")):
        return 8
    if "0x" in isa or mn.endswith("_e64") or mn.startswith(("v_lshl_or", "v_lshl_add", "v_or3", "v_bfe")):
        return 8
    return 4
