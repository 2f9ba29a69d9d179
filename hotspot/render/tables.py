"""Table and number formatting shared by every text/markdown renderer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tabulate import tabulate

BAR_WIDTH = 24


def table(rows: Iterable[Sequence[object]], headers: Sequence[str], markdown: bool = False,
          colalign: Sequence[str] | None = None) -> str:
    rows = [list(r) for r in rows]
    if not rows:
        return "(none)"
    return tabulate(rows, headers=list(headers), tablefmt="github" if markdown else "simple",
                    colalign=colalign, disable_numparse=True)


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
    """Keep the end: `…/kernels/mla_fwd_decode.py:393` (the file name and line number always show)."""
    if len(text) <= width:
        return text
    return "…" + text[len(text) - max(1, width - 1):]
