"""`hotspot kernels` end to end: rankings, phases (markers), filters, refusals, exit codes."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from hotspot.capture.trace.kernel_stats import read_kernel_stats_csv
from hotspot.errors import EmptyTraceError, InputError, UsageError
from hotspot.trace.api import kernel_table
from tests.fixtures.trace.sqlite_builders import (
    build_rocpd_db,
    build_rocprof_v1_db,
    build_rtl_db,
)

META_DIRS = ["blockscale_preshuffle_gemm", "mla_decode", "pa_mqa_logits_fp4_small", "preshuffle_gemm_v2",
             "vec_add"]
CK_BMM_DB = ("att", "gfx942", "ck_bmm", "37ca13315e70", "28_results.db")

GEMM = "Cijk_Alik_Bljk_HHS_BH_MT128x128x64"
FMHA = "void ck_tile::kentry<1, ck_tile::FmhaFwdKernel<>>(ck_tile::FmhaFwdKernel<>::Kargs)"
PAGED = "void vllm::paged_attention_v2_kernel<half, 128>(float*)"
RCCL = "rcclAllReduceKernel_sum_f16"
COPY = "__amd_rocclr_copyBuffer"

# A rocm-trace-lite run: prefill, an attention range nested in both phases, two decode steps,
# an instant mark, a host-to-device copy (not a kernel) and a second GPU.
RTL_OPS = [
    (-1, "UserMarker", "prefill", 1000, 5000),
    (-1, "UserMarker", "attn", 1500, 2500),
    (-1, "UserMarker", "decode", 6000, 8000),
    (-1, "UserMarker", "attn", 6500, 7000),
    (-1, "UserMarker", "tick", 7000, 7000),
    (-1, "UserMarker", "decode", 9000, 12000),
    (0, "KernelExecution", GEMM, 1100, 1600),    # prefill
    (0, "KernelExecution", FMHA, 1600, 2400),    # prefill, attn
    (0, "KernelExecution", GEMM, 2500, 3500),    # prefill, attn (starts on its end: inclusive)
    (0, "KernelExecution", RCCL, 4000, 4900),    # prefill
    (0, "CopyHostToDevice", "copy", 5000, 5500),  # not a kernel
    (0, "KernelExecution", GEMM, 6100, 6300),    # decode
    (0, "KernelExecution", PAGED, 6500, 6900),   # decode, attn
    (0, "KernelExecution", COPY, 8500, 8600),    # between decode steps: no region
    (0, "KernelExecution", PAGED, 9100, 9600),   # decode
    (1, "KernelExecution", GEMM, 1200, 2200),    # second GPU, prefill
]


def _rows(kernels) -> list[tuple]:
    return [(k["name"], k["calls"], k["total_ns"], k["min_ns"], k["max_ns"]) for k in kernels]


@pytest.fixture
def rtl_db(tmp_path: Path) -> Path:
    return build_rtl_db(tmp_path / "trace.db", RTL_OPS)


def test_rtl_gpu0_table(rtl_db: Path) -> None:
    data = kernel_table(rtl_db, gpu=0).plain_data()
    assert data["source_kind"] == "rocm_trace_lite"
    assert data["total_gpu_ns"] == 500 + 800 + 1000 + 900 + 200 + 400 + 100 + 500 == 4400
    assert data["dispatch_count"] == 8
    # 900 ns tie between PAGED and RCCL: broken by name ("rccl" > "void").
    assert _rows(data["kernels"]) == [
        (GEMM, 3, 1700, 200, 1000), (RCCL, 1, 900, 900, 900), (PAGED, 2, 900, 400, 500),
        (FMHA, 1, 800, 800, 800), (COPY, 1, 100, 100, 100)]
    assert [k["family"] for k in data["kernels"]] == ["GEMM", "collective", "attention", "attention", "copy"]
    assert data["kernels"][0]["pct"] == pytest.approx(1700 / 4400 * 100)
    assert data["kernels"][0]["avg_ns"] == pytest.approx(1700 / 3)
    assert sum(k["pct"] for k in data["kernels"]) == pytest.approx(100.0)


def test_rtl_phases_hand_computed(rtl_db: Path) -> None:
    result = kernel_table(rtl_db, gpu=0, by_marker="")
    regions = {r["name"]: r for r in result.plain_data()["regions"]}
    assert [r["name"] for r in result.plain_data()["regions"]] == ["prefill", "attn", "decode"]
    prefill, attn, decode = regions["prefill"], regions["attn"], regions["decode"]
    assert (prefill["count"], prefill["wall_ns"], prefill["gpu_ns"], prefill["dispatches"]) == (1, 4000, 3200, 4)
    assert _rows(prefill["kernels"]) == [(GEMM, 2, 1500, 500, 1000), (RCCL, 1, 900, 900, 900),
                                         (FMHA, 1, 800, 800, 800)]
    # Same-name markers merge: wall is the sum of the two disjoint occurrences.
    assert (attn["count"], attn["start_ns"], attn["end_ns"], attn["wall_ns"], attn["gpu_ns"]) == \
        (2, 1500, 7000, 1000 + 500, 800 + 1000 + 400)
    assert (decode["count"], decode["wall_ns"], decode["gpu_ns"]) == (2, 2000 + 3000, 200 + 400 + 500)
    assert _rows(decode["kernels"]) == [(PAGED, 2, 900, 400, 500), (GEMM, 1, 200, 200, 200)]
    assert decode["kernels"][0]["pct"] == pytest.approx(900 / 1100 * 100)
    assert result.plain_data()["outside_regions_gpu_ns"] == 100
    assert any("instant" in w for w in result.warnings)


def test_rtl_phase_sums_match_sql(rtl_db: Path) -> None:
    """Each region's total equals an independent SQL sum over kernel ops starting inside a marker."""
    conn = sqlite3.connect(rtl_db)
    # DISTINCT: a kernel inside two occurrences of one marker name counts once.
    expected = dict(conn.execute("""
        SELECT name, sum(dur) FROM (
            SELECT DISTINCT ko.id, ko."end" - ko."start" AS dur, ms.string AS name
            FROM rocpd_op ko JOIN rocpd_string kt ON kt.id = ko.opType_id
            JOIN rocpd_op mo ON ko."start" BETWEEN mo."start" AND mo."end"
            JOIN rocpd_string mt ON mt.id = mo.opType_id JOIN rocpd_string ms ON ms.id = mo.description_id
            WHERE kt.string = 'KernelExecution' AND ko.gpuId >= 0 AND mt.string = 'UserMarker'
              AND mo.gpuId = -1 AND mo."end" > mo."start")
        GROUP BY name"""))
    conn.close()
    data = kernel_table(rtl_db, by_marker="").plain_data()
    got = {r["name"]: r["gpu_ns"] for r in data["regions"]}
    assert got == expected
    for r in data["regions"]:
        assert sum(k["total_ns"] for k in r["kernels"]) == r["gpu_ns"]


