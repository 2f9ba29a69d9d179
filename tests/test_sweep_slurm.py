"""A real single-node Slurm cluster (tests/slurm/start_slurm.sh: slurmctld + slurmd + munge, four
gres GPUs on fake device nodes) runs array sweeps through sbatch, with the fake rocprofv3:

- two array tasks on one node, each given two GPUs by --gres, run on all four devices at once
  (GPU locks by physical device, not by the worker's GPU index); --cpus-per-task from the GPUs;
- a task that dies at start is said by `sweep status` (state, exit code, node, log) with the fix;
- the node marked down mid-run: the pending requeued task is said to be unable to run, with the
  `scontrol ... state=resume` that fixes it; after the resume Slurm's requeue finishes the sweep
  (interrupted entries re-run) and the task log holds both runs;
- `--wait` follows the array to its end and exits with the sweep's outcome (0 and 6, text and JSON),
  and stops on a task that waits for good (PartitionConfig; requeued held, fixed by a release);
- `sweep cancel` stops the array; a plain rerun finishes the interrupted entries.

- before sbatch: a request no node of the partition can run is refused (exit 2, the numbers and the
  fix), the default CPUs per task is clipped to a 2-CPU node's share (partition `small`, whose
  MaxCPUsPerNode is 2) and that array runs; a second submission while the first is queued is
  refused (exit 3) and, with --force, status and cancel follow both arrays;
- the sources: squeue while accounting has not recorded the job yet (sacct lags sbatch), `sacct -D`
  for the node failure and the requeue, the exit codes of the task log (137 after kill -9, 143
  after a cancel).

Accounting: the cluster runs slurmdbd on its own MariaDB server when Debian's slurmdbd and
mariadb-server are installed (.ci/run installs them), so sacct answers as on a site cluster; without
them `sacct` says "accounting storage is disabled", the tests that need it skip with that reason and
the others get the squeue + task-log fallback.

Skipped with the reason when slurm-wlm/munge are not installed or we are not root; when they are
and the cluster does not come up, the tests fail under CI (CI=true) and skip with the logs
elsewhere. The daemons the module started are stopped by pid at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import (
    entry,
    finished,
    hotspot,
    manifest,
    no_inherited_devices,  # noqa: F401  (autouse fixture)
    no_overlap_per_gpu,
    records,
    start_hotspot,
    states,
    wait_until,
    write_recipes,
)

# One cluster for the module (a module fixture; a second slurmd for this host would be a second node
# of the same name): all its tests on one xdist worker (--dist loadgroup).
pytestmark = [pytest.mark.slurm, pytest.mark.slow, pytest.mark.xdist_group("slurm-cluster")]

HERE = Path(__file__).resolve().parent / "slurm"
BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel")


@pytest.fixture(scope="module")
def cluster():
    missing = [b for b in BINARIES if shutil.which(b) is None and not Path("/usr/sbin", b).exists()]
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)} missing; Debian: apt-get install slurm-wlm munge)")
    if os.geteuid() != 0:
        pytest.skip("the test cluster runs its daemons as root (SlurmUser=root); not root here")
    # its own short dir: munge's Unix socket path must stay under 108 bytes
    where = Path(tempfile.mkdtemp(prefix="hs-slurm-"))
    env = {**os.environ, "PATH": os.environ.get("PATH", "") + ":/usr/sbin:/usr/bin"}
    start = subprocess.run(["bash", str(HERE / "start_slurm.sh"), str(where)], capture_output=True, text=True,
                           timeout=120, env=env)
    try:
        if start.returncode != 0:
            logs = "; ".join(f"{p.name}: {p.read_text()[-400:]}" for p in sorted((where / "logs").glob("*.log")))
            msg = f"single-node Slurm did not start (exit {start.returncode}): {start.stderr.strip()[-400:]} {logs}"
            if os.environ.get("CI"):
                pytest.fail(msg)
            pytest.skip(msg)
        yield where
    finally:
        subprocess.run(["bash", str(HERE / "stop_slurm.sh"), str(where)], timeout=60)
        shutil.rmtree(where, ignore_errors=True)


@pytest.fixture
def slurm(cluster, monkeypatch, tmp_path):
    monkeypatch.setenv("SLURM_CONF", str(cluster / "slurm.conf"))
    # the array tasks inherit it (sbatch exports the environment): they share one lock folder, as
    # the host's would be shared (what the first test checks)
    monkeypatch.setenv("HOTSPOT_LOCK_DIR", str(tmp_path / "host-locks"))
    node = subprocess.run(["hostname", "-s"], capture_output=True, text=True).stdout.strip()
    yield node
    # leave the node usable for the next test whatever happened
    subprocess.run(["scontrol", "update", f"nodename={node}", "state=resume"], capture_output=True, timeout=30)


def accounting() -> bool:
    """Does the test cluster keep accounting (slurmdbd up)?"""
    probe = subprocess.run(["sacct", "-n", "-X", "-S", "now"], capture_output=True, text=True, timeout=30)
    return probe.returncode == 0


def need_accounting() -> None:
    probe = subprocess.run(["sacct", "-n", "-X", "-S", "now"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        pytest.skip(f"no accounting on the test cluster (slurmdbd + mariadb-server not installed, or "
                    f"HOTSPOT_SLURM_ACCOUNTING=0): sacct says "
                    f"{probe.stderr.strip()[-120:]!r}")


def status(sw: Path) -> dict:
    return json.loads(hotspot("sweep", "status", str(sw), "--format", "json").stdout)["data"]


def submit(recipes: Path, sw: Path, *args: str) -> str:
    proc = hotspot("sweep", str(recipes), "--slurm", "-o", str(sw), *args, "--format", "json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["data"]["slurm"]["job_id"]


def scancel(job: str) -> None:
    subprocess.run(["scancel", str(job)], capture_output=True, timeout=30)


def two_running_of_three(fake, tmp_path: Path, names: list[str]) -> tuple[Path, Path, Path, Path, str]:
    """A one-task array on GPUs 0,1 of three gated entries, returned once two of them run."""
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    recipes = write_recipes(fake.root / "lib.yaml", [entry(n, f"@{gate}", rec) for n in names])
    sw = fake.root / "sw"
    job = submit(recipes, sw, "--gpus", "0,1", "--cpus-per-task", "2")
    try:
        wait_until(lambda: len([r for r in records(rec) if "started" in r]) == 2, timeout=90, step=0.2)
    except AssertionError:
        scancel(job)
        raise
    return rec, gate, recipes, sw, job


def test_two_tasks_share_a_node_by_device_with_cpus_per_gpu(fake, slurm, tmp_path):
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    names = [f"k{i}" for i in range(6)]
    recipes = write_recipes(fake.root / "lib.yaml", [entry(n, f"@{gate}", rec) for n in names],
                            slurm={"prelude": f"echo prelude-ran > {tmp_path}/prelude.txt"})
    sw = fake.root / "sw"
    job = submit(recipes, sw, "--nodes", "2", "--sbatch-arg=--gres=gpu:2")
    script = (sw / "sweep.sbatch").read_text()
    assert "#SBATCH --array=0-1" in script and "#SBATCH --gres=gpu:2" in script
    assert "#SBATCH --cpus-per-task=8" in script  # 4 per GPU x 2 GPUs
    assert "#SBATCH --open-mode=append" in script and f"--worker {sw} --gpus all" in script
    try:
        # both tasks on the one node, 2 GPUs each: four entries run at once, one per device
        wait_until(lambda: len([r for r in records(rec) if "started" in r]) == 4, timeout=90, step=0.2)
        st = status(sw)
        assert sorted(t["state"] for t in st["slurm"]["tasks"]) == ["RUNNING", "RUNNING"]
        assert {t["node"] for t in st["slurm"]["tasks"]} == {slurm} and st["problems"] == []
        running = [e for e in manifest(sw)["entries"] if e["state"] == "running"]
        assert sorted(e["device"] for e in running) == ["0", "1", "2", "3"]
        assert {e["gpu"] for e in running} == {0, 1}  # each worker's own indices: the locks must not use them
        locks = tmp_path / "host-locks"
        assert sorted(p.name for p in locks.iterdir()) == [f"{slurm}.dev{d}.lock" for d in "0123"]
        gate.write_text("")
        wait_until(lambda: status(sw)["counts"]["done"] == len(names)
                   and all(t["state"] == "COMPLETED" for t in status(sw)["slurm"]["tasks"]), timeout=120, step=0.5)
    finally:
        scancel(job)
    runs = finished(rec)
    assert sorted(r["name"] for r in runs) == names
    no_overlap_per_gpu(runs)
    assert {r["gpu"] for r in runs} == {"0", "1", "2", "3"}
    st = status(sw)
    assert [(t["task"], t["exit_code"], t["starts"]) for t in st["slurm"]["tasks"]] == [("0", 0, 1), ("1", 0, 1)]
    # both ended: accounting answers (with the exit code) where it runs, once it has caught up with
    # the controller (it lags by about a second), else squeue and the logs
    want = {"sacct"} if accounting() else {"squeue"}
    wait_until(lambda: {t["source"] for t in status(sw)["slurm"]["tasks"]} == want, timeout=30, step=0.5)
    doc = manifest(sw)
    assert sorted(w["slurm"]["slurm_array_task_id"] for w in doc["workers"].values()) == ["0", "1"]
    assert {w["state"] for w in doc["workers"].values()} == {"finished"}
    assert (tmp_path / "prelude.txt").read_text().strip() == "prelude-ran"
    assert sorted(p.name for p in (sw / "slurm").iterdir()) == [f"{job}_0.out", f"{job}_1.out"]
    # the dashboard shows each entry's task and node
    out = fake.root / "dash.html"
    assert hotspot("sweep", "report", str(sw), "-o", str(out)).returncode == 0
    assert f"{job}_0 COMPLETED on {slurm}" in out.read_text() or f"{job}_1 COMPLETED on {slurm}" in out.read_text()


def test_a_task_that_dies_at_start_is_said_with_its_log(fake, slurm, tmp_path):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "lib.yaml", [entry(n, 0.0, rec) for n in ("a", "b")])
    sw = fake.root / "sw"
    # the task gets one GPU from --gres but is told to use GPU 3 of it: the worker refuses (exit 2)
    job = submit(recipes, sw, "--gpus", "3", "--sbatch-arg=--gres=gpu:1")
    try:
        wait_until(lambda: (status(sw)["slurm"]["tasks"][0]["exit_code"] is not None), timeout=90, step=0.3)
    finally:
        scancel(job)
    proc = hotspot("sweep", "status", str(sw), "--format", "json")
    assert proc.returncode == 6  # status says something needs fixing
    st = json.loads(proc.stdout)["data"]
    (task,) = st["slurm"]["tasks"]
    log = sw / "slurm" / f"{job}_0.out"
    assert (task["state"], task["exit_code"], task["node"], task["log"]) == ("FAILED", 2, slurm, str(log))
    assert "not among the 1 visible devices" in log.read_text()
    (problem,) = st["problems"]
    assert problem["kind"] == "task-died" and "exit 2" in problem["message"] and slurm in problem["message"]
    assert str(log) in problem["fix"] and f"hotspot sweep {recipes} -o {sw} --slurm" in problem["fix"]
    text = hotspot("sweep", "status", str(sw)).stdout
    assert f"problem: task {job}_0 died (exit 2) on {slurm}" in text
    assert states(sw) == {"a": "pending", "b": "pending"} and finished(rec) == []


def test_node_down_then_requeue_finishes_the_sweep(fake, slurm, tmp_path):
    t0 = time.monotonic()
    names = ["a", "b", "c"]
    rec, gate, recipes, sw, job = two_running_of_three(fake, tmp_path, names)
    try:
        subprocess.run(["scontrol", "update", f"nodename={slurm}", "state=down", "reason=hotspot-test"],
                       check=True, capture_output=True, timeout=30)

        def stuck() -> bool:
            st = status(sw)
            return any(p["kind"] == "never-runs" for p in st["problems"])

        wait_until(stuck, timeout=90, step=0.5)
        st = status(sw)
        (p,) = [p for p in st["problems"] if p["kind"] == "never-runs"]
        assert f"scontrol update nodename={slurm} state=resume" in p["fix"]
        assert st["slurm"]["tasks"][0]["state"] == "PENDING"
        # the killed run's entries are interrupted (its worker got SIGTERM), nothing is lost
        wait_until(lambda: sorted(states(sw).values()) == ["interrupted", "interrupted", "pending"], timeout=60)
        assert "down (hotspot-test)" in p["message"] and "None" not in p["message"]  # it once read "(None; ..."
        text = hotspot("sweep", "status", str(sw), env={**os.environ, "COLUMNS": "250"}).stdout
        assert "problem: task" in text and "None" not in text.split("problem:")[1]
        gate.write_text("")
        subprocess.run(["scontrol", "update", f"nodename={slurm}", "state=resume"], check=True,
                       capture_output=True, timeout=30)
        # Slurm holds a requeued batch job for ~2 minutes (Reason=BeginTime): release it now
        subprocess.run(["scontrol", "update", f"jobid={job}_0", "starttime=now"], check=True,
                       capture_output=True, timeout=30)
        wait_until(lambda: set(states(sw).values()) == {"done"}, timeout=150, step=0.5)
        wait_until(lambda: status(sw)["slurm"]["tasks"][0]["state"] == "COMPLETED", timeout=60, step=0.5)
    finally:
        scancel(job)
    log = (sw / "slurm" / f"{job}_0.out").read_text()
    assert log.count("=== hotspot sweep task begin") == 2 and "restart 1" in log  # appended, not replaced
    assert "=== hotspot sweep task end: exit 143" in log and log.rstrip().splitlines()[-1].startswith(
        "=== hotspot sweep task end: exit 0")
    m = manifest(sw)
    requeued = [e for e in m["entries"] if e["history"]]
    assert len(requeued) == 2 and all("Slurm requeue" in e["history"][-1]["requeued"] for e in requeued)
    assert sorted(r["name"] for r in finished(rec)) == names
    st = status(sw)
    assert st["problems"] == [] and st["slurm"]["tasks"][0]["starts"] == 2
    # the requeued run waited on BeginTime; now COMPLETED, it has no reason in the data (JSON) either
    assert st["slurm"]["tasks"][0]["reason"] is None
    if accounting():  # sacct -D keeps the run the node failure ended, before the requeued one
        (task,) = st["slurm"]["tasks"]
        assert task["earlier"] == [f"NODE_FAIL on {slurm}"] and task["state"] == "COMPLETED"
        text = hotspot("sweep", "status", str(sw), env={**os.environ, "COLUMNS": "250"}).stdout
        assert f"task {job}_0 earlier: NODE_FAIL on {slurm}" in text
    assert time.monotonic() - t0 <= 90, "the node-failure path took too long"


def test_wait_follows_the_array_and_exits_with_the_outcome(fake, slurm, tmp_path):
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    recipes = write_recipes(fake.root / "lib.yaml", [entry("good", f"@{gate}", rec), entry("bad", 0.0, rec, code=3)])
    sw = fake.root / "sw"
    p = start_hotspot("sweep", str(recipes), "--slurm", "--wait", "-o", str(sw), "--gpus", "0,1",
                      "--cpus-per-task", "2", "--format", "json")
    try:
        wait_until(lambda: len([r for r in records(rec) if "started" in r]) == 2, timeout=90, step=0.2)
        assert p.poll() is None  # still following
        gate.write_text("")
        out, err = p.communicate(timeout=150)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        job = manifest(sw)["slurm"]["job_id"]
        scancel(job)
    assert p.returncode == 6, err  # an entry failed: the sweep's outcome, not the submission's
    doc = json.loads(out)
    assert doc["ok"] is False and doc["data"]["counts"]["done"] == 1 and doc["data"]["counts"]["failed"] == 1
    # the command run, with the submission it followed (it once said "sweep status", without it)
    assert doc["command"] == "sweep" and doc["exit_code"] == 6
    assert doc["data"]["submitted"]["slurm"]["job_id"] == job and doc["data"]["submitted"]["to_do"] == 2
    (task,) = doc["data"]["slurm"]["tasks"]
    # the task ran an entry that failed: its own exit 6 (Slurm: FAILED), which is not a dead task
    assert (task["state"], task["exit_code"]) == ("FAILED", 6) and doc["data"]["problems"] == []
    assert "[sweep] 1 done, 1 failed" in err


def test_wait_in_text_mode_shows_the_submission_and_the_status_and_exits_6(fake, slurm, tmp_path):
    """Regression: text-mode `--slurm --wait` ended in "internal error: 'StatusData' object has no
    attribute 'submission'" (exit 1); and a prelude with a newline (a string the text views escape)
    made a failed sweep exit 0 in text."""
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "lib.yaml", [entry("good", 0.0, rec), entry("bad", 0.0, rec, code=3)],
                            slurm={"prelude": "echo one\necho two"})
    sw = fake.root / "sw"
    try:
        proc = hotspot("sweep", str(recipes), "--slurm", "--wait", "-o", str(sw), "--gpus", "0,1",
                       "--cpus-per-task", "2", env={**os.environ, "COLUMNS": "250"}, timeout=200)
    finally:
        if (sw / "sweep.json").exists() and manifest(sw).get("slurm"):
            scancel(manifest(sw)["slurm"]["job_id"])
    job = manifest(sw)["slurm"]["job_id"]
    assert proc.returncode == 6, proc.stderr
    assert "internal error" not in proc.stderr
    first, second = proc.stdout.splitlines()[:2]
    assert first.startswith(f"submitted Slurm job {job} (1 array task(s), 2 CPUs each)")
    assert second == f"sweep {sw}: 1 done, 1 failed of 2"
    assert "problem:" not in proc.stdout and f"Slurm job {job} (from " in proc.stdout


def test_cancel_stops_the_array_and_a_plain_rerun_finishes(fake, slurm, tmp_path):
    names = ["a", "b", "c"]
    rec, gate, recipes, sw, job = two_running_of_three(fake, tmp_path, names)
    try:
        proc = hotspot("sweep", "cancel", str(sw), "--format", "json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["data"]["job_id"] == job
        wait_until(lambda: status(sw)["slurm"]["tasks"][0]["state"] == "CANCELLED", timeout=60, step=0.3)
        wait_until(lambda: sorted(states(sw).values()) == ["interrupted", "interrupted", "pending"], timeout=60)
    finally:
        scancel(job)
    doc = manifest(sw)
    assert {w["state"] for w in doc["workers"].values()} == {"interrupted"}  # SIGTERM is not "finished"
    log = (sw / "slurm" / f"{job}_0.out").read_text()
    assert "=== hotspot sweep task end: exit 143" in log
    # the log's 143 (SIGTERM), not sacct's "CANCELLED 0"
    (task,) = status(sw)["slurm"]["tasks"]
    assert (task["state"], task["exit_code"]) == ("CANCELLED", 143)
    gate.write_text("")
    proc = hotspot("sweep", str(recipes), "-o", str(sw), "--gpus", "0,1")  # plain rerun, here
    assert proc.returncode == 0, proc.stderr
    assert set(states(sw).values()) == {"done"}
    assert sorted(r["name"] for r in finished(rec)) == names


def test_wait_in_json_exits_0_and_the_state_comes_from_sacct(fake, slurm, tmp_path):
    """The first source `sweep status` asks once the task has ended: accounting (with the exit code)."""
    need_accounting()
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "lib.yaml", [entry("a", 0.0, rec), entry("b", 0.0, rec)])
    sw = fake.root / "sw"
    try:
        proc = hotspot("sweep", str(recipes), "--slurm", "--wait", "-o", str(sw), "--gpus", "0",
                       "--cpus-per-task", "1", "--format", "json", timeout=150)
    finally:
        if (sw / "sweep.json").exists() and manifest(sw).get("slurm"):
            scancel(manifest(sw)["slurm"]["job_id"])
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["ok"] is True and doc["exit_code"] == 0 and doc["data"]["counts"]["done"] == 2
    # --wait ends on the controller's COMPLETED; accounting records it about a second later
    wait_until(lambda: status(sw)["slurm"]["tasks"][0]["source"] == "sacct", timeout=30, step=0.5)
    (task,) = status(sw)["slurm"]["tasks"]
    assert (task["source"], task["state"], task["exit_code"], task["node"]) == ("sacct", "COMPLETED", 0, slurm)
    assert sorted(r["name"] for r in finished(rec)) == ["a", "b"]


def test_impossible_request_refused_before_sbatch_and_the_default_clipped(fake, slurm, tmp_path):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "lib.yaml", [entry("a", 0.0, rec), entry("b", 0.0, rec)])
    sw = fake.root / "sw"

    def queued() -> str:
        return subprocess.run(["squeue", "-h", "-n", "hotspot-sweep-lib", "-o", "%i"], capture_output=True,
                              text=True, timeout=30).stdout.strip()

    # the node has 16 CPUs (slurm.conf): 32 can never run
    proc = hotspot("sweep", str(recipes), "--slurm", "-o", str(sw), "--gpus", "0", "--cpus-per-task", "32")
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.splitlines()  # one line: the numbers and the fix
    assert "--cpus-per-task 32" in line and f"the most: 16 on {slurm}" in line
    assert "--cpus-per-task 16 or fewer" in line
    assert not sw.exists() and queued() == ""  # nothing submitted, nothing left behind
    # partition `small` caps a node at 2 CPUs: 4 are refused, with the cap named
    proc = hotspot("sweep", str(recipes), "--slurm", "-o", str(sw), "--partition", "small", "--gpus", "0,1",
                   "--cpus-per-task", "4", "--format", "json")
    doc = json.loads(proc.stdout)
    assert proc.returncode == 2 and doc["error"]["exit_code"] == 2
    assert "the most: 2 on" in doc["error"]["message"] and "the partition allows 2 per node" in doc["error"]["message"]
    assert not sw.exists() and queued() == ""
    # more GPUs than a node has
    proc = hotspot("sweep", str(recipes), "--slurm", "-o", str(sw), "--sbatch-arg=--gres=gpu:8")
    assert proc.returncode == 2 and f"8 GPUs per task: no node of partition debug has that many (the most: 4 on " \
        f"{slurm})" in proc.stderr
    # the default (4 per GPU x 2 GPUs = 8) on a node of 2 CPUs for 4 GPUs: clipped to 2, said, and it runs
    try:
        proc = hotspot("sweep", str(recipes), "--slurm", "--wait", "-o", str(sw), "--partition", "small",
                       "--sbatch-arg=--gres=gpu:2", env={**os.environ, "COLUMNS": "250"}, timeout=150)
    finally:
        if (sw / "sweep.json").exists() and manifest(sw).get("slurm"):
            scancel(manifest(sw)["slurm"]["job_id"])
    assert proc.returncode == 0, proc.stderr
    assert "asking --cpus-per-task=2, not the default 8 (4 per GPU x 2): the nodes of partition small have 2 " \
        "CPUs for 4 GPUs" in proc.stderr
    assert "#SBATCH --cpus-per-task=2" in (sw / "sweep.sbatch").read_text()
    job = manifest(sw)["slurm"]["job_id"]
    assert proc.stdout.splitlines()[0].startswith(f"submitted Slurm job {job} (1 array task(s), 2 CPUs each)")
    assert f"sweep {sw}: 2 done of 2" in proc.stdout and "problem:" not in proc.stdout
    assert sorted(r["name"] for r in finished(rec)) == ["a", "b"]


def test_a_second_submission_is_refused_while_the_first_is_queued(fake, slurm, tmp_path):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "lib.yaml", [entry("a", 0.0, rec)])
    sw = fake.root / "sw"
    # held back an hour: PENDING (BeginTime) until cancelled
    first = submit(recipes, sw, "--gpus", "0", "--cpus-per-task", "1", "--sbatch-arg=--begin=now+3600")
    jobs = [first]
    try:
        # right after sbatch: the controller answers whatever accounting says (it lags by ~1 s)
        st = status(sw)
        (task,) = st["slurm"]["tasks"]
        assert (task["state"], task["source"]) == ("PENDING", "squeue") and st["problems"] == []
        proc = hotspot("sweep", str(recipes), "--slurm", "-o", str(sw), "--gpus", "0", "--format", "json")
        assert proc.returncode == 3, proc.stderr
        doc = json.loads(proc.stdout)
        assert doc["error"]["code"] == "array-active" and doc["error"]["details"]["active_jobs"] == [first]
        assert f"job {first}: 1 PENDING" in doc["error"]["message"] and "--force" in doc["error"]["hint"]
        assert manifest(sw)["slurm"]["job_id"] == first  # nothing changed
        # --force: a second array beside it; status and cancel follow both
        proc = hotspot("sweep", str(recipes), "--slurm", "-o", str(sw), "--gpus", "0", "--cpus-per-task", "1",
                       "--sbatch-arg=--begin=now+3600", "--force", "--format", "json")
        assert proc.returncode == 0, proc.stderr
        doc = json.loads(proc.stdout)
        second = doc["data"]["slurm"]["job_id"]
        jobs.append(second)
        assert any(w.startswith("--force: submitting beside the sweep's array still queued") for w in doc["warnings"])
        assert [j["job_id"] for j in manifest(sw)["slurm"]["earlier"]] == [first]
        assert [t["job_id"] for t in status(sw)["slurm"]["tasks"]] == [f"{first}_0", f"{second}_0"]
        proc = hotspot("sweep", "cancel", str(sw), "--format", "json")
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["data"]["job_ids"] == [first, second]
        wait_until(lambda: all(t["state"] == "CANCELLED" for t in status(sw)["slurm"]["tasks"]), timeout=30, step=0.3)
    finally:
        for j in jobs:
            scancel(j)


def test_sacct_empty_right_after_sbatch_then_squeue_answers(fake, slurm, tmp_path, monkeypatch):
    """Accounting that has not recorded the job yet (an sacct that answers nothing, as in the
    second after sbatch): the controller's state is shown, never NOT_STARTED or "the array has
    ended", and --wait follows the job to its end."""
    stub = tmp_path / "bin"
    stub.mkdir()
    (stub / "sacct").write_text("#!/bin/sh\nexit 0\n")
    (stub / "sacct").chmod(0o755)
    monkeypatch.setenv("PATH", f"{stub}{os.pathsep}{os.environ['PATH']}")
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    recipes = write_recipes(fake.root / "lib.yaml", [entry("a", f"@{gate}", rec)])
    sw = fake.root / "sw"
    p = start_hotspot("sweep", str(recipes), "--slurm", "--wait", "-o", str(sw), "--gpus", "0",
                      "--cpus-per-task", "1", "--format", "json")
    try:
        wait_until(lambda: (sw / "sweep.json").exists() and bool(manifest(sw).get("slurm")), timeout=30, step=0.1)
        st = status(sw)
        (task,) = st["slurm"]["tasks"]
        assert task["state"] in ("PENDING", "RUNNING", "CONFIGURING") and task["source"] == "squeue"
        assert st["problems"] == [] and "empty: not recorded yet" in st["slurm"]["source"]
        wait_until(lambda: len(records(rec)) >= 1, timeout=60, step=0.2)
        time.sleep(2 * 2.0)  # two --wait polls with the task running
        assert p.poll() is None  # --wait still follows it
        gate.write_text("")
        out, err = p.communicate(timeout=90)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if (sw / "sweep.json").exists() and manifest(sw).get("slurm"):
            scancel(manifest(sw)["slurm"]["job_id"])
    assert p.returncode == 0, err
    assert json.loads(out)["data"]["counts"]["done"] == 1


