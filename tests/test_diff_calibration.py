"""Calibration of `hotspot diff` (issue 29): on unchanged code nothing is called a change, and a
planted change is found with an interval that covers its size.

- every pair of replicate captures in ../shared/corpus/att/gfx950/flash_attn_replicates (the same
  binary recaptured): no total and at most one row significant at the default level;
- split-half self-diffs (seeded random halves of one capture's waves) of every corpus capture: the same;
- a synthetic capture (hotspot/synth) against itself with +20% stall planted on one s_waitcnt:
  that row is significant and its interval covers the planted change.
Plus the resampling machinery against direct computations.
"""

from __future__ import annotations

import itertools
import json
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest

from hotspot.diff import stats
from hotspot.diff.api import _Side, compare, load_side
from tests.conftest import corpus_path

# The same corpus captures are analyzed by several tests and commands here: their wave pass is
# made once per test process (tests/conftest.py shared_analyses).
pytestmark = pytest.mark.usefixtures("shared_analyses")

REPLICATES = "att/gfx950/flash_attn_replicates"
PAIRS = [(size, a, b) for size, names in (
    ("big", ("ui_output_agent_25171_dispatch_44", "ui_output_agent_27340_dispatch_44_after_loc_fix",
             "ui_output_agent_34195_dispatch_44_after_loc_fix")),
    ("small", ("ui_output_agent_14326_dispatch_44_after_loc_fix",
               "ui_output_agent_23205_dispatch_44_after_loc_fix")))
    for a, b in itertools.combinations(names, 2)]
CAPTURES = ["att/gfx950/vec_add", "att/gfx950/preshuffle_gemm_v2",
            "att/gfx950/blockscale_preshuffle_gemm", "att/gfx950/pa_mqa_logits_fp4_small",
            "att/gfx950/mla_decode", "att/gfx942/ck_bmm/ui_output_agent_5600_dispatch_2",
            *(f"{REPLICATES}/{size}/{name}" for size, name in (
                ("big", "ui_output_agent_25171_dispatch_44"),
                ("big", "ui_output_agent_27340_dispatch_44_after_loc_fix"),
                ("big", "ui_output_agent_34195_dispatch_44_after_loc_fix"),
                ("small", "ui_output_agent_14326_dispatch_44_after_loc_fix"),
                ("small", "ui_output_agent_23205_dispatch_44_after_loc_fix"))),
            "att/gfx950/triton_gemm_early3"]  # the early format-3.0.0 layout (Stall/Idle rebuilt)


def _significant(result) -> tuple[bool, list[str]]:
    """(any total significant, the significant rows)."""
    totals = [r for r in result.rows if r.kind == "total"]
    return any(r.significant for r in totals), [r.key for r in result.rows if r.significant]


@pytest.mark.parametrize("size,a,b", PAIRS, ids=[f"{s}-{a[16:21]}-{b[16:21]}" for s, a, b in PAIRS])
def test_replicate_captures_show_no_change(corpus, size, a, b):
    base = corpus / REPLICATES / size
    warnings: list[str] = []
    result = compare(load_side(base / a, None, None, warnings), load_side(base / b, None, None, warnings),
                     warnings)
    assert result.code.same and result.code.instructions_before == 2069
    if size == "small":
        # 4 traced waves in 1 workgroup before: no spread between workgroups to test against
        assert not any(r.tested for r in result.rows)
        assert "form 1 workgroup" in result.summary.verdict, result.summary.verdict
        assert result.summary.verdict.startswith("not decided")
        return
    total_moved, rows = _significant(result)
    assert not total_moved
    assert len(rows) <= 1, rows
    assert result.summary.noise_pct is not None and result.summary.noise_pct > 0
    if not rows:
        assert result.summary.verdict.startswith((
            "no change in time per wave beyond capture-to-capture noise (±",
            "no code change; these rows vary run to run"))


