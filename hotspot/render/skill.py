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


def render_mcp(result: Result[McpRegistration]) -> str:
    import json

    d: McpRegistration = result.data
    lines = ["Add the hotspot MCP server to a coding assistant:", ""]
    lines += [f"  {name:<12} {line}" for name, line in d.command_lines.items()]
    lines += ["", "or put this entry in its mcpServers config file:", ""]
    lines += ["  " + line for line in json.dumps(d.mcp_servers, indent=2).splitlines()]
    lines += [""] + [f"  {name}: {where}" for name, where in d.config_files.items()]
    if not d.sdk_installed:
        lines += ["", f"The server needs the MCP SDK, not installed here: {d.install}"]
    return "\n".join(lines)
