#!/usr/bin/env python3
"""Benchmark `hotspot analyze` (whole process) against the speed and memory targets of issue 9.

Example: python scripts/bench.py ../shared/corpus/att/gfx950/vec_add --sizes 1,10,100 --runs 3
See docs/benchmark.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

from benchkit.inputs import (TARGET_WAVE_BYTES, bench_program, cached_dispatch, dir_stats, spec_for_mb,
                                  spec_for_waves, stale_partials)
from benchkit import targets18
from benchkit.measure import Run, Spread, run_once, summarize
from benchkit.report import Report, to_json, to_text
from benchkit.sequence import cold_env, measure_chain, measure_help, written
from benchkit.targets import WAVE_CASE_WAVES, Case, evaluate
from hotspot.errors import HotspotError
from hotspot.synth import DispatchSpec

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_CACHE = Path.home() / ".cache" / "hotspot-bench"
MIN_HELP_RUNS = 5   # `--help` is cheap: always take at least this many samples for its median
PY = sys.executable


def parse(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="*", type=Path, metavar="DIR", help="dispatch dirs to time as they are")
    ap.add_argument("--sizes", default="1,10,100,1000",
                    help="MB of wave JSON of the generated dirs, comma-separated ('' = none) [1,10,100,1000]")
    ap.add_argument("--wave-case", type=int, default=WAVE_CASE_WAVES,
                    help=f"waves of the one-core target case (~35 MB at {WAVE_CASE_WAVES:,}); 0 = skip")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per command and input [3]")
    ap.add_argument("--vs", metavar="'CMD {dir}'", help="also time this command on every input (no shell; "
                    "{dir} is replaced by the dispatch dir) and print hotspot/other ratios")
    ap.add_argument("--jobs", type=int, help="pass --jobs N to hotspot analyze (when it has the option)")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help=f"generated dirs live here [{DEFAULT_CACHE}]")
    ap.add_argument("--json", action="store_true", help="print one JSON document instead of the tables")
    ap.add_argument("--no-sequence", action="store_true",
                    help="skip issue 18's measurements (code.json-only baseline, analyze -> plan -> report -> diff, "
                         "repeats with the result cache) on the given dirs and the wave case")
    ap.add_argument("--hostile-rss", type=float, metavar="MB",
                    help="only measure peak RSS of analyze, analyze --plan, report and export on one MB-sized "
                         "code.json and one MB-sized wave file, and on files just under the default "
                         "--max-file-mb caps (issue 19)")
    ap.add_argument("--mcp", action="store_true",
                    help="only measure what an assistant waits for and reads (issue 27): plan --brief as a "
                         "command line and as an MCP tool call, first and repeat, and the brief answer's bytes, "
                         "on DIRs (default: every ui_output_agent_*_dispatch_* dir of ../shared/corpus)")
    ap.add_argument("--scan-rate", action="store_true",
                    help="only measure the wave pass per core on DIRs (issue 27): reading the files, the native "
                         "scan, read + scan + fold in C (Fold.files, Fold.wave) and the whole pass, in MB per CPU second")
    ap.add_argument("--programs", nargs="?", const="all", metavar="PARTS",
                    help="only measure hotspot where programs run it (issue 37), against its targets: fresh "
                         "analyze MB per CPU second on the 200 MB synthetic, native scan MB/s per core, the MCP "
                         "server's start over the SDK's minimal server, first and repeat call of every tool, "
                         "a fresh analysis in the server against the predecessor; PARTS: all (default) or some "
                         "of analyze,scan,start,tools,fresh")
    return ap.parse_args(argv)


class _Usage(Exception):
    pass


def _check(a: argparse.Namespace) -> tuple[list[float], list[str] | None]:
    try:
        sizes = sorted({float(s) for s in a.sizes.split(",") if s.strip()})
    except ValueError:
        raise _Usage(f"--sizes must be comma-separated numbers, got {a.sizes!r}") from None
    if any(s <= 0 for s in sizes):
        raise _Usage("--sizes must be positive")
    if a.runs < 1 or a.wave_case < 0 or (a.jobs is not None and a.jobs < 1):
        raise _Usage("--runs and --jobs must be >= 1, --wave-case >= 0")
    for d in a.dirs:
        if not d.is_dir():
            raise _Usage(f"{d}: not a directory")
    vs = None
    if a.vs is not None:
        vs = shlex.split(a.vs)
        if not vs or not any("{dir}" in tok for tok in vs):
            raise _Usage("--vs needs a command containing {dir}, e.g. --vs 'python tool.py {dir}'")
    if not sizes and not a.dirs and not a.wave_case:
        raise _Usage("nothing to time: give a DIR, --sizes or --wave-case")
    return sizes, vs


def _progress(msg: str) -> None:
    print(f"bench: {msg}", file=sys.stderr, flush=True)


def _jobs_supported(cold: dict[str, str]) -> bool:
    out = subprocess.run([PY, "-m", "hotspot", "analyze", "--help"], capture_output=True, text=True,
                         env={**os.environ, **cold})
    return "--jobs" in out.stdout


def _commit() -> str | None:
    try:   # read-only
        out = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                             text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _load() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def _measure(label: str, hotspot_argv: list[str], baseline_argv: list[str] | None, other_argv: list[str] | None,
             runs: int, cold: dict[str, str]) -> tuple[Spread, Spread | None, Spread | None]:
    """Interleave the commands run by run so machine noise hits them alike. hotspot runs with its
    result cache off (`cold`): these are fresh analyses (the cached ones are measured by
    benchkit/sequence.py)."""
    h: list[Run] = []
    b: list[Run] = []
    o: list[Run] = []
    for i in range(runs):
        h.append(run_once(hotspot_argv, env=cold))
        if baseline_argv:
            b.append(run_once(baseline_argv))
        if other_argv:
            o.append(run_once(other_argv))
        _progress(f"{label}: run {i + 1}/{runs} hotspot {h[-1].wall_ns / 1e9:.3f} s"
                  + (f" (exit {h[-1].exit_code})" if h[-1].exit_code else "")
                  + (f", other {o[-1].wall_ns / 1e9:.3f} s" if o else ""))
    return summarize(h), summarize(b) if b else None, summarize(o) if o else None


def _compile_bytecode() -> None:
    """Write hotspot's bytecode cache once, as any normal run does: with PYTHONDONTWRITEBYTECODE
    set (some containers do) an editable install would otherwise recompile every module in every
    timed run (~0.1 s), which is not what a user's second call costs."""
    import compileall

    import hotspot

    compileall.compile_dir(Path(hotspot.__file__).parent, quiet=2)


