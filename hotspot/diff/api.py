"""Use case: compare two analyses (BEFORE vs AFTER) of the same kernel, with a noise floor.

Each side is a dispatch dir (or a folder holding several) or a saved `hotspot analyze --format json`
output. Rows: totals, stall per category, stall per source line, blamed stall per load (from the
wait attribution). Source lines are matched by file:line; lines present on one side only are then
matched by the ISA mnemonic sequence of their instructions (same kernel), which survives edits that
move code up or down a file.

Significance. When a side holds two dispatches of the same kernel (rocprofv3 traced two iterations),
the difference between them is the run-to-run noise: a row must move by more than that row's noise,
and by more than the run's relative noise on total stall. Otherwise the default relative threshold
applies. A change smaller than MIN_SHARE_OF_TOTAL of the total stall is never significant.
"""

from __future__ import annotations

from dataclasses import field, replace
from pathlib import Path

from hotspot.errors import InputError, UsageError
from hotspot.result import JsonObject
from hotspot.record import record
from hotspot.userregex import user_regex

# ATT cycle counts of two runs of one kernel typically differ by a few percent (waves land on
# other CUs, memory timing varies); 5% keeps those out of "significant" without a replicate.
DEFAULT_RELATIVE_THRESHOLD = 0.05
# A change under 0.5% of the total stall is noise-sized whatever the row's relative change.
MIN_SHARE_OF_TOTAL = 0.005

KINDS = ("total", "category", "line", "load")
TOTAL_FIELDS = ("stall", "latency", "issue", "idle")


@record
class DiffRow:
    key: str
    kind: str  # total | category | line | load
    label: str  # human label ("k.py:40", "k.py:40 -> k.py:42" when matched by mnemonics)
    before: float  # cycles
    after: float  # cycles
    delta: float  # after - before, cycles
    delta_pct: float | None  # 100 * delta / before; null when before is 0
    significant: bool
    threshold: float  # |delta| must exceed this many cycles
    matched_by: str  # "key", "mnemonics", "before-only", "after-only"


@record
class SideInfo:
    path: str
    input: str  # "dispatch-dir" or "analyze-json"
    kernel: str
    dispatches: list[str]  # the analyses averaged on this side (2 = a replicate pair)
    waves: int
    total_stall: float


@record
class NoiseInfo:
    method: str  # "replicate-dispatches" or "default-threshold"
    relative_threshold: float  # run noise (replicates) or the default / --threshold
    min_share_of_total: float
    note: str


@record
class DiffSummary:
    rows: int
    significant: int
    improved: int  # significant rows whose cycles went down
    regressed: int
    total_stall_before: float
    total_stall_after: float
    total_stall_delta: float
    total_stall_delta_pct: float | None
    total_stall_significant: bool
    verdict: str


@record(frozen=False)
class DiffResult:
    before: SideInfo
    after: SideInfo
    noise: NoiseInfo
    summary: DiffSummary
    rows: list[DiffRow] = field(default_factory=list)
    # "per-wave" when the sides traced different numbers of waves: every row's before/after is then
    # cycles per traced wave (a capture of 12 waves holds ~3x the cycles of one of 4); else "none"
    normalization: str = "none"
    unit: str = "cycles"
    comparable: bool = True  # False for two different kernels: nothing is called significant


@record(frozen=False)
class _Side:
    info: SideInfo
    analyses: list[JsonObject]  # 1 or 2 (replicates) analyze `data` dicts


# ---------------------------------------------------------------------------------------------
# loading


def load_side(path: Path, kernel: str | None, max_waves: int | None, warnings: list[str]) -> _Side:
    if path.is_file():
        return _side_from_json(path, kernel, warnings)
    if path.is_dir():
        return _side_from_dirs(path, kernel, max_waves, warnings)
    raise InputError(f"{path}: no such file or directory",
                     "pass a ui_output dispatch dir or a saved `hotspot analyze --format json` file")