def test_marker_filter_regex(rtl_db: Path) -> None:
    data = kernel_table(rtl_db, gpu=0, by_marker="^(prefill|decode)$").plain_data()
    assert [r["name"] for r in data["regions"]] == ["prefill", "decode"]
    assert data["outside_regions_gpu_ns"] == 100


def test_all_gpus_and_gpu_filter(rtl_db: Path) -> None:
    result = kernel_table(rtl_db)
    data = result.plain_data()
    assert data["total_gpu_ns"] == 4400 + 1000
    assert [(g["gpu"], g["gpu_ns"]) for g in data["gpus"]] == [(0, 4400), (1, 1000)]
    assert any("2 GPUs" in w for w in result.warnings)
    one = kernel_table(rtl_db, gpu=1).plain_data()
    assert _rows(one["kernels"]) == [(GEMM, 1, 1000, 1000, 1000)]
    with pytest.raises(UsageError, match="GPUs in the trace: 0, 1"):
        kernel_table(rtl_db, gpu=7)


def test_exclude_collectives(rtl_db: Path) -> None:
    data = kernel_table(rtl_db, gpu=0, exclude_collectives=True).plain_data()
    assert data["pct_base_ns"] == 4400 - 900 and data["total_gpu_ns"] == 4400
    pct = {k["name"]: k["pct"] for k in data["kernels"]}
    assert pct[RCCL] is None and pct[GEMM] == pytest.approx(1700 / 3500 * 100)
    assert sum(p for p in pct.values() if p is not None) == pytest.approx(100.0)