def test_exit_137_after_kill_9_from_the_task_log(fake, slurm, tmp_path):
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    recipes = write_recipes(fake.root / "lib.yaml", [entry("a", f"@{gate}", rec)])
    sw = fake.root / "sw"
    job = submit(recipes, sw, "--gpus", "0", "--cpus-per-task", "1")
    try:
        wait_until(lambda: len(records(rec)) >= 1 and manifest(sw)["workers"], timeout=60, step=0.2)
        (worker,) = manifest(sw)["workers"].values()
        os.kill(worker["pid"], 9)  # the worker, not the batch script: the script writes its end line
        wait_until(lambda: status(sw)["slurm"]["tasks"][0]["exit_code"] is not None, timeout=60, step=0.3)
    finally:
        gate.write_text("")
        scancel(job)
    log = (sw / "slurm" / f"{job}_0.out").read_text()
    assert "=== hotspot sweep task end: exit 137" in log
    st = status(sw)
    (task,) = st["slurm"]["tasks"]
    assert (task["state"], task["exit_code"]) == ("FAILED", 137)
    (problem,) = [p for p in st["problems"] if p["kind"] == "task-died"]
    assert "died (exit 137 (signal 9))" in problem["message"]


def test_wait_stops_on_a_pending_reason_that_never_clears(fake, slurm, tmp_path):
    """The partition shrinks under a queued task (MaxCPUsPerNode 2 -> 1 for a 2-CPU task): PENDING
    (PartitionConfig) for good. `status --wait` says so with the fix and stops (exit 6)."""
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "lib.yaml", [entry("a", 0.0, rec)])
    sw = fake.root / "sw"
    job = submit(recipes, sw, "--partition", "small", "--gpus", "0", "--cpus-per-task", "2",
                 "--sbatch-arg=--begin=now+3600")
    try:
        subprocess.run(["scontrol", "update", "partitionname=small", "MaxCPUsPerNode=1"], check=True,
                       capture_output=True, timeout=30)
        # the begin time lifted: scontrol answers "Requested partition configuration not available now"
        subprocess.run(["scontrol", "update", f"jobid={job}", "starttime=now"], capture_output=True, timeout=30)
        wait_until(lambda: status(sw)["slurm"]["tasks"][0]["reason"] == "PartitionConfig", timeout=30, step=0.5)
        proc = hotspot("sweep", "status", str(sw), "--wait", "--format", "json", timeout=60)
    finally:
        subprocess.run(["scontrol", "update", "partitionname=small", "MaxCPUsPerNode=2"], capture_output=True,
                       timeout=30)
        scancel(job)
    assert proc.returncode == 6, proc.stderr
    data = json.loads(proc.stdout)["data"]
    (task,) = data["slurm"]["tasks"]
    assert (task["state"], task["reason"]) == ("PENDING", "PartitionConfig")
    (p,) = data["problems"]
    assert p["kind"] == "never-runs" and "(PartitionConfig)" in p["message"] and "None" not in p["message"]
    assert f"hotspot sweep cancel {sw}" in p["fix"] and "--cpus-per-task" in p["fix"]
    assert finished(rec) == []


