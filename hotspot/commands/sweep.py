"""`hotspot sweep`: profile every entry of a recipes file, one GPU each, on one node or with Slurm.

    hotspot sweep --init [FILE]               write a commented example recipes file
    hotspot sweep RECIPES.yaml [--gpus ...]   run (or resume) the sweep on this node
    hotspot sweep RECIPES.yaml --slurm ...    write DIR/sweep.sbatch and submit it
    hotspot sweep --worker DIR --gpus all     one node's worker (what the Slurm script runs)
    hotspot sweep status DIR                  progress, workers and the Slurm array's state
    hotspot sweep report DIR [--html OUT]     the cross-kernel table and dashboard
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from hotspot.commands._run import run
from hotspot.commands.options import Format, FormatOpt
from hotspot.render.registry import lazy

_RUN = "Run"
_SLURM = "Slurm"
_REPORT = "report"
HELP = ("Profile a whole kernel library: every entry of a recipes file traced (ATT) and analyzed on a "
        "GPU of its own, resumable, with a cross-kernel report; across nodes with --slurm. "
        "Forms: `sweep --init [FILE]`, `sweep RECIPES.yaml`, `sweep status DIR`, `sweep report DIR "
        "[--html OUT]`, `sweep --worker DIR`.")


def register(app: typer.Typer) -> None:
    @app.command("sweep", help=HELP, no_args_is_help=True)
    def sweep(
        args: Annotated[Optional[list[str]], typer.Argument(
            help="RECIPES.yaml; or `status DIR`; or `report DIR`; or the file --init writes.",
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
            "--retry", help="Re-queue entries in these states: failed, empty, timed-out, interrupted, all "
            "(comma-separated or repeated). Done entries are always skipped.", rich_help_panel=_RUN)] = None,
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
        sbatch_arg: Annotated[Optional[list[str]], typer.Option(
            "--sbatch-arg", help="Extra #SBATCH line, e.g. --sbatch-arg=--exclusive or "
            "--sbatch-arg=--gres=gpu:8 (repeatable).", rich_help_panel=_SLURM)] = None,
        dry_run: Annotated[bool, typer.Option("--dry-run", help="With --slurm: write the script, do not submit.",
                                              rich_help_panel=_SLURM)] = False,
        html: Annotated[Optional[str], typer.Option("--html", help="sweep report: write the dashboard page here.",
                                                    rich_help_panel=_REPORT)] = None,
        force: Annotated[bool, typer.Option("--force", help="sweep report: replace an existing --html file.",
                                            rich_help_panel=_REPORT)] = False,
        fmt: FormatOpt = Format.text,
    ) -> None:
        words = list(args or [])
        mode = words[0] if words and words[0] in ("status", "report") else None
        command = f"sweep {mode}" if mode else ("sweep init" if init else "sweep")
        r = "hotspot.render.sweep"
        renderers = {"status": {"text": lazy(r, "render_status"), "markdown": lazy(r, "render_status_markdown")},
                     "report": {"text": lazy(r, "render_report"), "markdown": lazy(r, "render_report_markdown")},
                     "init": {"text": lazy(r, "render_init"), "markdown": lazy(r, "render_init")},
                     None: {"text": lazy(r, "render_sweep"), "markdown": lazy(r, "render_sweep_markdown")}}

        def produce():
            from hotspot.errors import UsageError
            from hotspot.sweep import api, views

            if mode is not None:
                if len(words) != 2:
                    raise UsageError(f"sweep {mode} takes one sweep directory", f"hotspot sweep {mode} DIR")
                if mode == "status":
                    return views.sweep_status(Path(words[1]))
                return views.sweep_report(Path(words[1]), html, force)
            if html is not None or force:
                raise UsageError("--html/--force belong to `hotspot sweep report DIR`")
            if init:
                if len(words) > 1:
                    raise UsageError("--init takes at most one file name")
                return api.write_example(Path(words[0] if words else "recipes.yaml"))
            if timeout is not None and timeout <= 0:
                raise UsageError("--timeout must be positive", "e.g. --timeout 900")
            if worker is not None:
                if words:
                    raise UsageError("--worker DIR takes no recipes file (the manifest holds the recipes)")
                return api.run_worker(worker, gpus, rocprofv3)
            if len(words) != 1:
                raise UsageError("give one recipes file", "hotspot sweep recipes.yaml (hotspot sweep --init writes one)")
            if dry_run and not slurm:
                raise UsageError("--dry-run goes with --slurm (it writes the job script without submitting)")
            opts = api.SweepOptions(
                recipes=Path(words[0]), gpus=gpus, output=output, new=new, retry=tuple(retry or ()),
                only=tuple(only or ()), force_recipes=force_recipes, att_retries=att_retries, timeout_s=timeout,
                rocprofv3=rocprofv3, att_library_path=att_library_path, slurm=slurm, nodes=nodes,
                partition=partition, time_limit=time_limit, account=account, sbatch_args=tuple(sbatch_arg or ()),
                dry_run=dry_run)
            return api.run_sweep(opts)

        raise typer.Exit(run(command, fmt, produce, renderers["init" if init and not mode else mode]))
