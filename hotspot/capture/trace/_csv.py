"""CSV plumbing shared by the kernel-level readers: header lookup by name, typed cells."""

from __future__ import annotations

import csv
import math
from collections.abc import Iterator
from pathlib import Path

from hotspot.capture.files import CSV_FIELD_LIMIT, open_text
from hotspot.errors import bad_file

# Kernel names can exceed 1 KB and templated ones grow far beyond; lift the csv module's 128 KiB cap.
_FIELD_LIMIT = CSV_FIELD_LIMIT


# rocprofv3 writes ids, nanosecond timestamps, sizes and counts as unsigned 64-bit integers.
INTEGER_LIMIT = 1 << 64


def read_header(path: Path) -> list[str]:
    """The first row of a CSV, names as written (no type checks)."""
    try:
        with open_text(path, confine=False) as fh:  # FIFOs and devices refused, not read
            csv.field_size_limit(_FIELD_LIMIT)
            return next(csv.reader(fh), [])
    except OSError as exc:
        raise bad_file(path, f"cannot read ({exc.strerror})", "check the path and permissions") from exc
    except csv.Error as exc:
        raise bad_file(path, f"not a readable CSV ({exc})") from exc


class Rows:
    """Iterate a CSV as dicts keyed by lower-case header name, tracking the line for messages."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.line = 1
        self.columns: list[str] = []

    def __iter__(self) -> Iterator[dict[str, str]]:
        csv.field_size_limit(_FIELD_LIMIT)
        try:
            with open_text(self.path, confine=False) as fh:
                reader = csv.reader(fh)
                header = next(reader, None)
                if header is None:
                    raise bad_file(self.path, "is empty (no CSV header)")
                self.columns = [h.strip().lower() for h in header]
                for row in reader:
                    self.line = reader.line_num
                    if not row or all(not c.strip() for c in row):
                        continue
                    if len(row) != len(self.columns):
                        raise bad_file(self.path, f"line {self.line} has {len(row)} fields, the header "
                                       f"has {len(self.columns)}", "the file may be truncated or edited")
                    yield dict(zip(self.columns, row))
        except OSError as exc:
            raise bad_file(self.path, f"cannot read ({exc.strerror})") from exc
        except csv.Error as exc:
            raise bad_file(self.path, f"line {self.line}: not valid CSV ({exc})") from exc

    def require(self, *names: str) -> None:
        missing = [n for n in names if n.lower() not in self.columns]
        if missing:
            raise bad_file(self.path, f"missing column(s) {', '.join(missing)}",
                           "is this a rocprofv3 CSV of the expected kind?")

    def number(self, row: dict[str, str], name: str) -> float | None:
        """A numeric cell (int, float or scientific notation); None when the column or value is absent."""
        text = row.get(name.lower())
        if text is None:
            return None
        text = text.strip()
        if not text:
            return None
        try:
            value = float(text)
        except ValueError:
            raise bad_file(self.path, f"line {self.line}: column {name} = {text!r} is not a number") from None
        if not math.isfinite(value):
            raise bad_file(self.path, f"line {self.line}: column {name} = {text!r} is not finite")
        return value

    def integer(self, row: dict[str, str], name: str) -> int | None:
        """An integer cell. Parsed exactly when written as an integer (timestamps exceed 2**53)."""
        text = row.get(name.lower())
        if text is None or not text.strip():
            return None
        text = text.strip()
        try:
            value = int(text)
        except ValueError:
            number = self.number(row, name)
            assert number is not None
            if not number.is_integer():
                raise bad_file(self.path, f"line {self.line}: column {name} = {text!r} is not an integer")
            value = int(number)
        if value < 0:  # ids, timestamps, sizes and register counts are never negative
            raise bad_file(self.path, f"line {self.line}: column {name} = {text[:40]!r} is negative",
                           "fix or regenerate the file", code="bad-value")
        if value >= INTEGER_LIMIT:  # 1e308 or a 400-digit id: no profiler writes it
            raise bad_file(self.path, f"line {self.line}: column {name} = {text[:40]!r} is beyond a "
                           "64-bit value", "fix or regenerate the file", code="bad-value")
        return value
