"""The launch is the traced dispatch's (issue 24, point 1): kernel-trace rows match by dispatch id
and name in the same run, by name only when every row of the name has one grid shape; otherwise
the grid is unknown and no grid-based item fires. Duration: the dispatch's, else the median of the
name and grid, never the first row. The grid is checked against the traced waves."""

from __future__ import annotations

from pathlib import Path
from statistics import median

from hotspot.att.launch_match import (
    BY_DISPATCH_ID,
    BY_UNIQUE_SHAPE,
    GRID_UNKNOWN,
    INCONSISTENT,
    MATCHED,
    match_launch,
)
from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
from hotspot.capture.trace.records import DispatchRecord
from hotspot.plan.entry_point import analyze
from hotspot.synth import DispatchSpec, ExplicitProgram, Layout, make_dispatch
from tests.conftest import corpus_path

SRC = "/work/synth/kernels/k.py"
SMALL = Layout(ses=(0,), simds=2, slots=1, other_cus=())
KT_HEADER = ("Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,"
             "Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,"
             "SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z")


def rec(dispatch: int, grid: int, duration: int, name: str = "k", row: int | None = None) -> DispatchRecord:
    return DispatchRecord(name, dispatch, 1000, 1000 + duration, "Agent 4", None, 32, 0, 24, 0, False,
                          0, (256, 1, 1), (grid, 1, 1), "kernel_trace.csv:x", row if row is not None else dispatch + 1)


def test_dispatch_id_match_takes_that_row_and_its_duration() -> None:
    rows = [rec(1, 256 * 8, 25_200), rec(2, 256 * 256, 17_000), rec(3, 256 * 8, 17_300)]
    out = match_launch(rows, "t.csv", 3, traced_waves=4, wave_size=64, cus=256, peak_hbm_gbps=8000.0)
    assert out is not None and out.status == MATCHED and out.match == BY_DISPATCH_ID
    assert (out.workgroups, out.duration_ns, out.duration_source) == (8, 17_300, BY_DISPATCH_ID)
    assert [(r.row, r.dispatch_id) for r in out.rows] == [(4, 3)]


def test_several_shapes_without_an_id_match_leave_the_grid_unknown() -> None:
    # five grid shapes for one name (the case): the first row must not stand for the launch
    rows = [rec(i, 256 * g, 10_000 + i) for i, g in enumerate((8, 69, 507, 256, 8), 1)]
    out = match_launch(rows, "t.csv", None, traced_waves=4, wave_size=64, cus=256, peak_hbm_gbps=8000.0)
    assert out is not None and out.status == GRID_UNKNOWN
    assert out.grid is None and out.workgroups is None and out.duration_ns is None
    assert {tuple(r.grid) for r in out.rows} == {(256 * g, 1, 1) for g in (8, 69, 507, 256)}
    assert out.row_count == 5 and "row 2" in out.reason and "dispatch 1" in out.reason
    # the same run but the traced dispatch's id is absent: still unknown
    same_run = match_launch(rows, "t.csv", 99, 4, 64, 256, 8000.0)
    assert same_run is not None and same_run.status == GRID_UNKNOWN


def test_one_shape_matches_by_name_with_the_median_duration() -> None:
    durations = [25_200, 17_300, 17_100, 18_000, 16_900]  # the first one cold
    rows = [rec(i, 256 * 256, d) for i, d in enumerate(durations, 1)]
    out = match_launch(rows, "t.csv", None, 4, 64, 256, 8000.0)
    assert out is not None and out.status == MATCHED and out.match == BY_UNIQUE_SHAPE
    assert out.duration_ns == int(median(durations)) == 17_300
    assert out.duration_source == f"median-of-{len(durations)}"
    assert out.row_count == len(durations)


def test_a_grid_with_fewer_waves_than_traced_is_inconsistent() -> None:
    # 8 workgroups of 256 threads = 32 waves of 64; the capture traced 56
    out = match_launch([rec(1, 256 * 8, 10_000)], "t.csv", None, 56, 64, 256, 8000.0)
    assert out is not None and out.status == INCONSISTENT and out.waves_in_grid == 32
    assert "56" in out.reason and "32" in out.reason
    fine = match_launch([rec(1, 256 * 8, 10_000)], "t.csv", None, 32, 64, 256, 8000.0)
    assert fine is not None and fine.status == MATCHED


