"""`hotspot collect`: discovery → kernel choice → ATT → counters → analysis, in one run directory.

Each rocprofv3 invocation is a phase with its own output folder, captured stdout/stderr, timing and
exit code, all recorded in run.json. Every failure names what to change; nothing is overwritten.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import signal
from dataclasses import field
from pathlib import Path
from collections.abc import Sequence
from typing import TYPE_CHECKING, Callable

from hotspot.collect import att_outputs, discovery, iterations, rundir
from hotspot.collect import counter_passes as counters
from hotspot.collect import rocprof_jobs as jobs
from hotspot.collect import rocm_tools as tools
from hotspot.collect.process import ProcessOutcome, run_process, tail
from hotspot.collect.run_result import (
    CollectDryRun,
    CollectRun,
    DispatchOut,
    DryPhase,
    ErrorOut,
    IterationsOut,
    Kernel,
    KernelDiscovered,
    KernelGiven,
    KernelRowOut,
    Phase,
    PmcErrorOut,
    PmcOut,
    RocprofOut,
    SkippedKernel,
)
from hotspot.errors import (
    CommandFailedError,
    EmptyTraceError,
    HotspotError,
    InputError,
    ToolMissingError,
    UsageError,
    interruption,
    os_fault,
)
from hotspot.result import JsonObject, Result, dumps
from hotspot.record import record

DECODER_FATAL = "rocprof-trace-decoder library path not found"
STDERR_TAIL_LINES = 15
# Decoder messages (truncation, fatal errors) are near the end of the logs; this much is scanned.
LOG_SCAN_BYTES = 256 * 1024
PLACEHOLDER_REGEX = "<chosen by discovery>"
PLACEHOLDER_RANGE = "<two steady-state iterations from the discovered call count>"
EXIT_INTERRUPTED = 130


class CollectInterrupted(HotspotError):
    """Ctrl-C, SIGTERM or SIGHUP: exit 128 + the signal (130, 143, 129); run.json says interrupted."""

    exit_code = EXIT_INTERRUPTED
    code = "interrupted"

    def __init__(self, message: str, hint: str = "", *, signum: int = signal.SIGINT,
                 details: JsonObject | None = None) -> None:
        super().__init__(message, hint, details=details)
        self.signum = int(signum)
        self.exit_code = 128 + self.signum
        self.details.setdefault("signal", self.signum)


@record
class CollectOptions:
    command: tuple[str, ...]
    cwd: Path
    output: Path | None = None
    kernel: str | None = None
    skip: tuple[str, ...] = ()
    iterations: str | None = None
    att: jobs.AttSettings = field(default_factory=jobs.AttSettings)
    trace: bool = True  # run the ATT phase
    flags: bool = False
    env: tuple[tuple[str, str], ...] = ()
    timeout_s: float | None = None
    pmc: tuple[str, ...] = ()
    pmc_preset: str | None = None
    arch: str | None = None
    analyze: bool = True
    dry_run: bool = False
    rocprofv3: str | None = None
    att_library_path: str | None = None
    # rocprofv3 options hotspot has none of its own for (--rocprofv3-arg), given to the ATT and
    # counter runs as they are; discovery's run stays the one hotspot parses
    rocprofv3_args: tuple[str, ...] = ()


# rocprofv3 options hotspot sets itself -> what to give collect instead (None: not settable)
_MANAGED: dict[str, str | None] = {
    "--att-target-cu": "--att-target-cu", "--att-shader-engine-mask": "--att-shader-engine-mask",
    "--att-simd-select": "--att-simd-select", "--att-buffer-size": "--att-buffer-size",
    "--att-library-path": "--att-library-path", "--kernel-include-regex": "--kernel",
    "--kernel-iteration-range": "--iterations", "--pmc": "--pmc", "-o": "--output", "-d": "--output",
    "--output-directory": "--output", "--output-file": None, "-i": "--flags", "--input": "--flags",
    "-f": None, "--output-format": None, "--att": "--no-att", "--advanced-thread-trace": "--no-att",
    "--": None,
}
PASSTHROUGH_PHASES = ("att", "pmc")  # the phases --rocprofv3-arg reaches (pmc_<i> with --flags)


def parse_rocprofv3_args(values: list[str]) -> tuple[str, ...]:
    """--rocprofv3-arg values, refusing the options hotspot sets itself (rocprofv3 fails on a key
    given twice with different values, after the program ran)."""
    for v in values:
        name = v.split("=", 1)[0]
        if name in _MANAGED:
            own = _MANAGED[name]
            raise UsageError(f"--rocprofv3-arg {v}: hotspot sets {name} itself",
                             f"use collect's {own}" if own else "leave it out: hotspot needs its own value")
    return tuple(values)


def parse_env(values: list[str]) -> tuple[tuple[str, str], ...]:
    out = []
    for v in values:
        key, sep, val = v.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise UsageError(f"--env {v!r} is not KEY=VALUE", "e.g. --env AMD_LOG_LEVEL=1")
        out.append((key, val))
    return tuple(out)


def parse_size(text: str, option: str) -> int:
    """Integer, 0x-hex, or a K/M/G suffix (binary units): 0x10000000 == 268435456 == 256M."""
    m = re.fullmatch(r"\s*(0[xX][0-9a-fA-F]+|\d+)\s*([kKmMgG]?)[iI]?[bB]?\s*", text)
    if not m:
        raise UsageError(f"{option} {text!r} is not a size", f"e.g. {option} 0x20000000 or {option} 512M")
    value = int(m.group(1), 0) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2).lower()]
    if value <= 0:
        raise UsageError(f"{option} must be positive", f"e.g. {option} 0x10000000")
    return value


def parse_int(text: str, option: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise UsageError(f"{option} {text!r} is not an integer (decimal or 0x-hex)", f"e.g. {option} 0x1") from None
    if value < 0:
        raise UsageError(f"{option} must not be negative", f"e.g. {option} 0x1")
    return value


# The profiled program's output is shown live on stderr (prefixed by its phase) and saved to the
# phase's logs; off under --quiet, and inside a sweep job (its log is the place for it).
STREAM_OUTPUT = {"on": True}
# The host-wide lock of every GPU the profiled program can use (hotspot/collect/device_lock.py), taken
# before the first phase and held to the end; off inside a sweep job (its worker holds its device's).
DEVICE_LOCKS = {"on": True}


def _say(message: str) -> None:
    from hotspot.diagnostics import progress

    progress(message)


def _summarize_kernels(rows: list[discovery.KernelRow]) -> str:
    top = rows[0]
    return f"discovered {len(rows)} kernel(s); most GPU time: {top.name} ({top.pct:.1f}%)"


class Collector:
    def __init__(self, opts: CollectOptions, say: Callable[[str], None] = _say,
                 show_kernels: Callable[[list[discovery.KernelRow]], str] = _summarize_kernels) -> None:
        """`say` narrates progress on stderr; `show_kernels` formats the discovery table for it
        (the command layer passes the table renderer; the default is one line)."""
        self.opts = opts
        self.say = say
        self.show_kernels = show_kernels
        self.warnings: list[str] = []
        self.phases: list[Phase] = []
        self.record: rundir.RunRecord | None = None
        self.run_dir: Path | None = None
        self.kernel: Kernel | None = None
        self.kernel_rows: list[discovery.KernelRow] = []
        self.plan: iterations.IterationPlan | None = None
        self.pass_plan: counters.PassPlan | None = None
        self.dispatches: list[att_outputs.DispatchOutput] = []
        self.prof_path: str | None = None
        self.env = dict(os.environ)
        self.env.update(dict(opts.env))
        self.locks: list[int] = []  # the GPU device locks held (closed when the run ends)

    # ---------------------------------------------------------------- helpers
    def warn(self, message: str) -> None:
        # Printed once at the end (text mode) or carried in the JSON document, not here.
        self.warnings.append(message)
        if self.record:
            self.record.doc.warnings = self.warnings

    def _validate(self) -> None:
        o = self.opts
        if not o.command:
            raise UsageError("no command to profile", "put it after --: hotspot collect [OPTIONS] -- ./app ARGS")
        if o.kernel is not None:
            try:
                re.compile(o.kernel)
            except re.error as exc:
                raise UsageError(f"--kernel {o.kernel!r} is not a valid regex: {exc}",
                                 "escape regex characters with a backslash, e.g. 'op\\(\\)' for 'op()'") from None
        if o.att.se_mask == 0:
            raise UsageError("--se-mask 0 traces no shader engine", "use --se-mask 0x1 (SE 0) or 0xF")
        if not o.trace and not (o.pmc or o.pmc_preset):
            raise UsageError("--no-att without --pmc/--pmc-preset leaves nothing to collect",
                             "drop --no-att, or add --pmc COUNTER / --pmc-preset l2")
        for pattern in o.skip:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise UsageError(f"--skip {pattern!r} is not a valid regex: {exc}",
                                 "escape regex characters with a backslash, e.g. 'op\\(\\)' for 'op()'") from None
        if o.pmc_preset is not None and o.pmc_preset not in counters.PRESETS:
            raise UsageError(f"--pmc-preset {o.pmc_preset!r} is unknown", f"choose one of: {', '.join(counters.PRESETS)}")
        counters.parse_counter_args(list(o.pmc))  # names checked before anything is created
        if o.iterations is not None:
            iterations.parse_spec(o.iterations)  # fail before running anything
        self._check_application()

    def _check_application(self) -> None:
        """The command to profile exists and can be run, checked before anything is created or
        started: a typo is one line now, not a run directory and a profiler failure later."""
        import shutil

        o = self.opts
        program = o.command[0]
        if os.sep in program:
            path = Path(program) if os.path.isabs(program) else o.cwd / program
            found = path.is_file() and os.access(path, os.X_OK)
        else:
            found = shutil.which(program, path=self.env.get("PATH", os.defpath)) is not None
        if found:
            return
        problem = f"the command to profile, {program!r}, is not found" + (
            "" if os.sep in program else " on PATH") + (
            " or not executable" if os.sep in program and Path(program).exists() else "")
        if o.dry_run:
            self.warn(problem)
            return
        raise UsageError(problem, "check the path after --, e.g. hotspot collect -- ./build/app ARGS "
                         "(chmod +x it if it is a script)")

    def _rocprofv3(self) -> str:
        found = tools.find_rocprofv3(self.opts.rocprofv3)
        if found is None:
            where = f"--rocprofv3 {self.opts.rocprofv3}" if self.opts.rocprofv3 else "PATH, $ROCM_PATH/bin or /opt/rocm/bin"
            if self.opts.dry_run:
                self.warn(f"rocprofv3 not found in {where}; the commands below use the bare name")
                return tools.ROCPROFV3
            raise ToolMissingError(f"rocprofv3 not found in {where}", tools.FIX_ROCPROFV3 + "; `hotspot doctor` checks the setup")
        self.prof_path = found.path
        return found.path

    def _decoder(self, prof: str) -> str | None:
        if not self.opts.trace:
            return None
        found = tools.find_decoder(self.opts.att_library_path, prof if os.path.isabs(prof) else None)
        if found is not None:
            return found.path
        looked = (f"--att-library-path {self.opts.att_library_path}" if self.opts.att_library_path else
                  "ROCPROF_ATT_LIBRARY_PATH, LD_LIBRARY_PATH, $ROCM_PATH/lib, /opt/rocm/lib and rocm-sdk")
        msg = f"trace decoder ({tools.DECODER_LIBRARY}) not found in {looked}"
        if self.opts.dry_run:
            self.warn(msg + "; att_library_path is left out")
            return None
        raise ToolMissingError(msg + f"; rocprofv3 would stop with '{DECODER_FATAL}'",
                               tools.FIX_DECODER + "; `hotspot doctor` checks the setup")

    def _save(self) -> None:
        if self.record:
            self.record.doc.phases = self.phases
            self.record.doc.warnings = self.warnings
            self.record.save()

    # ---------------------------------------------------------------- phases
    def _phase(self, name: str, argv: list[str], *, output_dir: Path, input_file: Path | None = None,
               yaml_text: str | None = None) -> tuple[Phase, ProcessOutcome]:
        assert self.run_dir is not None
        full = [*self._passed_through(name, argv), "--", *self.opts.command]
        stdout, stderr = self.run_dir / f"{name}.stdout.log", self.run_dir / f"{name}.stderr.log"
        phase = Phase(name, full, str(input_file) if input_file else None, yaml_text, str(output_dir), str(stdout),
                      str(stderr), rundir.utc_iso())
        self.phases.append(phase)
        self._save()
        self.say(f"[{name}] running: {shlex.join(full)}")
        from hotspot.diagnostics import QUIET

        outcome = run_process(full, self.env, stdout, stderr, timeout_s=self.opts.timeout_s, cwd=self.opts.cwd,
                              heartbeat=lambda s: self.say(f"[{name}] still running ({s:.0f} s)"),
                              stream=None if QUIET["on"] or not STREAM_OUTPUT["on"] else f"[{name}] | ")
        phase.exit_code, phase.elapsed_ns = outcome.exit_code, outcome.elapsed_ns
        phase.status = ("interrupted" if outcome.interrupted else "timeout" if outcome.timed_out else
                           "ok" if outcome.exit_code == 0 else "failed")
        self._save()
        self.say(f"[{name}] {phase.status} after {outcome.elapsed_ns / 1e9:.1f} s (exit {outcome.exit_code})")
        self._check_outcome(phase, outcome, stdout, stderr)
        return phase, outcome

    def _check_outcome(self, phase: Phase, outcome: ProcessOutcome, stdout: Path, stderr: Path) -> None:
        name = phase.name
        kept = f"outputs kept in {self.run_dir}"
        if outcome.start_error is not None:
            raise ToolMissingError(f"[{name}] cannot start {phase.argv[0]}: {outcome.start_error}",
                                   tools.FIX_ROCPROFV3)
        if outcome.interrupted:
            sig = outcome.signum or signal.SIGINT
            what = outcome.reason or interruption(signum=sig)
            raise CollectInterrupted(f"[{name}] {what}; the child was stopped",
                                     f"{kept}; run.json says interrupted", signum=sig)
        logs = tail(stdout, LOG_SCAN_BYTES) + "\n" + tail(stderr, LOG_SCAN_BYTES)
        if DECODER_FATAL in logs.lower():
            raise ToolMissingError(f"[{name}] rocprofv3: {DECODER_FATAL}",
                                   tools.FIX_DECODER + "; `hotspot doctor` checks the setup",
                                   details={"run_dir": str(self.run_dir)})
        if outcome.timed_out:
            raise CommandFailedError(f"[{name}] timed out after {self.opts.timeout_s:g} s and was stopped",
                                     f"raise --timeout or profile a shorter run; {kept}", code="timeout",
                                     details={"run_dir": str(self.run_dir)})
        if outcome.exit_code != 0:
            err_tail = "\n".join(tail(stderr).splitlines()[-STDERR_TAIL_LINES:])
            full = _disk_full(self.run_dir, logs)
            if full is not None:  # the machine's state, not the program's failure: exit 3
                raise InputError(f"[{name}] rocprofv3 exited {outcome.exit_code}: {full} under {self.run_dir}",
                                 "free space there (or raise `ulimit -f`), or pass --output DIR on another "
                                 f"file system; {kept}", code="disk-full",
                                 details={"run_dir": str(self.run_dir), "phase": name, "stderr_tail": err_tail})
            if err_tail:
                self.say(f"[{name}] stderr tail:\n" + "\n".join("  | " + ln for ln in err_tail.splitlines()))
            last = err_tail.splitlines()[-1].strip() if err_tail else "(no stderr)"
            raise CommandFailedError(
                f"[{name}] the profiled command failed: rocprofv3 exited {outcome.exit_code}; last stderr line: {last}",
                f"read {stderr} (and .stdout.log); {kept}",
                details={"run_dir": str(self.run_dir), "phase": name, "exit_code": outcome.exit_code,
                         "stderr_tail": err_tail})

    def _discover(self, prof: str) -> None:
        assert self.run_dir is not None
        out = self.run_dir / "discover"
        self._phase("discover", jobs.discovery_argv(prof, out), output_dir=out)
        stats = out / f"{jobs.DISCOVER_OUTPUT_FILE}_kernel_stats.csv"
        trace = out / f"{jobs.DISCOVER_OUTPUT_FILE}_kernel_trace.csv"
        source = stats if stats.is_file() else trace
        if not source.is_file():
            raise EmptyTraceError(f"discovery wrote no kernel stats or kernel trace in {out}",
                                  "check the command launches GPU kernels (see discover.stderr.log), or pass "
                                  "--kernel REGEX to skip discovery", code="no-kernels")
        from hotspot.trace.api import kernel_table

        table = kernel_table(source, top=0)
        self.kernel_rows = discovery.to_rows(table.data.kernels)
        for w in table.warnings:
            self.warn(f"discovery: {w}")
        if not self.kernel_rows:
            raise EmptyTraceError(f"discovery found no kernel dispatch in {source}",
                                  "the command launched no GPU kernel: check it runs on the GPU", code="no-kernels")
        self.say(self.show_kernels(self.kernel_rows))
        choice = discovery.choose_kernel(self.kernel_rows, self.opts.skip)
        if choice is None:
            top = self.kernel_rows[0]
            choice = discovery.Choice(top, "every kernel looks like runtime plumbing; tracing the top one", ())
            self.warn(f"all kernels matched the plumbing list; tracing {top.name!r} (pass --kernel REGEX to choose)")
        k = choice.kernel
        self.kernel = KernelDiscovered(k.name, k.regex, "discovery", choice.reason, k.calls, k.total_ns,
                                       k.avg_ns, k.pct, [SkippedKernel(n, p) for n, p in choice.skipped])
        self.say(f"[discover] chose {k.name}: {choice.reason}")
        self.say(f"[discover] kernel_include_regex: {k.regex}")

    def _arch(self) -> str | None:
        """The target the counter presets are for, by the one arch decision (hotspot/arch/decide.py):
        --arch, else the discovery run's side files, else this machine's GPUs when they are all one
        target; None when nothing decides."""
        from hotspot.arch.decide import OVERRIDE, SIDE_FILE, ArchHint, decide

        if self.opts.arch:
            return decide([ArchHint(self.opts.arch, "--arch", OVERRIDE)]).gfx
        hints: list[ArchHint] = []
        if self.run_dir is not None and (self.run_dir / "discover").is_dir():
            from hotspot.capture import arch_hints

            hints, _ = arch_hints(self.run_dir / "discover")
        if not hints:
            gpus, _ = tools.list_gpus(self.prof_path)
            archs = sorted({g.gfx for g in gpus})
            if len(archs) == 1:
                hints = [ArchHint(archs[0], f"{gpus[0].source}: the GPUs of this machine", SIDE_FILE)]
        return decide(hints).gfx if hints else None

    def _counter_plan(self) -> None:
        names = counters.parse_counter_args(list(self.opts.pmc))
        if self.opts.pmc_preset:
            for c in counters.preset_counters(self.opts.pmc_preset, self._arch()):
                if c not in names:
                    names.append(c)
        if names:
            self.pass_plan = counters.split_passes(names)

    def _att(self, prof: str, decoder: str | None) -> None:
        assert self.run_dir is not None and self.kernel is not None and self.plan is not None
        assert self.record is not None  # the run has started
        out = self.run_dir / "att"
        job = jobs.att_job(self.kernel.regex, self.plan.range_text, out, self.opts.att, decoder)
        text = jobs.input_yaml([job])
        if self.opts.flags:
            argv, input_file = [prof, *jobs.flags(job)], None
        else:
            input_file = self.run_dir / "input.yaml"
            rundir.write_file(input_file, text)
            argv = [prof, "-i", str(input_file)]
        self.record.doc.input_yaml = text
        phase, _ = self._phase("att", argv, output_dir=out, input_file=input_file, yaml_text=text)
        self.dispatches = att_outputs.find_dispatches(out)
        logs = tail(Path(phase.stdout), LOG_SCAN_BYTES) + "\n" + tail(Path(phase.stderr), LOG_SCAN_BYTES)
        cuts = att_outputs.find_truncation(out, self.opts.att.buffer_size, logs)
        cut_ids = {t.dispatch_id for t in cuts if t.dispatch_id is not None}
        self.dispatches = [d if d.dispatch_id not in cut_ids else _with_truncated(d) for d in self.dispatches]
        for t in cuts:
            self.warn(t.message)
        for d in self.dispatches:
            if d.empty:
                self.warn(f"{d.path.name}: empty (no wave reached the traced CU{'; ' + d.note if d.note else ''}); kept")
        self.record.doc.dispatches = [_dispatch_json(d) for d in self.dispatches]
        self._save()
        if not any(not d.empty for d in self.dispatches):
            what = (f"all {len(self.dispatches)} traced dispatch(es) are empty: no wave reached CU "
                    f"{self.opts.att.target_cu} of the traced shader engines (mask {hex(self.opts.att.se_mask)})"
                    if self.dispatches else
                    f"ATT wrote no dispatch directory: the regex {self.kernel.regex!r} with iterations "
                    f"{self.plan.range_text} matched no dispatch")
            raise EmptyTraceError(what, _EMPTY_REMEDIES, details={"run_dir": str(self.run_dir)})

    def _pmc(self, prof: str) -> PmcOut:
        assert self.run_dir is not None and self.pass_plan is not None
        out = self.run_dir / "pmc"
        regex = self.kernel.regex if self.kernel else None
        self.say(self.pass_plan.describe())
        job_list = [jobs.pmc_job(regex, p, out) for p in self.pass_plan.passes]
        text = jobs.input_yaml(job_list)
        if self.opts.flags:
            for i, p in enumerate(self.pass_plan.passes, start=1):
                job = jobs.pmc_job(regex, p, out / f"pass_{i}")
                self._phase(f"pmc_{i}", [prof, *jobs.flags(job)], output_dir=out / f"pass_{i}",
                            yaml_text=jobs.input_yaml([job]))
        else:
            input_file = self.run_dir / "pmc_input.yaml"
            rundir.write_file(input_file, text)
            self._phase("pmc", [prof, "-i", str(input_file)], output_dir=out, input_file=input_file, yaml_text=text)
        csvs = sorted(out.rglob("*counter_collection.csv"))
        summary = PmcOut(list(self.pass_plan.counters), [list(p) for p in self.pass_plan.passes],
                         [str(c) for c in csvs], None)
        if not csvs:
            self.warn(f"counter collection wrote no *counter_collection.csv under {out}")
            return summary
        try:
            from hotspot.pmc.api import analyze_pmc
        except ImportError as exc:
            self.warn(f"counter analysis unavailable ({exc}); run `hotspot pmc {out}` later")
            return summary
        try:
            res = analyze_pmc(csvs)
        except HotspotError as err:
            self.warn(f"counter analysis failed: {err.message}")
            summary.analysis_error = PmcErrorOut(err.code, err.message, err.hint)
            return summary
        rundir.write_file(self.run_dir / "pmc_analysis.json", res.to_json())
        summary.analysis = res.data
        for w in res.warnings:
            self.warn(f"pmc: {w}")
        return summary

    def _analyze(self, best: att_outputs.DispatchOutput) -> tuple[object, ErrorOut | None, int]:
        assert self.run_dir is not None
        from hotspot.plan.entry_point import analyze

        self.say(f"[analyze] {best.path}")
        try:
            res = analyze(best.path)
        except HotspotError as err:
            self.warn(f"analysis of {best.path.name} failed: {err.message}")
            return None, ErrorOut(err.code, err.exit_code, err.message, err.hint), err.exit_code
        rundir.write_file(self.run_dir / "analysis.json", res.to_json())
        for w in res.warnings:
            self.warn(f"analysis: {w}")
        return res.data, None, 0

    # ---------------------------------------------------------------- main
    def run(self) -> Result[CollectRun | CollectDryRun]:
        try:
            return self._run()
        finally:
            for fd in self.locks:
                os.close(fd)
            self.locks = []

    def _lock_devices(self) -> None:
        """Wait for, then hold, the host-wide lock of every GPU device the program can see: a sweep
        or another collect on this host never shares a GPU with it."""
        from hotspot.collect import device_lock

        if not DEVICE_LOCKS["on"]:
            return
        devices = device_lock.lock_keys(self.env, self.say)
        what = f"hotspot collect -- {shlex.join(self.opts.command)}"[:200]
        self.locks = device_lock.hold_all(devices, what, self.say)

    def _run(self) -> Result[CollectRun | CollectDryRun]:
        o = self.opts
        self._validate()
        prof = self._rocprofv3()
        decoder = self._decoder(prof)
        if o.kernel is not None:
            self.kernel = KernelGiven(None, o.kernel, "--kernel", "given with --kernel (discovery skipped)")
        if o.dry_run:
            return self._dry_run(prof, decoder)
        if o.kernel is not None or o.arch or not o.pmc_preset:
            self._counter_plan()  # a bad counter list fails before anything runs
        self._lock_devices()
        stamp = rundir.utc_stamp()
        explicit = o.output is not None
        slug = rundir.regex_slug(o.kernel) if o.kernel else "discovering"
        target = o.output.resolve() if o.output is not None else o.cwd / rundir.RUNS_DIR / f"{stamp}-{slug}"
        self.run_dir = rundir.create(target, explicit, dumps({"schema_version": rundir.RUN_SCHEMA_VERSION,
                                                              "status": "running"}))
        self.record = rundir.RunRecord(self.run_dir, rundir.RunDoc(
            rundir.RUN_SCHEMA_VERSION, "running", str(self.run_dir), list(o.command), str(o.cwd), dict(o.env),
            RocprofOut(prof, tools.rocprofv3_version(prof)[0]), decoder, rundir.utc_iso(), _options_json(o),
            self.phases, self.warnings, self.kernel))
        self.record.save()
        self.say(f"run directory: {self.run_dir}")
        try:
            try:
                return self._run_phases(prof, decoder, explicit, stamp)
            except OSError as exc:  # disk full, permissions... while writing logs or outputs
                fault = os_fault(exc)
                if fault is None:
                    raise
                raise fault from None
        except HotspotError as err:
            status = "interrupted" if isinstance(err, CollectInterrupted) else "failed"
            err.details.setdefault("run_dir", str(self.run_dir))
            err.details.setdefault("run_json", str(self.run_dir / rundir.RUN_JSON))
            err.details["warnings"] = list(self.warnings)
            for w in self.warnings:  # the error path prints no Result, so say them here
                self.say(f"warning: {w}")
            self._finish(status, ErrorOut(err.code, err.exit_code, err.message, err.hint))
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM/SIGHUP (Terminated) between phases
            sig = int(getattr(exc, "signum", signal.SIGINT))
            message = interruption(exc, sig)
            self._finish("interrupted", ErrorOut("interrupted", 128 + sig, message, ""))
            raise CollectInterrupted(message, f"outputs kept in {self.run_dir}", signum=sig,
                                     details={"run_dir": str(self.run_dir),
                                              "run_json": str(self.run_dir / rundir.RUN_JSON)}) from None
        except BaseException as exc:
            self._finish("failed", ErrorOut("internal-error", 1, f"{type(exc).__name__}: {exc}", ""))
            raise

    def _finish(self, status: str, error: ErrorOut) -> None:
        """Mark run.json; a record that cannot be written (the disk that failed the run) must not
        hide the error that ended the run."""
        assert self.record is not None
        try:
            self.record.finish(status, error)
        except HotspotError as exc:
            self.say(f"warning: run.json not updated: {exc.message}")

    def _run_phases(self, prof: str, decoder: str | None, explicit: bool, stamp: str) -> Result[CollectRun]:
        o = self.opts
        assert self.record is not None and self.run_dir is not None
        if o.kernel is None:
            self._discover(prof)
            assert isinstance(self.kernel, KernelDiscovered)  # discovery chose it
            if not explicit:  # name the run after the kernel now that we know it
                wanted = self.run_dir.with_name(f"{stamp}-{rundir.kernel_slug(self.kernel.name)}")
                self._relocate(rundir.rename_unique(self.run_dir, wanted))
        self.record.doc.kernel = self.kernel
        if self.pass_plan is None:
            self._counter_plan()  # the preset needed the arch from discovery
        if self.pass_plan:
            self.record.doc.pmc_plan = [list(p) for p in self.pass_plan.passes]
        analysis = analysis_error = None
        exit_code = 0
        best = None
        if o.trace:
            self.plan = iterations.plan_iterations(o.iterations, getattr(self.kernel, "calls", None))
            self.say(self.plan.description)
            self.record.doc.iterations = _plan_json(self.plan)
            self._att(prof, decoder)
            best = next(d for d in self.dispatches if not d.empty)
            self.record.doc.chosen_dispatch = _dispatch_json(best)
            self.say(f"[att] best dispatch: {best.path.name} ({best.waves} waves, "
                     f"{best.executed_instructions} executed instructions)")
        self._save()
        pmc = self._pmc(prof) if self.pass_plan else None
        if pmc is not None:
            self.record.doc.pmc = pmc.passes_only()
        if best is not None and o.analyze:
            analysis, analysis_error, exit_code = self._analyze(best)
        self.record.doc.analysis_file = str(self.run_dir / "analysis.json") if analysis is not None else None
        self.record.finish("complete", analysis_error)
        data = self._summary(best, analysis, analysis_error, pmc)
        result = Result("collect", data, list(self.warnings))
        if exit_code:
            result.exit_code = exit_code
        return result

    def _relocate(self, new_dir: Path) -> None:
        old = str(self.run_dir)
        self.run_dir = new_dir
        assert self.record is not None  # the run has started
        self.record.move(new_dir)
        for phase in self.phases:
            phase.stdout = phase.stdout.replace(old, str(new_dir), 1)
            phase.stderr = phase.stderr.replace(old, str(new_dir), 1)
            phase.output_dir = phase.output_dir.replace(old, str(new_dir), 1)
            if phase.input_file:
                phase.input_file = phase.input_file.replace(old, str(new_dir), 1)
            phase.argv = [a.replace(old, str(new_dir), 1) for a in phase.argv]
        self._save()
        self.say(f"run directory renamed: {new_dir}")

    def _summary(self, best: att_outputs.DispatchOutput | None, analysis: object,
                 analysis_error: ErrorOut | None, pmc: PmcOut | None) -> CollectRun:
        assert self.record is not None and self.run_dir is not None  # the run has started
        return CollectRun(
            dry_run=False,
            run_dir=str(self.run_dir),
            run_json=str(self.run_dir / rundir.RUN_JSON),
            status="complete",
            command=list(self.opts.command),
            rocprofv3=self.record.doc.rocprofv3,
            decoder=self.record.doc.decoder,
            kernel=self.kernel,
            kernels=[_row_json(r) for r in self.kernel_rows[:discovery.SHOWN_KERNELS]],
            iterations=_plan_json(self.plan) if self.plan else None,
            phases=[p.out() for p in self.phases],
            dispatches=[_dispatch_json(d) for d in self.dispatches],
            chosen_dispatch=_dispatch_json(best) if best else None,
            pmc=pmc,
            analysis=analysis,
            analysis_error=analysis_error,
        )

    def _dry_run(self, prof: str, decoder: str | None) -> Result[CollectDryRun]:
        o = self.opts
        slug = rundir.regex_slug(o.kernel) if o.kernel else "<kernel>"
        run_dir = o.output.resolve() if o.output else o.cwd / rundir.RUNS_DIR / f"{rundir.utc_stamp()}-{slug}"
        if o.output is not None:
            rundir.check_explicit(run_dir)
        phases: list[DryPhase] = []
        if o.kernel is None:
            argv = [*jobs.discovery_argv(prof, run_dir / "discover"), "--", *o.command]
            phases.append(DryPhase("discover", argv, None, None))
        regex = o.kernel if o.kernel is not None else PLACEHOLDER_REGEX
        plan = None
        if o.trace:
            if o.kernel is not None or o.iterations is not None:
                plan = iterations.plan_iterations(o.iterations, None)
                rng = plan.range_text
            else:
                rng = PLACEHOLDER_RANGE
            job = jobs.att_job(regex, rng, run_dir / "att", o.att, decoder)
            phases.append(self._dry_phase("att", prof, [job], run_dir / "input.yaml"))
        self._counter_plan()
        if self.pass_plan:
            if o.flags:
                for i, p in enumerate(self.pass_plan.passes, start=1):
                    phases.append(self._dry_phase(f"pmc_{i}", prof,
                                                  [jobs.pmc_job(regex, p, run_dir / "pmc" / f"pass_{i}")], None))
            else:
                job_list = [jobs.pmc_job(regex, p, run_dir / "pmc") for p in self.pass_plan.passes]
                phases.append(self._dry_phase("pmc", prof, job_list, run_dir / "pmc_input.yaml"))
        data = CollectDryRun(True, str(run_dir), list(o.command), prof, decoder, self.kernel,
                             _plan_json(plan) if plan else None,
                             [list(p) for p in self.pass_plan.passes] if self.pass_plan else None,
                             self.pass_plan.describe() if self.pass_plan else None, phases)
        return Result("collect", data, list(self.warnings))

    def _dry_phase(self, name: str, prof: str, job_list: Sequence[jobs.Job], input_file: Path | None) -> DryPhase:
        text = jobs.input_yaml(job_list)
        if self.opts.flags:
            argv = self._passed_through(name, [prof, *jobs.flags(job_list[0])])
            return DryPhase(name, [*argv, "--", *self.opts.command], None, text)
        argv = self._passed_through(name, [prof, "-i", str(input_file)])
        return DryPhase(name, [*argv, "--", *self.opts.command], str(input_file), text)

    def _passed_through(self, phase: str, argv: list[str]) -> list[str]:
        """`argv` with the --rocprofv3-arg options right after the profiler, in the ATT and counter
        phases."""
        if not self.opts.rocprofv3_args or phase.split("_", 1)[0] not in PASSTHROUGH_PHASES:
            return argv
        return [argv[0], *self.opts.rocprofv3_args, *argv[1:]]


_FULL_MESSAGES = tuple(os.strerror(e) for e in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG))


def _disk_full(run_dir: Path | None, logs: str) -> str | None:
    """Why a failed phase failed when it was the disk: the run's file system has no free blocks,
    or the profiler's output says so (also what a file size limit, `ulimit -f`, produces)."""
    try:
        if run_dir is not None:
            st = os.statvfs(run_dir)
            if st.f_bavail == 0 and st.f_blocks > 0:
                return "the file system is full"
    except OSError:
        pass
    return next((f"its output says {m!r}" for m in _FULL_MESSAGES if m in logs), None)


