"""Hand a sweep to Slurm: a job array with one task per node, each a `hotspot sweep --worker`.

No scheduler of our own across nodes: Slurm places the tasks, every task runs the same worker loop
as a one-node sweep (all GPUs of its node), and the tasks share the work through the manifest lock
on the shared filesystem.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from hotspot.outfile import write_atomically
from hotspot.errors import CommandFailedError, InputError, ToolMissingError, UsageError
from hotspot.jsontypes import JsonValue
from hotspot.record import record
from hotspot.sweep_records import NodeDown, TaskLog, TaskRow

SCRIPT = "sweep.sbatch"
LOG_DIR = "slurm"
SUBMIT_TIMEOUT_S = 60.0
MAX_LOG_BYTES = 64 << 20  # a task log is read whole for its begin/end lines
# CPUs asked per GPU the task drives: each entry runs the application's host thread, rocprofv3's
# tool thread and then the trace decoding and analysis (one core each at least); without a
# request Slurm gives one CPU per task and, under task/affinity, every entry shares core 0.
# Sites override it with --cpus-per-task.
CPUS_PER_GPU = 4
# The lines a task writes to its log around the worker (appended: a requeued task adds its own).
TASK_BEGIN = "=== hotspot sweep task begin"
TASK_END = "=== hotspot sweep task end"
FIX_SLURM = ("run on a Slurm login node (sbatch on PATH, e.g. `module load slurm`), or use "
             "--dry-run to write the script and submit it yourself")


def gres_gpus(sbatch_args: list[str]) -> int | None:
    """The GPUs a task asks Slurm for: --gres=gpu[:type]:N / --gpus-per-task / --gpus-per-node /
    --gpus in the extra sbatch lines; None when none of them is given."""
    for arg in sbatch_args:
        m = re.fullmatch(r"--gres=(?:.*,)?gpu(?::[^:,]+)?:(\d+)(?:,.*)?", arg.strip()) or \
            re.fullmatch(r"--gpus(?:-per-task|-per-node)?=(?:[^:,]+:)?(\d+)", arg.strip())
        if m:
            return int(m.group(1))
    return None


def gpus_per_task(gpus: str, sbatch_args: list[str]) -> int | None:
    """How many GPUs one array task drives: what it asks Slurm for (gres_gpus), else the length of
    an explicit --gpus list; None when unknown (--gpus all on whatever node Slurm gives)."""
    asked = gres_gpus(sbatch_args)
    if asked is not None:
        return asked
    if gpus.strip().lower() == "all":
        return None
    from hotspot.sweep.gpus import parse_gpus

    return len(parse_gpus(gpus))


def script_text(sweep_dir: Path, *, nodes: int, gpus: str, partition: str | None, time_limit: str | None,
                account: str | None, sbatch_args: list[str], prelude: str, job_name: str,
                cpus_per_task: int | None) -> str:
    d = str(sweep_dir)
    lines = ["#!/bin/bash",
             "# Written by `hotspot sweep --slurm`: one array task per node, each pulling entries from",
             f"# {d}/sweep.json (which must be on a filesystem every node shares).",
             f"#SBATCH --job-name={job_name}",
             f"#SBATCH --array=0-{nodes - 1}",
             "#SBATCH --nodes=1",
             "#SBATCH --ntasks=1",
             f"#SBATCH --output={d}/{LOG_DIR}/%A_%a.out",
             "#SBATCH --open-mode=append",  # a requeued task appends: the node-failure lines stay
             "#SBATCH --requeue"]
    if cpus_per_task is not None and not any(a.strip().startswith("--cpus-per-task") for a in sbatch_args):
        lines.append(f"#SBATCH --cpus-per-task={cpus_per_task}")
    for flag, value in (("--partition", partition), ("--time", time_limit), ("--account", account)):
        if value:
            lines.append(f"#SBATCH {flag}={value}")
    lines += [f"#SBATCH {arg}" for arg in sbatch_args]
    lines += ["set -eo pipefail",
              f'echo "{TASK_BEGIN}: task ${{SLURM_ARRAY_TASK_ID:-?}} of job ${{SLURM_ARRAY_JOB_ID:-?}} restart '
              f'${{SLURM_RESTART_COUNT:-0}} on $(hostname -s) at $(date -u +%Y-%m-%dT%H:%M:%SZ)"']
    if prelude.strip():
        lines += ["# slurm.prelude from the recipes file", prelude.rstrip("\n")]
    # Not exec: the end line records the worker's exit code for `sweep status` when sacct cannot.
    # The TERM trap (scancel, time limit) lets bash outlive the signal until the worker has stopped.
    lines += [f"cd {shlex.quote(d)}",
              "trap 'echo \"=== hotspot sweep: SIGTERM\"' TERM",
              "rc=0",
              f"{shlex.quote(sys.executable)} -m hotspot sweep --worker {shlex.quote(d)} "
              f"--gpus {shlex.quote(gpus)} || rc=$?",
              f'echo "{TASK_END}: exit $rc at $(date -u +%Y-%m-%dT%H:%M:%SZ)"',
              "exit $rc", ""]
    return "\n".join(lines)


def write_script(sweep_dir: Path, text: str) -> Path:
    (sweep_dir / LOG_DIR).mkdir(exist_ok=True)
    path = sweep_dir / SCRIPT
    write_atomically(path, lambda fh: fh.write(text.encode("utf-8")), durable=True)
    path.chmod(0o755)  # sbatch reads it only after this returns
    return path


def submit(script: Path) -> str:
    """sbatch the script; the job id."""
    sbatch = shutil.which("sbatch")
    if sbatch is None:
        raise ToolMissingError("sbatch not found: Slurm is not installed or not on PATH here", FIX_SLURM)
    try:
        done = subprocess.run([sbatch, "--parsable", str(script)], capture_output=True, text=True,
                              timeout=SUBMIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CommandFailedError(f"sbatch {script} could not run: {exc}", FIX_SLURM, code="sbatch-failed") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise CommandFailedError(f"sbatch {script} failed (exit {done.returncode}): {last}",
                                 "fix the partition/account/time or --sbatch-arg values; the script is kept",
                                 code="sbatch-failed")
    return done.stdout.strip().split(";")[0]


QUERY_TIMEOUT_S = 20.0
# Slurm job states (squeue/sacct long names) by what they mean for a sweep's array task.
ACTIVE = ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD",
          "RESIZING", "SIGNALING", "STAGE_OUT", "SUSPENDED", "STOPPED", "RESV_DEL_HOLD", "SPECIAL_EXIT")
LOST = ("NODE_FAIL", "BOOT_FAIL")
# States in which a task waits to start (queued, or between runs after a requeue or a hold): the
# only ones whose reason `sweep status` keeps (sacct keeps the last reason on a task that has since
# run: BeginTime on a COMPLETED task).
WAITING = ("PENDING", "REQUEUED", "REQUEUE_FED", "REQUEUE_HOLD", "RESV_DEL_HOLD", "SPECIAL_EXIT")
# Pending reasons that no amount of waiting fixes (squeue %R / sacct Reason).
NEVER_RUNS = ("ReqNodeNotAvail", "Nodes required for job are DOWN", "PartitionNodeLimit", "PartitionDown", "PartitionInactive", "PartitionTimeLimit",
              "PartitionConfig", "BadConstraints", "InvalidAccount", "InvalidQOS", "DependencyNeverSatisfied",
              "JobHeldAdmin", "JobHeldUser", "NodeDown", "launch failed requeued held",
              "job requeued in held state")  # squeue's words after `scontrol requeuehold` (sacct: JobHeldUser)
# Of those, the holds: `scontrol release` (by the user, or an admin for JobHeldAdmin) lets them run.
HELD = ("JobHeldAdmin", "JobHeldUser", "launch failed requeued held", "job requeued in held state")
# Limits one job passes by itself (a QOS's or an association's per-job maximum or minimum): no
# other job ending clears them (per-user and group limits do, and are not listed).
NEVER_RUNS_LIMIT = re.compile(r"^(QOS|Assoc)(Max\w*PerJob\w*|Min\w+)$|^QOSMax(Wall|Node)\w*Limit$")
# Task words the log or the submission give when neither sacct nor squeue lists the task: it is
# still coming (SUBMITTED: sbatch accepted it moments ago; STARTED: its log began, with no end).
COMING = ("SUBMITTED", "STARTED")
# A task whose log began a run that never ended while squeue answers without it (squeue lists every
# task that is queued or running): it was killed with its node, or its batch step killed outright.
GONE = "GONE"


def never_runs(reason: str | None) -> bool:
    """Is a pending reason one that waiting never clears?"""
    r = (reason or "").strip()
    return any(r.startswith(x) for x in NEVER_RUNS) or bool(NEVER_RUNS_LIMIT.match(r.split(",")[0]))
# The worker's own exit codes that mean it ran and some entries failed (6) or were empty (4).
ENTRY_OUTCOME_CODES = (0, 4, 6)


def _query(argv: list[str]) -> tuple[str | None, str]:
    """stdout of a Slurm client, or None and why not (missing, failed, timed out)."""
    tool = shutil.which(argv[0])
    if tool is None:
        return None, f"{argv[0]} not found"
    try:
        done = subprocess.run([tool, *argv[1:]], capture_output=True, text=True, timeout=QUERY_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{argv[0]} failed: {exc}"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1][-200:]
        return None, f"{argv[0]} exited {done.returncode}: {last}"
    return done.stdout, argv[0]


def _state_word(state: str) -> str:
    """'CANCELLED by 0' -> 'CANCELLED'."""
    return state.strip().split(" ")[0].rstrip("+")


def _exit_code(text: str) -> int | None:
    """Slurm's 'code:signal' -> the shell's view: the code, or 128 + the signal that ended it."""
    code, _, sig = text.strip().partition(":")
    if sig.isdigit() and int(sig) > 0:
        return 128 + int(sig)
    return int(code) if code.isdigit() else None


MAX_TASK_IDS = 100_000  # a pending range is expanded at most this far


def task_ids(job_field: str) -> list[str]:
    """'12_3' -> ['3']; a pending range not yet split, '12_[2-4,7%2]' -> ['2', '3', '4', '7'];
    a job step or anything else -> []."""
    _, sep, task = job_field.strip().partition("_")
    if not sep:
        return []
    if task.isdigit():
        return [task]
    m = re.fullmatch(r"\[([\d,\-]+)(?:%\d+)?\]", task)
    if not m:
        return []
    out: list[str] = []
    for part in m.group(1).split(","):
        lo, _, hi = part.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or len(lo) > 9 or len(hi) > 9:
            return []
        out += [str(i) for i in range(int(lo), min(int(hi or lo), int(lo) + MAX_TASK_IDS) + 1)]
        if len(out) > MAX_TASK_IDS:
            break
    return out[:MAX_TASK_IDS]


SACCT_FORMAT = "JobID,State,ExitCode,NodeList,Reason"


def parse_sacct(text: str) -> dict[str, dict[str, TaskRow]]:
    """`sacct -n -P -X -D --format=JobID,State,ExitCode,NodeList,Reason` lines of one or more array
    jobs -> per job id, per array task id. With -D
    sacct lists every run of a task, earliest first: the last is the task's row, the earlier ones
    (NODE_FAIL, REQUEUED, ...) its `earlier` runs."""
    runs: dict[tuple[str, str], list[TaskRow]] = {}
    for line in text.splitlines():
        parts = line.split("|")
        if len(parts) != 5:
            continue
        job = parts[0].split("_")[0]
        for task in task_ids(parts[0]):
            state = _state_word(parts[1])
            runs.setdefault((job, task), []).append(TaskRow(
                f"{job}_{task}", state, None if state in ACTIVE else _exit_code(parts[2]),
                None if parts[3] in ("", "None assigned") else parts[3],
                None if parts[4] in ("", "None") else parts[4], "sacct"))
    jobs: dict[str, dict[str, TaskRow]] = {}
    for (job, task), rows in runs.items():
        row = rows[-1]
        row.earlier = [_run_word(r) for r in rows[:-1]]
        jobs.setdefault(job, {})[task] = row
    return jobs


def _run_word(row: TaskRow) -> str:
    """An earlier run of a task, as status shows it: 'NODE_FAIL on vm', 'REQUEUED (exit 143)'."""
    return row.state + (f" on {row.node}" if row.node else "") + (
        f" (exit {row.exit_code})" if row.exit_code not in (None, 0) else "")


def sacct(job_ids: list[str]) -> tuple[dict[str, dict[str, TaskRow]] | None, str]:
    """Per array job, per task (by task id): state, exit code, node and reason from accounting,
    with the task's earlier runs (-D: a requeue after NODE_FAIL keeps the failed run); one query
    for every job given. None when sacct cannot answer (not installed, accounting disabled). Right
    after sbatch accounting lags the controller by about a second: a job missing from the answer
    then means "not recorded yet"."""
    out, note = _query(["sacct", "-n", "-P", "-X", "-D", "-j", ",".join(job_ids), f"--format={SACCT_FORMAT}"])
    if out is None:
        return None, note
    return parse_sacct(out), "sacct"


def parse_squeue(text: str) -> dict[str, dict[str, TaskRow]]:
    """`squeue -h -r -t all -o %i|%K|%T|%N|%R` lines -> per array job id, per task id."""
    jobs: dict[str, dict[str, TaskRow]] = {}
    for line in text.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 5 or not parts[1].isdigit():
            continue
        reason = parts[4].strip()
        if reason.startswith("(") and reason.endswith(")"):
            reason = reason[1:-1]
        jobs.setdefault(parts[0].split("_")[0], {})[parts[1]] = TaskRow(
            parts[0], _state_word(parts[2]), None, parts[3] or None,
            None if reason in ("", "None") or reason == parts[3] else reason, "squeue")
    return jobs


LEFT_QUEUE = "the job has left the queue"


def squeue(job_ids: list[str]) -> tuple[dict[str, dict[str, TaskRow]] | None, str]:
    """Per array job, per task: state, node and reason as the controller holds them now (finished
    tasks stay listed for MinJobAge), one query for every job given; a job that left the
    controller is missing (squeue refuses a single such job id: {}); None when squeue fails."""
    out, note = _query(["squeue", "-h", "-r", "-t", "all", "-j", ",".join(job_ids), "-o", "%i|%K|%T|%N|%R"])
    if out is None:
        return ({}, "squeue") if "Invalid job id" in note else (None, note)
    return parse_squeue(out), "squeue"


# sinfo's short node states that take no job (down, drained, draining, failing, not responding...).
UNUSABLE_NODE = re.compile(r"^(down|drain|drng|drained|draining|fail|failg|maint|boot|powered_down|"
                           r"power_down|pow_dn|inval|futr|future|unk|unknown)")


def node_health(partition: str | None) -> tuple[int, list[NodeDown]] | None:
    """(nodes that can take a job, [{node, state, reason}] that cannot) in the partition (all
    partitions when None), from sinfo; None when sinfo cannot answer."""
    out, _ = _query(["sinfo", "-h", "-N", "-o", "%N|%t|%E", *(["-p", partition] if partition else [])])
    if out is None:
        return None
    usable, down = set(), {}
    for line in out.splitlines():
        parts = line.strip().split("|", 2)
        if len(parts) != 3:
            continue
        node, state, reason = parts
        if UNUSABLE_NODE.match(state.rstrip("*~#!%$@^-")):
            down[node] = NodeDown(node, state, None if reason in ("", "none") else reason)
        else:
            usable.add(node)
    return len(usable - set(down)), list(down.values())


def read_task_log(path: Path) -> TaskLog | None:
    """What the script's begin/end lines say (TaskLog); None when there is no log."""
    from hotspot.sweep.manifest import read_regular

    try:
        text = read_regular(path, MAX_LOG_BYTES).decode("utf-8", "replace")
    except (OSError, ValueError):
        return None
    except Exception:  # noqa: BLE001 - InputError (a special file): no log to read
        return None
    starts, code, term, node = 0, None, False, None
    for line in text.splitlines():
        if line.startswith(TASK_BEGIN):
            starts += 1
            code, term = None, False
            m = re.search(r" on (\S+) at ", line)
            node = m.group(1) if m else node
        elif line.startswith(TASK_END):
            m = re.search(r"exit (\d+)", line)
            code = int(m.group(1)) if m else None
        elif "=== hotspot sweep: SIGTERM" in line:
            term = True
    return TaskLog(starts, code, code is not None, term, node)


