"""`hotspot sweep` bookkeeping without a cluster (issue 26): the Slurm state parsers on sacct's and
squeue's output formats, status from the task logs alone, unique directories, nothing left by a
failed submission, nothing-to-do, another recipes file refused with the right hint, SIGTERM recorded
as interrupted, one counting, recipe problems one per line, `sweep report -o`, the text report's width,
`sweep status --help` / `sweep report --help` printing their own page."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import (
    entry,
    finished,
    hotspot,
    manifest,
    no_inherited_devices,  # noqa: F401  (autouse fixture)
    records,
    start_hotspot,
    states,
    wait_until,
    write_recipes,
)


def run_json(*args: str, **kw) -> tuple[int, dict]:
    proc = hotspot(*args, "--format", "json", **kw)
    return proc.returncode, json.loads(proc.stdout)


def no_slurm_path(monkeypatch, tmp_path: Path) -> None:
    """PATH without any Slurm client (the fake fixture's PATH holds the venv, the fake and /usr/bin)."""
    keep = [p for p in os.environ["PATH"].split(os.pathsep)
            if not any((Path(p) / t).exists() for t in ("sbatch", "sacct", "squeue", "sinfo", "scancel"))]
    monkeypatch.setenv("PATH", os.pathsep.join(keep))


# ------------------------------------------------------------------ parsers (Slurm's own formats)
def test_sacct_lines_per_task_with_pending_ranges_and_signals():
    from hotspot.sweep.slurm import parse_sacct

    text = ("12_0|COMPLETED|0:0|gpu01|None\n12_1|FAILED|5:0|gpu02|None\n12_2|NODE_FAIL|0:0|gpu03|None\n"
            "12_[3-4,7%2]|PENDING|0:0|None assigned|ReqNodeNotAvail, UnavailableNodes:gpu04\n"
            "12_5|CANCELLED by 1000|0:15|gpu05|None\n12_6.batch|FAILED|5:0|gpu01|\n")
    got = {t: (r.job_id, r.state, r.exit_code, r.node) for t, r in parse_sacct(text)["12"].items()}
    assert got == {"0": ("12_0", "COMPLETED", 0, "gpu01"), "1": ("12_1", "FAILED", 5, "gpu02"),
                   "2": ("12_2", "NODE_FAIL", 0, "gpu03"), "3": ("12_3", "PENDING", None, None),
                   "4": ("12_4", "PENDING", None, None), "7": ("12_7", "PENDING", None, None),
                   "5": ("12_5", "CANCELLED", 143, "gpu05")}


def test_sacct_d_keeps_a_tasks_earlier_runs():
    from hotspot.sweep.slurm import parse_sacct

    # sacct -D: the run the node failure ended, then the requeued one (earliest first)
    text = "5_0|NODE_FAIL|0:0|n1|None\n5_1|COMPLETED|0:0|n2|None\n5_0|REQUEUED|0:15|n1|None\n5_0|COMPLETED|0:0|n3|None\n"
    got = parse_sacct(text)["5"]
    assert (got["0"].state, got["0"].node, got["0"].earlier) == ("COMPLETED", "n3", ["NODE_FAIL on n1",
                                                                                      "REQUEUED on n1"])
    assert got["1"].earlier == []


def test_pending_reasons_that_never_clear():
    from hotspot.sweep.slurm import never_runs

    for r in ("PartitionConfig", "ReqNodeNotAvail, UnavailableNodes:n1", "QOSMaxCpuPerJobLimit",
              "AssocMaxGRESPerJob", "QOSMinGRES", "QOSMaxWallDurationPerJobLimit", "InvalidQOS",
              "job requeued in held state", "JobHeldUser"):
        assert never_runs(r), r
    for r in (None, "", "Resources", "Priority", "BeginTime", "QOSMaxJobsPerUserLimit", "AssocGrpCpuLimit",
              "QOSGrpGRES"):
        assert not never_runs(r), r


def test_fit_cpus_clips_the_default_and_refuses_the_impossible():
    from hotspot.errors import UsageError
    from hotspot.sweep.slurm import NodeShape, PartitionShape, fit_cpus, mem_request_mib

    small = PartitionShape("small", [NodeShape("n1", 16, 1000, 4)], 2)  # MaxCPUsPerNode=2
    big = PartitionShape("gpu", [NodeShape("g1", 64, 512000, 8), NodeShape("c1", 128, 512000, 0)], None)
    # default 4/GPU: on 2 CPUs for 4 GPUs a 2-GPU task gets 2 (1 per GPU), a 1-GPU task 1
    assert fit_cpus(small, 8, False, 2, 2, None)[0] == 2 and fit_cpus(small, 4, False, 1, 1, None)[0] == 1
    assert fit_cpus(big, 8, False, 2, 2, None) == (8, None)  # 64 CPUs / 8 GPUs = 8 per GPU: no clip
    assert fit_cpus(big, 4, False, None, 1, None) == (4, None)
    with pytest.raises(UsageError, match=r"--cpus-per-task 4: .*the most: 2 on n1; the partition allows 2"):
        fit_cpus(small, 4, True, None, 1, None)
    with pytest.raises(UsageError, match=r"9 GPUs per task: no node of partition gpu has that many \(the most: 8 on g1\)"):
        fit_cpus(big, 4, False, 9, 9, None)
    with pytest.raises(UsageError, match=r"--cpus-per-task 100: no node of partition gpu with 8 GPUs .*the most: 64"):
        fit_cpus(big, 100, True, 8, 8, None)  # the 128-CPU node has no GPU
    assert mem_request_mib(["--mem=600G"]) == 614400 and mem_request_mib(["--exclusive"]) is None
    with pytest.raises(UsageError, match=r"--mem=614400M: .*the most: 512000M on g1"):
        fit_cpus(big, 8, False, 2, 2, 614400)


def test_squeue_lines_and_reason_parentheses():
    from hotspot.sweep.slurm import parse_squeue, task_ids

    text = ("7_0|0|PENDING||(Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority "
            "partitions)\n7_1|1|RUNNING|n1|n1\nnot a line\n")
    (job, got), = parse_squeue(text).items()
    assert job == "7"
    assert got["0"].reason.startswith("Nodes required for job are DOWN") and got["0"].node is None
    assert (got["1"].state, got["1"].node, got["1"].reason) == ("RUNNING", "n1", None)
    assert task_ids("9_[0-99999999]")[-1] == "99999" and len(task_ids("9_[0-99999999]")) == 100_000  # bounded
    assert task_ids("9") == [] and task_ids("9_1.extern") == []


def fake_submitted(sw: Path, job: str, nodes: int) -> None:
    """Mark a prepared sweep as submitted as job `job` (what --slurm writes after sbatch answers)."""
    from hotspot.sweep import manifest as mf

    with mf.locked(sw) as doc:
        doc.slurm = mf.SlurmJob(job, "sweep.sbatch", nodes, mf.utc_iso(), False, partition=None)
    (sw / "slurm").mkdir(exist_ok=True)


def _submitted_as_job_41(fake, tmp_path, names: str):
    """A planned Slurm sweep of one task per name, recorded as submitted as array job 41; the
    task log's begin line to fill in with the task number."""
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry(n, 0.0, rec) for n in names])
    sw = fake.root / "sw"
    assert hotspot("sweep", str(recipes), "--slurm", "--dry-run", "--nodes", str(len(names)),
                   "-o", str(sw)).returncode == 0
    fake_submitted(sw, "41", len(names))
    return sw, ("=== hotspot sweep task begin: task {t} of job 41 restart 0 on node{t} at "
                "2026-11-25T10:00:00Z\n")


