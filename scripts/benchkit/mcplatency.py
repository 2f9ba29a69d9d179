"""Issue 37, point 7: what a program driving `hotspot mcp` over stdio waits for, measured with the
official client, against the targets.

- start: spawn -> initialize -> tools/list answered, for hotspot's server and for the SDK's own
  minimal server (benchkit/minimal_mcp_server.py), started in turn (baseline, hotspot, hotspot,
  baseline, ...): hotspot's cost over the SDK is the median of the paired differences.
- first and repeat, per tool: every tool of the server (tools/list) is called in a server of its
  own with an empty cache folder, IDLE_BEFORE_FIRST_S after tools/list as an assistant calls when
  its user asks (the server preloads the analysis modules when idle: hotspot/mcp/server.py
  PRELOAD; the first call pays the analysis and anything not preloaded), then `repeats` times
  again (the in-process layer's answer, or the command again for the tools never remembered).
- fresh in the server: `analyze` on the 2,056-wave capture in a server whose cache is off
  (HOTSPOT_CACHE=off: neither the result cache nor the in-process layer), after one warm-up
  call, paired call by call with the predecessor stand-in's whole run (benchkit/predecessor.py,
  a process); the ratio is the median of the paired ratios.

The server's CPU time is read from its process CPU clock (nanoseconds, every thread of the
process, those that ended included: _clock_cpu), and for the fresh calls also from /proc/PID/stat's
10 ms ticks beside it (the same accounting, coarser); the predecessor's from wait4.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PY = sys.executable
HERE = Path(__file__).resolve().parent
MINIMAL = HERE / "minimal_mcp_server.py"
PREDECESSOR = HERE / "predecessor.py"

# Issue 37, point 7.
START_OVER_SDK_S = 0.3    # hotspot's start + initialize + tools/list minus the minimal server's
FIRST_CALL_S = 0.5        # the first call of a tool on a corpus capture, in a just-started server
REPEAT_S = 0.010          # a repeat of the same call, every tool
FRESH_RATIO = 3.0         # a fresh analysis inside the server / the predecessor's whole run
IDLE_BEFORE_FIRST_S = 1.0  # between tools/list and the first call


@dataclass
class Start:
    baseline_s: list[float] = field(default_factory=list)
    hotspot_s: list[float] = field(default_factory=list)
    baseline_cpu_s: list[float] = field(default_factory=list)   # the server process's, at tools/list
    hotspot_cpu_s: list[float] = field(default_factory=list)
    baseline_call_s: list[float] = field(default_factory=list)  # the minimal server's echo call: the SDK's round trip

    @property
    def over_s(self) -> float:
        return statistics.median(h - b for h, b in zip(self.hotspot_s, self.baseline_s))

    @property
    def over_cpu_s(self) -> float | None:
        pairs = list(zip(self.hotspot_cpu_s, self.baseline_cpu_s))
        return statistics.median(h - b for h, b in pairs) if pairs else None


@dataclass
class ToolTiming:
    tool: str
    arguments: dict[str, Any]
    first_s: list[float] = field(default_factory=list)     # one per round (a new server each)
    repeat_s: list[float] = field(default_factory=list)    # every repeat of every round
    first_cpu_s: list[float] = field(default_factory=list)   # the server's CPU time during the call
    repeat_cpu_s: list[float] = field(default_factory=list)
    is_error: bool = False          # the answer was a tool error (its code in `error`)
    error: str | None = None
    remembered: bool = False        # the repeat was answered by the in-process layer
    answer_bytes: int = 0


@dataclass
class Fresh:
    capture: str
    waves: int
    wave_bytes: int
    server_s: list[float] = field(default_factory=list)
    predecessor_s: list[float] = field(default_factory=list)
    server_cpu_s: list[float] = field(default_factory=list)       # the server process's, during the call
    predecessor_cpu_s: list[float] = field(default_factory=list)  # the whole process's
    server_tick_cpu_s: list[float] = field(default_factory=list)  # the same calls read in /proc ticks (10 ms)

    @property
    def ratio(self) -> float:
        return statistics.median(s / p for s, p in zip(self.server_s, self.predecessor_s))

    @property
    def cpu_ratio(self) -> float | None:
        pairs = [(s, p) for s, p in zip(self.server_cpu_s, self.predecessor_cpu_s) if p > 0]
        return statistics.median(s / p for s, p in pairs) if pairs else None


@dataclass
class Latency:
    start: Start | None = None
    tools: list[ToolTiming] = field(default_factory=list)
    fresh: Fresh | None = None
    skipped: str | None = None


@dataclass(frozen=True)
class Verdict:
    name: str
    target: str
    measured: str
    ok: bool | None       # None: not measured


def _env(cache: Path, **extra: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in ("PATH", "HOME", "LANG", "PYTHONPATH") if k in os.environ}
    env["XDG_CACHE_HOME"] = str(cache)
    env.update(extra)
    return env


def _hotspot_params(cache: Path, **extra: str) -> Any:
    from mcp import StdioServerParameters

    return StdioServerParameters(command=PY, args=["-m", "hotspot", "mcp", "--root", "/"], env=_env(cache, **extra))


async def _session(params: Any, body: Callable[[Any], Any]) -> Any:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (r, w):
            async with ClientSession(r, w) as s:
                return await body(s)


async def _started(params: Any, echoes: list[float] | None = None) -> tuple[float, float | None]:
    """Seconds from spawning the server to its tools/list answer, and the server process's CPU
    seconds by then (None without /proc). `echoes`: also time 5 calls of the minimal server's echo
    tool (a short text) into it."""
    t = time.perf_counter()

    async def body(s: Any) -> tuple[float, float | None]:
        await s.initialize()
        await s.list_tools()
        wall = time.perf_counter() - t
        cpu = _cpu_of(_server_pid(params.args[-1].encode() if params.args else b""))
        for _ in range(5 if echoes is not None else 0):
            c = time.perf_counter()
            await s.call_tool("echo", {"text": "x" * 2000})
            echoes.append(time.perf_counter() - c)  # type: ignore[union-attr]
        return wall, cpu

    wall, cpu = await _session(params, body)
    return float(wall), cpu


def measure_start(runs: int, base: Path) -> Start:
    import anyio
    from mcp import StdioServerParameters

    out = Start()
    minimal = StdioServerParameters(command=PY, args=[str(MINIMAL)], env=_env(base / "min"))
    cpus: dict[str, list[float | None]] = {"b": [], "h": []}
    for i in range(runs):
        order = ("b", "h") if i % 2 == 0 else ("h", "b")   # alternate who goes first
        for who in order:
            params = minimal if who == "b" else _hotspot_params(base / f"start{i}")
            wall, cpu = anyio.run(_started, params, out.baseline_call_s if who == "b" else None)
            (out.baseline_s if who == "b" else out.hotspot_s).append(wall)
            cpus[who].append(cpu)
    if all(c is not None for c in cpus["b"] + cpus["h"]):
        out.baseline_cpu_s = [c for c in cpus["b"] if c is not None]
        out.hotspot_cpu_s = [c for c in cpus["h"] if c is not None]
    return out


def _text(res: Any) -> str:
    return "".join(getattr(c, "text", "") for c in res.content)


def measure_tool(tool: str, arguments: dict[str, Any], runs: int, repeats: int, base: Path) -> ToolTiming:
    import anyio

    out = ToolTiming(tool, arguments)
    for i in range(runs):
        async def body(s: Any) -> None:
            await s.initialize()
            await s.list_tools()
            await anyio.sleep(IDLE_BEFORE_FIRST_S)
            pid = _server_pid(b"/")
            c = _cpu_of(pid)
            t = time.perf_counter()
            res = await s.call_tool(tool, arguments)
            out.first_s.append(time.perf_counter() - t)
            _add_cpu(out.first_cpu_s, c, _cpu_of(pid))
            text = _text(res)
            out.answer_bytes = len(text.encode())
            out.is_error = bool(res.is_error)
            if res.is_error:
                try:
                    out.error = json.loads(text)["error"]["code"]
                except (ValueError, KeyError, TypeError):
                    out.error = text[:80]
            for _ in range(repeats):
                c = _cpu_of(pid)
                t = time.perf_counter()
                again = await s.call_tool(tool, arguments)
                out.repeat_s.append(time.perf_counter() - t)
                _add_cpu(out.repeat_cpu_s, c, _cpu_of(pid))
                out.remembered = bool((again.meta or {}).get("hotspot/remembered"))

        anyio.run(_session, _hotspot_params(base / f"{tool}{i}"), body)
    return out


def _predecessor(capture: Path) -> tuple[float, float]:
    """The stand-in's whole run: wall and CPU seconds (user + system, wait4)."""
    from benchkit.measure import run_once

    r = run_once([PY, str(PREDECESSOR), str(capture)])
    if r.exit_code:
        raise RuntimeError(f"predecessor.py {capture}: exit {r.exit_code}: {r.stderr_tail}")
    return r.wall_ns / 1e9, r.cpu_ns / 1e9