def scancel(job_id: str) -> None:
    tool = shutil.which("scancel")
    if tool is None:
        raise ToolMissingError("scancel not found: Slurm is not installed or not on PATH here", FIX_SLURM)
    try:
        done = subprocess.run([tool, str(job_id)], capture_output=True, text=True, timeout=QUERY_TIMEOUT_S,
                              stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CommandFailedError(f"scancel {job_id} could not run: {exc}", FIX_SLURM, code="scancel-failed") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        raise CommandFailedError(f"scancel {job_id} failed (exit {done.returncode}): {last}",
                                 "check the job id with squeue -j JOB", code="scancel-failed")


# ---------------------------------------------------------------------------- before sbatch
@record
class NodeShape:
    """One node of a partition as sinfo gives it; memory in MiB (None: not configured)."""

    name: str
    cpus: int
    memory_mib: int | None
    gpus: int


@record
class PartitionShape:
    name: str
    nodes: list[NodeShape]
    max_cpus_per_node: int | None  # the partition's MaxCPUsPerNode (None: unlimited)

    def cpus(self, node: NodeShape) -> int:
        """The CPUs a job may use on `node` in this partition."""
        return min(node.cpus, self.max_cpus_per_node) if self.max_cpus_per_node else node.cpus


def _gres_gpu_count(gres: str) -> int:
    """sinfo %G ('gpu:4', 'gpu:mi300x:8(S:0-1),shard:16', '(null)') -> the GPUs it holds."""
    return sum(int(m.group(1)) for m in re.finditer(r"(?:^|,)gpu(?::[^:,()]+)?:(\d+)", gres))


def _partition_fields(text: str) -> dict[str, str]:
    return dict(kv.split("=", 1) for kv in text.split() if "=" in kv)


def partition_shape(partition: str | None) -> tuple[PartitionShape | None, str]:
    """The nodes of `partition` (the default partition when None): CPUs, memory and GPUs per node,
    and the partition's per-node CPU cap; None and why when Slurm cannot say. A partition that does
    not exist is refused here (exit 2) with the ones that do."""
    out, note = _query(["scontrol", "--all", "show", "partition", "-o"])  # hidden partitions too
    if out is None:
        return None, note
    parts = [_partition_fields(line) for line in out.splitlines() if line.startswith("PartitionName=")]
    names = [p.get("PartitionName", "") for p in parts]
    if partition is None:
        chosen = next((p for p in parts if p.get("Default") == "YES"), None)
        if chosen is None:
            raise UsageError(f"this Slurm cluster has no default partition (partitions: {', '.join(names)})",
                             "give one with --partition")
    else:
        chosen = next((p for p in parts if p.get("PartitionName") == partition), None)
        if chosen is None:
            raise UsageError(f"--partition {partition}: no such partition here (partitions: {', '.join(names)})",
                             "give one of them with --partition")
    name = chosen["PartitionName"]
    cap = chosen.get("MaxCPUsPerNode", "UNLIMITED")
    out, note = _query(["sinfo", "-h", "-N", "-p", name, "-o", "%N|%c|%m|%G"])
    if out is None:
        return None, note
    nodes: dict[str, NodeShape] = {}
    for line in out.splitlines():
        f = line.strip().split("|")
        if len(f) != 4 or not f[1].isdigit():
            continue
        mem = int(f[2]) if f[2].isdigit() else None
        nodes[f[0]] = NodeShape(f[0], int(f[1]), mem, _gres_gpu_count(f[3]))
    return PartitionShape(name, list(nodes.values()), int(cap) if cap.isdigit() else None), "sinfo"


MEM_UNITS = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}