def _dispatch(tmp_path: Path) -> tuple[Path, str]:
    rows = ["buffer_load_dwordx4 v[0:3], v8, s[4:7], 0 offen", "s_waitcnt vmcnt(0)",
            "v_add_f32 v4, v0, v1", "s_endpgm"]
    program = ExplicitProgram.of([(isa, f"{SRC}:{i + 10}") for i, isa in enumerate(rows)], ())
    d = make_dispatch(tmp_path, DispatchSpec(arch="gfx950", program=program, waves=4, layout=SMALL,
                                             variants=4, agent_info=True), seed=3)
    name = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()["dispatch"]["kernel"]
    return d, name


def _row(dispatch: int, name: str, groups: int, duration: int) -> str:
    return (f'KERNEL_DISPATCH,"Agent 4",1,0,7,{dispatch},3,"{name}",{dispatch},1000,{1000 + duration},'
            f"1024,0,32,0,24,256,1,1,{256 * groups},1,1\n")


def test_underfill_never_fires_on_an_unknown_grid(tmp_path: Path) -> None:
    """Two shapes of the traced kernel's name, neither with its dispatch id: the grid is unknown,
    the warning names the rows, and neither grid-underfill nor bandwidth-bound is planned."""
    d, name = _dispatch(tmp_path)
    (d.parent / "run_kernel_trace.csv").write_text(
        KT_HEADER + "\n" + _row(7, name, 8, 50_000) + _row(8, name, 2048, 40_000))
    result = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED))
    data = result.plain_data()
    launch = data["occupancy"]["launch"]
    assert launch["status"] == GRID_UNKNOWN and launch["grid"] is None
    assert [(r["row"], r["dispatch_id"]) for r in launch["rows"]] == [(2, 7), (3, 8)]
    assert any(w.startswith("launch:") and "2 grid shapes" in w for w in result.warnings)
    ids = [i["id"] for i in data["plan"]]
    assert "grid-underfill" not in ids and "bandwidth-bound" not in ids
    reasons = {s["id"]: s["reason"] for s in data["plan_skipped"]}
    assert "grid-unknown" in reasons["grid-underfill"]


def test_the_dispatch_id_row_wins_in_the_same_run(tmp_path: Path) -> None:
    """The synthetic dispatch is dispatch 1; its own row (8 workgroups) is used even though another
    dispatch of the name launched 2,048, and its duration is that row's."""
    d, name = _dispatch(tmp_path)
    (d.parent / "run_kernel_trace.csv").write_text(
        KT_HEADER + "\n" + _row(5, name, 2048, 90_000) + _row(1, name, 8, 12_345))
    data = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    launch = data["occupancy"]["launch"]
    assert (launch["status"], launch["match"], launch["workgroups"]) == (MATCHED, BY_DISPATCH_ID, 8)
    assert (launch["duration_ns"], launch["duration_source"]) == (12_345, BY_DISPATCH_ID)
    under = next(i for i in data["plan"] if i["id"] == "grid-underfill")
    source = {e["metric"]: e["value"] for e in under["evidence"]}["launch_source"]
    assert "row 3 (dispatch 1)" in source and "dispatch-id" in source


def test_kernel_lab_layout_matches_by_name_only_as_shapes_agree(corpus) -> None:
    """The discovery kernel trace of the kernel-lab layout comes from another run: its dispatch ids
    do not apply, and every row of the kernel's name has one grid, so it matches by name; the
    duration is the median over those rows (read here from the CSV independently)."""
    import csv

    d = next(corpus_path("layouts", "kernel-lab", "blockscale_preshuffle_gemm").rglob("ui_output_agent_*"))
    data = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    launch = data["occupancy"]["launch"]
    trace = corpus_path("layouts", "kernel-lab", "blockscale_preshuffle_gemm", "compute_viewer",
                        "discover_kernel_trace.csv")
    with trace.open() as fh:
        mine = [r for r in csv.DictReader(fh) if r["Kernel_Name"] == "bs_gemm_bf16_direct_t16x64x256"]
    grids = {(r["Grid_Size_X"], r["Grid_Size_Y"], r["Grid_Size_Z"]) for r in mine}
    assert len(grids) == 1
    durations = [int(r["End_Timestamp"]) - int(r["Start_Timestamp"]) for r in mine]
    assert (launch["status"], launch["match"]) == (MATCHED, BY_UNIQUE_SHAPE)
    assert launch["duration_ns"] == int(median(durations))
    assert launch["duration_source"] == f"median-of-{len(mine)}" and launch["row_count"] == len(mine)
    assert launch["workgroups"] == 112  # grid 256x112 of 256x1 workgroups
