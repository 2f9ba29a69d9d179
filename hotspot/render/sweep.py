"""Text and markdown views of `hotspot sweep`, `sweep status` and `sweep report`."""

from __future__ import annotations

from hotspot.render.tables import shorten, table
from hotspot.result import JsonObject, Result


def _counts(c: dict[str, int]) -> str:
    return ", ".join(f"{v} {k}" for k, v in c.items() if v) or "no entries"


def _pct(v: float | None) -> str:
    return "" if v is None else f"{100 * v:.0f}%"


def _duration(s: JsonObject) -> str:
    """Discovery's untraced average; else the traced dispatch, marked (tracing slows it)."""
    if s.get("duration_ns") is not None:
        return f"{s['duration_ns']:,.0f}"
    return f"{s['traced_dispatch_ns']:,} (traced)" if s.get("traced_dispatch_ns") is not None else ""


def _report_rows(entries: list[JsonObject], width: int) -> list[list[object]]:
    rows = []
    for e in entries:
        s = e.get("summary") or {}
        top = s.get("top_plan_item") or {}
        line = s.get("hottest_line") or {}
        occ_a = s.get("occupancy_achieved")
        rows.append([
            e["name"], e["state"], shorten(s.get("kernel") or "", width), s.get("arch") or "",
            _duration(s),
            (f"{s.get('occupancy_theoretical')}/{occ_a:.2f}" if occ_a is not None else "") +
            (f" {s['occupancy_limiter']}" if s.get("occupancy_limiter") else ""),
            f"{s.get('top_stall_category')} {_pct(s.get('top_stall_share'))}" if s.get("top_stall_category") else "",
            f"{shorten(str(line.get('file')), 30)}:{line.get('line')}" if line else "",
            "yes" if s.get("source_collapse") else "",
            shorten(f"{top.get('id')}", 28) if top else "",
            f"{s['headroom_pct']:.0f}%" if s.get("headroom_pct") is not None else "",
        ])
    return rows


REPORT_HEADERS = ["entry", "state", "kernel", "arch", "avg ns", "occ t/a", "top stall", "hottest line",
                  "collapse", "top plan item", "headroom"]


def _failures(entries: list[JsonObject]) -> str:
    lines = [f"  {e['name']} [{e['state']}]: {e.get('reason') or ''}" + (f" (log: {e['log']})" if e.get("log") else "")
             for e in entries if e["state"] in ("failed", "empty", "timed-out", "interrupted")]
    return ("\nnot done:\n" + "\n".join(lines)) if lines else ""


def render_report(result: Result) -> str:
    d = result.data
    body = table(_report_rows(d["entries"], 40), REPORT_HEADERS)
    html = f"\ndashboard: {d['html']}" if d.get("html") else ""
    return (f"sweep {d['sweep_dir']}: {_counts(d['counts'])} of {d['total']} (sorted by estimated headroom)\n"
            f"{body}{_failures(d['entries'])}{html}")


def render_report_markdown(result: Result) -> str:
    d = result.data
    rows = _report_rows(d["entries"], 60)
    out = [f"## hotspot sweep: {d['sweep_dir']}", "", f"{_counts(d['counts'])} of {d['total']} entries, "
           "sorted by estimated headroom.", "", "| " + " | ".join(REPORT_HEADERS) + " |",
           "|" + "---|" * len(REPORT_HEADERS)]
    out += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]
    if d.get("html"):
        out += ["", f"Dashboard: `{d['html']}`"]
    return "\n".join(out)


def _progress_table(entries: list[JsonObject]) -> str:
    rows = [[e["name"], e["state"], e.get("host") or "", "" if e.get("gpu") is None else e["gpu"],
             "" if e.get("elapsed_s") is None else f"{e['elapsed_s']:.1f}", e["attempts"]] for e in entries]
    return table(rows, ["entry", "state", "host", "GPU", "elapsed s", "attempts"])


def render_sweep(result: Result) -> str:
    d = result.data
    if d.get("slurm"):
        s = d["slurm"]
        head = (f"submitted Slurm job {s['job_id']} ({s['nodes']} array task(s)); script {s['script']}"
                if s.get("job_id") else f"wrote {s['script']} (not submitted); submit it with: {s['submit']}")
        return f"{head}\nsweep dir: {d['sweep_dir']}\nfollow it with: hotspot sweep status {d['sweep_dir']}"
    return (f"{_progress_table(d['entries'])}\n{_failures(d['entries']).lstrip()}\n"
            f"sweep {d['sweep_dir']}: {_counts(d['counts'])}\n"
            f"next: hotspot sweep report {d['sweep_dir']} --html dashboard.html").replace("\n\n", "\n")


def render_sweep_markdown(result: Result) -> str:
    d = result.data
    return f"## hotspot sweep {d['sweep_dir']}\n\n{_counts(d['counts'])}\n\n```\n{_progress_table(d['entries'])}\n```"


def render_status(result: Result) -> str:
    d = result.data
    out = [f"sweep {d['sweep_dir']}: {_counts(d['counts'])} of {d['total']}", _progress_table(d["entries"])]
    if d.get("workers"):
        out.append(table([[w["id"], w.get("state") or "", ",".join(map(str, w.get("gpus") or [])),
                           w.get("heartbeat_at") or "",
                           (w.get("slurm") or {}).get("slurm_array_task_id", "")] for w in d["workers"]],
                         ["worker", "state", "GPUs", "last heartbeat", "array task"]))
    s = d.get("slurm")
    if s:
        if s.get("squeue"):
            out.append(f"Slurm job {s['job_id']}:")
            out.append(table([[t["job_id"], t["state"], t["node"], t["elapsed"], t["reason"]] for t in s["squeue"]],
                             ["task", "state", "node", "elapsed", "reason"]))
        else:
            out.append(f"Slurm job {s.get('job_id')}: {s.get('squeue_note')}")
    return "\n".join(out)


def render_status_markdown(result: Result) -> str:
    return "```\n" + render_status(result) + "\n```"


def render_init(result: Result) -> str:
    d = result.data
    return (f"wrote {d['written']} ({d['entries']} example entries). Edit it, then: "
            f"hotspot sweep {d['written']} --gpus all")
