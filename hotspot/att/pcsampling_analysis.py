"""PC-sampling dispatches: the same tables, counted in samples instead of cycles.

Each sample is either issued or not issued (stalled). Rows are re-expressed so the shared
aggregation applies: hit = latency = samples at that PC, stall = stalled samples, issue = issued.
`data.mode` is "pc-sampling" and `data.samples` holds the totals and stall reasons.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from hotspot.att import code_totals as agg
from hotspot.att import findings as fnd
from hotspot.att.model import (AnalysisMode, AnalyzeOptions, DispatchAnalysis, DispatchInfo, OptionsEcho,
                                SampleColumns, SampleCounts, arch_out)
from hotspot.capture import (
    ISSUED_COLUMNS,
    NOT_ISSUED_REASONS,
    REASON_COLUMNS,
    STALLED_COLUMNS,
    CodeRow,
    CodeTable,
    DispatchDir,
    KernelSymbol,
    detect_arch,
    first_present,
    kernel_name,
    pct,
)
from hotspot.errors import EmptyTraceError, bad_file


def _int(table: CodeTable, row: CodeRow, col: str) -> int:
    value = row.extra.get(col)
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_file(table.path, f"row {row.line_number} field '{col}' is not an integer: {value!r}")
    return value


def analyze_samples(d: Path, disp: DispatchDir, table: CodeTable, kernel: KernelSymbol | None,
                    rows: tuple[CodeRow, ...], opts: AnalyzeOptions, warnings: list[str]
                    ) -> DispatchAnalysis:

    issued_col = first_present(table.extra_columns, ISSUED_COLUMNS)
    stalled_col = first_present(table.extra_columns, STALLED_COLUMNS)
    reasons_col = first_present(table.extra_columns, REASON_COLUMNS)
    if issued_col is None or stalled_col is None:
        raise bad_file(table.path, "PC-sampling dir (filenames.json pc_sampling) but code.json has "
                       f"no sample columns ({'/'.join(ISSUED_COLUMNS)}, {'/'.join(STALLED_COLUMNS)})")
    reasons = [0] * len(NOT_ISSUED_REASONS)
    sampled_rows: list[CodeRow] = []
    issued_total = stalled_total = 0
    for r in rows:
        issued, stalled = _int(table, r, issued_col), _int(table, r, stalled_col)
        issued_total += issued
        stalled_total += stalled
        if reasons_col is not None:
            rl = r.extra.get(reasons_col)
            if isinstance(rl, list):
                for i, v in enumerate(rl[:len(reasons)]):
                    if isinstance(v, int):
                        reasons[i] += v
        samples = issued + stalled
        sampled_rows.append(replace(r, hit=samples, latency=samples, stall=stalled, idle=0))
    if issued_total + stalled_total == 0:
        raise EmptyTraceError(f"{d}: PC-sampling dir with no samples",
                              "sample longer or at a higher rate, and check the kernel filter")
    executed = [r for r in sampled_rows if r.hit > 0]
    mapped = sum(1 for r in executed if r.source)
    totals = agg.totals_of(sampled_rows)
    arch = detect_arch(d, (r.isa for r in executed), opts.arch, opts.meta_paths)
    warnings.extend(arch.warnings)
    warnings.append("PC-sampling capture: counts are samples (issued vs stalled), not cycles")
    lines = agg.source_line_stats(sampled_rows, totals.stall)
    findings = [f for f in (fnd.source_collapse(lines), fnd.no_source(len(executed), mapped))
                if f is not None]
    info = DispatchInfo(str(d), disp.agent_handle, disp.dispatch_id, kernel_name(kernel, d),
                        kernel.symbol if kernel else "", 0, len(rows), len(executed),
                        pct(mapped, len(executed)), len(table.kernels))
    return DispatchAnalysis(
        dispatch=info, arch=arch_out(arch), mode=AnalysisMode.PC_SAMPLING, totals=totals,
        stall_by_category=agg.stall_by_category(sampled_rows, totals.stall),
        instructions=agg.instruction_stats(sampled_rows, totals.stall),
        source_lines=lines, files=agg.file_stats(lines, totals.stall),
        instruction_mix=agg.instruction_mix(rows), findings=findings,
        samples=SampleCounts(issued_total + stalled_total, issued_total, stalled_total,
                             dict(zip(NOT_ISSUED_REASONS, reasons)) if reasons_col else {},
                             SampleColumns(issued_col, stalled_col, reasons_col)),
        options=OptionsEcho(opts.topk, opts.mode),
    )
