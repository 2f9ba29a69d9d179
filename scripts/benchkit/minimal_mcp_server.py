"""The baseline of `bench.py --programs` (issue 37, point 7): the smallest MCP server written with
the official SDK, on the same low-level API hotspot's server uses (hotspot/mcp/server.py), over
stdio, with one trivial tool. What it costs to start and answer initialize and tools/list is the
SDK's own cost; hotspot's server is measured against it.

    python scripts/benchkit/minimal_mcp_server.py     (speaks MCP on stdin/stdout)
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

ECHO = types.Tool(name="echo", description="Answer the text given.",
                  input_schema={"type": "object", "properties": {"text": {"type": "string"}},
                                "required": ["text"]})


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    return types.ListToolsResult(tools=[ECHO])


async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    text = str((params.arguments or {}).get("text", ""))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


async def serve() -> None:
    server: Server[Any] = Server("minimal", version="0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


if __name__ == "__main__":
    anyio.run(serve)
