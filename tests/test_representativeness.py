"""One representativeness model feeds the plan's trust (issue 24, point 4; issue 28's code.json vs
wave-file sums): early-exit waves are taken out of the shares, runtime kernels and missing starts
and small samples are named with what to re-capture, source collapse no longer limits trust, and a
code.json that disagrees grossly with the wave files makes the capture unrepresentative."""

from __future__ import annotations

import json
from pathlib import Path

from hotspot.arch.classify import classify
from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
from hotspot.att.representativeness import (
    EARLY_EXIT_MATERIAL_SHARE,
    LIMITED,
    MIN_WORKING_WAVES,
    NOTE,
    UNREPRESENTATIVE,
    WORKING_WAVES,
    ALL_WAVES,
    assess,
)
from hotspot.att.loops import Loop
from hotspot.capture.waves import WaveTotals
from hotspot.plan.entry_point import analyze
from hotspot.synth import DispatchSpec, ExplicitProgram, Layout, make_dispatch
from tests.conftest import corpus_path

SRC = "/work/synth/kernels/k.py"
KT_HEADER = ("Kind,Agent_Id,Queue_Id,Stream_Id,Thread_Id,Dispatch_Id,Kernel_Id,Kernel_Name,Correlation_Id,"
             "Start_Timestamp,End_Timestamp,LDS_Block_Size,Scratch_Size,VGPR_Count,Accum_VGPR_Count,"
             "SGPR_Count,Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z")
# the prologue every wave runs, then the early-exit branch; the working waves go on with a long body
PROLOGUE = ["s_load_dwordx2 s[4:5], s[0:1], 0x0", "s_waitcnt lgkmcnt(0)", "s_cmp_eq_u32 s6, 0",
            "s_cbranch_scc1 70"]
BODY = [f"global_load_dwordx4 v[{4 * (k % 8)}:{4 * (k % 8) + 3}], v[40:41], off offset:{16 * k}"
        if k % 4 == 0 else "s_waitcnt vmcnt(0)" if k % 4 == 1 else f"v_add_f32 v{50 + k % 8}, v0, v4"
        for k in range(64)]


def _dispatch(tmp_path: Path, waves: int = 4, kernel: str = "synth_kernel_0", rows=None,
              same_line: bool = False) -> Path:
    rows = rows or PROLOGUE + BODY + ["s_endpgm"]
    program = ExplicitProgram.of([(isa, f"{SRC}:{10 if same_line else i + 10}") for i, isa in enumerate(rows)], ())
    return make_dispatch(tmp_path, DispatchSpec(arch="gfx950", program=program, waves=waves, kernel=kernel,
                                                layout=Layout(ses=(0,), simds=2, slots=1, other_cus=()),
                                                variants=4, agent_info=True), seed=3)


def _kernel_trace(d: Path, name: str, wg: int = 256, groups: int = 1024) -> None:
    (d.parent / "run_kernel_trace.csv").write_text(
        KT_HEADER + "\n" + f'KERNEL_DISPATCH,"Agent 4",1,0,7,1,3,"{name}",1,1000,51000,1024,0,32,0,'
        f"24,{wg},1,1,{wg * groups},1,1\n")


def _waves(d: Path) -> dict[str, list[list[int]]]:
    return {p.name: json.loads(p.read_text())["wave"]["instructions"] for p in sorted(d.glob("se*_sm*_sl*_wv*.json"))}


def _plant_early_exits(d: Path, count: int, wait_stall: int) -> list[list[list[int]]]:
    """Add `count` wave files that run the prologue (its lgkmcnt wait stalled `wait_stall` cycles),
    branch and end; code.json's sums include them, as a decoder would write them."""
    code_path = d / "code.json"
    code = json.loads(code_path.read_text())
    n_rows = len(code["code"]) - 1
    fn_path = d / "filenames.json"
    fn = json.loads(fn_path.read_text())
    slots = fn["wave_filenames"]["0"]["0"]["0"]
    planted = []
    for k in range(count):
        t, recs = 100_000 + 10_000 * k, []
        for line, stall in ((1, 0), (2, wait_stall), (3, 0), (4, 0), (n_rows, 0)):
            recs.append([t, 1, stall, stall + 4, line])
            t += stall + 4
        n = len(slots) + k
        name = f"se0_sm0_sl0_wv{n}.json"
        (d / name).write_text(json.dumps({"wave": {"begin": recs[0][0] - 4, "end": t, "cu": 1, "id": n,
                                                   "simd": 0, "slot": 0, "instructions": recs,
                                                   "timeline": [[3, t - recs[0][0] + 4]], "waitcnt": []}}))
        slots[str(n)] = [name, recs[0][0] - 4, t]
        planted.append(recs)
        for rec in recs:
            row = next(r for r in code["code"] if r[2] == rec[4])
            row[6] += 1
            row[7] += rec[3]
            row[8] += rec[2]
    code_path.write_text(json.dumps(code))
    fn_path.write_text(json.dumps(fn))
    return planted


