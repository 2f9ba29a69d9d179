"""What `sweep status` shows (issue 36 point 4, display side): the GPU column names the physical
device (two workers' GPU 0 are devices 0 and 2), a pending reason only on a task still pending, and
"run the N left" only when no task of the array is queued or running."""

from __future__ import annotations

from pathlib import Path

import pytest

from hotspot.sweep import manifest as mf
from hotspot.sweep_records import EntryStatus, TaskRow, WorkerInfo
from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import entry, hotspot, no_inherited_devices, write_recipes  # noqa: F401


@pytest.fixture
def submitted(fake, tmp_path) -> Path:
    """A three-entry sweep submitted as job 41 with three array tasks: entry a done by task 0 on its
    GPU 0 = device 0, b running in task 1 on its GPU 0 = device 2, c pending."""
    recipes = write_recipes(fake.root / "r.yaml", [entry(n, 0.0, tmp_path / "rec") for n in "abc"])
    sw = fake.root / "sw"
    assert hotspot("sweep", str(recipes), "--slurm", "--dry-run", "--nodes", "3", "-o", str(sw)).returncode == 0
    with mf.locked(sw) as doc:
        doc.slurm = mf.SlurmJob("41", "sweep.sbatch", 3, mf.utc_iso(), False, partition=None)
        for task, device in (("0", "0"), ("1", "2")):
            wid = f"n1:{100 + int(task)}"
            doc.workers[wid] = WorkerInfo("n1", 100 + int(task), [0], mf.utc_iso(), {"slurm_array_job_id": "41",
                                          "slurm_array_task_id": task}, heartbeat_unix=9e9, devices=[device])
        a, b, _ = doc.entries
        mf.set_state(a, EntryStatus.DONE, host="n1", gpu=0, device="0", worker="n1:100", elapsed_s=1.0)
        mf.set_state(b, EntryStatus.RUNNING, host="n1", gpu=0, device="2", worker="n1:101")
    return sw


def _status(sw: Path, monkeypatch, tasks: dict[str, TaskRow], formats: dict | None = None) -> tuple[str, list]:
    """The status text and problems; `formats`, when given, receives the JSON document and markdown."""
    import json

    from hotspot.render.sweep import render_status, render_status_markdown
    from hotspot.sweep import slurm, views

    monkeypatch.setattr(slurm, "sacct", lambda jobs: ({"41": tasks}, "sacct"))
    monkeypatch.setattr(slurm, "node_health", lambda partition: None)
    monkeypatch.setenv("COLUMNS", "250")
    monkeypatch.setattr(mf, "reclaim_stale", lambda doc: [])  # the workers' pids are not ours
    result = views.sweep_status(sw)
    if formats is not None:
        formats["json"] = json.loads(result.to_json())
        formats["markdown"] = render_status_markdown(result)
    return render_status(result), result.data.problems


def _rows(text: str, first: str) -> dict[str, list[str]]:
    """The rows of the table whose header starts with `first`, by their first cell."""
    lines = text.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.split()[:1] == [first])
    out = {}
    for ln in lines[head + 2:]:
        if not ln.strip() or ln.startswith(("Slurm", "problem", "sweep")) or ln.startswith("-"):
            break
        out[ln.split()[0]] = ln.split()
    return out


def test_gpu_column_shows_physical_devices_and_reasons_only_on_pending_tasks(submitted, monkeypatch):
    tasks = {"0": TaskRow("41_0", "COMPLETED", 0, "n1", "BeginTime", "sacct"),
             "1": TaskRow("41_1", "RUNNING", None, "n1", "None", "sacct"),
             "2": TaskRow("41_2", "PENDING", None, None, "Priority", "sacct")}
    formats: dict = {}
    text, problems = _status(submitted, monkeypatch, tasks, formats)
    entries = _rows(text, "entry")
    assert entries["a"][:4] == ["a", "done", "n1", "0"] and entries["b"][:4] == ["b", "running", "n1", "2"]
    workers = _rows(text, "worker")
    assert sorted(r[2] for r in workers.values()) == ["0", "2"]  # each worker's GPUs as devices
    assert "BeginTime" not in text  # a completed task's stale reason
    assert "Priority" in _rows(text, "task")["41_2"]  # the pending task's own
    assert problems == []
    # the data itself, not only the text: JSON and markdown carry the reason on the pending task only
    doc = formats["json"]
    assert doc["schema_version"] and doc["command"] == "sweep status"
    assert {t["job_id"]: t["reason"] for t in doc["data"]["slurm"]["tasks"]} == {
        "41_0": None, "41_1": None, "41_2": "Priority"}
    assert "BeginTime" not in formats["markdown"] and "Priority" in formats["markdown"]


def test_run_the_rest_is_suggested_only_when_nothing_of_the_array_is_active(submitted, monkeypatch):
    died = TaskRow("41_0", "FAILED", 1, "n1", None, "sacct")
    _, problems = _status(submitted, monkeypatch, {"0": died, "1": TaskRow("41_1", "RUNNING", None, "n1", None, "sacct")})
    (p,) = problems
    assert p.kind == "task-died" and "entries left:" not in p.fix
    assert "still active" in p.fix and "--wait" in p.fix
    # every task of the array listed (an unlisted one is still coming moments after sbatch)
    done = TaskRow("41_2", "COMPLETED", 0, "n1", None, "sacct")
    _, problems = _status(submitted, monkeypatch, {"0": died, "1": TaskRow("41_1", "COMPLETED", 0, "n1", None, "sacct"),
                                                   "2": done})
    (p,) = problems
    assert "then run the 2 entries left:" in p.fix and p.fix.endswith("--slurm")
    # a task pending for good is not activity: the rest is to be run now
    stuck = TaskRow("41_1", "PENDING", None, None, "PartitionConfig", "sacct")
    _, problems = _status(submitted, monkeypatch, {"0": died, "1": stuck, "2": done})
    assert "then run the 2 entries left:" in next(p for p in problems if p.kind == "task-died").fix


