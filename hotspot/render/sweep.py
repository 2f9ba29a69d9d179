"""Text and markdown views of `hotspot sweep`, `sweep status` and `sweep report`."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from hotspot.render.tables import shorten, shorten_left, table
from hotspot.result import JsonObject, Result

if TYPE_CHECKING:
    from hotspot.sweep_records import (CancelData, EntryRow, Followed, LocalRun, ProgressData, ReportData, StatusData,
                                     Submission, Submitted, Summary, WorkerRun)


COUNT_ORDER = ("done", "failed", "timed-out", "empty", "interrupted", "running", "pending")


def describe_counts(c: dict[str, int]) -> str:
    """The one wording of a sweep's counts (progress line, summary, errors, --wait): every non-zero
    state under its own name, e.g. `3 done, 1 failed, 1 timed-out, 2 pending`."""
    return ", ".join(f"{c[k]} {k}" for k in COUNT_ORDER if c.get(k)) or "no entries"


_counts = describe_counts


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:.0f}%"


def duration_text(s: Summary | None) -> str:
    """Discovery's untraced average; else the traced dispatch, marked (tracing slows it)."""
    if s is None:
        return ""
    if s.duration_ns is not None:
        return f"{s.duration_ns:,.0f}"
    return f"{s.traced_dispatch_ns:,} (traced)" if s.traced_dispatch_ns is not None else ""


def _report_rows(entries: list[EntryRow], width: int | None) -> list[list[object]]:
    """One row per entry. `width` None (text): each kernel in the least detail that tells it from
    the other rows' (names.column: two instantiations of one template stay two), so no cell is cut
    inside a word; markdown: the names elided to `width` where they differ (names.fit_distinct)."""
    from hotspot.kernel_names import column, fit_distinct

    kernels = [(e.summary.kernel or "") if e.summary is not None else "" for e in entries]
    shown = column(kernels) if width is None else fit_distinct(kernels, width)
    rows: list[list[object]] = []
    for e, kernel_cell in zip(entries, shown):
        s = e.summary
        if s is None:
            rows.append([e.name, e.state, *[""] * (len(REPORT_HEADERS) - 2)])
            continue
        top, line, occ_a = s.top_plan_item, s.hottest_line, s.occupancy_achieved
        rows.append([
            e.name, e.state, kernel_cell,
            s.arch or "",
            duration_text(s),
            (f"{s.occupancy_theoretical}/{occ_a:.2f}" if occ_a is not None else "") +
            (f" {s.occupancy_limiter}" if s.occupancy_limiter else ""),
            f"{s.top_stall_category} {_pct(s.top_stall_share)}" if s.top_stall_category else "",
            f"{shorten_left(str(line.file), 30)}:{line.line}" if line else "",  # whole folders dropped first
            "yes" if s.source_collapse else "",
            shorten(f"{top.id}", 28) if top else "",
            f"{s.headroom_pct:.0f}%" if s.headroom_pct is not None else "",
        ])
    return rows


REPORT_HEADERS = ["entry", "state", "kernel", "arch", "avg ns", "occ t/a", "top stall", "hottest line",
                  "collapse", "top plan item", "headroom"]


def _failures(entries: list[EntryRow]) -> str:
    lines = [f"  {e.name} [{e.state}]: {e.reason or ''}" + (f" (log: {e.log})" if e.log else "")
             for e in entries if e.state in ("failed", "empty", "timed-out", "interrupted")]
    return ("\nnot done:\n" + "\n".join(lines)) if lines else ""


# The columns shown whatever the width, then the others by how much they are needed (most first):
# each is added when the table still fits with it, so a narrow one can show where a wider one
# could not. Cells are never shortened to fit.
REPORT_REQUIRED = ("entry", "state", "top plan item", "headroom")
REPORT_OPTIONAL = ("kernel", "top stall", "hottest line", "avg ns", "occ t/a", "arch", "collapse")


def _fit_report(rows: list[list[object]], headers: list[str], width: int | None = None) -> tuple[str, list[str]]:
    """The table with the columns that fit `width` (the terminal's) at their full width, and the
    headers left out. Only when the required columns alone do not fit are cells shortened."""
    from hotspot.diagnostics import terminal_width

    width = width or terminal_width()

    def whole(keep: list[int]) -> str:
        return table([[r[i] for i in keep] for r in rows], [headers[i] for i in keep], whole=True,
                     colalign=["left"] * len(keep))

    def fits(keep: list[int]) -> bool:
        return max(map(len, whole(keep).split("\n"))) <= width

    shown = [h for h in headers if h in REPORT_REQUIRED]
    for h in REPORT_OPTIONAL:
        if fits([i for i, x in enumerate(headers) if x in shown or x == h]):
            shown.append(h)
    keep = [i for i, h in enumerate(headers) if h in shown]
    # the required columns alone too wide (very long entry names): shortened, the last resort
    body = whole(keep) if fits(keep) else table([[r[i] for i in keep] for r in rows],
                                               [headers[i] for i in keep], width=width)
    return body, [h for h in headers if h not in shown]


def render_report(result: Result[ReportData]) -> str:
    d = result.data
    body, hidden = _fit_report(_report_rows(d.entries, None), REPORT_HEADERS)
    note = f"\n(not shown at this width: {', '.join(hidden)}; --format json has every field)" if hidden else ""
    html = f"\ndashboard: {d.html}" if d.html else ""
    return (f"sweep {d.sweep_dir}: {_counts(d.counts)} of {d.total} (sorted by estimated headroom)\n"
            f"{body}{note}{_failures(d.entries)}{html}")


