"""Reading a sweep: `hotspot sweep status` (progress, workers, Slurm) and `hotspot sweep report`
(the cross-kernel table and the dashboard). Paths become absolute here; the manifest keeps them
relative to the sweep directory."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from hotspot.errors import UsageError
from typing import TYPE_CHECKING, cast

from hotspot.sweep import manifest as mf
from hotspot.sweep_records import (CancelData, EntryRow, EntryState, EntryStatus, LateResult, Manifest, ProgressData,
                                 ReportData, ReportRow, Requeued, SlurmCell, SlurmJob, SlurmStatus, StatusData,
                                 TaskProblem, TaskRow, WorkerRow, WorkerStatus)

if TYPE_CHECKING:
    from hotspot.result import Result
    from hotspot.sweep_records import Submission
    from hotspot.sweep.outcome import SweepResult

FOLLOW_POLL_S = 2.0  # --wait looks again this often (sacct/squeue ask the controller each time)


def _entry_row(sweep_dir: Path, e: EntryState) -> EntryRow:
    def absolute(path: str | None) -> str | None:
        return str(sweep_dir / path) if path else path

    def past(h: Requeued | LateResult) -> Requeued | LateResult:
        if isinstance(h, LateResult):
            return h
        return replace(h, log=absolute(h.log), run_dir=absolute(h.run_dir), plan_json=absolute(h.plan_json),
                       report_html=absolute(h.report_html), dispatch=absolute(h.dispatch))

    s = e.summary
    return EntryRow(e.name, e.state, e.attempts, e.host, e.gpu, e.device, e.pid, e.worker, e.started_at,
                    e.finished_at, e.elapsed_s, e.exit_code, e.reason, absolute(e.log), absolute(e.run_dir),
                    absolute(e.report_html), absolute(e.plan_json), list(e.recipe.tags), e.att_attempts,
                    replace(s, dispatch=absolute(s.dispatch)) if s else None, [past(h) for h in e.history])


def progress_data(sweep_dir: Path, doc: Manifest) -> ProgressData:
    return ProgressData(str(sweep_dir), str(sweep_dir / mf.MANIFEST), doc.recipes, mf.counts(doc),
                        len(doc.entries), [_entry_row(sweep_dir, e) for e in doc.entries])


def _resume_command(doc: Manifest, sweep_dir: Path) -> str:
    return f"hotspot sweep {doc.recipes.path} -o {sweep_dir}"


def _describe_exit(code: int | None) -> str:
    if code is None:
        return ""
    if code > 128:
        return f"exit {code} (signal {code - 128})"
    return f"exit {code}"


# A task sbatch accepted that neither accounting nor the controller lists yet (sacct lags sbatch by
# about a second, a busy controller more): "SUBMITTED" and still to come for this long, then
# NOT_STARTED (the job is gone without a trace).
SUBMIT_GRACE_S = 60.0


def _seconds_since(iso: str | None) -> float | None:
    from datetime import datetime, timezone

    if not iso:
        return None
    try:
        return (datetime.now(timezone.utc) - datetime.fromisoformat(iso.replace("Z", "+00:00"))).total_seconds()
    except ValueError:
        return None


def _merge(acct: TaskRow | None, live: TaskRow | None) -> TaskRow | None:
    """One task from accounting and the controller: the controller's state while either says the
    task is active (accounting lags it), accounting's once both say it ended (it has the exit
    code); the earlier runs from accounting (-D) either way."""
    from hotspot.sweep import slurm

    if acct is None or live is None:
        one = acct or live
        return replace(one) if one is not None else None
    if live.state in slurm.ACTIVE or acct.state in slurm.ACTIVE:
        return replace(live, earlier=list(acct.earlier))
    return replace(acct)


SlurmAnswer = tuple[dict[str, dict[str, TaskRow]] | None, str]  # per job, per task; or None and why


def _job_tasks(sweep_dir: Path, job: SlurmJob, accounting: SlurmAnswer, queue: SlurmAnswer
               ) -> tuple[list[TaskRow], list[str]]:
    """Each array task of one submission (see array_tasks) and where its states came from, from
    the sacct and squeue answers for every array followed."""
    from hotspot.sweep import slurm

    assert job.job_id is not None
    acct = None if accounting[0] is None else accounting[0].get(job.job_id, {})
    notes = [accounting[1] + (" (empty: not recorded yet)" if acct == {} else "")]
    live = None if queue[0] is None else queue[0].get(job.job_id, {})
    notes.append(queue[1] if live is None else "squeue" if live else slurm.LEFT_QUEUE)
    answered = acct is not None or live is not None
    age = _seconds_since(job.submitted_at)
    tasks = []
    for t in range(job.nodes or 1):
        log_path = sweep_dir / slurm.LOG_DIR / f"{job.job_id}_{t}.out"
        log = slurm.read_task_log(log_path)
        known = _merge((acct or {}).get(str(t)), (live or {}).get(str(t)))
        if known is None:  # neither accounting nor the controller knows it: what its log says
            # a start without an end line: GONE when squeue answered without it (it would list the
            # task were it queued or running), else STARTED (still running, or killed with its node)
            state = ("ENDED" if log and log.ended else
                     (slurm.GONE if live is not None else "STARTED") if log else
                     "SUBMITTED" if answered and age is not None and age < SUBMIT_GRACE_S else "NOT_STARTED")
            row = TaskRow(f"{job.job_id}_{t}", state, None, log.node if log else None, None, "log" if log else "none")
        else:
            row = known
        # The log's end line holds the exit code the shell saw (137 after kill -9, 143 after
        # SIGTERM); sacct gives the signal's number or 0 for a cancelled task: the log wins.
        if log and log.ended and log.exit_code is not None and row.state not in slurm.ACTIVE:
            row.exit_code = log.exit_code
        if row.state not in slurm.WAITING:  # a reason explains a wait; on any other task it is stale
            row.reason = None
        row.task, row.log = str(t), str(log_path) if log else None
        row.starts, row.sigterm = (log.starts, log.sigterm) if log else (0, False)
        tasks.append(row)
    return tasks, notes


def array_tasks(sweep_dir: Path, doc: Manifest) -> tuple[list[TaskRow] | None, str]:
    """Each array task of the sweep's Slurm job: state, exit code, node, log, restarts, earlier
    runs, from the controller (squeue) and accounting (sacct -D) merged, else the task logs alone;
    the exit code from the task log when it has one. Earlier submissions of the sweep come first,
    as long as one of their tasks is still pending or running. None when the sweep was not
    submitted."""
    from hotspot.sweep import slurm

    info = doc.slurm
    if info is None or not info.job_id:
        return None, "not submitted (--dry-run)" if info else "not a Slurm sweep"
    tasks: list[TaskRow] = []
    earlier = earlier_jobs(info)
    # one squeue for every array the sweep has had, one sacct for those followed: the current one
    # and the earlier ones with a task still queued or running
    queue = slurm.squeue(list(dict.fromkeys([*(j.job_id for j in earlier if j.job_id), info.job_id])))
    active = slurm.active_in(queue[0]) if queue[0] else {}
    follow = [old for old in earlier if old.job_id in active]
    accounting = slurm.sacct(list(dict.fromkeys([*(j.job_id for j in follow if j.job_id), info.job_id])))
    for old in follow:
        tasks += _job_tasks(sweep_dir, old, accounting, queue)[0]
    rows, notes = _job_tasks(sweep_dir, info, accounting, queue)
    return tasks + rows, " + ".join(notes)


def earlier_jobs(info: SlurmJob) -> list[SlurmJob]:
    """The sweep's submissions before the current one that reached Slurm (not --dry-run)."""
    return [j for j in info.earlier if j.job_id and j.job_id != info.job_id]