def test_top_keeps_regex_unique_against_all(rtl_db: Path) -> None:
    data = kernel_table(rtl_db, gpu=0, top=2).plain_data()
    assert data["kernel_count"] == 5 and len(data["kernels"]) == 2
    all_names = [GEMM, FMHA, PAGED, RCCL, COPY]
    for k in data["kernels"]:
        assert [n for n in all_names if re.search(k["regex"], n)] == [k["name"]]


def test_rocpd_shaped_db_with_markers(tmp_path: Path) -> None:
    # (name, dispatch, start, end, agent_abs, gpu, vgpr, accum, sgpr, lds)
    db = build_rocpd_db(tmp_path / "anything.bin", [
        ("gemm_a", 1, 100, 400, 2, 0, 128, 384, 112, 65536),
        ("gemm_a", 2, 500, 600, 2, 0, 128, 384, 112, 32768),
        ("norm_b", 3, 1200, 1250, 2, 0, 32, 0, 24, 0),
        ("gemm_a", 4, 1300, 1500, 3, 1, 128, 384, 112, 65536),
    ], [
        ("MARKER_CORE_API", "prefill", 0, 1000),
        ("MARKER_CORE_API", "decode", 1100, 2000),
        ("HIP_RUNTIME_API_EXT", "hipLaunchKernel", 0, 2000),  # API region, not a phase
    ])
    data = kernel_table(db, gpu=0, by_marker="").plain_data()
    assert data["source_kind"] == "rocpd"
    assert _rows(data["kernels"]) == [("gemm_a", 2, 400, 100, 300), ("norm_b", 1, 50, 50, 50)]
    res = data["kernels"][0]["resources"]
    assert (res["vgpr"], res["accum_vgpr"], res["lds_bytes"], res["lds_includes_dynamic"]) == (128, 384, 65536, True)
    assert res["workgroup"] == [256, 1, 1]
    assert [(r["name"], r["gpu_ns"], r["wall_ns"]) for r in data["regions"]] == [("prefill", 400, 1000),
                                                                               ("decode", 50, 900)]
    assert data["gpus"] == [{"gpu": 0, "agent": "gfx942", "dispatches": 3, "gpu_ns": 450}]


# --- corpus acceptance ------------------------------------------------------------------------

def _assert_same_ranking(kernels: list[dict], expected: list[tuple[str, int, int]]) -> None:
    """Same totals in the same order, and the same names at each total (ties may swap)."""
    assert [k["total_ns"] for k in kernels] == [t for _, _, t in expected]
    by_total: dict[int, set[str]] = {}
    for name, _, total in expected:
        by_total.setdefault(total, set()).add(name)
    for k in kernels:
        assert k["name"] in by_total[k["total_ns"]]
    assert {(k["name"], k["calls"]) for k in kernels} == {(n, c) for n, c, _ in expected}


@pytest.mark.parametrize("meta", META_DIRS)
def test_corpus_trace_and_stats_rank_like_the_stats(corpus: Path, meta: str) -> None:
    folder = corpus / "att" / "gfx950" / f"{meta}.meta"
    stats = read_kernel_stats_csv(folder / "discover_kernel_stats.csv")
    expected = [(s.name, s.calls, s.total_ns) for s in stats]
    expected.sort(key=lambda e: -e[2])
    from_stats = kernel_table(folder / "discover_kernel_stats.csv").plain_data()
    from_trace = kernel_table(folder / "discover_kernel_trace.csv").plain_data()
    for data in (from_stats, from_trace):
        _assert_same_ranking(data["kernels"], expected)
        names = [k["name"] for k in data["kernels"]]
        for k in data["kernels"]:
            assert [n for n in names if re.search(k["regex"], n)] == [k["name"]]
    # The trace aggregation reproduces min/max and the profiler's percentages (2-4 digits in the file).
    stat_by_name = {s.name: s for s in stats}
    for k in from_trace["kernels"]:
        s = stat_by_name[k["name"]]
        assert (k["min_ns"], k["max_ns"]) == (s.min_ns, s.max_ns)
        assert k["pct"] == pytest.approx(s.pct, abs=0.01)
    assert from_trace["kernels"][0]["resources"]["vgpr"] is not None


def test_corpus_folder_prefers_trace(corpus: Path) -> None:
    data = kernel_table(corpus / "att" / "gfx950" / "vec_add.meta").plain_data()
    assert data["source_kind"] == "kernel_trace_csv"
    assert data["kernels"][0]["name"] == "vecAddKernel_0" and data["kernels"][0]["calls"] == 24


