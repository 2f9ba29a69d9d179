"""The sweep's records: its files (sweep.json, a job's summary row) decoded once with
`hotspot.decode.from_plain` where they are read, and the typed data of every sweep command, which
orjson serializes in field order and the views (render/sweep.py, sweep/dashboard.py) read by
attribute. Layer 3 (below render): only records, no behaviour beyond small lookups."""

from __future__ import annotations

from dataclasses import field

from hotspot.record import record
from hotspot.result import JsonObject
from hotspot.strenum import TextEnum


class EntryStatus(TextEnum):
    """Where an entry of the sweep stands (sweep.json `entries[].state`)."""

    PENDING = "pending"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    EMPTY = "empty"
    TIMED_OUT = "timed-out"
    INTERRUPTED = "interrupted"


class WorkerStatus(TextEnum):
    """A worker's state (sweep.json `workers.*.state`)."""

    RUNNING = "running"
    FINISHED = "finished"
    INTERRUPTED = "interrupted"
    GONE = "gone"  # it stopped without saying so (killed, node lost)


# -------------------- sweep.json (hotspot/sweep/manifest.py reads and writes it)
@record(frozen=False)
class RecipesRef:
    """The recipes file a sweep was made from (`path` absolute, `sha256` of its bytes)."""

    path: str
    sha256: str
    prelude: str


@record(frozen=False)
class RunOptions:
    """The options of the command that last prepared the sweep (workers read them)."""

    att_retries: int
    timeout_s: float | None
    rocprofv3: str | None
    att_library_path: str | None
    only: list[str]


@record(frozen=False)
class SlurmJob:
    """The sweep's Slurm submission; `earlier` holds the submissions before it."""

    job_id: str | None
    script: str
    nodes: int
    submitted_at: str | None
    dry_run: bool
    cpus_per_task: int | None = None
    partition: str | None = None
    earlier: list[SlurmJob] = field(default_factory=list)


@record(frozen=False)
class WorkerInfo:
    host: str
    pid: int
    gpus: list[int]
    started_at: str
    slurm: dict[str, str] | None  # the SLURM_* variables it started under, lower-cased, the set ones only
    state: WorkerStatus = WorkerStatus.RUNNING
    heartbeat_at: str | None = None
    heartbeat_unix: float | None = None
    devices: list[str] | None = None  # the physical device of each of `gpus` (ROCR_VISIBLE_DEVICES ids)

    @property
    def array_job_id(self) -> str | None:
        return slurm_id(self.slurm, "slurm_array_job_id")

    @property
    def array_task_id(self) -> str | None:
        return slurm_id(self.slurm, "slurm_array_task_id")


def slurm_id(slurm: dict[str, str] | None, name: str) -> str | None:
    """One id of a worker's Slurm variables (`WorkerInfo.slurm`: a map of the variables that were
    set, kept as such in the manifest); None outside Slurm or when it was not set."""
    return slurm.get(name) if slurm else None


@record(frozen=False)
class Recipe:
    """An entry's recipe as the manifest and the job spec hold it (recipes.Entry.recipe())."""

    name: str
    cmd: list[str]
    cwd: str
    env: dict[str, str]
    kernel: str | None
    iterations: str | None
    pmc: list[str]
    att: AttSettings
    timeout_s: float | None
    tags: list[str]


@record(frozen=False)
class AttSettings:
    target_cu: int
    shader_engine_mask: int
    simd_select: int
    buffer_size: int


@record(frozen=False)
class Requeued:
    """An earlier outcome of an entry, kept in its `history` when it went back to pending."""

    state: EntryStatus
    attempts: int
    host: str | None
    gpu: int | None
    started_at: str | None
    finished_at: str | None
    exit_code: int | None
    reason: str | None
    log: str | None
    run_dir: str | None
    plan_json: str | None
    report_html: str | None
    dispatch: str | None
    requeued: str
    at: str


@record(frozen=False)
class LateResult:
    """A result that came back after the entry was reclaimed by another worker (not applied)."""

    late_result_from: str
    state: EntryStatus
    at: str


