"""Instruction classification by mnemonic token into the stall taxonomy (docs/stall-taxonomy.md).

Only the first token (the mnemonic) is matched, against exact names first and then the longest
matching prefix, so `s_buffer_load_dword` is `smem` (not a VMEM load) and `s_waitcnt vmcnt(0)
lgkmcnt(0)` is `wait-mixed`. Operands are read only where the ISA encodes meaning there: the
counters of `s_waitcnt` and the `lds` modifier of direct-to-LDS loads.
"""

from __future__ import annotations

import re
from enum import Enum
from functools import lru_cache
from hotspot.record import record

class Category(str, Enum):
    """A stall-taxonomy category (docs/stall-taxonomy.md), in the order reports list them. A `str`
    enum: it is written to JSON and text as its value, and equals that string."""

    VMEM_LOAD = "vmem-load"
    VMEM_STORE = "vmem-store"
    VMEM_ATOMIC = "vmem-atomic"
    FLAT = "flat"
    SCRATCH = "scratch"
    SMEM = "smem"
    LDS = "lds"
    CROSS_LANE = "cross-lane"
    WAIT_VMCNT = "wait-vmcnt"
    WAIT_LGKMCNT = "wait-lgkmcnt"
    WAIT_EXPCNT = "wait-expcnt"
    WAIT_MIXED = "wait-mixed"
    BARRIER = "barrier"
    MFMA = "mfma"
    VALU = "valu"
    SALU = "salu"
    BRANCH = "branch"
    NOP = "nop"
    MESSAGE = "message"
    OTHER = "other"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


C = Category
# Category ids, in the order reports list them.
CATEGORIES: tuple[str, ...] = tuple(c.value for c in Category)

# The named sets every layer reads (plan rules, wait attribution, synth, render): one place, so a
# category added to the enum is placed in each set here or nowhere.
WAIT_CATEGORIES = frozenset({C.WAIT_VMCNT, C.WAIT_LGKMCNT, C.WAIT_EXPCNT, C.WAIT_MIXED})
MEMORY_CATEGORIES = frozenset({C.VMEM_LOAD, C.VMEM_STORE, C.VMEM_ATOMIC, C.FLAT, C.SCRATCH, C.SMEM,
                               C.LDS, C.CROSS_LANE})
VMCNT_WAITS = frozenset({C.WAIT_VMCNT, C.WAIT_MIXED})          # waits that can wait on vector memory
LGKM_WAITS = frozenset({C.WAIT_LGKMCNT, C.WAIT_MIXED})         # waits that can wait on LDS/GDS/K$/msg
LATENCY_WAITS = frozenset({C.WAIT_VMCNT, C.WAIT_LGKMCNT, C.WAIT_MIXED})  # memory-latency waits
VMEM_LOADS = frozenset({C.VMEM_LOAD, C.FLAT})                  # loads through the vector memory path
VMEM_ACCESS = frozenset({C.VMEM_LOAD, C.VMEM_STORE, C.FLAT})   # requests that move DRAM bytes
VMEM_WRITES = frozenset({C.VMEM_STORE, C.VMEM_ATOMIC, C.FLAT, C.SCRATCH})
VM_PRODUCERS = frozenset({C.VMEM_LOAD, C.VMEM_STORE, C.VMEM_ATOMIC, C.FLAT, C.SCRATCH})
LGKM_PRODUCERS = frozenset({C.SMEM, C.LDS})
LOADS = frozenset({C.VMEM_LOAD, C.FLAT, C.SMEM, C.LDS})        # loads whose wait can move
VECTOR_ALU = frozenset({C.VALU, C.MFMA})
# the producer classes of lgkmcnt waits (docs/schema/analyze.md `lgkm_breakdown`)
LGKM_CLASSES: tuple[Category, ...] = (C.LDS, C.SMEM, C.CROSS_LANE, C.MESSAGE, C.FLAT)
# memory stall: the waits on vector memory and the issue of vector memory instructions
MEMORY_STALL = (C.WAIT_VMCNT, C.WAIT_MIXED, C.VMEM_LOAD, C.VMEM_STORE, C.VMEM_ATOMIC, C.FLAT,
                C.SCRATCH)


