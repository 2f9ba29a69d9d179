"""Unit tests of the collection building blocks: iterations, counter passes, jobs/YAML, run dirs, outputs."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from hotspot.collect import att_outputs, discovery, iterations, rundir
from hotspot.collect import counter_passes as counters
from hotspot.collect import rocprof_jobs as jobs
from hotspot.collect.api import parse_env, parse_size
from hotspot.errors import InputError, UsageError

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "collect" / "att_dispatch"


# ---------------------------------------------------------------- iterations (a SET, 1-based)
def test_iteration_spec_is_a_set_not_skip_warmup():
    # FORMATS.md §2: "[1, [3-4]]" traces 1, 3 and 4; "[6, [8-8]]" traces 6 and 8
    assert iterations.parse_spec("[1, [3-4]]") == (1, 3, 4)
    assert iterations.parse_spec("[6, [8-8]]") == (6, 8)
    assert iterations.parse_spec("3,5-7") == (3, 5, 6, 7)
    assert iterations.parse_spec("2 2 3") == (2, 3)


@pytest.mark.parametrize("bad", ["0", "5-3", "a", "", "[]", "3-"])
def test_iteration_spec_rejects_bad_input(bad):
    with pytest.raises(UsageError):
        iterations.parse_spec(bad)


@given(st.sets(st.integers(min_value=1, max_value=200), min_size=1, max_size=30))
def test_range_text_round_trips(its):
    ordered = tuple(sorted(its))
    assert iterations.parse_spec(iterations.to_range_text(ordered)) == ordered


@given(st.integers(min_value=3, max_value=100_000))
def test_default_never_traces_iteration_one_when_kernel_runs_more_than_twice(calls):
    its, _ = iterations.default_iterations(calls)
    assert len(its) == 2 and its[1] == its[0] + 1
    assert 1 not in its and its[-1] <= calls


def test_default_for_short_runs_and_unknown_counts():
    assert iterations.default_iterations(1)[0] == (1,)
    assert iterations.default_iterations(2)[0] == (1, 2)
    assert iterations.default_iterations(3)[0] == (2, 3)
    assert iterations.default_iterations(10)[0] == (5, 6)
    assert iterations.default_iterations(None)[0] == (2, 3)


def test_plan_describes_the_set_in_plain_words():
    plan = iterations.plan_iterations(None, 10)
    assert plan.range_text == "[5, 6]"
    assert "iterations 5 and 6 of 10 calls" in plan.description
    over = iterations.plan_iterations("9-12", 10)
    assert over.iterations == (9, 10, 11, 12) and "trace nothing" in over.description


# ---------------------------------------------------------------- counters
NINE_TCC = ["TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum", "TCC_BUBBLE_sum",
            "TCC_EA0_WRREQ_sum", "TCC_EA0_WRREQ_64B_sum", "TCC_REQ_sum", "TCC_READ_sum"]


def test_nine_tcc_counters_become_three_passes_of_at_most_four():
    plan = counters.split_passes(NINE_TCC)
    assert [len(p) for p in plan.passes] == [4, 4, 1]
    assert list(plan.counters) == NINE_TCC  # order kept, nothing lost or duplicated


@given(st.lists(st.sampled_from(NINE_TCC + ["SQ_WAVES", "SQ_INSTS_VALU", "GRBM_GUI_ACTIVE", "TA_BUSY_avr"]),
                unique=True))
def test_split_respects_limits_and_keeps_every_counter(names):
    plan = counters.split_passes(names)
    assert sorted(plan.counters) == sorted(names)
    for p in plan.passes:
        assert sum(counters.is_tcc(c) for c in p) <= counters.MAX_TCC_PER_PASS
        assert sum(not counters.is_tcc(c) for c in p) <= counters.MAX_OTHER_PER_PASS


def test_counter_args_split_and_validate():
    assert counters.parse_counter_args(["A_sum,B", "C D", "A_sum"]) == ["A_sum", "B", "C", "D"]
    with pytest.raises(UsageError):
        counters.parse_counter_args(["TCC_HIT;rm"])


def test_l2_preset_per_arch():
    assert "TCC_BUBBLE_sum" in counters.preset_counters("l2", "gfx942")
    g950 = counters.preset_counters("l2", "gfx950")
    assert {"TCC_EA0_RDREQ_64B_sum", "TCC_EA0_RDREQ_128B_sum"} <= set(g950) and "TCC_BUBBLE_sum" not in g950
    assert all("EA0" not in c for c in counters.preset_counters("l2", "gfx90a"))
    with pytest.raises(UsageError) as err:
        counters.preset_counters("l2", None)
    assert "--arch" in err.value.hint
    with pytest.raises(UsageError):
        counters.preset_counters("l3", "gfx942")


# ---------------------------------------------------------------- jobs
def test_att_job_yaml_has_only_jobs_and_every_setting_inside_the_job(tmp_path):
    settings = jobs.AttSettings(target_cu=2, se_mask=0x3, simd_select=0xF, buffer_size=0x20000000)
    job = jobs.att_job("^gemm\\(", "[5, 6]", tmp_path / "att", settings, "/opt/dec")
    doc = yaml.safe_load(jobs.input_yaml([job]))
    assert list(doc) == ["jobs"] and len(doc["jobs"]) == 1
    j = doc["jobs"][0]
    assert j == {"kernel_include_regex": "^gemm\\(", "kernel_iteration_range": "[5, 6]",
                 "output_directory": str(tmp_path / "att"), "output_file": "out", "output_format": ["csv"],
                 "kernel_trace": True, "advanced_thread_trace": True, "att_target_cu": 2,
                 "att_shader_engine_mask": "0x3", "att_simd_select": "0xf", "att_buffer_size": "0x20000000",
                 "att_library_path": "/opt/dec"}


def test_flags_match_the_job_and_att_takes_no_value(tmp_path):
    job = jobs.att_job("k", "[2, 3]", tmp_path, jobs.AttSettings(), None)
    argv = jobs.flags(job)
    i = argv.index("--att")
    assert argv[i + 1].startswith("-")  # boolean switch: never `--att VALUE`
    assert argv[argv.index("--kernel-iteration-range") + 1] == "[2, 3]"
    assert argv[argv.index("-f") + 1] == "csv"
    assert "--att-library-path" not in argv


# ---------------------------------------------------------------- run dirs
def test_kernel_slug():
    assert rundir.kernel_slug("void ns::gemm_kernel<128, 64>(float*)") == "gemm-kernel"
    assert rundir.kernel_slug("reduce_kernel(float*, int)") == "reduce-kernel"
    assert len(rundir.kernel_slug("k" * 500)) == rundir.SLUG_MAX
    assert rundir.regex_slug("^void gemm_kernel\\<") == "gemm-kernel"


def test_run_dirs_are_never_reused(tmp_path):
    a = rundir.create(tmp_path / "runs" / "x", explicit=False)
    b = rundir.create(tmp_path / "runs" / "x", explicit=False)
    assert a != b and a.is_dir() and b.is_dir()
    (a / "keep").write_text("1")
    with pytest.raises(InputError, match="never reused"):
        rundir.create(a, explicit=True)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert rundir.create(empty, explicit=True) == empty


# ---------------------------------------------------------------- outputs after ATT
def _copy_dispatch(root: Path, name: str) -> Path:
    dst = root / name
    shutil.copytree(FIXTURE, dst)
    return dst


def test_fixture_dispatch_is_internally_consistent():
    code = json.loads((FIXTURE / "code.json").read_text())
    assert code["version"] == "3.0.0"
    recs = []
    for f in FIXTURE.glob("se*_sm*_sl*_wv*.json"):
        wave = json.loads(f.read_text())["wave"]
        recs += wave["instructions"]
        assert sum(d for _, d in wave["timeline"]) == wave["end"] - wave["begin"]
    for row in code["code"][1:]:
        mine = [r for r in recs if r[4] == row[2]]
        assert (row[6], row[7], row[8]) == (len(mine), sum(r[3] for r in mine), sum(r[2] for r in mine))


def test_dispatch_ranking_and_empty_marking(tmp_path):
    full = _copy_dispatch(tmp_path, "ui_output_agent_300_dispatch_7")
    one_wave = _copy_dispatch(tmp_path, "ui_output_agent_300_dispatch_3")
    (one_wave / "se0_sm1_sl0_wv0.json").unlink()
    empty = _copy_dispatch(tmp_path, "ui_output_agent_300_dispatch_9")
    for f in empty.glob("se*_wv*.json"):
        f.unlink()
    code = json.loads((empty / "code.json").read_text())
    code["code"] = None
    (empty / "code.json").write_text(json.dumps(code))
    found = att_outputs.find_dispatches(tmp_path)
    assert [d.path for d in found] == [full, one_wave, empty]
    assert [d.waves for d in found] == [2, 1, 0]
    assert [d.empty for d in found] == [False, False, True]
    assert found[0].executed_instructions == 8 and found[0].instructions_hit == 16


def test_truncation_from_att_size_and_from_decoder_words(tmp_path):
    buf = 0x10000
    (tmp_path / "out_300_shader_engine_0_7.att").write_bytes(b"\0" * (buf - buf // 50))  # within 5%
    (tmp_path / "out_300_shader_engine_0_8.att").write_bytes(b"\0" * (buf // 2))
    cuts = att_outputs.find_truncation(tmp_path, buf, "")
    assert [c.dispatch_id for c in cuts] == [7]
    assert "--buffer-size 0x20000" in cuts[0].message
    said = att_outputs.find_truncation(tmp_path / "nothing", buf, "decoder: ATT Data Lost on SE1")
    assert len(said) == 1 and "0x20000" in said[0].message


# ---------------------------------------------------------------- discovery choice, small parsers
def _row(name, total, calls=10):
    return discovery.KernelRow(name, calls, total, total / calls, 0.0, "^" + re.escape(name))


def test_choice_skips_plumbing_and_says_why():
    rows = [_row("__amd_rocclr_fillBufferAligned", 900), _row("void at::native::vectorized_elementwise_kernel"
            "<4, at::native::FillFunctor<float>, std::array<char*, 1ul> >(int)", 800), _row("my_gemm(float*)", 700)]
    choice = discovery.choose_kernel(rows)
    assert choice.kernel.name == "my_gemm(float*)"
    assert len(choice.skipped) == 2 and "ranked #3" in choice.reason
    assert discovery.choose_kernel(rows, ("my_gemm",)) is None


def test_parse_size_and_env():
    assert parse_size("0x10000000", "--buffer-size") == parse_size("256M", "--buffer-size") == 1 << 28
    with pytest.raises(UsageError):
        parse_size("lots", "--buffer-size")
    assert parse_env(["A=1", "B_2=x=y"]) == (("A", "1"), ("B_2", "x=y"))
    with pytest.raises(UsageError):
        parse_env(["=1"])


def test_run_json_gains_each_part_when_set_in_the_order_set(tmp_path):
    """run.json (RunDoc) leaves out the parts the run has not reached and writes the others in
    the order the run set them, as the dict it replaced did; PmcOut's analysis_error likewise."""
    import orjson

    from hotspot.collect.run_result import ErrorOut, PmcErrorOut, PmcOut, RocprofOut

    opts = rundir.RunOptions(None, [], None, 1, "0x1", "0xf", 1, True, False, None, [], None, None, True)
    doc = rundir.RunDoc(1, "running", str(tmp_path), ["app"], str(tmp_path), {}, RocprofOut("r", None), None,
                        "t0", opts, [], [], None)
    rec = rundir.RunRecord(tmp_path, doc)
    rec.save()
    first = list(orjson.loads((tmp_path / "run.json").read_bytes()))
    assert first[-3:] == ["phases", "warnings", "kernel"] and "error" not in first
    doc.input_yaml = "jobs: []\n"
    doc.pmc_plan = [["A"]]  # set after input_yaml: written after it
    rec.finish("failed", ErrorOut("x", 1, "m", ""))
    saved = orjson.loads((tmp_path / "run.json").read_bytes())
    assert list(saved)[len(first):] == ["input_yaml", "pmc_plan", "finished_at", "elapsed_ns", "error"]
    assert saved["status"] == "failed" and saved["error"] == {"code": "x", "exit_code": 1, "message": "m", "hint": ""}
    pmc = PmcOut(["A"], [["A"]], [], None)
    assert "analysis_error" not in orjson.loads(orjson.dumps(pmc))
    pmc.analysis_error = PmcErrorOut("c", "m", "h")
    assert list(orjson.loads(orjson.dumps(pmc.passes_only()))) == ["counters", "passes", "csv_files", "analysis_error"]
