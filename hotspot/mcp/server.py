"""`hotspot mcp`: the Model Context Protocol server over stdio, on the official `mcp` SDK.

Each tool call runs its command in a worker thread of this process (hotspot/mcp/invoke.py): the
event loop keeps reading requests, so calls overlap and a cancellation arrives while one runs.
A cancelled call (the client's request timed out or was cancelled, or the client closed) gets what
Ctrl-C gives the command line (a KeyboardInterrupt, ClientCancelled, in its thread), said as a
cancellation: a collect stops its profiler and marks run.json `interrupted`; the server waits for
that before it lets the call go.
"""

from __future__ import annotations

import ctypes
import importlib
import os
import threading
import warnings
from collections.abc import Callable
from typing import Any

import anyio
import anyio.from_thread
import anyio.to_thread
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from hotspot._version import __version__
from hotspot.commandspec import ToolSpec
from hotspot.errors import ClientCancelled, HotspotError, UsageError
from hotspot.mcp import hints, paging
from hotspot.mcp import roots as roots_mod
from hotspot.mcp.invoke import Answer, Remembered, run_command
from hotspot.mcp.lru import Lru
from hotspot.mcp.tool_schemas import BY_NAME, SPECS, description, input_schema, path_values, to_argv
from hotspot.result import dumps, error_envelope

REMEMBERED_META = "hotspot/remembered"
INSTRUCTIONS = (
    "hotspot: which instruction of an AMD GPU kernel waits, for what, and what to change, from "
    "rocprofv3 thread traces (ATT) and counters. Start with `plan` (or `analyze`) on a "
    "ui_output_agent_*_dispatch_* folder: the brief answer (default) holds trust, the top plan items "
    "with file:line, code rows and fix; the same call with detail_level \"full\" gives everything. Every "
    "answer is hotspot's JSON envelope {schema_version, command, ok, data | error, warnings}; a "
    "failed call is a tool error whose error.code and error.hint say what to do. An answer is at "
    "most 16 KB (max_bytes): a longer list is cut and page.more gives the cursor for the rest.")


# What the tools' first calls import: the commands' use cases, the analysis and its native scanner,
# the renderers. Loaded in a background thread once the client has listed the tools and then left
# the server idle for PRELOAD_IDLE_S (an assistant lists the tools when it starts and calls one
# when its user asks), so a first call does not pay for them (issue 37: first call <= 0.5 s), and
# neither does the start nor a call that comes at once.
PRELOAD = ("hotspot.plan.entry_point", "hotspot.plan.brief", "hotspot.att.capture_analysis",
           "hotspot.att.wave_results", "hotspot.att.engine.wavepass", "hotspot.att.engine.native",
           "hotspot.cache.derived", "hotspot.capture.target", "hotspot.diff.api", "hotspot.diff.stats",
           "hotspot.diff.workgroups", "hotspot.att.wave_samples", "hotspot.pmc.api",
           "hotspot.trace.api", "hotspot.export.report_file", "hotspot.export.perfetto",
           "hotspot.export.timeline", "hotspot.render.registry", "hotspot.render.html")
PRELOAD_IDLE_S = 0.2


class Preload:
    """PRELOAD imported once, in a thread of its own, unless a call comes first (that call then
    imports what it needs, as without a preload). A call waits for a preload under way to end
    rather than import beside it: two threads importing modules that import each other can see
    one of them half-initialized."""

    def __init__(self, modules: tuple[str, ...] = PRELOAD, idle_s: float = PRELOAD_IDLE_S) -> None:
        self.modules = modules
        self.idle_s = idle_s
        self.started = False
        self.claimed = threading.Event()  # a call has come
        self.done = threading.Event()

    def start(self) -> None:
        if not self.started:
            self.started = True
            threading.Thread(target=self._run, name="hotspot-preload", daemon=True).start()

    def _run(self) -> None:
        try:
            if self.claimed.wait(self.idle_s):
                return
            for name in self.modules:
                try:
                    importlib.import_module(name)
                except Exception:  # noqa: BLE001 - the call that needs it meets the error and reports it
                    pass
        finally:
            self.done.set()

    def wait(self) -> None:
        """Before a call runs (in its thread): no preload starts after this; one under way ends first."""
        if self.started:
            self.claimed.set()
            self.done.wait()