def mem_request_mib(sbatch_args: list[str]) -> int | None:
    """--mem=N[KMGT] (MiB by default, Slurm's unit) among the extra sbatch lines; None without it."""
    for arg in sbatch_args:
        m = re.fullmatch(r"--mem=(\d+)([KMGT]?)B?", arg.strip(), re.IGNORECASE)
        if m:
            return int(int(m.group(1)) * MEM_UNITS[(m.group(2) or "M").upper()])
    return None


def cpus_request(sbatch_args: list[str]) -> int | None:
    """--cpus-per-task=N (or -c N) among the extra sbatch lines."""
    for arg in sbatch_args:
        m = re.fullmatch(r"(?:--cpus-per-task=|-c\s*)(\d+)", arg.strip())
        if m:
            return int(m.group(1))
    return None


def partition_arg(partition: str | None, sbatch_args: list[str]) -> str | None:
    """The partition the job goes to: --partition, else --partition=P / -p P among the sbatch lines."""
    for arg in sbatch_args:
        m = re.fullmatch(r"(?:--partition=|-p\s*)(\S+)", arg.strip())
        if m:
            return m.group(1)
    return partition


def fit_cpus(shape: PartitionShape, cpus: int, explicit: bool, gpus_asked: int | None, gpus_per_task: int,
             mem_mib: int | None) -> tuple[int, str | None]:
    """The --cpus-per-task to ask, and a note when it is not `cpus`: a request no node of the
    partition can satisfy is refused (UsageError, the numbers and the fix); the default (4 per
    GPU) is clipped to the CPUs a node has per GPU, so that a task never asks for more than its
    share of a node and never for more than a node has."""
    where = f"partition {shape.name}"
    if not shape.nodes:
        raise UsageError(f"{where} has no nodes", "give another --partition")
    fits = [n for n in shape.nodes if gpus_asked is None or n.gpus >= gpus_asked]
    if not fits:
        most = max(shape.nodes, key=lambda n: n.gpus)
        raise UsageError(f"{gpus_asked} GPUs per task: no node of {where} has that many (the most: {most.gpus} on "
                         f"{most.name})", f"ask for {most.gpus} or fewer (--sbatch-arg=--gres=gpu:{most.gpus}), "
                         "or another --partition")
    if mem_mib is not None:
        roomy = [n for n in fits if n.memory_mib is None or n.memory_mib >= mem_mib]
        if not roomy:
            most = max(fits, key=lambda n: n.memory_mib or 0)
            raise UsageError(f"--mem={mem_mib}M: no node of {where}{_with(gpus_asked)} has that much memory "
                             f"(the most: {most.memory_mib}M on {most.name})",
                             f"ask --sbatch-arg=--mem={most.memory_mib}M or less, or another --partition")
        fits = roomy
    best = max(fits, key=shape.cpus)
    if explicit:
        if shape.cpus(best) < cpus:
            cap = (f"; the partition allows {shape.max_cpus_per_node} per node"
                   if shape.max_cpus_per_node and shape.max_cpus_per_node < best.cpus else "")
            raise UsageError(f"--cpus-per-task {cpus}: no node of {where}{_with(gpus_asked)} has that many CPUs "
                             f"(the most: {shape.cpus(best)} on {best.name}{cap})",
                             f"ask --cpus-per-task {shape.cpus(best)} or fewer, or another --partition")
        return cpus, None

    def share(n: NodeShape) -> int:  # the node's CPUs per GPU, times the task's GPUs
        have = shape.cpus(n)
        return min(have, max(1, have // n.gpus) * gpus_per_task) if n.gpus else have

    top = max(fits, key=share)
    clipped = min(cpus, share(top))
    if clipped == cpus:
        return cpus, None
    return clipped, (f"asking --cpus-per-task={clipped}, not the default {cpus} ({CPUS_PER_GPU} per GPU x "
                     f"{gpus_per_task}): the nodes of {where} have {shape.cpus(top)} CPUs for {top.gpus} GPUs "
                     f"({top.name}); set --cpus-per-task to choose")


def _with(gpus: int | None) -> str:
    return f" with {gpus} GPUs" if gpus else ""


def active_arrays(job_ids: list[str]) -> tuple[dict[str, list[str]] | None, str]:
    """Of these array jobs, those with a task still queued or running: {job id: [task states]};
    None when the controller cannot say."""
    if not job_ids:
        return {}, "squeue"
    jobs, note = squeue(job_ids)
    return (None, note) if jobs is None else (active_in(jobs), note)


def active_in(jobs: dict[str, dict[str, TaskRow]]) -> dict[str, list[str]]:
    """{job id: [the states of its tasks still queued or running]} of the jobs with one."""
    active: dict[str, list[str]] = {}
    for job, tasks in jobs.items():
        states = [t.state for t in tasks.values() if t.state in ACTIVE]
        if states:
            active[job] = states
    return active


def refuse_second_array(sweep_dir: Path, job_ids: list[str], force: bool) -> str | None:
    """A sweep runs one array at a time: refuse (InputError) a submission while an earlier array of
    it is queued or running, unless `force`; the warning to give, if any."""
    active, note = active_arrays(job_ids)
    if active is None:
        return f"could not tell whether the sweep's earlier array ({', '.join(job_ids)}) is still queued ({note})"
    if not active:
        return None
    said = "; ".join(f"job {j}: " + ", ".join(f"{states.count(s)} {s}" for s in dict.fromkeys(states))
                     for j, states in active.items())
    if force:
        return f"--force: submitting beside the sweep's array still queued or running ({said})"
    raise InputError(f"{sweep_dir}: an array of this sweep is still queued or running ({said}); a second one "
                     "would run the same entries beside it unseen",
                     f"follow it (hotspot sweep status {sweep_dir} --wait), cancel it (hotspot sweep cancel "
                     f"{sweep_dir}) and resubmit, or add --force to submit anyway", code="array-active",
                     details={"active_jobs": list[JsonValue](sorted(active))})
