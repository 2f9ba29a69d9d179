"""`hotspot skill`: install the packaged agent skill, or print where it lives (thin adapter)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from hotspot.commands._run import Format, run

DEFAULT_DEST = ".claude/skills/hotspot"


def register(app: typer.Typer) -> None:
    skill_app = typer.Typer(help="The hotspot agent skill (SKILL.md for coding assistants).",
                            no_args_is_help=True)

    @skill_app.command("install", help="Copy the skill into DIR (default .claude/skills/hotspot/); "
                                       "never overwrites a different file without --force.")
    def install(
        dest: Annotated[Optional[str], typer.Option("--dest", help="Target skill folder.")] = None,
        force: Annotated[bool, typer.Option("--force", help="Overwrite files that differ.")] = False,
        fmt: Annotated[Format, typer.Option("--format", help="text or json")] = Format.text,
    ) -> None:
        def produce():
            from pathlib import Path

            from hotspot.skill.install import install_skill

            return install_skill(Path(dest or DEFAULT_DEST), force=force)

        from hotspot.skill.install import render_install

        raise typer.Exit(run("skill install", fmt, produce, {"text": render_install}))

    @skill_app.command("path", help="Print the folder of the skill packaged with hotspot.")
    def path(fmt: Annotated[Format, typer.Option("--format", help="text or json")] = Format.text) -> None:
        def produce():
            from hotspot.skill.install import skill_path_result

            return skill_path_result()

        from hotspot.skill.install import render_path

        raise typer.Exit(run("skill path", fmt, produce, {"text": render_path}))

    app.add_typer(skill_app, name="skill")
