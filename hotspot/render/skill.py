"""Text/markdown views of `skill install` and `skill path` (the same plain lines in both)."""

from __future__ import annotations

from hotspot.result import Result
from hotspot.skill.install import InstallData, PathData
from hotspot.skill.mcp_entry import McpRegistration


def render_install(result: Result[InstallData]) -> str:
    d: InstallData = result.data
    lines = [f"skill installed in {d.dest}"]
    lines += [f"  wrote       {p}" for p in d.written]
    lines += [f"  overwrote   {p}" for p in d.overwritten]
    lines += [f"  unchanged   {p}" for p in d.unchanged]
    return "\n".join(lines)


def render_path(result: Result[PathData]) -> str:
    return result.data.path


_ASSISTANTS = {"claude-code": "Claude Code", "codex": "OpenAI Codex CLI", "gemini-cli": "Gemini CLI",
               "vscode": "VS Code"}


def render_mcp(result: Result[McpRegistration]) -> str:
    """Copy-paste ready: each command whole on its own line under a shell comment, the JSON entry
    as it goes in a file; no line is wrapped at the terminal's width (render/tables.py verbatim)."""
    import json

    from hotspot.render.tables import verbatim

    d: McpRegistration = result.data
    lines = ["Add the hotspot MCP server to a coding assistant (paste the line for yours):", ""]
    for name, line in d.command_lines.items():
        lines += [f"# {_ASSISTANTS.get(name, name)}", verbatim(line), ""]
    lines += ["or put this entry in its mcpServers config file:", ""]
    lines += [verbatim(line) for line in json.dumps(d.mcp_servers, indent=2).splitlines()]
    lines += [""] + [verbatim(f"  {name}: {where}") for name, where in d.config_files.items()]
    lines += ["", "Tool calls may name the folders your assistant grants (its workspace); for captures "
              "elsewhere add `--root DIR` after `mcp` (repeatable), e.g.:",
              verbatim(f"{d.command_lines['claude-code']} --root /path/to/captures")]
    if not d.sdk_installed:
        lines += ["", f"The server needs the MCP SDK, not installed here: {d.install}"]
    return "\n".join(lines)