_TICK_S = 1 / os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 0.01


def _server_pid(marker: bytes = b"/") -> int | None:
    """The server child of this process: `hotspot mcp` (its last argument, the root "/"), or the
    one whose command line ends with `marker` (Linux /proc; None elsewhere)."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else []:
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and cmd[0] == PY.encode() and marker in cmd:
            return int(entry.name)
    return None


def _add_cpu(into: list[float], before: float | None, after: float | None) -> None:
    if before is not None and after is not None:
        into.append(max(0.0, after - before))


# Linux's clock id of a process's CPU clock (what clock_getcpuclockid(3) returns): ~pid << 3, then
# the clock kind in the low bits, CPUCLOCK_SCHED (2): the scheduler's nanoseconds of every thread.
_CPUCLOCK_SHIFT = 3
_CPUCLOCK_SCHED = 2


def _clock_cpu(pid: int | None) -> float | None:
    """CPU seconds of a whole process so far, every thread of it, those that ended included, in
    nanoseconds (the kernel's per-process CPU clock; Linux lets a process read it for another of the
    same user). Exact when the process is idle, as the server is before and after a call (a
    running thread's share is brought up to date when it stops). None where it cannot be read."""
    if pid is None or not hasattr(time, "clock_gettime_ns"):
        return None
    try:
        return time.clock_gettime_ns(((~pid) << _CPUCLOCK_SHIFT) | _CPUCLOCK_SCHED) / 1e9
    except (OSError, OverflowError, ValueError):
        return None


def _tick_cpu(pid: int | None) -> float | None:
    """User + system seconds of a whole process so far (/proc/PID/stat: 10 ms clock ticks)."""
    if pid is None:
        return None
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) * _TICK_S