def test_status_from_task_logs_when_slurm_cannot_answer(fake, tmp_path, monkeypatch):
    """Every task died at start (exit 5, no GPU found): said per task with its log and the fix."""
    sw, begin = _submitted_as_job_41(fake, tmp_path, "abc")
    for t in (0, 1):
        (sw / "slurm" / f"41_{t}.out").write_text(
            begin.format(t=t) + "hotspot sweep: --gpus all: no GPU found (rocminfo: not found)\n"
            "=== hotspot sweep task end: exit 5 at 2026-11-25T10:00:01Z\n")
    no_slurm_path(monkeypatch, tmp_path)
    proc = hotspot("sweep", "status", str(sw), "--format", "json")
    assert proc.returncode == 6
    doc = json.loads(proc.stdout)
    tasks = doc["data"]["slurm"]["tasks"]
    assert [(t["task"], t["state"], t["exit_code"], t["node"], t["source"]) for t in tasks] == [
        ("0", "ENDED", 5, "node0", "log"), ("1", "ENDED", 5, "node1", "log"), ("2", "NOT_STARTED", None, None, "none")]
    assert tasks[0]["log"] == str(sw / "slurm" / "41_0.out") and tasks[2]["log"] is None
    problems = doc["data"]["problems"]
    assert [(p["task"], p["kind"]) for p in problems] == [("0", "task-died"), ("1", "task-died")]
    assert "41_0.out" in problems[0]["fix"] and f"-o {sw} --slurm" in problems[0]["fix"]
    assert "sacct not found" in doc["data"]["slurm"]["source"] and "squeue not found" in doc["data"]["slurm"]["source"]
    text = hotspot("sweep", "status", str(sw), env={**os.environ, "COLUMNS": "250"}).stdout
    assert "problem: task 41_1 died (exit 5) on node1" in text and "3 pending" in text


