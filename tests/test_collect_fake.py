"""The fake rocprofv3 behaves like the real one where hotspot depends on it (FORMATS.md §1-§3)."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_rocprofv3.helpers import FAKE, app, fake  # noqa: F401  (fixture)


def rocprof(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(FAKE), *args], cwd=cwd, capture_output=True, text=True, timeout=30,
                          env=env if env is not None else dict(os.environ))


def test_fake_is_an_executable_python_script():
    assert os.access(FAKE, os.X_OK)
    assert FAKE.read_text().splitlines()[0] == "#!/usr/bin/env python3"


def test_att_takes_no_value_and_the_command_needs_double_dash(fake):
    bad = rocprof("--att", "1", "-d", "x", "-f", "csv", "--", *app(), cwd=fake.root)
    assert bad.returncode != 0 and "unrecognized arguments: 1" in bad.stderr
    no_dash = rocprof("--kernel-trace", "-f", "csv", *app(), cwd=fake.root)
    assert no_dash.returncode != 0 and "'--'" in no_dash.stderr


def test_only_jobs_are_read_and_conflicts_are_errors(fake, tmp_path):
    spec = tmp_path / "in.yaml"
    # top-level keys other than `jobs` are silently ignored: the predecessor's mistake
    spec.write_text("pmc: [TCC_HIT_sum]\nGlobalParameters: {x: 1}\njobs:\n"
                    f"  - kernel_trace: true\n    output_directory: {tmp_path / 'o'}\n    output_format: [csv]\n")
    ok = rocprof("-i", str(spec), "--", *app(), cwd=fake.root)
    assert ok.returncode == 0, ok.stderr
    assert not list((tmp_path / "o").rglob("*counter_collection.csv"))
    assert fake.calls()[-1]["jobs"][0].get("pmc") is None
    clash = rocprof("-i", str(spec), "-d", str(tmp_path / "other"), "--", *app(), cwd=fake.root)
    assert clash.returncode != 0 and "conflicting values for 'output_directory'" in clash.stderr


def test_multi_job_input_reruns_the_app_into_pass_dirs(fake, tmp_path):
    spec = tmp_path / "in.yaml"
    spec.write_text(f"jobs:\n  - pmc: [TCC_HIT_sum]\n    output_directory: {tmp_path / 'o'}\n    output_file: out\n"
                    f"    output_format: [csv]\n  - pmc: [SQ_WAVES]\n    output_directory: {tmp_path / 'o'}\n"
                    "    output_file: out\n    output_format: [csv]\n")
    marker = tmp_path / "ran.txt"
    done = rocprof("-i", str(spec), "--", *app(f"open({str(marker)!r}, 'a').write('x')"), cwd=fake.root)
    assert done.returncode == 0, done.stderr
    assert marker.read_text() == "xx"  # the application ran once per job
    for n, counter in ((1, "TCC_HIT_sum"), (2, "SQ_WAVES")):
        with (tmp_path / "o" / f"pass_{n}" / "out_counter_collection.csv").open() as fh:
            rows = list(csv.DictReader(fh))
        assert rows and {r["Counter_Name"] for r in rows} == {counter}
        assert "Start_Timestamp" in rows[0] and "Kernel_Name" in rows[0]


def test_app_exit_code_propagates_and_outputs_are_still_written(fake, tmp_path):
    done = rocprof("--stats", "--kernel-trace", "-f", "csv", "-d", str(tmp_path / "d"), "-o", "discover", "--",
                   *app("import sys", "sys.exit(3)"), cwd=fake.root)
    assert done.returncode == 3
    stats = tmp_path / "d" / "discover_kernel_stats.csv"
    header = stats.read_text().splitlines()[0]
    assert header == '"Name","Calls","TotalDurationNs","AverageNs","Percentage","MinNs","MaxNs","StdDev"'
    with stats.open() as fh:
        rows = list(csv.DictReader(fh))
    assert abs(sum(float(r["Percentage"]) for r in rows) - 100.0) < 0.05
    workload = json.loads((Path(__file__).parent / "fixtures" / "collect" / "workload.json").read_text())
    assert {r["Name"]: int(r["Calls"]) for r in rows} == {k["name"]: k["calls"] for k in workload["kernels"]}


def test_decoder_is_found_like_the_real_tool(fake, tmp_path):
    env = dict(os.environ)
    env.pop("ROCPROF_ATT_LIBRARY_PATH")
    base = ["--att", "--kernel-include-regex", "gemm", "-f", "csv", "-d", str(tmp_path / "a"), "--", *app()]
    missing = rocprof(*base, cwd=fake.root, env=env)
    assert missing.returncode != 0 and "rocprof-trace-decoder library path not found" in missing.stderr
    env["LD_LIBRARY_PATH"] = str(fake.decoder_dir)
    found = rocprof(*base, cwd=fake.root, env=env)
    assert found.returncode == 0, found.stderr
    dirs = sorted(p.name for p in (tmp_path / "a").glob("ui_output_agent_*_dispatch_*"))
    assert len(dirs) == 1  # no iteration range: only iteration 1 is traced
    assert list((tmp_path / "a").glob("stats_ui_output_agent_*.csv"))


@pytest.mark.parametrize("mode", ["empty-trace"])
def test_empty_trace_mode_writes_code_null(fake, tmp_path, monkeypatch, mode):
    env = dict(os.environ, FAKE_ROCPROF_MODE=mode)
    done = rocprof("--att", "--kernel-include-regex", "gemm", "-f", "csv", "-d", str(tmp_path / "a"), "--", *app(),
                   cwd=fake.root, env=env)
    assert done.returncode == 0, done.stderr
    (ui,) = (tmp_path / "a").glob("ui_output_agent_*")
    assert json.loads((ui / "code.json").read_text())["code"] is None
    assert not list(ui.glob("se*_wv*.json"))


def test_version(fake):
    done = rocprof("--version", cwd=fake.root)
    assert done.returncode == 0 and "1.0.0" in done.stdout


def test_fake_runs_under_the_venv_python_too():
    assert subprocess.run([sys.executable, str(FAKE), "--version"], capture_output=True).returncode == 0