def test_early_exit_waves_are_taken_out_of_the_shares(tmp_path: Path) -> None:
    d = _dispatch(tmp_path)
    working = _waves(d)
    _plant_early_exits(d, 12, wait_stall=50_000)  # 12 of 16 waves, each stalled long on the prologue
    result = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED))
    data = result.plain_data()
    rep = data["representativeness"]
    assert (rep["waves_traced"], rep["waves_working"], rep["waves_early_exit"]) == (16, 4, 12)
    assert rep["shares_over"] == WORKING_WAVES and rep["early_exit_max_records"] == 5
    early = next(r for r in rep["reasons"] if r["id"] == "early-exit-waves")
    assert early["level"] == NOTE and "att_target_cu" in early["recapture"]
    # per-instruction stall and the totals equal the sums over the working waves' files alone
    per_line: dict[int, int] = {}
    for recs in working.values():
        for rec in recs:
            per_line[rec[4]] = per_line.get(rec[4], 0) + rec[2]
    assert data["totals"]["stall"] == sum(per_line.values())
    assert {i["line_number"]: i["stall"] for i in data["instructions"] if i["stall"]} == \
        {n: s for n, s in per_line.items() if s}
    # the category ranking is the working waves' (the planted lgkmcnt stall would top it otherwise)
    by_cat: dict[str, int] = {}
    rows = {r["line_number"]: r["isa"] for r in data["instructions"]}
    for n, s in per_line.items():
        by_cat[classify(rows[n]).category] = by_cat.get(classify(rows[n]).category, 0) + s
    top = max(by_cat, key=by_cat.get)
    assert data["stall_by_category"][0]["category"] == top != "wait-lgkmcnt"
    assert any("working waves" in w for w in result.warnings)
    # the prologue's wait: its stall in `waits` is the working waves' too, its producers' blame sums to it
    wait = next(w for w in data["waits"] if w["line_number"] == 2)
    assert wait["stall"] == per_line[2] and wait["hits"] == len(working)
    assert abs(sum(p["blamed_stall"] for p in wait["producers"]) - per_line[2]) < 1e-6
    assert abs(wait["share"] - per_line[2] / data["totals"]["stall"]) < 1e-9


def test_a_few_early_exits_leave_the_shares_over_all_waves(tmp_path: Path) -> None:
    d = _dispatch(tmp_path, waves=16)
    _plant_early_exits(d, 2, wait_stall=1_000)
    rep = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()["representativeness"]
    assert rep["waves_early_exit"] == 2 and rep["early_exit_share"] < EARLY_EXIT_MATERIAL_SHARE
    assert rep["shares_over"] == ALL_WAVES


def test_runtime_kernel_is_unrepresentative(tmp_path: Path) -> None:
    d = _dispatch(tmp_path, waves=32, kernel="__amd_rocclr_fillBufferAligned")
    data = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    assert data["plan_trust"]["level"] == UNREPRESENTATIVE
    assert data["plan_trust"]["reasons"][0].startswith("runtime-kernel:")
    assert all(i["estimate"]["high_pct"] is None for i in data["plan"] if i["kind"] == "code")


def test_wave_streams_missing_their_start_limit_trust(tmp_path: Path) -> None:
    d = _dispatch(tmp_path, waves=32)
    code_path = d / "code.json"
    code = json.loads(code_path.read_text())
    for p in d.glob("se*_sm*_sl*_wv*.json"):  # every wave's first two records were never traced
        doc = json.loads(p.read_text())
        doc["wave"]["instructions"] = [r for r in doc["wave"]["instructions"] if r[4] > 2]
        p.write_text(json.dumps(doc))
    for row in code["code"]:
        if row[2] in (1, 2):
            row[6] = row[7] = row[8] = 0
    code_path.write_text(json.dumps(code))
    data = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    miss = next(r for r in data["representativeness"]["reasons"] if r["id"] == "missing-start")
    assert miss["level"] == LIMITED and miss["evidence"]["entry_line_number"] == 1
    assert miss["evidence"]["first_executed_line_number"] == 3
    assert "kernel_iteration_range" in miss["recapture"]
    assert any(r.startswith("missing-start:") for r in data["plan_trust"]["reasons"])