def test_a_started_task_squeue_no_longer_lists_is_gone_not_active(fake, tmp_path, monkeypatch):
    """A task log with a begin line and no end: while squeue cannot answer, the task may still run
    (STARTED, active: no "run the N left"); once squeue answers without it, it is not running
    (squeue lists every queued or running task): GONE, a lost task whose entries a rerun re-queues."""
    from hotspot.sweep import slurm, views

    sw, begin = _submitted_as_job_41(fake, tmp_path, "ab")
    (sw / "slurm" / "41_0.out").write_text(begin.format(t=0))  # never ended
    (sw / "slurm" / "41_1.out").write_text(begin.format(t=1) + "=== hotspot sweep task end: exit 2 at 2026-11-25T10:00:01Z\n")
    monkeypatch.setattr(slurm, "sacct", lambda job: (None, "sacct not found"))
    monkeypatch.setattr(slurm, "node_health", lambda partition: None)
    monkeypatch.setattr(slurm, "squeue", lambda job: (None, "squeue not found"))
    data = views.sweep_status(sw).data
    assert [t.state for t in data.slurm.tasks] == ["STARTED", "ENDED"]
    (died,) = data.problems
    assert died.kind == "task-died" and "still active" in died.fix and "entries left:" not in died.fix
    assert views.sweep_active(data) is False  # --wait cannot follow a task no source lists
    monkeypatch.setattr(slurm, "squeue", lambda job: ({}, "the job has left the queue"))
    data = views.sweep_status(sw).data
    assert [t.state for t in data.slurm.tasks] == ["GONE", "ENDED"]
    lost, died = data.problems
    assert lost.kind == "node-lost" and "41_0" in lost.message and "on node0" in lost.message
    assert str(sw / "slurm" / "41_0.out") in lost.fix and lost.fix.endswith(f"-o {sw} --slurm")
    assert "then run the 2 entries left:" in died.fix  # nothing of the array is active any more


