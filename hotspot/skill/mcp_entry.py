"""How to register `hotspot mcp` with coding assistants (`hotspot skill install --print-mcp`):
the JSON `mcpServers` entry their config files take, and the command line of those that add
servers from a shell. Nothing is written."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

from hotspot.record import record
from hotspot.result import Result

SERVER_NAME = "hotspot"
SERVER_ARGS = ["mcp"]


@record
class McpRegistration:
    command: str                    # the hotspot executable the assistant starts
    args: list[str]
    mcp_servers: dict[str, object]  # {"mcpServers": {"hotspot": {"command", "args"}}}
    command_lines: dict[str, str]   # assistant -> the shell command that registers the server
    config_files: dict[str, str]    # assistant -> where its mcpServers JSON lives
    sdk_installed: bool             # the extra hotspot[mcp] is installed in this environment
    install: str                    # how to install it when it is not


def hotspot_command() -> str:
    """The `hotspot` of this installation when it is beside the interpreter (a venv's bin/), so the
    assistant starts this very install whatever its PATH; else the name, found on PATH."""
    beside = Path(sys.executable).parent / "hotspot"
    return str(beside) if beside.is_file() else "hotspot"


def mcp_registration() -> Result[McpRegistration]:
    cmd = hotspot_command()
    argv = " ".join(shlex.quote(a) for a in [cmd, *SERVER_ARGS])
    entry = {"command": cmd, "args": list(SERVER_ARGS)}
    vscode = '{"name":"%s","command":"%s","args":["mcp"]}' % (SERVER_NAME, cmd.replace('"', '\\"'))
    lines = {
        "claude-code": f"claude mcp add {SERVER_NAME} -- {argv}",
        "codex": f"codex mcp add {SERVER_NAME} -- {argv}",
        "gemini-cli": f"gemini mcp add {SERVER_NAME} {argv}",
        "vscode": f"code --add-mcp {shlex.quote(vscode)}",
    }
    files = {
        "claude-code (project)": ".mcp.json",
        "cursor": ".cursor/mcp.json (project) or ~/.cursor/mcp.json",
        "claude-desktop": "claude_desktop_config.json (Settings > Developer > Edit Config)",
        "gemini-cli": ".gemini/settings.json or ~/.gemini/settings.json",
    }
    installed = importlib.util.find_spec("mcp") is not None
    return Result("skill install", McpRegistration(
        cmd, list(SERVER_ARGS), {"mcpServers": {SERVER_NAME: entry}}, lines, files, installed,
        "pip install 'hotspot[mcp]'"))
