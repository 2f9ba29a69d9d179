"""`hotspot collect [OPTIONS] -- CMD ARGS...`: discovery, ATT and counters around one command."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, ToolSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import format_option

SPEC = CommandSpec(
    "collect", rank=50,
    help=("Profile a command with rocprofv3: find its hottest kernel, trace it (ATT), "
          "optionally collect counters, and analyze the best dispatch. Put the command after "
          "--: hotspot collect [OPTIONS] -- ./app ARGS"),
    views={"collect": text_and_markdown("hotspot.render.collect", "render_collect", "render_collect_markdown")},
    tools=(ToolSpec("collect",
                    "Profile a program with rocprofv3 (command: the program and its arguments as a "
                    "list): find its hottest kernel, trace it (ATT), optionally collect counters, "
                    "analyze the best dispatch. Long-running: sends progress notifications; cancelling "
                    "it stops the profiler and marks the run directory's run.json interrupted.",
                    paths=frozenset({"output"}), remembered=False, long_running=True, rank=8),),
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    FormatOpt = Any
else:
    FormatOpt = format_option("collect")

_ATT = "ATT capture"
_PMC = "Counters"
_RUN = "Run"


def register(app: typer.Typer) -> None:
    @app.command("collect", no_args_is_help=True,
                 help=SPEC.help)
    def collect(
        command: Annotated[Optional[list[str]], typer.Argument(
            metavar="[-- COMMAND ARGS...]", help="The command to profile, after --; run as an argument list, never through a shell.",
            show_default=False)] = None,
        output: Annotated[Optional[Path], typer.Option(
            "--output", "-o", help="Run directory (must be new or empty). Default: "
            "./hotspot-runs/<UTC-timestamp>-<kernel>/", rich_help_panel=_RUN)] = None,
        kernel: Annotated[Optional[str], typer.Option(
            "--kernel", "-k", help="kernel_include_regex to trace; skips discovery.", rich_help_panel=_ATT)] = None,
        skip: Annotated[Optional[list[str]], typer.Option(
            "--skip", help="Extra regex of runtime-plumbing kernels discovery must not choose (repeatable).",
            rich_help_panel=_ATT)] = None,
        iterations: Annotated[Optional[str], typer.Option(
            "--iterations", help="SET of 1-based iterations of the kernel to trace, e.g. 12-13 or 3,5-7. "
            "Default: two steady-state iterations from the discovered call count.", rich_help_panel=_ATT)] = None,
        target_cu: Annotated[str, typer.Option("--target-cu", "--att-target-cu", help="att_target_cu.",
                                               rich_help_panel=_ATT)] = "1",
        se_mask: Annotated[str, typer.Option("--se-mask", "--att-shader-engine-mask", help="att_shader_engine_mask.",
                                             rich_help_panel=_ATT)] = "0x1",
        simd_select: Annotated[str, typer.Option("--simd-select", "--att-simd-select", help="att_simd_select.",
                                                 rich_help_panel=_ATT)] = "0xF",
        buffer_size: Annotated[str, typer.Option(
            "--buffer-size", "--att-buffer-size",
            help="att_buffer_size: ONE buffer shared by all shader engines (0x.., bytes, or 512M).",
            rich_help_panel=_ATT)] = "0x10000000",
        no_att: Annotated[bool, typer.Option("--no-att", help="Skip the ATT phase (counters only).",
                                             rich_help_panel=_ATT)] = False,
        att_library_path: Annotated[Optional[str], typer.Option(
            "--att-library-path", help="Folder holding librocprof-trace-decoder.so.", rich_help_panel=_ATT)] = None,
        pmc: Annotated[Optional[list[str]], typer.Option(
            "--pmc", help="Counters to collect (repeatable, or comma-separated).", rich_help_panel=_PMC)] = None,
        pmc_preset: Annotated[Optional[str], typer.Option(
            "--pmc-preset", help="Counter preset: l2 (L2/fabric set for the detected arch).",
            rich_help_panel=_PMC)] = None,
        arch: Annotated[Optional[str], typer.Option(
            "--arch", help="GPU arch for --pmc-preset when it cannot be detected (gfx942, gfx950).",
            rich_help_panel=_PMC)] = None,
        flags: Annotated[bool, typer.Option(
            "--flags", help="Pass settings as rocprofv3 command-line options instead of an input.yaml.",
            rich_help_panel=_RUN)] = False,
        env: Annotated[Optional[list[str]], typer.Option(
            "--env", help="KEY=VALUE added to the profiled command's environment (repeatable).",
            rich_help_panel=_RUN)] = None,
        timeout: Annotated[Optional[float], typer.Option(
            "--timeout", help="Stop any rocprofv3 phase running longer than this many seconds.",
            rich_help_panel=_RUN)] = None,
        no_analyze: Annotated[bool, typer.Option("--no-analyze", help="Do not analyze the best dispatch.",
                                                 rich_help_panel=_RUN)] = False,
        dry_run: Annotated[bool, typer.Option(
            "--dry-run", help="Print the input YAML and the exact command lines; run nothing.",
            rich_help_panel=_RUN)] = False,
        rocprofv3: Annotated[Optional[str], typer.Option("--rocprofv3", help="Path to rocprofv3.",
                                                         rich_help_panel=_RUN)] = None,
        rocprofv3_arg: Annotated[Optional[list[str]], typer.Option(
            "--rocprofv3-arg", help="One more rocprofv3 argument for the ATT and counter runs, as is "
            "(repeatable, in order: --rocprofv3-arg=--kernel-exclude-regex --rocprofv3-arg=copy); "
            "not the options collect sets itself.", rich_help_panel=_RUN)] = None,
        fmt: FormatOpt = "text",
    ) -> None:

        def produce() -> Result[object]:
            from hotspot.collect.api import (
                CollectOptions,
                collect,
                parse_env,
                parse_int,
                parse_rocprofv3_args,
                parse_size,
            )
            from hotspot.collect.rocprof_jobs import AttSettings
            from hotspot.errors import UsageError

            if timeout is not None and timeout <= 0:
                raise UsageError("--timeout must be positive", "e.g. --timeout 600")
            opts = CollectOptions(
                command=tuple(command or ()), cwd=Path.cwd(), output=output, kernel=kernel,
                skip=tuple(skip or ()), iterations=iterations,
                att=AttSettings(target_cu=parse_int(target_cu, "--target-cu"),
                                se_mask=parse_int(se_mask, "--se-mask"),
                                simd_select=parse_int(simd_select, "--simd-select"),
                                buffer_size=parse_size(buffer_size, "--buffer-size")),
                trace=not no_att, flags=flags, env=parse_env(env or []), timeout_s=timeout,
                pmc=tuple(pmc or ()), pmc_preset=pmc_preset, arch=arch, analyze=not no_analyze,
                dry_run=dry_run, rocprofv3=rocprofv3, att_library_path=att_library_path,
                rocprofv3_args=parse_rocprofv3_args(rocprofv3_arg or []))
            from hotspot.render.collect import render_kernel_table

            return collect(opts, show_kernels=render_kernel_table)

        raise typer.Exit(run("collect", fmt, produce))