def test_each_poll_asks_squeue_once_and_sacct_once_for_every_array_followed(fake, tmp_path, monkeypatch):
    """Two earlier arrays (one ended, one still pending) and the current one: one squeue for all three
    (which earlier ones are still active), one sacct for the two followed; each task keeps its array."""
    from hotspot.sweep import manifest as mf
    from hotspot.sweep import slurm, views

    recipes = write_recipes(fake.root / "r.yaml", [entry(n, 0.0, tmp_path / "rec.jsonl") for n in "ab"])
    sw = fake.root / "sw"
    assert hotspot("sweep", str(recipes), "--slurm", "--dry-run", "--nodes", "2", "-o", str(sw)).returncode == 0
    fake_submitted(sw, "41", 2)
    with mf.locked(sw) as doc:
        assert doc.slurm is not None
        doc.slurm.earlier = [mf.SlurmJob(j, "sweep.sbatch", 1, mf.utc_iso(), False) for j in ("39", "40")]
    answers = {"squeue": "39_0|0|COMPLETED|n1|None\n40_0|0|PENDING||(Priority)\n41_0|0|RUNNING|n1|n1\n"
                         "41_1|1|PENDING||(Resources)\n",
               "sacct": "40_0|PENDING|0:0|None assigned|Priority\n41_0|RUNNING|0:0|n1|None\n"}
    calls: list[list[str]] = []

    def query(argv: list[str]) -> tuple[str, str]:
        calls.append(argv)
        return answers[argv[0]], argv[0]

    monkeypatch.setattr(slurm, "_query", query)
    monkeypatch.setattr(slurm, "node_health", lambda partition: None)
    data = views.sweep_status(sw).data
    assert [(c[0], c[c.index("-j") + 1]) for c in calls] == [("squeue", "39,40,41"), ("sacct", "40,41")]
    assert [(t.job_id, t.state, t.source, t.reason) for t in data.slurm.tasks] == [
        ("40_0", "PENDING", "squeue", "Priority"), ("41_0", "RUNNING", "squeue", None),
        ("41_1", "PENDING", "squeue", "Resources")]
    assert data.slurm.source == "sacct + squeue"


# ------------------------------------------------------------------ directories and submissions
def test_new_twice_in_one_second_gives_two_directories(tmp_path, monkeypatch):
    from hotspot.collect import rundir
    from hotspot.sweep import api

    monkeypatch.setattr(rundir, "utc_stamp", lambda: "20261125T120000Z")
    recipes = write_recipes(tmp_path / "lib.yaml", [entry("a", 0.0, tmp_path / "rec.jsonl")])
    dirs = []
    for _ in range(3):
        r = api.run_sweep(api.SweepOptions(recipes=recipes, new=True, slurm=True, dry_run=True), cwd=tmp_path)
        dirs.append(Path(r.data.sweep_dir).name)
    assert dirs == ["20261125T120000Z-lib", "20261125T120000Z-2-lib", "20261125T120000Z-3-lib"]


def test_failed_submission_leaves_no_directory_and_nothing_to_do_submits_nothing(fake, tmp_path, monkeypatch):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("a", 0.0, rec)])
    no_slurm_path(monkeypatch, tmp_path)
    code, doc = run_json("sweep", str(recipes), "--slurm", cwd=fake.root)
    assert code == 5 and "sbatch" in doc["error"]["message"]
    assert not (fake.root / "hotspot-sweeps").exists() or list((fake.root / "hotspot-sweeps").iterdir()) == []
    # run it here, then --slurm again: nothing to do, nothing submitted (sbatch is not even needed)
    code, doc = run_json("sweep", str(recipes), "--gpus", "0", cwd=fake.root)
    assert code == 0
    sw = doc["data"]["sweep_dir"]
    code, doc = run_json("sweep", str(recipes), "--slurm", cwd=fake.root)
    assert code == 7 and doc["data"]["nothing_to_do"] is True and doc["data"]["slurm"] is None  # nothing to do
    assert doc["data"]["sweep_dir"] == sw and not (Path(sw) / "sweep.sbatch").exists()
    text = hotspot("sweep", str(recipes), "--slurm", cwd=fake.root).stdout
    assert text.startswith("nothing to do: every entry of")