def is_wait(category: str) -> bool:
    return category in WAIT_CATEGORIES


# Exact mnemonics (checked first).
_EXACT: dict[str, str] = {
    "s_barrier": "barrier",
    "s_nop": "nop", "s_sleep": "nop", "s_delay_alu": "nop", "s_clause": "nop", "s_wait_alu": "nop",
    "s_endpgm": "message", "s_endpgm_saved": "message", "s_sendmsg": "message",
    "s_sendmsghalt": "message", "s_sendmsg_rtn_b32": "message", "s_sendmsg_rtn_b64": "message",
    "s_trap": "message", "s_ttracedata": "message", "s_ttracedata_imm": "message",
    "s_branch": "branch", "s_setpc_b64": "branch", "s_swappc_b64": "branch", "s_call_b64": "branch",
    "ds_bpermute_b32": "cross-lane", "ds_permute_b32": "cross-lane", "ds_swizzle_b32": "cross-lane",
    "ds_bpermute_fi_b32": "cross-lane",
    "s_memtime": "smem", "s_memrealtime": "smem", "s_atc_probe": "smem",
    "s_atc_probe_buffer": "smem", "s_dcache_inv": "smem", "s_dcache_wb": "smem",
    "s_barrier_signal": "barrier", "s_barrier_wait": "barrier",
    "s_barrier_signal_isfirst": "barrier",
}

# Prefixes; the longest matching prefix wins.
_PREFIX: tuple[tuple[str, str], ...] = (
    # vector memory through the buffer/global/image paths
    ("buffer_load_", "vmem-load"), ("tbuffer_load_", "vmem-load"), ("global_load_", "vmem-load"),
    ("image_load", "vmem-load"), ("image_sample", "vmem-load"), ("image_gather", "vmem-load"),
    ("buffer_store_", "vmem-store"), ("tbuffer_store_", "vmem-store"),
    ("global_store_", "vmem-store"), ("image_store", "vmem-store"),
    ("buffer_atomic_", "vmem-atomic"), ("global_atomic_", "vmem-atomic"),
    ("image_atomic_", "vmem-atomic"),
    ("flat_", "flat"),
    ("scratch_", "scratch"),
    # scalar memory
    ("s_load_", "smem"), ("s_buffer_load_", "smem"), ("s_store_", "smem"),
    ("s_buffer_store_", "smem"), ("s_scratch_", "smem"), ("s_prefetch_", "smem"),
    # LDS (cross-lane ds ops are exact names above)
    ("ds_", "lds"),
    # matrix cores
    ("v_mfma", "mfma"), ("v_smfmac", "mfma"), ("v_wmma", "mfma"), ("v_swmmac", "mfma"),
    # branches
    ("s_cbranch_", "branch"),
    # gfx12 split counters: s_wait_<counter>
    ("s_wait_loadcnt", "wait-vmcnt"), ("s_wait_storecnt", "wait-vmcnt"),
    ("s_wait_samplecnt", "wait-vmcnt"), ("s_wait_bvhcnt", "wait-vmcnt"),
    ("s_wait_kmcnt", "wait-lgkmcnt"), ("s_wait_dscnt", "wait-lgkmcnt"),
    ("s_wait_expcnt", "wait-expcnt"), ("s_waitcnt_vscnt", "wait-vmcnt"),
    ("s_waitcnt_vmcnt", "wait-vmcnt"), ("s_waitcnt_lgkmcnt", "wait-lgkmcnt"),
    ("s_waitcnt_expcnt", "wait-expcnt"),
    ("s_sendmsg", "message"),
    ("v_", "valu"),
    ("s_", "salu"),
)

