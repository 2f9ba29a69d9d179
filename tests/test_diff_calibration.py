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
                ("small", "ui_output_agent_23205_dispatch_44_after_loc_fix")))]


def _significant(result) -> tuple[bool, list[str]]:
    total = next(r for r in result.rows if r.key == "total:stall")
    return total.significant, [r.key for r in result.rows if r.significant]


@pytest.mark.parametrize("size,a,b", PAIRS, ids=[f"{s}-{a[16:21]}-{b[16:21]}" for s, a, b in PAIRS])
def test_replicate_captures_show_no_change(corpus, size, a, b):
    base = corpus / REPLICATES / size
    warnings: list[str] = []
    result = compare(load_side(base / a, None, None, warnings), load_side(base / b, None, None, warnings),
                     warnings)
    assert result.code.same and result.code.instructions_before == 2069
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
