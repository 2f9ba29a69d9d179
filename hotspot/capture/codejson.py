"""Reader for code.json (decoder format 3.0.0): columns by header name, extra columns kept."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path

import orjson

from hotspot.capture.files import parse_json, read_capped
from hotspot.capture.model import NO_EXTRA, CodeRow, CodeTable, KernelSymbol
from hotspot.capture.session import memoized
from hotspot.capture.source import SourceLoc, parse_source
from hotspot.errors import EmptyTraceError, HotspotError, InputError, bad_file
from hotspot.result import JsonValue

# The ten base columns, by the names the decoder writes in `header`.
BASE_COLUMNS = ("ISA", "_", "LineNumber", "Source", "Codeobj", "Vaddr", "Hit", "Latency", "Stall",
                "Idle")
_INT_COLUMNS = ("LineNumber", "Codeobj", "Vaddr", "Hit", "Latency", "Stall", "Idle")
LEGACY_ROW_WIDTH = 8
# The early format-3.0.0 layout (2025 decoders): no `header`, rows of the first eight base columns;
# Stall and Idle are rebuilt from the wave files (hotspot/capture/early_layout.py).
EARLY_COLUMNS = BASE_COLUMNS[:8]
EARLY_MISSING = BASE_COLUMNS[8:10]
# Range of values a decoder writes (a bound, not a measurement): line ids index the code list and
# the wave scanner's columns (hotspot/att/engine/_wavescan.c) hold values below 2**40; counts and
# cycles below 2**44 per row keep sums over any code list far inside int64 (JSON output).
LINE_LIMIT = 1 << 40
COUNT_LIMIT = 1 << 44
ID_LIMIT = 1 << 63
_LIMITS = {"LineNumber": LINE_LIMIT, "Codeobj": ID_LIMIT, "Vaddr": ID_LIMIT, "Hit": COUNT_LIMIT,
           "Latency": COUNT_LIMIT, "Stall": COUNT_LIMIT, "Idle": COUNT_LIMIT}
# Decoder output format versions whose fields hotspot knows (FORMATS.md §1): major 3.
KNOWN_FORMAT_MAJOR = "3"
# What is still read from a file of an unknown format version, for the warning.
TRUSTED_CODE_FIELDS = ("header", "code rows by the header's column names "
                       "(ISA, LineNumber, Source, Codeobj, Vaddr, Hit, Latency, Stall, Idle)")

EMPTY_TRACE_HINT = (
    "re-capture so that waves land on the traced CU: try another att_target_cu, a wider "
    "att_shader_engine_mask, more waves or a larger grid, and check kernel_include_regex and "
    "kernel_iteration_range")


_REDECODE = "the file was edited or damaged; re-run the decoder on the .att files"
LEGACY_HINT = (
    "re-decode the raw .att files (the <name>_shader_engine_<se>_<dispatch>.att files and the "
    "*_code_object_id_*.out code objects beside the ui dir) with a current decoder: install "
    "rocprof-trace-decoder (ROCm 6.4 or later) and run rocprofv3 --att again, or decode the saved "
    ".att files with its decoder (ROCPROF_ATT_LIBRARY_PATH naming the library); then pass the new "
    "ui_output_agent_*_dispatch_* dir")


def parse_header(path: Path, header: JsonValue) -> tuple[str, ...]:
    if isinstance(header, str):
        names = tuple(h.strip() for h in header.split(","))
    elif isinstance(header, list) and all(isinstance(h, str) for h in header):
        names = tuple(str(h).strip() for h in header)
    else:
        raise bad_file(path, "field 'header' is neither a string nor a list of strings")
    if len(names) < len(BASE_COLUMNS):
        raise bad_file(path, f"field 'header' has {len(names)} columns, expected at least "
                       f"{len(BASE_COLUMNS)} ({', '.join(BASE_COLUMNS)})")
    return names


def version_warning(path: Path, version: str, trusted: str) -> str | None:
    """A warning when a decoder file declares a format version hotspot does not know: its fields
    are read by name as in 3.x, and the warning says which were trusted."""
    if version.split(".", 1)[0].strip() == KNOWN_FORMAT_MAJOR:
        return None
    return (f"{path}: decoder format version {version[:40]!r} is not one hotspot knows "
            f"({KNOWN_FORMAT_MAJOR}.x); read as {KNOWN_FORMAT_MAJOR}.x, trusting {trusted}; check "
            "the numbers against the decoder's documentation or re-decode with a 3.x decoder")


def is_early_layout(doc: JsonValue) -> bool:
    """The early format-3.0.0 code.json: `version` and `code`, no `header` and no `top_n` (the
    legacy layout's key), rows of 8 columns (or no rows). Told by shape: its version string is
    today's."""
    if not isinstance(doc, dict) or "header" in doc or "top_n" in doc or "version" not in doc:
        return False
    code = doc.get("code")
    if code is None or (isinstance(code, list) and not code):
        return True
    return isinstance(code, list) and isinstance(code[0], list) and len(code[0]) == LEGACY_ROW_WIDTH


def is_legacy(doc: JsonValue) -> bool:
    """Pre-3.0 decoder output: no header/version, 8-column rows, a `top_n` key."""
    if not isinstance(doc, dict):
        return False
    if "header" in doc or "version" in doc:
        return False
    code = doc.get("code")
    if "top_n" in doc:
        return True
    return isinstance(code, list) and bool(code) and isinstance(code[0], list) and \
        len(code[0]) == LEGACY_ROW_WIDTH


def read_code_json(path: Path, max_bytes: int | None = None) -> CodeTable:
    """The code table of one code.json (read once per capture session)."""
    return memoized("code.json", str(path), lambda: _read_code_json(path, max_bytes))


def _read_code_json(path: Path, max_bytes: int | None) -> CodeTable:
    data = read_capped(path, max_bytes)
    if len(data) >= PIECEWISE_MIN_BYTES:
        try:
            return _read_piecewise(path, data)
        except (_NotPiecewise, HotspotError):
            # Anything unusual (another layout, a row no decoder writes, malformed JSON) is left
            # to the whole-document path below, so its errors and their order are unchanged.
            pass
    doc = parse_json(path, data)
    del data
    version, names, code = _check_doc(path, doc)
    return _table(path, version, names, code)


def _check_doc(path: Path, doc: JsonValue, first: list[JsonValue] | None = None
               ) -> tuple[str, tuple[str, ...], list[JsonValue]]:
    """The version, header and code list of a parsed document, checked in the order errors are
    reported (`first`: a list of the first row, when the document's code list holds others)."""
    if not isinstance(doc, dict):
        raise bad_file(path, "top level is not a JSON object")
    code = doc.get("code") if first is None else first
    if is_legacy(doc if first is None else {**doc, "code": first}):
        raise InputError(f"{path}: unsupported legacy ATT layout (decoder older than format 3.0.0: "
                         "no header, no version, 8-column rows)", LEGACY_HINT, code="legacy-layout")
    version = doc.get("version")
    if not isinstance(version, str):
        raise bad_file(path, "field 'version' is missing or not a string")
    early = is_early_layout(doc if first is None else {**doc, "code": first})
    names = EARLY_COLUMNS if early else parse_header(path, doc.get("header"))
    if code is None:
        raise EmptyTraceError(f"{path}: empty trace (\"code\": null): no wave reached the traced CU",
                              EMPTY_TRACE_HINT)
    if not isinstance(code, list):
        raise bad_file(path, "field 'code' is not a list")
    return version, names, code


def _table(path: Path, version: str, names: tuple[str, ...], code: Iterable[JsonValue]) -> CodeTable:
    table = _build_table(path, version, names, code)
    warning = version_warning(path, version, "; ".join(TRUSTED_CODE_FIELDS))
    if warning is None:
        return table
    from dataclasses import replace

    return replace(table, warnings=(*table.warnings, warning))


# --- Reading a large code.json a piece at a time ------------------------------------------------
#
# orjson holds ~13 bytes of transient state per input byte while it parses, and the parsed rows
# (~4 bytes per byte) would sit beside the CodeRows built from them: parsing a 30 MB code.json
# whole peaked at ~17x its size. Decoder output starts with the code list ({"code":[[row],...],
# "header":...}), so a large file is parsed as its skeleton (the document with the code list cut
# down to its last row) and then the rows, about PIECE_BYTES at a time, each piece's rows turned
# into CodeRows before the next is parsed. Every piece boundary is proven, not guessed: a piece
# is cut only before a `],["` whose preceding bytes parse as whole rows (a cut inside a string or a
# nested array leaves them unparseable, and the piece is extended to the next candidate), and the
# pieces must end exactly where the skeleton's rows begin. The result is the whole-document
# parse's; a file that does not fit this shape goes the whole-document way.

# Files from this size on are parsed piecewise (real code.json: ~1 MB per 5,000 rows).
PIECEWISE_MIN_BYTES = 1 << 20
# Bytes of rows parsed at once: orjson's transient state for one piece is ~13x this.
PIECE_BYTES = 1 << 18
# The document starts with its code list, and a row boundary is `],` then `[` and the next row's
# ISA string (group 1: where the next row starts); nested arrays in extra columns hold numbers.
_CODE_START = re.compile(rb'\s*\{\s*"code"\s*:\s*\[')
_ROW_GAP = re.compile(rb'\]\s*,\s*(\[)\s*"')
# Stands in the skeleton's code list for the rows parsed piecewise.
_CUT = "hotspot: rows parsed piecewise"
# Bytes searched backwards from the end for the last row boundary, doubled until one is found.
_TAIL_WINDOW = 1 << 16


class _NotPiecewise(Exception):
    """The file does not have the shape the piecewise parse proves: read it whole."""


def _read_piecewise(path: Path, data: bytes) -> CodeTable:
    start = _CODE_START.match(data)
    if start is None:
        raise _NotPiecewise
    rows_start = start.end()
    last = _last_row_gap(data, rows_start)
    tail = last.start(1)
    if data.find(b'"code"', tail) >= 0:  # a second "code" key could be the one that counts
        raise _NotPiecewise
    try:
        doc = orjson.loads(b"".join((data[:rows_start], orjson.dumps(_CUT), b",", data[tail:])))
    except orjson.JSONDecodeError:
        raise _NotPiecewise from None
    code = doc.get("code") if isinstance(doc, dict) else None
    if not isinstance(code, list) or len(code) < 2 or code[0] != _CUT:
        raise _NotPiecewise
    pieces = _pieces(data, rows_start, last)
    first = next(pieces)
    version, names, _ = _check_doc(path, doc, [first[0]])
    return _table(path, version, names, chain(chain.from_iterable(chain((first,), pieces)),
                                              code[1:]))


def _last_row_gap(data: bytes, rows_start: int) -> re.Match[bytes]:
    """The last row boundary of the file (before the row the skeleton keeps)."""
    window = _TAIL_WINDOW
    while True:
        lo = max(rows_start, len(data) - window)
        last = None
        for last in _ROW_GAP.finditer(data, lo):
            pass
        if last is not None:
            return last
        if lo == rows_start:
            raise _NotPiecewise
        window *= 2


def _pieces(data: bytes, begin: int, last: re.Match[bytes]) -> Iterator[list[JsonValue]]:
    """The rows from `begin` (where the code list's rows start) to the boundary `last`, parsed
    about PIECE_BYTES at a time; _NotPiecewise unless every cut proves to be between rows."""
    end = last.start(1)
    at = begin
    while at < end:
        cut = _ROW_GAP.search(data, at + PIECE_BYTES) if at + PIECE_BYTES < last.start() else last
        while True:
            if cut is None or cut.start(1) > end:
                raise _NotPiecewise
            try:
                # at the depth the rows have in the document: {"code":[rows]}
                rows = orjson.loads(b"".join((b'{"":[', data[at:cut.start() + 1], b"]}")))[""]
            except orjson.JSONDecodeError:
                if cut is last:
                    raise _NotPiecewise from None
                cut = _ROW_GAP.search(data, cut.end())  # inside a string or a nested array
                continue
            break
        at = cut.start(1)
        yield rows
        del rows


def _build_table(path: Path, version: str, names: tuple[str, ...], code: Iterable[JsonValue]
                 ) -> CodeTable:
    early = names is EARLY_COLUMNS
    index = {name: i for i, name in enumerate(names)}
    # Base columns are kept by position (the format fixes 0..9); check the names agree.
    for pos, expected in enumerate(BASE_COLUMNS[:len(names)] if early else BASE_COLUMNS):
        if names[pos].lower() != expected.lower():
            raise bad_file(path, f"header column {pos} is '{names[pos]}', expected '{expected}'")
    # early layout: Stall and Idle read as 0 here, rebuilt from the wave files by read_code_table
    columns = tuple(c for c in _INT_COLUMNS if c in index)
    missing = (0,) * (len(_INT_COLUMNS) - len(columns))
    min_width = len(names) if early else len(BASE_COLUMNS)
    extra_names = () if early else names[len(BASE_COLUMNS):]
    width = len(names)
    rows: list[CodeRow] = []
    kernels: list[KernelSymbol] = []
    seen_lines: dict[int, int] = {}  # line id -> code row that declared it
    # Rows repeat their Source (every instruction of a line) and many ISA strings: one object
    # each, and one parsed SourceLoc per distinct Source.
    isas: dict[str, str] = {}
    sources: dict[str, tuple[str, SourceLoc | None]] = {}
    for n, raw in enumerate(code):
        if not isinstance(raw, list) or len(raw) < min_width:
            raise bad_file(path, f"code row {n} has {len(raw) if isinstance(raw, list) else 0} "
                           f"columns, expected {width}")
        isa, source_text = raw[0], raw[3]
        if not isinstance(isa, str):
            raise bad_file(path, f"code row {n} field 'ISA' is not a string")
        if source_text is None:
            source_text = ""
        if not isinstance(source_text, str):
            raise bad_file(path, f"code row {n} field 'Source' is not a string")
        ints = []
        for col in columns:
            value = raw[index[col]]
            if isinstance(value, bool) or not isinstance(value, int):
                if isinstance(value, float) and value.is_integer():
                    value = int(value)
                else:
                    raise bad_file(path, f"code row {n} field '{col}' is not an integer: {value!r}")
            if not 0 <= value < _LIMITS[col]:
                raise bad_file(path, f"code row {n} field '{col}' is {value}, outside the range a "
                               f"decoder writes (0 to {_LIMITS[col] - 1})", _REDECODE,
                               code="bad-value")
            ints.append(value)
        line_number, codeobj, vaddr, hit, latency, stall, idle = (*ints, *missing)
        if stall > latency:  # the stall is part of the latency: issue cycles would be negative
            raise bad_file(path, f"code row {n} field 'Stall' ({stall}) is larger than its 'Latency' "
                           f"({latency}); a decoder counts stall cycles inside the latency",
                           _REDECODE, code="bad-value")
        if isa.startswith(";"):
            kernels.append(KernelSymbol(line_number, isa[1:].strip(), source_text.strip(),
                                        len(rows)))
            continue
        first = seen_lines.setdefault(line_number, n)
        if first != n:
            raise bad_file(path, f"code rows {first} and {n} both declare LineNumber {line_number}; "
                           "line ids are unique in decoder output", _REDECODE, code="bad-value")
        extra = {name: raw[len(BASE_COLUMNS) + i] for i, name in enumerate(extra_names)
                 if len(BASE_COLUMNS) + i < len(raw)} if extra_names else NO_EXTRA
        source = sources.get(source_text)
        if source is None:
            source = sources[source_text] = (source_text, parse_source(source_text))
        isa = isas.setdefault(isa, isa)
        rows.append(CodeRow(line_number, isa, source[0], source[1], codeobj, vaddr, hit, latency,
                            stall, idle, extra))
    if early:
        return CodeTable(path, version, names, tuple(rows), tuple(kernels), (), (), EARLY_MISSING)
    return CodeTable(path, version, names, tuple(rows), tuple(kernels), tuple(extra_names))
