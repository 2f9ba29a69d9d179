"""The sweep worker: one job per GPU, entries claimed from the manifest, until nothing is left.

Invariants (tests/test_sweep_scheduling.py checks them on recorded runs):
- at most one job per GPU at any moment: a GPU is taken from this worker's pool AND the host-wide
  lock of its physical device (hotspot/collect/device_lock.py: `<host>.dev<ID>.lock` in the host's
  lock folder, ID being the PCI address of the device the job is pinned to, found through the KFD
  topology whatever index Slurm or the inherited ROCR_VISIBLE_DEVICES list gives it, or that index
  where the topology cannot be read; held by every hotspot process of every user on the host, so
  two sweeps, or a sweep and a `hotspot collect`, never share a device, and workers given different
  devices never wait on each other) before its job starts, and returned only when the job's whole
  process group has exited;
- every entry is claimed exactly once per queueing: claims happen under the manifest lock;
- a timed-out entry's process group gets SIGINT (rocprofv3 flushes what it has), then SIGKILL.

Ctrl-C (or SIGTERM, which Slurm sends on scancel and at the time limit): stop launching, SIGINT
every running job's group, SIGKILL what is left after INTERRUPT_GRACE_S, mark those entries
interrupted. A second Ctrl-C kills at once.

A lock folder that becomes unusable mid-run (InputError while taking a device's lock) stops the
worker the same way, after the pass that met it is written to the manifest (its finished entries
and its launches); the running jobs end interrupted, and the error is raised once they have.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import field
from pathlib import Path
from types import FrameType
from typing import Callable

import orjson

from hotspot.diagnostics import QUIET
from hotspot.collect import device_lock, gpu_identity, process
from hotspot.errors import InputError
from hotspot.sweep import manifest as mf
from hotspot.sweep_records import EntryStatus, Finished, WorkerStatus
from hotspot.render.sweep import describe_counts
from hotspot.sweep.job import RESULT, SPEC, JobOutcome, JobSpec, read_outcome
from hotspot.record import record

POLL_S = 0.05
# A signalled job may take as long as `hotspot collect` gives rocprofv3 to flush its trace.
INTERRUPT_GRACE_S = process.INTERRUPT_GRACE_S
BUSY_RETRY_S = 0.5  # how often to look again at GPUs another process on this host holds
ENTRIES = "entries"


@record(frozen=False)
class WorkerOptions:
    gpus: tuple[int, ...]
    only: frozenset[str] = frozenset()
    att_retries: int = 2
    timeout_s: float | None = None  # for entries without their own timeout_s
    rocprofv3: str | None = None
    att_library_path: str | None = None


@record(frozen=False)
class Job:
    name: str
    gpu: int
    proc: subprocess.Popen[bytes]
    attempt_dir: Path
    started: float
    timeout_s: float | None
    lock_fds: list[int]
    signalled_at: float | None = None
    timed_out: bool = False
    killed: bool = False


@record(frozen=False)
class WorkerOutcome:
    worker: str
    finished: list[Finished] = field(default_factory=list)  # entries this worker completed
    interrupted: bool = False
    gpus: tuple[int, ...] = ()
    signum: int | None = None  # the first signal (SIGINT, SIGTERM, SIGHUP): exit 128 + it


def pin_env(base: dict[str, str], index: int) -> dict[str, str]:
    """The environment of a job pinned to GPU `index` (an ordinal among the GPUs this worker sees).

    ROCR_VISIBLE_DEVICES selects the device at the ROCr level; HIP numbers what ROCr exposes from 0,
    so HIP_VISIBLE_DEVICES is 0 (it also overrides CUDA_VISIBLE_DEVICES). When the worker itself was
    restricted (Slurm --gres sets ROCR_VISIBLE_DEVICES; or HIP_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES,
    or both levels), `index` counts within the devices the runtimes would give the worker
    (gpu_identity.pinned_names: the same rules, so a job never runs outside the restriction) and the
    entry gets that device alone."""
    env = dict(base)
    names = gpu_identity.pinned_names(env)
    if names is not None and index >= len(names):
        told = ", ".join(f"{k}={env[k]}" for k in ("ROCR_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES",
                                                   "CUDA_VISIBLE_DEVICES") if k in env)
        raise IndexError(f"GPU {index} is not among the {len(names)} visible devices ({told})")
    env["ROCR_VISIBLE_DEVICES"] = names[index] if names is not None else str(index)
    env["HIP_VISIBLE_DEVICES"] = "0"
    return env


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _killpg(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _fmt_s(seconds: float) -> str:
    seconds = int(round(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Worker:
    def __init__(self, sweep_dir: Path, opts: WorkerOptions, say: Callable[[str], None] | None = None) -> None:
        self.dir = Path(sweep_dir).resolve()
        self.opts = opts
        self.id = mf.worker_id()
        self.jobs: dict[int, Job] = {}  # by GPU
        self.interrupts = 0
        self.outcome = WorkerOutcome(self.id, gpus=opts.gpus)
        self.tty = sys.stderr.isatty()
        self._say = say or self._stderr
        self.elapsed: list[float] = []
        self.last_beat = 0.0
        self.next_try = 0.0  # when to look for a free GPU again after finding all locked
        self.devices = {g: pin_env(dict(os.environ), g)["ROCR_VISIBLE_DEVICES"] for g in opts.gpus}
        # what the host-wide locks are keyed by: the physical device behind each pinned environment
        self.lock_keys = {g: device_lock.lock_keys(pin_env(dict(os.environ), g), self._say) for g in opts.gpus}
        self.lock_dir: Path | None = None  # the lock folder, created and checked at the first lock
        self.stopped: InputError | None = None  # the lock folder failed: no new entries, then raise it
        self.told_busy: set[int] = set()  # GPUs found held by another process, said once

    # ------------------------------------------------------------------ progress
    def _stderr(self, line: str) -> None:
        sys.stderr.write(("\r\x1b[K" if self.tty else "") + line + "\n")
        sys.stderr.flush()

    def _status(self, doc: mf.Manifest) -> None:
        if QUIET["on"]:
            return  # --quiet: no progress; entry results and errors still print
        c = mf.counts(doc)
        running = ", ".join(f"{j.name}@GPU{self.devices[g]}" for g, j in sorted(self.jobs.items())) or "-"
        left = c["pending"] + c["running"]
        eta = ""
        if self.elapsed and left:
            per = sum(self.elapsed) / len(self.elapsed)
            eta = f", ETA {_fmt_s(per * left / max(1, len(self.opts.gpus)))}"
        line = f"[sweep] {describe_counts(c)} (running: {running}){eta}"
        if self.tty:
            try:
                width = (os.get_terminal_size(2).columns or 200) - 1  # 0 columns: a pty without a size
            except OSError:
                width = 199
            sys.stderr.write("\r\x1b[K" + line[:max(20, width)])
            sys.stderr.flush()
        else:
            self._say(line)

    def _busy(self, gpu: int) -> None:
        """Say once (until it is free again) that a device is held by another process on this host."""
        if gpu in self.told_busy:
            return
        self.told_busy.add(gpu)
        who = next(filter(None, (device_lock.holder(k) for k in self.lock_keys[gpu])), "")
        self._say(f"[sweep] GPU {self.devices[gpu]} is in use on this host by {who or 'another hotspot process'}; "
                  "waiting for it")

    def _take(self, gpu: int) -> list[int] | None:
        """The host-wide locks of `gpu`'s device (all or none), or None when another process holds one."""
        if self.lock_dir is None:
            self.lock_dir = device_lock.ready_folder()
        fds: list[int] = []
        try:
            for key in self.lock_keys[gpu]:
                fd = device_lock.try_lock(key, f"hotspot sweep {self.dir}", folder=self.lock_dir)
                if fd is None:
                    break
                fds.append(fd)
            else:
                return fds
        except BaseException:
            _close(fds)
            raise
        _close(fds)
        return None

    def _stop(self, exc: InputError) -> None:
        """The lock folder failed: launch nothing more, stop the running jobs as Ctrl-C does."""
        self.stopped = exc
        running = f"; stopping the {len(self.jobs)} running" if self.jobs else ""
        self._say(f"[sweep] the GPU locks failed: no new entries{running}")
        for job in self.jobs.values():
            self._signal_job(job, signal.SIGINT)

    def _halting(self) -> bool:
        return bool(self.interrupts) or self.stopped is not None

    # ------------------------------------------------------------------ signals
    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.interrupts += 1
        if self.outcome.signum is None:
            self.outcome.signum = signum
        if self.interrupts == 1:
            self._say(f"[sweep] {signal.Signals(signum).name}: no new entries; stopping the "
                      f"{len(self.jobs)} running (again to kill at once)")
            for job in self.jobs.values():
                self._signal_job(job, signal.SIGINT)
        else:
            for job in self.jobs.values():
                job.killed = True
                _killpg(job.proc.pid, signal.SIGKILL)

    def _signal_job(self, job: Job, sig: int) -> None:
        if job.signalled_at is None:
            job.signalled_at = time.monotonic()
        _killpg(job.proc.pid, sig)

    # ------------------------------------------------------------------ manifest
    def _beat(self, doc: mf.Manifest, state: WorkerStatus = WorkerStatus.RUNNING) -> None:
        w = doc.workers.get(self.id)
        if w is None:
            w = doc.workers[self.id] = mf.WorkerInfo(mf.hostname(), os.getpid(), list(self.opts.gpus), mf.utc_iso(),
                                                     _slurm_env(), devices=[self.devices[g] for g in self.opts.gpus])
        w.state, w.heartbeat_at, w.heartbeat_unix = state, mf.utc_iso(), time.time()
        self.last_beat = time.monotonic()

    def _launch(self, doc: mf.Manifest, gpu: int, lock_fds: list[int]) -> Job | None:
        """Claim the next pending entry (we hold the manifest lock) and start its job on `gpu`."""
        entry = next((e for e in doc.entries if e.state == EntryStatus.PENDING
                      and (not self.opts.only or e.name in self.opts.only)), None)
        if entry is None:
            return None
        entry.attempts += 1
        attempt_dir = self.dir / ENTRIES / entry.name / f"attempt-{entry.attempts}"
        while attempt_dir.exists():  # an attempt dir left by a worker killed mid-claim: never reuse it
            entry.attempts += 1
            attempt_dir = self.dir / ENTRIES / entry.name / f"attempt-{entry.attempts}"
        attempt_dir.mkdir(parents=True)
        spec = JobSpec(entry.recipe, str(self.dir), str(attempt_dir), self.opts.att_retries, self.opts.rocprofv3,
                       self.opts.att_library_path, os.getpid())
        (attempt_dir / SPEC).write_bytes(orjson.dumps(spec, option=orjson.OPT_INDENT_2))
        env = pin_env(dict(os.environ), gpu)
        log = attempt_dir / "job.log"
        try:
            with log.open("wb") as fh:
                proc = subprocess.Popen([sys.executable, "-m", "hotspot.sweep.job", str(attempt_dir / SPEC)],
                                        stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                        cwd=entry.recipe.cwd, start_new_session=True)
        except OSError as exc:  # e.g. its cwd vanished: this entry fails, the sweep goes on
            mf.set_state(entry, EntryStatus.FAILED, host=mf.hostname(), gpu=gpu, worker=self.id, started_at=mf.utc_iso(),
                         finished_at=mf.utc_iso(), exit_code=None, log=str(log.relative_to(self.dir)),
                         reason=f"cannot start the entry's job: {exc} (check its cwd {entry.recipe.cwd})")
            self._say(f"[sweep] failed {entry.name}: {entry.reason}")
            self.outcome.finished.append(Finished(entry.name, EntryStatus.FAILED, gpu, 0.0))
            return self._launch(doc, gpu, lock_fds)
        timeout = entry.recipe.timeout_s or self.opts.timeout_s
        mf.set_state(entry, EntryStatus.RUNNING, host=mf.hostname(), gpu=gpu, device=env["ROCR_VISIBLE_DEVICES"],
                     pid=proc.pid, worker=self.id,
                     started_at=mf.utc_iso(), finished_at=None, elapsed_s=None, exit_code=None, reason=None,
                     log=str(log.relative_to(self.dir)), run_dir=None, report_html=None, plan_json=None,
                     kernel=None, summary=None, att_attempts=[], warnings=[])
        self._say(f"[sweep] start {entry.name} on GPU {env['ROCR_VISIBLE_DEVICES']} (pid {proc.pid}, "
                  f"attempt {entry.attempts})")  # the physical device: two workers' index 0 differ
        return Job(entry.name, gpu, proc, attempt_dir, time.monotonic(), timeout, lock_fds)

    def _finish(self, doc: mf.Manifest, job: Job) -> None:
        entry = doc.entry(job.name)
        elapsed = time.monotonic() - job.started
        result: JobOutcome | None = None
        try:
            result = read_outcome(job.attempt_dir / RESULT)
        except (OSError, orjson.JSONDecodeError, InputError):
            pass
        code = job.proc.returncode
        if job.timed_out:
            state = EntryStatus.TIMED_OUT
            reason = (f"timed out after {job.timeout_s:g} s; its process group was stopped "
                      f"(raise timeout_s in the recipe, or profile a shorter run)")
        elif result is not None and result.state == EntryStatus.DONE:  # finished before the interrupt reached it
            state, reason = EntryStatus.DONE, None
        elif self._halting() and (job.signalled_at is not None or job.killed):
            state, reason = EntryStatus.INTERRUPTED, (
                "the sweep was interrupted (Ctrl-C/SIGTERM); the same command again finishes it" if self.interrupts
                else "the sweep stopped: its GPU locks failed (see its error); the same command again finishes it")
        elif result is not None:
            state, reason = result.state, result.reason
        else:
            state, reason = EntryStatus.FAILED, f"the entry's job exited {code} without a result (see {entry.log})"
        if entry.worker != self.id or entry.state != EntryStatus.RUNNING:
            # Someone reclaimed it (our heartbeat went stale): record, but do not overwrite theirs.
            entry.history.append(mf.LateResult(self.id, state, mf.utc_iso()))
            return
        r = result or JobOutcome(state, code, None, reason)
        mf.set_state(entry, state, finished_at=mf.utc_iso(), elapsed_s=round(elapsed, 3),
                     exit_code=(r.exit_code if result is not None else code) if not job.timed_out else None,
                     reason=reason, run_dir=r.run_dir, report_html=r.report_html, plan_json=r.plan_json,
                     summary=r.summary, kernel=r.kernel, att_attempts=r.att_attempts, warnings=r.warnings, pid=None)
        self.elapsed.append(elapsed)
        self.outcome.finished.append(Finished(job.name, state, job.gpu, round(elapsed, 3)))
        what = state if state != EntryStatus.DONE else "done"
        extra = f": {reason}" if reason and state != EntryStatus.DONE else ""
        self._say(f"[sweep] {what} {job.name} on GPU {self.devices[job.gpu]} in {_fmt_s(elapsed)}{extra}")

    # ------------------------------------------------------------------ loop
    def _reap(self) -> list[Job]:
        """Jobs whose process group has exited completely; stragglers in a group get SIGKILL."""
        done = []
        now = time.monotonic()
        for job in list(self.jobs.values()):
            if job.timeout_s is not None and not job.timed_out and now - job.started > job.timeout_s:
                job.timed_out = True
                self._say(f"[sweep] {job.name} on GPU {self.devices[job.gpu]}: timeout ({job.timeout_s:g} s), "
                          "stopping it")
                self._signal_job(job, signal.SIGINT)
            if job.signalled_at is not None and not job.killed and now - job.signalled_at > INTERRUPT_GRACE_S:
                job.killed = True
                _killpg(job.proc.pid, signal.SIGKILL)
            if job.proc.poll() is None:
                continue
            if _group_alive(job.proc.pid):  # the leader is gone but not its tree: the GPU is not free
                _killpg(job.proc.pid, signal.SIGKILL)
                continue
            done.append(job)
        return done

    def run(self) -> WorkerOutcome:
        previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
                    if s != signal.SIGHUP or signal.getsignal(s) != signal.SIG_IGN}  # nohup's choice stays
        for s in previous:
            signal.signal(s, self._on_signal)
        try:
            self._loop()
        finally:
            for s, h in previous.items():
                signal.signal(s, h)
            for job in self.jobs.values():  # only reached on an internal error: leave nothing running
                _killpg(job.proc.pid, signal.SIGKILL)
            if self.tty:
                sys.stderr.write("\r\x1b[K")
        if self.stopped is not None:
            raise self.stopped  # the pass, and the stopped jobs, are in the manifest
        self.outcome.interrupted = self.interrupts > 0
        return self.outcome

    def _loop(self) -> None:
        with mf.locked(self.dir) as doc:
            self._beat(doc)
        exhausted = False
        while True:
            finished = self._reap()
            free = [g for g in self.opts.gpus if g not in self.jobs]
            want_launch = (bool(free) and not self._halting() and not exhausted
                           and time.monotonic() >= self.next_try)
            beat_due = time.monotonic() - self.last_beat > mf.HEARTBEAT_S
            if finished or want_launch or beat_due:
                changed = bool(finished)
                with mf.locked(self.dir) as doc:
                    for job in finished:
                        self._finish(doc, job)
                        del self.jobs[job.gpu]
                        _close(job.lock_fds)
                        free.append(job.gpu)
                    if not self._halting() and not exhausted:
                        mf.reclaim_stale(doc)
                        for gpu in sorted(free):
                            try:
                                fds = self._take(gpu)
                            except InputError as exc:  # raised after this pass is written (not lost)
                                self._stop(exc)
                                break
                            if fds is None:  # another process on this host runs a job on it
                                self._busy(gpu)
                                self.next_try = time.monotonic() + BUSY_RETRY_S
                                continue
                            self.told_busy.discard(gpu)
                            launched = self._launch(doc, gpu, fds)
                            if launched is None:
                                _close(fds)
                                exhausted = not any(e.state == EntryStatus.PENDING for e in doc.entries
                                                    if not self.opts.only or e.name in self.opts.only)
                                break
                            self.jobs[gpu] = launched
                            changed = True
                    self._beat(doc, WorkerStatus.RUNNING if self.jobs or not (exhausted or self._halting())
                               else WorkerStatus.INTERRUPTED if self._halting() else WorkerStatus.FINISHED)
                    if changed:
                        self._status(doc)
            if not self.jobs and (exhausted or self._halting()):
                with mf.locked(self.dir) as doc:  # the worker's last word: finished, or interrupted
                    self._beat(doc, WorkerStatus.INTERRUPTED if self._halting() else WorkerStatus.FINISHED)
                return
            time.sleep(POLL_S)


def _close(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def _slurm_env() -> dict[str, str] | None:
    keys = ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURMD_NODENAME")
    found = {k.lower(): os.environ[k] for k in keys if os.environ.get(k)}
    return found or None