def _cpu_of(pid: int | None) -> float | None:
    """CPU seconds of a whole process so far: its CPU clock (nanoseconds), else the ticks. Both count
    every thread, ended ones included, from the same scheduler accounting; the ticks are 10 ms steps,
    coarse against a ~100 ms call (docs/benchmark.md, Programs)."""
    cpu = _clock_cpu(pid)
    return cpu if cpu is not None else _tick_cpu(pid)


def measure_fresh(capture: Path, runs: int, base: Path) -> Fresh:
    import anyio

    files = [p for p in capture.iterdir() if p.name.startswith("se") and p.suffix == ".json"]
    out = Fresh(capture.name, len(files), sum(p.stat().st_size for p in files))
    args = {"path": str(capture)}

    async def body(s: Any) -> None:
        await s.initialize()
        await s.list_tools()
        res = await s.call_tool("analyze", args)   # warm-up: the server's lazy imports, the page cache
        if res.is_error:
            raise RuntimeError(f"analyze {capture}: {_text(res)[:300]}")
        pid = _server_pid(b"/")
        for i in range(runs):
            for who in (("p", "s") if i % 2 == 0 else ("s", "p")):
                if who == "p":
                    wall, cpu = await anyio.to_thread.run_sync(_predecessor, capture)
                    out.predecessor_s.append(wall)
                    out.predecessor_cpu_s.append(cpu)
                else:
                    c, ticks = _cpu_of(pid), _tick_cpu(pid)
                    t = time.perf_counter()
                    res = await s.call_tool("analyze", args)
                    out.server_s.append(time.perf_counter() - t)
                    _add_cpu(out.server_cpu_s, c, _cpu_of(pid))
                    _add_cpu(out.server_tick_cpu_s, ticks, _tick_cpu(pid))
                    if (res.meta or {}).get("hotspot/remembered"):
                        raise RuntimeError("a call with the cache off was answered from memory")

    anyio.run(_session, _hotspot_params(base / "fresh", HOTSPOT_CACHE="off"), body)
    return out


