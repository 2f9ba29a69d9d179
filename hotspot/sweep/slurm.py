"""Hand a sweep to Slurm: a job array with one task per node, each a `hotspot sweep --worker`.

No scheduler of our own across nodes: Slurm places the tasks, every task runs the same worker loop
as a one-node sweep (all GPUs of its node), and the tasks share the work through the manifest lock
on the shared filesystem.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from hotspot.errors import CommandFailedError, ToolMissingError
from hotspot.result import JsonObject

SCRIPT = "sweep.sbatch"
LOG_DIR = "slurm"
SUBMIT_TIMEOUT_S = 60.0
FIX_SLURM = ("run on a Slurm login node (sbatch on PATH, e.g. `module load slurm`), or use "
             "--dry-run to write the script and submit it yourself")


def script_text(sweep_dir: Path, *, nodes: int, gpus: str, partition: str | None, time_limit: str | None,
                account: str | None, sbatch_args: list[str], prelude: str, job_name: str) -> str:
    d = str(sweep_dir)
    lines = ["#!/bin/bash",
             "# Written by `hotspot sweep --slurm`: one array task per node, each pulling entries from",
             f"# {d}/sweep.json (which must be on a filesystem every node shares).",
             f"#SBATCH --job-name={job_name}",
             f"#SBATCH --array=0-{nodes - 1}",
             "#SBATCH --nodes=1",
             "#SBATCH --ntasks=1",
             f"#SBATCH --output={d}/{LOG_DIR}/%A_%a.out"]
    for flag, value in (("--partition", partition), ("--time", time_limit), ("--account", account)):
        if value:
            lines.append(f"#SBATCH {flag}={value}")
    lines += [f"#SBATCH {arg}" for arg in sbatch_args]
    lines += ["set -eo pipefail"]
    if prelude.strip():
        lines += ["# slurm.prelude from the recipes file", prelude.rstrip("\n")]
    lines += [f"cd {shlex.quote(d)}",
              f"exec {shlex.quote(sys.executable)} -m hotspot sweep --worker {shlex.quote(d)} "
              f"--gpus {shlex.quote(gpus)}", ""]
    return "\n".join(lines)


def write_script(sweep_dir: Path, text: str) -> Path:
    (sweep_dir / LOG_DIR).mkdir(exist_ok=True)
    path = sweep_dir / SCRIPT
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    tmp.chmod(0o755)
    tmp.replace(path)
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


def squeue(job_id: str) -> tuple[list[JsonObject] | None, str]:
    """The array's tasks as squeue lists them now ([] once they left the queue), or None when
    squeue is missing or fails; plus a note saying which."""
    tool = shutil.which("squeue")
    if tool is None:
        return None, "squeue not found"
    try:
        done = subprocess.run([tool, "-h", "-r", "-j", str(job_id), "-o", "%i|%K|%T|%N|%M|%R"],
                              capture_output=True, text=True, timeout=SUBMIT_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"squeue failed: {exc}"
    if done.returncode != 0:
        text = done.stderr.strip()
        if "Invalid job id" in text:
            return [], "the job has left the queue"
        return None, f"squeue exited {done.returncode}: {text[-200:]}"
    tasks = []
    for line in done.stdout.splitlines():
        parts = line.strip().split("|")
        if len(parts) != 6:
            continue
        tasks.append({"job_id": parts[0], "array_task_id": parts[1], "state": parts[2], "node": parts[3],
                      "elapsed": parts[4], "reason": parts[5]})
    return tasks, "squeue" if tasks else "the job has left the queue"
