"""Reading a sweep: `hotspot sweep status` (progress, workers, Slurm) and `hotspot sweep report`
(the cross-kernel table and the dashboard). Paths become absolute here; the manifest keeps them
relative to the sweep directory."""

from __future__ import annotations

import re
from pathlib import Path

from hotspot.errors import UsageError
from hotspot.result import JsonObject, Result
from hotspot.sweep import manifest as mf

FOLLOW_POLL_S = 2.0  # --wait looks again this often (sacct/squeue ask the controller each time)
PATH_FIELDS = ("log", "run_dir", "plan_json", "report_html", "dispatch")


def _entry_row(sweep_dir: Path, e: JsonObject) -> JsonObject:
    def absolute(d: JsonObject) -> JsonObject:
        return {**d, **{k: str(sweep_dir / d[k]) for k in PATH_FIELDS if d.get(k)}}

    row = {k: e.get(k) for k in ("name", "state", "attempts", "host", "gpu", "device", "pid", "worker", "started_at",
                                 "finished_at", "elapsed_s", "exit_code", "reason", "log", "run_dir",
                                 "report_html", "plan_json")}
    row.update(tags=e["recipe"].get("tags", []), att_attempts=e.get("att_attempts", []),
               summary=absolute(e["summary"]) if e.get("summary") else None,
               history=[absolute(h) for h in e.get("history", [])])
    return absolute(row)


def progress_data(sweep_dir: Path, doc: JsonObject) -> JsonObject:
    return {"sweep_dir": str(sweep_dir), "manifest": str(sweep_dir / mf.MANIFEST),
            "recipes": doc["recipes"], "counts": mf.counts(doc), "total": len(doc["entries"]),
            "entries": [_entry_row(sweep_dir, e) for e in doc["entries"]]}


def _describe_exit(code: int | None) -> str:
    if code is None:
        return ""
    if code > 128:
        return f"exit {code} (signal {code - 128})"
    return f"exit {code}"


def array_tasks(sweep_dir: Path, doc: JsonObject) -> tuple[list[JsonObject] | None, str]:
    """Each array task of the sweep's Slurm job: state, exit code, node, log, restarts, from sacct
    when accounting answers, else squeue (the exit code then from the task log), else the task
    logs alone. None when the sweep was not submitted."""
    from hotspot.sweep import slurm

    info = doc.get("slurm") or {}
    job = info.get("job_id")
    if not job:
        return None, "not submitted (--dry-run)" if info else "not a Slurm sweep"
    live, note = slurm.sacct(job)
    notes = [note]
    if live is None:
        live, note = slurm.squeue(job)
        notes.append(note)
    tasks = []
    for t in range(int(info.get("nodes") or 1)):
        log_path = sweep_dir / slurm.LOG_DIR / f"{job}_{t}.out"
        log = slurm.read_task_log(log_path) or {}
        row = dict((live or {}).get(str(t)) or {})
        if not row:  # neither accounting nor the controller knows it: what its log says
            state = ("NOT_STARTED" if not log else "ENDED" if log.get("ended") else
                     "STARTED")  # a start without an end line: still running, or killed with its node
            row = {"job_id": f"{job}_{t}", "state": state, "exit_code": None, "node": log.get("node"),
                   "reason": None, "source": "log" if log else "none"}
        if row.get("exit_code") is None and log.get("ended") and row["state"] not in slurm.ACTIVE:
            row["exit_code"] = log["exit_code"]
        row.update(task=str(t), log=str(log_path) if log else None, starts=log.get("starts", 0),
                   sigterm=bool(log.get("sigterm")))
        tasks.append(row)
    return tasks, " -> ".join(notes)


