"""One frozen table entry per CDNA target; every constant carries a one-line source note.

Adding an architecture is one `_entry(...)` call below. Values are plain ints/strs on the dataclass
(`get_target("gfx950").lds_per_cu_bytes == 163840`); the source note of any field is
`target.source("lds_per_cu_bytes")` (kept in `SOURCES[gfx][field]`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import fields
from typing import NamedTuple

from hotspot.arch import mfma_tables as mt
from hotspot.arch.counter_semantics import (
    GFX90A_COUNTERS,
    GFX942_COUNTERS,
    GFX950_COUNTERS,
    OTHER_TARGETS,
    ArchCounters,
)
from hotspot.errors import InputError
from hotspot.record import record

UNIFIED = "unified"    # arch VGPRs and AGPRs share one 512-entry file per lane (gfx90a and later)
SEPARATE = "separate"  # separate 256-entry arch VGPR and AGPR files (gfx908)
# A kernel compiled with kernel-argument preloading (gfx940+) starts with a compatibility prologue
# that loads the arguments for firmware without preloading; firmware that preloads starts the
# wave this many bytes after the kernel entry, so the prologue never executes (LLVM AMDGPUUsage,
# "Preloaded Kernel Arguments": the 256-byte backwards-compatibility prologue).
KERNARG_PRELOAD_ENTRY_OFFSET = 256

# Short names for the reference the notes cite (../shared/docs/HARDWARE.md, which in turn cites LLVM
# AMDGPU subtarget/base-info, rocprofiler-compute SoC specs and AMD spec sheets).
_T1 = "HARDWARE.md §1 table"
_F1 = "HARDWARE.md §1 formula"
_T3 = "HARDWARE.md §3 (s_waitcnt field width)"
_T5 = "HARDWARE.md §5, derived: dense TFLOP/s ÷ (CUs × clock)"


class Sourced(NamedTuple):
    """A table value and the one-line note saying where it comes from."""

    value: object
    source: str


@record
class ArchTarget:
    gfx: str
    family: str
    wave_size: int
    simds_per_cu: int
    max_waves_per_simd: int
    max_waves_per_cu: int
    vgpr_file: str                    # UNIFIED or SEPARATE
    vgprs_per_lane: int               # unified: arch+acc total; separate: size of EACH file
    vgpr_alloc_granule: int
    agpr_base_align: int              # unified file: AGPRs start at alignTo(arch VGPRs, this)
    max_arch_vgprs_per_wave: int
    max_agprs_per_wave: int
    sgprs_per_simd: int
    sgpr_alloc_granule: int
    implicit_sgprs: int               # VCC, FLAT_SCRATCH, XNACK_MASK
    implicit_sgprs_always: bool       # False: "up to" (depends on the kernel; the model assumes all)
    max_user_sgprs_per_wave: int
    lds_per_cu_bytes: int
    max_lds_per_workgroup_bytes: int
    lds_alloc_granule_bytes: int
    lds_alloc_granule_alt_bytes: int | None   # an alternative granule seen in some encodings
    max_workgroups_per_cu: int        # multi-wave workgroups (also capped by max_waves_per_cu // N)
    single_wave_workgroups_per_cu: int
    max_workgroup_threads: int
    vmcnt_max: int
    lgkmcnt_max: int
    expcnt_max: int
    dense_f16_flops_per_clk_per_cu: int
    dense_fp8_flops_per_clk_per_cu: int | None
    gfxip: int                        # major gfx IP version (filenames.json `gfxip`; waitcnt rules)
    analysis_tested: bool             # hotspot's analyses are built and tested on this target
    counters: ArchCounters | None     # L2/fabric counter semantics and the `--pmc-preset l2` list
    mfma_passes: Mapping[tuple[int, int, int, str], int] | None  # dense single-block shapes
    mfma_f8f6f4_passes: Mapping[tuple[int, int, int], tuple[int, int]] | None  # (fp8, other)
    mfma_faster_shapes: Mapping[tuple[int, int, int, str], str] | None  # older shape -> faster one
    exclusive_mnemonics: tuple[str, ...]  # regexes of mnemonics only this target has
    old_profilers_halve_vgprs: bool   # rocprofv3 before a 2025 fix reports half the VGPRs, Accum 0

    def source(self, field_name: str) -> str:
        """The source note of one field of this target."""
        return SOURCES[self.gfx][field_name]


SOURCES: dict[str, dict[str, str]] = {}


def _entry(**values: Sourced) -> ArchTarget:
    missing = {f.name for f in fields(ArchTarget)} - set(values)
    if missing:  # a table bug, caught at import by the tests
        raise TypeError(f"arch table entry lacks {sorted(missing)}")
    target = ArchTarget(**{k: v.value for k, v in values.items()})  # type: ignore[arg-type]  # the table's values, checked by the tests
    SOURCES[target.gfx] = {k: v.source for k, v in values.items()}
    return target


def _common_gfx9(**overrides: Sourced) -> dict[str, Sourced]:
    """Fields every CDNA target shares (the notes still say where each value comes from)."""
    base = dict(
        wave_size=Sourced(64, _T1),
        simds_per_cu=Sourced(4, _T1),
        max_arch_vgprs_per_wave=Sourced(256, _T1),
        max_agprs_per_wave=Sourced(256, _T1),
        agpr_base_align=Sourced(4, f"{_F1} 2: T = alignTo(arch, 4) + agpr (AMDGPU accum_offset granule)"),
        sgprs_per_simd=Sourced(800, _T1),
        sgpr_alloc_granule=Sourced(16, _T1),
        implicit_sgprs=Sourced(6, f"{_T1}: VCC, FLAT_SCRATCH, XNACK_MASK"),
        max_user_sgprs_per_wave=Sourced(102, "LLVM AMDGPUBaseInfo getAddressableNumSGPRs (gfx8+: 102)"),
        max_workgroups_per_cu=Sourced(16, f"{_T1}: multi-wave WG slots min(waves_per_CU/N, 16)"),
        max_workgroup_threads=Sourced(1024, "HIP/HSA maximum work-group size (1024 work-items)"),
        vmcnt_max=Sourced(63, f"{_T3}: vmcnt 6 bits"),
        lgkmcnt_max=Sourced(15, f"{_T3}: lgkmcnt 4 bits"),
        expcnt_max=Sourced(7, f"{_T3}: expcnt 3 bits"),
        lds_alloc_granule_alt_bytes=Sourced(None, "no alternative granule known"),
        gfxip=Sourced(9, "LLVM: every CDNA target is a gfx9 IP (filenames.json gfxip 9)"),
        analysis_tested=Sourced(False, "no real capture of this target in the test corpus"),
        mfma_passes=Sourced(None, "HARDWARE.md §4 gives no pass table for this target"),
        mfma_f8f6f4_passes=Sourced(None, "HARDWARE.md §4: f8f6f4 shapes exist only on gfx950"),
        mfma_faster_shapes=Sourced(None, "HARDWARE.md §4: no faster replacement shapes listed"),
        exclusive_mnemonics=Sourced((), "none listed in HARDWARE.md §2"),
        old_profilers_halve_vgprs=Sourced(False, "FORMATS.md §3: the register bug is gfx950's"),
    )
    base.update(overrides)
    return base


GFX908 = _entry(**_common_gfx9(
    gfx=Sourced("gfx908", "LLVM processor name (MI100)"),
    family=Sourced("CDNA1", "AMD CDNA whitepaper"),
    max_waves_per_simd=Sourced(10, _T1),
    max_waves_per_cu=Sourced(40, _T1),
    vgpr_file=Sourced(SEPARATE, f"{_T1}: 256 VGPR + separate 256 AGPR"),
    vgprs_per_lane=Sourced(256, f"{_T1}: each of the two files"),
    vgpr_alloc_granule=Sourced(4, _T1),
    implicit_sgprs_always=Sourced(False, f"{_T1}: up to 6"),
    lds_per_cu_bytes=Sourced(64 * 1024, _T1),
    max_lds_per_workgroup_bytes=Sourced(64 * 1024, f"{_T1}: LDS per CU = max per workgroup"),
    lds_alloc_granule_bytes=Sourced(512, _T1),
    single_wave_workgroups_per_cu=Sourced(40, f"{_T1}: 1-wave WGs: 40"),
    dense_f16_flops_per_clk_per_cu=Sourced(1024, f"{_T5}: MI100 184.6 / (120 × 1.502 GHz)"),
    dense_fp8_flops_per_clk_per_cu=Sourced(None, "HARDWARE.md §5: no FP8 MFMA on MI100"),
    counters=Sourced(GFX90A_COUNTERS, "HARDWARE.md §6: gfx908 shares the MI200 TCC_EA_ naming"),
))

GFX90A = _entry(**_common_gfx9(
    gfx=Sourced("gfx90a", "LLVM processor name (MI200 series)"),
    family=Sourced("CDNA2", "AMD CDNA2 whitepaper"),
    max_waves_per_simd=Sourced(8, _T1),
    max_waves_per_cu=Sourced(32, _T1),
    vgpr_file=Sourced(UNIFIED, f"{_T1}: 512 unified"),
    vgprs_per_lane=Sourced(512, _T1),
    vgpr_alloc_granule=Sourced(8, _T1),
    implicit_sgprs_always=Sourced(False, f"{_T1}: up to 6"),
    lds_per_cu_bytes=Sourced(64 * 1024, _T1),
    max_lds_per_workgroup_bytes=Sourced(64 * 1024, f"{_T1}: LDS per CU = max per workgroup"),
    lds_alloc_granule_bytes=Sourced(512, _T1),
    single_wave_workgroups_per_cu=Sourced(32, f"{_T1}: 1-wave WGs: 32"),
    dense_f16_flops_per_clk_per_cu=Sourced(1024, f"{_T5}: MI250X 383.0 / (220 × 1.7 GHz)"),
    dense_fp8_flops_per_clk_per_cu=Sourced(None, "HARDWARE.md §5: no FP8 MFMA on MI200"),
    counters=Sourced(GFX90A_COUNTERS, "HARDWARE.md §6 (TCC_EA_ names)"),
))

GFX942 = _entry(**_common_gfx9(
    gfx=Sourced("gfx942", "LLVM processor name (MI300 series)"),
    family=Sourced("CDNA3", "AMD CDNA3 whitepaper"),
    max_waves_per_simd=Sourced(8, _T1),
    max_waves_per_cu=Sourced(32, _T1),
    vgpr_file=Sourced(UNIFIED, f"{_T1}: 512 unified"),
    vgprs_per_lane=Sourced(512, _T1),
    vgpr_alloc_granule=Sourced(8, _T1),
    implicit_sgprs_always=Sourced(True, f"{_T1}: always 6"),
    lds_per_cu_bytes=Sourced(64 * 1024, _T1),
    max_lds_per_workgroup_bytes=Sourced(64 * 1024, f"{_T1}: LDS per CU = max per workgroup"),
    lds_alloc_granule_bytes=Sourced(512, _T1),
    single_wave_workgroups_per_cu=Sourced(32, f"{_T1}: 1-wave WGs: 32"),
    dense_f16_flops_per_clk_per_cu=Sourced(2048, f"{_T5}: MI300X 1307.4 / (304 × 2.1 GHz)"),
    dense_fp8_flops_per_clk_per_cu=Sourced(4096, f"{_T5}: MI300X 2614.9 / (304 × 2.1 GHz)"),
    analysis_tested=Sourced(True, "corpus: MI300X captures (att/gfx942, pmc/*MI300X*)"),
    counters=Sourced(GFX942_COUNTERS, "HARDWARE.md §6 (TCC_EA0_ names, TCC_BUBBLE = 128 B)"),
    mfma_passes=Sourced(mt.GFX942_PASSES, "HARDWARE.md §4 gfx942 list"),
))

GFX950 = _entry(**_common_gfx9(
    gfx=Sourced("gfx950", "LLVM processor name (MI350 series)"),
    family=Sourced("CDNA4", "AMD CDNA4 whitepaper"),
    max_waves_per_simd=Sourced(8, _T1),
    max_waves_per_cu=Sourced(32, _T1),
    vgpr_file=Sourced(UNIFIED, f"{_T1}: 512 unified"),
    vgprs_per_lane=Sourced(512, _T1),
    vgpr_alloc_granule=Sourced(8, _T1),
    implicit_sgprs_always=Sourced(True, f"{_T1}: always 6"),
    lds_per_cu_bytes=Sourced(160 * 1024, _T1),
    max_lds_per_workgroup_bytes=Sourced(160 * 1024, f"{_T1}: LDS per CU = max per workgroup"),
    lds_alloc_granule_bytes=Sourced(1280, f"{_T1}: 1280 B documented"),
    lds_alloc_granule_alt_bytes=Sourced(2048, f"{_T1}: some encodings use 2048 B (unverified)"),
    single_wave_workgroups_per_cu=Sourced(32, f"{_T1}: 1-wave WGs: 32"),
    dense_f16_flops_per_clk_per_cu=Sourced(4096, f"{_T5}: MI355X 2516.6 / (256 × 2.4 GHz)"),
    dense_fp8_flops_per_clk_per_cu=Sourced(8192, f"{_T5}: MI355X 5033.2 / (256 × 2.4 GHz)"),
    analysis_tested=Sourced(True, "corpus: MI350X captures (att/gfx950, pmc/*MI350*)"),
    counters=Sourced(GFX950_COUNTERS, "HARDWARE.md §6 (32/64/128 B request counters)"),
    mfma_passes=Sourced(mt.GFX950_PASSES, "HARDWARE.md §4 gfx950: gfx942 shapes kept, xf32 removed"),
    mfma_f8f6f4_passes=Sourced(mt.GFX950_F8F6F4_PASSES, "HARDWARE.md §4 f8f6f4 shapes"),
    mfma_faster_shapes=Sourced(mt.GFX950_REPLACEMENTS, "HARDWARE.md §4: old shapes run at half of "
                               "peak on gfx950; the new shape does twice the K in the same passes"),
    exclusive_mnemonics=Sourced(mt.GFX950_EXCLUSIVE_MNEMONICS, "HARDWARE.md §2 gfx950-only list"),
    old_profilers_halve_vgprs=Sourced(True, "FORMATS.md §3: VGPR_Count = half, Accum 0 before the fix"),
))

TARGETS: dict[str, ArchTarget] = {t.gfx: t for t in (GFX908, GFX90A, GFX942, GFX950)}
KNOWN_GFX: tuple[str, ...] = tuple(TARGETS)
# The targets the analyses are built and tested for (doctor warns on others).
TESTED_GFX: tuple[str, ...] = tuple(t.gfx for t in TARGETS.values() if t.analysis_tested)


def normalize_gfx(gfx: str) -> str:
    """`GFX942`, `gfx942:sramecc+:xnack-` and ` gfx942 ` all name gfx942."""
    return gfx.strip().lower().split(":", 1)[0]


def find_target(gfx: str | None) -> ArchTarget | None:
    """The table entry of a (possibly feature-suffixed) gfx name, or None when not in the table."""
    return TARGETS.get(normalize_gfx(gfx)) if gfx else None


def get_target(gfx: str) -> ArchTarget:
    """The table entry for a gfx target; InputError naming the known ones otherwise."""
    key = normalize_gfx(gfx)
    target = TARGETS.get(key)
    if target is None:
        raise InputError(f"unknown GPU architecture '{gfx}' (known: {', '.join(KNOWN_GFX)})",
                         f"pass one of {', '.join(KNOWN_GFX)}", code="unknown-arch")
    return target


def counters_for_arch(arch: str | None) -> ArchCounters | None:
    """The counter semantics of a gfx target (feature suffixes ignored); None when unknown."""
    if not arch:
        return None
    target = find_target(arch)
    if target is not None:
        return target.counters
    return OTHER_TARGETS.get(normalize_gfx(arch))