@record(frozen=False)
class EntryState:
    """One entry of the manifest: its recipe and where it stands."""

    name: str
    recipe_sha256: str
    recipe: Recipe
    state: EntryStatus = EntryStatus.PENDING
    attempts: int = 0
    host: str | None = None
    gpu: int | None = None
    device: str | None = None
    pid: int | None = None
    worker: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    elapsed_s: float | None = None
    exit_code: int | None = None
    reason: str | None = None
    log: str | None = None
    run_dir: str | None = None
    report_html: str | None = None
    plan_json: str | None = None
    kernel: JsonObject | None = None  # what collect says of the kernel (name, avg_ns, regex)
    summary: Summary | None = None
    att_attempts: list[FailedAttempt | AttAttempt] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    history: list[Requeued | LateResult] = field(default_factory=list)


@record
class AttAttempt:
    """One capture of an entry's attempt: the traced CU and SE mask, its run directory (relative to
    the sweep directory) and how it ended (`ok`, or the error code of a failed one)."""

    target_cu: int
    shader_engine_mask: str  # hex, as rocprofv3's option takes it
    run_dir: str
    outcome: str


@record
class FailedAttempt(AttAttempt):
    message: str


@record(frozen=False)
class Manifest:
    """`sweep.json`, decoded once when read (manifest.read); everything after reads attributes."""

    schema_version: int
    kind: str
    created_at: str
    updated_at: str
    recipes: RecipesRef
    options: RunOptions
    slurm: SlurmJob | None
    workers: dict[str, WorkerInfo]
    entries: list[EntryState]
    removed_entries: list[EntryState]

    def entry(self, name: str) -> EntryState:
        return next(e for e in self.entries if e.name == name)


# -------------------- an analyzed entry (hotspot/sweep/entry_summary.py)
@record
class HottestLine:
    file: str | None
    line: int | None
    share: float | None
    category: str | None


@record
class TopPlanItem:
    id: str
    priority: str
    title: str
    file: str | None
    line: int | None
    estimate_low_pct: float | None
    estimate_high_pct: float | None


@record
class Summary:
    """The report row of one analyzed dispatch (`dispatch` relative to the sweep directory in the
    manifest, absolute in `sweep status`/`report`)."""

    kernel: str | None
    arch: str | None
    dispatch: str | None
    waves: int | None
    duration_ns: float | None  # untraced average: discovery's, else the ATT run's untraced dispatches'
    traced_dispatch_ns: int | None
    total_cycles: int | None
    occupancy_theoretical: int | None
    occupancy_achieved: float | None
    occupancy_limiter: str | None
    top_stall_category: str | None
    top_stall_share: float | None
    hottest_line: HottestLine | None
    source_collapse: bool
    top_plan_item: TopPlanItem | None
    headroom_pct: float | None


# -------------------- Slurm (hotspot/sweep/slurm.py)
@record(frozen=False)
class TaskRow:
    """One array task as `sweep status` shows it: what sacct, squeue or its log says (`source`),
    then which task it is, its log, how often it started and whether SIGTERM reached it."""

    job_id: str
    state: str
    exit_code: int | None
    node: str | None
    reason: str | None
    source: str  # sacct, squeue, log, none
    task: str = ""
    log: str | None = None
    starts: int = 0
    sigterm: bool = False
    earlier: list[str] = field(default_factory=list)  # its earlier runs (sacct -D): "NODE_FAIL on n1"


@record
class TaskLog:
    """What a task's log says: starts (1 + requeues), the last exit code (None while the last
    start has not ended), whether SIGTERM reached it, the node of the last start."""

    starts: int
    exit_code: int | None
    ended: bool
    sigterm: bool
    node: str | None


@record
class NodeDown:
    node: str
    state: str
    reason: str | None


# -------------------- what a worker ran (hotspot/sweep/scheduler.py)
@record
class Finished:
    """An entry this worker completed (the `ran` list of the sweep's output)."""

    name: str
    state: EntryStatus
    gpu: int
    elapsed_s: float


# -------------------- `sweep status`, `sweep report`, `sweep cancel` (hotspot/sweep/views.py)
@record
class EntryRow:
    """An entry as `sweep status` and `sweep report` show it (paths absolute)."""

    name: str
    state: EntryStatus
    attempts: int
    host: str | None
    gpu: int | None
    device: str | None
    pid: int | None
    worker: str | None
    started_at: str | None
    finished_at: str | None
    elapsed_s: float | None
    exit_code: int | None
    reason: str | None
    log: str | None
    run_dir: str | None
    report_html: str | None
    plan_json: str | None
    tags: list[str]
    att_attempts: list[FailedAttempt | AttAttempt]
    summary: Summary | None
    history: list[Requeued | LateResult]