class FirstPages:
    """The first page cut from a remembered answer, kept with it: a repeat of a call whose answer
    is over max_bytes is answered without parsing and cutting the document again."""

    def __init__(self, limit: int = 256) -> None:
        self._pages: Lru[tuple[str, int], tuple[bytes, bytes]] = Lru(limit)

    def get(self, document: bytes, call: str, limit: int, tool: str) -> bytes:
        if len(document) <= limit:
            return document
        key = (call, limit)
        kept = self._pages.get(key)
        if kept is not None and kept[0] is document:  # the very answer it was cut from
            return kept[1]
        page = paging.first_page(document, tool, call, limit)
        self._pages.put(key, (document, page))
        return page


class ToolServer:
    """The state one `hotspot mcp` process serves with: the folders given with `--root`, and
    remembered answers."""

    def __init__(self, added_roots: list[str]) -> None:
        self.added_roots = added_roots
        self.remembered = Remembered()
        self.held = paging.Held()
        self.preload = Preload()
        self.first_pages = FirstPages()

    async def roots(self, ctx: Any) -> list[str]:
        """The client's roots (when it declares the capability) and the `--root` folders: a user
        whose assistant grants only its workspace reaches captures elsewhere by adding them. A
        client without roots and no `--root`: the working directory."""
        caps = getattr(ctx.session, "client_capabilities", None)
        if caps is not None and getattr(caps, "roots", None) is not None:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # roots are deprecated in the newest protocol only
                result = await ctx.session.list_roots()
            return roots_mod.root_paths(str(r.uri) for r in result.roots) + self.added_roots
        return self.added_roots or [os.path.realpath(os.getcwd())]

    async def list_tools(self, ctx: Any, params: Any) -> types.ListToolsResult:
        tools = types.ListToolsResult(tools=[_tool(s) for s in SPECS])
        self.preload.start()
        return tools

    async def call_tool(self, ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = BY_NAME.get(params.name)
        if spec is None:
            return _error_result(params.name, HotspotError(
                f"no tool named {params.name!r}", f"tools: {', '.join(BY_NAME)}", code="usage"), 2)
        arguments = dict(params.arguments or {})
        try:
            argv = to_argv(spec, arguments)
            limit = paging.limit_of(arguments, spec.name)
            roots_mod.check(path_values(spec, arguments), await self.roots(ctx))
        except HotspotError as err:
            return _error_result(spec.command, err, err.exit_code)
        work = _work(spec, argv, self.remembered)
        cursor = arguments.get(paging.CURSOR_ARG)
        call = paging.call_digest(argv)
        if not cursor and work is not run_command:
            # a repeat answered from memory (a few stats) is answered here: under CPU contention,
            # waking a worker thread and then this loop again costs more than the answer
            hit = self.remembered.get(argv)
            if hit is not None:
                return _result(self._page(spec, call, None, limit, hit))

        def paged() -> Answer:
            # the whole document (a cursor's: the one its first answer was cut from), then the
            # page of it this call asks for
            self.preload.wait()
            held = self.held.get(call) if cursor else None
            if held is not None:
                answer = Answer(held, 0, remembered=True)
            elif cursor and not spec.remembered:  # never run a collect or a sweep again to page it
                err = UsageError("the answer this cursor pages is no longer held by the server",
                                 f"call {spec.name} again without cursor and page from its new answer")
                return Answer(_error_document(spec.command, err, err.exit_code), err.exit_code)
            else:
                answer = work(argv)
            return self._page(spec, call, cursor, limit, answer)

        answer = await _in_thread(paged, _progress_sender(ctx) if spec.long_running else None)
        return _result(answer)


    def _page(self, spec: ToolSpec, call: str, cursor: Any, limit: int, answer: Answer) -> Answer:
        """The answer as the call gets it: a command's error said with the tool's arguments; a
        document cut to `limit` (or the page `cursor` asks for), the whole kept for the cursors."""
        if answer.exit_code != 0 and hints.is_error_envelope(answer.document):
            # the command's error, said with this tool's arguments
            return Answer(hints.translate(answer.document, spec), answer.exit_code, answer.remembered)
        # a result that is not a success (a diff of two kernels, 8) is paged like any answer
        try:
            document = (paging.next_page(answer.document, spec.name, call, cursor, limit) if cursor
                        else self.first_pages.get(answer.document, call, limit, spec.name))
        except HotspotError as err:
            return Answer(_error_document(spec.command, err, err.exit_code), err.exit_code)
        if not cursor and document is not answer.document:  # cut: keep it for the cursors
            self.held.put(call, answer.document)
        return Answer(document, answer.exit_code, answer.remembered)


def _work(spec: ToolSpec, argv: list[str], remembered: Remembered) -> Callable[[list[str]], Answer]:
    """How a call is run: through the in-process layer, or the command every time. A call that
    writes a file is remembered only when it may replace the file (`force`): without it a repeat
    must still refuse the file its first call wrote, as the command line does."""
    if not spec.remembered:
        return run_command
    if spec.outputs:
        return (lambda a: remembered.run(a, writes=True)) if "--force" in argv else run_command
    return remembered.run


def _tool(spec: ToolSpec) -> types.Tool:
    read_only = spec.name != "collect" and not spec.outputs
    return types.Tool(name=spec.name, description=description(spec), input_schema=input_schema(spec),
                      annotations=types.ToolAnnotations(read_only_hint=read_only, open_world_hint=False))


def _result(answer: Answer) -> types.CallToolResult:
    # _meta says whether the in-process layer answered (no capture file was opened)
    return types.CallToolResult(content=[types.TextContent(type="text", text=answer.document.decode("utf-8"))],
                                is_error=answer.exit_code != 0,
                                _meta={REMEMBERED_META: answer.remembered})


def _error_document(command: str, err: HotspotError, exit_code: int) -> bytes:
    return dumps(error_envelope(command, err.code, exit_code, err.message, err.hint, details=err.details),
                 pretty=False)


def _error_result(command: str, err: HotspotError, exit_code: int) -> types.CallToolResult:
    return _result(Answer(_error_document(command, err, exit_code), exit_code))


def _progress_sender(ctx: Any) -> Callable[[str], None]:
    """A progress line of the command, sent as a progress notification (from its worker thread)."""
    count = {"n": 0}

    def send(message: str) -> None:
        count["n"] += 1
        try:
            anyio.from_thread.run(ctx.session.report_progress, float(count["n"]), None, message)
        except Exception:  # noqa: BLE001 - a client gone or not asking for progress never stops the work
            pass

    return send


class _Running:
    """The worker thread of one call, and a way to interrupt it as Ctrl-C would."""

    def __init__(self) -> None:
        self.ident: int | None = None
        self.lock = threading.Lock()
        self.running = False
        self.done = threading.Event()

    def interrupt(self) -> None:
        with self.lock:
            if self.running and self.ident is not None:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(self.ident),
                                                           ctypes.py_object(ClientCancelled))