def test_sample_size_counts_waves_and_workgroups(tmp_path: Path) -> None:
    small = _dispatch(tmp_path / "small", waves=4)
    _kernel_trace(small, analyze(small, AnalyzeOptions(plan=PLAN_ATTACHED)).plain_data()["dispatch"]["kernel"])
    data = analyze(small, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    reason = next(r for r in data["representativeness"]["reasons"] if r["id"] == "small-sample")
    # 4 waves of a 256-thread workgroup: one workgroup of 4 waves
    assert reason["evidence"]["workgroups_estimated"] == 1 and reason["evidence"]["waves_per_workgroup"] == 4
    assert data["plan_trust"]["level"] == LIMITED
    big = _dispatch(tmp_path / "big", waves=MIN_WORKING_WAVES * 2)
    _kernel_trace(big, analyze(big, AnalyzeOptions(plan=PLAN_ATTACHED)).plain_data()["dispatch"]["kernel"])
    rep = analyze(big, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()["representativeness"]
    assert rep["workgroups_estimated"] == 8 and not [r for r in rep["reasons"] if r["id"] == "small-sample"]


def test_source_collapse_is_a_note_not_a_trust_level(tmp_path: Path) -> None:
    """A well-sampled capture whose rows all carry one source line: the finding stays, line-level
    claims are flagged, trust is ok."""
    d = _dispatch(tmp_path, waves=32, same_line=True)
    _kernel_trace(d, analyze(d, AnalyzeOptions(plan=PLAN_ATTACHED)).plain_data()["dispatch"]["kernel"])
    data = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    assert "source-collapse" in [f["id"] for f in data["findings"]]
    note = next(r for r in data["representativeness"]["reasons"] if r["id"] == "source-collapse")
    assert note["level"] == NOTE and "line-level" in note["message"]
    assert data["plan_trust"]["level"] == "ok", data["plan_trust"]


def test_source_collapse_is_printed_once_in_the_text_view(tmp_path: Path, cli) -> None:
    """The trust note points at the finding; the finding's message (file:line, share) is printed
    once, under Findings."""
    d = _dispatch(tmp_path, waves=32, same_line=True)
    finding = next(f for f in analyze(d, AnalyzeOptions(topk=0)).plain_data()["findings"]
                   if f["id"] == "source-collapse")
    r = cli("--no-cache", "analyze", str(d))
    assert r.exit_code == 0, r.stderr
    flat = " ".join(r.stdout.split())  # the text view wraps long lines
    assert flat.count(" ".join(finding["message"].split())) == 1
    assert flat.count("source-collapse:") == 2  # the trust note and the finding
    assert "line-level locations are unreliable (instruction-level blame is not affected): see the finding below" in flat


def test_code_json_sums_far_from_the_wave_files_are_unrepresentative(tmp_path: Path) -> None:
    d = _dispatch(tmp_path, waves=32)
    code_path = d / "code.json"
    code = json.loads(code_path.read_text())
    for row in code["code"][1:]:
        row[6], row[7], row[8] = row[6] * 1000, row[7] * 1000, row[8] * 1000
    code_path.write_text(json.dumps(code))
    result = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED))
    data = result.plain_data()
    assert any(w.startswith("wave-mismatch:") for w in result.warnings)
    reason = next(r for r in data["representativeness"]["reasons"] if r["id"] == "wave-mismatch")
    assert reason["level"] == UNREPRESENTATIVE and abs(reason["evidence"]["ratio"] - 1000) < 1
    assert data["plan_trust"]["level"] == UNREPRESENTATIVE


