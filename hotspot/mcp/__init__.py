"""The MCP server (`hotspot mcp`): the commands as Model Context Protocol tools for coding assistants.

- tools.py: one tool per command; input schemas from the commands' own click parameters.
- invoke.py: a call run in-process (the command's parsing, use case and JSON serializer), and the
  in-process layer that answers a repeat call on unchanged inputs from memory.
- roots.py: paths outside the roots the client grants are refused.
- server.py: the SDK server over stdio (threads, progress, cancellation).

Needs the optional extra `hotspot[mcp]` (the official `mcp` SDK); nothing here is imported by the
other commands.
"""
