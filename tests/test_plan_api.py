"""`hotspot plan` / `analyze --plan` on the real corpus, the CLI surface, and --topk trimming."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
from hotspot.plan.api import kernel_identity, match_kernel
from hotspot.plan.entry_point import analyze
from hotspot.plan.engine import AMDAHL_MIN_STALL_SHARE
from tests.conftest import corpus_path
from tests.plan_data import pmc_report

# The same corpus captures are analyzed by several tests and commands here: their wave pass is
# made once per test process (tests/conftest.py shared_analyses).
pytestmark = pytest.mark.usefixtures("shared_analyses")

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "pmc"
DIRS = ["gfx950/preshuffle_gemm_v2", "gfx950/blockscale_preshuffle_gemm", "gfx950/vec_add",
        "gfx950/pa_mqa_logits_fp4_small", "gfx950/mla_decode", "gfx942/ck_bmm"]


@pytest.mark.parametrize("rel", DIRS)
def test_corpus_items_have_evidence_location_and_pass_the_guard(corpus: Path, rel: str, cli) -> None:
    run = cli("plan", corpus_path("att", *rel.split("/")), "--format", "json")
    assert run.exit_code == 0, run.stderr
    data = run.json()["data"]
    total = data["summary"]["total_stall"]
    for it in data["plan"]:
        assert it["evidence"] and all("metric" in e and "value" in e for e in it["evidence"])
        loc = it["location"]
        assert loc["kernel"] and (loc["line_number"] is not None or loc["line"] is None)
        if it["kind"] == "code" and not it["id"].startswith("occupancy"):
            assert loc["line_number"] is not None and loc["isa"], it
        assert it["estimate"]["target_cycles"] >= AMDAHL_MIN_STALL_SHARE * total, it
        if it["kind"] == "capture":
            # trust, not a speed-up: no estimate (never "HIGH 0-0%")
            assert it["estimate"]["high_pct"] is None and it["estimate"]["withheld"], it
            continue
        if data["trust"]["level"] == "unrepresentative" and it["kind"] not in ("launch",):
            # no estimate from a capture that does not represent the kernel, and the reason why
            assert it["estimate"]["low_pct"] is None and it["estimate"]["high_pct"] is None
            assert it["estimate"]["withheld"] and it["priority"] == "LOW"
            continue
        assert 0 <= it["estimate"]["low_pct"] <= it["estimate"]["high_pct"] <= 100
        if it["priority"] == "HIGH":  # HIGH needs a nonzero bound of at least 10%
            assert it["estimate"]["high_pct"] >= 10, it
    kinds = [i["kind"] for i in data["plan"]]
    assert kinds == sorted(kinds, key=lambda k: k != "capture")  # capture items (trust) first
    if data["trust"]["level"] == "unrepresentative":
        return
    # every other item by its bounded estimate (middle of the range, then high end), launch items included
    highs = [(-(i["estimate"]["low_pct"] + i["estimate"]["high_pct"]) / 2, -i["estimate"]["high_pct"], i["id"])
             for i in data["plan"] if i["kind"] != "capture"]
    assert highs == sorted(highs)


def test_corpus_known_patterns(corpus: Path, cli) -> None:
    mla = cli("plan", corpus_path("att", "gfx950", "mla_decode"), "--format", "json").json()["data"]
    assert "idle-slice" in [i["id"] for i in mla["plan"]]
    gemm = cli("plan", corpus_path("att", "gfx950", "preshuffle_gemm_v2"), "--format", "json").json()["data"]
    ids = [i["id"] for i in gemm["plan"]]
    assert "source-collapse" in ids and "barrier-dominated" in ids
    barrier = next(i for i in gemm["plan"] if i["id"] == "barrier-dominated")
    cats = {c["category"]: c["stall"] for c in gemm["stall_by_category"]}
    assert barrier["estimate"]["target_cycles"] == cats["barrier"]
    # ck_bmm's MFMAs accumulate into the same registers: pipe-bound, no dependency chain claimed
    bmm = cli("plan", corpus_path("att", "gfx942", "ck_bmm"), "--format", "json").json()["data"]
    assert "mfma-dependency-chain" not in [i["id"] for i in bmm["plan"]]


def test_analyze_plan_keeps_topk_output_identical(corpus: Path) -> None:
    d = corpus_path("att", "gfx950", "preshuffle_gemm_v2")
    opts = AnalyzeOptions(topk=4)
    plain = analyze(d, opts).plain_data()
    planned = analyze(d, replace(opts, plan=PLAN_ATTACHED)).plain_data()
    for key in ("plan", "plan_skipped", "plan_summary", "plan_pmc", "plan_trust", "verdict",
                    "plan_coverage"):
        planned.pop(key, None)
    plain.pop("plan", None)
    planned["options"].pop("plan")
    assert planned == plain


def test_the_plan_is_beside_the_analysis(corpus: Path) -> None:
    """`analyze --plan` is the analysis and its plan side by side: the analysis holds no plan, the
    JSON writes the items in the analysis's `plan` slot, and a saved planned document decodes back
    to that analysis (the plan's keys are not the analysis's)."""
    from hotspot.att.model import DispatchAnalysis
    from hotspot.decode import from_plain
    from hotspot.plan.api import PlannedDispatch

    d = corpus_path("att", "gfx950", "vec_add")
    result = analyze(d, AnalyzeOptions(topk=3, plan=PLAN_ATTACHED))
    planned = result.data
    assert isinstance(planned, PlannedDispatch) and planned.analysis.plan is None
    doc = result.plain_data()
    keys = list(doc)
    assert keys[-6:] == ["plan_skipped", "plan_summary", "plan_trust", "verdict", "plan_pmc",
                         "plan_coverage"]
    assert keys.index("plan") == keys.index("representativeness") + 1
    assert [i["id"] for i in doc["plan"]] == [i.id for i in planned.plan.items] != []
    back = from_plain(DispatchAnalysis, doc)
    assert back.instructions == planned.analysis.instructions and back.plan == planned.plan.items


def test_analyze_plan_text_and_json(corpus: Path, cli) -> None:
    d = corpus_path("att", "gfx950", "vec_add")
    text = cli("analyze", d, "--plan", "--topk", "3")
    assert text.exit_code == 0 and "Optimization plan" in text.stdout
    # the big tables and the priority table come with --detail
    assert "Top instructions" not in text.stdout and "Priority order" not in text.stdout
    full = cli("analyze", d, "--plan", "--topk", "3", "--detail")
    assert "Top instructions" in full.stdout and "Priority order" in full.stdout and "evidence:" in full.stdout
    js = cli("analyze", d, "--plan", "--format", "json").json()["data"]
    assert isinstance(js["plan"], list) and isinstance(js["plan_skipped"], list)
    # the loads cannot move and the kernel is near the roof: the roofline is item #1 (truth vec-add)
    assert [i for i in js["plan"] if i["kind"] != "capture"][0]["id"] == "bandwidth-bound"
    plain = cli("analyze", d, "--format", "json", "--topk", "3").json()["data"]
    assert plain["plan"] is None and "plan_skipped" not in plain


def test_plan_with_pmc_files(corpus: Path, cli) -> None:
    d = corpus_path("att", "gfx950", "vec_add")
    run = cli("plan", d, "--pmc", FIXTURES / "l2.csv", "--pmc", FIXTURES / "ea.csv", "--format", "json")
    assert run.exit_code == 0, run.stderr
    pmc = run.json()["data"]["pmc"]
    assert pmc["kernel"] is None and len(pmc["kernels_in_files"]) == 2  # gemm/copy: no vecAdd
    assert any("memory verdicts left out" in w for w in run.json()["warnings"])


def test_plan_errors_are_one_line(cli, tmp_path: Path) -> None:
    run = cli("plan", tmp_path, "--format", "json")
    assert run.exit_code == 3 and run.json()["ok"] is False
    assert run.stderr.count("\n") == 1


def test_match_kernel() -> None:
    ks = [pmc_report({"kernel": "void gemm<float>(float*, int)"}), pmc_report({"kernel": "copy_kernel(float const*)"})]
    assert match_kernel(ks, ["copy_kernel"])[0] is ks[1]
    assert match_kernel(ks, ["gemm<float>(float*, int)"])[0] is ks[0]  # the return type identifies nothing
    assert match_kernel(ks, ["nothing"])[0] is None
    # the only kernel in the files is not taken for another one (issue 33: counters of another kernel)
    assert match_kernel(ks[:1], ["other"])[0] is None


def test_match_kernel_never_by_a_leading_word() -> None:
    ks = [pmc_report({"kernel": "void gemm<float>(float*, int)"}),
          pmc_report({"kernel": "void gemm<__half>(__half*, int)"})]
    assert match_kernel(ks, ["void other_kernel<int>(int*)"])[0] is None  # both start with `void`
    assert match_kernel(ks, ["void gemm<__half>(__half*, int)"])[0] is ks[1]
    assert match_kernel(ks, ["gemm<__half>"])[0] is ks[1]
    assert match_kernel(ks, ["gemm"])[0] is None  # a base name matches neither instantiation
    assert kernel_identity("void (anonymous namespace)::k<1>(int)") == "(anonymous namespace)::k<1>"


# Every real capture the plan is run on (dispatch dirs and folders holding several).
TEXT_DIRS = [("att", "gfx950", "vec_add"), ("att", "gfx950", "preshuffle_gemm_v2"),
             ("att", "gfx950", "blockscale_preshuffle_gemm"), ("att", "gfx950", "pa_mqa_logits_fp4_small"),
             ("att", "gfx950", "mla_decode"), ("att", "gfx942", "ck_bmm", "ui_output_agent_5600_dispatch_1"),
             ("att", "gfx942", "ck_bmm", "ui_output_agent_5600_dispatch_2"),
             ("att", "gfx950", "flash_attn_replicates", "big", "ui_output_agent_25171_dispatch_44"),
             ("att", "gfx950", "flash_attn_replicates", "big", "ui_output_agent_27340_dispatch_44_after_loc_fix"),
             ("att", "gfx950", "flash_attn_replicates", "big", "ui_output_agent_34195_dispatch_44_after_loc_fix"),
             ("att", "gfx950", "flash_attn_replicates", "small", "ui_output_agent_14326_dispatch_44_after_loc_fix"),
             ("att", "gfx950", "flash_attn_replicates", "small", "ui_output_agent_23205_dispatch_44_after_loc_fix"),
             ("layouts", "kernel-lab", "blockscale_preshuffle_gemm", "att_viewer", "big",
              "ui_output_agent_14065_dispatch_120")]
DEFAULT_TEXT_MAX_LINES = 80


@pytest.mark.parametrize("parts", TEXT_DIRS, ids=lambda p: "/".join(p[-2:]))
def test_default_text_fits_80_lines(corpus: Path, cli, monkeypatch, parts: tuple[str, ...]) -> None:
    """`plan` and `analyze --plan` without options: the verdict, the trust block and the top items
    in at most 80 lines (at the default width of 100 columns); each item location keeps its file
    name and line; the trust reasons are printed once; no capture item is ranked; no HIGH 0-0%."""
    monkeypatch.setenv("COLUMNS", "100")
    d = corpus_path(*parts)
    meta = d.parent / (d.name + ".meta")
    extra = ("--meta", meta) if meta.is_dir() else ()
    for cmd in (("plan", d, *extra), ("analyze", d, "--plan", *extra)):
        res = cli(*cmd)
        assert res.exit_code == 0, res.stderr
        lines = res.stdout.rstrip("\n").splitlines()
        assert len(lines) <= DEFAULT_TEXT_MAX_LINES, f"{len(lines)} lines:\n{res.stdout}"
        assert "#None" not in res.stdout
        assert not re.search(r"\[HIGH\]\s+0(\.0)?–0(\.0)?%", res.stdout) and "(3 waits) (3" not in res.stdout
        data = cli(*cmd, "--format", "json").json()["data"]
        trust = data.get("trust") or data.get("plan_trust")
        for reason in trust["reasons"]:
            assert res.stdout.count(reason[:40]) == 1, reason  # the trust paragraph is printed once
        for it in data["plan"]:
            loc = it["location"]
            if loc["file"] and it["kind"] != "capture":
                name = f"{loc['file'].rsplit('/', 1)[-1]}:{loc['line']}"
                assert name in res.stdout or it["id"] not in res.stdout, (name, it["id"])
            if it["priority"] == "HIGH" and it["kind"] != "capture":
                assert it["estimate"]["high_pct"] >= 10


def test_detail_lists_every_site_by_its_row(corpus: Path, cli) -> None:
    """Sites without a wait (narrow loads, s_nop chains) are named by their row, never `#None`."""
    d = corpus_path("att", "gfx950", "blockscale_preshuffle_gemm")
    res = cli("plan", d, "--meta", d.parent / (d.name + ".meta"), "--detail")
    assert res.exit_code == 0 and "Priority order" in res.stdout and "evidence:" in res.stdout
    assert "#None" not in res.stdout
    data = cli("plan", d, "--meta", d.parent / (d.name + ".meta"), "--format", "json").json()["data"]
    chain = next(i for i in data["plan"] if i["id"] == "valu-dependency-chain")
    row = chain["sites"][0]["producer_rows"][-1]
    assert f"#{row} " in res.stdout
