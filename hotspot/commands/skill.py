"""`hotspot skill`: install the packaged agent skill, or print where it lives (thin adapter)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Optional

import typer

from hotspot.commandspec import CommandSpec, text_and_markdown
from hotspot.commands._run import run
from hotspot.commands.options import format_option

SPEC = CommandSpec(
    "skill", rank=110,
    help="The hotspot agent skill (SKILL.md for coding assistants).",
    group=True,
    views={"skill install": text_and_markdown("hotspot.render.skill", "render_install"),
           "skill mcp": text_and_markdown("hotspot.render.skill", "render_mcp"),
           "skill path": text_and_markdown("hotspot.render.skill", "render_path")},
)

if TYPE_CHECKING:
    from hotspot.result import Result

if TYPE_CHECKING:  # the choices come from the command's spec at run time: any Format member
    InstallFormatOpt = Any
    PathFormatOpt = Any
else:
    InstallFormatOpt = format_option("skill install")
    PathFormatOpt = format_option("skill path")

DEFAULT_DEST = ".claude/skills/hotspot"


def register(app: typer.Typer) -> None:
    skill_app = typer.Typer(help=SPEC.help,
                            no_args_is_help=True)

    @skill_app.command("install", help="Copy the skill into DIR (default .claude/skills/hotspot/); "
                                       "never overwrites a different file without --force.")
    def install(
        dest: Annotated[Optional[str], typer.Option("--dest", help="Target skill folder.")] = None,
        force: Annotated[bool, typer.Option("--force", help="Overwrite files that differ.")] = False,
        print_mcp: Annotated[bool, typer.Option(
            "--print-mcp", help="Install nothing: print how to register the hotspot MCP server "
                                "(`hotspot mcp`) with coding assistants: their command lines and the "
                                "JSON mcpServers entry.")] = False,
        fmt: InstallFormatOpt = "text",
    ) -> None:
        def produce() -> Result[object]:
            from pathlib import Path

            if print_mcp:
                from hotspot.errors import UsageError
                from hotspot.skill.mcp_entry import mcp_registration

                if dest is not None or force:
                    raise UsageError("--print-mcp installs nothing: it takes no --dest or --force")
                return mcp_registration()
            from hotspot.skill.install import install_skill

            return install_skill(Path(dest or DEFAULT_DEST), force=force)

        raise typer.Exit(run("skill install", fmt, produce, "skill mcp" if print_mcp else None))

    @skill_app.command("path", help="Print the folder of the skill packaged with hotspot.")
    def path(fmt: PathFormatOpt = "text") -> None:
        def produce() -> Result[object]:
            from hotspot.skill.install import skill_path_result

            return skill_path_result()

        raise typer.Exit(run("skill path", fmt, produce))

    app.add_typer(skill_app, name="skill")