_EMPTY_REMEDIES = ("re-capture with another --target-cu (e.g. 0 or 2), a wider --se-mask (0xF), a larger grid "
                   "or more waves; check the kernel regex and --iterations (the kernel must run that many times)")


def _with_truncated(d: att_outputs.DispatchOutput) -> att_outputs.DispatchOutput:
    from dataclasses import replace

    return replace(d, truncated=True)


def _dispatch_json(d: att_outputs.DispatchOutput) -> DispatchOut:
    return DispatchOut(str(d.path), d.agent, d.dispatch_id, d.waves, d.executed_instructions,
                       d.instructions_hit, d.empty, d.truncated, d.note or None)


def _row_json(r: discovery.KernelRow) -> KernelRowOut:
    return KernelRowOut(r.name, r.family, r.calls, r.total_ns, r.avg_ns, r.pct, r.regex)


def _plan_json(p: iterations.IterationPlan) -> IterationsOut:
    return IterationsOut(list(p.iterations), p.range_text, p.description, p.calls)


def _options_json(o: CollectOptions) -> rundir.RunOptions:
    return rundir.RunOptions(o.kernel, list(o.skip), o.iterations, o.att.target_cu, hex(o.att.se_mask),
                             hex(o.att.simd_select), o.att.buffer_size, o.trace, o.flags, o.timeout_s,
                             list(o.pmc), o.pmc_preset, o.arch, o.analyze)


def collect(opts: CollectOptions, say: Callable[[str], None] = _say,
            show_kernels: Callable[[list[discovery.KernelRow]], str] = _summarize_kernels
            ) -> Result[CollectRun | CollectDryRun]:
    return Collector(opts, say, show_kernels).run()

