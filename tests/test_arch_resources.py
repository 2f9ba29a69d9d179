"""ISA register scan and resource resolution (trust order, ISA floor, warnings)."""

from __future__ import annotations

import sqlite3

import orjson
import pytest

from hotspot.arch.occupancy_model import compute_occupancy
from hotspot.arch.resources import (
    COUNTER_COLLECTION,
    ISA,
    KERNEL_TRACE,
    ROCPD,
    IsaRegisters,
    ResourceCandidate,
    resolve_resources,
    scan_isa_registers,
)


def test_scan_uses_range_ends_and_ignores_special_registers():
    lines = [
        "; kernel_name",                                        # symbol pseudo row
        "s_load_dwordx4 s[4:7], s[0:1], 0x0",
        "v_mfma_f32_32x32x8_f16 a[0:15], v[2:3], v[240:241], a[0:15]",
        "v_add_co_u32_e32 v5, vcc, s12, v1",
        "s_waitcnt vmcnt(0) lgkmcnt(0)",
        "s_mov_b64 exec, s[10:11]",
        "s_and_saveexec_b64 s[20:21], vcc",
        "v_accvgpr_read_b32 v7, a31 ; comment v250 s99",
        "s_cbranch_scc1 BB0_3",
        "v_mov_b32 v0, 0x1a",
        "",
    ]
    regs = scan_isa_registers(lines)
    assert regs == IsaRegisters(max_vgpr_used=241, max_agpr_used=31, max_sgpr_used=21)
    assert (regs.vgpr_count, regs.agpr_count, regs.sgpr_count) == (242, 32, 22)


def test_scan_of_nothing():
    regs = scan_isa_registers(["s_endpgm", "; only a label"])
    assert regs == IsaRegisters(None, None, None)
    assert (regs.vgpr_count, regs.agpr_count, regs.sgpr_count) == (0, 0, 0)


def test_trust_order_per_field():
    counters = ResourceCandidate(60, 0, 48, 1024, 128, COUNTER_COLLECTION, "cc.csv")
    trace = ResourceCandidate(64, 0, 48, 512, None, KERNEL_TRACE, "kt.csv")
    rocpd = ResourceCandidate(64, 32, None, 4096, 256, ROCPD, "r.db")
    res = resolve_resources([counters, trace, rocpd])
    assert (res.vgpr, res.agpr, res.sgpr, res.lds_bytes, res.wg_threads) == (64, 32, 48, 4096, 256)
    assert res.source == {"vgpr": "rocpd (r.db)", "agpr": "rocpd (r.db)", "sgpr": "kernel_trace (kt.csv)",
                          "lds_bytes": "rocpd (r.db)", "wg_threads": "rocpd (r.db)"}
    assert res.sgpr_includes_implicit is True
    assert res.warnings == ()


def test_static_lds_warning_and_missing_accum():
    res = resolve_resources([ResourceCandidate(40, None, 32, 512, 256, COUNTER_COLLECTION)])
    assert res.agpr == 0
    assert any("no AGPR" in w for w in res.warnings)
    assert any("static LDS only" in w for w in res.warnings)


def test_isa_overrides_halved_gfx950_counts():
    # older rocprofv3 on gfx950: VGPR_Count = half the allocation, Accum 0; the ISA uses v0..v241
    csv = ResourceCandidate(124, 0, 96, 49152, 256, KERNEL_TRACE, "kt.csv")
    isa = IsaRegisters(241, None, 60)
    res = resolve_resources([csv], isa, "gfx950")
    assert (res.vgpr, res.agpr) == (242, 0)
    assert res.source["vgpr"] == ISA and res.source["agpr"] == ISA
    warning = next(w for w in res.warnings if "ISA uses" in w)
    assert "v0..v241" in warning and "VGPR 124" in warning and "248" in warning  # 2 × 124
    assert res.sgpr == 96 and res.source["sgpr"] == "kernel_trace (kt.csv)"
    occ = compute_occupancy("gfx950", res.vgpr, res.agpr, res.sgpr, res.lds_bytes, res.wg_threads,
                            sgpr_includes_implicit=res.sgpr_includes_implicit)
    assert occ.waves_per_simd == 2 and occ.limiter == "vgpr"


def test_isa_below_source_total_keeps_the_source():
    # rocpd splits 512 as 128 + 384 while the ISA shows v255/a255: same total, keep rocpd
    rocpd = ResourceCandidate(128, 384, 112, 65536, 256, ROCPD)
    res = resolve_resources([rocpd], IsaRegisters(255, 255, 34), "gfx942")
    assert (res.vgpr, res.agpr) == (128, 384)
    assert not any("ISA uses" in w for w in res.warnings)


def test_isa_only():
    res = resolve_resources([], IsaRegisters(99, None, 23), "gfx950")
    assert (res.vgpr, res.agpr, res.sgpr) == (100, 0, 24)
    assert res.sgpr_includes_implicit is False
    assert res.source == {"vgpr": ISA, "agpr": ISA, "sgpr": ISA}
    assert res.lds_bytes is None and res.wg_threads is None
    assert len(res.warnings) == 2


def test_isa_sgprs_above_allocation():
    res = resolve_resources([ResourceCandidate(32, 0, 32, 0, 64, KERNEL_TRACE)], IsaRegisters(10, None, 40))
    # 41 + 6 implicit > 32 allocated: the profiler number cannot be right
    assert (res.sgpr, res.sgpr_includes_implicit, res.source["sgpr"]) == (41, False, ISA)


def test_unknown_source_kind_is_a_programming_error():
    with pytest.raises(ValueError):
        resolve_resources([ResourceCandidate(1, 0, 1, 0, 64, "csv")])


def test_corpus_ck_bmm_rocpd_and_isa(corpus):
    # rocpd `kernels` + code.json ISA → 1 wave/SIMD, VGPR-bound (issue 3 acceptance)
    base = corpus / "att" / "gfx942" / "ck_bmm"
    db = next(base.rglob("*_results.db"))
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        row = con.execute("SELECT vgpr_count, accum_vgpr_count, sgpr_count, lds_size, "
                          "workgroup_x * workgroup_y * workgroup_z FROM kernels "
                          "WHERE name LIKE '%BatchedGemmKernel%' LIMIT 1").fetchone()
    assert row == (128, 384, 112, 65536, 256)
    code = orjson.loads((base / "ui_output_agent_5600_dispatch_2" / "code.json").read_bytes())
    isa = scan_isa_registers(r[0] for r in code["code"])
    res = resolve_resources([ResourceCandidate(*row, ROCPD, db.name)], isa, "gfx942")
    assert res.source["vgpr"].startswith("rocpd")
    occ = compute_occupancy("gfx942", res.vgpr, res.agpr, res.sgpr, res.lds_bytes, res.wg_threads,
                            sgpr_includes_implicit=res.sgpr_includes_implicit)
    assert occ.waves_per_simd == 1 and occ.limiter == "vgpr"