def _side_from_json(path: Path, kernel: str | None, warnings: list[str]) -> _Side:
    from hotspot.capture.files import load_json

    from hotspot.result import check_saved_analysis, check_saved_envelope

    doc = load_json(path)  # a malformed or unreadable file is an InputError naming it
    if isinstance(doc, dict):
        check_saved_envelope(path, doc)
    if not isinstance(doc, dict) or doc.get("command") != "analyze" or not doc.get("ok"):
        raise InputError(f"{path}: not a successful `hotspot analyze --format json` output "
                         "(field 'command' must be 'analyze' and 'ok' true)",
                         "save it with `hotspot analyze DIR --format json --topk 0 > FILE`")
    data = doc.get("data")
    analyses = data.get("dispatches") if isinstance(data, dict) and "dispatches" in data else [data]
    if not isinstance(analyses, list) or not all(_is_analysis(a) for a in analyses):
        raise InputError(f"{path}: field 'data' holds no dispatch analysis "
                         "(expected 'dispatch', 'totals', 'stall_by_category')")
    for i, a in enumerate(analyses):
        check_saved_analysis(path, "data" if analyses == [data] else f"data.dispatches[{i}]", a)
    analyses = [a for a in analyses if a.get("mode") == "cycles"] or analyses
    try:
        chosen = _pick(analyses, kernel, path)
        for a in chosen:  # every value diff reads, read once here so a bad one is named now
            metrics(a)
        info = _info(path, "analyze-json", chosen)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"{path}: field 'data' does not have the shape hotspot analyze writes "
                         f"({type(exc).__name__}: {exc})",
                         "pass an unedited hotspot analyze --format json output") from None
    if any((a.get("options") or {}).get("topk") not in (0, None) for a in chosen):
        warnings.append(f"{path}: saved with --topk {chosen[0]['options']['topk']}: lines and loads "
                        "beyond the top rows are missing; save with --topk 0 for a complete diff")
    return _Side(info, chosen)


def _side_from_dirs(path: Path, kernel: str | None, max_waves: int | None,
                    warnings: list[str]) -> _Side:
    from hotspot.att.analyze import analyze_dispatch_dir
    from hotspot.att.model import AnalyzeOptions
    from hotspot.capture.select import usable_ranking
    from hotspot.result import plain

    opts = AnalyzeOptions(topk=0, kernel=kernel, max_waves=max_waves)
    usable, _, rank_warnings = usable_ranking(path, kernel)
    warnings.extend(rank_warnings)
    best = usable[0]
    same = [c for c in usable if c.kernel == best.kernel][:2]  # a replicate pair gives the noise
    analyses = []
    for c in same:
        a = analyze_dispatch_dir(Path(c.path), opts, warnings)
        analyses.append(plain(a))
    return _Side(_info(path, "dispatch-dir", analyses), analyses)


def _is_analysis(a: object) -> bool:
    return isinstance(a, dict) and all(k in a for k in ("dispatch", "totals", "stall_by_category"))


def _kernel_of(a: JsonObject) -> str:
    return str(a["dispatch"].get("kernel") or "")


def _pick(analyses: list[JsonObject], kernel: str | None, path: Path) -> list[JsonObject]:
    if kernel:
        pat = user_regex(kernel, "--kernel")
        analyses = [a for a in analyses if pat.search(_kernel_of(a))]
        if not analyses:
            raise InputError(f"{path}: no analysis of a kernel matching --kernel {kernel!r}")
    best = max(analyses, key=lambda a: (a["dispatch"].get("waves", 0),
                                        a["dispatch"].get("executed_instructions", 0)))
    return [a for a in analyses if _kernel_of(a) == _kernel_of(best)][:2]


def _info(path: Path, kind: str, analyses: list[JsonObject]) -> SideInfo:
    return SideInfo(str(path), kind, _kernel_of(analyses[0]),
                    [str(a["dispatch"].get("path", "")) for a in analyses],
                    int(analyses[0]["dispatch"].get("waves", 0)),
                    _mean([float(a["totals"]["stall"]) for a in analyses]))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


# ---------------------------------------------------------------------------------------------
# metrics


@record(frozen=False)
class _Metric:
    kind: str
    label: str
    value: float
    signature: tuple[str, ...] = ()  # ISA mnemonics of the row's instructions (for moved lines)


