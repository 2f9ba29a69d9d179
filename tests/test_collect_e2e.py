"""`hotspot collect` end to end against the fake rocprofv3 (tests/fake_rocprofv3)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import types
from pathlib import Path

import orjson
import pytest
import yaml

from tests.fake_rocprofv3.helpers import FAKE, app, fake  # noqa: F401  (fixture)

GEMM = "void gemm_kernel<128, 64>(float const*, float const*, float*, int)"
WORKLOAD = Path(__file__).resolve().parent / "fixtures" / "collect" / "workload.json"
NINE_TCC = ["TCC_HIT_sum", "TCC_MISS_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum", "TCC_BUBBLE_sum",
            "TCC_EA0_WRREQ_sum", "TCC_EA0_WRREQ_64B_sum", "TCC_REQ_sum", "TCC_READ_sum"]


def run_json(run_dir: Path) -> dict:
    return json.loads((run_dir / "run.json").read_text())


def gemm_calls() -> int:
    return next(k["calls"] for k in json.loads(WORKLOAD.read_text())["kernels"] if k["name"] == GEMM)


def test_discovery_choice_yaml_att_and_summary(cli, fake):
    res = cli("collect", "--format", "json", "--", *app("print('hello from app')"))
    assert res.exit_code == 0, res.stderr
    doc = res.json()  # stdout holds exactly one JSON document
    data = doc["data"]
    run_dir = Path(data["run_dir"])
    # discovery ranked rocclr copy first; the choice skips it as plumbing and says so
    assert data["kernels"][0]["name"] == "__amd_rocclr_copyBuffer"
    assert data["kernel"]["name"] == GEMM and data["kernel"]["source"] == "discovery"
    assert "plumbing" in data["kernel"]["reason"]
    assert run_dir.parent == fake.root / "hotspot-runs" and run_dir.name.endswith("-gemm-kernel")
    # the generated YAML: keys and values, only `jobs` at the top level
    calls = gemm_calls()
    doc_yaml = yaml.safe_load((run_dir / "input.yaml").read_text())
    assert list(doc_yaml) == ["jobs"]
    job = doc_yaml["jobs"][0]
    regex = data["kernel"]["regex"]
    import re

    assert re.search(regex, GEMM) and not re.search(regex, "reduce_kernel(float*, int)")
    assert job == {"kernel_include_regex": regex, "kernel_iteration_range": f"[{calls // 2}, {calls // 2 + 1}]",
                   "output_directory": str(run_dir / "att"), "output_file": "out", "output_format": ["csv"],
                   "kernel_trace": True, "advanced_thread_trace": True, "att_target_cu": 1,
                   "att_shader_engine_mask": "0x1", "att_simd_select": "0xf", "att_buffer_size": "0x10000000",
                   "att_library_path": str(fake.decoder_dir.resolve())}
    assert data["iterations"]["set"] == [calls // 2, calls // 2 + 1]
    assert 1 not in data["iterations"]["set"]
    # what the fake was asked: discovery flags, then -i input.yaml; the app ran (its stdout captured)
    calls_made = fake.calls()
    assert calls_made[0]["argv"][:5] == ["--stats", "--kernel-trace", "-f", "csv", "-d"]
    assert calls_made[1]["argv"][:2] == ["-i", str(run_dir / "input.yaml")]
    assert "hello from app" in (run_dir / "att.stdout.log").read_text()
    # ATT outputs: one dispatch dir per traced iteration, best chosen, run.json complete
    assert len(data["dispatches"]) == 2 and all(not d["empty"] for d in data["dispatches"])
    assert data["chosen_dispatch"]["path"] == data["dispatches"][0]["path"]
    assert data["chosen_dispatch"]["waves"] == 2
    rec = run_json(run_dir)
    assert rec["status"] == "complete" and rec["kernel"]["name"] == GEMM
    assert [p["name"] for p in rec["phases"]] == ["discover", "att"]
    assert all(p["exit_code"] == 0 and p["elapsed_ns"] > 0 for p in rec["phases"])
    assert rec["command"] == app("print('hello from app')") and rec["cwd"] == str(fake.root)
    assert "input_yaml" in rec and rec["rocprofv3"]["version"] == "1.0.0"
    assert not res.stderr.lstrip().startswith("{")


def test_analysis_runs_on_the_best_dispatch(cli, fake):
    res = cli("collect", "--format", "json", "--", *app())
    assert res.exit_code == 0, res.stderr
    data = res.json()["data"]
    chosen = Path(data["chosen_dispatch"]["path"])
    analysis = data["analysis"]
    assert analysis["dispatch"]["path"] == str(chosen)
    # the embedded analysis is the real one: its totals are the chosen code.json's column sums
    code = json.loads((chosen / "code.json").read_text())
    rows = [r for r in code["code"] if not r[0].startswith(";")]
    assert analysis["totals"]["stall"] == sum(r[8] for r in rows)
    assert analysis["totals"]["latency"] == sum(r[7] for r in rows)
    saved = json.loads((Path(data["run_dir"]) / "analysis.json").read_text())
    assert saved["command"] == "analyze" and saved["data"]["totals"] == analysis["totals"]


def test_no_analyze_skips_analysis(cli, fake, monkeypatch):
    module = types.ModuleType("hotspot.plan.entry_point")
    module.analyze = lambda path, opts=None: pytest.fail("analysis must not run with --no-analyze")
    monkeypatch.setitem(sys.modules, "hotspot.plan.entry_point", module)
    res = cli("collect", "--no-analyze", "--format", "json", "--", *app())
    assert res.exit_code == 0, res.stderr
    assert res.json()["data"]["analysis"] is None


def test_explicit_kernel_skips_discovery(cli, fake):
    res = cli("collect", "--kernel", "reduce_kernel", "--iterations", "3-4", "--format", "json", "--", *app())
    assert res.exit_code == 0, res.stderr
    data = res.json()["data"]
    assert [p["name"] for p in data["phases"]] == ["att"]
    assert len(fake.calls()) == 1
    job = fake.calls()[0]["jobs"][0]
    assert job["kernel_include_regex"] == "reduce_kernel" and job["kernel_iteration_range"] == "[3, 4]"
    names = sorted(Path(d["path"]).name for d in data["dispatches"])
    assert len(names) == 2
    code = json.loads((Path(data["dispatches"][0]["path"]) / "code.json").read_text())
    assert code["code"][0][0] == "; reduce_kernel(float*, int)"
    assert Path(data["run_dir"]).name.endswith("-reduce-kernel")


def test_flags_mode_passes_cli_options_instead_of_yaml(cli, fake):
    res = cli("collect", "--kernel", "reduce", "--flags", "--target-cu", "2", "--format", "json", "--", *app())
    assert res.exit_code == 0, res.stderr
    argv = fake.calls()[0]["argv"]
    assert "-i" not in argv and "--att" in argv
    assert argv[argv.index("--att-target-cu") + 1] == "2"
    assert not (Path(res.json()["data"]["run_dir"]) / "input.yaml").exists()


def test_env_additions_reach_the_application(cli, fake):
    res = cli("collect", "--kernel", "reduce", "--env", "HOTSPOT_TEST_FLAG=debug-lines", "--format", "json",
              "--", *app("import os", "print('FLAG=' + os.environ['HOTSPOT_TEST_FLAG'])"))
    assert res.exit_code == 0, res.stderr
    run_dir = Path(res.json()["data"]["run_dir"])
    assert "FLAG=debug-lines" in (run_dir / "att.stdout.log").read_text()
    assert run_json(run_dir)["env_added"] == {"HOTSPOT_TEST_FLAG": "debug-lines"}


def test_dry_run_prints_yaml_and_commands_and_runs_nothing(cli, fake):
    res = cli("collect", "--dry-run", "--pmc", ",".join(NINE_TCC[:5]), "--", *app("print(1)"))
    assert res.exit_code == 0, res.stderr
    out = res.stdout
    assert "advanced_thread_trace: true" in out and "kernel_include_regex" in out
    assert "--stats --kernel-trace -f csv" in out and " -i " in out
    assert "pass 2: TCC_BUBBLE_sum" in out
    assert fake.calls() == [] and fake.runs() == []


def test_dry_run_json_with_explicit_kernel_is_exact(cli, fake):
    res = cli("collect", "--dry-run", "--kernel", "gemm", "--format", "json", "--", *app())
    data = res.json()["data"]
    assert data["dry_run"] and [p["name"] for p in data["phases"]] == ["att"]
    job = yaml.safe_load(data["phases"][0]["yaml"])["jobs"][0]
    assert job["kernel_include_regex"] == "gemm" and job["kernel_iteration_range"] == "[2, 3]"
    assert data["phases"][0]["argv"][-3:] == app()
    assert fake.runs() == []


def test_dry_run_text_prints_the_yaml_as_it_will_be_written(cli, fake):
    data = cli("collect", "--dry-run", "--kernel", "gemm", "--format", "json", "--", *app()).json()["data"]
    text = cli("collect", "--dry-run", "--kernel", "gemm", "--", *app()).stdout
    written = data["phases"][0]["yaml"]
    assert written.count("\n") >= 10  # one YAML key a line
    assert "\\x0a" not in text  # not one escaped line
    # the file's lines, in order and whole, each indented under its path
    assert "\n".join("    " + ln for ln in written.rstrip("\n").split("\n")) in text


def test_pmc_nine_tcc_counters_become_three_jobs(cli, fake):
    res = cli("collect", "--kernel", "gemm", "--no-att", "--format", "json", *[a for c in NINE_TCC for a in ("--pmc", c)],
              "--", *app())
    assert res.exit_code == 0, res.stderr
    data = res.json()["data"]
    run_dir = Path(data["run_dir"])
    jobs_yaml = yaml.safe_load((run_dir / "pmc_input.yaml").read_text())["jobs"]
    assert [len(j["pmc"]) for j in jobs_yaml] == [4, 4, 1]
    assert [c for j in jobs_yaml for c in j["pmc"]] == NINE_TCC
    assert all(j["kernel_include_regex"] == "gemm" and "advanced_thread_trace" not in j for j in jobs_yaml)
    # rocprofv3 re-ran the app once per job into pass_<i>/
    assert sorted(p.name for p in (run_dir / "pmc").iterdir()) == ["pass_1", "pass_2", "pass_3"]
    assert len(data["pmc"]["csv_files"]) == 3
    assert data["pmc"]["passes"] == [NINE_TCC[:4], NINE_TCC[4:8], NINE_TCC[8:]]
    assert "counter plan: 9 counters in 3 passes" in res.stderr
    assert res.stderr.index("counter plan") < res.stderr.index("[pmc] running")


def test_pmc_preset_l2_uses_the_discovered_arch(cli, fake, monkeypatch):
    monkeypatch.setenv("FAKE_ROCPROF_ARCH", "gfx950")
    res = cli("collect", "--no-att", "--pmc-preset", "l2", "--format", "json", "--", *app())
    assert res.exit_code == 0, res.stderr
    got = res.json()["data"]["pmc"]["counters"]
    from hotspot.collect.counter_passes import l2_presets

    assert got == list(l2_presets()["gfx950"])


def test_decoder_missing_is_exit_5_naming_att_library_path(cli, fake, monkeypatch):
    monkeypatch.setenv("FAKE_ROCPROF_MODE", "decoder-missing")
    res = cli("collect", "--kernel", "gemm", "--format", "json", "--", *app())
    assert res.exit_code == 5
    err = res.json()["error"]
    assert "rocprof-trace-decoder library path not found" in err["message"]
    assert "--att-library-path" in err["hint"]
    assert run_json(Path(err["details"]["run_dir"]))["status"] == "failed"


def test_decoder_not_found_anywhere_fails_before_running(cli, fake, monkeypatch):
    monkeypatch.delenv("ROCPROF_ATT_LIBRARY_PATH")
    res = cli("collect", "--kernel", "gemm", "--", *app())
    assert res.exit_code == 5
    assert "--att-library-path" in res.stderr and "Traceback" not in res.stderr
    assert fake.calls() == [] and fake.runs() == []


def test_rocprofv3_missing_is_exit_5(cli, fake, monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    res = cli("collect", "--kernel", "gemm", "--format", "json", "--", *app())
    assert res.exit_code == 5 and res.json()["error"]["code"] == "tool-missing"
    assert "--rocprofv3" in res.json()["error"]["hint"]


def test_explicit_rocprofv3_path(cli, fake, monkeypatch):
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    res = cli("collect", "--rocprofv3", str(FAKE), "--kernel", "gemm", "--format", "json", "--", *app())
    assert res.exit_code == 0, res.stderr


def test_empty_trace_is_exit_4_and_dirs_are_kept_marked_empty(cli, fake, monkeypatch):
    monkeypatch.setenv("FAKE_ROCPROF_MODE", "empty-trace")
    res = cli("collect", "--kernel", "gemm", "--format", "json", "--", *app())
    assert res.exit_code == 4
    err = res.json()["error"]
    assert "--target-cu" in err["hint"] and "--se-mask" in err["hint"]
    rec = run_json(Path(err["details"]["run_dir"]))
    assert rec["status"] == "failed" and rec["error"]["code"] == "empty-trace"
    assert len(rec["dispatches"]) == 2 and all(d["empty"] for d in rec["dispatches"])
    assert all(Path(d["path"]).is_dir() for d in rec["dispatches"])


def test_failing_app_is_exit_6_with_stderr_tail_and_outputs_kept(cli, fake):
    res = cli("collect", "--format", "json", "--",
              *app("import sys", "sys.stderr.write('boom: out of memory\\n')", "sys.exit(1)"))
    assert res.exit_code == 6
    err = res.json()["error"]
    assert "boom: out of memory" in err["message"] and "boom: out of memory" in err["details"]["stderr_tail"]
    run_dir = Path(err["details"]["run_dir"])
    assert (run_dir / "discover" / "discover_kernel_stats.csv").is_file()  # outputs kept
    assert "boom" in (run_dir / "discover.stderr.log").read_text()
    rec = run_json(run_dir)
    assert rec["status"] == "failed" and rec["phases"][0]["exit_code"] == 1


def test_truncation_warns_with_the_next_buffer_size(cli, fake, monkeypatch):
    monkeypatch.setenv("FAKE_ROCPROF_MODE", "truncate,data-lost")
    res = cli("collect", "--kernel", "gemm", "--buffer-size", "0x10000", "--format", "json", "--", *app())
    assert res.exit_code == 0, res.stderr
    doc = res.json()
    assert all(d["truncated"] for d in doc["data"]["dispatches"])
    cut = [w for w in doc["warnings"] if "within 5%" in w]
    assert len(cut) == 2 and all("--buffer-size 0x20000" in w for w in cut)
    assert any("data lost" in w for w in doc["warnings"])


def test_second_run_never_touches_the_first(cli, fake):
    first = cli("collect", "--kernel", "gemm", "--format", "json", "--", *app())
    run1 = Path(first.json()["data"]["run_dir"])
    before = {p: p.stat().st_mtime_ns for p in run1.rglob("*")}
    snapshot = (run1 / "run.json").read_bytes()
    second = cli("collect", "--kernel", "gemm", "--format", "json", "--", *app())
    run2 = Path(second.json()["data"]["run_dir"])
    assert second.exit_code == 0 and run2 != run1
    again = cli("collect", "--kernel", "gemm", "--output", str(run1), "--", *app())
    assert again.exit_code == 3 and "never reused" in again.stderr
    assert {p: p.stat().st_mtime_ns for p in run1.rglob("*")} == before
    assert (run1 / "run.json").read_bytes() == snapshot


def test_timeout_stops_the_phase(cli, fake):
    res = cli("collect", "--kernel", "gemm", "--timeout", "0.5", "--format", "json", "--",
              *app("import time", "time.sleep(20)"))
    assert res.exit_code == 6 and res.json()["error"]["code"] == "timeout"
    assert run_json(Path(res.json()["error"]["details"]["run_dir"]))["phases"][0]["status"] == "timeout"


def test_usage_errors(cli, fake):
    assert cli("collect", "--kernel", "gemm").exit_code == 2  # no command
    assert cli("collect", "--kernel", "(", "--", *app()).exit_code == 2
    assert cli("collect", "--iterations", "0", "--", *app()).exit_code == 2
    assert cli("collect", "--env", "NOEQUALS", "--", *app()).exit_code == 2
    assert fake.calls() == []


def test_ctrl_c_forwards_to_the_child_and_marks_run_interrupted(fake, tmp_path):
    out = tmp_path / "run"
    env = dict(os.environ)
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "hotspot", "collect", "--kernel", "gemm", "--output", str(out),
                             "--format", "json", "--", *app("import time", "print('sleeping', flush=True)",
                                                              "time.sleep(30)")],
                            cwd=fake.root, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    log = out / "att.stdout.log"
    while time.monotonic() - started < 15 and not (log.exists() and "sleeping" in log.read_text()):
        time.sleep(0.05)
    assert "sleeping" in log.read_text(), "the application never started under the fake"
    signalled = time.monotonic()
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=10)
    assert proc.returncode == 130, stderr.decode()
    assert time.monotonic() - signalled < 5  # the app (sleeping 30 s) got the signal, nobody waited it out
    rec = run_json(out)
    assert rec["status"] == "interrupted" and rec["phases"][-1]["status"] == "interrupted"
    assert orjson.loads(stdout)["error"]["code"] == "interrupted"
    # hotspot itself prints no traceback; the app's own (its KeyboardInterrupt) is streamed prefixed
    assert not any(ln.startswith(b"Traceback") for ln in stderr.splitlines())
    assert b"[att] | sleeping" in stderr


def test_preset_without_a_known_arch_fails_before_running(cli, fake):
    res = cli("collect", "--kernel", "gemm", "--pmc-preset", "l2", "--", *app())
    assert res.exit_code == 2 and "--arch" in res.stderr
    assert fake.calls() == [] and fake.runs() == []
    ok = cli("collect", "--kernel", "gemm", "--no-att", "--pmc-preset", "l2", "--arch", "gfx942", "--format", "json",
             "--", *app())
    assert ok.exit_code == 0 and "TCC_BUBBLE_sum" in ok.json()["data"]["pmc"]["counters"]
    # --arch decided by the one arch decision: target features and case name the same target
    featured = cli("collect", "--kernel", "gemm", "--no-att", "--pmc-preset", "l2", "--arch", "GFX942:sramecc+",
                   "--format", "json", "--", *app())
    assert featured.exit_code == 0, featured.stderr
    assert featured.json()["data"]["pmc"]["counters"] == ok.json()["data"]["pmc"]["counters"]


def test_flags_mode_runs_one_rocprofv3_per_counter_pass(cli, fake):
    res = cli("collect", "--kernel", "gemm", "--no-att", "--flags", "--pmc", ",".join(NINE_TCC[:6]),
              "--format", "json", "--", *app())
    assert res.exit_code == 0, res.stderr
    data = res.json()["data"]
    assert [p["name"] for p in data["phases"]] == ["pmc_1", "pmc_2"]
    argvs = [c["argv"] for c in fake.calls()]
    assert all("-i" not in a for a in argvs)
    assert [a[a.index("--pmc") + 1:a.index("-d")] for a in argvs] == [NINE_TCC[:4], NINE_TCC[4:6]]
    assert len(data["pmc"]["csv_files"]) == 2


def test_program_output_is_streamed_live_and_saved(cli, fake, tmp_path):
    out = tmp_path / "run"
    res = cli("collect", "--kernel", "gemm", "--output", out, "--",
              *app("import sys", "print('hello from the app', flush=True)",
                   "print('to stderr', file=sys.stderr, flush=True)"))
    assert res.exit_code == 0, res.stderr
    assert "[att] | hello from the app" in res.stderr and "[att] | to stderr" in res.stderr
    assert "hello from the app" not in res.stdout
    assert "hello from the app" in (out / "att.stdout.log").read_text()
    assert "to stderr" in (out / "att.stderr.log").read_text()
    quiet = cli("collect", "--kernel", "gemm", "--output", tmp_path / "run2", "--quiet", "--",
                *app("print('hello from the app', flush=True)"))
    assert quiet.exit_code == 0 and "hello from the app" not in quiet.stderr
    assert "hello from the app" in (tmp_path / "run2" / "att.stdout.log").read_text()


def test_rocprofv3_att_spellings_are_aliases(cli, fake):
    ours = cli("collect", "--kernel", "gemm", "--no-analyze", "--format", "json", "--target-cu", "2",
               "--se-mask", "0x3", "--simd-select", "0x1", "--buffer-size", "0x20000000", "--", *app())
    assert ours.exit_code == 0, ours.stderr
    theirs = cli("collect", "--kernel", "gemm", "--no-analyze", "--format", "json", "--att-target-cu", "2",
                 "--att-shader-engine-mask", "0x3", "--att-simd-select", "0x1", "--att-buffer-size",
                 "0x20000000", "--", *app())
    assert theirs.exit_code == 0, theirs.stderr
    att_jobs = [c["jobs"][0] for c in fake.calls() if "-i" in c["argv"]]
    assert len(att_jobs) == 2
    for job in att_jobs:  # what rocprofv3 was asked, the same both ways
        assert (job["att_target_cu"], job["att_shader_engine_mask"], job["att_simd_select"],
                job["att_buffer_size"]) == (2, 0x3, 0x1, 0x20000000)
    assert {k: v for k, v in att_jobs[0].items() if k != "output_directory"} == \
        {k: v for k, v in att_jobs[1].items() if k != "output_directory"}


def test_rocprofv3_args_pass_through_to_the_att_run_only(cli, fake):
    res = cli("collect", "--no-analyze", "--format", "json", "--rocprofv3-arg=--kernel-exclude-regex",
              "--rocprofv3-arg", "copy", "--", *app())
    assert res.exit_code == 0, res.stderr
    discover, att = fake.calls()
    assert "--kernel-exclude-regex" not in discover["argv"]  # the run hotspot parses is left as it is
    assert att["argv"][:2] == ["--kernel-exclude-regex", "copy"] and att["argv"][2] == "-i"
    assert att["jobs"][0]["kernel_exclude_regex"] == "copy"  # rocprofv3 merged it into the job
    assert res.json()["data"]["phases"][1]["argv"][1:3] == ["--kernel-exclude-regex", "copy"]  # run.json says so


@pytest.mark.parametrize("arg, instead", [("--att-target-cu=2", "--att-target-cu"), ("-d", "--output"),
                                          ("--kernel-include-regex", "--kernel")])
def test_rocprofv3_args_hotspot_sets_are_refused_before_running(cli, fake, arg, instead):
    res = cli("collect", "--format", "json", f"--rocprofv3-arg={arg}", "--", *app())
    assert res.exit_code == 2
    assert f"use collect's {instead}" in res.json()["error"]["hint"]
    assert fake.calls() == [] and fake.runs() == []
