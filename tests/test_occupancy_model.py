"""The occupancy model pinned to every worked example of HARDWARE.md §1 and issue 3's acceptance list.

Expected values are worked by hand in the comments from the §1 formulas.
"""

from __future__ import annotations

import pytest

from hotspot.arch.occupancy_model import compute_occupancy, occupancy_candidates
from hotspot.arch.resources import scan_isa_registers
from hotspot.arch.targets import get_target
from hotspot.errors import InputError


@pytest.mark.parametrize("gfx", ["gfx942", "gfx950", "gfx90a"])
@pytest.mark.parametrize("vgpr,agpr,total,waves", [
    (128, 0, 128, 4),     # 512 // 128
    (128, 128, 256, 2),   # 512 // 256
    (90, 64, 156, 3),     # alignTo(90,4)=92 + 64 = 156 → 160 → 512 // 160
    (144, 136, 280, 1),   # 280 → 512 // 280
    (256, 256, 512, 1),
])
def test_worked_vgpr_examples(gfx, vgpr, agpr, total, waves):
    occ = compute_occupancy(gfx, vgpr, agpr)
    assert occ.details.vgpr_total == total
    assert occ.limits["vgpr"] == waves
    assert occ.waves_per_simd == waves
    assert occ.limiter == "vgpr" and occ.limiters == ("vgpr",)


def test_90_plus_64_rounds_to_160():
    occ = compute_occupancy("gfx942", 90, 64)
    assert occ.details.vgpr_allocated == 160


def test_144_plus_136_next_step_says_256_total():
    occ = compute_occupancy("gfx942", 144, 136)
    step = occ.next_step["vgpr"]
    assert (step.target_waves, step.current, step.max_allowed, step.reduce_by) == (2, 280, 256, 24)
    assert step.message.startswith("2 waves/SIMD needs total VGPRs ≤ 256 (now 280): free 24")
    # 144 + 112 = 256; alignTo(120, 4) + 136 = 256
    assert step.alternatives == {"agpr": 112, "vgpr": 120}


def test_next_step_message_format_from_issue():
    # 248 arch VGPRs: 512 // 248 = 2; 3 waves needs alloc ≤ 512 // 3 = 170 → 168
    occ = compute_occupancy("gfx950", 248)
    assert occ.next_step["vgpr"].message == "3 waves/SIMD needs total VGPRs ≤ 168 (now 248): free 80"


def test_gfx908_separate_files():
    # max(100, 20) = 100 → alignTo 4 = 100 → 256 // 100 = 2; the unified rule would give 512 // 120 = 4
    occ = compute_occupancy("gfx908", 100, 20)
    assert occ.details.vgpr_total == 100
    assert occ.waves_per_simd == 2
    assert compute_occupancy("gfx90a", 100, 20).waves_per_simd == 4
    # granule 4 on gfx908: 84 → 256 // 84 = 3; 85 → 88 → 2
    assert compute_occupancy("gfx908", 84).waves_per_simd == 3
    assert compute_occupancy("gfx908", 85).waves_per_simd == 2
    # cap 10 on gfx908: 24 → 256 // 24 = 10; 16 → 16 capped to 10
    assert compute_occupancy("gfx908", 24).waves_per_simd == 10
    assert compute_occupancy("gfx908", 16).limits["hardware"] == 10
    step = occ.next_step["vgpr"]
    # 3 waves needs alignTo(max, 4) ≤ 256 // 3 = 85 → 84
    assert (step.resource, step.max_allowed, step.target_waves) == ("vgpr_max", 84, 3)
    # AGPRs larger than arch VGPRs decide just the same
    assert compute_occupancy("gfx908", 20, 100).waves_per_simd == 2
    assert compute_occupancy("gfx908", 10, 256).waves_per_simd == 1


def test_gfx908_rejects_agpr_beyond_its_file():
    with pytest.raises(InputError, match="agpr"):
        compute_occupancy("gfx908", 10, 257)


@pytest.mark.parametrize("gfx,waves,limiter", [
    # 48 KiB per 4-wave WG. gfx942: 65536 // 49152 = 1 WG → ceil(1·4/4) = 1 wave.
    ("gfx942", 1, "lds"),
    # gfx950: 49152 → alignTo 1280 = 49920 → 163840 // 49920 = 3 WGs → 3 waves.
    ("gfx950", 3, "lds"),
])
def test_lds_granule_48k_four_wave_workgroup(gfx, waves, limiter):
    occ = compute_occupancy(gfx, 32, lds_bytes=48 * 1024, wg_threads=256)
    assert occ.limits["lds"] == waves
    assert occ.waves_per_simd == waves and occ.limiter == limiter


def test_lds_granule_rounding_matters_on_gfx950():
    # 54000 B: unrounded 163840 // 54000 = 3 (162000 fits); rounded → 43 × 1280 = 55040 → 2 WGs → 2
    occ = compute_occupancy("gfx950", 32, lds_bytes=54000, wg_threads=256)
    assert occ.details.lds_allocated_bytes == 55040
    assert occ.limits["lds"] == 2
    assert any("unrounded" in n for n in occ.notes)


