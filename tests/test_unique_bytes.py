"""Bytes that can be DRAM bytes (issue 24, point 2): without counters, a load whose address does not
vary with the workgroup counts once for the grid, a loop-invariant load once per wave; above the
peak the traffic is reported cache-served and caps nothing; with counters the ISA bound is off."""

from __future__ import annotations

from pathlib import Path

from hotspot.att.address_taint import TID, WG, loop_invariant_addresses, taint_of_addresses
from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
from hotspot.plan.entry_point import analyze
from tests.plan_data import plan_of
from hotspot.synth import DispatchSpec, ExplicitProgram, Layout, make_dispatch
from tests.conftest import corpus_path

SRC = "/work/synth/kernels/k.py"
SMALL = Layout(ses=(0,), simds=2, slots=1, other_cus=())
KT_HEADER = ("Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,"
             "Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,"
             "SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z")
PEAK = 8000.0  # MI350X GB/s as the product table holds it (the synthetic agent_info names MI350X)
MEMORY_RULES = ("back-to-back-loads", "short-load-distance", "narrow-loads", "load-in-mfma-loop")


def numbered(*isa: str) -> list[tuple[int, str]]:
    return list(enumerate(isa, 1))


def test_kernel_argument_addresses_do_not_vary_with_the_workgroup() -> None:
    rows = numbered("s_load_dwordx2 s[10:11], s[0:1], 0x0",         # kernel argument: uniform
                    "v_mov_b32 v40, s10", "v_mov_b32 v41, s11",
                    "v_lshl_add_u32 v40, v0, 4, v40",                # + work-item id
                    "global_load_dwordx4 v[0:3], v[40:41], off",     # same in every workgroup
                    "s_mul_i32 s12, s8, 256",                        # s8: a system SGPR (workgroup id)
                    "v_add_u32 v42, s12, v40", "v_mov_b32 v43, s11",
                    "global_load_dwordx4 v[4:7], v[42:43], off",     # varies with the workgroup
                    "buffer_load_dword v8, v[4:5], s[20:23], 0 offen",  # address loaded from a varying one
                    "s_endpgm")
    t = taint_of_addresses(rows)
    assert t[5] == frozenset({TID}) and WG + "s8" in t[9] and WG + "s8" in t[10]


def test_loop_invariant_address_and_loop_carried_taint() -> None:
    rows = numbered("s_load_dwordx4 s[4:7], s[0:1], 0x10",          # buffer descriptor: a kernel argument
                    "v_mov_b32 v40, 0", "v_mov_b32 v41, 0",
                    "s_mov_b32 s30, 0",
                    "global_load_dword v1, v[40:41], off",          # 5: in the loop, address untouched
                    "buffer_load_dword v2, off, s[4:7], s30",       # 6: soffset advanced in the loop
                    "s_add_u32 s30, s30, 64",
                    "s_cbranch_scc1 -4",
                    "buffer_load_dword v3, off, s[4:7], s31",       # 9: s31 a system SGPR
                    "s_endpgm")
    assert loop_invariant_addresses(rows, [(5, 8)]) == {5}
    t = taint_of_addresses(rows)
    # s30 is carried around the loop from a constant: uniform; s31 is never written: workgroup id
    assert t[5] == frozenset() and t[6] == frozenset() and t[9] == frozenset({WG + "s31"})


def _dispatch(tmp_path: Path) -> tuple[Path, dict]:
    rows = ["s_load_dwordx2 s[10:11], s[0:1], 0x0", "s_waitcnt lgkmcnt(0)",
            "v_mov_b32 v40, s10", "v_mov_b32 v41, s11",
            "global_load_dwordx4 v[0:3], v[40:41], off",          # a small tensor every workgroup reads
            "v_mov_b32 v42, s8", "v_mov_b32 v43, s9",
            "global_load_dwordx4 v[4:7], v[42:43], off",          # the workgroup's own bytes
            "global_load_dwordx4 v[8:11], v[42:43], off offset:16",
            "s_waitcnt vmcnt(0)", "v_add_f32 v50, v0, v4", "v_add_f32 v51, v8, v50", "s_endpgm"]
    program = ExplicitProgram.of([(isa, f"{SRC}:{i + 10}") for i, isa in enumerate(rows)], ())
    d = make_dispatch(tmp_path, DispatchSpec(arch="gfx950", program=program, waves=4, layout=SMALL,
                                             variants=4, agent_info=True), seed=3)
    return d, analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()


def _with_duration(d: Path, name: str, workgroups: int, wg: int, duration: int) -> dict:
    (d.parent / "run_kernel_trace.csv").write_text(
        KT_HEADER + "\n" + f'KERNEL_DISPATCH,"Agent 4",1,0,7,9,3,"{name}",9,1000,'
        f"{1000 + duration},0,0,32,0,24,{wg},1,1,{wg * workgroups},1,1\n")
    return analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()


