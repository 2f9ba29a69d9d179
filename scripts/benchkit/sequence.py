"""Issue 18's measurements on one input: a fresh analysis against the predecessor-style baseline,
the command sequence analyze -> plan -> report -> diff with the result cache, and each read-only
command repeated on the unchanged capture (docs/benchmark.md).

Every hotspot run here uses a cache folder of the benchmark's own (XDG_CACHE_HOME under a temp
dir), never the user's: "fresh" runs have the cache off and an empty folder of their own (`cold_env`;
bench.py checks it stays empty), a sequence starts from an empty folder, repeats run against a
folder warmed by one run of each command.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchkit.measure import Run, Spread, run_once, summarize

PY = sys.executable
PREDECESSOR = str(Path(__file__).resolve().parent / "predecessor.py")
RACY_S = 2.1  # hotspot.cache.deps.RACY_NS, and a margin


def cold_env(folder: Path) -> dict[str, str]:
    """The environment of a fresh run: the result cache off and, should anything still look for
    it, a cache folder that starts empty (never the user's)."""
    return {"HOTSPOT_CACHE": "off", "XDG_CACHE_HOME": str(folder)}


def written(folder: Path) -> list[str]:
    """Files that appeared in a fresh runs' cache folder (none, when off means off)."""
    return sorted(str(p) for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else []


def hotspot(*args: str) -> list[str]:
    return [PY, "-m", "hotspot", *args]


def sequence_commands(d: Path, html: Path) -> list[tuple[str, list[str]]]:
    """What a user runs on one capture, in order."""
    s = str(d)
    return [("analyze", hotspot("analyze", s, "--format", "json")),
            ("analyze --plan", hotspot("analyze", s, "--plan", "--format", "json")),
            ("report", hotspot("report", s, "-o", str(html), "--force")),
            ("diff", hotspot("diff", s, s, "--format", "json"))]


def repeat_commands(d: Path, html: Path) -> list[tuple[str, list[str]]]:
    """Commands repeated on an unchanged capture (report twice: to a file and to stdout)."""
    s = str(d)
    return sequence_commands(d, html) + [("plan", hotspot("plan", s, "--format", "json")),
                                         ("report -o -", hotspot("report", s, "-o", "-"))]


@dataclass(frozen=True)
class Chain:
    """Issue 18's numbers for one input."""

    label: str
    fresh: Spread                 # `analyze --format json` with the cache off
    baseline: Spread              # the predecessor-style code.json pass
    sequence: Spread              # analyze -> plan -> report -> diff from an empty cache, summed
    steps: dict[str, Spread]      # each step of those sequences
    repeats: dict[str, Spread]    # each command again on the unchanged capture, warm cache

    def ratio(self, a: Spread, b: Spread) -> float | None:
        if a.failed or b.failed or not b.median_wall_ns:
            return None
        return a.median_wall_ns / b.median_wall_ns


def measure_chain(label: str, d: Path, runs: int, say: Callable[[str], None], fresh_env: dict[str, str]
                  ) -> Chain:
    """Interleaved round by round (fresh, baseline, one sequence, the repeats), so machine noise
    hits them alike. `fresh_env`: the environment of the fresh runs (`cold_env`)."""
    settle(d)
    with tempfile.TemporaryDirectory(prefix="hotspot-bench-") as tmp:
        root = Path(tmp)
        html = root / "report.html"
        warm = {"XDG_CACHE_HOME": str(root / "warm"), "HOTSPOT_CACHE": "on"}
        for _, argv in repeat_commands(d, html):  # fill the warm cache (stored entries need one run)
            run_once(argv, sample_tree=False, env=warm)
        fresh: list[Run] = []
        base: list[Run] = []
        seq: list[Run] = []
        steps: dict[str, list[Run]] = {}
        repeats: dict[str, list[Run]] = {}
        for i in range(runs):
            fresh.append(run_once(hotspot("analyze", str(d), "--format", "json"), env=fresh_env))
            base.append(run_once([PY, PREDECESSOR, str(d)]))
            empty = {"XDG_CACHE_HOME": str(root / f"seq{i}"), "HOTSPOT_CACHE": "on"}
            done = []
            for name, argv in sequence_commands(d, html):
                r = run_once(argv, env=empty)
                steps.setdefault(name, []).append(r)
                done.append(r)
            seq.append(_total(done))
            for name, argv in repeat_commands(d, html):
                repeats.setdefault(name, []).append(run_once(argv, sample_tree=False, env=warm))
            say(f"{label}: round {i + 1}/{runs} fresh {fresh[-1].wall_ns / 1e9:.3f} s, baseline "
                f"{base[-1].wall_ns / 1e9:.3f} s, sequence {seq[-1].wall_ns / 1e9:.3f} s, repeat analyze "
                f"{repeats['analyze'][-1].wall_ns / 1e9:.3f} s")
    return Chain(label, summarize(fresh), summarize(base), summarize(seq),
                 {k: summarize(v) for k, v in steps.items()}, {k: summarize(v) for k, v in repeats.items()})


def settle(d: Path) -> None:
    """Wait until the capture's files are older than the cache's racy window (a file written
    moments ago is read but not cached: docs/cache.md), as a capture a user analyzes is."""
    newest = max((e.stat().st_mtime for e in os.scandir(d)), default=0.0)
    wait = newest + RACY_S - time.time()
    if wait > 0:
        time.sleep(wait)


def _total(runs: list[Run]) -> Run:
    """One sequence as one run: walls and CPU summed, memory the largest, the first failure."""
    bad = next((r for r in runs if r.exit_code), None)
    return Run(wall_ns=sum(r.wall_ns for r in runs), cpu_ns=sum(r.cpu_ns for r in runs),
               peak_rss_bytes=max(r.peak_rss_bytes for r in runs),
               tree_rss_bytes=max(r.tree_rss_bytes for r in runs),
               exit_code=bad.exit_code if bad else 0, stderr_tail=bad.stderr_tail if bad else "")


def measure_help(runs: int, fresh_env: dict[str, str]) -> dict[str, Spread]:
    """`hotspot --help` and `hotspot analyze --help`, cold (`fresh_env`: cache off, a first call) and
    repeated (warm cache: what a help replayed from the result cache would cost)."""
    out: dict[str, Spread] = {}
    with tempfile.TemporaryDirectory(prefix="hotspot-bench-") as tmp:
        warm = {"XDG_CACHE_HOME": tmp, "HOTSPOT_CACHE": "on"}
        for name, argv in (("--help", hotspot("--help")), ("analyze --help", hotspot("analyze", "--help"))):
            run_once(argv, sample_tree=False, env=warm)
            cold_runs, warm_runs = [], []
            for _ in range(runs):
                cold_runs.append(run_once(argv, sample_tree=False, env=fresh_env))
                warm_runs.append(run_once(argv, sample_tree=False, env=warm))
            out[f"{name} (cold)"] = summarize(cold_runs)
            out[name] = summarize(warm_runs)
    return out
