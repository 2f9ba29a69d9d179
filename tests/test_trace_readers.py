"""Readers for kernel-level inputs: kernel trace/stats CSVs, rocpd, rocm-trace-lite, detection."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hotspot.capture.trace import detect
from hotspot.capture.trace.kernel_stats import read_kernel_stats_csv
from hotspot.capture.trace.kernel_trace import read_kernel_trace_csv
from hotspot.capture.trace.marker_trace import read_marker_trace_csv
from hotspot.capture.trace.rocpd import (
    read_rocpd_agents,
    read_rocpd_dispatches,
    read_rocpd_markers,
)
from hotspot.capture.trace.rtl import read_rtl_dispatches, read_rtl_markers
from hotspot.errors import InputError
from tests.fixtures.trace.sqlite_builders import (
    build_rocpd_db,
    build_rocprof_v1_db,
    build_rtl_db,
)

CK_BMM_DB = ("att", "gfx942", "ck_bmm", "37ca13315e70", "28_results.db")
TRACE_HEADER = ("Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,"
                "Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,"
                "SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,"
                "Grid_Size_Z")


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# --- kernel_trace.csv -------------------------------------------------------------------------

def test_kernel_trace_corpus_values(corpus: Path) -> None:
    recs = read_kernel_trace_csv(corpus / "csv" / "kernel_trace.csv")
    assert len(recs) == 9
    first = recs[0]
    assert first.kernel_name == "void addition_kernel<float>(float*, float const*, float const*, int, int)"
    assert first.dispatch_id == 1 and first.agent == "Agent 4" and first.agent_number == 4
    assert first.start_ns == 1550151853029637 and first.end_ns == 1550151853042437
    assert first.duration_ns == 12800
    divide = recs[1]
    assert (divide.vgpr, divide.accum_vgpr, divide.sgpr) == (12, 4, 16)
    assert divide.workgroup == (64, 1, 1) and divide.grid == (1024, 1024, 1)
    assert divide.lds_includes_dynamic is False and divide.source.startswith("kernel_trace.csv:")


def test_kernel_trace_quoting_case_and_commas(tmp_path: Path) -> None:
    # Lower-case header, unquoted and quoted numbers, a name with commas and embedded quotes.
    name = 'void k<"a,b">(int, float)'
    text = (TRACE_HEADER.lower() + "\n"
            f'KERNEL_DISPATCH,"Agent 2",1,0,7,"5",3,"{name.replace(chr(34), chr(34) * 2)}",5,'
            '"100","350",512,0,"24",8,16,256,1,1,"4096",1,1\n')
    (rec,) = read_kernel_trace_csv(_write(tmp_path, "t.csv", text))
    assert rec.kernel_name == name
    assert (rec.dispatch_id, rec.start_ns, rec.end_ns, rec.duration_ns) == (5, 100, 350, 250)
    assert (rec.vgpr, rec.accum_vgpr, rec.lds_bytes, rec.grid) == (24, 8, 512, (4096, 1, 1))


def test_older_counter_layout_has_no_timestamps(corpus: Path) -> None:
    recs = read_kernel_trace_csv(corpus / "csv" / "kernel_names.csv")
    assert [r.dispatch_id for r in recs] == [4, 8, 12, 16]
    assert all(r.accum_vgpr is None and r.start_ns is None and r.duration_ns is None for r in recs)
    assert recs[0].vgpr == 12 and recs[0].workgroup == (64, 1, 1) and recs[0].agent == "Agent 1"


def test_counter_collection_rows_fold_to_one_per_dispatch(tmp_path: Path, corpus: Path) -> None:
    src = (corpus / "csv" / "counter_collection.csv").read_text().splitlines()
    # Repeat every data row with a second counter: dispatches must not double.
    doubled = [src[0]] + [line for row in src[1:] for line in (row, row.replace('"SQ_WAVES"', '"GRBM_COUNT"'))]
    recs = read_kernel_trace_csv(_write(tmp_path, "cc.csv", "\n".join(doubled) + "\n"))
    assert [r.dispatch_id for r in recs] == [1, 2, 3, 4]
    assert recs[0].duration_ns == 3200098838483232 - 3200098838431081


@pytest.mark.parametrize("text, needle", [
    ("Kind,Agent_Id\nKERNEL_DISPATCH,1\n", "Kernel_Name"),
    (TRACE_HEADER + "\nKERNEL_DISPATCH,Agent 1,1,0,7,1,3,k,1,abc,350,0,0,8,0,16,64,1,1,64,1,1\n",
     "Start_Timestamp"),
    (TRACE_HEADER + "\nKERNEL_DISPATCH,Agent 1,1,0,7,1,3,k,1,400,350,0,0,8,0,16,64,1,1,64,1,1\n", "before"),
    (TRACE_HEADER + "\nKERNEL_DISPATCH,Agent 1,1\n", "fields"),
])
def test_kernel_trace_rejects_bad_rows(tmp_path: Path, text: str, needle: str) -> None:
    p = _write(tmp_path, "bad.csv", text)
    with pytest.raises(InputError) as err:
        read_kernel_trace_csv(p)
    assert str(p) in err.value.message and needle in err.value.message


# --- kernel_stats.csv -------------------------------------------------------------------------

def test_kernel_stats_scientific_notation(corpus: Path) -> None:
    rows = read_kernel_stats_csv(corpus / "csv" / "gfx1201" / "hip-v0_kernel_stats.csv")
    assert [(r.name, r.calls, r.total_ns, r.min_ns, r.max_ns) for r in rows] == [
        ("(anonymous namespace)::vector_add_v0(float const*, float const*, float*, unsigned long)",
         16, 6166303, 325321, 676842),
        ("__amd_rocclr_fillBufferUnAligned", 1, 41080, 41080, 41080),
    ]
    assert rows[1].stddev_ns == 0.0 and rows[0].pct == pytest.approx(99.34)


def test_kernel_stats_rejects_text_in_number(tmp_path: Path) -> None:
    p = _write(tmp_path, "s.csv", "Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,MaxNs,StdDev\n"
                                  "k,2,lots,1,100,1,1,0\n")
    with pytest.raises(InputError, match="TotalDurationNs"):
        read_kernel_stats_csv(p)


# --- rocpd ------------------------------------------------------------------------------------

def test_rocpd_ck_bmm(corpus: Path) -> None:
    db = corpus.joinpath(*CK_BMM_DB)
    recs = read_rocpd_dispatches(db)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    count, total = conn.execute("SELECT count(*), sum(duration) FROM kernels").fetchone()
    conn.close()
    assert len(recs) == count == 151 and sum(r.duration_ns or 0 for r in recs) == total
    gemm = [r for r in recs if "BatchedGemmKernel" in r.kernel_name]
    assert len(gemm) == 150
    assert {(r.vgpr, r.accum_vgpr, r.lds_bytes, r.lds_includes_dynamic) for r in gemm} == {(128, 384, 65536, True)}
    assert {(r.agent, r.gpu_id) for r in recs} == {("gfx942", 0)}
    agents = read_rocpd_agents(db)
    gpus = [a for a in agents if a["type"] == "GPU"]
    assert gpus[0]["name"] == "gfx942" and gpus[0]["product_name"] == "AMD Instinct MI300X"
    assert read_rocpd_markers(db) == []  # API regions only, no roctx ranges


def test_rocpd_markers_only_roctx_categories(tmp_path: Path) -> None:
    db = build_rocpd_db(tmp_path / "r.db", [("k", 1, 10, 20, 2, 0, 8, 0, 16, 0)], [
        ("MARKER_CORE_API", "prefill", 0, 100),
        ("HIP_RUNTIME_API_EXT", "hipLaunchKernel", 5, 9),
        ("MARKER_CORE_RANGE_API", "decode", 100, 200),
    ])
    assert [(m.name, m.start_ns, m.end_ns) for m in read_rocpd_markers(db)] == [
        ("prefill", 0, 100), ("decode", 100, 200)]


# --- rocm-trace-lite --------------------------------------------------------------------------

def test_rtl_reader_kernels_and_markers(tmp_path: Path) -> None:
    db = build_rtl_db(tmp_path / "trace.db", [
        (-1, "UserMarker", "prefill", 0, 1000),
        (0, "KernelExecution", "gemm_a", 100, 300),
        (0, "CopyHostToDevice", "copy", 300, 400),   # not a kernel
        (1, "KernelExecution", "gemm_b", 500, 900),
    ])
    recs = read_rtl_dispatches(db)
    assert [(r.kernel_name, r.gpu_id, r.duration_ns, r.dispatch_id) for r in recs] == [
        ("gemm_a", 0, 200, 2), ("gemm_b", 1, 400, 4)]
    assert recs[0].grid == (1024, 2, 1) and recs[0].workgroup == (256, 1, 1)
    assert [(m.name, m.duration_ns) for m in read_rtl_markers(db)] == [("prefill", 1000)]


def test_rtl_reader_without_launch_tables(tmp_path: Path) -> None:
    db = build_rtl_db(tmp_path / "trace.db", [(0, "KernelExecution", "k", 1, 5)], launch_info=False)
    (rec,) = read_rtl_dispatches(db)
    assert rec.grid is None and rec.duration_ns == 4


# --- detection --------------------------------------------------------------------------------

def test_detect_kinds_from_content(tmp_path: Path, corpus: Path) -> None:
    # File names are deliberately misleading: detection reads content.
    rtl = build_rtl_db(tmp_path / "results.db", [(0, "KernelExecution", "k", 1, 5)])
    rocpd = build_rocpd_db(tmp_path / "trace.db", [], [])
    v1 = build_rocprof_v1_db(tmp_path / "x.sqlite")
    stats = _write(tmp_path, "kernel_trace.csv", "Name,Calls,TotalDurationNs,AverageNs,Percentage,MinNs,"
                                                 "MaxNs,StdDev\nk,1,5,5,100,5,5,0\n")
    assert detect.detect_kind(rtl) == detect.RTL
    assert detect.detect_kind(rocpd) == detect.ROCPD
    assert detect.detect_kind(v1) == detect.ROCPROF_V1
    assert detect.detect_kind(stats) == detect.KERNEL_STATS
    assert detect.detect_kind(corpus / "csv" / "kernel_trace.csv") == detect.KERNEL_TRACE
    assert detect.detect_kind(corpus / "csv" / "counter_collection.csv") == detect.COUNTER_COLLECTION
    assert detect.detect_kind(corpus / "csv" / "marker_api_trace.csv") == detect.MARKER_TRACE
    assert detect.detect_kind(corpus / "csv" / "gfx1201" / "agent-info.csv") is None
    assert detect.detect_kind(corpus.joinpath(*CK_BMM_DB)) == detect.ROCPD


def test_marker_trace_csv(corpus: Path) -> None:
    marks = read_marker_trace_csv(corpus / "csv" / "marker_api_trace.csv")
    assert marks[0].name == "before hipLaunchKernel" and marks[0].duration_ns == 0
    assert marks[-1].name == "hipLaunchKernel range"
    assert marks[-1].duration_ns == 1520113901495882 - 1520113899682208
