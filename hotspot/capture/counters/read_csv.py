"""Counter CSV readers: rocprofv3 / rocprof-compute LONG format and rocprof-compute WIDE pmc_perf.csv.

Both are parsed by header name (case-insensitive). Only the counters in counters.wanted_counters()
are kept. A counter is resolved per dispatch as `NAME_sum`, else the bare `NAME` (rocprofv3 already
sums it over instances), else the sum of the per-instance `NAME[i]` values.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from hotspot.arch.counter_semantics import wanted_counters
from hotspot.capture.counters.model import CounterFile, DispatchCounters
from hotspot.capture.files import CSV_FIELD_LIMIT, open_text
from hotspot.errors import bad_file

_INSTANCE = re.compile(r"^(?P<base>.+)\[(?P<index>\d+)\]$")
# Base columns rocprof-compute repeats per pass with `_1`, `_2` suffixes: take the first present.
_SUFFIXED = re.compile(r"^(?P<base>.+)_(?P<n>\d+)$")

# Header names as rocprofv3 writes them; matched case-insensitively (rocprof-compute: Dispatch_ID).
DISPATCH_COLUMNS = ("Dispatch_Id",)
KERNEL_COLUMNS = ("Kernel_Name",)
START_COLUMNS = ("Start_Timestamp", "BeginNs")
END_COLUMNS = ("End_Timestamp", "EndNs")

_CONFLICT = "keep one run's rows per dispatch (files of two runs may have been concatenated)"

_WANTED = wanted_counters()
_WANTED_BY_UPPER = {w.upper(): w for w in _WANTED}
_BASE_BY_UPPER = {w.upper()[: -len("_SUM")]: w for w in _WANTED}


def canonical_counter(name: str) -> tuple[str, str] | None:
    """(canonical `_sum` name, slot) for a counter name we use; slot is sum|bare|instance."""
    upper = name.strip().upper()
    if upper in _WANTED_BY_UPPER:
        return _WANTED_BY_UPPER[upper], "sum"
    if upper in _BASE_BY_UPPER:
        return _BASE_BY_UPPER[upper], "bare"
    m = _INSTANCE.match(upper)
    if m and m.group("base") in _BASE_BY_UPPER:
        return _BASE_BY_UPPER[m.group("base")], "instance"
    return None


# Counters, timestamps and dispatch ids are unsigned 64-bit values in rocprofv3's output.
VALUE_LIMIT = 1 << 64


def parse_number(path: Path, line: int, field: str, text: str) -> float | None:
    """A counter/timestamp value: blank -> None (not collected); anything non-numeric -> exit 3."""
    text = text.strip()
    if text == "":
        return None
    value: float
    try:
        value = int(text)
    except ValueError:
        try:
            value = float(text)
        except ValueError:
            raise bad_file(path, f"line {line}: field {field} is not a number ({text[:40]!r})",
                           "fix or regenerate the file; counter values must be numeric") from None
        if not math.isfinite(value):
            raise bad_file(path, f"line {line}: field {field} is not a finite number ({text!r})",
                           "fix or regenerate the file") from None
    if value < 0:  # counters count events and timestamps are ns since boot: never negative
        raise bad_file(path, f"line {line}: field {field} is negative ({text[:40]!r})",
                       "fix or regenerate the file; counter values and timestamps are >= 0",
                       code="bad-value")
    if value >= VALUE_LIMIT:  # 10**400 or 1e308: beyond any 64-bit counter or timestamp
        raise bad_file(path, f"line {line}: field {field} is {text[:40]!r}, beyond a 64-bit counter "
                       "or timestamp", "fix or regenerate the file", code="bad-value")
    return float(value)


def parse_dispatch_id(path: Path, line: int, field: str, text: str) -> int:
    text = text.strip()
    try:
        value = int(text)
    except ValueError:
        try:
            as_float = float(text)
        except ValueError:
            as_float = math.nan
        if not (math.isfinite(as_float) and as_float.is_integer()):
            raise bad_file(path, f"line {line}: field {field} is not an integer dispatch id ({text[:40]!r})",
                           "fix or regenerate the file") from None
        value = int(as_float)
    if not 0 <= value < VALUE_LIMIT:
        raise bad_file(path, f"line {line}: field {field} is {text[:40]!r}, outside a dispatch id's "
                       "range (0..2**64-1)", "fix or regenerate the file", code="bad-value")
    return value


def _find(header: list[str], names: Sequence[str]) -> tuple[str, int] | None:
    """(header name as written, column) of the first of `names` present, case-insensitively."""
    lower = [h.lower() for h in header]
    for name in (n.lower() for n in names):
        if name in lower:
            i = lower.index(name)
            return header[i], i
    # rocprof-compute repeats base columns with numeric suffixes; accept the first repeat.
    for name in (n.lower() for n in names):
        for i, col in enumerate(lower):
            m = _SUFFIXED.match(col)
            if m and m.group("base") == name:
                return header[i], i
    return None


def _rows(path: Path) -> Iterator[list[str]]:
    try:
        with open_text(path, confine=False) as fh:  # FIFOs and devices refused, not read
            csv.field_size_limit(CSV_FIELD_LIMIT)
            yield from csv.reader(fh)
    except OSError as exc:
        raise bad_file(path, f"cannot read ({exc.strerror or exc})", "check the path") from None
    except csv.Error as exc:
        raise bad_file(path, f"malformed CSV ({exc})", "regenerate the file") from None


def read_counter_csv(path: Path) -> CounterFile:
    """Read a long (Counter_Name/Counter_Value) or wide (one row per dispatch) counter CSV."""
    rows = _rows(path)
    header = next(rows, None)
    if not header:
        raise bad_file(path, "empty file (no header)", "pass a rocprofv3 *_counter_collection.csv "
                       "or a rocprof-compute pmc_perf.csv")
    header = [h.strip().lstrip("\ufeff") for h in header]
    index: dict[str, int] = {}
    for i, name in enumerate(header):
        index.setdefault(name.lower(), i)
    if "counter_name" in index and "counter_value" in index:
        return _read_long(path, header, index, rows)
    if any(canonical_counter(h) for h in header) or any(h.upper().endswith("_SUM") for h in header):
        return _read_wide(path, header, rows)
    raise bad_file(path, "unknown layout: header has neither Counter_Name/Counter_Value columns (long "
                   "format) nor counter columns such as TCC_HIT_sum (wide format)",
                   "pass a rocprofv3 *_counter_collection.csv, a rocprof-compute workload folder or "
                   "a rocpd *_results.db")


def _require(path: Path, header: list[str], names: Sequence[str], what: str) -> tuple[str, int]:
    found = _find(header, names)
    if found is None:
        raise bad_file(path, f"missing column {names[0]} ({what})",
                       "the header must name it; regenerate the file with rocprofv3/rocprof-compute")
    return found


class DispatchAccumulator:
    """Per-dispatch accumulator for one file."""

    __slots__ = ("kernel", "start", "end", "values")

    def __init__(self, kernel: str, start: float | None, end: float | None) -> None:
        self.kernel = kernel
        self.start = start
        self.end = end
        self.values: dict[str, dict[str, float]] = {}

    def add(self, canonical: str, slot: str, value: float) -> None:
        slots = self.values.setdefault(canonical, {})
        slots[slot] = slots.get(slot, 0.0) + value

    def resolve(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for name, slots in self.values.items():
            for slot in ("sum", "bare", "instance"):
                if slot in slots:
                    out[name] = slots[slot]
                    break
        return out


def _read_long(path: Path, header: list[str], index: dict[str, int],
               rows: Iterator[list[str]]) -> CounterFile:
    d_col, d_i = _require(path, header, DISPATCH_COLUMNS, "the dispatch id")
    _, k_i = _require(path, header, KERNEL_COLUMNS, "the kernel name")
    n_i, v_i = index["counter_name"], index["counter_value"]
    start = _find(header, START_COLUMNS)
    end = _find(header, END_COLUMNS)
    width = len(header)
    accs: dict[int, DispatchAccumulator] = {}
    names: set[str] = set()
    any_nonzero = False
    n_rows = 0
    # (dispatch, counter name) -> (line, value): a repeat is kept once when equal, refused when
    # not, never added up; dispatch -> (line, kernel) of its first row
    seen: dict[tuple[int, str], tuple[int, float]] = {}
    first_row: dict[int, tuple[int, str]] = {}
    repeats: list[int] = []
    for line, row in _data_rows(path, rows, width):
        n_rows += 1
        dispatch = parse_dispatch_id(path, line, d_col, row[d_i])
        name = row[n_i].strip()
        if not name:
            raise bad_file(path, f"line {line}: field Counter_Name is empty", "regenerate the file")
        value = parse_number(path, line, f"{header[v_i]} ({name})", row[v_i])
        if value is None:
            continue  # blank value: not collected for this dispatch
        kernel_name = row[k_i].strip()
        where = first_row.setdefault(dispatch, (line, kernel_name))
        if where[1] != kernel_name:
            raise bad_file(path, f"lines {where[0]} and {line}: dispatch {dispatch} is on two kernels "
                           f"({where[1][:60]!r} and {kernel_name[:60]!r})", _CONFLICT, code="conflict")
        before = seen.setdefault((dispatch, name), (line, value))
        if before[0] != line:
            if before[1] != value:
                raise bad_file(path, f"lines {before[0]} and {line}: dispatch {dispatch} counter "
                               f"{name} appears twice with different values ({before[1]:g} and "
                               f"{value:g})", _CONFLICT, code="conflict")
            repeats.append(line)
            continue
        names.add(name)
        any_nonzero = any_nonzero or value != 0.0
        acc = accs.get(dispatch)
        if acc is None:
            acc = accs[dispatch] = DispatchAccumulator(
                row[k_i].strip(),
                parse_number(path, line, start[0], row[start[1]]) if start else None,
                parse_number(path, line, end[0], row[end[1]]) if end else None)
        canon = canonical_counter(name)
        if canon:
            acc.add(canon[0], canon[1], value)
    if n_rows == 0 or not names:
        raise bad_file(path, "no counter rows (field Counter_Value is never set)",
                       "the run collected no counters: check the pmc list in the rocprofv3 input")
    # rocprof-compute names the device GPU_ID; rocprofv3's counter_collection.csv says Agent_Id.
    layout = "rocprof_compute_long" if "gpu_id" in index else "counter_collection_csv"
    warnings = (f"{path}: {len(repeats)} row(s) repeat an earlier row of the same dispatch and "
                f"counter with the same value (first at line {repeats[0]}); each was read once",) \
        if repeats else ()
    return CounterFile(path=path, layout=layout, dispatches=finish_dispatches(accs),
                       counter_names=frozenset(names), all_zero=not any_nonzero, warnings=warnings)


def _read_wide(path: Path, header: list[str], rows: Iterator[list[str]]) -> CounterFile:
    d_col, d_i = _require(path, header, DISPATCH_COLUMNS, "the dispatch id")
    _, k_i = _require(path, header, KERNEL_COLUMNS, "the kernel name")
    start = _find(header, START_COLUMNS)
    end = _find(header, END_COLUMNS)
    # canonical name -> (slot, [(column name, column index)]) choosing _sum > bare > instances.
    by_slot: dict[str, dict[str, list[tuple[str, int]]]] = {}
    names: set[str] = set()
    for i, col in enumerate(header):
        named = canonical_counter(col)
        if named:
            by_slot.setdefault(named[0], {}).setdefault(named[1], []).append((col, i))
        if col.upper().endswith("_SUM") or _INSTANCE.match(col):
            names.add(col)
    columns: dict[str, list[tuple[str, int]]] = {}
    for canon, slots in by_slot.items():
        for slot in ("sum", "bare", "instance"):
            if slot in slots:
                columns[canon] = slots[slot] if slot == "instance" else slots[slot][:1]
                break
    width = len(header)
    accs: dict[int, DispatchAccumulator] = {}
    first_line: dict[int, int] = {}
    any_nonzero = False
    for line, row in _data_rows(path, rows, width):
        dispatch = parse_dispatch_id(path, line, d_col, row[d_i])
        acc = DispatchAccumulator(row[k_i].strip(),
                   parse_number(path, line, start[0], row[start[1]]) if start else None,
                   parse_number(path, line, end[0], row[end[1]]) if end else None)
        if dispatch in accs:
            raise bad_file(path, f"lines {first_line[dispatch]} and {line}: field {d_col} repeats "
                           f"dispatch {dispatch}", "a wide pmc_perf.csv has one row per dispatch; "
                           + _CONFLICT, code="conflict")
        first_line[dispatch] = line
        accs[dispatch] = acc
        for canon, cols in columns.items():
            total: float | None = None
            for col, i in cols:
                value = parse_number(path, line, col, row[i])
                if value is not None:
                    total = value if total is None else total + value
            if total is not None:
                any_nonzero = any_nonzero or total != 0.0
                acc.values[canon] = {"sum": total}
    if not accs:
        raise bad_file(path, "no counter rows (header only)",
                       "the workload holds no dispatches; re-run the profile")
    return CounterFile(path=path, layout="rocprof_compute_wide", dispatches=finish_dispatches(accs),
                       counter_names=frozenset(names), all_zero=bool(columns) and not any_nonzero)


def finish_dispatches(accs: dict[int, DispatchAccumulator]) -> tuple[DispatchCounters, ...]:
    return tuple(DispatchCounters(dispatch_id=d, kernel=a.kernel, counters=a.resolve(),
                                  start_ns=a.start, end_ns=a.end)
                 for d, a in sorted(accs.items()))


def _data_rows(path: Path, rows: Iterable[list[str]], width: int) -> Iterator[tuple[int, list[str]]]:
    """(line number, row) of each non-blank data row; a row shorter than the header is refused."""
    for line, row in enumerate(rows, start=2):
        if not row or (len(row) == 1 and not row[0].strip()):
            continue
        if len(row) < width:
            raise bad_file(path, f"line {line}: {len(row)} fields, header has {width}",
                           "the file is truncated or malformed; regenerate it")
        yield line, row
