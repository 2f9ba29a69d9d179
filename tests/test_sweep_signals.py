"""`hotspot sweep` under stress: two workers on one sweep dir (one killed -9), Ctrl-C, a second Ctrl-C.

Real processes and signals; the applications wait on a gate file the test opens, so the timing
does not depend on the machine's load.
"""

from __future__ import annotations

import json
import signal
import time

import orjson

from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import (
    entry,
    finished,
    hotspot,
    manifest,
    no_inherited_devices,  # noqa: F401  (autouse fixture)
    no_overlap_per_gpu,
    pid_alive,
    records,
    start_hotspot,
    states,
    wait_until,
    write_recipes,
)


def started(rec, names=None) -> list[dict]:
    return [r for r in records(rec) if "started" in r and (names is None or r["name"] in names)]


def test_two_workers_one_killed(fake, tmp_path):
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    names = [f"k{i}" for i in range(6)]
    recipes = write_recipes(fake.root / "r.yaml", [entry(n, f"@{gate}", rec) for n in names])
    sw = fake.root / "sw"
    prep = hotspot("sweep", str(recipes), "-o", str(sw), "--slurm", "--dry-run")  # manifest, no run
    assert prep.returncode == 0, prep.stderr
    a = start_hotspot("sweep", "--worker", str(sw), "--gpus", "0,1")
    b = start_hotspot("sweep", "--worker", str(sw), "--gpus", "2,3")
    try:
        wait_until(lambda: len(started(rec)) == 4, timeout=60)
        # every write is a whole document: parse it many times while the workers claim and beat
        for _ in range(50):
            json.loads((sw / "sweep.json").read_bytes())
        doc = manifest(sw)
        a_id = f"{doc['workers'] and next(w for w in doc['workers'] if w.endswith(f':{a.pid}'))}"
        a_entries = [e for e in doc["entries"] if e["worker"] == a_id]
        assert len(a_entries) == 2 and {e["gpu"] for e in a_entries} == {0, 1}
        job_pids = [e["pid"] for e in a_entries]
        app_pids = [r["pid"] for r in started(rec, {e["name"] for e in a_entries})]
        a.kill()  # kill -9 mid-run
        a.wait(timeout=10)
        # its jobs die with it (parent-death signal), applications included
        wait_until(lambda: not any(pid_alive(p) for p in job_pids + app_pids), timeout=20)
        gate.write_text("")  # let everything else finish
        out, err = b.communicate(timeout=120)
        # a worker's exit code describes its own entries: b ran 4, all done (a's are not b's failure)
        assert b.returncode == 0, err
        assert "4 done, 2 interrupted" in err.splitlines()[-1]  # one counting, as in the summary
    finally:
        for p in (a, b):
            if p.poll() is None:
                p.kill()
                p.wait()
    st = json.loads(hotspot("sweep", "status", str(sw), "--format", "json").stdout)["data"]
    lost = {e["name"] for e in a_entries}
    assert {e["name"]: e["state"] for e in st["entries"]} == {n: "interrupted" if n in lost else "done" for n in names}
    runs = finished(rec)
    assert sorted(r["name"] for r in runs) == sorted(set(names) - lost)  # each finished entry ran once
    no_overlap_per_gpu(runs)
    # --retry interrupted takes the killed worker's entries back, nothing else runs again
    proc = hotspot("sweep", str(recipes), "-o", str(sw), "--gpus", "0,1", "--retry", "interrupted",
                   "--format", "json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)["data"]
    assert sorted(data["requeued"]) == sorted(lost) and sorted(r["name"] for r in data["ran"]) == sorted(lost)
    assert sorted(r["name"] for r in finished(rec)) == sorted(names)
    assert set(states(sw).values()) == {"done"}
    assert not list(sw.glob(".sweep.json.*.tmp"))


def test_ctrl_c_stops_jobs_marks_interrupted_and_resume_finishes(fake, tmp_path):
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    names = ["a", "b", "c", "d"]
    recipes = write_recipes(fake.root / "r.yaml", [entry(n, f"@{gate}", rec) for n in names])
    sw = fake.root / "sw"
    p = start_hotspot("sweep", str(recipes), "-o", str(sw), "--gpus", "0,1")
    try:
        wait_until(lambda: len(started(rec)) == 2, timeout=60)
        running = [e for e in manifest(sw)["entries"] if e["state"] == "running"]
        pids = [e["pid"] for e in running] + [r["pid"] for r in started(rec)]
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130 and time.monotonic() - t0 < 15
    last = err.strip().splitlines()[-1]
    assert last.startswith("hotspot sweep: interrupted: 2 interrupted, 2 pending"), err
    assert not any(pid_alive(pid) for pid in pids)  # jobs and applications are gone
    want = {e["name"]: "interrupted" for e in running}
    assert states(sw) == {n: want.get(n, "pending") for n in names}
    assert "finish it with the same command" in last
    gate.write_text("")
    # the same command again (no --retry): interrupted entries were never finished, so they run
    proc = hotspot("sweep", str(recipes), "-o", str(sw), "--gpus", "0,1")
    assert proc.returncode == 0, proc.stderr
    assert set(states(sw).values()) == {"done"}
    assert sorted(r["name"] for r in finished(rec)) == names


def test_second_ctrl_c_kills_at_once(fake, tmp_path):
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    # the app ignores SIGINT (and so does rocprofv3): only the second Ctrl-C's SIGKILL ends it
    recipes = write_recipes(fake.root / "r.yaml", [entry("stuck", f"@{gate}", rec, stubborn=True)])
    sw = fake.root / "sw"
    p = start_hotspot("sweep", str(recipes), "-o", str(sw), "--gpus", "0", "--format", "json")
    try:
        wait_until(lambda: len(started(rec)) == 1, timeout=60)
        app_pid = started(rec)[0]["pid"]
        p.send_signal(signal.SIGINT)
        time.sleep(0.5)
        assert p.poll() is None and pid_alive(app_pid)  # still waiting for the stubborn app
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=30)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130 and time.monotonic() - t0 < 5
    doc = orjson.loads(out)
    assert doc["ok"] is False and doc["error"]["code"] == "interrupted"
    wait_until(lambda: not pid_alive(app_pid), timeout=5)
    assert states(sw) == {"stuck": "interrupted"}
