"""Options shared by several commands, declared once (help text cannot drift between commands).

Only typer (and the command specs) is imported here: command modules stay cheap to import for
`--help`.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, formats_of


def format_option(view: str, sections: CommandSpec | None = None) -> Any:
    """The `--format` option of the command whose output is `view`: its choices are json and the
    formats the command's spec (hotspot/commandspec.py, its SPEC built above the option) names a
    renderer for, so a new output format reaches the option, its help and the MCP tool schema from
    the spec. `sections`: the command has `--list-sections`, which prints in this format; both
    options are then eager (read before the arguments), so either may come first."""
    choices = formats_of(view)
    formats = Enum("Format", {c: c for c in choices}, type=str)  # type: ignore[misc]  # members from the spec at run time
    listed = f"{', '.join(choices[:-1])} or {choices[-1]}"
    if sections is None:
        return Annotated[formats, typer.Option("--format", help=f"{listed}.")]
    spec = sections

    def seen(ctx: typer.Context, value: Any) -> str:
        fmt = str(getattr(value, "value", value))
        ctx.meta[_FORMAT_KEY] = fmt
        if ctx.meta.get(_LIST_KEY):  # --list-sections came first: print now, in this format
            _print_sections(spec, fmt)
        return fmt  # the choice's string: typer makes it the Format member again

    return Annotated[formats, typer.Option("--format", help=f"{listed}.", is_eager=True, callback=seen)]


KernelOpt = Annotated[Optional[str], typer.Option(
    "--kernel", help="Regex selecting a kernel when the input holds several.")]
ArchOpt = Annotated[Optional[str], typer.Option(
    "--arch", help="GPU target (gfx942, gfx950, ...; target features such as :sramecc+ are kept "
                   "apart); overrides detection. A target hotspot has no table for gets no "
                   "occupancy numbers.")]
def _check_max_file_mb(value: Optional[float]) -> Optional[float]:
    """A finite, non-negative size (nan and inf would silently disable or break the cap)."""
    if value is not None and not (value >= 0 and value != float("inf")):
        raise typer.BadParameter(f"{value} is not a size in MiB: give a number >= 0 (0 = no cap)")
    return value


MaxFileMbOpt = Annotated[Optional[float], typer.Option(
    "--max-file-mb", callback=_check_max_file_mb, help="Refuse a code.json or wave file larger than this many MiB "
                          "before reading it (0 = no cap; default 32 MiB: peak memory is ~7-16x the "
                          "largest file).")]
MaxWavesOpt = Annotated[Optional[int], typer.Option(
    "--max-waves", help="Read at most N wave files, sampled evenly across SEs/SIMDs (for very "
                        "large captures).")]
MetaOpt = Annotated[Optional[list[str]], typer.Option(
    "--meta", help="A side file (agent_info CSV, kernel trace/stats CSV, rocpd db, results.json) or "
                   "a folder of them, used before the ones found near the capture; repeatable.")]
PmcOpt = Annotated[Optional[list[str]], typer.Option(
    "--pmc", help="Counter files for the plan's memory verdicts (as `hotspot pmc` reads them); "
                  "repeatable.")]
# analyze's and plan's --brief (one option: the same view of either, render/plan.py render_brief)
BriefOpt = Annotated[bool, typer.Option(
    "--brief", help="Print only the verdict (at most 15 lines: trust, where the cycles go, the top 3 plan items "
                    "with estimate and file:line). With --format json: the brief detail level (verdict, trust, "
                    "top items with rows and fix; under 4 KB).")]
SourceMapOpt = Annotated[Optional[list[str]], typer.Option(
    "--source-map", help="OLD=NEW: read sources recorded under OLD from the local checkout NEW when "
                         "the capture has no snapshot of them; repeatable (also HOTSPOT_SOURCE_MAP, "
                         "pairs separated by ':').")]

ExampleOpt = Annotated[bool, typer.Option(
    "--example", help="Read the bundled example dispatch (in place of PATH; its path is printed on "
                      "stderr).")]


def capture_path(path: Optional[str], example: bool) -> str:
    """PATH, or with --example the bundled example dispatch's, whose whole path is printed once on
    stderr (the views shorten long paths; --quiet drops the line). Call it inside the command's
    produce(): a conflict is a usage error there."""
    from hotspot.errors import UsageError

    if not example:
        if not path:
            raise UsageError("give PATH, or --example for the bundled example dispatch")
        return path
    if path:
        raise UsageError("--example takes no PATH")
    from hotspot.diagnostics import note
    from hotspot.examples import example_dispatch_dir

    target = str(example_dispatch_dir())
    note(f"example: {target}")
    return target


# `--section NAME[,NAME]` of a command with sections (its spec's `sections`)
SectionOpt = Annotated[Optional[str], typer.Option(
    "--section", metavar="NAME[,NAME]",
    help="Print only these sections, in their usual order (text, markdown and csv; JSON has "
         "everything); --list-sections names them.")]


_LIST_KEY = "hotspot.list_sections"  # ctx.meta: --list-sections was given (the format not yet read)
_FORMAT_KEY = "hotspot.format"       # ctx.meta: the --format value, once read


def _print_sections(spec: CommandSpec, fmt: str) -> None:
    """The command's sections and what each holds: a JSON document with `--format json`, else one
    line each; then exit 0."""
    from hotspot.outfile import write_stdout

    if fmt == "json":
        from hotspot.result import Result

        data = {"sections": [{"name": n, "description": what} for n, what in spec.sections.items()]}
        write_stdout(Result(spec.name, data).to_json())
    else:
        width = max(len(n) for n in spec.sections)
        write_stdout("".join(f"{n:<{width}}  {what}\n" for n, what in spec.sections.items()))
    raise typer.Exit(0)


def list_sections_option(spec: CommandSpec) -> Any:
    """`--list-sections`: print the command's sections and what each holds, then exit 0 (needs no
    input: eager, before the arguments are checked). It prints in the `--format` given (json or
    text) whichever comes first: the format option (`format_option(view, spec)`, eager too) prints
    when it is read after this one."""

    def show(ctx: typer.Context, value: bool) -> None:
        if not value:
            return
        if _FORMAT_KEY in ctx.meta:  # --format was read first (given before --list-sections)
            _print_sections(spec, ctx.meta[_FORMAT_KEY])
        ctx.meta[_LIST_KEY] = True  # --format, given later or left at its default, prints

    return Annotated[bool, typer.Option(
        "--list-sections", is_eager=True, callback=show,
        help="List the sections --section takes, then exit.")]


def chosen_sections(spec: CommandSpec, value: Optional[str]) -> Optional[tuple[str, ...]]:
    """The sections `--section` names (None without it); an unknown name is a usage error."""
    if value is None:
        return None
    from hotspot.errors import UsageError

    try:
        return spec.section_names(value)
    except ValueError as exc:
        raise UsageError(str(exc), f"hotspot {spec.name} --list-sections") from None
