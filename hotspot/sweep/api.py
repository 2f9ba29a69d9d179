"""`hotspot sweep`: the use cases behind the command (run/resume, worker, status, report, init)."""

from __future__ import annotations

import os
import tempfile
from dataclasses import replace
from pathlib import Path

from hotspot.errors import HotspotError, InputError, UsageError
from hotspot.outfile import write_new
from typing import Any

from hotspot.result import JsonObject, Result
from hotspot.sweep import manifest as mf
from hotspot.sweep.recipes import EXAMPLE, MAX_TIMEOUT_S as MAX_TIMEOUT_S, Recipes, load_recipes  # noqa: F401  (MAX_TIMEOUT_S: the CLI)
from hotspot.render.sweep import describe_counts
from hotspot.sweep.gpus import MAX_GPUS, parse_gpus  # noqa: F401  (part of this API)
from hotspot.sweep.outcome import SweepResult, exit_code
from hotspot.sweep_records import EntryStatus, LocalRun, NothingToDo, Submission, Submitted, WorkerRun, WorkerStatus
from hotspot.sweep.views import progress_data
from hotspot.record import record

SWEEPS_DIR = "hotspot-sweeps"
EXIT_INTERRUPTED = 130
DEFAULT_ATT_RETRIES = 2
MAX_ATT_RETRIES = 64  # job.att_variants has this many distinct (CU, mask) placements at most
MAX_ARRAY_TASKS = 100_000  # above Slurm's default MaxArraySize (1001) and any site's
MAX_CPUS_PER_TASK = 4096
RETRY_WORDS = {"failed": (EntryStatus.FAILED,), "empty": (EntryStatus.EMPTY,), "timed-out": (EntryStatus.TIMED_OUT,),
               "timeout": (EntryStatus.TIMED_OUT,), "interrupted": (EntryStatus.INTERRUPTED,), "all": mf.RETRYABLE}


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
    cpus_per_task: int | None = None
    force: bool = False  # --slurm: submit even while an earlier array of the sweep is queued or running


@record
class Prepared:
    """What a command did to the sweep before its workers ran."""

    created: bool
    recipes_diff: dict[str, list[str]] | None  # changed, added, removed entries
    reclaimed: list[str]
    requeued: list[str]
    to_do: int | None = None  # None: a Slurm task's worker (it runs what is left)


# ---------------------------------------------------------------------------- options
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
        if doc.recipes.path == str(recipes.path):
            hits.append((doc.created_at or "", d))
    return max(hits)[1] if hits else None


def _fresh_dir(cwd: Path, recipes: Recipes) -> Path:
    """A directory no other sweep has: <UTC time>-<stem>, else <UTC time>-<n>-<stem>, created here
    (mkdir is atomic: two commands in the same second get two directories)."""
    from hotspot.collect.rundir import utc_stamp

    base = cwd / SWEEPS_DIR
    base.mkdir(parents=True, exist_ok=True)
    stamp = utc_stamp()
    for n in range(1, 1000):
        d = base / (f"{stamp}-{recipes.path.stem}" if n == 1 else f"{stamp}-{n}-{recipes.path.stem}")
        try:
            d.mkdir()
            return d
        except FileExistsError:
            continue
    raise InputError(f"{base}: 999 sweeps started this second", "give --output DIR")


def _new_manifest(sweep_dir: Path, recipes: Recipes, opts: SweepOptions) -> None:
    if sweep_dir.exists() and any(sweep_dir.iterdir()):
        raise InputError(f"{sweep_dir}: exists, is not empty and holds no sweep.json",
                         "give a new or empty --output directory (nothing there is touched)")
    sweep_dir.mkdir(parents=True, exist_ok=True)
    entries = [mf.EntryState(e.name, e.sha256(), e.recipe()) for e in recipes.entries]
    doc = mf.new_document(mf.RecipesRef(str(recipes.path), recipes.sha256, recipes.slurm_prelude),
                          entries, _options(opts))
    with mf.lock(sweep_dir):
        mf.write(sweep_dir, doc)


def _options(opts: SweepOptions) -> mf.RunOptions:
    return mf.RunOptions(opts.att_retries, opts.timeout_s, opts.rocprofv3, opts.att_library_path, list(opts.only))