def tool_calls(corpus: Path, work: Path) -> dict[str, dict[str, Any]]:
    """Arguments of one call of every tool on the corpus (a dry-run sweep planned in `work` for the
    sweep tools; report and export write into `work`)."""
    capture = corpus / "att/gfx950/flash_attn_replicates/big/ui_output_agent_25171_dispatch_44"
    other = corpus / "att/gfx950/flash_attn_replicates/big/ui_output_agent_27340_dispatch_44_after_loc_fix"
    sweep = dry_sweep(work)
    return {
        "analyze": {"path": str(capture)},
        "plan": {"path": str(capture)},
        "diff": {"before": str(capture), "after": str(other)},
        "pmc": {"paths": [str(corpus / "pmc/rocprof-compute_MI300X_bmm1")]},
        "kernels": {"path": str(corpus / "csv/kernel_trace.csv")},
        "occupancy": {"arch": "gfx950", "vgpr": 128},
        "doctor": {},
        "collect": {"command": [PY, "-c", "pass"], "kernel": "vec_add", "dry_run": True,
                    "output": str(work / "collect")},
        "sweep_status": {"dir": str(sweep)},
        "sweep_report": {"dir": str(sweep)},
        "report": {"path": str(capture), "output": str(work / "report.html"), "force": True},
        "export": {"path": str(capture), "output": str(work / "trace.json"), "force": True},
    }


