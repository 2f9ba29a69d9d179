"""hotspot diff: same code first, then each row's change of cycles per execution with a bootstrap
interval and a q-value; self-diff is quiet, a fixed variant moves the right rows, moved lines match
by mnemonics when the code changed, saved JSON inputs work, replicate dispatches pool with the
floor. Calibration on real replicate captures and planted changes: tests/test_diff_calibration.py."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from hotspot.diff.noise import CAPTURE_NOISE_SD, FLOOR_DF
from tests.test_waits import PROGRAM
from tests.test_wavepass_builder import (
    IMMED,
    MESSAGE,
    SMEM,
    VALU,
    VMEM,
    Schedule,
    W,
    build_dispatch,
)


def _records(begin: int, wait5: int) -> list[list[int]]:
    return (Schedule(begin).op(1, SMEM).op(2, VMEM).op(3, VMEM, stall=4).op(4, VALU)
            .op(5, IMMED, stall=wait5).op(6, IMMED, stall=50).op(7, IMMED, stall=10)
            .op(8, MESSAGE).records)


WAVES = 4  # a side needs 4 traced waves for its rows to be tested (hotspot/diff/noise.py MIN_WAVES)


def _dispatch(d: Path, wait5: int, program=PROGRAM) -> Path:
    return build_dispatch(d, program, [W(_records(0, wait5), 0, simd=i, cu=1 + i) for i in range(WAVES)])


def _rows(run) -> dict[str, dict]:
    assert run.exit_code == 0, run.stderr
    return {r["key"]: r for r in run.json()["data"]["rows"]}


def _floor_only_half_width() -> float:
    """Percent reach of the 95% interval of a change when the waves have no spread: two capture
    factors exp(σz), σ the floor plugged in as known, so log change ~ N(0, 2σ²) and its 97.5%
    point is 1.96·σ·√2."""
    return 100 * (math.exp(1.96 * math.sqrt(2) * CAPTURE_NOISE_SD) - 1)


def test_self_diff_has_no_significant_change(cli, tmp_path):
    d = _dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 400)
    run = cli("diff", d, d, "--format", "json")
    rows = _rows(run)
    assert rows and not any(r["significant"] for r in rows.values())
    assert all(r["delta"] == 0 for r in rows.values())
    data = run.json()["data"]
    assert data["code"]["same"] and data["code"]["instructions_before"] == len(PROGRAM)
    assert data["summary"]["verdict"].startswith("no change in time per wave beyond capture-to-capture noise (±")
    # identical waves: the interval is the capture factor's alone (Monte Carlo error ~0.5 points)
    assert data["summary"]["noise_pct"] == pytest.approx(_floor_only_half_width(), abs=1.0)
    assert data["noise"]["method"] == "waves+floor" and data["noise"]["seed"] == 29
    assert data["noise"]["replicates"] > 0 and data["noise"]["floor_sd"] == CAPTURE_NOISE_SD
    assert {r["kind"] for r in rows.values()} == {"total", "category", "line", "load"}
    total = rows["total:stall"]
    assert total["change_pct"] == 0 and total["ci_pct"][0] < 0 < total["ci_pct"][1]
    assert total["p"] > 0.5 and total["q"] >= total["p"]
    text = cli("diff", d, d)
    assert text.exit_code == 0 and "within noise" in text.stdout
    assert "code: same code (8 instructions" in text.stdout


def test_fixed_variant_moves_cycles_on_the_right_rows(cli, tmp_path):
    before = _dispatch(tmp_path / "before" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "after" / "ui_output_agent_1_dispatch_9", 40)
    run = cli("diff", before, after, "--format", "json")
    rows = _rows(run)
    moved = -360  # wait 5 from 400 to 40 cycles in every wave: per wave
    # the same instructions with unchanged issue cycles: the rows moved, but no code did, so
    # they are said to vary run to run, not called a change
    for key in ("total:stall", "category:wait-vmcnt", "line:/src/k.py:23", "load:/src/k.py:20"):
        assert rows[key]["delta"] == moved and rows[key]["varies_run_to_run"], key
        assert not rows[key]["significant"] and rows[key]["q"] <= 0.05, key
    assert not rows["total:issue"]["varies_run_to_run"] and rows["total:issue"]["delta"] == 0
    line = rows["line:/src/k.py:23"]
    assert line["before"] == 400 + 50 and line["rate_unit"] == "per wave"
    assert line["delta_pct"] == pytest.approx(100 * moved / 450)
    # rows 5 and 6 run once per wave -> 2 executions per wave; per execution 225 -> 45
    assert line["executions_before"] == line["executions_after"] == 2
    assert line["per_execution_before"] == 450 / 2 and line["per_execution_after"] == 90 / 2
    assert line["change_pct"] == pytest.approx(-80) == line["delta_pct"]
    assert line["ci_pct"][0] < -80 < line["ci_pct"][1] < 0
    assert line["p"] < 0.001 and line["q"] <= 0.05
    moved_rows = {k for k, r in rows.items() if r["varies_run_to_run"]}
    assert moved_rows == {"total:stall", "total:latency", "category:wait-vmcnt",
                          "line:/src/k.py:23", "load:/src/k.py:20"}
    assert not any(r["significant"] for r in rows.values())
    assert rows["line:/src/k.py:24"]["delta"] == 0 and not rows["line:/src/k.py:24"]["varies_run_to_run"]
    summary = run.json()["data"]["summary"]
    total = rows["total:stall"]
    # stall per wave: (4 + 400 + 50 + 10) -> (4 + 40 + 50 + 10)
    assert total["change_pct"] == pytest.approx(100 * (104 / 464 - 1))
    latency = rows["total:latency"]
    assert summary["latency_change_pct"] == latency["change_pct"] < 0
    assert summary["verdict"].startswith("no code change; these rows vary run to run: time per wave \u2212")
    assert summary["varies_run_to_run"] == 5 and summary["significant"] == 0
    text = cli("diff", before, after).stdout
    assert "−80.0% [−" in text and "varies run to run" in text


def _shifted(program, by: int = 100):
    return [(isa, src.replace(f":{src.rsplit(':', 1)[1]}", f":{int(src.rsplit(':', 1)[1]) + by}"))
            for isa, src in program]


def test_same_code_with_moved_locations_compares_like_for_like(cli, tmp_path):
    # a recompile that only moved debug info: same instructions, every row keyed by the after side
    before = _dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 40, _shifted(PROGRAM))
    data = cli("diff", before, after, "--format", "json").json()["data"]
    assert data["code"]["same"]
    lines = {r["label"]: r for r in data["rows"] if r["kind"] == "line"}
    row = lines["/src/k.py:123"]
    assert row["matched_by"] == "key" and row["before"] == 450 and row["after"] == 90
    assert row["varies_run_to_run"] and row["q"] <= 0.05  # same code: run to run, not an edit
    assert not any(r["matched_by"] in ("before-only", "after-only") for r in data["rows"])


def test_changed_code_is_listed_and_moved_lines_match_by_mnemonic_sequence(cli, tmp_path):
    changed = _shifted(PROGRAM)
    changed[3] = ("v_mul_f32_e32 v0, v1, v2", changed[3][1])  # line 22 -> 122: another VALU op
    before = _dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 40, changed)
    run = cli("diff", before, after, "--format", "json")
    data = run.json()["data"]
    code = data["code"]
    assert not code["same"] and code["changed"] == 1 and code["added"] == code["removed"] == 0
    assert code["changes"][0]["sources"] == ["/src/k.py:122"]
    assert code["changes"][0]["before_isa"] == ["v_add_f32_e32 v0, v1, v2"]
    assert data["summary"]["verdict"].startswith("code changed: 1 changed instruction(s)")
    lines = {r["label"]: r for r in data["rows"] if r["kind"] == "line"}
    row = lines["/src/k.py:23 -> /src/k.py:123"]
    assert row["matched_by"] == "mnemonics" and row["delta"] == -360 and row["significant"]
    assert lines["/src/k.py:20 -> /src/k.py:120"]["matched_by"] == "mnemonics"
    assert lines["/src/k.py:22"]["matched_by"] == "before-only"
    assert not lines["/src/k.py:22"]["tested"]
    # changed code: totals are compared per wave (the instruction count may be the change)
    assert {r["key"]: r for r in data["rows"]}["total:stall"]["rate_unit"] == "per wave"
    assert "changed 1 instruction(s) at k.py:122" in cli("diff", before, after).stdout


def test_branch_targets_are_addresses_not_code():
    from hotspot.diff.code import compare_code

    before = [(1, "s_cbranch_scc0 2626", "a.py:1"), (2, "s_nop 0", "a.py:2")]
    after = [(7, "s_cbranch_scc0 2630", "a.py:1"), (8, "s_nop 0", "a.py:2")]
    code, line_map = compare_code(before, after, "code")
    assert code.same and line_map == {1: 7, 2: 8}
    code, line_map = compare_code(before, [(7, "s_cbranch_scc1 2630", "a.py:1")], "code")
    assert not code.same and line_map is None and code.changed == 1 and code.removed == 1


def test_saved_analyze_json_is_an_input(cli, tmp_path):
    before = _dispatch(tmp_path / "before" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "after" / "ui_output_agent_1_dispatch_1", 40)
    saved = tmp_path / "before.json"
    saved.write_text(cli("analyze", before, "--format", "json", "--topk", "0").stdout)
    run = cli("diff", saved, after, "--format", "json")
    from_json = _rows(run)
    from_dir = _rows(cli("diff", before, after, "--format", "json"))
    assert {k: r["delta"] for k, r in from_json.items()} == {k: r["delta"] for k, r in from_dir.items()}
    # the floor is measured on totals: a saved side (no per-wave values) tests the totals only
    for k, r in from_json.items():
        if r["kind"] == "total":
            assert r["change_pct"] == from_dir[k]["change_pct"], k
        else:
            assert not r["tested"], k
            if from_dir[k]["tested"]:  # else untested for its own reason (size, one side)
                assert "saved analysis" in r["not_tested"], k
    assert any(r["tested"] for r in from_json.values() if r["kind"] == "total")
    data = run.json()["data"]
    assert data["noise"]["method"] == "floor-only" and data["before"]["samples"] == 0
    assert data["code"]["basis"] == "executed" and data["code"]["same"]
    bad = tmp_path / "bad.json"
    bad.write_text('{"command": "pmc", "ok": true, "data": {}}')
    run = cli("diff", bad, after)
    assert run.exit_code == 3 and "bad.json" in run.stderr


def test_negative_totals_in_a_saved_analysis_are_refused(cli, tmp_path):
    d = _dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400)
    doc = cli("analyze", d, "--format", "json", "--topk", "0").json()
    doc["data"]["totals"]["stall"] = -5
    saved = tmp_path / "neg.json"
    saved.write_text(json.dumps(doc))
    run = cli("diff", saved, d)
    assert run.exit_code == 3
    assert "neg.json" in run.stderr and "totals.stall" in run.stderr and "negative" in run.stderr
    assert run.stderr.count("\n") <= 2 and "Traceback" not in run.stderr


def test_too_few_traced_waves_are_not_tested(cli, tmp_path):
    two = [W(_records(0, 400), 0, simd=i) for i in range(2)]
    before = build_dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", PROGRAM, two)
    after = _dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 40)
    data = cli("diff", before, after, "--format", "json").json()["data"]
    assert not any(r["tested"] or r["significant"] for r in data["rows"])
    total = {r["key"]: r for r in data["rows"]}["total:stall"]
    assert total["not_tested"].startswith("2 traced wave(s) on a side: too few")
    assert data["summary"]["verdict"].startswith("not decided: 2 traced wave(s)")
    assert "capture more traced waves" in data["summary"]["advice"]


def test_a_warning_both_sides_give_is_printed_once(cli, tmp_path):
    d = tmp_path / "x"
    _dispatch(d / "ui_output_agent_1_dispatch_1", 400)
    run = cli("diff", d, d, "--max-waves", "2", "--format", "json")
    assert run.exit_code == 0
    warnings = run.json()["warnings"]
    assert sum("--max-waves 2" in w for w in warnings) == 1
    assert len(warnings) == len(set(warnings))


def test_replicate_dispatches_pool_with_the_floor(cli, tmp_path):
    before = tmp_path / "before"
    _dispatch(before / "ui_output_agent_1_dispatch_1", 400)
    _dispatch(before / "ui_output_agent_1_dispatch_2", 440)
    after = _dispatch(tmp_path / "after" / "ui_output_agent_1_dispatch_5", 450)
    data = cli("diff", before, after, "--format", "json").json()["data"]
    noise = data["noise"]
    assert noise["method"] == "waves+replicates"
    assert len(data["before"]["dispatches"]) == 2 and data["before"]["samples"] == 2 * WAVES
    # stall per executed instruction of each replicate: (4 + wait5 + 50 + 10) per 8 instructions
    r1, r2 = 464 / 8, 504 / 8
    measured = abs(math.log(r1 / r2)) / math.sqrt(2)
    assert noise["replicate_sd"] == pytest.approx(measured)
    # pooled with the floor (it raises σ here: 3.5% > 1.01%), and not divided by √2: the two
    # dispatches of one collect run are not two independent captures
    sigma = math.sqrt((FLOOR_DF * CAPTURE_NOISE_SD ** 2 + measured ** 2) / (FLOOR_DF + 1))
    assert sigma > CAPTURE_NOISE_SD
    assert noise["capture_sd_before"] == pytest.approx(sigma)
    assert noise["capture_sd_after"] == pytest.approx(sigma)
    row = {r["key"]: r for r in data["rows"]}["line:/src/k.py:23"]
    # before mean (450 + 490) / 2 = 470 per wave, after 500: +6.4%, inside the replicates' spread
    assert row["before"] == 470 and row["after"] == 500 and not row["significant"]
    assert row["ci_pct"][0] < 0 < row["ci_pct"][1]


def test_same_seed_same_intervals_other_seed_other_draws(cli, tmp_path):
    before = _dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 420)

    def cis(*extra):
        data = cli("diff", before, after, "--format", "json", *extra).json()["data"]
        return data["noise"]["seed"], [r["ci_pct"] for r in data["rows"]]

    assert cis() == cis()
    seed, other = cis("--seed", "7")
    assert seed == 7 and other != cis()[1]
    assert cli("diff", before, after, "--seed", "-1").exit_code == 2


def test_corpus_self_diff(corpus, cli):
    d = corpus / "att/gfx950/vec_add"
    run = cli("diff", d, d, "--format", "json")
    assert run.exit_code == 0
    data = run.json()["data"]
    assert data["summary"]["significant"] == 0 and data["code"]["same"]
    assert any(r["kind"] == "load" and r["tested"] for r in data["rows"])


def _waves_dispatch(d: Path, wait5: int, n: int) -> Path:
    return build_dispatch(d, PROGRAM, [W(_records(0, wait5), 0, simd=i % 4, slot=i // 4, n=i, cu=1 + i % 4)
                                       for i in range(n)])


def test_different_wave_counts_compare_per_wave(cli, tmp_path):
    # the same kernel and the same per-wave behaviour, traced with 12 waves and with 4: not a change
    twelve = _waves_dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400, 12)
    four = _waves_dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 400, 4)
    run = cli("diff", twelve, four, "--format", "json")
    data = run.json()["data"]
    assert data["normalization"] == "per-wave" and data["unit"] == "cycles per wave"
    rows = _rows(run)
    per_wave_stall = rows["total:stall"]["before"]
    assert per_wave_stall == rows["total:stall"]["after"] > 0
    assert not any(r["significant"] for r in rows.values())
    assert data["summary"]["verdict"].startswith("no change in time per wave beyond capture-to-capture noise")
    # a per-wave change still shows: wait 5 from 400 to 40 cycles per wave (the same code: it
    # varies run to run)
    fixed = _waves_dispatch(tmp_path / "f" / "ui_output_agent_1_dispatch_1", 40, 4)
    rows = _rows(cli("diff", twelve, fixed, "--format", "json"))
    assert rows["line:/src/k.py:23"]["delta"] == -360 and rows["line:/src/k.py:23"]["varies_run_to_run"]


def test_cross_kernel_diff_is_never_significant(cli, tmp_path):
    before = _dispatch(tmp_path / "before" / "ui_output_agent_1_dispatch_1", 400)
    after = _dispatch(tmp_path / "after" / "ui_output_agent_1_dispatch_1", 40)
    saved = tmp_path / "other.json"
    doc = cli("analyze", after, "--format", "json", "--topk", "0").json()
    doc["data"]["dispatch"]["kernel"] = "another_kernel"
    saved.write_text(json.dumps(doc))
    run = cli("diff", before, saved, "--format", "json")
    data = run.json()["data"]
    assert data["comparable"] is False
    assert not any(r["significant"] for r in data["rows"])
    assert any(r["delta"] != 0 for r in data["rows"])  # the numbers are still shown
    assert data["summary"]["verdict"].startswith("different kernels: not comparable")


def test_many_waves_resample_a_spread_subset_and_rows_show_all(cli, tmp_path, monkeypatch):
    from hotspot.att import wave_samples

    monkeypatch.setattr(wave_samples, "MAX_SAMPLE_WAVES", 5)
    twelve = _waves_dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400, 12)
    data = cli("diff", twelve, twelve, "--format", "json").json()["data"]
    assert data["before"]["samples"] == 5 and data["before"]["waves"] == 12
    assert "before: 5 of 12 traced waves resampled" in data["noise"]["note"]
    total = {r["key"]: r for r in data["rows"]}["total:stall"]
    assert total["before"] == 4 + 400 + 50 + 10 and total["tested"]


def test_waves_of_disjoint_work_are_warned_about(cli, tmp_path):
    def more_work(begin: int) -> list[list[int]]:  # wait 5 runs twice: 9 records a wave
        return (Schedule(begin).op(1, SMEM).op(2, VMEM).op(3, VMEM, stall=4).op(4, VALU)
                .op(5, IMMED, stall=400).op(5, IMMED, stall=4).op(6, IMMED, stall=50)
                .op(7, IMMED, stall=10).op(8, MESSAGE).records)

    before = _dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400)
    after = build_dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", PROGRAM,
                           [W(more_work(0), 0, simd=i, cu=1 + i) for i in range(WAVES)])
    run = cli("diff", before, after, "--format", "json")
    assert run.json()["data"]["code"]["same"]
    assert any("executed instructions per wave: 8-8 before, 9-9 after" in w
               for w in run.json()["warnings"])
    same = cli("diff", before, before, "--format", "json").json()["warnings"]
    assert not any("different work" in w for w in same)


def test_loops_are_compared_per_iteration(cli, tmp_path):
    from hotspot.synth import DispatchSpec, InstructionMix, make_dispatch

    d = make_dispatch(tmp_path, DispatchSpec(waves=8, program=InstructionMix(loop_trips=5)), seed=7)
    analysis = cli("analyze", d, "--format", "json", "--topk", "0").json()["data"]
    spans = [(lp["first_line_number"], lp["last_line_number"]) for lp in analysis["loops"]]
    inner = [lp for lp in analysis["loops"] if not any(
        lp["first_line_number"] <= f and l <= lp["last_line_number"]
        and (f, l) != (lp["first_line_number"], lp["last_line_number"]) for f, l in spans)]
    loop = inner[0]
    data = cli("diff", d, d, "--format", "json").json()["data"]
    rows = [r for r in data["rows"] if r["kind"] == "loop"]
    assert len(rows) == len(inner) >= 1
    row = next(r for r in rows if r["label"].startswith(
        f"#{loop['first_line_number']}-#{loop['last_line_number']}"))
    waves = analysis["dispatch"]["waves"]
    assert row["before"] == pytest.approx(loop["stall"] / waves) and row["rate_unit"] == "per wave"
    assert row["executions_before"] == pytest.approx(loop["iterations"] / waves)
    assert row["per_execution_before"] == pytest.approx(loop["stall"] / loop["iterations"])
    assert row["tested"] and row["change_pct"] == 0 and not row["significant"]


def test_pc_sampling_captures_are_shown_not_tested(corpus, cli):
    d = corpus / "att/other/pcsampling_code_json"
    run = cli("diff", d, d, "--format", "json")
    assert run.exit_code == 0, run.stderr
    data = run.json()["data"]
    assert not any(r["tested"] for r in data["rows"])
    assert data["summary"]["verdict"] == ("not decided: a PC-sampling capture: sample counts, no "
                                          "traced waves to measure noise on")


# ---------------------------------------------------------------------------------------------
# issue 34: the verdict in time, honest edges


def test_fewer_runs_costlier_each_gets_the_sign_of_its_per_wave_change(cli, tmp_path):
    """A class that runs fewer times per wave while each run costs more: its row follows the
    per-wave cycles (down), not the per-execution cost (up)."""
    def twice(begin: int) -> list[list[int]]:  # wait 5 runs twice a wave, 100 cycles each
        return (Schedule(begin).op(1, SMEM).op(2, VMEM).op(3, VMEM, stall=4).op(4, VALU)
                .op(5, IMMED, stall=100).op(5, IMMED, stall=100).op(6, IMMED, stall=50)
                .op(7, IMMED, stall=10).op(8, MESSAGE).records)

    def once(begin: int) -> list[list[int]]:  # once a wave, 150 cycles
        return (Schedule(begin).op(1, SMEM).op(2, VMEM).op(3, VMEM, stall=4).op(4, VALU)
                .op(5, IMMED, stall=150).op(6, IMMED, stall=50).op(7, IMMED, stall=10)
                .op(8, MESSAGE).records)

    edited = list(PROGRAM)
    edited[3] = ("v_mul_f32_e32 v0, v1, v2", edited[3][1])  # the code changed: compared as it ran
    before = build_dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", PROGRAM,
                            [W(twice(0), 0, simd=i, cu=1 + i) for i in range(WAVES)])
    after = build_dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", edited,
                           [W(once(0), 0, simd=i, cu=1 + i) for i in range(WAVES)])
    data = cli("diff", before, after, "--format", "json").json()["data"]
    assert not data["code"]["same"]
    row = {r["key"]: r for r in data["rows"]}["category:wait-vmcnt"]
    # vmcnt waits (rows 5 and 7) per wave: 100 + 100 + 10 = 210 -> 150 + 10 = 160
    assert (row["before"], row["after"]) == (210, 160)
    assert row["change_pct"] == pytest.approx(100 * (160 / 210 - 1)) and row["change_pct"] < 0
    assert row["executions_before"] == 3 and row["executions_after"] == 2
    assert row["per_execution_after"] > row["per_execution_before"]  # each run costs more
    for r in data["rows"]:  # no printed % disagrees in sign with its before -> after
        if r["change_pct"] is not None:
            assert (r["change_pct"] > 0) == (r["after"] > r["before"]), r["key"]
            assert (r["change_pct"] < 0) == (r["after"] < r["before"]), r["key"]


def test_code_summary_names_renames_reorders_and_prologue_changes():
    from hotspot.diff.code import PROLOGUE, RENAMES, REORDERED, compare_code

    b = [(1, "s_load_dword s4, s[0:1], 0x0", "a:1"), (2, "v_add_f32 v0, v1, v2", "a:2"),
         (3, "s_waitcnt vmcnt(0)", "a:3"), (4, "v_mul_f32 v5, v0, v0", "a:4"),
         (5, "s_cbranch_scc1 3", "a:5")]
    renamed = [(n, isa.replace("s4", "s6").replace("v0", "v3"), src) for n, isa, src in b]
    code, line_map = compare_code(b, renamed, "code", (3, 3))
    assert not code.same and code.kind == RENAMES and line_map is None
    assert code.summary.startswith("code changed: register renames only: ")
    reordered = [b[1], b[0], *b[2:]]
    code, _ = compare_code(b, reordered, "code", (3, 3))
    assert code.kind == REORDERED and "reordered only" in code.summary
    prologue = [(1, "s_load_dword s4, s[0:1], 0x8", "a:1"), *b[1:]]  # before the loop at line 3
    code, _ = compare_code(b, prologue, "code", (3, 3))
    assert code.kind == PROLOGUE and "prologue only" in code.summary
    in_loop = [*b[:3], (4, "v_fma_f32 v5, v0, v0, v1", "a:4"), b[4]]
    code, _ = compare_code(b, in_loop, "code", (3, 3))
    assert code.kind == "changed" and "only" not in code.summary


def test_saved_json_with_a_row_cut_off_is_refused_naming_topk_0(cli, tmp_path):
    d = _dispatch(tmp_path / "d" / "ui_output_agent_1_dispatch_1", 400)
    cut = tmp_path / "cut.json"
    cut.write_text(cli("analyze", d, "--format", "json", "--topk", "3").stdout)
    run = cli("diff", cut, d, "--format", "json")
    assert run.exit_code == 3
    err = run.json()["error"]
    assert "--topk 0" in err["hint"] and "3 of the kernel's 8 executed instructions" in err["message"]


def test_one_side_without_source_mapping_is_warned_and_its_lines_not_tested(cli, tmp_path):
    before = _dispatch(tmp_path / "b" / "ui_output_agent_1_dispatch_1", 400)
    unmapped = [(isa, "") for isa, _ in PROGRAM]
    unmapped[3] = ("v_mul_f32_e32 v0, v1, v2", "")  # a code change: lines matched by location
    after = _dispatch(tmp_path / "a" / "ui_output_agent_1_dispatch_1", 400, unmapped)
    run = cli("diff", before, after, "--format", "json")
    assert run.exit_code == 0, run.stderr
    assert any("after side has source locations on 0%" in w for w in run.json()["warnings"])
    for r in run.json()["data"]["rows"]:
        if r["kind"] in ("line", "load"):
            assert not r["tested"], r["key"]


def test_different_kernels_get_no_totals(cli, tmp_path):
    before = _dispatch(tmp_path / "before" / "ui_output_agent_1_dispatch_1", 400)
    saved = tmp_path / "other.json"
    doc = cli("analyze", before, "--format", "json", "--topk", "0").json()
    doc["data"]["dispatch"]["kernel"] = "another_kernel"
    saved.write_text(json.dumps(doc))
    data = cli("diff", before, saved, "--format", "json").json()["data"]
    assert not any(r["kind"] == "total" for r in data["rows"])
    assert data["summary"]["latency_before"] is None and data["summary"]["total_stall_before"] is None


def test_moved_lines_match_one_run_about_as_often():
    """Of lines with the same mnemonics, a moved line matches the one run about as often per
    wave; a line run once a wave is never matched to one run hundreds of times."""
    from hotspot.diff.rows import Group, match

    def line(label: str, runs: float) -> Group:
        return Group("line", label, [1], "stall", ("s_waitcnt",), None, runs)

    before = {"line:a.py:1": line("a.py:1", 1.0)}
    after = {"line:a.py:5": line("a.py:5", 500.0), "line:a.py:6": line("a.py:6", 1.2)}
    assert ("line:a.py:1", "line:a.py:6", "mnemonics") in match(before, after, True)
    hot_only = {"line:a.py:5": line("a.py:5", 500.0)}
    pairs = match(before, hot_only, True)
    assert ("line:a.py:1", None, "before-only") in pairs and (None, "line:a.py:5", "after-only") in pairs