def metrics(a: JsonObject) -> dict[str, _Metric]:
    isa_of = {i["line_number"]: i["isa"] for i in a.get("instructions") or []}

    def sig(numbers: list[int]) -> tuple[str, ...]:
        return tuple((isa_of.get(n) or "?").split(" ", 1)[0] for n in sorted(numbers))

    out: dict[str, _Metric] = {}
    t = a["totals"]
    for name in TOTAL_FIELDS:
        out[f"total:{name}"] = _Metric("total", name, float(t.get(name, 0)))
    for c in a.get("stall_by_category") or []:
        out[f"category:{c['category']}"] = _Metric("category", c["category"], float(c["stall"]))
    for s in a.get("source_lines") or []:
        label = f"{s['file']}:{s['line'] if s['line'] is not None else '?'}"
        out[f"line:{label}"] = _Metric("line", label, float(s["stall"]),
                                       sig(s.get("instructions") or []))
    for b in a.get("blamed_lines") or []:
        out[f"load:{b['label']}"] = _Metric("load", b["label"], float(b["blamed_stall"]),
                                            sig(b.get("instructions") or []))
    return out


def _side_values(side: _Side) -> tuple[dict[str, _Metric], dict[str, float]]:
    """Mean metric per key over the side's analyses, and per-key replicate noise |a - b|."""
    per = [metrics(a) for a in side.analyses]
    keys = set().union(*per)
    values: dict[str, _Metric] = {}
    noise: dict[str, float] = {}
    for k in keys:
        present = [m[k] for m in per if k in m]
        vals = [m[k].value if k in m else 0.0 for m in per]
        values[k] = _Metric(present[0].kind, present[0].label, _mean(vals), present[0].signature)
        if len(per) == 2:
            noise[k] = abs(vals[0] - vals[1])
    return values, noise


def _match(before: dict[str, _Metric], after: dict[str, _Metric], same_kernel: bool
           ) -> list[tuple[str | None, str | None, str]]:
    """Pairs (before key, after key, matched_by)."""
    pairs: list[tuple[str | None, str | None, str]] = [(k, k, "key") for k in before if k in after]
    only_b = [k for k in before if k not in after]
    only_a = [k for k in after if k not in before]
    if same_kernel:
        pool: dict[tuple[str, tuple[str, ...]], list[str]] = {}
        for k in sorted(only_a):
            m = after[k]
            if m.kind in ("line", "load") and m.signature:
                pool.setdefault((m.kind, m.signature), []).append(k)
        still_b = []
        for k in sorted(only_b):
            m = before[k]
            cands = pool.get((m.kind, m.signature)) if m.signature else None
            if cands:
                a = cands.pop(0)
                pairs.append((k, a, "mnemonics"))
                only_a.remove(a)
            else:
                still_b.append(k)
        only_b = still_b
    pairs += [(k, None, "before-only") for k in only_b]
    pairs += [(None, k, "after-only") for k in only_a]
    return pairs


# ---------------------------------------------------------------------------------------------
# use case


def diff_paths(before: Path, after: Path, kernel: str | None = None,
               threshold_pct: float | None = None, max_waves: int | None = None):
    from hotspot.result import Result

    if threshold_pct is not None and not 0 < threshold_pct < 100:
        raise UsageError("--threshold is a percentage between 0 and 100 (exclusive)")
    warnings: list[str] = []
    b = load_side(before, kernel, max_waves, warnings)
    a = load_side(after, kernel, max_waves, warnings)
    return Result("diff", compare(b, a, threshold_pct, warnings), warnings)