def task_problems(tasks: list[JsonObject], doc: JsonObject, sweep_dir: Path) -> list[JsonObject]:
    """Dead tasks, lost nodes and pending tasks that can never run, each with the command that fixes it."""
    from hotspot.sweep import slurm

    c = mf.counts(doc)
    left = c["pending"] + c["interrupted"] + c["running"]
    rerun = f"hotspot sweep {doc['recipes'].get('path')} -o {sweep_dir} --slurm"
    info = doc.get("slurm") or {}
    health = slurm.node_health(info.get("partition")) if any(t["state"] == "PENDING" for t in tasks) else None
    out = []
    for t in tasks:
        state, code, log = t["state"], t.get("exit_code"), t.get("log") or "(no log)"
        where = f" on {t['node']}" if t.get("node") else ""
        if state in slurm.LOST:
            out.append({"task": t["task"], "kind": "node-lost",
                        "message": f"task {t['job_id']}: {state}{where}: the node was lost with its entries",
                        "fix": f"its entries are re-queued by a rerun: {rerun}"})
        elif state == "PENDING" and (any(str(t.get("reason") or "").startswith(r) for r in slurm.NEVER_RUNS)
                                     or (health is not None and health[0] == 0 and health[1])):
            named = re.search(r"UnavailableNodes:(\S+)", str(t.get("reason")))
            nodes = named.group(1) if named else ",".join(n["node"] for n in (health or (0, []))[1])
            why = "; ".join(f"{n['node']} {n['state']}" + (f" ({n['reason']})" if n.get("reason") else "")
                            for n in (health or (0, []))[1])
            fix = (f"an admin resumes the node (scontrol update nodename={nodes} state=resume), or cancel it "
                   f"(hotspot sweep cancel {sweep_dir}) and resubmit elsewhere with --partition"
                   if nodes else f"cancel it (hotspot sweep cancel {sweep_dir}) and resubmit with other "
                   "--partition/--account/--time/--sbatch-arg values")
            out.append({"task": t["task"], "kind": "never-runs",
                        "message": f"task {t['job_id']}: pending and can never run as things are "
                                   f"({t.get('reason')}{'; nodes: ' + why if why else ''})", "fix": fix})
        elif state not in slurm.ACTIVE and code is not None and code not in slurm.ENTRY_OUTCOME_CODES \
                and (left or code <= 128):  # a task stopped by a signal after the work was done is fine
            why = ("stopped by SIGTERM (scancel or the time limit)" if code == 143 or t.get("sigterm")
                   else f"died ({_describe_exit(code)})")
            fix = f"read {log}, fix the cause" + (f", then run the {left} entries left: {rerun}" if left else "")
            out.append({"task": t["task"], "kind": "task-died", "message": f"task {t['job_id']} {why}{where}",
                        "fix": fix})
        elif state in ("FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE", "PREEMPTED") and code is None:
            out.append({"task": t["task"], "kind": "task-died", "message": f"task {t['job_id']}: {state}{where}",
                        "fix": f"read {log}" + (f", then run the {left} entries left: {rerun}" if left else "")})
    if left and tasks and all(t["state"] not in slurm.ACTIVE and t["state"] != "STARTED" for t in tasks) \
            and not out:
        out.append({"task": None, "kind": "array-ended",
                    "message": f"the array has ended with {left} entries not done",
                    "fix": f"run them: {rerun}"})
    return out


def sweep_status(sweep_dir: Path, command: str = "sweep status") -> Result:
    from hotspot.sweep.outcome import SweepResult

    sweep_dir = sweep_dir.resolve()
    doc = mf.read(sweep_dir)
    mf.reclaim_stale(doc)  # shown as they would be taken over (not written: status only reads)
    data = progress_data(sweep_dir, doc)
    workers = [{"id": wid, **{k: w.get(k) for k in ("host", "pid", "gpus", "state", "heartbeat_at", "slurm")}}
               for wid, w in sorted((doc.get("workers") or {}).items())]
    data["workers"] = workers
    info = doc.get("slurm")
    warnings = []
    problems: list[JsonObject] = []
    if info:
        tasks, note = array_tasks(sweep_dir, doc)
        seen = sorted({(w["slurm"] or {}).get("slurm_array_task_id", "") for w in workers if w.get("slurm")} - {""},
                      key=int)
        data["slurm"] = {**info, "tasks": tasks, "source": note, "tasks_seen_in_manifest": seen}
        if tasks is not None:
            problems = task_problems(tasks, doc, sweep_dir)
            if all(t["source"] in ("log", "none") for t in tasks) and info.get("job_id"):
                warnings.append(f"Slurm state unavailable ({note}); read from the task logs")
    else:
        data["slurm"] = None
    c = data["counts"]
    left = c["pending"] + c["interrupted"] + c["running"]
    for w in workers:  # a lost node outside Slurm's view: its worker's heartbeat stopped
        if w.get("state") == "gone" and left and not any(p["kind"] == "node-lost" for p in problems):
            problems.append({"task": (w.get("slurm") or {}).get("slurm_array_task_id"), "kind": "worker-gone",
                             "message": f"worker {w['id']} stopped without finishing (killed, or its node lost)",
                             "fix": f"its entries are re-queued by a rerun: hotspot sweep "
                                    f"{doc['recipes'].get('path')} -o {sweep_dir}"})
    data["problems"] = problems
    result = SweepResult(command, data, warnings)
    result.exit_code = 6 if problems else 0
    data["exit_code"] = result.exit_code
    return result