def task_problems(tasks: list[TaskRow], doc: Manifest, sweep_dir: Path) -> list[TaskProblem]:
    """Dead tasks, lost nodes and pending tasks that can never run, each with the command that fixes it."""
    from hotspot.sweep import slurm

    c = mf.counts(doc)
    left = c["pending"] + c["interrupted"] + c["running"]
    rerun = f"{_resume_command(doc, sweep_dir)} --slurm"
    partition = doc.slurm.partition if doc.slurm else None
    health = slurm.node_health(partition) if any(t.state == "PENDING" for t in tasks) else None
    down = health[1] if health else []
    # "run the N left" only when nothing of the sweep is active: while another task of the array is
    # queued or running (a pending one that can never run aside), a rerun would run beside it
    # (by JOB_TASK: task ids repeat across the sweep's arrays). A task still coming (SUBMITTED, or
    # STARTED per its log with neither source listing it) may run entries: counted as active.
    stuck = {t.job_id for t in tasks if t.state == "PENDING" and slurm.never_runs(t.reason)}
    active = any((t.state in slurm.ACTIVE or t.state in slurm.COMING) and t.job_id not in stuck
                 for t in tasks)
    then = (f", then run the {left} entries left: {rerun}" if left and not active else
            f"; other tasks of the array are still active: once they end (hotspot sweep status {sweep_dir} "
            f"--wait), run what is left: {rerun}" if left else "")
    out = []
    for t in tasks:
        state, code, log = t.state, t.exit_code, t.log or "(no log)"
        where = f" on {t.node}" if t.node else ""
        if state in slurm.LOST:
            out.append(TaskProblem(t.task, "node-lost", f"task {t.job_id}: {state}{where}: the node was lost with its entries",
                                   f"its entries are re-queued by a rerun: {rerun}"))
        elif state == slurm.GONE:
            out.append(TaskProblem(t.task, "node-lost", f"task {t.job_id}: its run{where} never ended and Slurm no longer "
                                   f"lists it (killed with its node, or its job step killed)",
                                   f"read {log}; its entries are re-queued by a rerun: {rerun}"))
        elif state == "PENDING" and (slurm.never_runs(t.reason)
                                     or (health is not None and health[0] == 0 and bool(health[1]))):
            named = re.search(r"UnavailableNodes:(\S+)", t.reason or "")
            nodes = named.group(1) if named else ",".join(n.node for n in down)
            why = "; ".join(f"{n.node} {n.state}" + (f" ({n.reason})" if n.reason else "") for n in down)
            said = "; ".join(x for x in (t.reason, f"nodes: {why}" if why else "") if x) or "no usable node"
            if (t.reason or "").startswith(slurm.HELD):
                fix = (f"release it (scontrol release {t.job_id}; a JobHeldAdmin hold only an admin releases), "
                       f"or cancel it (hotspot sweep cancel {sweep_dir})")
            elif nodes:
                fix = (f"an admin resumes the node (scontrol update nodename={nodes} state=resume), or cancel it "
                       f"(hotspot sweep cancel {sweep_dir}) and resubmit elsewhere with --partition")
            elif (t.reason or "").startswith(("QOS", "Assoc")):
                fix = (f"cancel it (hotspot sweep cancel {sweep_dir}) and resubmit within the limit "
                       "(sacctmgr show qos / show assoc lists them: fewer --cpus-per-task, GPUs or --time), "
                       "or with another --account/--sbatch-arg=--qos=...")
            else:
                fix = (f"cancel it (hotspot sweep cancel {sweep_dir}) and resubmit with other "
                       "--partition/--account/--time/--cpus-per-task/--sbatch-arg values")
            out.append(TaskProblem(t.task, "never-runs",
                                   f"task {t.job_id}: pending and can never run as things are ({said})", fix))
        elif state not in slurm.ACTIVE and code is not None and code not in slurm.ENTRY_OUTCOME_CODES \
                and (left or code <= 128):  # a task stopped by a signal after the work was done is fine
            why = ("stopped by SIGTERM (scancel or the time limit)" if code == 143 or t.sigterm
                   else f"died ({_describe_exit(code)})")
            fix = f"read {log}, fix the cause{then}"
            out.append(TaskProblem(t.task, "task-died", f"task {t.job_id} {why}{where}", fix))
        elif state in ("FAILED", "CANCELLED", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE", "PREEMPTED") and code is None:
            out.append(TaskProblem(t.task, "task-died", f"task {t.job_id}: {state}{where}",
                                   f"read {log}{then}"))
    if left and tasks and all(t.state not in slurm.ACTIVE and t.state not in slurm.COMING for t in tasks) \
            and not out:
        out.append(TaskProblem(None, "array-ended", f"the array has ended with {left} entries not done",
                               f"run them: {rerun}"))
    return out


def sweep_status(sweep_dir: Path, command: str = "sweep status") -> SweepResult:
    from hotspot.sweep.outcome import SweepResult

    sweep_dir = sweep_dir.resolve()
    doc = mf.read(sweep_dir)
    mf.reclaim_stale(doc)  # shown as they would be taken over (not written: status only reads)
    progress = progress_data(sweep_dir, doc)
    workers = [WorkerRow(wid, w.host, w.pid, w.gpus, w.state, w.heartbeat_at, w.slurm, w.devices)
               for wid, w in sorted(doc.workers.items())]
    data = StatusData(**vars(progress), workers=workers)
    info = doc.slurm
    warnings = []
    if info:
        tasks, note = array_tasks(sweep_dir, doc)
        seen = sorted({w.array_task_id or "" for w in workers} - {""}, key=int)
        data.slurm = SlurmStatus(**vars(info), tasks=tasks, source=note, tasks_seen_in_manifest=seen)
        if tasks is not None:
            data.problems = task_problems(tasks, doc, sweep_dir)
            if all(t.source in ("log", "none") for t in tasks) and info.job_id:
                warnings.append(f"Slurm state unavailable ({note}); read from the task logs")
    c = data.counts
    left = c["pending"] + c["interrupted"] + c["running"]
    for w in workers:  # a lost node outside Slurm's view: its worker's heartbeat stopped
        if w.state == WorkerStatus.GONE and left and not any(p.kind == "node-lost" for p in data.problems):
            data.problems.append(TaskProblem(
                w.array_task_id, "worker-gone",
                f"worker {w.id} stopped without finishing (killed, or its node lost)",
                f"its entries are re-queued by a rerun: {_resume_command(doc, sweep_dir)}"))
    result = SweepResult(command, data, warnings)
    result.exit_code = data.exit_code = 6 if data.problems else 0
    return result


def sweep_active(data: StatusData) -> bool:
    """Is anything still going to happen: an entry running, or a task of the array queued or running."""
    from hotspot.sweep import slurm

    if data.counts["running"]:
        return True
    tasks = data.slurm.tasks if data.slurm else None
    if tasks is None:
        return any(w.state == WorkerStatus.RUNNING for w in data.workers)
    # a never-runs message begins "task JOB_TASK:" (task ids repeat across the sweep's arrays)
    stuck = {p.message.split(":")[0] for p in data.problems if p.kind == "never-runs"}
    return any((t.state in slurm.ACTIVE or t.state == "SUBMITTED") and f"task {t.job_id}" not in stuck
               for t in tasks)


def follow_submission(submitted: Result[object], poll_s: float | None = None) -> SweepResult:
    """`hotspot sweep --slurm --wait`: follow the array `submitted` (run_sweep's Result) to its end;
    the Result of `sweep` holds the final status and the submission, with the sweep's outcome."""
    from hotspot.sweep_records import Followed, SubmittedWork
    from hotspot.sweep.outcome import SweepResult

    sub = cast("Submission", submitted.data)  # commands/sweep.py follows a Submission only
    if sub.slurm is None:
        raise ValueError("--wait follows a submitted Slurm array; this submission has none")
    status = follow(Path(sub.sweep_dir), FOLLOW_POLL_S if poll_s is None else poll_s)
    work = SubmittedWork(sub.slurm, sub.created, sub.recipes_diff, sub.reclaimed, sub.requeued, sub.to_do)
    data = Followed(**vars(status.data), submitted=work)
    return SweepResult("sweep", data, list(dict.fromkeys(submitted.warnings + status.warnings)),
                       status.exit_code)


def follow(sweep_dir: Path, poll_s: float = FOLLOW_POLL_S) -> SweepResult:
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
        assert isinstance(data, StatusData)  # sweep_status's
        tasks = (data.slurm.tasks if data.slurm else None) or []
        line = f"[sweep] {describe_counts(data.counts)}" + (
            "; tasks: " + ", ".join(f"{t.task} {t.state.lower()}" for t in tasks) if tasks else "")
        if line != last:
            progress(line)
            last = line
        if not sweep_active(data):
            break
        time.sleep(poll_s)
    states: set[str] = {e.state for e in data.entries}
    code = exit_code(states)
    if states & {EntryStatus.PENDING, EntryStatus.RUNNING}:
        code = 6  # the array ended (or can never run) with work left
    result.exit_code = data.exit_code = max(code, result.exit_code)
    return result


def cancel(sweep_dir: Path) -> SweepResult:
    from hotspot.errors import InputError
    from hotspot.sweep import slurm
    from hotspot.sweep.outcome import SweepResult

    sweep_dir = sweep_dir.resolve()
    doc = mf.read(sweep_dir)
    job = doc.slurm.job_id if doc.slurm else None
    if not job:
        raise InputError(f"{sweep_dir}: no Slurm job to cancel (the sweep was not submitted)",
                         "stop a local sweep with Ctrl-C in its terminal")
    before, _ = array_tasks(sweep_dir, doc)
    # every array of the sweep that still has a task queued or running (an earlier submission
    # too), then the current one whatever its state
    jobs = [j for j in dict.fromkeys(t.job_id.split("_")[0] for t in before or [] if t.state in slurm.ACTIVE)
            if j != job] + [job]
    for j in jobs:
        slurm.scancel(j)
    data = CancelData(str(sweep_dir), job, True, before, mf.counts(doc),
                      f"{_resume_command(doc, sweep_dir)} --slurm (re-queues what was interrupted)", jobs)
    return SweepResult("sweep cancel", data, [])


def _sort_key(row: EntryRow) -> tuple[bool, float, str]:
    head = row.summary.headroom_pct if row.summary else None
    return (head is None, -(head or 0.0), row.name)


def _with_tasks(doc: Manifest, rows: list[EntryRow], tasks: list[TaskRow]) -> list[EntryRow]:
    """Each row with its array task (from its worker's Slurm ids): that task's state and node."""
    by_task = {(t.job_id.split("_")[0], t.task): t for t in tasks}  # task ids repeat across the sweep's arrays
    out: list[EntryRow] = []
    for row in rows:
        w = doc.workers.get(row.worker or "")
        t = by_task.get(((w.array_job_id or "") if w else "", (w.array_task_id or "") if w else ""))
        cell = None if t is None else SlurmCell(t.task, t.job_id, t.state, t.node, t.log)
        out.append(ReportRow(**vars(row), slurm=cell))
    return out


def sweep_report(sweep_dir: Path, html: str | None = None, force: bool = False) -> SweepResult:
    from hotspot.sweep.outcome import SweepResult

    sweep_dir = sweep_dir.resolve()
    doc = mf.read(sweep_dir)
    rows = sorted((_entry_row(sweep_dir, e) for e in doc.entries), key=_sort_key)
    tasks, _ = array_tasks(sweep_dir, doc)
    if tasks is not None:
        rows = _with_tasks(doc, rows, tasks)
    data = ReportData(str(sweep_dir), doc.recipes, mf.counts(doc), len(rows),
                      "summary.headroom_pct (descending; entries without a plan last)", rows, tasks)
    if html is not None:
        from hotspot.outfile import resolve_output, write_output
        from hotspot.sweep.dashboard import render_dashboard

        target = resolve_output(html, "sweep-dashboard.html", force, inputs=[sweep_dir / mf.MANIFEST])
        if target is None:
            raise UsageError("-o needs a file path", "e.g. -o dashboard.html")
        page = render_dashboard(data, target.resolve().parent).encode("utf-8")
        write_output(target, lambda fh: fh.write(page))
        data.html = str(target.resolve())
    return SweepResult("sweep report", data, [])