def test_gfx942_lds_granule_512():
    # 16385 B → 16896 → 65536 // 16896 = 3 WGs of 4 waves → 3 waves (unrounded would say 3 too)
    occ = compute_occupancy("gfx942", 32, lds_bytes=16385, wg_threads=256)
    assert occ.details.lds_allocated_bytes == 16896
    assert occ.limits["lds"] == 3


def test_real_gfx950_mfma_kernel_v0_v241():
    isa = ["v_mfma_f32_32x32x16_bf16 v[0:15], v[224:227], v[238:241], v[0:15]", "v_mov_b32 v17, s3"]
    regs = scan_isa_registers(isa)
    assert regs.vgpr_count == 242
    occ = compute_occupancy("gfx950", regs.vgpr_count, 0, lds_bytes=48 * 1024, wg_threads=256)
    # 242 → 248 → 512 // 248 = 2; LDS 3 (above); a 64 KiB-LDS model would say 1 (LDS-bound)
    assert occ.waves_per_simd == 2 and occ.limiter == "vgpr"
    assert occ.limits["lds"] == 3
    assert compute_occupancy("gfx942", 242, 0, lds_bytes=48 * 1024, wg_threads=256).limiter == "lds"


@pytest.mark.parametrize("sgpr,includes,waves", [
    (100, False, 7),   # 100 + 6 = 106 → 112 → 800 // 112 = 7
    (100, True, 7),    # 100 → 112 → 7
    (90, False, 8),    # 96 → 800 // 96 = 8
    (96, True, 8),
    (112, True, 7),
    (10, False, 8),    # 16 → 50, capped at 8
])
def test_sgpr_limit(sgpr, includes, waves):
    occ = compute_occupancy("gfx942", 32, sgpr=sgpr, sgpr_includes_implicit=includes)
    assert occ.limits["sgpr"] == waves


def test_sgpr_100_gives_7_waves_and_sgpr_bound():
    occ = compute_occupancy("gfx942", 32, sgpr=100)
    assert occ.waves_per_simd == 7 and occ.limiter == "sgpr"
    step = occ.next_step["sgpr"]
    # 8 waves needs alignTo(s + 6, 16) ≤ 800 // 8 = 100 → 96 → s ≤ 90
    assert (step.target_waves, step.max_allowed, step.reduce_by) == (8, 90, 10)


@pytest.mark.parametrize("total", [97, 98, 99, 100])
def test_sgpr_97_to_100_note(total):
    occ = compute_occupancy("gfx942", 32, sgpr=total, sgpr_includes_implicit=True)
    assert occ.limits["sgpr"] == 7
    assert any("LLVM's older step table" in n for n in occ.notes)


@pytest.mark.parametrize("total", [96, 101, 112])
def test_no_sgpr_note_outside_97_100(total):
    occ = compute_occupancy("gfx942", 32, sgpr=total, sgpr_includes_implicit=True)
    assert not any("LLVM's older step table" in n for n in occ.notes)


def test_gfx90a_implicit_sgprs_are_an_assumption():
    occ = compute_occupancy("gfx90a", 32, sgpr=40)
    assert any("up to 6 implicit" in n for n in occ.notes)
    assert not any("implicit SGPRs (VCC" in n for n in compute_occupancy("gfx942", 32, sgpr=40).notes)


@pytest.mark.parametrize("gfx,waves", [("gfx942", 8), ("gfx950", 8), ("gfx90a", 8), ("gfx908", 10)])
def test_single_wave_workgroups_reach_full_occupancy(gfx, waves):
    # 1-wave WGs get 32 (40) slots; without the exception min(32 // 1, 16) = 16 → only 4 waves
    occ = compute_occupancy(gfx, 16, wg_threads=64)
    assert occ.details.workgroups_per_cu_by_slots == get_target(gfx).single_wave_workgroups_per_cu
    assert occ.limits["workgroup"] == waves == occ.waves_per_simd
    assert occ.limiter == "hardware"


def test_sixteen_wave_workgroups():
    # 1024 work-items = 16 waves: min(32 // 16, 16) = 2 WGs → 32 waves → 8/SIMD
    occ = compute_occupancy("gfx942", 32, wg_threads=1024)
    assert occ.details.waves_per_workgroup == 16
    assert occ.details.workgroups_per_cu_by_slots == 2
    assert occ.limits["workgroup"] == 8
    # with 40 KiB LDS each, only one fits: 16 waves → 4/SIMD; the next LDS step jumps to 8
    occ = compute_occupancy("gfx942", 32, lds_bytes=40 * 1024, wg_threads=1024)
    assert occ.waves_per_simd == 4 and occ.limiter == "lds"
    step = occ.next_step["lds"]
    assert (step.target_waves, step.max_allowed) == (8, 32 * 1024)