def compare(b: _Side, a: _Side, threshold_pct: float | None, warnings: list[str]) -> DiffResult:
    same_kernel = b.info.kernel == a.info.kernel
    if not same_kernel:
        warnings.append(f"kernels differ (before: {b.info.kernel[:80]}; after: {a.info.kernel[:80]}): "
                        "rows are matched by file:line only")
    bv, bn = _side_values(b)
    av, an = _side_values(a)
    per_wave = b.info.waves > 0 and a.info.waves > 0 and b.info.waves != a.info.waves
    if per_wave:  # compare per traced wave: stall grows with the number of waves, not the change
        bv, bn = _scaled(bv, bn, 1 / b.info.waves)
        av, an = _scaled(av, an, 1 / a.info.waves)
        warnings.append(f"the sides traced different numbers of waves ({b.info.waves} vs "
                        f"{a.info.waves}): rows are cycles per wave")
    replicate = bool(bn or an)
    run_noise = max([_rel_noise(s) for s in (b, a) if len(s.analyses) == 2] or [0.0])
    if replicate:
        rel = run_noise
        noise = NoiseInfo("replicate-dispatches", rel, MIN_SHARE_OF_TOTAL,
                          "two dispatches of the same kernel on a side: a row must move by more "
                          "than its own difference between them and by more than their relative "
                          "difference in total stall")
    else:
        rel = threshold_pct / 100 if threshold_pct is not None else DEFAULT_RELATIVE_THRESHOLD
        noise = NoiseInfo("default-threshold", rel, MIN_SHARE_OF_TOTAL,
                          f"no replicate dispatch: a row must move by more than {rel:.0%} of its "
                          "value" + (" (--threshold)" if threshold_pct is not None else ""))
    totals = (bv.get("total:stall"), av.get("total:stall"))
    floor = MIN_SHARE_OF_TOTAL * max(m.value if m else 0.0 for m in totals)
    rows = []
    for kb, ka, how in _match(bv, av, same_kernel):
        mb = bv.get(kb) if kb else None
        ma = av.get(ka) if ka else None
        ref = mb or ma
        assert ref is not None
        before_v = mb.value if mb else 0.0
        after_v = ma.value if ma else 0.0
        delta = after_v - before_v
        thr = max(floor, rel * max(abs(before_v), abs(after_v)),
                  bn.get(kb, 0.0) if kb else 0.0, an.get(ka, 0.0) if ka else 0.0)
        label = ref.label if how != "mnemonics" else f"{mb.label} -> {ma.label}"  # type: ignore[union-attr]
        key = f"{ref.kind}:{label}"
        # two different kernels: the numbers are shown, but no change between them is "significant"
        rows.append(DiffRow(key, ref.kind, label, before_v, after_v, delta,
                            100 * delta / before_v if before_v else None,
                            same_kernel and abs(delta) > thr, thr, how))
    rows.sort(key=lambda r: (KINDS.index(r.kind), -abs(r.delta), -max(r.before, r.after), r.key))
    summary = _summary(rows, per_wave)
    if not same_kernel:
        summary = replace(summary, verdict=("different kernels: not comparable, no change is called significant "
                           "(diff two captures of one kernel)"))
    return DiffResult(b.info, a.info, noise, summary, rows,
                      "per-wave" if per_wave else "none",
                      "cycles per wave" if per_wave else "cycles", same_kernel)


def _scaled(values: dict[str, _Metric], noise: dict[str, float], factor: float
            ) -> tuple[dict[str, _Metric], dict[str, float]]:
    return ({k: _Metric(m.kind, m.label, m.value * factor, m.signature) for k, m in values.items()},
            {k: v * factor for k, v in noise.items()})


def _rel_noise(side: _Side) -> float:
    s = [float(x["totals"]["stall"]) for x in side.analyses]
    m = _mean(s)
    return abs(s[0] - s[1]) / m if m else 0.0


def _summary(rows: list[DiffRow], per_wave: bool = False) -> DiffSummary:
    sig = [r for r in rows if r.significant]
    total = next(r for r in rows if r.key == "total:stall")
    if total.significant:
        unit = "cycles per wave" if per_wave else "cycles"
        verdict = (f"total stall{' per wave' if per_wave else ''} {'down' if total.delta < 0 else 'up'} "
                   f"{abs(total.delta_pct or 0):.1f}% ({total.delta:+,.0f} {unit}): significant")
    elif sig:
        verdict = (f"total stall within noise; {len(sig)} row(s) moved significantly")
    else:
        verdict = "no significant change"
    return DiffSummary(len(rows), len(sig), sum(1 for r in sig if r.delta < 0),
                       sum(1 for r in sig if r.delta > 0), total.before, total.after, total.delta,
                       total.delta_pct, total.significant, verdict)