def _bytes(first: dict, waves_per_wg: int, grid_waves: int) -> tuple[float, float]:
    """(requested, unique) grid bytes computed from the listing by hand."""
    waves = first["dispatch"]["waves"]
    per = {r["isa"]: 16 * 64 * r["hit"] / waves for r in first["instructions"] if r["isa"].startswith("global_load")}
    shared = per["global_load_dwordx4 v[0:3], v[40:41], off"]
    own = sum(v for k, v in per.items() if "v[42:43]" in k)
    return (shared + own) * grid_waves, shared * waves_per_wg + own * grid_waves


def test_unique_bytes_decide_the_fraction_not_the_re_reads(tmp_path: Path) -> None:
    d, first = _dispatch(tmp_path)
    workgroups, wg = 4096, 256
    per_wg = wg // 64
    requested, unique = _bytes(first, per_wg, workgroups * per_wg)
    assert requested > 1.4 * unique  # the shared tensor is a third of the requests
    duration = int(unique / (0.8 * PEAK))  # unique bytes at 80% of peak; requested at ~120%
    data = _with_duration(d, first["dispatch"]["kernel"], workgroups, wg, duration)
    bound = next(i for i in data["plan"] if i["id"] == "bandwidth-bound")
    ev = {e["metric"]: e["value"] for e in bound["evidence"]}
    assert abs(ev["unique_bytes"] - unique) <= 1 and abs(ev["requested_bytes"] - requested) <= 1
    assert abs(ev["fraction_of_peak"] - 0.8) < 0.01 and ev["dram_share_known"] is True
    assert ev["rows_same_for_all_workgroups"] == "#5"
    cap = 100 * (1 - ev["fraction_of_peak"])
    memory = [i for i in data["plan"] if i["id"] in MEMORY_RULES]
    assert all(i["estimate"]["high_pct"] <= cap + 0.01 for i in memory)


def test_above_the_peak_is_cache_served_and_caps_nothing(tmp_path: Path) -> None:
    d, first = _dispatch(tmp_path)
    workgroups, wg = 4096, 256
    per_wg = wg // 64
    _, unique = _bytes(first, per_wg, workgroups * per_wg)
    duration = int(unique / (1.5 * PEAK))  # even the unique bytes at 150% of peak
    data = _with_duration(d, first["dispatch"]["kernel"], workgroups, wg, duration)
    bound = next(i for i in data["plan"] if i["id"] == "bandwidth-bound")
    ev = {e["metric"]: e["value"] for e in bound["evidence"]}
    assert ev["fraction_of_peak"] > 1.0 and ev["dram_share_known"] is False
    assert "cache-served" in bound["title"] and "DRAM share unknown" in bound["root_cause"]
    # no memory item is capped: the same plan without the bound has the same estimates
    uncapped = plan_of({**data, "occupancy": {**data["occupancy"], "launch": None}})
    want = {i.id: i.estimate.high_pct for i in uncapped.items if i.id in MEMORY_RULES}
    got = {i["id"]: i["estimate"]["high_pct"] for i in data["plan"] if i["id"] in MEMORY_RULES}
    assert want and got == want


def test_counters_win_over_the_isa_bound(tmp_path: Path) -> None:
    d, first = _dispatch(tmp_path)
    _with_duration(d, first["dispatch"]["kernel"], 4096, 256, 1000)
    data = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    outcome = plan_of(data, pmc={"kernel": first["dispatch"]["kernel"]})
    skipped = {s.id: s.reason for s in outcome.skipped}
    assert "bandwidth-bound" not in [i.id for i in outcome.items]
    assert "--pmc" in skipped["bandwidth-bound"]


def test_vec_add_bandwidth_from_unique_bytes(corpus) -> None:
    """vec_add: every load and store address follows the workgroup, so unique = requested; the
    fraction is those bytes over the median duration of the kernel's rows (read here by hand)."""
    import csv
    from statistics import median

    d = corpus_path("att", "gfx950", "vec_add")
    data = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    bound = next(i for i in data["plan"] if i["id"] == "bandwidth-bound")
    ev = {e["metric"]: e["value"] for e in bound["evidence"]}
    with corpus_path("att", "gfx950", "vec_add.meta", "discover_kernel_trace.csv").open() as fh:
        rows = [r for r in csv.DictReader(fh) if r["Kernel_Name"] == data["dispatch"]["kernel"]]
    duration = int(median(int(r["End_Timestamp"]) - int(r["Start_Timestamp"]) for r in rows))
    grid = int(rows[0]["Grid_Size_X"]) // 64  # workgroups of 256 = 4 waves of 64
    waves = data["dispatch"]["waves"]
    widths = {"global_load_dword ": 4, "global_store_dword ": 4, "global_load_dwordx4": 16,
              "global_store_dwordx4": 16, "buffer_load_dwordx4": 16, "buffer_store_dwordx4": 16,
              "buffer_load_dword ": 4, "buffer_store_dword ": 4}
    per_wave = 0.0
    for r in data["instructions"]:
        w = next((v for k, v in widths.items() if r["isa"].startswith(k.strip()) and
                  (k.endswith(" ") is False or r["isa"].split()[0] == k.strip())), None)
        if w:
            per_wave += w * 64 * r["hit"] / waves
    assert ev["kernel_duration_ns"] == duration and ev["waves_in_grid"] == grid
    assert ev["rows_same_for_all_workgroups"] == "none"
    assert abs(ev["unique_bytes"] - per_wave * grid) <= 1 and ev["unique_bytes"] == ev["requested_bytes"]
    assert abs(ev["fraction_of_peak"] - per_wave * grid / duration / PEAK) < 0.001