def _halves(side: _Side, seed: int) -> tuple[_Side, _Side]:
    """Two sides holding seeded random halves of one capture's traced waves."""
    (ds,) = side.samples
    s = ds.samples
    n = len(s.waves)
    order = list(range(n))
    random.Random(seed).shuffle(order)
    out = []
    for part in (sorted(order[:n // 2]), sorted(order[n // 2:])):
        def pick(table: dict) -> dict:
            return {k: [v[i] for i in part] for k, v in table.items()}

        sub = replace(s, waves=[s.waves[i] for i in part], stall=pick(s.stall),
                      latency=pick(s.latency), hits=pick(s.hits), blame=pick(s.blame))
        info = replace(side.info, waves=len(part), samples=len(part))
        out.append(_Side(info, side.analyses, [replace(ds, samples=sub)]))
    return out[0], out[1]


@pytest.mark.parametrize("capture", CAPTURES, ids=[c.rsplit("/", 1)[-1][:28] for c in CAPTURES])
def test_split_half_self_diffs_show_no_change(corpus, capture):
    warnings: list[str] = []
    side = load_side(corpus_path(*capture.split("/")), None, None, warnings)
    if len(side.samples[0].samples.waves) < 2:
        pytest.skip(f"{capture}: fewer than two traced waves, nothing to split")
    for seed in (1, 2, 3):
        first, second = _halves(side, seed)
        result = compare(first, second, warnings)
        total_moved, rows = _significant(result)
        assert not total_moved, (capture, seed)
        assert len(rows) <= 1, (capture, seed, rows)


PLANTED = 0.20


def _plant(src: Path, dst: Path, line: int) -> float:
    """Copy a synthetic dispatch dir, adding 20% (rounded to cycles) to the stall of every record
    of code line `line` in every wave, later records shifted; returns the planted relative change
    of that line's total stall."""
    import shutil

    shutil.copytree(src, dst)
    before = added = 0
    for f in sorted(dst.glob("se*_sm*_sl*_wv*.json")):
        doc = json.loads(f.read_text())
        wave = doc["wave"]
        shift = 0
        for rec in wave["instructions"]:
            rec[0] += shift
            if rec[4] == line:
                extra = round(rec[2] * PLANTED)
                before += rec[2]
                added += extra
                rec[2] += extra
                rec[3] += extra
                shift += extra
        wave["end"] += shift
        if shift:
            wave["timeline"].append([3, shift])  # WAIT: the timeline still sums to end - begin
        f.write_text(json.dumps(doc))
    code = json.loads((dst / "code.json").read_text())
    header = code["header"].split(", ") if isinstance(code["header"], str) else code["header"]
    col = {name: i for i, name in enumerate(header)}
    for row in code["code"]:
        if row[col["LineNumber"]] == line:
            row[col["Stall"]] += added
            row[col["Latency"]] += added
    (dst / "code.json").write_text(json.dumps(code))
    return added / before


def test_planted_change_on_one_wait_is_found_with_its_size(cli, tmp_path):
    from hotspot.synth import DispatchSpec, make_dispatch

    src = make_dispatch(tmp_path / "before", DispatchSpec(waves=32), seed=5)
    analysis = cli("analyze", src, "--format", "json", "--topk", "0").json()["data"]
    waits = [i for i in analysis["instructions"] if i["isa"].startswith("s_waitcnt")]
    target = max(waits, key=lambda i: i["stall"])
    dst = tmp_path / "after" / src.name
    planted = _plant(src, dst, target["line_number"])
    assert planted == pytest.approx(PLANTED, abs=0.01)
    data = cli("diff", src, dst, "--format", "json").json()["data"]
    assert data["code"]["same"]
    rows = {r["key"]: r for r in data["rows"]}
    row = rows[f"line:{target['source']}"]
    members = len([i for i in analysis["instructions"] if i["source"] == target["source"]])
    assert members >= 1
    line_stall = sum(i["stall"] for i in analysis["instructions"] if i["source"] == target["source"])
    expected = 100 * planted * target["stall"] / line_stall  # the line's change per execution
    # a stall-only plant keeps the instructions and their issue cycles: what run-to-run
    # variation looks like, so it is measured at its size but said to vary run to run
    assert row["q"] <= 0.05 and row["varies_run_to_run"] and not row["significant"], row
    assert row["change_pct"] == pytest.approx(expected, rel=1e-6)
    assert row["ci_pct"][0] <= expected <= row["ci_pct"][1]
    moved = {k for k, r in rows.items() if r["varies_run_to_run"]}
    # the wait's line, its category, the load it waits for, the loop holding it and the totals
    assert all(k.startswith(("line:", "category:wait", "total:", "load:", "loop:")) for k in moved), moved


def _workgroup_halves(side: _Side, seed: int) -> tuple[_Side, _Side]:
    """Two sides holding seeded halves of one capture's workgroups, half of each launch round on
    each side (waves of one workgroup stay together: they are not independent)."""
    from hotspot.diff.workgroups import strata, workgroups

    (ds,) = side.samples
    s = ds.samples
    placement = [(0, *p) for p in s.placement]
    groups = workgroups(placement, None)
    rng = random.Random(seed)
    first: list[int] = []
    for layer in strata(groups, placement):
        layer = list(layer)
        rng.shuffle(layer)
        first += layer[:len(layer) // 2]
    out = []
    for chosen in (sorted(first), sorted(set(range(len(groups))) - set(first))):
        part = sorted(w for g in chosen for w in groups[g])

        def pick(table: dict) -> dict:
            return {k: [v[i] for i in part] for k, v in table.items()}

        sub = replace(s, waves=[s.waves[i] for i in part], stall=pick(s.stall),
                      latency=pick(s.latency), hits=pick(s.hits), blame=pick(s.blame),
                      placement=[s.placement[i] for i in part])
        info = replace(side.info, waves=len(part), samples=len(part))
        out.append(_Side(info, side.analyses, [replace(ds, samples=sub)]))
    return out[0], out[1]


REPLICATE_CAPTURES = [c for c in CAPTURES if REPLICATES in c] + ["att/gfx950/triton_gemm_early3"]


@pytest.mark.parametrize("capture", REPLICATE_CAPTURES, ids=[c.rsplit("/", 1)[-1][:28] for c in REPLICATE_CAPTURES])
def test_workgroup_halves_show_no_change(corpus, capture):
    """The replicate fixture (and the early-layout capture) split by workgroup: no total and at
    most one row significant."""
    warnings: list[str] = []
    side = load_side(corpus_path(*capture.split("/")), None, None, warnings)
    s = side.samples[0].samples
    assert s.placement is not None and len(s.placement) == len(s.waves)
    if len(s.waves) < 16:
        pytest.skip(f"{capture}: {len(s.waves)} waves, too few workgroups to split")
    for seed in (1, 2, 3):
        first, second = _workgroup_halves(side, seed)
        result = compare(first, second, warnings)
        total_moved, rows = _significant(result)
        assert not total_moved, (capture, seed)
        assert len(rows) <= 1, (capture, seed, rows)
        assert result.noise.units_before[1] < result.noise.units_before[0]  # workgroups drawn


BIG = f"{REPLICATES}/big/ui_output_agent_25171_dispatch_44"


def _scale_rows(src: Path, dst: Path, lines: set[int], factor: float) -> tuple[int, int]:
    """Copy a dispatch dir, every record of `lines` taking `factor` times its stall and its
    duration (so its issue cycles too), later records of the wave shifted; code.json updated to
    match. Returns (stall of those lines before, stall added), over all waves."""
    import shutil

    shutil.copytree(src, dst)
    before = added = 0
    add_lat: dict[int, int] = {}
    add_stall: dict[int, int] = {}
    for f in sorted(dst.glob("se*_sm*_sl*_wv*.json")):
        doc = json.loads(f.read_text())
        wave = doc["wave"]
        shift = 0
        for rec in wave["instructions"]:
            rec[0] += shift
            if rec[4] in lines:
                extra_s = round(rec[2] * factor) - rec[2]
                extra_d = round(rec[3] * factor) - rec[3]
                extra_d = max(extra_d, extra_s)  # duration keeps its stall inside it
                before += rec[2]
                added += extra_s
                add_stall[rec[4]] = add_stall.get(rec[4], 0) + extra_s
                add_lat[rec[4]] = add_lat.get(rec[4], 0) + extra_d
                rec[2] += extra_s
                rec[3] += extra_d
                shift += extra_d
        wave["end"] += shift
        if shift:
            wave["timeline"].append([2, shift])  # EXEC: the timeline still sums to end - begin
        f.write_text(json.dumps(doc))
    code = json.loads((dst / "code.json").read_text())
    header = code["header"].split(", ") if isinstance(code["header"], str) else code["header"]
    col = {name.strip(): i for i, name in enumerate(header)}
    for row in code["code"]:
        n = row[col["LineNumber"]]
        row[col["Stall"]] += add_stall.get(n, 0)
        row[col["Latency"]] += add_lat.get(n, 0)
    (dst / "code.json").write_text(json.dumps(code))
    return before, added


def _analysis(cli, d: Path) -> dict:
    run = cli("analyze", d, "--format", "json", "--topk", "0")
    assert run.exit_code == 0, run.stderr
    return run.json()["data"]


def test_planted_loop_change_is_found_at_its_size(corpus, cli, tmp_path):
    """The main loop of a real capture made 10% slower (stall and issue): significant, the
    interval holds the planted size and is at most ±8 points wide."""
    src = corpus / BIG
    a = _analysis(cli, src)
    spans = [(lp["first_line_number"], lp["last_line_number"]) for lp in a["loops"]]
    inner = [lp for lp in a["loops"] if not any(  # outer loops get no row (docs/cli/diff.md)
        lp["first_line_number"] <= f and l <= lp["last_line_number"]
        and (f, l) != (lp["first_line_number"], lp["last_line_number"]) for f, l in spans)]
    loop = max(inner, key=lambda lp: lp["stall"])
    lines = {i["line_number"] for i in a["instructions"]
             if loop["first_line_number"] <= i["line_number"] <= loop["last_line_number"]}
    dst = tmp_path / "after" / src.name
    before, added = _scale_rows(src, dst, lines, 1.10)
    planted = 100 * added / before
    assert 8.5 < planted < 10.5  # 10% per record, rounded to whole cycles
    warnings: list[str] = []
    result = compare(load_side(src, None, None, warnings), load_side(dst, None, None, warnings),
                     warnings)
    assert result.code.same
    rows = [r for r in result.rows if r.kind == "loop"]
    row = next(r for r in rows if r.label.startswith(
        f"#{loop['first_line_number']}-#{loop['last_line_number']}"))
    assert row.significant and row.q < 0.05, row
    assert row.change_pct == pytest.approx(planted, abs=0.5)
    lo, hi = row.ci_pct
    assert 0 < lo <= planted <= hi, row.ci_pct
    assert (hi - lo) / 2 <= 8, row.ci_pct
    assert not row.varies_run_to_run


def test_planted_prologue_change_is_not_a_loop_change(corpus, cli, tmp_path):
    """The costliest instruction run once per wave before any loop (the wait for the
    kernel-argument loads) made 2x slower: its category row moves by its size, no loop row
    moves."""
    src = corpus / BIG
    a = _analysis(cli, src)
    waves = a["dispatch"]["waves"]
    first_loop = min(lp["first_line_number"] for lp in a["loops"])
    once = [i for i in a["instructions"] if i["hit"] == waves and i["line_number"] < first_loop]
    target = max(once, key=lambda i: i["stall"])
    dst = tmp_path / "after" / src.name
    before, added = _scale_rows(src, dst, {target["line_number"]}, 2.0)
    assert added == before > 0
    warnings: list[str] = []
    result = compare(load_side(src, None, None, warnings), load_side(dst, None, None, warnings),
                     warnings)
    category = next(c for c in a["stall_by_category"] if c["category"] == target["category"])
    expected = 100 * added / category["stall"]
    row = next(r for r in result.rows if r.key == f"category:{target['category']}")
    assert row.tested and row.change_pct == pytest.approx(expected, rel=0.02)
    assert row.ci_pct[0] <= expected <= row.ci_pct[1]
    # the same instructions, issue cycles per wave unchanged: said to vary run to run (a cold
    # prologue wait is what moves between dispatches), found at its size either way
    assert (row.significant or row.varies_run_to_run) and row.q < 0.05, row
    assert not any(r.significant or r.varies_run_to_run for r in result.rows if r.kind == "loop")


def test_planted_loop_boundary_shift_is_compared_per_loop(cli, tmp_path):
    """One more scalar instruction before the loop moves its boundaries: the loop is matched by
    structure and still compared."""
    from hotspot.synth import DispatchSpec, InstructionMix, make_dispatch

    b = make_dispatch(tmp_path / "b", DispatchSpec(waves=16, program=InstructionMix(loop_trips=6)),
                      seed=3)
    a = make_dispatch(tmp_path / "a", DispatchSpec(
        waves=16, program=InstructionMix(loop_trips=6, salu=17)), seed=3)
    data = cli("diff", b, a, "--format", "json").json()["data"]
    assert not data["code"]["same"]
    loops = [r for r in data["rows"] if r["kind"] == "loop"]
    assert loops and all(r["matched_by"] == "structure" and r["tested"] for r in loops), loops
    first_b = loops[0]["label"].split(" ", 1)[0]
    first_a = loops[0]["label"].split(" -> ", 1)[1].split(" ", 1)[0]
    assert first_b != first_a  # the boundaries did move


# ---------------------------------------------------------------------------------------------
# the machinery


def test_bh_qvalues_by_hand():
    # m = 4: sorted p 0.01, 0.02, 0.03, 0.5 -> p·m/rank 0.04, 0.04, 0.04, 0.5 (then running min)
    assert stats.bh_qvalues([0.5, 0.01, 0.03, 0.02]) == pytest.approx([0.5, 0.04, 0.04, 0.04])
    assert stats.bh_qvalues([0.04, 0.01]) == pytest.approx([0.04, 0.02])
    assert stats.bh_qvalues([]) == []


@pytest.mark.parametrize("big", [0, 2 ** 70], ids=["one-word", "wide"])
def test_packed_replicate_sums_equal_direct_sums(big):
    side = stats.SideSamples([[1.5, 2.0, 7.25 + big], [0.0, 3.0, 1.0]], [[1, 2, 3], [4, 0, 2]], 0.0)
    rng = random.Random(11)
    sums = stats._replicate_sums(side, 5, rng)
    rng = random.Random(11)
    for b in range(5):
        drawn = rng.choices(range(3), k=3)
        for r in range(2):
            assert sums[2 * r][b] == sum(round(side.numerators[r][w] * stats.SCALE) for w in drawn)
            assert sums[2 * r + 1][b] == sum(side.denominators[r][w] for w in drawn)


def test_bootstrap_interval_matches_the_normal_theory_of_a_large_sample():
    # 400 waves per side, values N(100, 10): the log ratio of means has sd ≈ sqrt(2) * 0.1 / 20
    rng = random.Random(3)
    before = [[rng.gauss(100, 10) for _ in range(400)]]
    after = [[rng.gauss(100, 10) for _ in range(400)]]
    ones = [[1] * 400]
    (t,) = stats.bootstrap(stats.SideSamples(before, ones, 0.0), stats.SideSamples(after, ones, 0.0),
                           2000, 1, 0.95)
    sd = math.sqrt(2) * 0.1 / 20
    observed = sum(after[0]) / sum(before[0]) - 1
    assert t.change == pytest.approx(observed)
    assert t.ci[1] - t.ci[0] == pytest.approx(math.exp(2 * 1.96 * sd) - 1, rel=0.15)
    assert 0.05 < t.p <= 1  # the same distribution: no change


def test_the_floor_is_the_replicate_spread_of_its_source_captures(corpus):
    """noise.FLOOR_CAPTURES holds what the corpus gives (not a number set by hand), and the floor
    is the sd diff's replicate estimate takes of them (hotspot/diff/api.py `_replicate_sd`)."""
    from hotspot.diff import noise
    from hotspot.diff.api import _replicate_sd

    base = corpus / REPLICATES / "big"
    sides = []
    for name, stall, hits in noise.FLOOR_CAPTURES:
        side = load_side(base / name, None, None, [])
        x = side.analyses[0]
        assert (x.totals.stall, x.totals.hit) == (stall, hits), name
        sides.append(side)
    logs = [math.log(stall / hits) for _name, stall, hits in noise.FLOOR_CAPTURES]
    mean = sum(logs) / len(logs)
    by_hand = math.sqrt(sum((v - mean) ** 2 for v in logs) / (len(logs) - 1))
    assert noise.CAPTURE_NOISE_SD == pytest.approx(by_hand)
    assert noise.FLOOR_DF == len(noise.FLOOR_CAPTURES) - 1 == 2
    # the same estimate diff makes when one side holds these captures as replicate dispatches
    pooled = replace(sides[0], analyses=[s.analyses[0] for s in sides])
    assert _replicate_sd([pooled]) == (pytest.approx(by_hand), 2)


def test_saved_analyses_test_totals_and_name_a_change_of_work(corpus, cli, tmp_path):
    """Saved analyses hold no per-wave values: the floor (measured on totals) is all the test
    has, so only totals are tested (replicate saved analyses: 29 rows read as beyond noise with
    the floor alone). A one-operand edit (s_nop 10 -> 7) on a capture that traced less work per
    wave: the unchanged instructions' executions per wave differ, and a warning says by how much."""
    base = corpus / REPLICATES / "big"
    docs = []
    for name in ("ui_output_agent_25171_dispatch_44", "ui_output_agent_34195_dispatch_44_after_loc_fix"):
        run = cli("analyze", base / name, "--format", "json", "--topk", "0")
        assert run.exit_code == 0, run.stderr
        docs.append(run.json())
    paths = [tmp_path / "before.json", tmp_path / "after.json"]
    paths[0].write_text(json.dumps(docs[0]))
    paths[1].write_text(json.dumps(docs[1]))
    same = cli("diff", *paths, "--format", "json").json()
    rows = same["data"]["rows"]
    assert same["data"]["noise"]["method"] == "floor-only"
    assert all(not r["tested"] for r in rows if r["kind"] != "total")
    assert any(r["tested"] for r in rows if r["kind"] == "total")
    assert not any(r["significant"] for r in rows)
    # the edit: one operand of one s_nop on the after side
    after = docs[1]
    nop = next(i for i in after["data"]["instructions"] if i["isa"].strip() == "s_nop 10")
    nop["isa"] = "s_nop 7"
    paths[1].write_text(json.dumps(after))
    run = cli("diff", *paths, "--format", "json")
    data = run.json()
    assert not data["data"]["code"]["same"] and data["data"]["code"]["changed"] == 1
    # executions per wave of every instruction but the edited one, from the saved files
    per = []
    for doc, skip in ((docs[0], nop["line_number"]), (after, nop["line_number"])):
        d = doc["data"]
        per.append(sum(i["hit"] for i in d["instructions"] if i["line_number"] != skip)
                   / d["dispatch"]["waves"])
    change = 100 * (per[1] / per[0] - 1)
    assert change < -10  # the third capture traced ~13% less work per wave
    warning = next(w for w in data["warnings"] if "unchanged instructions" in w)
    assert f"{per[0]:,.0f} times per wave before and {per[1]:,.0f} after" in warning
    assert f"\u2212{abs(change):.1f}%" in warning
    verdict = data["data"]["summary"]["verdict"]
    assert f"but the unchanged instructions ran \u2212{abs(change):.1f}% as often per wave" in verdict