def _hostile(a: argparse.Namespace) -> int:
    from dataclasses import asdict

    from benchkit.hostile import measure, to_text

    if not a.hostile_rss > 0:
        print("bench: --hostile-rss must be a positive number of MB", file=sys.stderr)
        return 2
    _compile_bytecode()
    from hotspot.att.model import DEFAULT_MAX_FILE_MB
    from hotspot.export.report_data import REPORT_MAX_FILE_MB

    # the asked size (refused by the default caps when above them), then files just under each
    # default cap: the largest inputs accepted, whose peak RSS must stay within the budget
    sizes = [a.hostile_rss] + [mb * 0.9 for mb in sorted({DEFAULT_MAX_FILE_MB, REPORT_MAX_FILE_MB})
                               if mb and mb < a.hostile_rss]
    # each run is a first run: the result cache on (as users have it) in a folder that starts
    # empty, so the analysis runs and its entry is written (never a replay)
    rows = measure(a.cache / "hostile", sizes)
    if a.json:
        sys.stdout.buffer.write(orjson.dumps([asdict(r) for r in rows], option=orjson.OPT_INDENT_2) + b"\n")
    else:
        sys.stdout.write(to_text(rows))
    return 0


def _corpus_dirs() -> list[Path]:
    corpus = ROOT.parent / "shared" / "corpus"
    return sorted(p for p in corpus.rglob("ui_output_agent_*_dispatch_*") if p.is_dir()) if corpus.is_dir() else []


