"""Use case: analyze one ATT dispatch dir (or choose among several) into one Result."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from hotspot.arch.arch import Arch
from hotspot.arch.detect import detect_arch
from hotspot.arch.waitcnt import DEFAULT_GFXIP, GFX9, WaitcntRules, rules_for_gfxip
from hotspot.att import aggregate as agg
from hotspot.att import findings as fnd
from hotspot.capture.codejson import EMPTY_TRACE_HINT, read_code_json
from hotspot.capture.files import load_json
from hotspot.capture.layout import DispatchDir, open_dispatch, require_dispatch_dirs
from hotspot.capture.model import CodeRow, CodeTable, KernelSymbol
from hotspot.capture.snapshots import SourceMap, build_source_map, read_source_lines
from hotspot.att.wave_results import analyze_waves
from hotspot.att.states import WaveStates
from hotspot.att.waits.reduce import Attribution
from hotspot.errors import EmptyTraceError, HotspotError, InputError, UsageError
from hotspot.gcpause import paused_cyclic_gc
from hotspot.result import Result

DEFAULT_TOPK = 15
DETAIL_INSTRUCTIONS = 5  # worst instructions shown per hot line with --detail
MB = 1024 * 1024
# Real wave files are KBs to a few MB and code.json ~1 MB per 5,000 rows; 1 GiB in one file means
# something is wrong (or needs an explicit --max-file-mb).
DEFAULT_MAX_FILE_MB = 1024.0


@dataclass(frozen=True)
class AnalyzeOptions:
    topk: int = DEFAULT_TOPK
    mode: str = "both"  # asm | src | both (which tables the text view shows)
    detail: bool = False
    context: int = 3
    kernel: str | None = None  # regex selecting a kernel when code.json holds several
    arch: str | None = None
    all_dispatches: bool = False
    # Refuse a code.json or wave file larger than this instead of exhausting memory (0 = no cap).
    max_file_mb: float = DEFAULT_MAX_FILE_MB
    jobs: int = 1  # worker processes for the wave pass (the CLI defaults to the CPU count)
    max_waves: int | None = None  # read at most this many wave files (sampled evenly over SE/SIMD)


@dataclass(frozen=True)
class DispatchInfo:
    path: str
    agent_handle: int | None
    dispatch_id: int | None
    kernel: str
    symbol: str
    waves: int
    code_rows: int
    executed_instructions: int
    source_mapped_pct: float
    kernels_in_code: int


@dataclass(frozen=True)
class ArchOut:
    gfx: str
    product: str | None
    source: str
    known: bool
    candidates: list[str]
    features: list[str]


@dataclass(frozen=True)
class DetailLine:
    file: str
    line: int | None
    source_available: bool
    snippet: list[dict[str, Any]]  # [{line, text, hot}]
    instructions: list[agg.InstructionStat]


@dataclass
class DispatchAnalysis:
    dispatch: DispatchInfo
    arch: ArchOut
    mode: str  # "cycles" or "pc-sampling"
    totals: agg.Totals
    stall_by_category: list[agg.CategoryStall]
    instructions: list[agg.InstructionStat]
    source_lines: list[agg.SourceLineStat]
    files: list[agg.FileStat]
    instruction_mix: list[agg.MixEntry]
    findings: list[fnd.Finding]
    wave_states: WaveStates | None = None
    occupancy: Any = None  # theoretical vs achieved (hotspot/att/occupancy.py)
    waits: list[Any] | None = None  # s_waitcnt -> producer blame (hotspot/att/waits.py)
    blamed_lines: list[Any] | None = None
    lgkm_breakdown: Any = None
    loops: list[Any] | None = None
    barriers: list[Any] | None = None
    attribution: Attribution | None = None  # how the wait blame was obtained (edges/reconstruction)
    plan: list[Any] | None = None  # prioritized optimization plan (hotspot/plan, --plan)
    samples: dict[str, Any] | None = None
    detail: list[DetailLine] | None = None
    selection: dict[str, Any] | None = None
    options: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------


def analyze_path(path: Path, opts: AnalyzeOptions = AnalyzeOptions()) -> Result:
    with paused_cyclic_gc():
        return _analyze_path(path, opts)


def _analyze_path(path: Path, opts: AnalyzeOptions) -> Result:
    if opts.mode not in ("asm", "src", "both"):
        raise UsageError(f"--mode {opts.mode}: expected asm, src or both")
    if opts.topk < 0:
        raise UsageError("--topk must be 0 (all) or a positive number")
    if opts.jobs < 1:
        raise UsageError("--jobs must be at least 1")
    if opts.max_waves is not None and opts.max_waves < 1:
        raise UsageError("--max-waves must be a positive number of wave files")
    dirs = require_dispatch_dirs(path)
    if len(dirs) == 1:
        warnings: list[str] = []
        data = analyze_dispatch_dir(dirs[0], opts, warnings)
        return Result("analyze", data, warnings)
    ranking, warnings = rank_dispatch_dirs(dirs, opts)
    usable = [r for r in ranking if r["status"] == "ok"]
    if opts.all_dispatches:
        analyses = []
        for r in usable:
            analyses.append(analyze_dispatch_dir(Path(r["path"]), opts, warnings))
        if not analyses:
            _raise_all_empty(path, ranking)
        return Result("analyze", {"dispatches": analyses, "ranking": ranking}, warnings)
    if not usable:
        _raise_all_empty(path, ranking)
    best = usable[0]
    data = analyze_dispatch_dir(Path(best["path"]), opts, warnings)
    data.selection = {
        "chosen": best["path"],
        "reason": f"most waves ({best['waves']}), then most executed instructions "
                  f"({best['executed_instructions']}), then source-mapped share "
                  f"({best['source_mapped_pct']:.0f}%) among {len(dirs)} dispatch dirs; "
                  "use --all to analyze each",
        "candidates": ranking,
    }
    return Result("analyze", data, warnings)


def analyze_dispatch(path: Path, opts: AnalyzeOptions = AnalyzeOptions()) -> Result:
    """Entry point for other layers (collect): same as analyze_path."""
    return analyze_path(path, opts)


def _raise_all_empty(path: Path, ranking: list[dict[str, Any]]) -> None:
    states = ", ".join(f"{Path(r['path']).name}: {r['status']}" for r in ranking)
    raise EmptyTraceError(f"{path}: every dispatch dir is empty or unreadable ({states})",
                          EMPTY_TRACE_HINT)


def rank_dispatch_dirs(dirs: list[Path], opts: AnalyzeOptions) -> tuple[list[dict[str, Any]], list[str]]:
    ranking: list[dict[str, Any]] = []
    warnings: list[str] = []
    for d in dirs:
        entry: dict[str, Any] = {"path": str(d), "status": "ok", "kernel": "", "waves": 0,
                                 "executed_instructions": 0, "source_mapped_pct": 0.0}
        try:
            disp = open_dispatch(d)
            table = read_code_json(d / "code.json", _max_bytes(opts))
            kernel, rows = _select_kernel(table, opts.kernel, [])
            executed = [r for r in rows if r.hit > 0]
            entry["kernel"] = _kernel_name(kernel, d)
            entry["waves"] = len(disp.wave_files)
            entry["executed_instructions"] = len(executed)
            entry["source_mapped_pct"] = _pct(sum(1 for r in executed if r.source), len(executed))
            if not disp.wave_files and not disp.pc_sampling:
                entry["status"] = "empty (no wave files)"
            elif not executed and not disp.pc_sampling:
                entry["status"] = "empty (no executed instruction)"
        except EmptyTraceError:
            entry["status"] = "empty (code null)"
        except HotspotError as err:
            entry["status"] = f"unreadable: {err.message}"
            warnings.append(f"skipped {d}: {err.message}")
        ranking.append(entry)
    ranking.sort(key=lambda e: (e["status"] != "ok", -e["waves"], -e["executed_instructions"],
                                -e["source_mapped_pct"], e["path"]))
    return ranking, warnings


def _max_bytes(opts: AnalyzeOptions) -> int | None:
    return int(opts.max_file_mb * MB) if opts.max_file_mb else None


def _pct(part: int, whole: int) -> float:
    return 100.0 * part / whole if whole else 0.0


def _kernel_name(kernel: KernelSymbol | None, d: Path) -> str:
    if kernel is None:
        return _occupancy_kernel_name(d) or d.name
    return kernel.demangled or kernel.symbol


def _occupancy_kernel_name(d: Path) -> str | None:
    try:
        doc = load_json(d / "occupancy.json")
    except HotspotError:
        return None
    names = doc.get("dispatches") if isinstance(doc, dict) else None
    if isinstance(names, dict):
        real = [v for k, v in sorted(names.items()) if isinstance(v, str) and " / 0x" not in v]
        if real:
            return real[0]
    return None


def _select_kernel(table: CodeTable, regex: str | None, warnings: list[str]
                   ) -> tuple[KernelSymbol | None, tuple[CodeRow, ...]]:
    kernels = list(table.kernels)
    if not kernels:
        return None, table.rows
    if regex:
        try:
            pat = re.compile(regex)
        except re.error as exc:
            raise UsageError(f"--kernel {regex!r} is not a valid regular expression: {exc}")
        matched = [k for k in kernels if pat.search(k.symbol) or (k.demangled and pat.search(k.demangled))]
        if not matched:
            names = "; ".join(k.demangled or k.symbol for k in kernels)[:400]
            raise InputError(f"{table.path}: no kernel matches --kernel {regex!r}",
                             f"kernels in this code.json: {names}")
        kernels = matched
    if len(kernels) == 1:
        return kernels[0], table.kernel_rows(kernels[0])
    # Several kernels: the one whose instructions executed most.
    scored = sorted(kernels, key=lambda k: (-sum(r.hit for r in table.kernel_rows(k)), k.row_index))
    chosen = scored[0]
    warnings.append(f"{table.path}: {len(kernels)} kernels in code.json; analyzing "
                    f"{chosen.demangled or chosen.symbol} (most executed); select another with "
                    "--kernel REGEX")
    return chosen, table.kernel_rows(chosen)


def _arch_out(info: Arch) -> ArchOut:
    return ArchOut(info.label, info.product, info.source, info.known, list(info.candidates),
                   list(info.features))


def _limit(items: list, topk: int) -> list:
    return items if topk == 0 else items[:topk]


def analyze_dispatch_dir(d: Path, opts: AnalyzeOptions, warnings: list[str]) -> DispatchAnalysis:
    disp = open_dispatch(d)
    warnings.extend(disp.warnings)
    table = read_code_json(d / "code.json", _max_bytes(opts))
    if not disp.pc_sampling and not disp.wave_files:
        raise EmptyTraceError(f"{d}: empty trace: no wave files, so no wave reached the traced CU",
                              EMPTY_TRACE_HINT)
    kernel, rows = _select_kernel(table, opts.kernel, warnings)
    executed = [r for r in rows if r.hit > 0]
    if disp.pc_sampling:
        return _analyze_pc_sampling(d, disp, table, kernel, rows, opts, warnings)
    if not executed:
        raise EmptyTraceError(f"{d}: empty trace: {len(disp.wave_files)} wave file(s) but no "
                              "executed instruction in code.json", EMPTY_TRACE_HINT)
    mapped = sum(1 for r in executed if r.source)
    totals = agg.totals_of(rows)
    arch = detect_arch(d, (r.isa for r in executed), opts.arch)
    warnings.extend(arch.warnings)
    lines = agg.source_line_stats(rows, totals.stall)
    instructions = agg.instruction_stats(rows, totals.stall)

    from hotspot.att.occupancy import dispatch_occupancy

    # Occupancy reads occupancy.json (~300k events on a 1 GB capture): done while the pool's
    # workers read the wave files; its warnings still follow the wave pass's.
    occupancy_warnings: list[str] = []
    occupancy_out: list[Any] = []

    def occupancy_meanwhile() -> None:
        occupancy_out.append(dispatch_occupancy(d, disp, kernel, rows, arch, occupancy_warnings))

    rules = _waitcnt_rules(disp, arch, warnings)
    wr = analyze_waves(disp.wave_files, table.rows, rows, opts.max_waves, _max_bytes(opts), warnings,
                       opts.jobs, occupancy_meanwhile, rules=rules)
    warnings.extend(occupancy_warnings)
    occupancy, gap = occupancy_out[0]
    findings = [f for f in (
        fnd.source_collapse(lines),
        fnd.no_source(len(executed), mapped),
        fnd.idle_slice(len(rows), len(executed)),
        None if wr.sampled else fnd.wave_mismatch(
            totals, wr.totals,
            {r.line_number: (r.hit, r.latency, r.stall) for r in rows if r.hit or r.latency}),
    ) if f is not None] + wr.findings

    if gap is not None:
        findings.append(gap)
    # Snapshots only feed the --detail snippets; do not read them otherwise.
    detail = _detail(lines, rows, totals.stall, _source_map(d, warnings), opts) if opts.detail else None
    info = DispatchInfo(str(d), disp.agent_handle, disp.dispatch_id, _kernel_name(kernel, d),
                        kernel.symbol if kernel else "", len(disp.wave_files), len(rows),
                        len(executed), _pct(mapped, len(executed)), len(table.kernels))
    return DispatchAnalysis(
        dispatch=info, arch=_arch_out(arch), mode="cycles", totals=totals,
        stall_by_category=agg.stall_by_category(rows, totals.stall),
        instructions=_limit(instructions, opts.topk), source_lines=_limit(lines, opts.topk),
        files=agg.file_stats(lines, totals.stall), instruction_mix=agg.instruction_mix(rows),
        findings=findings,
        wave_states=_limit_states(wr.wave_states, opts.topk),
        waits=_limit(wr.waits, opts.topk), blamed_lines=_limit(wr.blamed_lines, opts.topk),
        lgkm_breakdown=wr.lgkm_breakdown, loops=_limit(wr.loops, opts.topk),
        barriers=_limit(wr.barriers, opts.topk), attribution=wr.attribution,
        detail=detail,
        occupancy=occupancy,
        options={"topk": opts.topk, "mode": opts.mode, "detail": opts.detail,
                 "context": opts.context, "kernel": opts.kernel, "max_waves": opts.max_waves},
    )


def _waitcnt_rules(disp: DispatchDir, arch: Arch, warnings: list[str]) -> WaitcntRules:
    """The s_waitcnt rules of the capture's GPU generation: filenames.json `gfxip`, else the arch."""
    gfxip = disp.filenames_doc.get("gfxip")
    if not isinstance(gfxip, int) or isinstance(gfxip, bool):
        gfxip = arch.target.gfxip if arch.target else DEFAULT_GFXIP
    rules = rules_for_gfxip(gfxip)
    if rules is None:
        warnings.append(f"no s_waitcnt counter rules for gfx IP {gfxip}: waits are attributed with "
                        "the gfx9 rules, which may not match this GPU")
        return GFX9
    return rules


