"""hotspot pmc on the hand-built fixture (tests/fixtures/pmc): every number computed by hand here.

Fixture: two rocprofv3 counter_collection passes of the same run, same dispatch ids.
  l2.csv: TCC_HIT_sum, TCC_MISS_sum        ea.csv: TCC_EA0_RDREQ_sum, TCC_EA0_RDREQ_32B_sum, TCC_BUBBLE_sum
  ea_no_bubble.csv: ea.csv without TCC_BUBBLE_sum.

  id kernel  HIT  MISS | RDREQ  32B  BUBBLE | dur l2 pass  dur ea pass  -> mean
  1  gemm    900  100  | 1000   100   600   | 1000         1200            1100
  3  gemm    800  200  | 2000     0  2000   | 2000         2000            2000
  5  gemm    850  150  | 1500   300   900   | 1500         1500            1500
  2  copy     10  990  | 4000  2000  1000   | 1000         1000            1000
  4  copy      0 1000  | 4000  2000  1000   | 1000         3000            2000
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from hotspot.arch.counter_semantics import GFX90A_COUNTERS as GFX90A
from hotspot.arch.counter_semantics import GFX942_COUNTERS as GFX942
from hotspot.arch.counter_semantics import GFX950_COUNTERS as GFX950
from hotspot.errors import InputError, UsageError
from hotspot.pmc.api import analyze_pmc
from hotspot.pmc.fabric_bytes import read_bytes

FIX = Path(__file__).resolve().parent / "fixtures" / "pmc"
L2, EA, EA_NB = FIX / "l2.csv", FIX / "ea.csv", FIX / "ea_no_bubble.csv"
GEMM = "gemm_kernel(float const*, float const*, float*, int)"
COPY = "copy_kernel(float const*, float*, int)"

# gfx942: 128·BUBBLE + 64·(RDREQ − BUBBLE − 32B) + 32·32B
D1 = 128 * 600 + 64 * (1000 - 600 - 100) + 32 * 100      # 76,800 + 19,200 + 3,200 = 99,200
D3 = 128 * 2000 + 64 * (2000 - 2000 - 0) + 32 * 0         # 256,000
D5 = 128 * 900 + 64 * (1500 - 900 - 300) + 32 * 300       # 115,200 + 19,200 + 9,600 = 144,000
D2 = D4 = 128 * 1000 + 64 * (4000 - 1000 - 2000) + 32 * 2000  # 128,000 + 64,000 + 64,000 = 256,000
GEMM_BYTES = D1 + D3 + D5                                 # 499,200
COPY_BYTES = D2 + D4                                      # 512,000
GEMM_NS = 1100 + 2000 + 1500                              # 4,600 (mean of the two passes)
COPY_NS = 1000 + 2000                                     # 3,000


def kernels_by_name(result) -> dict[str, dict]:
    return {k["kernel"]: k for k in result.plain_data()["kernels"]}


def test_gfx942_exact_bytes_hit_rate_and_bandwidth():
    r = analyze_pmc([L2, EA], arch="gfx942", peak_gbps=200.0, ideal_bytes=100_000)
    data = r.plain_data()
    assert data["join"] == "dispatch_id"
    assert data["arch"] == "gfx942" and data["arch_source"] == "--arch"
    k = kernels_by_name(r)
    gemm, copy = k[GEMM], k[COPY]
    assert gemm["dispatches"] == 3 and gemm["dispatch_ids"] == [1, 3, 5]
    assert gemm["fabric_read_bytes"] == {"value": 499_200.0, "low": 499_200.0, "high": 499_200.0,
                                         "exact": True, "missing": [], "reason": ""}
    assert GEMM_BYTES == 499_200 and COPY_BYTES == 512_000
    assert copy["fabric_read_bytes"]["value"] == COPY_BYTES
    # L2 hit % = Σhit / (Σhit + Σmiss): gemm 2550/3000, copy 10/2000
    assert gemm["l2_hit_pct"] == pytest.approx(100 * 2550 / 3000)   # 85.0
    assert copy["l2_hit_pct"] == pytest.approx(100 * 10 / 2000)     # 0.5
    # 32B fraction = Σ32B / ΣRDREQ: gemm 400/4500, copy 4000/8000
    assert gemm["req_32b_pct"] == pytest.approx(100 * 400 / 4500)
    assert copy["req_32b_pct"] == pytest.approx(50.0)
    # duration: per dispatch the mean of the two passes; GB/s = bytes/ns
    assert gemm["duration_ns"] == GEMM_NS and copy["duration_ns"] == COPY_NS
    assert gemm["achieved_gbps"]["value"] == pytest.approx(499_200 / 4_600)   # 108.52
    assert copy["achieved_gbps"]["value"] == pytest.approx(512_000 / 3_000)   # 170.67
    assert gemm["pct_of_peak"]["value"] == pytest.approx(100 * (499_200 / 4_600) / 200)  # 54.26
    assert copy["pct_of_peak"]["value"] == pytest.approx(100 * (512_000 / 3_000) / 200)  # 85.33
    assert gemm["peak_source"] == "--peak-gbps"
    # over-fetch = bytes / (ideal × dispatches)
    assert gemm["over_fetch"]["value"] == pytest.approx(499_200 / 300_000)   # 1.664
    assert copy["over_fetch"]["value"] == pytest.approx(512_000 / 200_000)   # 2.56
    # medians per dispatch: gemm bytes {99,200; 144,000; 256,000}, durations {1100, 1500, 2000}
    assert gemm["median_per_dispatch"]["fabric_read_bytes"]["value"] == D5
    assert gemm["median_per_dispatch"]["duration_ns"] == 1500
    assert gemm["counters"] == {"TCC_HIT_sum": 2550, "TCC_MISS_sum": 450, "TCC_EA0_RDREQ_sum": 4500,
                                "TCC_EA0_RDREQ_32B_sum": 400, "TCC_BUBBLE_sum": 3500}
    assert "L2→fabric" in gemm["fabric_bytes_label"] and "HBM" in gemm["fabric_bytes_label"]


def test_verdicts_on_fixture():
    k = kernels_by_name(analyze_pmc([L2, EA], arch="gfx942", peak_gbps=200.0, ideal_bytes=100_000))
    copy_ids = [v["id"] for v in k[COPY]["verdicts"]]
    gemm_ids = [v["id"] for v in k[GEMM]["verdicts"]]
    # copy: hit 0.5% < 5 (streaming), 32B 50% >= 25 (partial lines), 2.56x > 1.25, 85% >= 70
    assert copy_ids == ["streaming", "partial-lines", "over-fetch", "near-peak"]
    # gemm: hit 85%, 32B 8.9%, 1.66x over-fetch, 54% of peak is neither near (70) nor below (50)
    assert gemm_ids == ["over-fetch"]
    for v in k[COPY]["verdicts"]:
        assert v["text"] and v["next"] and v["evidence"] and v["certain"] is True
    # lower the peak so gemm falls below 50%: 108.52 GB/s / 250 = 43.4% with 85% hits
    k2 = kernels_by_name(analyze_pmc([L2, EA], arch="gfx942", peak_gbps=250.0))
    assert [v["id"] for v in k2[GEMM]["verdicts"]] == ["reuse-available"]


def test_missing_bubble_gives_a_range_never_a_number():
    r = analyze_pmc([L2, EA_NB], arch="gfx942", peak_gbps=200.0)
    k = kernels_by_name(r)
    # each non-32B request is 64..128 B: d1 32·100 + [64,128]·900 = [60,800, 118,400]
    #   d3 [64,128]·2000 = [128,000, 256,000]; d5 32·300 + [64,128]·1200 = [86,400, 163,200]
    low = (32 * 100 + 64 * 900) + (64 * 2000) + (32 * 300 + 64 * 1200)     # 275,200
    high = (32 * 100 + 128 * 900) + (128 * 2000) + (32 * 300 + 128 * 1200)  # 537,600
    b = k[GEMM]["fabric_read_bytes"]
    assert (b["value"], b["low"], b["high"], b["exact"]) == (None, low, high, False)
    assert b["missing"] == ["TCC_BUBBLE_sum"]
    assert low <= GEMM_BYTES <= high
    # copy: 32·2000 + [64,128]·2000 per dispatch, two dispatches = [384,000, 640,000]
    assert (k[COPY]["fabric_read_bytes"]["low"], k[COPY]["fabric_read_bytes"]["high"]) == (384_000, 640_000)
    # the bandwidth and % of peak inherit the range: [128, 213.3] GB/s -> [64%, 106.7%] of 200
    pct = k[COPY]["pct_of_peak"]
    assert pct["exact"] is False and pct["low"] == pytest.approx(64.0)
    assert pct["high"] == pytest.approx(100 * 640_000 / 3_000 / 200)
    near = [v for v in k[COPY]["verdicts"] if v["id"] == "near-peak"]
    assert near and near[0]["certain"] is False and near[0]["undecided_by"] == ["TCC_BUBBLE_sum"]
    assert k[COPY]["counters"]["TCC_BUBBLE_sum"] is None    # not collected -> null, not 0
    assert any("TCC_BUBBLE_sum" in w for w in r.warnings)


def test_zero_is_distinct_from_not_collected():
    r = analyze_pmc([L2, EA_NB], arch="gfx942", per_dispatch=True)
    d4 = next(d for d in r.plain_data()["dispatches"] if d["dispatch_id"] == 4)
    assert d4["counters"]["TCC_HIT_sum"] == 0 and d4["l2_hit_pct"] == 0.0
    assert d4["counters"]["TCC_BUBBLE_sum"] is None


def test_undecided_arch_reports_the_union_range():
    # EA0 names + TCC_BUBBLE: gfx942 or gfx950 — the counters alone cannot tell.
    r = analyze_pmc([L2, EA])
    data = r.plain_data()
    assert data["arch"] is None and data["arch_candidates"] == ["gfx942", "gfx950"]
    b = kernels_by_name(r)[GEMM]["fabric_read_bytes"]
    # gfx942 gives 499,200 exactly; gfx950 (no 64B/128B counters) gives [275,200, 537,600]
    assert (b["exact"], b["low"], b["high"]) == (False, 275_200, 537_600)
    assert "arch undecided" in b["reason"]
    assert any("arch undecided" in w for w in r.warnings)


def test_kernel_and_dispatch_filters_and_per_dispatch():
    r = analyze_pmc([L2, EA], arch="gfx942", kernel="^gemm", dispatches=[1, 5], per_dispatch=True)
    data = r.plain_data()
    assert [k["kernel"] for k in data["kernels"]] == [GEMM]
    assert data["kernels"][0]["fabric_read_bytes"]["value"] == D1 + D5
    assert [d["dispatch_id"] for d in data["dispatches"]] == [1, 5]
    assert data["dispatches"][0]["duration_ns"] == 1100
    with pytest.raises(UsageError):
        analyze_pmc([L2, EA], kernel="nope")


def _shifted_copy(tmp_path: Path) -> Path:
    """ea.csv rerun with one extra blit dispatch first: every id shifts by one."""
    lines = EA.read_text().splitlines()
    out = [lines[0], '9,1,"Agent 2",1,1,1,64,3,"blit_kernel",64,0,0,8,0,16,"TCC_EA0_RDREQ_sum",7,1,2']
    for line in lines[1:]:
        first, second, rest = line.split(",", 2)
        out.append(f"{first},{int(second) + 1},{rest}")
    path = tmp_path / "ea_shifted.csv"
    path.write_text("\n".join(out) + "\n")
    return path


def test_join_by_kernel_ordinal_when_ids_disagree(tmp_path):
    r = analyze_pmc([L2, _shifted_copy(tmp_path)], arch="gfx942")
    data = r.plain_data()
    assert data["join"] == "kernel_ordinal"
    assert "name different kernels" in data["join_reason"]
    k = kernels_by_name(r)
    assert k[GEMM]["fabric_read_bytes"]["value"] == GEMM_BYTES   # same numbers, matched by position
    assert k[GEMM]["l2_hit_pct"] == pytest.approx(85.0)
    assert k["blit_kernel"]["counters"]["TCC_HIT_sum"] is None


def test_older_layout_without_timestamps(tmp_path):
    path = tmp_path / "old_counter_collection.csv"
    path.write_text(
        "Correlation_Id,Dispatch_Id,Agent_Id,Queue_Id,Process_Id,Thread_Id,Grid_Size,Kernel_Name,"
        "Workgroup_Size,LDS_Block_Size,Scratch_Size,VGPR_Count,SGPR_Count,Counter_Name,Counter_Value\n"
        "1,1,1,1,5,5,64,k,64,0,0,8,16,TCC_HIT,30\n"           # bare name: rocprofv3 already summed it
        "1,1,1,1,5,5,64,k,64,0,0,8,16,TCC_MISS[0],60\n"       # per-instance values are summed
        "1,1,1,1,5,5,64,k,64,0,0,8,16,TCC_MISS[1],10\n")
    r = analyze_pmc([path])
    k = r.plain_data()["kernels"][0]
    assert k["l2_hit_pct"] == pytest.approx(100 * 30 / 100)
    assert k["duration_ns"] is None and k["achieved_gbps"]["low"] is None
    assert any("no kernel timestamps" in w for w in r.warnings)


def test_all_zero_file_warns_without_dividing(tmp_path):
    path = tmp_path / "z_counter_collection.csv"
    path.write_text(L2.read_text().replace("900.000000", "0").replace("100.000000", "0")
                    .replace("800.000000", "0").replace("200.000000", "0").replace("850.000000", "0")
                    .replace("150.000000", "0").replace("10.000000", "0").replace("990.000000", "0")
                    .replace("1000.000000", "0"))
    r = analyze_pmc([path], arch="gfx942")
    assert any("every counter value is 0" in w for w in r.warnings)
    assert all(k["l2_hit_pct"] is None for k in r.plain_data()["kernels"])


def test_request_size_formulas_per_arch():
    # gfx950 exact from its three size counters: 32·10 + 64·20 + 128·30
    e = read_bytes(GFX950, {"TCC_EA0_RDREQ_32B_sum": 10, "TCC_EA0_RDREQ_64B_sum": 20,
                            "TCC_EA0_RDREQ_128B_sum": 30}).estimate
    assert e.exact and e.value == 32 * 10 + 64 * 20 + 128 * 30
    # gfx950 with the total and one size class missing: the remainder is that class (exact)
    e = read_bytes(GFX950, {"TCC_EA0_RDREQ_sum": 60, "TCC_EA0_RDREQ_32B_sum": 10,
                            "TCC_EA0_RDREQ_64B_sum": 20}).estimate
    assert e.exact and e.value == 32 * 10 + 64 * 20 + 128 * 30
    # gfx90a: 32·32B + 64·(RDREQ − 32B), no ×2 channel factor
    e = read_bytes(GFX90A, {"TCC_EA_RDREQ_sum": 100, "TCC_EA_RDREQ_32B_sum": 40}).estimate
    assert e.exact and e.value == 32 * 40 + 64 * 60
    # no request total and a class unknown: not computable, and it says what is missing
    e = read_bytes(GFX942, {"TCC_EA0_RDREQ_32B_sum": 5}).estimate
    assert not e.known and e.missing == ("TCC_EA0_RDREQ_sum", "TCC_BUBBLE_sum")


def test_rocpd_counters_collection(tmp_path):
    db = tmp_path / "1_results.db"
    con = sqlite3.connect(db)
    con.executescript("""
        create table rocpd_info_agent(id integer, name text, product_name text, type text);
        insert into rocpd_info_agent values (1, 'gfx942', 'AMD Instinct MI300X', 'GPU');
        create table cc(dispatch_id integer, kernel_name text, counter_name text, value real,
                        start integer, "end" integer, agent_id integer);
        insert into cc values (1, 'k', 'TCC_HIT', 3, 100, 1100, 1), (1, 'k', 'TCC_MISS', 1, 100, 1100, 1),
          (1, 'k', 'TCC_EA0_RDREQ', 10, 100, 1100, 1), (1, 'k', 'TCC_EA0_RDREQ_32B', 2, 100, 1100, 1),
          (1, 'k', 'TCC_BUBBLE', 4, 100, 1100, 1);
        create view counters_collection as select * from cc;
    """)
    con.commit()
    con.close()
    r = analyze_pmc([db])
    data = r.plain_data()
    assert data["arch"] == "gfx942" and "rocpd" in data["arch_source"]
    k = data["kernels"][0]
    assert k["l2_hit_pct"] == pytest.approx(75.0)
    # 128·4 + 64·(10 − 4 − 2) + 32·2 = 512 + 256 + 64 = 832 bytes over 1000 ns
    assert k["fabric_read_bytes"]["value"] == 832
    assert k["achieved_gbps"]["value"] == pytest.approx(0.832)


# ---------- bad input: exit 3, file and field named ----------

def test_non_numeric_value_names_file_line_and_field(tmp_path, cli):
    bad = tmp_path / "bad.csv"
    bad.write_text(L2.read_text().replace("850.000000", "n/a"))
    res = cli("pmc", str(bad))
    assert res.exit_code == 3
    assert "bad.csv" in res.stderr and "Counter_Value" in res.stderr and "line 10" in res.stderr
    with pytest.raises(InputError):
        analyze_pmc([bad])


def test_no_counter_rows(tmp_path, cli):
    empty = tmp_path / "empty_counter_collection.csv"
    empty.write_text(L2.read_text().splitlines()[0] + "\n")
    res = cli("pmc", str(empty), "--format", "json")
    assert res.exit_code == 3
    env = res.json()
    assert env["ok"] is False and "no counter rows" in env["error"]["message"]
    assert "empty_counter_collection.csv" in env["error"]["message"]


def test_unknown_layout(tmp_path, cli):
    odd = tmp_path / "odd.csv"
    odd.write_text("a,b,c\n1,2,3\n")
    res = cli("pmc", str(odd))
    assert res.exit_code == 3 and "odd.csv" in res.stderr and "unknown layout" in res.stderr


def test_missing_required_column(tmp_path, cli):
    path = tmp_path / "nodisp.csv"
    path.write_text("Kernel_Name,Counter_Name,Counter_Value\nk,TCC_HIT_sum,1\n")
    res = cli("pmc", str(path))
    assert res.exit_code == 3 and "Dispatch_Id" in res.stderr


def test_not_a_database(tmp_path, cli):
    db = tmp_path / "x_results.db"
    db.write_bytes(b"this is not sqlite at all" * 10)
    res = cli("pmc", str(db))
    assert res.exit_code == 3 and "x_results.db" in res.stderr


# ---------- CLI ----------

def test_cli_text_and_json(cli):
    res = cli("pmc", str(L2), str(EA), "--arch", "gfx942", "--peak-gbps", "200", "--ideal-gb", "0.0001")
    assert res.exit_code == 0
    assert "L2→fabric" in res.stdout and "join: dispatch_id" in res.stdout
    assert "[partial-lines]" in res.stdout and "next:" in res.stdout
    assert "499.20 KB" in res.stdout and "85.0%" in res.stdout
    js = cli("pmc", str(L2), str(EA), "--arch", "gfx942", "--format", "json", "--ideal-gb", "0.0001")
    env = js.json()
    assert env["ok"] and env["command"] == "pmc"
    gemm = next(k for k in env["data"]["kernels"] if k["kernel"] == GEMM)
    assert gemm["over_fetch"]["value"] == pytest.approx(499_200 / (0.0001e9 * 3))
    assert js.stderr == ""  # warnings go into the envelope in json mode


def test_cli_rejects_both_ideal_units(cli):
    res = cli("pmc", str(L2), "--ideal-gb", "1", "--ideal-bytes", "5")
    assert res.exit_code == 2


def test_cli_markdown_blank_for_not_collected(cli):
    res = cli("pmc", str(L2), str(EA_NB), "--arch", "gfx942", "--format", "markdown")
    assert res.exit_code == 0 and res.stdout.startswith("## ")
    assert "~" in res.stdout  # the byte range is marked


def test_wide_workload_with_instances_suffixes_and_sysinfo_peak(tmp_path):
    """A tiny rocprof-compute workload: per-instance columns only for TCC_HIT, a repeated
    Kernel_Name_1 base column, and sysinfo hbm_bw as the only peak."""
    (tmp_path / "pmc_perf.csv").write_text(
        "Dispatch_ID,GPU_ID,Kernel_Name,TCC_HIT[0],TCC_HIT[1],TCC_MISS_sum,TCC_EA0_RDREQ_sum,"
        "TCC_EA0_RDREQ_32B_sum,TCC_BUBBLE_sum,Kernel_Name_1,Start_Timestamp,End_Timestamp\n"
        "0,2,k,30,20,50,10,2,4,k,1000,3000\n"
        "1,2,k,5,5,90,,2,4,k,5000,6000\n")
    (tmp_path / "sysinfo.csv").write_text("gpu_model,gpu_arch,hbm_bw\nMI300X_A1,gfx942,5300\n")
    r = analyze_pmc([tmp_path], per_dispatch=True)
    data = r.plain_data()
    assert data["inputs"][0]["layout"] == "rocprof_compute_wide"
    assert data["peak_gbps"] == 5300 and data["peak_source"].startswith("sysinfo.csv hbm_bw")
    d0, d1 = data["dispatches"]
    assert d0["l2_hit_pct"] == pytest.approx(50.0)                 # (30 + 20) / (50 + 50)
    assert d0["fabric_read_bytes"]["value"] == 128 * 4 + 64 * (10 - 4 - 2) + 32 * 2   # 832
    assert d0["achieved_gbps"]["value"] == pytest.approx(832 / 2000)
    # blank RDREQ on dispatch 1: not collected, so its bytes cannot be computed at all
    assert d1["counters"]["TCC_EA0_RDREQ_sum"] is None
    assert d1["fabric_read_bytes"]["low"] is None and "TCC_EA0_RDREQ_sum" in d1["fabric_read_bytes"]["missing"]
    assert data["kernels"][0]["fabric_read_bytes"]["low"] is None


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st


@given(bubble=st.integers(0, 10**9), r32=st.integers(0, 10**9), r64=st.integers(0, 10**9))
def test_gfx942_exact_value_lies_inside_the_range_without_bubble(bubble, r32, r64):
    counters = {"TCC_EA0_RDREQ_sum": bubble + r32 + r64, "TCC_EA0_RDREQ_32B_sum": r32,
                "TCC_BUBBLE_sum": bubble}
    exact = read_bytes(GFX942, counters).estimate
    assert exact.exact and exact.value == 128 * bubble + 64 * r64 + 32 * r32
    no_bubble = {k: v for k, v in counters.items() if k != "TCC_BUBBLE_sum"}
    rng = read_bytes(GFX942, no_bubble).estimate
    assert rng.low <= exact.value <= rng.high
    assert rng.exact == (bubble + r64 == 0)


def test_runtime_kernels_are_marked_and_get_no_verdicts(tmp_path):
    # The copy kernel of the fixture, renamed to a HIP runtime blit kernel: same counters, no verdicts.
    blit = "__amd_rocclr_fillBufferAligned.kd"
    files = []
    for src in (L2, EA):
        dst = tmp_path / src.name
        dst.write_text(src.read_text().replace(f'"{COPY}"', f'"{blit}"').replace(f",{COPY},", f",{blit},"))
        files.append(dst)
    before = kernels_by_name(analyze_pmc([L2, EA], arch="gfx942", peak_gbps=200.0, ideal_bytes=100_000))
    after = kernels_by_name(analyze_pmc(files, arch="gfx942", peak_gbps=200.0, ideal_bytes=100_000))
    assert before[COPY]["verdicts"] and before[COPY]["runtime"] is False
    assert after[blit]["runtime"] is True and after[blit]["verdicts"] == []
    assert after[blit]["l2_hit_pct"] == before[COPY]["l2_hit_pct"]  # still measured and shown
    assert after[GEMM]["verdicts"] == before[GEMM]["verdicts"]
    from hotspot.render.pmc import render_text

    text = render_text(analyze_pmc(files, arch="gfx942", peak_gbps=200.0, ideal_bytes=100_000))
    assert "(runtime)" in text and "not your code" in text
    assert blit not in text.split("Verdicts", 1)[1].split("Counters", 1)[0]


def test_no_empty_counters_table():
    from hotspot.render.pmc import render_text
    from hotspot.result import Result

    r = analyze_pmc([L2, EA], arch="gfx942")
    assert "Counters (sum over" in render_text(r)
    from dataclasses import replace

    data = replace(r.data, kernels=[replace(k, counters={}) for k in r.data.kernels])
    assert "Counters (sum over" not in render_text(Result("pmc", data))


def test_durations_are_microseconds_in_text():
    from hotspot.render.pmc import render_text

    text = render_text(analyze_pmc([L2, EA], arch="gfx942"))
    assert "µs" in text and f"{GEMM_NS / 1e3:,.1f}" in text
    assert " ns" not in text and " ms" not in text