def test_address_operands_of_lds_dma_and_atomics() -> None:
    from hotspot.att.address_taint import address_registers

    # LDS-DMA: the first operand is the address (no register is written)
    assert address_registers("buffer_load_dword v38, s[4:7], 0 offen offset:64 lds") == \
        ["v38", "s4", "s5", "s6", "s7"]
    assert address_registers("global_load_lds_dwordx4 v[2:3], off") == ["v2", "v3"]
    # atomics: without a return the address comes first; with one, the destination does
    assert address_registers("global_atomic_add_f32 v[2:3], v4, off") == ["v2", "v3"]
    assert address_registers("global_atomic_add v1, v[2:3], v4, off sc0") == ["v2", "v3", "v4"]
    rows = numbered("s_mul_i32 s12, s8, 64", "v_add_u32 v38, s12, v0",
                    "buffer_load_dword v38, s[20:23], 0 offen lds", "v_mov_b32 v1, v38",
                    "global_load_dword v2, v[1:2], off")
    t = taint_of_addresses(rows)
    assert WG + "s8" in t[3]  # the workgroup-dependent offset register is the DMA's address


def test_gemm_tiles_count_once_per_row_or_column_of_workgroups() -> None:
    """A reads follow the y workgroup id (s3) only, B reads the x id (s2) only, C stores both: over a
    4 x 8 grid of workgroups, A's bytes count 8 times, B's 4 times, C's 32 times."""
    from hotspot.att.address_taint import workgroup_dims, workgroup_registers
    from tests.plan_data import context_of
    from hotspot.plan.launch_rules import isa_traffic

    isa = ["s_load_dwordx4 s[8:11], s[0:1], 0x0",
           "s_lshl_b32 s12, s3, 12", "v_add_u32 v10, s12, v0",          # A row offset: y
           "s_lshl_b32 s13, s2, 12", "v_add_u32 v11, s13, v0",          # B column offset: x
           "v_add_u32 v12, v10, v11",                                    # C: both
           "buffer_load_dwordx4 v[0:3], v10, s[8:11], 0 offen",
           "buffer_load_dwordx4 v[4:7], v11, s[8:11], 0 offen",
           "buffer_store_dwordx4 v[0:3], v12, s[8:11], 0 offen", "s_endpgm"]
    rows = numbered(*isa)
    assert workgroup_dims(rows) == {"s2": 0, "s3": 1}
    assert workgroup_registers(taint_of_addresses(rows)[7]) == {"s3"}
    waves = 8  # traced waves; every row executed once per wave
    data = {"dispatch": {"waves": waves}, "loops": [],
            "instructions": [{"line_number": n, "isa": text, "hit": waves,
                              "category": "vmem-store" if "store" in text else "vmem-load" if "buffer" in text else "valu"}
                             for n, text in rows]}
    got = isa_traffic(context_of(data), 64, [4, 8, 1], 4)
    per = 16 * 64  # bytes per wave of one dwordx4 row
    assert got.requested_bytes == 3 * per * 4 * 32
    assert got.unique_bytes == per * 4 * (8 + 4 + 32)
    assert got.shared == ["#7 (y)", "#8 (x)"] and got.same_for_all_workgroups == []


def test_taint_carried_around_a_loop_back_edge() -> None:
    rows = numbered("s_mov_b32 s30, 0",
                    "buffer_load_dword v2, off, s[4:7], s30",      # 2: reads s30 before the add below
                    "s_add_u32 s30, s30, s9",                      # s9: a system SGPR
                    "s_cbranch_scc1 -3",
                    "s_endpgm")
    desc = "s_load_dwordx4 s[4:7], s[0:1], 0x0"
    rows = [(0, desc)] + rows
    assert taint_of_addresses(rows)[2] == frozenset()          # straight line: s30 is 0 there
    assert taint_of_addresses(rows, [(2, 4)])[2] == frozenset({WG + "s9"})  # the loop carries s9


def test_a_hostile_register_range_is_not_expanded() -> None:
    from hotspot.att.address_taint import address_registers

    assert address_registers("global_load_dword v1, v[0:4294967295], off") == []
