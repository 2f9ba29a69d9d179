"""Issue 27: what a coding assistant waits for and reads, per capture.

For each dispatch dir: `plan DIR --brief --format json` as a command line (a process per call: the
first call in an empty cache folder, then repeats on the warm cache) and as a call of the MCP
server's `plan` tool (one server process for all calls: its start is timed once; the first call of
each capture in its own empty cache folder, then repeats answered in-process), and the bytes of the
brief answer (the MCP answer must equal the command line's byte for byte: checked). Wall times,
median of `runs`.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PY = sys.executable


@dataclass
class Row:
    label: str
    path: str
    wave_bytes: int
    brief_bytes: int
    full_plan_bytes: int
    full_analyze_bytes: int
    cli_first_s: float
    cli_repeat_s: float
    mcp_first_s: float
    mcp_repeat_s: float
    same_bytes: bool


@dataclass
class McpBench:
    rows: list[Row] = field(default_factory=list)
    server_start_s: float | None = None
    skipped: str | None = None


def _cli(args: list[str], env: dict[str, str]) -> tuple[float, bytes]:
    t = time.perf_counter()
    out = subprocess.run([PY, "-m", "hotspot", *args], env={**os.environ, **env}, capture_output=True,
                         check=False).stdout
    return time.perf_counter() - t, out.rstrip(b"\n")


def _wave_bytes(d: Path) -> int:
    return sum(p.stat().st_size for p in d.iterdir() if p.name.startswith("se") and p.suffix == ".json")


def measure(dirs: list[Path], runs: int = 3) -> McpBench:
    try:
        import anyio
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client
    except ImportError:
        return McpBench(skipped="the MCP SDK is not installed (pip install -e '.[mcp]')")
    result = McpBench()
    with tempfile.TemporaryDirectory(prefix="hotspot-mcpbench-") as tmp:
        base = Path(tmp)
        cli_rows = {}
        for i, d in enumerate(dirs):
            env = {"XDG_CACHE_HOME": str(base / f"cli{i}"), "HOTSPOT_CACHE": "on"}
            first, out = _cli(["plan", str(d), "--brief", "--format", "json"], env)
            repeats = [_cli(["plan", str(d), "--brief", "--format", "json"], env)[0] for _ in range(runs)]
            full_plan = _cli(["plan", str(d), "--format", "json"], env)[1]
            full_analyze = _cli(["analyze", str(d), "--plan", "--format", "json"], env)[1]
            cli_rows[d] = (first, statistics.median(repeats), out, len(full_plan), len(full_analyze))

        async def session() -> None:
            env = {k: os.environ[k] for k in ("PATH", "HOME") if k in os.environ}
            env["XDG_CACHE_HOME"] = str(base / "mcp")
            params = StdioServerParameters(command=PY, args=["-m", "hotspot", "mcp", "--root", "/"], env=env)
            t = time.perf_counter()
            with open(os.devnull, "w") as errlog:
                async with stdio_client(params, errlog=errlog) as (r, w):
                    async with ClientSession(r, w) as s:
                        await s.initialize()
                        await s.list_tools()
                        result.server_start_s = time.perf_counter() - t
                        for d in dirs:
                            t = time.perf_counter()
                            res = await s.call_tool("plan", {"path": str(d)})
                            first = time.perf_counter() - t
                            text = res.content[0].text.encode()
                            reps = []
                            for _ in range(runs):
                                t = time.perf_counter()
                                await s.call_tool("plan", {"path": str(d)})
                                reps.append(time.perf_counter() - t)
                            c_first, c_rep, c_out, full_plan, full_analyze = cli_rows[d]
                            result.rows.append(Row(
                                d.name, str(d), _wave_bytes(d), len(text), full_plan, full_analyze,
                                c_first, c_rep, first, statistics.median(reps), text == c_out))

        anyio.run(session)
    return result


def to_text(b: McpBench) -> str:
    if b.skipped:
        return f"MCP: SKIP ({b.skipped})\n"
    lines = [f"MCP server start (process, imports, initialize, tools/list): {b.server_start_s * 1000:.0f} ms",
             "plan --brief --format json, per capture (ms, median of repeats):",
             f"{'capture':<44} {'wave MB':>8} {'CLI 1st':>8} {'CLI rep':>8} {'MCP 1st':>8} {'MCP rep':>8} "
             f"{'brief B':>8} {'plan B':>8} {'analyze B':>10} same"]
    for r in b.rows:
        lines.append(f"{r.label[:44]:<44} {r.wave_bytes / 1e6:8.1f} {r.cli_first_s * 1000:8.0f} "
                     f"{r.cli_repeat_s * 1000:8.0f} {r.mcp_first_s * 1000:8.0f} {r.mcp_repeat_s * 1000:8.1f} "
                     f"{r.brief_bytes:8d} {r.full_plan_bytes:8d} {r.full_analyze_bytes:10d} "
                     f"{'yes' if r.same_bytes else 'NO'}")
    worst = max((r.brief_bytes for r in b.rows), default=0)
    lines.append(f"brief answer <= 4096 bytes on every capture: {'PASS' if worst <= 4096 else 'FAIL'} "
                 f"(largest {worst})")
    return "\n".join(lines) + "\n"
