"""`hotspot sweep`: profile every entry of a recipes file, one GPU each, on one node or with Slurm.

    hotspot sweep --init [FILE]               write a commented example recipes file
    hotspot sweep RECIPES.yaml [--gpus ...]   run (or resume) the sweep on this node
    hotspot sweep RECIPES.yaml --slurm ...    write DIR/sweep.sbatch and submit it (--wait follows it)
    hotspot sweep --worker DIR --gpus all     one node's worker (what the Slurm script runs)
    hotspot sweep status DIR [--wait]         progress, workers and the Slurm array's tasks
    hotspot sweep report DIR [-o OUT.html]    the cross-kernel table and dashboard
    hotspot sweep cancel DIR                  scancel the sweep's Slurm array

`status`, `report` and `cancel` are commands of their own (own options, own --help) reached through
SweepCommand: the first word picks them, anything else is the sweep itself.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer
from typer.core import TyperCommand

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import format_option

SPEC = CommandSpec(
    "sweep", rank=120,
    help=("Profile a whole kernel library: every entry of a recipes file traced (ATT) and "
          "analyzed on a GPU of its own, resumable, with a cross-kernel report; across nodes "
          "with --slurm. Forms: `sweep --init [FILE]`, `sweep RECIPES.yaml`, `sweep status "
          "DIR`, `sweep report DIR [-o OUT.html]`, `sweep cancel DIR`, `sweep --worker DIR`."),
    views={"sweep": text_and_markdown("hotspot.render.sweep", "render_sweep", "render_sweep_markdown"),
           "sweep init": text_and_markdown("hotspot.render.sweep", "render_init"),
           "sweep status": {**text_and_markdown("hotspot.render.sweep", "render_status", "render_status_markdown"),
                            "csv": "hotspot.render.csv_views:render_sweep_status"},
           "sweep report": {**text_and_markdown("hotspot.render.sweep", "render_report", "render_report_markdown"),
                            "csv": "hotspot.render.csv_views:render_sweep_report"},
           "sweep cancel": text_and_markdown("hotspot.render.sweep", "render_cancel")},
    tools=(ToolSpec("sweep_status", "Progress of a sweep directory: each entry's state.",
                    words=("status",), only=("sweep_dir",), rename={"sweep_dir": "dir"},
                    help={"dir": "The sweep directory."}, paths=frozenset({"dir"}), remembered=False, rank=9),
           ToolSpec("sweep_report",
                    "The cross-kernel report of a sweep directory, entries sorted by headroom; html "
                    "writes the dashboard page.",
                    words=("report",), only=("sweep_dir", "output", "force"),
                    rename={"sweep_dir": "dir", "output": "html"},
                    help={"dir": "The sweep directory.",
                          "html": "Also write the dashboard page (self-contained HTML) to this file."},
                    paths=frozenset({"dir", "html"}), outputs=frozenset({"html"}), remembered=False, rank=10)),
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    SweepFormatOpt = Any
    StatusFormatOpt = Any
    ReportFormatOpt = Any
    CancelFormatOpt = Any
else:
    SweepFormatOpt = format_option("sweep")
    StatusFormatOpt = format_option("sweep status")
    ReportFormatOpt = format_option("sweep report")
    CancelFormatOpt = format_option("sweep cancel")

_RUN = "Run"
_SLURM = "Slurm"
DirArg = Annotated[Path, typer.Argument(help="The sweep directory (holds sweep.json).", show_default=False,
                                        metavar="DIR")]


def _problems_to_stderr(err: Exception) -> None:
    """A bad recipes file: every problem on its own line (entry, field, fix) before the summary line."""
    problems = (getattr(err, "details", None) or {}).get("problems") or []
    if problems:
        from hotspot.diagnostics import printable
        from hotspot.sweep.recipes import MAX_LINE, Problem

        for p in problems:  # each line at most MAX_LINE characters, indent included
            line = Problem(**{k: printable(str(p[k]), newlines=False) for k in ("entry", "field", "problem", "fix")})
            sys.stderr.write("  " + line.line(MAX_LINE - 2) + "\n")
        sys.stderr.flush()


def _status_cmd(sweep_dir: DirArg,
                wait: Annotated[bool, typer.Option("--wait", help="Follow the sweep until no entry is pending or "
                                                   "running and its Slurm array has ended; exit with its outcome.")
                                ] = False,
                fmt: StatusFormatOpt = "text") -> None:
    """Progress of a sweep: entries, workers, and each Slurm array task's state, exit code, node and log
    (from sacct, else squeue, else the task logs), with the fix for dead, lost or stuck tasks."""

    def produce() -> Result[object]:
        from hotspot.sweep import views

        return views.follow(sweep_dir) if wait else views.sweep_status(sweep_dir)

    raise typer.Exit(run("sweep status", fmt, produce))


def _report_cmd(sweep_dir: DirArg,
                output: Annotated[Optional[str], typer.Option(
                    "--output", "-o", "--html", help="Also write the dashboard page (self-contained HTML) here.")
                ] = None,
                force: Annotated[bool, typer.Option("--force", help="Replace an existing output file.")] = False,
                fmt: ReportFormatOpt = "text") -> None:
    """The cross-kernel table of a sweep (sorted by estimated headroom) and, with -o, its dashboard."""

    def produce() -> Result[object]:
        from hotspot.sweep import views

        return views.sweep_report(sweep_dir, output, force)

    raise typer.Exit(run("sweep report", fmt, produce))


def _cancel_cmd(sweep_dir: DirArg, fmt: CancelFormatOpt = "text") -> None:
    """Stop a sweep's Slurm array (scancel): its workers mark running entries interrupted; a rerun
    of the sweep finishes them."""

    def produce() -> Result[object]:
        from hotspot.sweep import views

        return views.cancel(sweep_dir)

    raise typer.Exit(run("sweep cancel", fmt, produce))


def _subcommands() -> dict[str, Any]:
    subs = {}
    for name, fn in (("status", _status_cmd), ("report", _report_cmd), ("cancel", _cancel_cmd)):
        app = typer.Typer(rich_markup_mode=None, add_completion=False,
                          context_settings={"help_option_names": ["-h", "--help"]})
        app.command(name, no_args_is_help=True)(fn)
        subs[name] = typer.main.get_command(app)
    return subs


class SweepCommand(TyperCommand):
    """`sweep`, whose first word may name a command of its own (status, report, cancel)."""

    subcommands: dict[str, Any] = {}

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:  # click's signature
        if args and args[0] in self.subcommands:
            sub = self.subcommands[args[0]]
            # its own page and usage line (`hotspot sweep report ...`), as a command of the root
            with sub.make_context(f"{ctx.info_name} {args[0]}", list(args[1:]), parent=ctx.parent) as sub_ctx:
                sub.invoke(sub_ctx)
            ctx.exit(0)
        return super().parse_args(ctx, args)


def register(app: typer.Typer) -> None:
    SweepCommand.subcommands = _subcommands()

    @app.command("sweep", help=SPEC.help, no_args_is_help=True, cls=SweepCommand)
    def sweep(
        args: Annotated[Optional[list[str]], typer.Argument(
            help="RECIPES.yaml; or the file --init writes. (`status`, `report`, `cancel` DIR: see their --help.)",
            show_default=False)] = None,
        init: Annotated[bool, typer.Option("--init", help="Write a commented example recipes file "
                                           "(default recipes.yaml; never overwrites).")] = False,
        gpus: Annotated[str, typer.Option("--gpus", help="GPUs to use: all (what `hotspot doctor` lists), "
                                          "a range 0-7 or a list 0,2,5.", rich_help_panel=_RUN)] = "all",
        output: Annotated[Optional[Path], typer.Option(
            "--output", "-o", help="Sweep directory. Default: the newest ./hotspot-sweeps/*-<recipes stem>/ "
            "made from the same file (resume), else a new ./hotspot-sweeps/<UTC time>-<stem>/.",
            rich_help_panel=_RUN)] = None,
        new: Annotated[bool, typer.Option("--new", help="Start a new sweep directory instead of resuming.",
                                          rich_help_panel=_RUN)] = False,
        retry: Annotated[Optional[list[str]], typer.Option(
            "--retry", help="Re-queue entries in these states: failed, empty, timed-out, all "
            "(comma-separated or repeated). Interrupted entries are always re-queued; done ones skipped.",
            rich_help_panel=_RUN)] = None,
        only: Annotated[Optional[list[str]], typer.Option(
            "--only", help="Run just this entry (repeatable), re-queued whatever its state.",
            rich_help_panel=_RUN)] = None,
        force_recipes: Annotated[bool, typer.Option(
            "--force-recipes", help="Accept a changed recipes file on resume: re-queue only the entries "
            "whose recipe changed.", rich_help_panel=_RUN)] = False,
        att_retries: Annotated[int, typer.Option(
            "--att-retries", help="Re-captures of an empty trace on other CUs / shader engines.",
            rich_help_panel=_RUN)] = 2,
        timeout: Annotated[Optional[float], typer.Option(
            "--timeout", help="Seconds per entry (an entry's timeout_s wins); the entry's whole process "
            "group is stopped.", rich_help_panel=_RUN)] = None,
        worker: Annotated[Optional[Path], typer.Option(
            "--worker", help="Work on an existing sweep directory (the Slurm script runs this on each node).",
            rich_help_panel=_RUN)] = None,
        rocprofv3: Annotated[Optional[str], typer.Option("--rocprofv3", help="Path to rocprofv3.",
                                                         rich_help_panel=_RUN)] = None,
        att_library_path: Annotated[Optional[str], typer.Option(
            "--att-library-path", help="Folder holding librocprof-trace-decoder.so.", rich_help_panel=_RUN)] = None,
        slurm: Annotated[bool, typer.Option("--slurm", help="Write DIR/sweep.sbatch (a job array, one task "
                                            "per node) and submit it with sbatch.", rich_help_panel=_SLURM)] = False,
        nodes: Annotated[int, typer.Option("--nodes", help="Array tasks (one node each).",
                                           rich_help_panel=_SLURM)] = 1,
        partition: Annotated[Optional[str], typer.Option("--partition", help="sbatch --partition.",
                                                         rich_help_panel=_SLURM)] = None,
        time_limit: Annotated[Optional[str], typer.Option("--time", help="sbatch --time (e.g. 02:00:00).",
                                                          rich_help_panel=_SLURM)] = None,
        account: Annotated[Optional[str], typer.Option("--account", help="sbatch --account.",
                                                       rich_help_panel=_SLURM)] = None,
        cpus_per_task: Annotated[Optional[int], typer.Option(
            "--cpus-per-task", help="sbatch --cpus-per-task. Default: 4 per GPU a task drives (from "
            "--gres=gpu:N or the --gpus list).", rich_help_panel=_SLURM)] = None,
        sbatch_arg: Annotated[Optional[list[str]], typer.Option(
            "--sbatch-arg", help="Extra #SBATCH line, e.g. --sbatch-arg=--exclusive or "
            "--sbatch-arg=--gres=gpu:8 (repeatable).", rich_help_panel=_SLURM)] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="With --slurm: write the script, do not submit.",
                                              rich_help_panel=_SLURM)] = False,
        force: Annotated[bool, typer.Option("--force", help="With --slurm: submit even while an earlier array of "
                                            "this sweep is queued or running.", rich_help_panel=_SLURM)] = False,
        wait: Annotated[bool, typer.Option("--wait", help="With --slurm: follow the array to its end (live "
                                           "status line) and exit with the sweep's outcome.",
                                           rich_help_panel=_SLURM)] = False,
        fmt: SweepFormatOpt = "text",
    ) -> None:
        words = list(args or [])
        command = "sweep init" if init else "sweep"

        def produce() -> Result[object]:
            from hotspot.errors import UsageError
            from hotspot.sweep import api

            if init:
                if len(words) > 1:
                    raise UsageError("--init takes at most one file name")
                return api.write_example(Path(words[0] if words else "recipes.yaml"))
            if timeout is not None and not (0 < timeout <= api.MAX_TIMEOUT_S):  # nan fails both
                raise UsageError(f"--timeout must be a positive number of seconds (at most {api.MAX_TIMEOUT_S:g})",
                                 "e.g. --timeout 900")
            if worker is not None:
                if words:
                    raise UsageError("--worker DIR takes no recipes file (the manifest holds the recipes)")
                return api.run_worker(worker, gpus, rocprofv3)
            if len(words) != 1:
                raise UsageError("give one recipes file", "hotspot sweep recipes.yaml (hotspot sweep --init writes one)")
            if dry_run and not slurm:
                raise UsageError("--dry-run goes with --slurm (it writes the job script without submitting)")
            if wait and (not slurm or dry_run):
                raise UsageError("--wait goes with --slurm (a local sweep always runs to its end)",
                                 "hotspot sweep recipes.yaml --slurm --wait")
            opts = api.SweepOptions(
                recipes=Path(words[0]), gpus=gpus, output=output, new=new, retry=tuple(retry or ()),
                only=tuple(only or ()), force_recipes=force_recipes, att_retries=att_retries, timeout_s=timeout,
                rocprofv3=rocprofv3, att_library_path=att_library_path, slurm=slurm, nodes=nodes,
                partition=partition, time_limit=time_limit, account=account, sbatch_args=tuple(sbatch_arg or ()),
                dry_run=dry_run, cpus_per_task=cpus_per_task, force=force)
            try:
                result = api.run_sweep(opts)
            except Exception as err:
                _problems_to_stderr(err)
                raise
            from hotspot.sweep_records import Submission

            submitted = result.data
            if wait and isinstance(submitted, Submission) and submitted.slurm:  # `submission` is true on these only
                from hotspot.sweep import views

                return views.follow_submission(result)
            return result

        raise typer.Exit(run(command, fmt, produce))