@record
class SlurmCell:
    """A report row's array task (from its worker's Slurm ids)."""

    task: str
    job_id: str
    state: str
    node: str | None
    log: str | None


@record
class ReportRow(EntryRow):
    slurm: SlurmCell | None = None


@record(frozen=False)
class ProgressData:
    sweep_dir: str
    manifest: str
    recipes: RecipesRef
    counts: dict[str, int]
    total: int
    entries: list[EntryRow]


@record
class WorkerRow:
    id: str
    host: str
    pid: int
    gpus: list[int]
    state: str
    heartbeat_at: str | None
    slurm: dict[str, str] | None
    devices: list[str] | None = None  # the physical device of each of `gpus`

    @property
    def array_task_id(self) -> str | None:
        return slurm_id(self.slurm, "slurm_array_task_id")


@record(frozen=False)
class SlurmStatus(SlurmJob):
    """The submission, each array task, where their states came from, the tasks seen working."""

    tasks: list[TaskRow] | None = None
    source: str = ""
    tasks_seen_in_manifest: list[str] = field(default_factory=list)


@record
class TaskProblem:
    task: str | None
    kind: str  # node-lost, never-runs, task-died, array-ended, worker-gone
    message: str
    fix: str


@record(frozen=False)
class StatusData(ProgressData):
    workers: list[WorkerRow] = field(default_factory=list)
    slurm: SlurmStatus | None = None
    problems: list[TaskProblem] = field(default_factory=list)
    exit_code: int = 0


@record(frozen=False)
class CancelData:
    sweep_dir: str
    job_id: str
    cancelled: bool
    tasks_before: list[TaskRow] | None
    counts: dict[str, int]
    next: str
    job_ids: list[str] = field(default_factory=list)  # every array cancelled (earlier ones still queued too)


@record(frozen=False)
class ReportData:
    sweep_dir: str
    recipes: RecipesRef
    counts: dict[str, int]
    total: int
    sorted_by: str
    entries: list[EntryRow]
    slurm_tasks: list[TaskRow] | None
    html: str | None = None


# -------------------- `hotspot sweep` (hotspot/sweep/api.py)
@record(frozen=False)
class Ran(ProgressData):
    """A worker's run: the sweep's progress, then what this worker did and what the command
    changed before it ran (the output of `hotspot sweep` and of a Slurm task's worker)."""

    worker: str
    gpus: list[int]
    ran: list[Finished]
    created: bool
    recipes_diff: dict[str, list[str]] | None
    reclaimed: list[str]
    requeued: list[str]


@record(frozen=False)
class WorkerRun(Ran):
    """`sweep --worker` (a Slurm task): the sweep's progress and what this worker ran."""

    submission = False  # a class attribute (not in the JSON): how the text view tells them apart
    exit_code: int = 0


@record(frozen=False)
class LocalRun(Ran):
    """`hotspot sweep` on this node's GPUs."""

    submission = False
    to_do: int = 0
    exit_code: int = 0


@record
class Submitted:
    job_id: str | None
    script: str
    nodes: int
    dry_run: bool
    cpus_per_task: int
    submit: str | None  # the sbatch command line of a --dry-run


@record(frozen=False)
class Submission(ProgressData):
    """`hotspot sweep --slurm`: the job array submitted (or its script written)."""

    submission = True
    slurm: Submitted | None
    nothing_to_do: bool
    created: bool
    recipes_diff: dict[str, list[str]] | None
    reclaimed: list[str]
    requeued: list[str]
    to_do: int | None


@record(frozen=False)
class NothingToDo(Submission):
    """`hotspot sweep --slurm` when every entry has run: nothing submitted."""

    exit_code: int = 0


@record
class SubmittedWork:
    """What `hotspot sweep --slurm` did before `--wait` followed the array (a Submission without
    its progress: the status after it holds the sweep's progress)."""

    slurm: Submitted
    created: bool
    recipes_diff: dict[str, list[str]] | None
    reclaimed: list[str]
    requeued: list[str]
    to_do: int | None


@record(frozen=False)
class Followed(StatusData):
    """`hotspot sweep --slurm --wait`: the status the array ended with (as `sweep status` gives it)
    and the submission it followed (`submitted`); the command is `sweep`."""

    submission = True  # class attributes (not in the JSON): how the text view tells them apart
    followed = True
    submitted: SubmittedWork | None = None
