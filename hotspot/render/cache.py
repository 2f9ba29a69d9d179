"""Text/markdown views of `cache info` and `cache clear`."""

from __future__ import annotations

from hotspot.cache.manage import CacheCleared, CacheInfo
from hotspot.result import Result

MIB = 1 << 20


def _mib(n: int) -> str:
    return f"{n / MIB:,.1f} MiB"


def render_info(result: Result[CacheInfo]) -> str:
    d: CacheInfo = result.data
    state = "on" if d.enabled else f"off ({d.disabled_by})"
    lines = [f"cache      {d.path}",
             f"state      {state}" + (f"; folder not usable: {d.problem}" if d.problem else ""),
             f"entries    {d.entries:,} ({_mib(d.bytes)} of {_mib(d.limit_bytes)}; least recently "
             "used evicted beyond that)"]
    width = max((len(k.kind) for k in d.kinds), default=0)
    lines += [f"  {k.kind:<{width}}  {k.entries:>6,}  {_mib(k.bytes):>11}  {k.what}" for k in d.kinds]
    return "\n".join(lines)


def render_clear(result: Result[CacheCleared]) -> str:
    d: CacheCleared = result.data
    return f"removed {d.removed:,} cache files ({_mib(d.freed_bytes)}) from {d.path}"