@pytest.mark.parametrize("threads,waves", [
    (448, 7),   # 7 waves: min(32 // 7, 16) = 4 WGs → 28 → 7
    (576, 7),   # 9 waves: 3 WGs → 27 → ceil(6.75) = 7
    (704, 6),   # 11 waves: 2 WGs → 22 → ceil(5.5) = 6
    (768, 6),   # 12 waves: 2 → 24 → 6
    (192, 8),   # 3 waves: 10 → 30 → ceil(7.5) = 8
    (65, 8),    # 2 waves: 16 → 32 → 8
])
def test_workgroup_slot_limits(threads, waves):
    assert compute_occupancy("gfx942", 32, wg_threads=threads).limits["workgroup"] == waves


def test_workgroup_next_step():
    occ = compute_occupancy("gfx942", 32, wg_threads=704)   # 11 waves → 6
    assert occ.limiter == "workgroup"
    step = occ.next_step["workgroup"]
    # largest smaller shape that beats 6: 10 waves → 3 WGs → 30 → 8
    assert (step.max_allowed, step.target_waves, step.reduce_by) == (640, 8, 64)
    # nearest larger shape reaching 8: 15 waves → 2 WGs → 30 → 8
    assert step.alternatives == {"wg_threads_larger": 960}


def test_ck_bmm_rocpd_numbers():
    # rocpd: vgpr 128, accum 384 (= allocation − arch), sgpr 112 (allocation), 64 KiB LDS, 256 threads
    occ = compute_occupancy("gfx942", 128, 384, 112, 65536, 256, sgpr_includes_implicit=True)
    assert occ.waves_per_simd == 1
    assert occ.limiter == "vgpr"
    assert occ.limiters == ("vgpr", "lds")      # LDS also allows only one 64 KiB workgroup
    assert dict(occ.limits.items()) == {"hardware": 8, "vgpr": 1, "sgpr": 7, "lds": 1, "workgroup": 8}
    assert occ.next_step["vgpr"].max_allowed == 256
    assert any("allocation − arch" in n for n in occ.notes)


def test_unknown_inputs_give_none_limits():
    occ = compute_occupancy("gfx942", 64, lds_bytes=1024)
    assert occ.limits["sgpr"] is None and occ.limits["lds"] is None and occ.limits["workgroup"] is None
    assert occ.waves_per_simd == 8 and occ.limiter == "hardware" and occ.next_step == {}
    assert compute_occupancy("gfx942", 64).limits["lds"] == 8   # no LDS used: not a limit


@pytest.mark.parametrize("kwargs,field", [
    ({"vgpr": -1}, "vgpr"), ({"vgpr": 257}, "vgpr"), ({"vgpr": 256, "agpr": 257}, "agpr"),
    ({"vgpr": 10, "agpr": -2}, "agpr"), ({"vgpr": 10, "sgpr": 103}, "sgpr"),
    ({"vgpr": 10, "sgpr": 113, "sgpr_includes_implicit": True}, "sgpr"),
    ({"vgpr": 10, "lds_bytes": 65537}, "lds_bytes"), ({"vgpr": 10, "wg_threads": 0}, "wg_threads"),
    ({"vgpr": 10, "wg_threads": 1025}, "wg_threads"), ({"vgpr": True}, "vgpr"),
])
def test_bad_values_name_the_field(kwargs, field):
    with pytest.raises(InputError) as info:
        compute_occupancy("gfx942", **kwargs)
    assert info.value.message.startswith(field)


def test_gfx950_accepts_160k_lds():
    assert compute_occupancy("gfx950", 32, lds_bytes=160 * 1024, wg_threads=64).limits["lds"] == 1


def test_candidates_differ_in_lds():
    cands = occupancy_candidates(["gfx942", "gfx950"], 32, lds_bytes=48 * 1024, wg_threads=256)
    assert not cands.agree
    assert cands.differing_limits == ("lds",)
    assert cands.by_arch["gfx942"].waves_per_simd == 1
    assert cands.by_arch["gfx950"].waves_per_simd == 3
    assert "gfx942: 1 wave/SIMD" in cands.summary and "gfx950: 3 waves/SIMD" in cands.summary


def test_candidates_agree_without_lds():
    cands = occupancy_candidates(["gfx942", "gfx950", "gfx942"], 128, 128)
    assert cands.agree and list(cands.by_arch) == ["gfx942", "gfx950"]
    assert cands.summary.startswith("2 waves/SIMD (vgpr-bound) under every candidate")


def test_candidates_exclude_impossible_arch():
    cands = occupancy_candidates(["gfx942", "gfx950"], 32, lds_bytes=100 * 1024, wg_threads=256)
    assert list(cands.by_arch) == ["gfx950"]
    assert "lds_bytes" in cands.excluded["gfx942"]
    with pytest.raises(InputError):
        occupancy_candidates(["gfx942", "gfx90a"], 32, lds_bytes=100 * 1024, wg_threads=256)