def test_another_recipes_file_into_a_sweep_dir_is_refused_without_force_recipes(fake, tmp_path):
    rec = tmp_path / "rec.jsonl"
    one = write_recipes(fake.root / "one.yaml", [entry("a", 0.0, rec)])
    two = write_recipes(fake.root / "two.yaml", [entry("b", 0.0, rec)])
    sw = fake.root / "sw"
    assert hotspot("sweep", str(one), "--slurm", "--dry-run", "-o", str(sw)).returncode == 0
    for extra in ((), ("--force-recipes",)):
        code, doc = run_json("sweep", str(two), "--slurm", "--dry-run", "-o", str(sw), *extra)
        assert code == 3 and doc["error"]["code"] == "other-recipes"
        assert "--force-recipes" not in doc["error"]["hint"] and f"hotspot sweep {one} -o {sw}" in doc["error"]["hint"]
    assert states(sw) == {"a": "pending"}


# ------------------------------------------------------------------ signals and counting
def test_sigterm_is_recorded_interrupted_and_a_plain_rerun_finishes(fake, tmp_path):
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    names = ["a", "b", "c"]
    recipes = write_recipes(fake.root / "r.yaml", [entry(n, f"@{gate}", rec) for n in names])
    sw = fake.root / "sw"
    p = start_hotspot("sweep", str(recipes), "-o", str(sw), "--gpus", "0,1", "--format", "json")
    try:
        wait_until(lambda: len([r for r in records(rec) if "started" in r]) == 2, timeout=60)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 143
    doc = json.loads(out)
    assert doc["ok"] is False and doc["error"]["details"]["signal"] == signal.SIGTERM
    m = manifest(sw)
    assert [w["state"] for w in m["workers"].values()] == ["interrupted"]
    assert sorted(states(sw).values()) == ["interrupted", "interrupted", "pending"]
    assert f"hotspot sweep {recipes} -o {sw}" in err.strip().splitlines()[-1]
    gate.write_text("")
    code, doc = run_json("sweep", str(recipes), "-o", str(sw), "--gpus", "0,1")
    assert code == 0 and sorted(doc["data"]["requeued"]) == sorted(n for n in names if m["entries"][
        names.index(n)]["state"] == "interrupted")
    assert sorted(r["name"] for r in finished(rec)) == names


def test_one_counting_and_per_line_recipe_problems(fake, tmp_path):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("bad", 0.0, rec, code=3),
                                                   entry("slow", 30, rec, timeout_s=1.0), entry("ok", 0.0, rec)])
    proc = hotspot("sweep", str(recipes), "--gpus", "0", "-o", str(fake.root / "sw"),
                   env={**os.environ, "COLUMNS": "250"})
    assert proc.returncode == 6
    progress = [ln for ln in proc.stderr.splitlines() if ln.startswith("[sweep] ") and "done," in ln]
    assert progress[-1].startswith("[sweep] 1 done, 1 failed, 1 timed-out")  # as the summary words it
    assert "1 done, 1 failed, 1 timed-out" in proc.stdout
    (fake.root / "bad.yaml").write_text("defaults: {timeout_s: .nan, pmc: 3}\nentries:\n  - {name: a, cmd: [x]}\n"
                                        "  - {name: a, cmd: [y]}\n  - {name: b}\n  - {name: a, cmd: 4}\n")
    proc = hotspot("sweep", str(fake.root / "bad.yaml"), "--gpus", "0")
    assert proc.returncode == 3
    lines = proc.stderr.splitlines()
    assert lines[:-1] == [
        "  entry (defaults): pmc: is a int of mixed items (fix: a list of counter names (e.g. [TCC_HIT_sum, "
        "TCC_MISS_sum]))",
        "  entry (defaults): timeout_s: nan is not a positive number of seconds (at most 604800) (fix: a positive "
        "number of seconds (e.g. timeout_s: 900))",
        "  entry #2 (a): name: 'a' is already used by entry #1 (fix: give every entry a unique name)",
        "  entry #3 (b): cmd: missing or empty (fix: an argument list (cmd: [python, bench.py, --m, '4096']) or one "
        "string split like a shell would, without running one)",
        "  entry #4 (a): name: 'a' is already used by entry #1 (fix: give every entry a unique name)",
        "  entry #4 (a): cmd: is a int (fix: an argument list (cmd: [python, bench.py, --m, '4096']) or one string "
        "split like a shell would, without running one)"]
    assert lines[-1].startswith("hotspot sweep: ") and "6 problems" in lines[-1]