def render_report_markdown(result: Result[ReportData]) -> str:
    d = result.data
    rows = _report_rows(d.entries, 60)
    out = [f"## hotspot sweep: {d.sweep_dir}", "", f"{_counts(d.counts)} of {d.total} entries, "
           "sorted by estimated headroom.", "", "| " + " | ".join(REPORT_HEADERS) + " |",
           "|" + "---|" * len(REPORT_HEADERS)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    if d.html:
        out += ["", f"Dashboard: `{d.html}`"]
    return "\n".join(out)


def _gpu(e: EntryRow) -> str:
    """The physical device the entry ran on (two workers' GPU 0 can be devices 0 and 2); the
    worker's index for manifests written before devices were recorded."""
    return e.device if e.device is not None else "" if e.gpu is None else str(e.gpu)


def _progress_table(entries: list[EntryRow]) -> str:
    rows = [[e.name, e.state, e.host or "", _gpu(e),
             "" if e.elapsed_s is None else f"{e.elapsed_s:.1f}", e.attempts] for e in entries]
    return table(rows, ["entry", "state", "host", "GPU", "elapsed s", "attempts"])


def _next(d: ProgressData) -> str:
    c = d.counts
    if c["pending"] or c["interrupted"]:
        return f"next: finish it with the same command (hotspot sweep {d.recipes.path} -o {d.sweep_dir})"
    return f"next: hotspot sweep report {d.sweep_dir} -o dashboard.html"


def _submitted_head(s: Submitted) -> str:
    return (f"submitted Slurm job {s.job_id} ({s.nodes} array task(s), {s.cpus_per_task} CPUs "
            f"each); script {s.script}" if s.job_id else
            f"wrote {s.script} (not submitted); submit it with: {s.submit}")


def _followed_text(f: Followed) -> str:
    head = _submitted_head(f.submitted.slurm) if f.submitted is not None else ""
    return f"{head}\n{_status_text(f)}" if head else _status_text(f)


def render_sweep(result: Result[LocalRun | WorkerRun | Submission | Followed]) -> str:
    d = result.data
    if getattr(d, "followed", False):  # --slurm --wait: the submission, then where the array ended
        return _followed_text(cast("Followed", d))
    sub = cast("Submission", d) if d.submission else None  # `submission` is true on a Submission only
    if sub is not None and sub.nothing_to_do:
        return (f"nothing to do: every entry of {d.sweep_dir} has run ({_counts(d.counts)}); nothing "
                f"submitted\n(--retry failed / --only NAME re-queue entries)\n"
                f"next: hotspot sweep report {d.sweep_dir} -o dashboard.html")
    if sub is not None and sub.slurm:
        return (f"{_submitted_head(sub.slurm)}\nsweep dir: {d.sweep_dir}\nfollow it with: hotspot sweep "
                f"status {d.sweep_dir} --wait")
    return (f"{_progress_table(d.entries)}\n{_failures(d.entries).lstrip()}\n"
            f"sweep {d.sweep_dir}: {_counts(d.counts)}\n{_next(d)}").replace("\n\n", "\n")


def render_sweep_markdown(result: Result[LocalRun | WorkerRun | Submission | Followed]) -> str:
    d = result.data
    if getattr(d, "followed", False):
        f = cast("Followed", d)
        head = _submitted_head(f.submitted.slurm) if f.submitted is not None else ""
        return f"## hotspot sweep {f.sweep_dir}\n\n{head}\n\n```\n{_status_text(f)}\n```"
    return f"## hotspot sweep {d.sweep_dir}\n\n{_counts(d.counts)}\n\n```\n{_progress_table(d.entries)}\n```"


def render_status(result: Result[StatusData]) -> str:
    return _status_text(result.data)


def _status_text(d: StatusData) -> str:
    out = [f"sweep {d.sweep_dir}: {_counts(d.counts)} of {d.total}", _progress_table(d.entries)]
    if d.workers:
        out.append(table([[w.id, w.state or "", ",".join(w.devices or map(str, w.gpus or [])), w.heartbeat_at or "",
                           w.array_task_id or ""] for w in d.workers],
                         ["worker", "state", "GPUs", "last heartbeat", "array task"]))
    s = d.slurm
    if s:
        if s.tasks:
            out.append(f"Slurm job {s.job_id} (from {s.source}):")
            # a reason explains a wait: the data has it on waiting tasks only (slurm.WAITING)
            out.append(table([[t.job_id, t.state, "" if t.exit_code is None else t.exit_code, t.node or "",
                               t.starts or "", t.log or "", t.reason or ""]
                              for t in s.tasks],
                             ["task", "state", "exit", "node", "starts", "log", "reason"]))
            # earlier runs of a task (sacct -D): a node failure and its requeue stay visible
            out += [f"  task {t.job_id} earlier: {', '.join(t.earlier)}" for t in s.tasks if t.earlier]
        else:
            out.append(f"Slurm job {s.job_id}: {s.source}")
    for p in d.problems:
        out.append(f"problem: {p.message}\n  fix: {p.fix}")
    return "\n".join(out)


def render_status_markdown(result: Result[StatusData]) -> str:
    return "```\n" + render_status(result) + "\n```"


def render_cancel(result: Result[CancelData]) -> str:
    d = result.data
    jobs = ", ".join(d.job_ids or [d.job_id])
    return (f"cancelled Slurm job {jobs} of {d.sweep_dir}: its workers mark running entries "
            f"interrupted\nnext: {d.next}")


def render_init(result: Result[JsonObject]) -> str:
    d = result.data
    return (f"wrote {d['written']} ({d['entries']} example entries). Edit it, then: "
            f"hotspot sweep {d['written']} --gpus all")
