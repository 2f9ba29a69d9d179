"""Reader for code.json (decoder format 3.0.0): columns by header name, extra columns kept."""

from __future__ import annotations

from pathlib import Path

from hotspot.capture.files import load_json
from hotspot.capture.model import CodeRow, CodeTable, KernelSymbol
from hotspot.capture.session import memoized
from hotspot.capture.source import parse_source
from hotspot.errors import EmptyTraceError, InputError, bad_file
from hotspot.result import JsonValue

# The ten base columns, by the names the decoder writes in `header`.
BASE_COLUMNS = ("ISA", "_", "LineNumber", "Source", "Codeobj", "Vaddr", "Hit", "Latency", "Stall",
                "Idle")
_INT_COLUMNS = ("LineNumber", "Codeobj", "Vaddr", "Hit", "Latency", "Stall", "Idle")
LEGACY_ROW_WIDTH = 8
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


def parse_header(path: Path, header: JsonValue) -> tuple[str, ...]:
    if isinstance(header, str):
        names = tuple(h.strip() for h in header.split(","))
    elif isinstance(header, list) and all(isinstance(h, str) for h in header):
        names = tuple(h.strip() for h in header)
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
    doc = load_json(path, max_bytes)
    if not isinstance(doc, dict):
        raise bad_file(path, "top level is not a JSON object")
    if is_legacy(doc):
        raise InputError(f"{path}: unsupported legacy ATT layout (decoder older than format 3.0.0)",
                         "re-decode the .att files with a current rocprofv3 / rocprof-trace-decoder",
                         code="legacy-layout")
    version = doc.get("version")
    if not isinstance(version, str):
        raise bad_file(path, "field 'version' is missing or not a string")
    names = parse_header(path, doc.get("header"))
    code = doc.get("code")
    if code is None:
        raise EmptyTraceError(f"{path}: empty trace (\"code\": null): no wave reached the traced CU",
                              EMPTY_TRACE_HINT)
    if not isinstance(code, list):
        raise bad_file(path, "field 'code' is not a list")
    table = _build_table(path, version, names, code)
    warning = version_warning(path, version, "; ".join(TRUSTED_CODE_FIELDS))
    if warning is None:
        return table
    from dataclasses import replace

    return replace(table, warnings=(warning,))


def _build_table(path: Path, version: str, names: tuple[str, ...], code: list) -> CodeTable:
    index = {name: i for i, name in enumerate(names)}
    # Base columns are kept by position (the format fixes 0..9); check the names agree.
    for pos, expected in enumerate(BASE_COLUMNS):
        if names[pos].lower() != expected.lower():
            raise bad_file(path, f"header column {pos} is '{names[pos]}', expected '{expected}'")
    extra_names = names[len(BASE_COLUMNS):]
    width = len(names)
    rows: list[CodeRow] = []
    kernels: list[KernelSymbol] = []
    seen_lines: dict[int, int] = {}  # line id -> code row that declared it
    for n, raw in enumerate(code):
        if not isinstance(raw, list) or len(raw) < len(BASE_COLUMNS):
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
        for col in _INT_COLUMNS:
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
        line_number, codeobj, vaddr, hit, latency, stall, idle = ints
        if isa.startswith(";"):
            kernels.append(KernelSymbol(line_number, isa[1:].strip(), source_text.strip(),
                                        len(rows)))
            continue
        first = seen_lines.setdefault(line_number, n)
        if first != n:
            raise bad_file(path, f"code rows {first} and {n} both declare LineNumber {line_number}; "
                           "line ids are unique in decoder output", _REDECODE, code="bad-value")
        extra = {name: raw[len(BASE_COLUMNS) + i] for i, name in enumerate(extra_names)
                 if len(BASE_COLUMNS) + i < len(raw)}
        rows.append(CodeRow(line_number, isa, source_text, parse_source(source_text), codeobj,
                            vaddr, hit, latency, stall, idle, extra))
    return CodeTable(path, version, names, tuple(rows), tuple(kernels), tuple(extra_names))