# ------------------------------------------------------------------ report and help
def test_report_o_writes_the_dashboard_and_the_text_fits_80_columns(fake, tmp_path, monkeypatch):
    rec = tmp_path / "rec.jsonl"
    long_reason_code = 9
    recipes = write_recipes(fake.root / "r.yaml", [entry("gemm", 0.0, rec), entry("bad", 0.0, rec, code=long_reason_code)])
    sw = fake.root / "sw"
    assert hotspot("sweep", str(recipes), "--gpus", "0,1", "-o", str(sw)).returncode == 6
    out = fake.root / "x.html"
    code, doc = run_json("sweep", "report", str(sw), "-o", str(out))
    assert code == 0 and doc["data"]["html"] == str(out) and out.read_text().startswith("<!DOCTYPE html>")
    code, doc = run_json("sweep", "report", str(sw), "-o", str(out))
    assert code == 3 and "--force" in doc["error"]["hint"]  # never replaced without --force
    monkeypatch.setenv("COLUMNS", "80")
    text = hotspot("sweep", "report", str(sw)).stdout
    table = [ln for ln in text.splitlines() if not ln.startswith(("  ", "sweep ", "not done", "("))]
    assert max(len(ln) for ln in table) <= 80, text
    assert "not shown at this width" in text
    page = out.read_text()
    bad = next(e for e in manifest(sw)["entries"] if e["name"] == "bad")
    assert f'href="sw/{bad["log"]}"' in page  # every entry links its job.log
    assert bad["reason"] in page.replace("&#x27;", "'").replace("&quot;", '"')  # the whole reason, not cut


@pytest.mark.parametrize("sub,words", [("status", "Progress of a sweep"), ("report", "The cross-kernel table"),
                                       ("cancel", "Stop a sweep's Slurm array")])
def test_subcommands_print_their_own_help(sub, words):
    proc = hotspot("sweep", sub, "--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith(f"Usage: hotspot sweep {sub} [OPTIONS] {{DIR}}") and words in proc.stdout
    assert "--gpus" not in proc.stdout and "--slurm" not in proc.stdout


def test_failed_submission_into_o_dir_removes_only_what_it_wrote(fake, tmp_path, monkeypatch):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("a", 0.0, rec)])
    no_slurm_path(monkeypatch, tmp_path)
    empty = fake.root / "empty"
    empty.mkdir()
    code, _ = run_json("sweep", str(recipes), "--slurm", "-o", str(empty))
    assert code == 5 and empty.is_dir() and list(empty.iterdir()) == []  # the user's empty dir stays
    code, _ = run_json("sweep", str(recipes), "--slurm", "-o", str(fake.root / "new"))
    assert code == 5 and not (fake.root / "new").exists()
    full = fake.root / "full"
    full.mkdir()
    (full / "mine.txt").write_text("keep")
    code, doc = run_json("sweep", str(recipes), "--slurm", "-o", str(full))
    assert code == 3 and "is not empty" in doc["error"]["message"]
    assert sorted(p.name for p in full.iterdir()) == ["mine.txt"] and (full / "mine.txt").read_text() == "keep"
