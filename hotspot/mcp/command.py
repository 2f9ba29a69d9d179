"""`hotspot mcp` (thin adapter, mounted by hotspot/cli.py like the commands): serve the commands to coding assistants over the Model Context Protocol (stdio)."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from hotspot.commandspec import CommandSpec

SPEC = CommandSpec(
    "mcp", rank=140,
    help=("Serve hotspot's commands as MCP tools over stdio (for coding assistants; needs the "
          "extra hotspot[mcp]). Register it with your assistant, e.g. `claude mcp add hotspot "
          "-- hotspot mcp`."),
    views={},
)

INSTALL_HINT = "pip install 'hotspot[mcp]' (the official MCP Python SDK, Python >= 3.10)"


def register(app: typer.Typer) -> None:
    @app.command("mcp", help=SPEC.help)
    def mcp(
        root: Annotated[Optional[list[str]], typer.Option(
            "--root", help="A folder tool calls may read and write, added to the roots the client "
                           "grants (repeatable; a client that grants none: default the working "
                           "directory).")] = None,
    ) -> None:
        import sys

        from hotspot.errors import EXIT_TOOL_MISSING

        try:
            import mcp.server.lowlevel  # noqa: F401 - the SDK, from the optional extra
        except ImportError:
            sys.stderr.write(f"hotspot mcp: the MCP SDK is not installed (next: {INSTALL_HINT})\n")
            raise typer.Exit(EXIT_TOOL_MISSING) from None
        from hotspot.mcp.server import main

        raise typer.Exit(main(list(root or [])))