def _sync_recipes(doc: mf.Manifest, recipes: Recipes, force: bool, sweep_dir: Path) -> dict[str, list[str]]:
    """Compare the manifest with the recipes file; with `force`, re-queue changed entries only."""
    mine = doc.recipes.path
    if mine and mine != str(recipes.path):
        # --force-recipes would replace the other sweep's entries: never suggest it here.
        raise InputError(f"{sweep_dir}: is the sweep of {mine}, not of {recipes.path}",
                         f"give another --output directory (or drop -o / use --new for a fresh one); to resume "
                         f"that sweep: hotspot sweep {mine} -o {sweep_dir}", code="other-recipes",
                         details={"sweep_recipes": mine, "given": str(recipes.path)})
    now = recipes.by_name()
    have = {e.name: e for e in doc.entries}
    changed = [n for n, e in now.items() if n in have and have[n].recipe_sha256 != e.sha256()]
    added = [n for n in now if n not in have]
    removed = [n for n in have if n not in now]
    diff = {"changed": changed, "added": added, "removed": removed}
    if not (changed or added or removed):
        doc.recipes.sha256 = recipes.sha256  # comments or tags only
        for n, e in now.items():
            have[n].recipe.tags = list(e.tags)
        return diff
    if not force:
        what = "; ".join(f"{k}: {', '.join(v)}" for k, v in diff.items() if v)
        raise InputError(f"{recipes.path}: changed since this sweep started ({what})",
                         "rerun with --force-recipes to re-queue just those entries, or start a new sweep "
                         "with --new / another --output", code="recipes-changed", details={k: list(v) for k, v in diff.items()})
    for n in changed:
        have[n].recipe, have[n].recipe_sha256 = now[n].recipe(), now[n].sha256()
        if have[n].state != EntryStatus.RUNNING:
            mf.requeue(have[n], "recipe changed (--force-recipes)")
    for n in added:
        doc.entries.append(mf.EntryState(n, now[n].sha256(), now[n].recipe()))
    doc.removed_entries += [have[n] for n in removed if have[n].state != EntryStatus.RUNNING]
    doc.entries = [e for e in doc.entries if e.name in now or e.state == EntryStatus.RUNNING]
    order = {n: i for i, n in enumerate(now)}
    doc.entries.sort(key=lambda e: order.get(e.name, len(order)))
    doc.recipes.sha256, doc.recipes.prelude = recipes.sha256, recipes.slurm_prelude
    return diff


def resume_interrupted(doc: mf.Manifest, why: str, only: tuple[str, ...] = ()) -> list[str]:
    """`interrupted` entries were never finished: back to pending (a rerun or a Slurm requeue
    finishes them without being asked)."""
    names = []
    for e in doc.entries:
        if e.state == EntryStatus.INTERRUPTED and (not only or e.name in only):
            mf.requeue(e, why)
            names.append(e.name)
    return names


def _prepare(sweep_dir: Path, recipes: Recipes, opts: SweepOptions, retry: tuple[str, ...],
             created: bool) -> Prepared:
    """Bring an existing or new sweep dir in line with this command (done once, before workers)."""
    if not (sweep_dir / mf.MANIFEST).exists():
        _new_manifest(sweep_dir, recipes, opts)
        created = True
    with mf.locked(sweep_dir) as doc:
        diff = _sync_recipes(doc, recipes, opts.force_recipes, sweep_dir)
        stale = mf.reclaim_stale(doc)
        names = {e.name for e in doc.entries}
        unknown = [n for n in opts.only if n not in names]
        if unknown:
            raise UsageError(f"--only {', '.join(unknown)}: no such entry in {recipes.path}",
                             f"entries are: {', '.join(sorted(names))}")
        requeued = resume_interrupted(doc, "resumed: interrupted before it finished", opts.only)
        for e in doc.entries:
            if e.state in retry and (not opts.only or e.name in opts.only):
                mf.requeue(e, f"--retry {e.state}")
                requeued.append(e.name)
            elif e.name in opts.only and e.state not in (EntryStatus.PENDING, EntryStatus.RUNNING):
                mf.requeue(e, "--only")
                requeued.append(e.name)
        doc.options = _options(opts)
        return Prepared(created, diff, stale, requeued,
                        sum(1 for e in doc.entries if e.state in (EntryStatus.PENDING, EntryStatus.RUNNING)
                            and (not opts.only or e.name in opts.only)))


