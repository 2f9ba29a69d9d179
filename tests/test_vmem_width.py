"""The one VMEM width reader (hotspot/arch/vmem_width.py) and the rules' scopes over it."""

from __future__ import annotations

import pytest

from hotspot.arch.vmem_width import VmemAccess, lane_bytes, vmem_access
from hotspot.plan.access_rules import bytes_per_lane, store_bytes_per_lane


# Widths by hand from the ISA: dword = 4 bytes, short = 2, byte = 1, bN = N bits.
@pytest.mark.parametrize("isa, access", [
    ("global_load_dwordx4 v[0:3], v[4:5], off", VmemAccess("global", "load", 16)),
    ("buffer_load_dwordx3 v[0:2], v4, s[0:3], 0 offen", VmemAccess("buffer", "load", 12)),
    ("flat_load_dwordx2 v[0:1], v[2:3]", VmemAccess("flat", "load", 8)),
    ("global_load_dword v0, v[1:2], off", VmemAccess("global", "load", 4)),
    ("global_load_ushort v0, v[1:2], off", VmemAccess("global", "load", 2)),
    ("global_load_short_d16_hi v0, v[1:2], off", VmemAccess("global", "load", 2)),
    ("global_load_ubyte_d16 v0, v[1:2], off", VmemAccess("global", "load", 1)),
    ("global_load_sbyte v0, v[1:2], off", VmemAccess("global", "load", 1)),
    ("buffer_load_lds_dwordx4 v1, s[0:3], 0 offen", VmemAccess("buffer", "load", 16)),
    ("global_load_b128 v[0:3], v[4:5], off", VmemAccess("global", "load", 16)),
    ("global_load_b16 v0, v[1:2], off", VmemAccess("global", "load", 2)),
    # gfx11/12: one byte a lane into half a register (d16), not two
    ("global_load_d16_u8 v0, v[1:2], off", VmemAccess("global", "load", 1)),
    ("global_load_d16_hi_i8 v0, v[1:2], off", VmemAccess("global", "load", 1)),
    ("buffer_load_d16_i8 v0, v1, s[0:3], 0 offen", VmemAccess("buffer", "load", 1)),
    ("scratch_load_d16_hi_u8 v0, off, s0", VmemAccess("scratch", "load", 1)),
    ("global_load_d16_b16 v0, v[1:2], off", VmemAccess("global", "load", 2)),
    ("global_store_d16_hi_b8 v[0:1], v2, off", VmemAccess("global", "store", 1)),
    ("global_store_dwordx2 v[0:1], v[2:3], off", VmemAccess("global", "store", 8)),
    ("buffer_store_short v0, v1, s[0:3], 0 offen", VmemAccess("buffer", "store", 2)),
    ("scratch_store_dwordx4 off, v[0:3], s0 offset:16", VmemAccess("scratch", "store", 16)),
    ("scratch_load_dword v0, off, s0", VmemAccess("scratch", "load", 4)),
    ("  GLOBAL_LOAD_DWORD v0, v[1:2], off", VmemAccess("global", "load", 4)),
    ("buffer_load_format_xyzw v[0:3], v4, s[0:3], 0 idxen", None),   # no size suffix to read
    ("global_atomic_add v0, v[1:2], off", None),                       # not a load or store
    ("s_load_dwordx4 s[0:3], s[4:5], 0x0", None),                      # scalar memory
    ("ds_read_b128 v[0:3], v4", None),                                 # LDS
    ("", None),
])
def test_vmem_access(isa: str, access: VmemAccess | None) -> None:
    assert vmem_access(isa) == access
    assert lane_bytes(isa) == (access.lane_bytes if access else None)


def test_the_plan_rules_weigh_global_memory_only() -> None:
    # loads of every segment but scratch (spills have their own rule); stores of buffer/global/flat
    assert bytes_per_lane("global_load_dwordx2 v[0:1], v[2:3], off") == 8
    assert bytes_per_lane("scratch_load_dwordx2 v[0:1], off, s0") is None
    assert bytes_per_lane("global_store_dwordx2 v[0:1], v[2:3], off") is None
    assert store_bytes_per_lane("global_store_dwordx2 v[0:1], v[2:3], off") == 8
    assert store_bytes_per_lane("scratch_store_dword off, v0, s0") is None
    assert store_bytes_per_lane("global_load_dword v0, v[1:2], off") is None