def test_corpus_rocpd_matches_top_kernels_view(corpus: Path) -> None:
    db = corpus.joinpath(*CK_BMM_DB)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    view = conn.execute("SELECT name, total_calls, total_duration, percentage FROM top_kernels").fetchall()
    conn.close()
    data = kernel_table(db).plain_data()
    assert [(k["name"], k["calls"], k["total_ns"]) for k in data["kernels"]] == \
        [(n, c, round(t * 1000)) for n, c, t, _ in view]
    for k, (_, _, _, p) in zip(data["kernels"], view):
        assert k["pct"] == pytest.approx(p)
    gemm = data["kernels"][0]
    assert gemm["family"] == "GEMM" and gemm["regex"] == "^void ck_tile::kentry"
    assert (gemm["resources"]["vgpr"], gemm["resources"]["accum_vgpr"], gemm["resources"]["lds_bytes"]) == \
        (128, 384, 65536)


# --- refusals and errors ----------------------------------------------------------------------

def test_legacy_v1_refused(tmp_path: Path, cli) -> None:
    db = build_rocprof_v1_db(tmp_path / "results.db")
    with pytest.raises(InputError, match="legacy rocprof"):
        kernel_table(db)
    run = cli("kernels", str(db))
    assert run.exit_code == 3 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and "legacy rocprof (v1)" in run.stderr and "rocprofv3" in run.stderr


def test_stats_cannot_split_by_marker(corpus: Path, cli) -> None:
    stats = corpus / "csv" / "gfx1201" / "hip-v0_kernel_stats.csv"
    with pytest.raises(UsageError, match="per-dispatch"):
        kernel_table(stats, by_marker="")
    assert cli("kernels", str(stats), "--gpu", "1").exit_code == 2


def test_empty_and_unknown_inputs(tmp_path: Path, corpus: Path) -> None:
    empty = build_rtl_db(tmp_path / "e.db", [(-1, "UserMarker", "prefill", 0, 10)])
    with pytest.raises(EmptyTraceError):
        kernel_table(empty)
    other = tmp_path / "notes.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(InputError, match="not a kernel stats/trace CSV"):
        kernel_table(other)
    with pytest.raises(InputError, match="does not exist"):
        kernel_table(tmp_path / "missing.db")
    with pytest.raises(InputError, match="durations are unknown"):
        kernel_table(corpus / "csv" / "kernel_names.csv")
    with pytest.raises(UsageError):
        kernel_table(corpus / "csv" / "kernel_trace.csv", by_marker="(")


# --- CLI --------------------------------------------------------------------------------------

def test_cli_json_envelope(rtl_db: Path, cli) -> None:
    run = cli("kernels", str(rtl_db), "--gpu", "0", "--top", "2", "--by-marker", "--format", "json")
    assert run.exit_code == 0
    doc = run.json()
    assert doc["ok"] is True and doc["command"] == "kernels"
    data = doc["data"]
    assert set(data["kernels"][0]) >= {"name", "family", "calls", "total_ns", "avg_ns", "min_ns", "max_ns",
                                       "pct", "regex"}
    assert set(data["regions"][0]) >= {"name", "start_ns", "end_ns", "wall_ns", "gpu_ns", "kernels"}
    assert len(data["kernels"]) == 2 and all(len(r["kernels"]) <= 2 for r in data["regions"])
    # In JSON mode warnings travel in the envelope; stderr stays empty.
    assert any("instant" in w for w in doc["warnings"]) and run.stderr == ""


def test_cli_marker_option_and_text(rtl_db: Path, cli) -> None:
    run = cli("kernels", str(rtl_db), "--gpu", "0", "--marker", "decode")
    assert run.exit_code == 0
    assert "Region 'decode' x2" in run.stdout and "prefill" not in run.stdout
    assert "hotspot collect --kernel '^Cijk_Alik_Bljk_HHS_BH_MT128x128x64$'" in run.stdout
    md = cli("kernels", str(rtl_db), "--gpu", "0", "--format", "markdown")
    assert md.exit_code == 0 and md.stdout.startswith("## Kernels") and "| kernel" in md.stdout