# ---------------------------------------------------------------------------- run
def run_sweep(opts: SweepOptions, cwd: Path | None = None) -> SweepResult:
    cwd = cwd or Path.cwd()
    recipes = load_recipes(opts.recipes)  # every problem at once, exit 3, nothing run
    retry = parse_retry(opts.retry)
    if opts.att_retries < 0 or opts.att_retries > MAX_ATT_RETRIES:
        raise UsageError(f"--att-retries must be 0 to {MAX_ATT_RETRIES}", "e.g. --att-retries 2")
    if opts.nodes < 1 or opts.nodes > MAX_ARRAY_TASKS:
        raise UsageError(f"--nodes must be 1 to {MAX_ARRAY_TASKS}", "e.g. --nodes 4")
    if opts.cpus_per_task is not None and not 1 <= opts.cpus_per_task <= MAX_CPUS_PER_TASK:
        raise UsageError(f"--cpus-per-task must be 1 to {MAX_CPUS_PER_TASK}", "e.g. --cpus-per-task 16")
    gpus_spec = opts.gpus
    gpus = parse_gpus(gpus_spec, opts.rocprofv3) if not opts.slurm else ()
    if opts.slurm and gpus_spec != "all":
        parse_gpus(gpus_spec)  # a bad list fails here, not on the nodes
    created = False
    if opts.output is not None:
        sweep_dir = opts.output.resolve()
    else:
        previous = None if opts.new else _find_previous(cwd, recipes)
        sweep_dir = previous or _fresh_dir(cwd, recipes)
        created = previous is None
    existed = sweep_dir.exists() and not created
    # This command starts the sweep only in a new or empty directory: then all inside is its own.
    ours = created or not sweep_dir.exists() or (sweep_dir.is_dir() and not any(sweep_dir.iterdir()))
    try:
        said = _one_array_at_a_time(sweep_dir, opts) if opts.slurm and existed else None
        prep = _prepare(sweep_dir, recipes, opts, retry, created)
        if opts.slurm:
            result = _submit(sweep_dir, recipes, opts, prep)
            result.warnings[:0] = [said] if said else []
            return result
    except BaseException:
        if ours:
            _discard(sweep_dir, keep_dir=existed)  # a refused or failed submission leaves nothing to resume
        raise
    return _work(sweep_dir, gpus, opts.only, prep, "sweep", scope="sweep")


def _one_array_at_a_time(sweep_dir: Path, opts: SweepOptions) -> str | None:
    """Refuse a submission while an earlier array of this sweep is queued or running (--force
    submits anyway): two arrays would share its entries, and a rerun after a requeue would run
    the first unseen. Checked before anything in the sweep changes; the warning to give, if any."""
    from hotspot.sweep import slurm

    if opts.dry_run or not (sweep_dir / mf.MANIFEST).is_file():
        return None
    info = mf.read(sweep_dir).slurm
    if info is None:
        return None
    ids = [j.job_id for j in [*info.earlier, info] if j.job_id]
    return slurm.refuse_second_array(sweep_dir, list(dict.fromkeys(ids)), opts.force) if ids else None


def _discard(sweep_dir: Path, keep_dir: bool) -> None:
    """Remove what this command wrote into a sweep directory it started (`_new_manifest` only
    starts one in an empty or new directory, so everything inside is its own), and the directory
    when it made it; never once an entry has run."""
    import shutil

    try:
        doc = mf.read(sweep_dir)
        if any(e.attempts for e in doc.entries):
            return
    except InputError:
        pass
    if not keep_dir:
        shutil.rmtree(sweep_dir, ignore_errors=True)
        return
    for child in sweep_dir.iterdir():
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)


