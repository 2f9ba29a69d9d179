"""A saved `hotspot analyze --format json` output read back as the typed analysis (what `diff` and
`report` take when given a file instead of a dispatch dir).

The envelope (hotspot/result.py) is checked first: a newer schema_version, an error envelope or
another command's output is refused naming the field; then `data` is decoded by the records' type
hints (hotspot/decode.py), so a value of the wrong shape is named by its field (`data.totals.stall`).
A bare `data` object (the envelope taken off) reads too.
"""

from __future__ import annotations

import copy
from dataclasses import field, replace
from pathlib import Path

from hotspot.att.model import AnalyzeOptions, DispatchAnalysis, MultiAnalysis
from hotspot.decode import from_plain
from hotspot.errors import bad_file
from hotspot.record import record
from hotspot.result import JsonValue, Result, check_saved_envelope

SAVED_COMMAND = "analyze"
HINT = "pass the output of hotspot analyze --format json"


@record
class _SavedOne:
    data: DispatchAnalysis
    warnings: list[str] = field(default_factory=list)


@record
class _SavedMany:
    data: MultiAnalysis
    warnings: list[str] = field(default_factory=list)


def read_analysis(path: Path) -> tuple[DispatchAnalysis | MultiAnalysis, list[str]]:
    """The saved file at `path` (read by hotspot.capture, as every input) as the typed analysis,
    and the warnings saved with it."""
    from hotspot.capture import read_saved_json

    return analysis_of(read_saved_json(path), path)


def analysis_of(doc: JsonValue, source: Path | str) -> tuple[DispatchAnalysis | MultiAnalysis, list[str]]:
    """A parsed saved document as the typed analysis and its saved warnings."""
    if not isinstance(doc, dict):
        raise bad_file(source, "top level is not a JSON object",
                       "pass a dispatch dir, or the output of hotspot analyze --format json")
    if "schema_version" in doc or "command" in doc:
        check_saved_envelope(source, doc)
        if doc.get("ok") is False:
            raise bad_file(source, "holds an error envelope, not analysis data",
                           "re-run hotspot analyze --format json on a dispatch with executed waves")
        if doc.get("command") != SAVED_COMMAND:
            raise bad_file(source, f"field 'command' is {doc.get('command')!r}, expected "
                                   f"{SAVED_COMMAND!r}", HINT)
    else:
        if not isinstance(doc.get("dispatch"), dict) and not isinstance(doc.get("dispatches"), list):
            from hotspot.capture import neither

            raise neither(source)  # another tool's JSON (a code.json, a trace): no analysis at all
        doc = {"data": doc}
    body = doc.get("data")
    many = isinstance(body, dict) and isinstance(body.get("dispatches"), list)
    if not isinstance(body, dict) or not (many or isinstance(body.get("dispatch"), dict)):
        raise bad_file(source, "field 'data.dispatch' is missing: not hotspot analyze output", HINT)
    hint = "pass an unedited hotspot analyze --format json output"
    if many:
        saved_many = from_plain(_SavedMany, doc, source=source, hint=hint)
        if not saved_many.data.dispatches:
            raise bad_file(source, "field 'data.dispatches' is empty: no dispatch analysis", HINT)
        return saved_many.data, saved_many.warnings
    saved = from_plain(_SavedOne, doc, source=source, hint=hint)
    return saved.data, saved.warnings


def saved_analysis(path: Path, opts: AnalyzeOptions) -> Result[DispatchAnalysis | MultiAnalysis]:
    """A saved analysis as `analyze` of a capture gives it (every row it holds; the caller cuts to
    `--topk`), shown with this command's `--mode`, `--detail` and `--topk`; the warnings saved
    with it, then what the file lacks for this command line (on stderr in the text views)."""
    data, saved = read_analysis(path)
    notes = list(saved)
    ignored = [flag for flag, given in (
        ("--arch", opts.arch), ("--kernel", opts.kernel and not isinstance(data, MultiAnalysis)),
        ("--meta", opts.meta), ("--source-map", opts.source_map), ("--max-waves", opts.max_waves),
        ("--all", opts.all_dispatches)) if given]
    if ignored:
        notes.append(f"{path}: a saved analysis is shown as it was saved: {', '.join(ignored)} "
                     "apply to a capture directory only")
    views = data.dispatches if isinstance(data, MultiAnalysis) else [data]
    if isinstance(data, MultiAnalysis) and opts.kernel:
        from hotspot.userregex import user_regex

        rx = user_regex(opts.kernel, "--kernel")
        views = [a for a in views if rx.search(a.dispatch.kernel) or rx.search(a.dispatch.symbol)]
        if not views:
            raise bad_file(path, f"no saved dispatch's kernel matches --kernel {opts.kernel}",
                           "drop --kernel, or pass another pattern")
    cut = [a for a in views if a.tables_complete is not True]
    if cut:
        k = cut[0].asked_topk
        notes.append(f"{path}: saved with --topk {k}: its tables hold the top {k} rows only (the plan "
                     "and totals per row see no others); save with `--format json` and no --topk for every row"
                     if cut[0].tables_complete is False else
                     f"{path}: saved by an older hotspot: its tables may hold only the top rows "
                     f"(--topk {k})")
    if opts.detail and any(not a.detail for a in views):
        notes.append(f"{path}: saved without --detail: no source snippets to show; analyze the "
                     "capture directory with --detail")
    shown = [_as_asked(a, opts) for a in views]
    out: DispatchAnalysis | MultiAnalysis = (
        replace(data, dispatches=shown) if isinstance(data, MultiAnalysis) else shown[0])
    return Result("analyze", out, notes)


def _as_asked(a: DispatchAnalysis, opts: AnalyzeOptions) -> DispatchAnalysis:
    """`a` with this command line's view options (which tables, --detail) in its echo."""
    if a.options is None:
        return a
    echo = copy.copy(a.options)
    echo.mode, echo.detail = opts.mode, opts.detail and bool(a.detail)
    return replace(a, options=echo)