def test_a_task_requeued_held_is_said_with_the_release_and_wait_stops(fake, slurm, tmp_path):
    """`scontrol requeuehold` on a running task: squeue says PENDING "(job requeued in held state)",
    which no wait clears. `status` names it with `scontrol release` as the fix, `--wait` stops
    (exit 6) instead of following it for ever, and once released it is no problem any more."""
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    recipes = write_recipes(fake.root / "lib.yaml", [entry("a", f"@{gate}", rec)])
    sw = fake.root / "sw"
    job = submit(recipes, sw, "--gpus", "0", "--cpus-per-task", "1")
    try:
        wait_until(lambda: len(records(rec)) >= 1, timeout=60, step=0.2)
        subprocess.run(["scontrol", "requeuehold", f"{job}_0"], check=True, capture_output=True, timeout=30)
        wait_until(lambda: any(p["kind"] == "never-runs" for p in status(sw)["problems"]), timeout=30, step=0.5)
        proc = hotspot("sweep", "status", str(sw), "--wait", "--format", "json", timeout=60)
        assert proc.returncode == 6, proc.stderr
        data = json.loads(proc.stdout)["data"]
        (task,) = data["slurm"]["tasks"]
        assert task["state"] == "PENDING" and "held" in task["reason"]
        (p,) = [p for p in data["problems"] if p["kind"] == "never-runs"]
        assert f"scontrol release {job}_0" in p["fix"] and f"hotspot sweep cancel {sw}" in p["fix"]
        subprocess.run(["scontrol", "release", f"{job}_0"], check=True, capture_output=True, timeout=30)
        wait_until(lambda: not any(p["kind"] == "never-runs" for p in status(sw)["problems"]), timeout=30, step=0.5)
    finally:
        gate.write_text("")
        scancel(job)
