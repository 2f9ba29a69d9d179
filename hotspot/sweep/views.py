"""Reading a sweep: `hotspot sweep status` (progress, workers, Slurm) and `hotspot sweep report`
(the cross-kernel table and the dashboard). Paths become absolute here; the manifest keeps them
relative to the sweep directory."""

from __future__ import annotations

from pathlib import Path

from hotspot.errors import UsageError
from hotspot.result import JsonObject, Result
from hotspot.sweep import manifest as mf

PATH_FIELDS = ("log", "run_dir", "plan_json", "report_html", "dispatch")


def _entry_row(sweep_dir: Path, e: JsonObject) -> JsonObject:
    def absolute(d: JsonObject) -> JsonObject:
        return {**d, **{k: str(sweep_dir / d[k]) for k in PATH_FIELDS if d.get(k)}}

    row = {k: e.get(k) for k in ("name", "state", "attempts", "host", "gpu", "device", "pid", "started_at",
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


def sweep_status(sweep_dir: Path) -> Result:
    from hotspot.sweep import slurm

    sweep_dir = sweep_dir.resolve()
    doc = mf.read(sweep_dir)
    mf.reclaim_stale(doc)  # shown as they would be taken over (not written: status only reads)
    data = progress_data(sweep_dir, doc)
    workers = [{"id": wid, **{k: w.get(k) for k in ("host", "pid", "gpus", "state", "heartbeat_at", "slurm")}}
               for wid, w in sorted((doc.get("workers") or {}).items())]
    data["workers"] = workers
    info = doc.get("slurm")
    warnings = []
    if info:
        tasks, note = (None, "not submitted (--dry-run)") if not info.get("job_id") else slurm.squeue(info["job_id"])
        seen = sorted({(w["slurm"] or {}).get("slurm_array_task_id", "") for w in workers if w.get("slurm")} - {""},
                      key=int)
        data["slurm"] = {**info, "squeue": tasks, "squeue_note": note, "tasks_seen_in_manifest": seen}
        if tasks is None and info.get("job_id"):
            warnings.append(f"Slurm state unavailable: {note}")
    else:
        data["slurm"] = None
    return Result("sweep status", data, warnings)


def _sort_key(row: JsonObject) -> tuple:
    s = row.get("summary") or {}
    head = s.get("headroom_pct")
    return (head is None, -(head or 0.0), row["name"])


def sweep_report(sweep_dir: Path, html: str | None = None, force: bool = False) -> Result:
    sweep_dir = sweep_dir.resolve()
    doc = mf.read(sweep_dir)
    rows = sorted((_entry_row(sweep_dir, e) for e in doc["entries"]), key=_sort_key)
    data = {"sweep_dir": str(sweep_dir), "recipes": doc["recipes"], "counts": mf.counts(doc),
            "total": len(rows), "sorted_by": "summary.headroom_pct (descending; entries without a plan last)",
            "entries": rows, "html": None}
    if html is not None:
        from hotspot.export.output import resolve_output, write_atomically
        from hotspot.sweep.dashboard import render_dashboard

        target = resolve_output(html, "sweep-dashboard.html", force, inputs=[sweep_dir / mf.MANIFEST])
        if target is None:
            raise UsageError("--html needs a file path", "e.g. --html dashboard.html")
        page = render_dashboard(data, target.resolve().parent).encode("utf-8")
        write_atomically(target, lambda fh: fh.write(page))
        data["html"] = str(target.resolve())
    return Result("sweep report", data, [])