def _limit_states(ws: WaveStates, topk: int) -> WaveStates:
    return replace(ws, lines=_limit(ws.lines, topk), instructions=_limit(ws.instructions, topk))


def _source_map(d: Path, warnings: list[str]) -> SourceMap:
    snap = d / "snapshots.json"
    if not snap.is_file():
        return SourceMap()
    try:
        tree = load_json(snap)
    except HotspotError as err:
        warnings.append(f"{err.message}; source snippets not available")
        return SourceMap()
    smap = build_source_map(d, tree, snap)
    warnings.extend(smap.warnings)
    return smap


def _detail(lines: list[agg.SourceLineStat], rows: tuple[CodeRow, ...], total_stall: int,
            smap: SourceMap, opts: AnalyzeOptions) -> list[DetailLine]:
    by_line = {r.line_number: r for r in rows}
    out = []
    for s in _limit(lines, opts.topk):
        members = [by_line[n] for n in s.instructions if n in by_line]
        worst = agg.instruction_stats(members, total_stall)[:DETAIL_INSTRUCTIONS]
        snippet: list[dict[str, Any]] = []
        local = smap.lookup(s.file)
        text = read_source_lines(local) if local else None
        if text is not None and s.line is not None:
            lo = max(1, s.line - opts.context)
            hi = min(len(text), s.line + opts.context)
            snippet = [{"line": n, "text": text[n - 1], "hot": n == s.line} for n in range(lo, hi + 1)]
        out.append(DetailLine(s.file, s.line, bool(snippet), snippet, worst))
    return out


def _analyze_pc_sampling(d: Path, disp: DispatchDir, table: CodeTable, kernel: KernelSymbol | None,
                         rows: tuple[CodeRow, ...], opts: AnalyzeOptions,
                         warnings: list[str]) -> DispatchAnalysis:
    from hotspot.att.pcsampling_analysis import analyze_samples

    return analyze_samples(d, disp, table, kernel, rows, opts, warnings)
