"""One sweep entry, run as a child process: `python -m hotspot.sweep.job SPEC.json`.

Why a child process that calls the collect API, rather than the sweep calling it in-process or
shelling out to `hotspot collect` several times:
- it is exactly `hotspot collect`'s code path (hotspot.collect.api.collect with the same options),
  pinned to one GPU by HIP_VISIBLE_DEVICES/ROCR_VISIBLE_DEVICES set in its environment;
- it leads its own process group, and rocprofv3 and the application stay in that group
  (process.OWN_PROCESS_GROUP = False), so the sweep can stop the whole tree of an entry with one
  killpg (timeout, Ctrl-C) and knows the GPU is free when that group is empty;
- the empty-trace retries, the `analyze --plan` consolidation and the per-entry HTML report happen
  in the same child, so the sweep's scheduling loop never blocks on an analysis;
- if the sweep process dies (kill -9), the kernel's parent-death signal stops the job too.

The outcome is written to `result.json` in the attempt directory; the sweep reads it when the
group has exited. stdout/stderr (the collect progress lines) go to `job.log` beside it.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

import orjson

from dataclasses import field

from hotspot.collect.run_result import CollectRun, Kernel
from hotspot.record import record
from hotspot.decode import from_plain
from hotspot.sweep_records import AttAttempt, EntryStatus, FailedAttempt, Recipe
from hotspot.sweep.recipes import Entry
from hotspot.sweep_records import Summary

if TYPE_CHECKING:
    from hotspot.collect.api import CollectOptions

RESULT = "result.json"
SPEC = "job.json"
PLAN = "plan.json"
REPORT = "report.html"
PR_SET_PDEATHSIG = 1  # linux/prctl.h
WIDE_SE_MASK = 0xF
WIDER_SE_MASK = 0xFF
EMPTY_REMEDIES = ("use a larger grid or more waves, set att.target_cu / att.shader_engine_mask in the "
                  "recipe to a CU that runs the kernel, check kernel and iterations match a real dispatch")


@record
class JobSpec:
    """`job.json`: what the sweep asks of one attempt (written by the scheduler)."""

    entry: Recipe
    sweep_dir: str
    attempt_dir: str
    att_retries: int
    rocprofv3: str | None
    att_library_path: str | None
    parent_pid: int


@record(frozen=False)
class JobOutcome:
    """`result.json`: how the attempt ended (read by the scheduler when the job's group exited)."""

    state: EntryStatus
    exit_code: int | None
    code: str | None
    reason: str | None
    att_attempts: list[FailedAttempt | AttAttempt] = field(default_factory=list)
    run_dir: str | None = None
    kernel: Kernel | None = None  # collect's kernel choice, written into the manifest as it is
    summary: Summary | None = None
    plan_json: str | None = None
    report_html: str | None = None
    warnings: list[str] = field(default_factory=list)


def read_spec(path: Path) -> JobSpec:
    return from_plain(JobSpec, orjson.loads(path.read_bytes()), source=path, hint="a job.json the sweep wrote")


def read_outcome(path: Path) -> JobOutcome:
    return from_plain(JobOutcome, orjson.loads(path.read_bytes()), source=path,
                      hint="a result.json the sweep's job wrote")


def att_variants(entry: Entry, retries: int) -> list[tuple[int, int]]:
    """(target_cu, shader_engine_mask) for the first capture and each retry. Small grids often miss
    the default CU 1 of SE 0: widen the shader-engine mask first (every traced SE then contributes
    its target CU), then move to CU 0 (the first CU the dispatcher fills), then other CUs."""
    first = (entry.target_cu, entry.shader_engine_mask)
    wide = entry.shader_engine_mask | WIDE_SE_MASK
    cands = [first, (entry.target_cu, wide), (0, wide), (0, WIDER_SE_MASK), (2, WIDER_SE_MASK),
             (3, WIDER_SE_MASK)]
    out: list[tuple[int, int]] = []
    for c in cands + [(cu, WIDER_SE_MASK) for cu in range(4, 64)]:
        if c not in out:
            out.append(c)
        if len(out) == retries + 1:
            break
    return out


def _pin_to_parent(parent: int) -> None:
    """Die with the sweep: a kill -9 of the sweep must not leave its entries running on GPUs."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # the parent died before prctl took effect
        os.killpg(0, signal.SIGKILL)


def _on_sigterm(_signum: int, _frame: FrameType | None) -> None:
    os.killpg(0, signal.SIGKILL)  # the whole entry: us, rocprofv3, the application


def _collect_options(entry: Entry, out: Path, cu: int, mask: int, spec: JobSpec,
                     kernel: str | None, iterations: str | None) -> CollectOptions:
    from hotspot.collect.api import CollectOptions
    from hotspot.collect.rocprof_jobs import AttSettings

    return CollectOptions(
        command=entry.cmd, cwd=Path(entry.cwd), output=out, kernel=kernel, iterations=iterations,
        att=AttSettings(target_cu=cu, se_mask=mask, simd_select=entry.simd_select, buffer_size=entry.buffer_size),
        env=entry.env, pmc=entry.pmc, analyze=False, rocprofv3=spec.rocprofv3,
        att_library_path=spec.att_library_path)


def run_entry(spec: JobSpec) -> JobOutcome:
    from hotspot.collect.api import CollectInterrupted, collect
    from hotspot.errors import EmptyTraceError, HotspotError

    entry = Entry.from_recipe(spec.entry)
    attempt_dir = Path(spec.attempt_dir)
    def say(m: str) -> None:  # the job log
        sys.stderr.write(m + "\n")
        sys.stderr.flush()

    attempts: list[AttAttempt] = []
    kernel, iterations = entry.kernel, entry.iterations
    collected: CollectRun | None = None
    variants = att_variants(entry, spec.att_retries)
    for n, (cu, mask) in enumerate(variants):
        out = attempt_dir / ("collect" if n == 0 else f"collect-retry{n}")
        where = (cu, hex(mask), str(out.relative_to(spec.sweep_dir)))
        say(f"[sweep] capture {n + 1}/{len(variants)}: att_target_cu {cu}, att_shader_engine_mask {hex(mask)}")
        try:
            ran = collect(_collect_options(entry, out, cu, mask, spec, kernel, iterations), say=say).data
            assert isinstance(ran, CollectRun)  # not a dry run
            collected = ran
            attempts.append(AttAttempt(*where, "ok"))
            break
        except EmptyTraceError as err:
            attempts.append(FailedAttempt(*where, err.code, err.message))
            if err.code != "empty-trace":  # no kernel launched at all: another CU will not help
                return JobOutcome(EntryStatus.FAILED, err.exit_code, err.code, err.message, attempts, where[2])
            # Retries trace the same kernel and iterations as the first capture: no new discovery.
            run_json = out / "run.json"
            if run_json.is_file():
                from hotspot.collect.rundir import read_choice

                chosen = read_choice(run_json)
                kernel = kernel or (chosen.kernel.regex if chosen.kernel else None)
                iterations = iterations or (chosen.iterations.range if chosen.iterations else None)
        except CollectInterrupted as err:
            attempts.append(FailedAttempt(*where, "interrupted", err.message))
            return JobOutcome(EntryStatus.INTERRUPTED, 130, "interrupted", err.message, attempts, where[2])
        except HotspotError as err:
            attempts.append(FailedAttempt(*where, err.code, err.message))
            state = EntryStatus.TIMED_OUT if err.code == "timeout" else EntryStatus.FAILED
            return JobOutcome(state, err.exit_code, err.code,
                              err.message + (f" (next: {err.hint})" if err.hint else ""), attempts, where[2])
    if collected is None:
        tried = ", ".join(f"CU {a.target_cu}/SE mask {a.shader_engine_mask}" for a in attempts)
        return JobOutcome(EntryStatus.EMPTY, 4, "empty-trace",
                          f"no wave reached the traced CU in {len(attempts)} capture(s) ({tried}); "
                          f"remedies: {EMPTY_REMEDIES}", attempts, attempts[-1].run_dir)
    return _consolidate(spec, collected, attempts, say)


def _consolidate(spec: JobSpec, collected: CollectRun, attempts: list[AttAttempt],
                 say: Callable[[str], None]) -> JobOutcome:
    from hotspot.att.model import PLAN_ATTACHED, AnalyzeOptions
    from hotspot.errors import HotspotError
    from hotspot.plan.entry_point import analyze
    from hotspot.plan.api import PlannedDispatch
    from hotspot.sweep.entry_summary import summarize, trace_timing

    sweep_dir = Path(spec.sweep_dir)
    attempt_dir = Path(spec.attempt_dir)
    run_dir = Path(collected.run_dir)
    def rel(p: str | Path) -> str:
        return str(Path(p).relative_to(sweep_dir))

    kernel = collected.kernel
    result = JobOutcome(EntryStatus.DONE, 0, None, None, attempts, rel(run_dir), kernel)
    assert collected.chosen_dispatch is not None  # an ATT capture that ended well chose one
    dispatch = Path(collected.chosen_dispatch.path)
    say(f"[sweep] analyze --plan {dispatch}")
    try:
        planned = analyze(dispatch, AnalyzeOptions(jobs=1, plan=PLAN_ATTACHED))
    except HotspotError as err:
        result.state, result.exit_code, result.code = EntryStatus.FAILED, err.exit_code, err.code
        result.reason = f"analysis of {dispatch.name} failed: {err.message}"
        return result
    (attempt_dir / PLAN).write_bytes(planned.to_json())
    result.plan_json = rel(attempt_dir / PLAN)
    one = planned.data  # hotspot/plan/api.py PlannedDispatch: the analysis and its plan
    assert isinstance(one, PlannedDispatch)
    names = [n for n in (one.analysis.dispatch.kernel, kernel.name if kernel is not None else None) if n]
    timing = trace_timing(run_dir / "att", collected.chosen_dispatch.dispatch_id,
                          [d.dispatch_id for d in collected.dispatches], names)
    # the manifest holds paths relative to the sweep dir
    result.summary = summarize(one.analysis, one.plan.items, kernel, rel(dispatch), timing.traced_ns,
                               timing.untraced_avg_ns)
    result.warnings += list(planned.warnings)
    try:
        from hotspot.export.report_file import write_report

        write_report(dispatch, str(attempt_dir / REPORT), False)
        result.report_html = rel(attempt_dir / REPORT)
    except HotspotError as err:  # the summary stands; say why there is no page
        result.warnings.append(f"report: {err.message}")
    return result


def main(argv: list[str]) -> int:
    spec_path = Path(argv[0])
    spec = read_spec(spec_path)
    _pin_to_parent(spec.parent_pid)
    signal.signal(signal.SIGTERM, _on_sigterm)
    from hotspot.collect import process

    process.OWN_PROCESS_GROUP = False
    from hotspot.collect import api as collect_api

    collect_api.STREAM_OUTPUT["on"] = False  # the entry's log holds the program's output
    collect_api.DEVICE_LOCKS["on"] = False  # the worker holds this entry's device lock
    try:
        result = run_entry(spec)
    except KeyboardInterrupt:
        result = JobOutcome(EntryStatus.INTERRUPTED, 130, "interrupted", "interrupted")
    except Exception as exc:  # noqa: BLE001 - a bug in one entry must not lose the sweep's record of it
        import traceback

        traceback.print_exc()
        result = JobOutcome(EntryStatus.FAILED, 1, "internal-error",
                            f"internal error: {type(exc).__name__}: {exc} (traceback in the log)")
    from hotspot.outfile import write_atomically

    data = orjson.dumps(result, option=orjson.OPT_INDENT_2)
    write_atomically(spec_path.with_name(RESULT), lambda fh: fh.write(data))
    return int(result.exit_code or 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