def test_a_task_still_coming_or_running_in_another_array_counts_as_active(submitted, monkeypatch):
    """The merged rule: a task sbatch accepted that no source lists yet (SUBMITTED) is active; a
    task pending for good in an earlier array does not hide the current array's running task of
    the same id (task ids repeat across a sweep's arrays)."""
    from hotspot.sweep import slurm, views

    died = TaskRow("41_0", "FAILED", 1, "n1", None, "sacct")
    # task 1 unlisted moments after sbatch: SUBMITTED, still to come
    _, problems = _status(submitted, monkeypatch, {"0": died, "2": TaskRow("41_2", "COMPLETED", 0, "n1", None, "sacct")})
    (p,) = problems
    assert "still active" in p.fix and "entries left:" not in p.fix
    monkeypatch.setattr(slurm, "node_health", lambda partition: None)
    doc = mf.read(submitted)
    rows = [TaskRow("40_1", "PENDING", None, None, "PartitionConfig", "sacct", task="1"),
            TaskRow("41_0", "FAILED", 1, "n1", None, "sacct", task="0"),
            TaskRow("41_1", "RUNNING", None, "n1", None, "sacct", task="1")]
    fixes = {p.kind: p.fix for p in views.task_problems(rows, doc, submitted)}
    assert set(fixes) == {"never-runs", "task-died"}
    assert "still active" in fixes["task-died"] and "entries left:" not in fixes["task-died"]
    rows[2] = TaskRow("41_1", "COMPLETED", 0, "n1", None, "sacct", task="1")
    fixes = {p.kind: p.fix for p in views.task_problems(rows, doc, submitted)}
    assert "then run the 2 entries left:" in fixes["task-died"]


def _columns(lines: list[str]) -> tuple[int, list[tuple[int, int]]]:
    """The table's rule line and each column's span (from its run of dashes)."""
    import re

    rule = next(i for i, ln in enumerate(lines) if ln.startswith("---"))
    return rule, [(m.start(), m.end()) for m in re.finditer(r"-+", lines[rule])]


@pytest.mark.parametrize("width", [80, 100, 120])
def test_text_report_fits_the_width_by_choosing_columns_never_cutting_a_word(fake, tmp_path, width):
    import json
    import os

    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [
        entry("gemm_bf16_m8192_n8192_k8192_batched", 0.0, rec, kernel=None), entry("reduce_rows", 0.0, rec),
        entry("broken", 0.0, rec, code=5)])
    sw = fake.root / "sw"
    assert hotspot("sweep", str(recipes), "--gpus", "0-2", "-o", str(sw)).returncode == 6
    doc = json.loads(hotspot("sweep", "report", str(sw), "--format", "json").stdout)["data"]
    text = hotspot("sweep", "report", str(sw), env={**os.environ, "COLUMNS": str(width)}).stdout
    lines = text.splitlines()
    rule, spans = _columns(lines)
    table = lines[rule - 1:rule + 1 + len(doc["entries"])]
    assert max(len(ln) for ln in table) <= width, text
    headers = [lines[rule - 1][a:b].strip() for a, b in spans]
    assert headers[:2] == ["entry", "state"] and headers[-2:] == ["top plan item", "headroom"]
    # a long entry name leaves no room for the kernel at 80 columns: left out whole, not cut
    assert ("kernel" in headers) == (width >= 100)
    if width >= 100:
        assert len(headers) >= 6  # wider terminals show more columns, never wider cells cut
    hidden = [h for h in ("kernel", "arch", "avg ns", "occ t/a", "top stall", "hottest line", "collapse")
              if h not in headers]
    assert (f"(not shown at this width: {', '.join(hidden)}" in " ".join(text.split())) == bool(hidden)
    by = {e["name"]: e for e in doc["entries"]}
    for ln in lines[rule + 1:rule + 1 + len(doc["entries"])]:
        ends = [a for a, _ in spans[1:]] + [len(ln)]
        cells = dict(zip(headers, (ln[a:end].strip() for (a, _), end in zip(spans, ends))))
        e = by[cells["entry"]]
        s = e["summary"]
        assert cells["state"] == e["state"]
        for h, cell in cells.items():  # a cell is whole: an ellipsis only elides template arguments
            assert "…" not in cell.replace("<…>", ""), (h, cell)
        if s is None:
            continue
        if "kernel" in cells:
            assert s["kernel"].find(cells["kernel"].split("<")[0]) in range(0, 6)  # its name, `void ` aside
        assert cells["top plan item"] == s["top_plan_item"]["id"]
        assert cells["headroom"] == f"{s['headroom_pct']:.0f}%"
        if "top stall" in cells:
            assert cells["top stall"] == f"{s['top_stall_category']} {100 * s['top_stall_share']:.0f}%"
        if "avg ns" in cells:
            assert cells["avg ns"] == f"{s['duration_ns']:,.0f}"