def test_folder_skips_an_old_layout_file_with_a_warning(corpus: Path, tmp_path: Path) -> None:
    src = corpus / "csv" / "kernel_trace.csv"
    good = tmp_path / "run1" / "a_kernel_trace.csv"
    good.parent.mkdir()
    good.write_bytes(src.read_bytes())
    # an older layout of the same file: no Start/End timestamps, so no durations
    old = tmp_path / "run2" / "b_kernel_trace.csv"
    old.parent.mkdir()
    lines = src.read_text().splitlines()
    header = lines[0].split(",")
    drop = [header.index('"Start_Timestamp"'), header.index('"End_Timestamp"')]
    import csv
    import io

    rows = list(csv.reader(io.StringIO(src.read_text())))
    buf = io.StringIO()
    csv.writer(buf, quoting=csv.QUOTE_MINIMAL).writerows([[c for i, c in enumerate(r) if i not in drop]
                                                         for r in rows])
    old.write_text(buf.getvalue())
    alone = kernel_table(good).data
    both = kernel_table(tmp_path)
    assert both.data.dispatch_count == alone.dispatch_count  # the good file's dispatches, all of them
    assert [k.name for k in both.data.kernels] == [k.name for k in alone.kernels]
    assert any(w.startswith("skipped ") and "b_kernel_trace.csv" in w for w in both.warnings)
    with pytest.raises(InputError):  # named alone, the old file is still an error
        kernel_table(old)


_KT_HEADER = ("Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,"
              "Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,"
              "SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z")
_MT_HEADER = "Domain,Function,Process_Id,Thread_Id,Correlation_Id,Start_Timestamp,End_Timestamp"


def _write_run(folder: Path, agent: int, kernels: list[tuple[str, int, int]],
               markers: list[tuple[str, int, int]]) -> Path:
    folder.mkdir(parents=True)
    kt = folder / "run_kernel_trace.csv"
    kt.write_text("\n".join([_KT_HEADER] + [
        f"KERNEL_DISPATCH,Agent {agent},1,1,7,{i + 1},{i + 1},{name},{i + 1},{s},{e},0,0,8,0,16,64,1,1,64,1,1"
        for i, (name, s, e) in enumerate(kernels)]) + "\n")
    (folder / "run_marker_api_trace.csv").write_text("\n".join([_MT_HEADER] + [
        f"MARKER_CORE_API,{name},7,7,{i + 1},{s},{e}" for i, (name, s, e) in enumerate(markers)]) + "\n")
    return kt


def test_by_marker_keeps_each_run_to_its_own_markers(tmp_path: Path, cli) -> None:
    # Two runs (two GPUs) over the same wall-clock window: run A's "decode" range [100, 200] also
    # covers run B's kernels in time, but they belong to another process and must not count.
    a = _write_run(tmp_path / "gpu0", 2, [("prefill_a", 10, 40), ("decode_a", 120, 150)],
                   [("prefill", 0, 90), ("decode", 100, 200)])
    b = _write_run(tmp_path / "gpu1", 3, [("gemm_b", 110, 190), ("gemm_b", 300, 310)],
                   [("decode", 250, 400)])
    data = kernel_table(tmp_path, by_marker="").plain_data()
    regions = {(r["run"], r["name"]): r for r in data["regions"]}
    assert set(regions) == {(str(a), "prefill"), (str(a), "decode"), (str(b), "decode")}
    assert regions[(str(a), "decode")]["gpu_ns"] == 30          # decode_a only, not gemm_b's 80
    assert [k["name"] for k in regions[(str(a), "decode")]["kernels"]] == ["decode_a"]
    assert regions[(str(b), "decode")]["gpu_ns"] == 10          # the second gemm_b only
    assert regions[(str(a), "prefill")]["gpu_ns"] == 30
    assert data["outside_regions_gpu_ns"] == 80                 # gemm_b at 110 is in no run-B range
    run = cli("kernels", str(tmp_path), "--by-marker")
    assert run.exit_code == 0
    assert "gpu1" in run.stdout and "2 runs in the folder" in run.stderr


def test_by_marker_single_run_has_no_run_field(tmp_path: Path) -> None:
    kt = _write_run(tmp_path / "r", 2, [("k", 10, 20)], [("phase", 0, 50)])
    data = kernel_table(kt, by_marker="").plain_data()
    assert [r["run"] for r in data["regions"]] == [None]
    assert data["regions"][0]["gpu_ns"] == 10
