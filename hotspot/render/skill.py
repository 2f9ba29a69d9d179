"""Text/markdown views of `skill install` and `skill path` (the same plain lines in both)."""

from __future__ import annotations

from hotspot.result import Result
from hotspot.skill.install import InstallData


def render_install(result: Result) -> str:
    d: InstallData = result.data
    lines = [f"skill installed in {d.dest}"]
    lines += [f"  wrote       {p}" for p in d.written]
    lines += [f"  overwrote   {p}" for p in d.overwritten]
    lines += [f"  unchanged   {p}" for p in d.unchanged]
    return "\n".join(lines)


def render_path(result: Result) -> str:
    return result.data.path