# The tables name categories by their ids; a name that is not a Category fails at import.
_EXACT_CATEGORY: dict[str, Category] = {m: Category(c) for m, c in _EXACT.items()}
_PREFIX_CATEGORY: tuple[tuple[str, Category], ...] = tuple((p, Category(c)) for p, c in _PREFIX)

# Cache-control VMEM ops move no data for the kernel; they are listed as deliberately `other`.
DELIBERATELY_OTHER: frozenset[str] = frozenset({
    "buffer_wbinvl1", "buffer_wbinvl1_vol", "buffer_wbinvl1_sc", "buffer_inv", "buffer_wbl2",
    "buffer_gl0_inv", "buffer_gl1_inv", "global_wb", "global_inv", "exp", "s_code_end",
})

_WAIT_COUNTER = re.compile(r"\b(vmcnt|lgkmcnt|expcnt|vscnt)\s*\(\s*(\d+)\s*\)")
_COUNTER_CATEGORY = {"vmcnt": C.WAIT_VMCNT, "vscnt": C.WAIT_VMCNT, "lgkmcnt": C.WAIT_LGKMCNT,
                     "expcnt": C.WAIT_EXPCNT}


@record
class Classified:
    mnemonic: str
    category: Category
    direct_to_lds: bool = False  # a VMEM load that writes LDS directly (`... lds`, `*_load_lds_*`)
    wait_counters: tuple[tuple[str, int], ...] = ()  # s_waitcnt counters and their thresholds


# the mnemonic: the text up to the first whitespace (as str.split sees it) or comma
_MNEMONIC = re.compile(r"[^\s,]*")


def mnemonic_of(isa: str) -> str:
    """The mnemonic of one ISA line: stripped, cut at the first whitespace or comma, lower case;
    "" for a blank line. The one place the mnemonic is split off: matching and display both use it."""
    m = _MNEMONIC.match(isa.strip())  # always matches (`*`), maybe empty
    return m.group().lower() if m else ""


def wait_counters(isa: str) -> tuple[tuple[str, int], ...]:
    """Counters named in an `s_waitcnt` operand list, e.g. (("vmcnt", 0), ("lgkmcnt", 0))."""
    return tuple((name, int(n)) for name, n in _WAIT_COUNTER.findall(isa))


@lru_cache(maxsize=8192)
def classify(isa: str) -> Classified:
    mnemonic = mnemonic_of(isa)
    if mnemonic == "s_waitcnt":
        counters = wait_counters(isa)
        kinds = {_COUNTER_CATEGORY[name] for name, _ in counters}
        # A bare `s_waitcnt 0` (no named counter) waits on every counter.
        category = kinds.pop() if len(kinds) == 1 else C.WAIT_MIXED
        return Classified(mnemonic, category, wait_counters=counters)
    if mnemonic in DELIBERATELY_OTHER:
        return Classified(mnemonic, C.OTHER)
    exact = _EXACT_CATEGORY.get(mnemonic)
    category = exact if exact is not None else _by_prefix(mnemonic)
    direct = False
    if category is C.VMEM_LOAD:
        operands = isa.strip().split()[1:]
        direct = "_lds_" in mnemonic or mnemonic.endswith("_lds") or (
            bool(operands) and operands[-1].lower() == "lds")
    return Classified(mnemonic, category, direct_to_lds=direct)


# by mnemonic (a listing holds ~100 distinct ones among ~2,000 instructions, and `classify` is
# cached by the whole instruction text, operands included, so nearly every row misses there)
@lru_cache(maxsize=4096)
def _by_prefix(mnemonic: str) -> Category:
    best, best_len = C.OTHER, 0
    for prefix, category in _PREFIX_CATEGORY:
        if mnemonic.startswith(prefix) and len(prefix) > best_len:
            best, best_len = category, len(prefix)
    return best