def _mcp(a: argparse.Namespace) -> int:
    from dataclasses import asdict

    from benchkit.mcpbench import measure, to_text

    dirs = list(a.dirs) or _corpus_dirs()
    if not dirs:
        print("bench: --mcp needs DIRs (no corpus at ../shared/corpus)", file=sys.stderr)
        return 2
    _compile_bytecode()
    b = measure(dirs, a.runs)
    if a.json:
        sys.stdout.buffer.write(orjson.dumps(asdict(b), option=orjson.OPT_INDENT_2) + b"\n")
    else:
        sys.stdout.write(to_text(b))
    return 0 if b.skipped or all(r.same_bytes for r in b.rows) else 1


def _scan_rate(a: argparse.Namespace) -> int:
    from benchkit import scanrate

    dirs = list(a.dirs) or _corpus_dirs()
    if not dirs:
        print("bench: --scan-rate needs DIRs", file=sys.stderr)
        return 2
    return scanrate.main([*map(str, dirs), "--runs", str(a.runs), *(["--json"] if a.json else [])])


def _fmt_load(load: float | None) -> str:
    return "n/a" if load is None else f"{load:.1f}"


def _programs(a: argparse.Namespace) -> int:
    from dataclasses import asdict

    from benchkit import programs

    try:
        parts = programs.parts_of(a.programs)
    except ValueError as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    if a.runs < 1:
        print("bench: --runs must be >= 1", file=sys.stderr)
        return 2
    _compile_bytecode()
    load_start = _load()
    with tempfile.TemporaryDirectory(prefix="hotspot-bench-") as tmp:
        p = programs.measure(parts, a.cache, ROOT.parent / "shared" / "corpus", a.runs,
                             cold_env(Path(tmp) / "cold"), _progress)
    machine = {"cpus": os.cpu_count(), "load_start": load_start, "load_end": _load(), "commit": _commit()}
    if a.json:
        doc = {"machine": machine, "programs": asdict(p),
               "targets": [asdict(v) for v in programs.verdicts(p)]}
        sys.stdout.buffer.write(orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n")
    else:
        sys.stdout.write(f"machine: {machine['cpus']} CPUs, load {_fmt_load(machine['load_start'])} -> {_fmt_load(machine['load_end'])}, "
                         f"commit {machine['commit']}\n" + programs.to_text(p))
    return 1 if p.analyze_failed else 0


def main(argv: list[str] | None = None) -> int:
    a = parse(argv)
    if a.programs is not None:
        return _programs(a)
    if a.hostile_rss is not None:
        return _hostile(a)
    if a.mcp:
        return _mcp(a)
    if a.scan_rate:
        return _scan_rate(a)
    try:
        sizes, vs = _check(a)
    except _Usage as e:
        print(f"bench: {e}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="hotspot-bench-") as tmp:
        cold_folder = Path(tmp) / "cold"
        code = _bench(a, sizes, vs, cold_env(cold_folder))
        leaked = written(cold_folder)
    if leaked:  # a fresh run that wrote a cache entry was not a fresh run
        _progress(f"error: runs with HOTSPOT_CACHE=off wrote to their cache folder: {', '.join(leaked[:5])}")
        return 1
    return code


def _bench(a: argparse.Namespace, sizes: list[float], vs: list[str] | None, cold: dict[str, str]) -> int:
    _compile_bytecode()
    supported = _jobs_supported(cold)
    if a.jobs is None:
        jobs_note = ("--jobs not given: hotspot analyze uses its default" if supported
                     else "hotspot analyze has no --jobs option")
    elif supported:
        jobs_note = f"--jobs {a.jobs} passed to hotspot analyze"
    else:
        jobs_note = f"hotspot analyze has no --jobs option: ran without it (asked for --jobs {a.jobs})"
        _progress(jobs_note)
    if supported:
        jobs_note += f"; the {a.wave_case:,}-wave case runs with --jobs 1 (one-core target)" if a.wave_case else ""

    # generated inputs first, so generation never overlaps a timed run
    mix, per_wave = bench_program()
    wanted: list[tuple[str, str, float | None, DispatchSpec]] = []
    if a.wave_case:
        wanted.append((f"{a.wave_case:,} waves", "waves", None, spec_for_waves(a.wave_case, mix)))
    for mb in sizes:
        wanted.append((f"{mb:g} MB", "size", mb, spec_for_mb(mb, mix, per_wave)))
    for p in stale_partials(a.cache):
        _progress(f"note: {p} is left over from an interrupted generation (not used; remove it if you like)")
    generated: list[tuple[str, str, float | None, Path]] = []
    try:
        for label, kind, mb, spec in wanted:
            d, fresh = cached_dispatch(a.cache, spec)
            _progress(f"{label}: {'generated' if fresh else 'cached'} {d}")
            generated.append((label, kind, mb, d))
    except HotspotError as e:
        print(f"bench: {e.message}" + (f" (next: {e.hint})" if e.hint else ""), file=sys.stderr)
        return 2

    load_start = _load()
    help_runs = measure_help(max(MIN_HELP_RUNS, a.runs), cold)
    help_spread = help_runs["--help (cold)"]  # issue 9's target: no cache
    _progress("; ".join(f"hotspot {k}: {v.median_wall_ns / 1e9:.3f} s" for k, v in help_runs.items()))

    names = [d.resolve().name for d in a.dirs]
    inputs: list[tuple[str, str, float | None, Path]] = [
        (n if names.count(n) == 1 else str(d), "dir", None, d) for n, d in zip(names, a.dirs)]
    inputs += generated
    cases: list[Case] = []
    for label, kind, mb, d in inputs:
        st = dir_stats(d)
        jobs = (1 if kind == "waves" else a.jobs) if supported else None
        argv = [PY, "-m", "hotspot", "analyze", str(d), "--format", "json"] + (["--jobs", str(jobs)] if jobs else [])
        base = ([PY, "-c", "import json, sys; json.load(open(sys.argv[1]))", str(st.code_json)]
                if kind == "dir" and st.code_json else None)
        other = [tok.replace("{dir}", str(d)) for tok in vs] if vs else None
        h, b, o = _measure(label, argv, base, other, a.runs, cold)
        cases.append(Case(label=label, kind=kind, path=d, size_mb=mb, waves=st.waves, files=st.files,
                          wave_bytes=st.wave_bytes, jobs=jobs, hotspot=h, baseline=b, other=o))

    chains = []
    if not a.no_sequence:
        for c in cases:
            if c.kind in ("dir", "waves") and c.ok:
                chains.append((c, measure_chain(c.label, c.path, a.runs, _progress, cold)))
    sized_cases = [c for c in cases if c.kind == "size"]
    targets = evaluate(cases, help_spread) + targets18.evaluate(chains, sized_cases, help_runs)

    machine = {"cpus": os.cpu_count(), "load_start": load_start, "load_end": _load(),
               "python": platform.python_version(), "platform": platform.platform(), "commit": _commit()}
    settings = {"runs": a.runs, "jobs": a.jobs, "jobs_supported": supported, "jobs_note": jobs_note,
                "cache": str(a.cache), "vs": a.vs, "target_wave_bytes": TARGET_WAVE_BYTES,
                "wave_bytes_estimate": per_wave, "loop_trips": mix.loop_trips,
                "program": f"default mix, {mix.loop_trips} loop trips, ~{per_wave:,} bytes per wave file"}
    rep = Report(machine, settings, help_spread, cases, targets, [ch for _, ch in chains], help_runs)
    if a.json:
        sys.stdout.buffer.write(orjson.dumps(to_json(rep), option=orjson.OPT_INDENT_2) + b"\n")
    else:
        sys.stdout.write(to_text(rep))
    failed = help_spread.failed or any(s is not None and s.failed for c in cases for s in (c.hotspot, c.baseline, c.other))
    failed = failed or any(s.failed for _, ch in chains for s in (ch.fresh, ch.baseline, ch.sequence))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