def _work(sweep_dir: Path, gpus: tuple[int, ...], only: tuple[str, ...], prep: Prepared, command: str,
          scope: str) -> SweepResult:
    """Run a worker; `scope` "sweep" judges the exit code on every entry (of --only), "worker" on
    the entries this worker ran (an array task's code describes that task)."""
    from hotspot.diagnostics import progress
    from hotspot.sweep.scheduler import Worker, WorkerOptions, pin_env

    for g in gpus:
        try:
            pin_env(dict(os.environ), g)
        except IndexError as exc:
            raise UsageError(f"--gpus: {exc}", "this process may only use the GPUs ROCR_VISIBLE_DEVICES, then "
                             "HIP_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES leave it (e.g. from Slurm --gres); "
                             "count them from 0") from None
    doc = mf.read(sweep_dir)
    o = doc.options
    progress(f"[sweep] {sweep_dir}: {len(doc.entries)} entries, GPUs {','.join(map(str, gpus))}")
    worker = Worker(sweep_dir, WorkerOptions(gpus=gpus, only=frozenset(only), att_retries=o.att_retries,
                                             timeout_s=o.timeout_s, rocprofv3=o.rocprofv3,
                                             att_library_path=o.att_library_path))
    outcome = worker.run()
    doc = mf.read(sweep_dir)
    ran = dict(vars(progress_data(sweep_dir, doc)), worker=outcome.worker, gpus=list(gpus), ran=outcome.finished,
               created=prep.created, recipes_diff=prep.recipes_diff, reclaimed=prep.reclaimed,
               requeued=prep.requeued)
    data = WorkerRun(**ran) if prep.to_do is None else LocalRun(**ran, to_do=prep.to_do)
    if outcome.interrupted:
        c = data.counts
        err = SweepInterrupted(
            f"interrupted: {describe_counts(c)} in {sweep_dir}",
            f"finish it with the same command (interrupted entries are re-queued): {_resume_hint(doc, sweep_dir)}",
            details={"sweep_dir": str(sweep_dir), "counts": dict(c)})
        err.exit_code = 128 + (outcome.signum or 2)  # 130 Ctrl-C, 143 SIGTERM, 129 SIGHUP
        err.details["signal"] = outcome.signum or 2
        raise err
    result = SweepResult(command, data, [])
    if scope == "worker":  # a task that found no entry left ran nothing wrong: 0, never 7
        result.exit_code = exit_code({r.state for r in outcome.finished})
    else:
        idle = prep.to_do == 0 and not outcome.finished
        result.exit_code = exit_code({e.state for e in doc.entries if not only or e.name in only}, idle)
        if idle:
            result.warnings.append(f"nothing to do: every entry of {sweep_dir} has run ({describe_counts(data.counts)})"
                                   "; --retry failed / --only NAME re-queue entries")
    data.exit_code = result.exit_code
    return result


def _resume_hint(doc: mf.Manifest, sweep_dir: Path) -> str:
    return f"hotspot sweep {doc.recipes.path} -o {sweep_dir}"


def run_worker(sweep_dir: Path, gpus_spec: str, rocprofv3: str | None = None) -> SweepResult:
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
    only = tuple(mf.read(sweep_dir).options.only)
    gpus = parse_gpus(gpus_spec, rocprofv3)
    requeued: list[str] = []
    reclaimed: list[str] = []
    restart = os.environ.get("SLURM_RESTART_COUNT", "0").strip()
    if restart.isdigit() and int(restart) > 0:
        # Slurm requeued this task (node failure, scontrol requeue): its earlier run is gone, so its
        # running entries were never finished; they and every interrupted entry run again.
        with mf.locked(sweep_dir) as doc:
            reclaimed = mf.reclaim_stale(doc) + reclaim_earlier_run(doc)
            requeued = resume_interrupted(doc, f"Slurm requeue (restart {restart})", only)
    return _work(sweep_dir, gpus, only, Prepared(False, None, reclaimed, requeued), "sweep", scope="worker")


def reclaim_earlier_run(doc: mf.Manifest) -> list[str]:
    """Entries still `running` under an earlier run of this same Slurm array task (same array job
    and task id, another worker id): Slurm starts a task again only after the earlier run ended."""
    me = tuple(os.environ.get(k) for k in ("SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"))
    if not all(me):
        return []
    me_id = mf.worker_id()
    earlier = {wid for wid, w in doc.workers.items()
               if wid != me_id and (w.array_job_id, w.array_task_id) == me}
    names = []
    for e in doc.entries:
        if e.state == EntryStatus.RUNNING and e.worker in earlier:
            mf.set_state(e, EntryStatus.INTERRUPTED, finished_at=mf.utc_iso(), exit_code=None,
                         reason=f"its worker {e.worker} (this array task's earlier run) ended without finishing it")
            names.append(e.name)
    for wid in earlier:
        if doc.workers[wid].state == WorkerStatus.RUNNING:
            doc.workers[wid].state = WorkerStatus.GONE
    return names


