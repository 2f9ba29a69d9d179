"""Table and number formatting shared by every text/markdown renderer."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from hotspot.diagnostics import printable, terminal_width

BAR_WIDTH = 24
BAR_HEADER = "share bar"  # the header of a table's bar() column (no wider than BAR_WIDTH)
MIN_COLUMN = 12  # a shortened column keeps at least this many characters (or its header)
LOCATION_COLUMN = 18  # ... and a file:line column this many (`…/name.py:1234` stays readable)
_GAP = 2  # tabulate "simple" puts two spaces between columns
# Rows table() emitted in this process: fit_text leaves them alone (a row that still does not fit
# is one that cannot be split) and wraps everything else.
_TABLE_ROWS: set[str] = set()
_SIGNATURE = re.compile(r"\w[<(]")
_LOCATION = re.compile(r"(^|[/\\])[^/\\\s]+:\d+$|^#\d+$")


def shorten_middle(text: str, width: int) -> str:
    """Keep the start (a kernel's base name) and the end: `ck::kernel_gemm<…>…(int, int)`."""
    if len(text) <= width:
        return text
    if width < 3:
        return text[:width]
    head = (width - 1 + 1) // 2
    tail = width - 1 - head
    return text[:head] + "…" + (text[len(text) - tail:] if tail else "")


def short_kernel_name(name: str) -> str:
    """A kernel's short form for titles and tables: no `void `/return type, no parameter list, and
    template arguments elided (`ck::kernel_batched_gemm<…>`). The full name stays in JSON."""
    text = name.strip()
    if text.startswith("void "):
        text = text[5:]
    if not re.match(r"[A-Za-z_:~]", text):
        return name  # not a C++ name: nothing to elide
    # drop the parameter list: the last top-level "(...)" that ends the name
    depth, cut = 0, None
    for i in range(len(text) - 1, -1, -1):
        c = text[i]
        if c == ")":
            depth += 1
        elif c == "(":
            depth -= 1
            if depth == 0:
                cut = i
                break
    if cut and text.endswith(")"):
        text = text[:cut]
    out, depth = [], 0
    for c in text:
        if c == "<":
            if depth == 0:
                out.append("<…>")
            depth += 1
        elif c == ">" and depth:
            depth -= 1
        elif depth == 0:
            out.append(c)
    short = "".join(out).strip()
    return short or name


def _is_location(cell: str) -> bool:
    return bool(_LOCATION.search(cell)) or (cell.count("/") >= 2 and " " not in cell)


# Columns of sentences: these wrap inside their cell; any other text column is shortened.
PROSE_HEADERS = frozenset({"detail", "fix", "hint", "note", "notes", "why", "evidence", "message",
                           "description", "next", "next step", "what to do", "reason"})


def _is_prose(header: str) -> bool:
    return header.strip().lower() in PROSE_HEADERS


def fit_columns(rows: list[list[str]], headers: Sequence[str], width: int, header_pad: int = 2
                ) -> tuple[list[list[str]], list[int | None]]:
    """Shrink the widest text columns (one character at a time, so wide columns meet in the
    middle) until the table fits `width`: prose columns (PROSE_HEADERS) wrap inside their cell,
    locations are shortened from the left (the line number stays), names in the middle. Numbers
    are never cut; a table that still does not fit is as narrow as it can be."""
    ncols = max([len(headers)] + [len(r) for r in rows])
    lines = [str(headers[i]).split("\n") if i < len(headers) else [""] for i in range(ncols)]
    head = [" ".join(h) for h in lines]
    head_w = [max(map(len, h)) for h in lines]
    # tabulate pads headers by MIN_PADDING (two unless folded), so a header is that much wider
    widths = [max([head_w[i] + header_pad] + [len(r[i]) for r in rows if i < len(r)]) for i in range(ncols)]
    numeric = [all(re.fullmatch(r"[\s\d.,%+\-−×x#µ/]*", r[i] if i < len(r) else "") for r in rows)
               for i in range(ncols)]
    floors = [max(MIN_COLUMN if not any(_is_location(r[i]) for r in rows if i < len(r)) else
                  LOCATION_COLUMN, head_w[i] + header_pad) for i in range(ncols)]
    new = list(widths)
    over = sum(widths) + _GAP * (ncols - 1) - width
    while over > 0:
        candidates = [i for i in range(ncols) if not numeric[i] and new[i] > floors[i]]
        if not candidates:
            break
        new[max(candidates, key=lambda c: new[c])] -= 1
        over -= 1
    wraps: list[int | None] = [None] * ncols
    for i in range(ncols):
        if new[i] >= widths[i]:
            continue
        if _is_prose(head[i]):
            wraps[i] = new[i]
            continue
        kernel_col = head[i].strip().lower() in ("kernel", "kernel name", "name")
        for r in rows:
            if kernel_col and i < len(r) and len(r[i]) > new[i] and _SIGNATURE.search(r[i]):
                r[i] = short_kernel_name(r[i])  # the base name first, template arguments elided
            if i < len(r) and len(r[i]) > new[i]:
                r[i] = shorten_left(r[i], new[i]) if _is_location(r[i]) else shorten_middle(r[i], new[i])
    return rows, wraps


def table(rows: Iterable[Sequence[object]], headers: Sequence[str], markdown: bool = False,
          colalign: Sequence[str] | None = None, width: int | None = None) -> str:
    """A table; in text it fits the terminal (see fit_columns), markdown keeps full cells."""
    rows = [list(r) for r in rows]
    if not rows:
        return "(none)"
    if markdown:
        # a `|` or a newline from a kernel name or source line would end the cell or the row
        md_cells = [[_md_cell(c) for c in r] for r in rows]
        from tabulate import tabulate

        text: str = tabulate(md_cells, headers=[_md_cell(h) for h in headers], tablefmt="github",
                        colalign=colalign, disable_numparse=True)
        return text
    cells = [["" if c is None else printable(str(c), newlines=False) for c in r] for r in rows]
    w = width or terminal_width()
    out = _simple(cells, list(headers), w, colalign, header_pad=2)
    if max(map(len, out.split("\n"))) > w:
        # Still too wide: headers longer than their column's values (`L2→fabric read` over
        # `7.89 GB`) fold onto two lines, without tabulate's two-character header padding.
        folded = [_fold_header(str(h), max((len(r[i]) for r in cells if i < len(r)), default=0))
                  for i, h in enumerate(headers)]
        narrower = _simple(cells, folded, w, colalign, header_pad=0)
        if max(map(len, narrower.split("\n"))) < max(map(len, out.split("\n"))):
            out = narrower
    _TABLE_ROWS.update(out.split("\n"))
    return out


def full_table(rows: Iterable[Sequence[object]], headers: Sequence[str]) -> str:
    """A text table of whole cells: nothing shortened or wrapped, headers not padded beyond their
    column. For callers that fit the width by choosing columns (render/sweep.py's report)."""
    cells = [["" if c is None else printable(str(c), newlines=False) for c in r] for r in rows]
    if not cells:
        return "(none)"
    import tabulate as tabulate_module

    saved = tabulate_module.MIN_PADDING
    tabulate_module.MIN_PADDING = 0
    try:
        text: str = tabulate_module.tabulate(cells, headers=list(headers), tablefmt="simple", disable_numparse=True)
    finally:
        tabulate_module.MIN_PADDING = saved
    _TABLE_ROWS.update(text.split("\n"))
    return text


def _md_cell(value: object) -> str | int | float:
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return value  # tabulate formats numbers itself
    return printable(str(value), newlines=False).replace("|", "\\|")


def _simple(cells: list[list[str]], headers: list[str], width: int,
            colalign: Sequence[str] | None, header_pad: int) -> str:
    import tabulate as tabulate_module

    fitted, wraps = fit_columns([list(r) for r in cells], headers, width, header_pad)
    saved = tabulate_module.MIN_PADDING
    tabulate_module.MIN_PADDING = header_pad
    try:
        text: str = tabulate_module.tabulate(fitted, headers=headers, tablefmt="simple", colalign=colalign,
                        disable_numparse=True,
                        maxcolwidths=wraps if any(x is not None for x in wraps) else None)
    finally:
        tabulate_module.MIN_PADDING = saved
    return text


def _fold_header(header: str, cell_width: int) -> str:
    """A header wider than its values split onto two lines at the space, underscore or hyphen
    nearest its middle (`L2→fabric\nread`, `TCC_EA0_\nRDREQ_32B_sum`); others unchanged."""
    if len(header) <= cell_width or "\n" in header:
        return header
    cuts = [i + 1 for i, c in enumerate(header) if c in " _-" and 0 < i < len(header) - 1]
    if not cuts:
        return header
    mid = len(header) / 2
    cut = min(cuts, key=lambda i: (max(i, len(header) - i), abs(i - mid)))
    first, second = header[:cut], header[cut:]
    return f"{first.rstrip()}\n{second}"


def verbatim(text: str) -> str:
    """Mark lines fit_text must not wrap (commands, YAML: wrapping breaks copy and paste)."""
    _TABLE_ROWS.update(text.split("\n"))
    return text


def fit_text(text: str, width: int | None = None) -> str:
    """Wrap prose lines longer than `width` (hints, notes, findings) under their own indent; table
    rows (two-space column gaps) and rules are left alone: a row that still does not fit is one
    that cannot be split."""
    import textwrap

    w = width or terminal_width()
    out: list[str] = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if len(line) <= w or line in _TABLE_ROWS or set(body) <= {"-", " ", "="}:
            out.append(line)
            continue
        indent = line[: len(line) - len(body)]
        label = re.match(r"(\S[^:]{0,24}?:? {2,}|\S{1,24}: +)(?=\S)", body)
        bullet = re.match(r"([-*•]|\d+\.|\[[^\]]{1,12}\]) ", body)
        hang = len(label.group(0)) if label else len(bullet.group(0)) if bullet else 2
        sub = indent + " " * (hang if hang < w // 2 else 2)
        room = max(MIN_COLUMN, w - len(sub))
        # a word longer than a line (a path, a mangled name) is shortened, not split: paths from
        # the left (the file name and line number stay), anything else in the middle
        words = body.split(" ")
        body = " ".join(
            word if len(word) <= room else
            (shorten_left(word, room) if "/" in word else shorten_middle(word, room))
            for word in words)
        out.extend(textwrap.wrap(body, w, initial_indent=indent, subsequent_indent=sub,
                                 break_on_hyphens=False, break_long_words=False) or [line])
    return "\n".join(out)


def bar(fraction: float, width: int = BAR_WIDTH) -> str:
    """A text bar for a 0..1 fraction (eighth-block resolution)."""
    fraction = max(0.0, min(1.0, fraction))
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    partial = " ▏▎▍▌▋▊▉"[rest] if rest else ""
    return ("█" * full + partial).ljust(width)


def num(value: float | int | None) -> str:
    """Thousands-separated integer or 1-decimal float; blank for None (not collected)."""
    if value is None:
        return ""
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.1f}"


def pct(value: float | None, digits: int = 1) -> str:
    if value is None:
        return ""
    return f"{value:.{digits}f}%"


def heading(title: str, markdown: bool = False) -> str:
    if markdown:
        return f"## {title}"
    return f"{title}\n{'-' * len(title)}"


def shorten(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    return text[: max(1, width - 1)] + "…"


def shorten_left(text: str, width: int) -> str:
    """Keep the end: `…/kernels/mla_fwd_decode.py:393`. A path loses whole directories first, so
    the file name and line number always show whole; only a file name longer than the width is
    cut, in its middle, keeping its start and its end (`…/FlyDSL-l…_gemm.py:59`)."""
    if len(text) <= width:
        return text
    if "/" in text:
        cuts = [i for i, c in enumerate(text) if c == "/"]
        fit = next((i for i in cuts if len(text) - i + 1 <= width), None)
        if fit is not None:
            return "…" + text[fit:]
        name = text[cuts[-1]:]  # "/file.py:59"
        if width > 2:
            return "…" + shorten_middle(name, width - 1)
    return "…" + text[len(text) - max(1, width - 1):]


def shorten_words(text: str, width: int) -> str:
    """Cut a title at a word boundary with `…` (a single word longer than the width is cut)."""
    if len(text) <= width:
        return text
    cut = text.rfind(" ", 0, max(1, width - 1) + 1)
    head = text[:cut] if cut > 0 else text[: max(1, width - 1)]
    if head.count("(") > head.count(")") and head.rfind("(") > 0:
        head = head[:head.rfind("(")]  # no half parenthetical: "(4…"
    return head.rstrip(" ,;:(-–") + "…"