async def _in_thread(work: Callable[[], Answer], on_progress: Callable[[str], None] | None) -> Answer:
    from hotspot.diagnostics import PROGRESS_LISTENER

    state = _Running()

    def body() -> Answer:
        with state.lock:
            state.ident = threading.get_ident()
            state.running = True
        try:
            PROGRESS_LISTENER.set(on_progress)
            return work()
        finally:
            with state.lock:
                state.running = False
            state.done.set()

    try:
        return await anyio.to_thread.run_sync(body, abandon_on_cancel=True)
    except anyio.get_cancelled_exc_class():
        state.interrupt()
        with anyio.CancelScope(shield=True):  # the run directory is consistent before we return
            await anyio.to_thread.run_sync(state.done.wait)
        raise


async def serve(added_roots: list[str]) -> None:
    state = ToolServer(added_roots)
    server: Server[Any] = Server("hotspot", version=__version__, instructions=INSTRUCTIONS,
                                 on_list_tools=state.list_tools, on_call_tool=state.call_tool)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main(added_roots: list[str]) -> int:
    from hotspot.diagnostics import QUIET

    QUIET["on"] = True  # stderr is the client's log: no progress lines, no profiled program's output
    anyio.run(serve, [os.path.realpath(r) for r in added_roots])
    return 0

