"""Table and number formatting shared by every text/markdown renderer."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Sequence

from hotspot.diagnostics import printable, terminal_width
from hotspot.kernel_names import column as name_column

BAR_WIDTH = 24
BAR_HEADER = "share bar"  # the header of a table's bar() column (no wider than BAR_WIDTH)
MIN_COLUMN = 12  # a shortened column keeps at least this many characters (or its header)
LOCATION_COLUMN = 18  # ... and a file:line column this many (`…/name.py:1234` stays readable)
_GAP = 2  # two spaces between columns
UNLIMITED = sys.maxsize  # table(whole=True): a width no table reaches, so no cell is shortened
# Rows table() emitted in this process: fit_text leaves them alone (a row that still does not fit
# is one that cannot be split) and wraps everything else.
_TABLE_ROWS: set[str] = set()
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


def _is_location(cell: str) -> bool:
    return bool(_LOCATION.search(cell)) or (cell.count("/") >= 2 and " " not in cell)


# Columns of sentences: these wrap inside their cell.
PROSE_HEADERS = frozenset({"detail", "fix", "hint", "note", "notes", "why", "evidence", "message",
                           "description", "next", "next step", "what to do", "reason"})
# Columns of kernel names: each row gets the least detail that tells it from the others
# (hotspot/kernel_names.py), wrapped over up to NAME_LINES lines.
NAME_HEADERS = frozenset({"kernel", "kernel name", "name"})
NAME_LINES = 3
NAME_COLUMN = 20  # a name column keeps at least this many characters (or its header)
HARD_COLUMN = 14  # a location or name column's width before the table drops a column
TEXT_LINES = 6  # a text cell wraps over at most this many lines
WORD_COLUMN = 28  # a column narrows to its longest word (file name and line) up to this width
MARKDOWN_NAME = 120  # a kernel name in a markdown table: distinct, at most this long
# a number, a range of them (`~12.60–25.20 MB`), a percentage, a ratio, a change with its interval
# (`−7.2% [−43, +6]`, `3.7 → 8`): never cut or wrapped
# One way to read each character (a unit only right after a number character; `µs` is `µ` then `s`):
# nested repeats would backtrack exponentially on a cell that almost matches ("1, 2, 4 … waves").
_NUMBER_CHAR = r"[\s\d.,%+\-−–×x#µ/~±→\[\]<]"
_NUMERIC = re.compile(rf"(?:{_NUMBER_CHAR}|(?<={_NUMBER_CHAR})(?:TB|GB|MB|KB|B|ms|ns|s))*")
_ROW_PREFIX = re.compile(r"^#\d+(-#?\d+)?(?= )")  # `#53 s_load…`: the row number a label starts with
_NAME_BREAKS = " ,:<(_"


def _unit(cell: str) -> int:
    """The longest piece of `cell` wrapping keeps on one line: a word, or `#row` and its word."""
    words = cell.split(" ")
    if _ROW_PREFIX.match(cell) and len(words) > 1 and len(words[0]) + 1 + len(words[1]) <= WORD_COLUMN:
        words = [words[0] + " " + words[1]] + words[2:]
    return max(map(len, words), default=0)


def _file_line(cell: str) -> str:
    """A location's file name and line (`flash_attn_func.py:258`): what shortening keeps."""
    return cell.rsplit("/", 1)[-1]


def _is_prose(header: str) -> bool:
    return header.strip().lower() in PROSE_HEADERS


def _is_name(header: str) -> bool:
    return header.strip().lower() in NAME_HEADERS


def _kind(header: str, cells: list[str]) -> str:
    """numeric (never cut or wrapped), name, prose, location or text (these wrap or elide)."""
    if all(_NUMERIC.fullmatch(c) for c in cells):
        return "numeric"
    if _is_name(header):
        return "name"
    if _is_prose(header):
        return "prose"
    if any(_is_location(c) for c in cells):
        return "location"
    return "text"


def wrap_words(text: str, width: int, *, indent: str = "", hang: str = "", min_room: int = 1,
               cut_long_words: bool = True) -> list[str]:
    """`text` over lines of `width`, broken between words, never inside one: the first line after
    `indent`, the others after `hang`. A word longer than a line's room (`width` less the hang, at
    least `min_room`) is elided with `cut_long_words` (a path from the left, keeping its file name
    and line number; anything else in its middle), else kept whole (a markdown URL). The one word
    wrapper of the text and markdown views; [""] for an empty text."""
    import textwrap

    if len(indent) + len(text) <= width:
        return [indent + text]
    if cut_long_words:
        room = max(min_room, width - len(hang))
        text = " ".join(w if len(w) <= room else
                        (shorten_left(w, room) if "/" in w else shorten_middle(w, room))
                        for w in text.split(" "))
    return textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=hang, break_long_words=False,
                         break_on_hyphens=False) or [""]