def _submit(sweep_dir: Path, recipes: Recipes, opts: SweepOptions, prep: Prepared) -> SweepResult:
    from hotspot.sweep import slurm

    done: dict[str, Any] = dict(created=prep.created, recipes_diff=prep.recipes_diff, reclaimed=prep.reclaimed,
                requeued=prep.requeued, to_do=prep.to_do)
    if not prep.to_do:
        with mf.locked(sweep_dir) as doc:
            progress = progress_data(sweep_dir, doc)
        idle = NothingToDo(**vars(progress), slurm=None, nothing_to_do=True, **done)
        result = SweepResult("sweep", idle, [])
        result.exit_code = idle.exit_code = exit_code({e.state for e in doc.entries}, nothing_to_do=True)
        return result
    warnings = []
    args = list(opts.sbatch_args)
    per_task = slurm.gpus_per_task(opts.gpus, args)
    asked = opts.cpus_per_task or slurm.cpus_request(args)
    cpus = asked
    if cpus is None:
        cpus = slurm.CPUS_PER_GPU * (per_task or 1)
        if per_task is None:
            warnings.append(f"GPUs per task unknown (--gpus all without --gres): asking for {cpus} CPUs per task; "
                            "set --cpus-per-task, or --sbatch-arg=--gres=gpu:N")
    # Never submit what no node of the partition can run: it would sit PENDING (PartitionConfig)
    # for good. Without a controller to ask (a --dry-run elsewhere) the script is written unchecked.
    shape, why = slurm.partition_shape(slurm.partition_arg(opts.partition, args))
    if shape is not None:
        cpus, note = slurm.fit_cpus(shape, cpus, asked is not None, slurm.gres_gpus(args), per_task or 1,
                                    slurm.mem_request_mib(args))
        warnings += [note] if note else []
    elif not opts.dry_run:
        warnings.append(f"the partition's nodes could not be read ({why}): the request is not checked")
    text = slurm.script_text(sweep_dir, nodes=opts.nodes, gpus=opts.gpus, partition=opts.partition,
                             time_limit=opts.time_limit, account=opts.account, sbatch_args=list(opts.sbatch_args),
                             prelude=recipes.slurm_prelude, job_name=f"hotspot-sweep-{recipes.path.stem}",
                             cpus_per_task=cpus)
    script = slurm.write_script(sweep_dir, text)
    job_id = None if opts.dry_run else slurm.submit(script)
    with mf.locked(sweep_dir) as doc:
        earlier = doc.slurm
        # every submission the sweep has had, oldest first (status and cancel follow them all)
        past = (earlier.earlier + [replace(earlier, earlier=[])]) if earlier else []
        doc.slurm = mf.SlurmJob(job_id, slurm.SCRIPT, opts.nodes, mf.utc_iso() if job_id else None, opts.dry_run, cpus,
                                opts.partition, past)
        progress = progress_data(sweep_dir, doc)
    data = Submission(**vars(progress), slurm=Submitted(job_id, str(script), opts.nodes, opts.dry_run, cpus,
                                                        None if job_id else f"sbatch {script}"),
                      nothing_to_do=False, **done)
    return SweepResult("sweep", data, warnings)


def write_example(path: Path) -> Result[JsonObject]:
    """The example recipes file, written whole or not at all (a temporary file beside it, fsynced,
    then linked to the name: a full disk leaves nothing, an existing file is never replaced)."""
    path = Path(path)
    if os.path.lexists(path):
        raise InputError(f"{path}: already exists; not overwritten", "give another file name: hotspot sweep --init NEW.yaml",
                         code="exists")
    try:
        write_new(path, lambda fh: fh.write(EXAMPLE.encode("utf-8")),
                  action="cannot write the example recipes file")
    except FileExistsError:
        raise InputError(f"{path}: already exists; not overwritten",
                         "give another file name: hotspot sweep --init NEW.yaml", code="exists") from None
    return Result("sweep init", {"written": str(path.resolve()), "entries": 2}, [])
