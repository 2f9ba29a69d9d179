"""Checks on a text or markdown page, independent of hotspot's table code: which lines are wider
than the terminal, which tables hold two identical rows, which markdown tables are malformed."""

from __future__ import annotations

import re

TEXT_RULE = re.compile(r"^-+(  +-+)+$")  # the dashed rule under a text table's headers (2+ columns)
MD_RULE = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")
NUMBER = re.compile(r"[\d.,%+\-−×x#µ/~ ]+(GB|MB|KB|B|ms|µs|ns|s)?")


def wide_lines(text: str, width: int) -> list[str]:
    return [ln for ln in text.split("\n") if len(ln) > width]


def _cells_md(line: str) -> list[str]:
    """The cells of a markdown table row (`\\|` is a pipe inside a cell)."""
    body = line.strip()[1:-1] if line.strip().endswith("|") else line.strip()[1:]
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def text_tables(text: str) -> list[list[str]]:
    """The rows of each text table: the lines under a dashed rule up to a blank line. A line blank
    in every numeric column continues the row above it (a cell wrapped; numbers never wrap)."""
    lines = text.split("\n")
    tables = []
    for k, line in enumerate(lines):
        if not TEXT_RULE.match(line):
            continue
        spans = [m.span() for m in re.finditer(r"-+", line)]
        body: list[str] = []
        for row in lines[k + 1:]:
            if not row.strip() or row.startswith("(not shown at"):
                break
            body.append(row)

        def cell(row: str, span: tuple[int, int]) -> str:
            return row[span[0]:span[1]].strip()

        def is_numeric(span: tuple[int, int]) -> bool:
            filled = [cell(r, span) for r in body if cell(r, span)]
            # most of them: a note right under the table (no blank line) runs across columns
            return bool(filled) and sum(map(bool, map(NUMBER.fullmatch, filled))) >= 0.8 * len(filled)

        numeric = [s for s in spans if is_numeric(s)]
        rows: list[str] = []
        for row in body:
            if rows and numeric and not any(cell(row, s) for s in numeric):
                rows[-1] += "\n" + row
            else:
                rows.append(row)
        tables.append(rows)
    return tables


def markdown_tables(text: str) -> list[tuple[list[str], list[list[str]]]]:
    """(header cells, rows of cells) of each markdown table."""
    lines = text.split("\n")
    out = []
    for k, line in enumerate(lines):
        if k == 0 or not MD_RULE.match(line.strip()) or not lines[k - 1].lstrip().startswith("|"):
            continue
        rows = []
        for row in lines[k + 1:]:
            if not row.lstrip().startswith("|"):
                break
            rows.append(_cells_md(row))
        out.append((_cells_md(lines[k - 1]), rows))
    return out


def duplicate_rows(text: str, markdown: bool) -> list[str]:
    """Rows that appear twice in one table."""
    found = []
    if markdown:
        for _, rows in markdown_tables(text):
            seen: set[tuple[str, ...]] = set()
            for r in rows:
                if tuple(r) in seen:
                    found.append(" | ".join(r))
                seen.add(tuple(r))
        return found
    for rows in text_tables(text):
        seen_text: set[str] = set()
        for r in rows:
            if r in seen_text:
                found.append(r)
            seen_text.add(r)
    return found


def malformed_markdown(text: str) -> list[str]:
    """Markdown table rows whose number of cells differs from their header's."""
    bad = []
    for head, rows in markdown_tables(text):
        bad += [" | ".join(r) for r in rows if len(r) != len(head)]
    return bad


def wide_markdown_prose(text: str, width: int) -> list[str]:
    """Markdown lines wider than `width` that could have been wrapped: prose with a space to
    break at within the width. Table rows, headings and code (fenced, or indented after a blank
    line) cannot be wrapped in markdown and are not counted."""
    out = []
    fenced = False
    previous = ""
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if body.startswith("```"):
            fenced = not fenced
        code = fenced or body.startswith("```") or (len(line) - len(body) >= 4 and not previous.strip())
        if len(line) > width and not code and not body.startswith(("|", "#")) \
                and " " in line[len(line) - len(body):width]:
            out.append(line)
        previous = line
    return out