def dry_sweep(work: Path, entries: int = 8) -> Path:
    """A Slurm sweep planned and not submitted (`--dry-run`): `entries` pending entries."""
    recipes = work / "sweep.yaml"   # JSON is YAML
    recipes.write_text(json.dumps({"entries": [{"name": f"k{i}", "cmd": [PY, "-c", "pass"], "kernel": "^k"}
                                               for i in range(entries)]}))
    out = work / "sweep"
    r = subprocess.run([PY, "-m", "hotspot", "sweep", str(recipes), "--new", "--slurm", "--dry-run", "-o", str(out),
                        "--quiet"], env={**os.environ, "XDG_CACHE_HOME": str(work / "sweep-cache")},
                       capture_output=True, text=True, cwd=work)
    if r.returncode != 0:  # its warnings (no --gres here) are not the benchmark's to print
        raise RuntimeError(f"hotspot sweep --dry-run: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return out


def measure(corpus: Path, fresh_capture: Path | None, runs: int = 5, repeats: int = 5,
            progress: Callable[[str], None] = lambda _m: None, only: set[str] | None = None) -> Latency:
    try:
        import mcp  # noqa: F401
    except ImportError:
        return Latency(skipped="the MCP SDK is not installed (pip install -e '.[mcp]')")
    result = Latency()
    with tempfile.TemporaryDirectory(prefix="hotspot-mcplatency-") as tmp:
        base = Path(tmp)
        if only is None or "start" in only:
            result.start = measure_start(runs, base)
            progress(f"start: hotspot {statistics.median(result.start.hotspot_s):.3f} s, SDK minimal "
                     f"{statistics.median(result.start.baseline_s):.3f} s, over {result.start.over_s:.3f} s")
        work = base / "work"
        work.mkdir()
        for tool, args in tool_calls(corpus, work).items():
            if only is not None and tool not in only and "tools" not in only:
                continue
            t = measure_tool(tool, args, max(1, runs // 2), repeats, base)
            result.tools.append(t)
            progress(f"{tool}: first {statistics.median(t.first_s) * 1000:.0f} ms, repeat "
                     f"{statistics.median(t.repeat_s) * 1000:.1f} ms" + (f" (error {t.error})" if t.is_error else ""))
        if fresh_capture is not None and (only is None or "fresh" in only):
            result.fresh = measure_fresh(fresh_capture, runs, base)
            progress(f"fresh: server {statistics.median(result.fresh.server_s):.3f} s, predecessor "
                     f"{statistics.median(result.fresh.predecessor_s):.3f} s")
    return result


# Tools whose first call reads a corpus capture (the first-call target's scope); doctor probes the
# machine, occupancy computes from its arguments, collect and the sweep tools read no capture.
CAPTURE_TOOLS = ("analyze", "plan", "diff", "pmc", "kernels", "report", "export")


def evaluate(lat: Latency) -> list[Verdict]:
    out: list[Verdict] = []
    if lat.start is not None and lat.start.hotspot_s:
        over = lat.start.over_s
        out.append(Verdict("MCP start + initialize + tools/list over the SDK's minimal server",
                           f"<= {START_OVER_SDK_S * 1000:.0f} ms",
                           f"{over * 1000:.0f} ms (hotspot {statistics.median(lat.start.hotspot_s) * 1000:.0f} ms, "
                           f"minimal {statistics.median(lat.start.baseline_s) * 1000:.0f} ms)",
                           over <= START_OVER_SDK_S))
        if lat.start.baseline_call_s:
            out.append(Verdict("  the SDK's own round trip (the minimal server's echo call, for the repeats)", "",
                               f"{statistics.median(lat.start.baseline_call_s) * 1000:.1f} ms", None))
        cpu = lat.start.over_cpu_s
        if cpu is not None:
            out.append(Verdict("  the same in the server process's CPU time", f"<= {START_OVER_SDK_S * 1000:.0f} ms",
                               f"{cpu * 1000:.0f} ms (hotspot {statistics.median(lat.start.hotspot_cpu_s) * 1000:.0f} ms, "
                               f"minimal {statistics.median(lat.start.baseline_cpu_s) * 1000:.0f} ms)",
                               cpu <= START_OVER_SDK_S))
    for t in lat.tools:
        first = statistics.median(t.first_s)
        if t.tool in CAPTURE_TOOLS:
            out.append(Verdict(f"first call: {t.tool}", f"<= {FIRST_CALL_S * 1000:.0f} ms",
                               f"{first * 1000:.0f} ms", first <= FIRST_CALL_S and not t.is_error))
        rep = statistics.median(t.repeat_s)
        out.append(Verdict(f"repeat call: {t.tool}", f"<= {REPEAT_S * 1000:.0f} ms",
                           f"{rep * 1000:.1f} ms" + (f" (tool error {t.error})" if t.is_error else ""),
                           rep <= REPEAT_S))
    if lat.fresh is not None and lat.fresh.server_s:
        f = lat.fresh
        out.append(Verdict(f"fresh analyze in the server ({f.waves:,} waves, {f.wave_bytes / 1e6:.0f} MB) / "
                           "the predecessor's whole run", f"<= {FRESH_RATIO:g}x",
                           f"{f.ratio:.2f}x wall ({statistics.median(f.server_s) * 1000:.0f} ms vs "
                           f"{statistics.median(f.predecessor_s) * 1000:.0f} ms)", f.ratio <= FRESH_RATIO))
        cpu = f.cpu_ratio
        if cpu is not None:
            out.append(Verdict("  the same in CPU time (server process during the call / predecessor process)",
                               f"<= {FRESH_RATIO:g}x",
                               f"{cpu:.2f}x ({statistics.median(f.server_cpu_s) * 1000:.1f} ms vs "
                               f"{statistics.median(f.predecessor_cpu_s) * 1000:.1f} ms"
                               + (f"; the server in /proc ticks {statistics.median(f.server_tick_cpu_s) * 1000:.0f} ms"
                                  if f.server_tick_cpu_s else "") + ")", cpu <= FRESH_RATIO))
    return out


def verdict_lines(verdicts: list[Verdict]) -> list[str]:
    width = max((len(v.name) for v in verdicts), default=10)
    return [f"{v.name:<{width}}  {v.target:>10}  {v.measured}  "
            f"{'' if v.ok is None else 'PASS' if v.ok else 'FAIL'}".rstrip() for v in verdicts]


def _ms(values: list[float], digits: int) -> str:
    return f"{statistics.median(values) * 1000:.{digits}f}" if values else "n/a"


def tool_table(tools: list[ToolTiming]) -> list[str]:
    """Wall times as the client waits, and the server's CPU time during the call (medians)."""
    lines = [f"{'tool':<14} {'first ms':>9} {'(CPU)':>7} {'repeat ms':>10} {'(CPU)':>7} {'bytes':>7}  "
             "repeat answered by"]
    for t in tools:
        lines.append(f"{t.tool:<14} {_ms(t.first_s, 0):>9} {_ms(t.first_cpu_s, 0):>7} "
                     f"{_ms(t.repeat_s, 1):>10} {_ms(t.repeat_cpu_s, 2):>7} {t.answer_bytes:7d}  "
                     + ("memory" if t.remembered else "the command again")
                     + (f" (a tool error: {t.error})" if t.is_error else ""))
    return lines


def to_text(lat: Latency) -> str:
    if lat.skipped:
        return f"MCP: SKIP ({lat.skipped})\n"
    return "\n".join((tool_table(lat.tools) if lat.tools else []) + verdict_lines(evaluate(lat))) + "\n"
