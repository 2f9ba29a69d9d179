"""`hotspot sweep`: the use cases behind the command (run/resume, worker, status, report, init)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from hotspot.errors import HotspotError, InputError, ToolMissingError, UsageError
from hotspot.result import JsonObject, Result
from hotspot.sweep import manifest as mf
from hotspot.sweep.recipes import EXAMPLE, Recipes, load_recipes
from hotspot.sweep.views import progress_data
from hotspot.record import record

SWEEPS_DIR = "hotspot-sweeps"
EXIT_INTERRUPTED = 130
DEFAULT_ATT_RETRIES = 2
RETRY_WORDS = {"failed": ("failed",), "empty": ("empty",), "timed-out": ("timed-out",), "timeout": ("timed-out",),
               "interrupted": ("interrupted",), "all": mf.RETRYABLE}


class SweepInterrupted(HotspotError):
    exit_code = EXIT_INTERRUPTED
    code = "interrupted"


@record
class SweepOptions:
    recipes: Path
    gpus: str = "all"
    output: Path | None = None
    new: bool = False
    retry: tuple[str, ...] = ()
    only: tuple[str, ...] = ()
    force_recipes: bool = False
    att_retries: int = DEFAULT_ATT_RETRIES
    timeout_s: float | None = None
    rocprofv3: str | None = None
    att_library_path: str | None = None
    slurm: bool = False
    nodes: int = 1
    partition: str | None = None
    time_limit: str | None = None
    account: str | None = None
    sbatch_args: tuple[str, ...] = ()
    dry_run: bool = False


# ---------------------------------------------------------------------------- GPUs
def parse_gpus(spec: str, rocprofv3: str | None = None) -> tuple[int, ...]:
    """all | 0-7 | 0,2,5 | 0-3,6 -> GPU indices (HIP ordinals). `all` = what `hotspot doctor` lists."""
    text = spec.strip().lower()
    inherited = os.environ.get("ROCR_VISIBLE_DEVICES") or os.environ.get("HIP_VISIBLE_DEVICES") or ""
    if text == "all" and inherited.strip():
        # Already restricted (Slurm --gres): all = every listed device, whatever the tools enumerate.
        return tuple(range(len([d for d in inherited.split(",") if d.strip()])))
    if text == "all":
        from hotspot.collect import tools

        found = tools.find_rocprofv3(rocprofv3)
        gpus, how = tools.list_gpus(found.path if found else None)
        if not gpus:
            raise ToolMissingError(f"--gpus all: no GPU found ({how})",
                                   "run on a GPU node (`hotspot doctor` lists what it sees), or name them: --gpus 0-7")
        return tuple(g.index for g in gpus)
    out: list[int] = []
    for part in text.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+)\s*)?", part)
        if not m or (m.group(2) and int(m.group(2)) < int(m.group(1))):
            raise UsageError(f"--gpus {spec!r} is not a GPU list", "use all, a range 0-7, or a list 0,2,5")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        out += [g for g in range(lo, hi + 1) if g not in out]
    return tuple(out)


def parse_retry(values: tuple[str, ...]) -> tuple[str, ...]:
    states: list[str] = []
    for v in values:
        for word in (w.strip() for w in v.split(",") if w.strip()):
            if word not in RETRY_WORDS:
                raise UsageError(f"--retry {word!r} is not a state", "use failed, empty, timed-out, interrupted or all")
            states += [s for s in RETRY_WORDS[word] if s not in states]
    return tuple(states)


# ---------------------------------------------------------------------------- the sweep dir
def _find_previous(cwd: Path, recipes: Recipes) -> Path | None:
    """The newest ./hotspot-sweeps/*-<stem>/ made from the same recipes file (what a rerun resumes)."""
    base = cwd / SWEEPS_DIR
    if not base.is_dir():
        return None
    hits = []
    for d in base.glob(f"*-{recipes.path.stem}"):
        try:
            doc = mf.read(d)
        except InputError:
            continue
        if doc["recipes"].get("path") == str(recipes.path):
            hits.append((doc.get("created_at") or "", d))
    return max(hits)[1] if hits else None


def _new_manifest(sweep_dir: Path, recipes: Recipes, opts: SweepOptions) -> None:
    if sweep_dir.exists() and any(sweep_dir.iterdir()):
        raise InputError(f"{sweep_dir}: exists, is not empty and holds no sweep.json",
                         "give a new or empty --output directory (nothing there is touched)")
    sweep_dir.mkdir(parents=True, exist_ok=True)
    entries = [mf.new_entry(e.name, e.sha256(), e.to_json()) for e in recipes.entries]
    doc = mf.new_document({"path": str(recipes.path), "sha256": recipes.sha256, "prelude": recipes.slurm_prelude},
                          entries, _options(opts))
    with mf.lock(sweep_dir):
        mf.write(sweep_dir, doc)


def _options(opts: SweepOptions) -> JsonObject:
    return {"att_retries": opts.att_retries, "timeout_s": opts.timeout_s, "rocprofv3": opts.rocprofv3,
            "att_library_path": opts.att_library_path, "only": list(opts.only)}


def _sync_recipes(doc: JsonObject, recipes: Recipes, force: bool) -> dict[str, list[str]]:
    """Compare the manifest with the recipes file; with `force`, re-queue changed entries only."""
    now = recipes.by_name()
    have = {e["name"]: e for e in doc["entries"]}
    changed = [n for n, e in now.items() if n in have and have[n]["recipe_sha256"] != e.sha256()]
    added = [n for n in now if n not in have]
    removed = [n for n in have if n not in now]
    diff = {"changed": changed, "added": added, "removed": removed}
    if not (changed or added or removed):
        doc["recipes"]["sha256"] = recipes.sha256  # comments or tags only
        for n, e in now.items():
            have[n]["recipe"]["tags"] = list(e.tags)
        return diff
    if not force:
        what = "; ".join(f"{k}: {', '.join(v)}" for k, v in diff.items() if v)
        raise InputError(f"{recipes.path}: changed since this sweep started ({what})",
                         "rerun with --force-recipes to re-queue just those entries, or start a new sweep "
                         "with --new / another --output", code="recipes-changed", details=diff)
    for n in changed:
        have[n].update(recipe=now[n].to_json(), recipe_sha256=now[n].sha256())
        if have[n]["state"] != "running":
            mf.requeue(have[n], "recipe changed (--force-recipes)")
    for n in added:
        doc["entries"].append(mf.new_entry(n, now[n].sha256(), now[n].to_json()))
    doc["removed_entries"] += [have[n] for n in removed if have[n]["state"] != "running"]
    doc["entries"] = [e for e in doc["entries"] if e["name"] in now or e["state"] == "running"]
    order = {n: i for i, n in enumerate(now)}
    doc["entries"].sort(key=lambda e: order.get(e["name"], len(order)))
    doc["recipes"].update(sha256=recipes.sha256, prelude=recipes.slurm_prelude)
    return diff


def _prepare(sweep_dir: Path, recipes: Recipes, opts: SweepOptions, retry: tuple[str, ...]) -> JsonObject:
    """Bring an existing or new sweep dir in line with this command (done once, before workers)."""
    created = not (sweep_dir / mf.MANIFEST).exists()
    if created:
        _new_manifest(sweep_dir, recipes, opts)
    with mf.locked(sweep_dir) as doc:
        diff = _sync_recipes(doc, recipes, opts.force_recipes)
        stale = mf.reclaim_stale(doc)
        names = {e["name"] for e in doc["entries"]}
        unknown = [n for n in opts.only if n not in names]
        if unknown:
            raise UsageError(f"--only {', '.join(unknown)}: no such entry in {recipes.path}",
                             f"entries are: {', '.join(sorted(names))}")
        requeued = []
        for e in doc["entries"]:
            if e["state"] in retry and (not opts.only or e["name"] in opts.only):
                mf.requeue(e, f"--retry {e['state']}")
                requeued.append(e["name"])
            elif e["name"] in opts.only and e["state"] not in ("pending", "running"):
                mf.requeue(e, "--only")
                requeued.append(e["name"])
        doc["options"] = _options(opts)
        return {"created": created, "recipes_diff": diff, "reclaimed": stale, "requeued": requeued}


# ---------------------------------------------------------------------------- run
def run_sweep(opts: SweepOptions, cwd: Path | None = None) -> Result:
    cwd = cwd or Path.cwd()
    recipes = load_recipes(opts.recipes)  # every problem at once, exit 3, nothing run
    retry = parse_retry(opts.retry)
    if opts.att_retries < 0:
        raise UsageError("--att-retries must be 0 or more", "e.g. --att-retries 2")
    if opts.nodes < 1:
        raise UsageError("--nodes must be at least 1", "e.g. --nodes 4")
    gpus_spec = opts.gpus
    gpus = parse_gpus(gpus_spec, opts.rocprofv3) if not opts.slurm else ()
    if opts.slurm and gpus_spec != "all":
        parse_gpus(gpus_spec)  # a bad list fails here, not on the nodes
    if opts.output is not None:
        sweep_dir = opts.output.resolve()
    else:
        previous = None if opts.new else _find_previous(cwd, recipes)
        from hotspot.collect.rundir import utc_stamp

        sweep_dir = previous or (cwd / SWEEPS_DIR / f"{utc_stamp()}-{recipes.path.stem}")
    prep = _prepare(sweep_dir, recipes, opts, retry)
    if opts.slurm:
        return _submit(sweep_dir, recipes, opts, prep)
    return _work(sweep_dir, gpus, opts.only, prep, "sweep")


def _work(sweep_dir: Path, gpus: tuple[int, ...], only: tuple[str, ...], prep: JsonObject, command: str) -> Result:
    from hotspot.diagnostics import progress
    from hotspot.sweep.scheduler import Worker, WorkerOptions, pin_env

    for g in gpus:
        try:
            pin_env(dict(os.environ), g)
        except IndexError as exc:
            raise UsageError(f"--gpus: {exc}", "this process may only use the GPUs in ROCR_VISIBLE_DEVICES / "
                             "HIP_VISIBLE_DEVICES (e.g. from Slurm --gres); count them from 0") from None
    doc = mf.read(sweep_dir)
    o = doc.get("options") or {}
    progress(f"[sweep] {sweep_dir}: {len(doc['entries'])} entries, GPUs {','.join(map(str, gpus))}")
    worker = Worker(sweep_dir, WorkerOptions(gpus=gpus, only=frozenset(only), att_retries=o.get("att_retries", 2),
                                             timeout_s=o.get("timeout_s"), rocprofv3=o.get("rocprofv3"),
                                             att_library_path=o.get("att_library_path")))
    outcome = worker.run()
    doc = mf.read(sweep_dir)
    data = progress_data(sweep_dir, doc)
    data.update(worker=outcome.worker, gpus=list(gpus), ran=outcome.finished, **prep)
    scope = [e for e in doc["entries"] if not only or e["name"] in only]
    if outcome.interrupted:
        c = data["counts"]
        err = SweepInterrupted(
            f"interrupted: {c['done']} done, {c['interrupted']} interrupted, {c['pending']} pending "
            f"in {sweep_dir}", "resume with the same command plus --retry interrupted",
            details={"sweep_dir": str(sweep_dir), "counts": c})
        err.exit_code = 128 + (outcome.signum or 2)  # 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP
        err.details["signal"] = outcome.signum or 2
        raise err
    result = Result(command, data, [])
    states = {e["state"] for e in scope}
    if states & {"failed", "timed-out", "interrupted"}:
        result.exit_code = 6  # type: ignore[attr-defined]
    elif "empty" in states:
        result.exit_code = 4  # type: ignore[attr-defined]
    return result


def run_worker(sweep_dir: Path, gpus_spec: str, rocprofv3: str | None = None) -> Result:
    """One node's worker of a sweep started elsewhere (the Slurm script runs this)."""
    sweep_dir = sweep_dir.resolve()
    host = mf.hostname()
    if not (sweep_dir / mf.MANIFEST).is_file():
        raise InputError(f"{sweep_dir}/{mf.MANIFEST}: not found on {host}",
                         "the sweep directory must be on a filesystem shared by every node (not /tmp or a "
                         "node-local disk); pass --output on shared storage when you start the sweep")
    try:
        with tempfile.NamedTemporaryFile(dir=sweep_dir, prefix=f".probe.{host}."):
            pass
    except OSError as exc:
        raise InputError(f"{sweep_dir}: not writable from {host} ({exc.strerror or exc})",
                         "the sweep directory must be on a shared filesystem every node can write") from None
    only = tuple((mf.read(sweep_dir).get("options") or {}).get("only") or ())
    gpus = parse_gpus(gpus_spec, rocprofv3)
    return _work(sweep_dir, gpus, only, {"created": False, "recipes_diff": None, "reclaimed": [], "requeued": []},
                 "sweep")


def _submit(sweep_dir: Path, recipes: Recipes, opts: SweepOptions, prep: JsonObject) -> Result:
    from hotspot.sweep import slurm

    text = slurm.script_text(sweep_dir, nodes=opts.nodes, gpus=opts.gpus, partition=opts.partition,
                             time_limit=opts.time_limit, account=opts.account, sbatch_args=list(opts.sbatch_args),
                             prelude=recipes.slurm_prelude, job_name=f"hotspot-sweep-{recipes.path.stem}")
    script = slurm.write_script(sweep_dir, text)
    job_id = None if opts.dry_run else slurm.submit(script)
    with mf.locked(sweep_dir) as doc:
        doc["slurm"] = {"job_id": job_id, "script": slurm.SCRIPT, "nodes": opts.nodes, "submitted_at":
                        mf.utc_iso() if job_id else None, "dry_run": opts.dry_run}
        data = progress_data(sweep_dir, doc)
    data.update(slurm={"job_id": job_id, "script": str(script), "nodes": opts.nodes, "dry_run": opts.dry_run,
                       "submit": None if job_id else f"sbatch {script}"}, **prep)
    return Result("sweep", data, [])


def write_example(path: Path) -> Result:
    path = Path(path)
    if path.exists():
        raise InputError(f"{path}: already exists; not overwritten", "give another file name: hotspot sweep --init NEW.yaml",
                         code="exists")
    path.write_text(EXAMPLE)
    return Result("sweep init", {"written": str(path.resolve()), "entries": 2}, [])