def _wrap_name(text: str, width: int) -> list[str]:
    """A name over lines of `width`, broken after a separator: `, ` first, then `<` `(` `::`,
    then `_`, where one falls in the second half of the line; else at the width."""
    lines: list[str] = []
    while len(text) > width:
        cut = -1
        for seps in (" ", "<(:", "_"):
            cut = max(text.rfind(c, width // 2, width) for c in seps)
            if cut > 0:
                break
        cut = cut + 1 if cut > 0 else width
        lines.append(text[:cut].rstrip())
        text = text[cut:].lstrip(" ")
    lines.append(text)
    return lines


def _wrapped_names(col: list[str], width: int) -> list[list[str]]:
    """Each name elided (keeping what tells it apart) until it wraps into NAME_LINES lines."""
    budget = width * NAME_LINES
    while True:
        split = [_wrap_name(c, width) for c in _elide_column(col, budget)]
        if all(len(p) <= NAME_LINES for p in split) or budget <= width:
            return split
        budget -= max(1, width // 4)


def _elide_column(cells: list[str], width: int) -> list[str]:
    """Cells in `width` characters, different cells kept different, a leading `#row` kept."""
    from hotspot.kernel_names import fit_distinct

    keep = [len(m.group(0)) if (m := _ROW_PREFIX.match(c)) else 0 for c in cells]
    return fit_distinct(cells, width, keep)


def _header_lines(header: str) -> list[str]:
    return header.split("\n")


def _layout(cells: list[list[str]], headers: list[str], width: int,
            colalign: Sequence[str] | None, drop: bool) -> tuple[list[list[list[str]]], list[list[str]], list[int],
                                                      list[str], list[int]]:
    """Column widths for `width`: long headers fold onto two lines, text columns shrink (widest
    first) to their floors, then the right-most columns are dropped (the first never). Returns
    the cells as lines, the headers as lines, the widths, the alignments and the kept columns."""
    ncols = max([len(headers)] + [len(r) for r in cells])
    rows = [r + [""] * (ncols - len(r)) for r in cells]
    heads = [str(headers[i]) if i < len(headers) else "" for i in range(ncols)]
    cols = [[r[i] for r in rows] for i in range(ncols)]
    kinds = [_kind(heads[i], cols[i]) for i in range(ncols)]
    for i in range(ncols):
        if kinds[i] == "name":
            cols[i] = name_column(cols[i])
    content = [max((len(c) for c in cols[i]), default=0) for i in range(ncols)]
    head_lines = [_header_lines(h) for h in heads]

    def head_w(i: int) -> int:
        return max(map(len, head_lines[i]))

    def natural(i: int) -> int:
        return max(content[i], head_w(i))

    def floor(i: int) -> int:
        """How narrow a column may get: a number never shrinks; a location keeps its file name
        and line; wrapped text its longest word (a `#row` with the word after it)."""
        k = kinds[i]
        if k == "numeric":
            return natural(i)
        if k == "name":
            return min(natural(i), max(NAME_COLUMN, head_w(i)))
        if k == "location":
            unit = max((len(_file_line(c)) for c in cols[i] if _is_location(c)), default=0)
            return min(natural(i), max(LOCATION_COLUMN, min(unit + 2, WORD_COLUMN), head_w(i)))
        return min(natural(i), max(min(max(map(_unit, cols[i]), default=0), WORD_COLUMN), head_w(i)))

    def total(keep: list[int], widths: dict[int, int]) -> int:
        return sum(widths[i] for i in keep) + _GAP * (len(keep) - 1)

    keep = list(range(ncols))
    widths = {i: natural(i) for i in keep}
    if total(keep, widths) > width:
        # headers wider than their values fold onto two lines (`L2→fabric` over `read`)
        for i in keep:
            if head_w(i) > content[i]:
                head_lines[i] = _fold_header(heads[i], content[i]).split("\n")
                widths[i] = natural(i)
    def hard_floor(i: int) -> int:
        """Narrower still, before a column is dropped: a location's file name elided in its
        middle (`flash…func.py:258`), a name column to a few words."""
        if kinds[i] in ("location", "name"):
            return min(floor(i), max(HARD_COLUMN, head_w(i)))
        return floor(i)

    floors = {i: floor(i) for i in keep}  # computed once: the loop below asks per character
    hard = {i: min(floors[i], hard_floor(i)) for i in keep}
    while True:
        over = total(keep, widths) - width
        for limit in (floors.__getitem__, hard.__getitem__):
            while over > 0:
                candidates = [i for i in keep if widths[i] > limit(i)]
                if not candidates:
                    break
                widest = max(candidates, key=lambda c: (widths[c] - limit(c), widths[c]))
                widths[widest] -= 1
                over -= 1
        if over <= 0 or len(keep) == 1 or not drop:
            break
        # still too wide with every column at its floor: drop the right-most column (a share
        # bar first), and say so under the table
        bars = [i for i in keep[1:] if heads[i] == BAR_HEADER]
        keep.remove(bars[0] if bars else keep[-1])
    align = [(colalign[i] if colalign and i < len(colalign) and colalign[i] else
              ("right" if kinds[i] == "numeric" else "left")) for i in range(ncols)]
    lines_of: list[list[list[str]]] = [[] for _ in rows]
    for i in keep:
        w = widths[i]
        col = cols[i]
        if kinds[i] == "name":
            split = _wrapped_names(col, w)
        elif kinds[i] == "numeric":
            split = [[c] for c in col]
        elif kinds[i] == "location":
            # file:line cells lose directories from the left; other cells of the column wrap
            split = [[c] if len(c) <= w else [shorten_left(c, w)] if _is_location(c) else
                     wrap_words(c, w) for c in col]
        elif kinds[i] == "prose":
            split = [wrap_words(c, w) for c in col]
        else:
            # wrapped at spaces; only a cell over TEXT_LINES lines is elided (keeping its `#row`
            # and what tells it from the other cells)
            if any(len(c) > w * TEXT_LINES for c in col):
                col = _elide_column(col, w * TEXT_LINES)
            split = [wrap_words(c, w) for c in col]
        for r, parts in enumerate(split):
            lines_of[r].append(parts)
    return ([[list(p) for p in row] for row in lines_of], [head_lines[i] for i in keep],
            [widths[i] for i in keep], [align[i] for i in keep], keep)


def _pad(text: str, width: int, how: str) -> str:
    if how == "right":
        return text.rjust(width)
    if how == "center":
        return text.center(width)
    return text.ljust(width)


def _simple(cells: list[list[str]], headers: list[str], width: int,
            colalign: Sequence[str] | None, drop: bool) -> str:
    """The table in tabulate's "simple" look (headers, a dashed rule, rows; two spaces between
    columns), laid out to fit `width` (see _layout); dropped columns are named under it."""
    rows, heads, widths, align, keep = _layout(cells, headers, width, colalign, drop)
    ncols = max([len(headers)] + [len(r) for r in cells])
    height = max(len(h) for h in heads)
    out: list[str] = []
    for k in range(height):
        out.append("  ".join(_pad(h[k] if k < len(h) else "", w, a)
                             for h, w, a in zip(heads, widths, align)).rstrip())
    out.append("  ".join("-" * w for w in widths))
    for row in rows:
        for k in range(max(len(p) for p in row)):
            out.append("  ".join(_pad(p[k] if k < len(p) else "", w, a)
                                 for p, w, a in zip(row, widths, align)).rstrip())
    dropped = [str(headers[i]).replace("\n", " ") or f"column {i + 1}" for i in range(ncols) if i not in keep]
    if dropped:
        import textwrap

        out += textwrap.wrap(f"(not shown at {width} columns: {', '.join(dropped)}; --format json has "
                             "every column)", width, subsequent_indent=" ", break_long_words=False)
    return "\n".join(out)


def table(rows: Iterable[Sequence[object]], headers: Sequence[str], markdown: bool = False,
          colalign: Sequence[str] | None = None, width: int | None = None, drop: bool = True,
          whole: bool = False) -> str:
    """A table. In text it fits the terminal without cutting a word or a number: long headers
    fold, text wraps in its cell, names keep what tells the rows apart, and only when all that is
    not enough the right-most columns are left out (and named; with `drop=False` the table is
    as narrow as it gets, for a caller that has another layout to try). With `whole` every cell
    is whole on one line and the table as wide as they make it (for a caller that fits the width
    by choosing columns: render/sweep.py's report). Markdown keeps whole cells, kernel
    names shortened to what tells them apart (JSON has them in full)."""
    rows = [list(r) for r in rows]
    if not rows:
        return "(none)"
    if markdown:
        # a `|` or a newline from a kernel name or source line would end the cell or the row
        md_cells = [[_md_cell(c) for c in r] for r in rows]
        for i, h in enumerate(headers):
            if _is_name(str(h)):
                col = name_column([str(r[i]) if i < len(r) else "" for r in md_cells])
                col = _elide_column(col, MARKDOWN_NAME)
                for r, v in zip(md_cells, col):
                    if i < len(r):
                        r[i] = v
        from tabulate import tabulate

        text: str = tabulate(md_cells, headers=[_md_cell(h) for h in headers], tablefmt="github",
                             colalign=colalign, disable_numparse=True)
        return text
    cells = [["" if c is None else printable(str(c), newlines=False) for c in r] for r in rows]
    out = _simple(cells, [str(h) for h in headers], UNLIMITED if whole else width or terminal_width(), colalign,
                  drop and not whole)
    _TABLE_ROWS.update(out.split("\n"))
    return out


def _md_cell(value: object) -> str | int | float:
    if value is None:
        return ""
    if isinstance(value, (int, float)):
        return value  # tabulate formats numbers itself
    return printable(str(value), newlines=False).replace("|", "\\|")


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
    w = width or terminal_width()
    out: list[str] = []
    for line in text.split("\n"):
        body = line.lstrip(" ")
        if len(line) <= w or line in _TABLE_ROWS or set(body) <= {"-", " ", "="}:
            out.append(line)
            continue
        out.extend(_wrap_prose(line, w, cut_long_words=True))
    return "\n".join(out)


def _wrap_prose(line: str, w: int, cut_long_words: bool) -> list[str]:
    """A prose line over lines of `w`, continued under its label (`fix:  `), bullet or indent
    (wrap_words; a word longer than a line shortened with `cut_long_words`, else kept whole)."""
    body = line.lstrip(" ")
    indent = line[: len(line) - len(body)]
    label = re.match(r"(\S[^:]{0,24}?:? {2,}|\S{1,24}: +)(?=\S)", body)
    bullet = re.match(r"([-*•]|\d+\.|\[[^\]]{1,12}\]) ", body)
    hang = len(label.group(0)) if label else len(bullet.group(0)) if bullet else 2
    sub = indent + " " * (hang if hang < w // 2 else 2)
    lines = wrap_words(body, w, indent=indent, hang=sub, min_room=MIN_COLUMN, cut_long_words=cut_long_words)
    return lines if lines != [""] else [line]


def fit_markdown(text: str, width: int | None = None) -> str:
    """Markdown prose wrapped to `width` as fit_text wraps text: a wrapped line continues its
    paragraph or list item, so the document renders the same. Table rows, headings, fenced and
    indented code are left whole (markdown cannot break them); so is any word (a URL, a path)."""
    w = width or terminal_width()
    out: list[str] = []
    fenced = False
    previous = ""
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        if stripped.startswith("```"):
            fenced = not fenced
        code = fenced or stripped.startswith("```") or (
            len(line) - len(stripped) >= 4 and not previous.strip())
        if len(line) <= w or code or stripped.startswith(("|", "#")):
            out.append(line)
        else:
            out.extend(_safe_continuations(_wrap_prose(line, w, cut_long_words=False), w))
        previous = line
    return "\n".join(out)


# A line starting like this would open a list, a heading or a quote instead of continuing.
_BLOCK_START = re.compile(r"([-*+>]|#{1,6}|\d{1,9}[.)])(\s|$)|[=-]+$")


def _safe_continuations(lines: list[str], width: int) -> list[str]:
    """Wrapped markdown lines where no continuation starts a block: the word before such a start
    moves down to begin the line, and the rest is wrapped again."""
    k = 1
    while k < len(lines):
        body = lines[k].lstrip(" ")
        if _BLOCK_START.match(body) and " " in lines[k - 1].strip():
            indent = lines[k][: len(lines[k]) - len(body)]
            head, last = lines[k - 1].rsplit(" ", 1)
            rest = " ".join([last, body] + [ln.strip() for ln in lines[k + 1:]])
            lines = lines[:k - 1] + [head] + wrap_words(rest, width, indent=indent, hang=indent,
                                                        cut_long_words=False)
        k += 1
    return lines


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
    if _LOCATION.search(text):
        return shorten_middle(text, width)  # `flash_a…func.py:258`: the start of the name stays
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
