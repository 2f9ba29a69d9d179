"""The per-gfx tables: values from HARDWARE.md §1/§3, a source note on every field, lookups."""

from __future__ import annotations

from dataclasses import fields

import pytest

from hotspot.arch.targets import (
    KNOWN_GFX,
    SEPARATE,
    SOURCES,
    TARGETS,
    UNIFIED,
    ArchTarget,
    get_target,
)
from hotspot.errors import InputError


def test_known_targets_in_order():
    assert KNOWN_GFX == ("gfx908", "gfx90a", "gfx942", "gfx950")
    assert set(TARGETS) == set(KNOWN_GFX)


@pytest.mark.parametrize("gfx", ["gfx908", "gfx90a", "gfx942", "gfx950"])
def test_every_field_has_a_source_note(gfx):
    target = get_target(gfx)
    for f in fields(ArchTarget):
        note = target.source(f.name)
        assert isinstance(note, str) and note.strip(), f"{gfx}.{f.name} has no source note"
    assert set(SOURCES[gfx]) == {f.name for f in fields(ArchTarget)}


# (gfx, max waves/SIMD, per CU, file, granule, LDS per CU, LDS granule, 1-wave WG slots, implicit always)
HARDWARE_TABLE = [
    ("gfx908", 10, 40, SEPARATE, 4, 65536, 512, 40, False),
    ("gfx90a", 8, 32, UNIFIED, 8, 65536, 512, 32, False),
    ("gfx942", 8, 32, UNIFIED, 8, 65536, 512, 32, True),
    ("gfx950", 8, 32, UNIFIED, 8, 163840, 1280, 32, True),
]


@pytest.mark.parametrize("gfx,waves,per_cu,vfile,granule,lds,lds_granule,single,always", HARDWARE_TABLE)
def test_values_match_hardware_md(gfx, waves, per_cu, vfile, granule, lds, lds_granule, single, always):
    t = get_target(gfx)
    assert (t.max_waves_per_simd, t.max_waves_per_cu, t.vgpr_file) == (waves, per_cu, vfile)
    assert t.vgpr_alloc_granule == granule
    assert t.lds_per_cu_bytes == lds and type(t.lds_per_cu_bytes) is int
    assert t.max_lds_per_workgroup_bytes == lds
    assert t.lds_alloc_granule_bytes == lds_granule
    assert t.single_wave_workgroups_per_cu == single
    assert t.implicit_sgprs_always is always
    assert (t.wave_size, t.simds_per_cu, t.sgprs_per_simd, t.sgpr_alloc_granule, t.implicit_sgprs) == (64, 4, 800, 16, 6)
    assert (t.max_arch_vgprs_per_wave, t.max_agprs_per_wave, t.max_workgroups_per_cu) == (256, 256, 16)
    assert (t.vmcnt_max, t.lgkmcnt_max, t.expcnt_max) == (63, 15, 7)
    assert t.vgprs_per_lane == (256 if vfile == SEPARATE else 512)
    assert t.max_waves_per_cu == t.max_waves_per_simd * t.simds_per_cu


def test_gfx950_alternative_lds_granule_is_marked_unverified():
    t = get_target("gfx950")
    assert t.lds_alloc_granule_alt_bytes == 2048
    assert "unverified" in t.source("lds_alloc_granule_alt_bytes")


@pytest.mark.parametrize("spelling", ["gfx942", "GFX942", " gfx942 ", "gfx942:sramecc+:xnack-"])
def test_get_target_normalizes(spelling):
    assert get_target(spelling).gfx == "gfx942"


def test_unknown_target_names_the_known_ones():
    with pytest.raises(InputError) as info:
        get_target("gfx1100")
    assert "gfx1100" in info.value.message
    for gfx in KNOWN_GFX:
        assert gfx in info.value.message
    assert info.value.exit_code == 3