def test_corpus_blit_kernel_and_small_samples(corpus) -> None:
    """ck_bmm dispatch 1 is rocclr's fillBufferAligned, whose waves start after its argument-preload
    prologue;
    blockscale is 4 waves of one workgroup; vec_add (632 waves) is ok."""
    blit = analyze(corpus_path("att", "gfx942", "ck_bmm", "ui_output_agent_5600_dispatch_1"),
                             AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    ids = {r["id"]: r["level"] for r in blit["representativeness"]["reasons"]}
    # rows #1-#62 are the kernel-argument preload prologue; the waves start 256 bytes after the
    # entry (#63), as firmware that preloads arguments does: not a trace that began late
    assert ids["runtime-kernel"] == UNREPRESENTATIVE and ids["preload-entry"] == NOTE
    assert "missing-start" not in ids
    assert blit["plan_trust"]["level"] == UNREPRESENTATIVE
    bs = analyze(corpus_path("att", "gfx950", "blockscale_preshuffle_gemm"),
                           AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    assert bs["representativeness"]["waves_traced"] == 4 and bs["plan_trust"]["level"] == LIMITED
    assert bs["representativeness"]["workgroups_estimated"] == 1
    va = analyze(corpus_path("att", "gfx950", "vec_add"), AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    assert va["representativeness"]["level"] == "ok" and va["plan_trust"]["level"] == "ok"


def test_a_runtime_kernel_is_never_the_dispatch_chosen(tmp_path: Path) -> None:
    """A folder holding a rocclr fill (more rows, more waves) and the user's kernel: every command
    analyzes the user's."""
    from hotspot.capture.select import rank_dispatches

    user = ExplicitProgram.of([(isa, f"{SRC}:{i + 10}") for i, isa in enumerate(PROLOGUE[:2] + ["s_endpgm"])], ())
    fill = ExplicitProgram.of([(isa, f"{SRC}:{i + 10}") for i, isa in enumerate(PROLOGUE + BODY + ["s_endpgm"])], ())
    lay = Layout(ses=(0,), simds=2, slots=1, other_cus=())
    make_dispatch(tmp_path, DispatchSpec(arch="gfx950", program=fill, waves=32, layout=lay, variants=2,
                                         kernel="__amd_rocclr_fillBufferAligned", dispatch_id=1), seed=1)
    mine = make_dispatch(tmp_path, DispatchSpec(arch="gfx950", program=user, waves=4, layout=lay, variants=2,
                                                kernel="my_kernel", dispatch_id=2), seed=1)
    ranking, _ = rank_dispatches(sorted(tmp_path.glob("ui_output_*")))
    assert ranking[0].path == str(mine) and ranking[1].executed_instructions > ranking[0].executed_instructions
    data = analyze(tmp_path, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    assert data["dispatch"]["kernel"] == "my_kernel"


def test_text_says_which_waves_the_shares_cover_and_what_to_re_capture(tmp_path: Path, cli) -> None:
    d = _dispatch(tmp_path)
    _plant_early_exits(d, 12, wait_stall=50_000)
    run = cli("--no-cache", "analyze", d)
    assert run.exit_code == 0, run.stderr
    assert "16 (12 early-exit; shares over the 4 working waves)" in " ".join(run.stdout.split())
    assert "Does the capture represent the kernel? limited" in run.stdout
    assert "[limited] small-sample" in run.stdout and "next: re-capture tracing more" in run.stdout


def _loop(first: int, last: int, per_wave: float, stall: int, share: float) -> Loop:
    return Loop(first, last, "", int(per_wave * 32), int(per_wave * 32), 32, per_wave, stall, share, None)


def _passes_reason(loops: list[Loop]) -> list[str]:
    waves = WaveTotals(waves=32, lengths={2000: 32})
    rep, _ = assess([], waves, ["k"], [], loops, 256, 64)
    return [r.id for r in rep.reasons if r.id == "single-pass"]


def test_an_outer_loop_run_once_around_a_repeated_inner_loop_is_a_steady_state() -> None:
    # the outer loop holds its inner loop's stall (93% vs 86%) but runs once per wave: the inner
    # loop, 8.75 passes per wave, shows the steady state (flash attention's shape)
    outer, inner = _loop(123, 1912, 1.0, 1_726_416, 0.93), _loop(471, 1781, 8.75, 1_589_608, 0.86)
    assert _passes_reason([outer, inner]) == []
    # the only loop holding the time runs once: no steady state was traced
    assert _passes_reason([outer, _loop(471, 500, 9.0, 10_000, 0.01)]) == ["single-pass"]


def test_corpus_flash_attention_big_is_not_single_pass(corpus) -> None:
    d = corpus_path("att", "gfx950", "flash_attn_replicates", "big", "ui_output_agent_25171_dispatch_44")
    data = analyze(d, AnalyzeOptions(topk=0, plan=PLAN_ATTACHED)).plain_data()
    assert "single-pass" not in {r["id"] for r in data["representativeness"]["reasons"]}
    assert data["representativeness"]["passes_per_wave"] > 2