def sweep_active(data: JsonObject) -> bool:
    """Is anything still going to happen: an entry running, or a task of the array queued or running."""
    from hotspot.sweep import slurm

    if data["counts"]["running"]:
        return True
    tasks = (data.get("slurm") or {}).get("tasks")
    if tasks is None:
        return any(w.get("state") == "running" for w in data.get("workers") or [])
    stuck = {p["task"] for p in data.get("problems") or [] if p["kind"] == "never-runs"}
    return any(t["state"] in slurm.ACTIVE and t["task"] not in stuck for t in tasks)


def follow(sweep_dir: Path, poll_s: float = FOLLOW_POLL_S) -> Result:
    """`--wait`: the live status line until nothing more will happen; then the status, exiting with
    the sweep's outcome (0 all done, 6 failed/interrupted/left undone, 4 empty)."""
    import time

    from hotspot.diagnostics import progress
    from hotspot.render.sweep import describe_counts
    from hotspot.sweep.outcome import exit_code

    last = ""
    while True:
        result = sweep_status(sweep_dir)
        data = result.data
        tasks = (data.get("slurm") or {}).get("tasks") or []
        line = f"[sweep] {describe_counts(data['counts'])}" + (
            "; tasks: " + ", ".join(f"{t['task']} {t['state'].lower()}" for t in tasks) if tasks else "")
        if line != last:
            progress(line)
            last = line
        if not sweep_active(data):
            break
        time.sleep(poll_s)
    states = {e["state"] for e in data["entries"]}
    code = exit_code(states)
    if states & {"pending", "running"}:
        code = 6  # the array ended (or can never run) with work left
    result.exit_code = max(code, result.exit_code)
    data["exit_code"] = result.exit_code
    return result


def cancel(sweep_dir: Path) -> Result:
    from hotspot.errors import InputError
    from hotspot.sweep import slurm
    from hotspot.sweep.outcome import SweepResult

    sweep_dir = sweep_dir.resolve()
    doc = mf.read(sweep_dir)
    job = (doc.get("slurm") or {}).get("job_id")
    if not job:
        raise InputError(f"{sweep_dir}: no Slurm job to cancel (the sweep was not submitted)",
                         "stop a local sweep with Ctrl-C in its terminal")
    before, _ = array_tasks(sweep_dir, doc)
    slurm.scancel(job)
    data = {"sweep_dir": str(sweep_dir), "job_id": job, "cancelled": True,
            "tasks_before": before, "counts": mf.counts(doc),
            "next": f"hotspot sweep {doc['recipes'].get('path')} -o {sweep_dir} --slurm (re-queues what was "
                    "interrupted)"}
    return SweepResult("sweep cancel", data, [])


def _sort_key(row: JsonObject) -> tuple:
    s = row.get("summary") or {}
    head = s.get("headroom_pct")
    return (head is None, -(head or 0.0), row["name"])


def _slurm_by_entry(sweep_dir: Path, doc: JsonObject, rows: list[JsonObject]) -> list[JsonObject] | None:
    """Each row's array task (from its worker's Slurm ids), that task's state and node."""
    tasks, _ = array_tasks(sweep_dir, doc)
    if tasks is None:
        return None
    by_task = {t["task"]: t for t in tasks}
    workers = doc.get("workers") or {}
    for row in rows:
        ids = (workers.get(row.get("worker") or "") or {}).get("slurm") or {}
        t = by_task.get(ids.get("slurm_array_task_id") or "")
        row["slurm"] = None if t is None else {"task": t["task"], "job_id": t["job_id"], "state": t["state"],
                                               "node": t.get("node"), "log": t.get("log")}
    return tasks


def sweep_report(sweep_dir: Path, html: str | None = None, force: bool = False) -> Result:
    from hotspot.sweep.outcome import SweepResult

    sweep_dir = sweep_dir.resolve()
    doc = mf.read(sweep_dir)
    rows = sorted((_entry_row(sweep_dir, e) for e in doc["entries"]), key=_sort_key)
    tasks = _slurm_by_entry(sweep_dir, doc, rows)
    data = {"sweep_dir": str(sweep_dir), "recipes": doc["recipes"], "counts": mf.counts(doc),
            "total": len(rows), "sorted_by": "summary.headroom_pct (descending; entries without a plan last)",
            "entries": rows, "slurm_tasks": tasks, "html": None}
    if html is not None:
        from hotspot.outfile import resolve_output, write_output
        from hotspot.sweep.dashboard import render_dashboard

        target = resolve_output(html, "sweep-dashboard.html", force, inputs=[sweep_dir / mf.MANIFEST])
        if target is None:
            raise UsageError("-o needs a file path", "e.g. -o dashboard.html")
        page = render_dashboard(data, target.resolve().parent).encode("utf-8")
        write_output(target, lambda fh: fh.write(page))
        data["html"] = str(target.resolve())
    return SweepResult("sweep report", data, [])
