"""The text view of `analyze` on the bundled example: every table column has a header (the bar
columns too)."""

from __future__ import annotations

import re

BLOCKS = "█▉▊▋▌▍▎▏"


def _tables(text: str) -> list[tuple[str, str, list[str]]]:
    """(header line, dash line, rows) of every plain-text table: a line of dash runs under a header."""
    lines = text.splitlines()
    out = []
    for i, line in enumerate(lines[1:], 1):
        if re.fullmatch(r"-+(  +-+)+", line):
            rows = []
            for row in lines[i + 1:]:
                if not row.strip():
                    break
                rows.append(row)
            out.append((lines[i - 1], line, rows))
    return out


def test_every_bar_column_has_a_header(cli) -> None:
    r = cli("--no-cache", "analyze", "--example")
    assert r.exit_code == 0, r.stderr
    with_bars = 0
    for header, dashes, rows in _tables(r.stdout):
        for m in re.finditer(r"-+", dashes):
            cells = [row[m.start():m.end()] for row in rows]
            if any(ch in BLOCKS for cell in cells for ch in cell):
                with_bars += 1
                assert header[m.start():m.end()].strip(), (header, dashes)
    assert with_bars >= 2  # stall by category, lgkmcnt producers


def test_markdown_bar_columns_have_a_header(cli) -> None:
    r = cli("--no-cache", "analyze", "--example", "--format", "markdown")
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    checked = 0
    for i, line in enumerate(lines[2:], 2):
        if line.startswith("|") and any(ch in BLOCKS for ch in line) and lines[i - 1].startswith("|"):
            # walk up to this table's header (the line above the |---| rule)
            j = i
            while not re.fullmatch(r"\|[-:| ]+\|", lines[j - 1]):
                j -= 1
            header = [c.strip() for c in lines[j - 2].strip("|").split("|")]
            row = [c.strip() for c in line.strip("|").split("|")]
            col = next(k for k, c in enumerate(row) if any(ch in BLOCKS for ch in c))
            assert header[col], lines[j - 2]
            checked += 1
    assert checked


def test_analyze_plan_prints_one_header(cli) -> None:
    data = cli("--no-cache", "analyze", "--example", "--plan", "--format", "json").json()["data"]
    kernel, gfx = data["dispatch"]["kernel"], data["arch"]["gfx"]
    # analyze, analyze --plan and plan: the verdict's first line (kernel on arch) is the one header
    for argv in (("analyze", "--example"), ("analyze", "--example", "--plan"), ("plan", "--example"),
                 ("analyze", "--example", "--plan", "--detail"), ("plan", "--example", "--detail")):
        text = cli("--no-cache", *argv).stdout
        headers = [ln for ln in text.splitlines() if ln.startswith("hotspot")]
        assert len(headers) == 1 and headers[0].startswith(f"hotspot: {kernel} on {gfx}"), argv
        assert text.splitlines()[0] == headers[0], argv
        md = cli("--no-cache", *argv, "--format", "markdown").stdout
        titles = [ln for ln in md.splitlines() if ln.startswith(("# ", "hotspot"))]
        assert titles == [f"# hotspot {argv[0]}: {kernel} on {gfx} ({data['arch']['product']})"], (argv, titles)
