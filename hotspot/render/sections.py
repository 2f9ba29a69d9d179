"""Which sections of a text/markdown view are printed (`--section NAME[,NAME]`, `--plan`).

A view builds its output as named sections (`Sections.add(name, text)`); the command says which
are wanted for the run (`showing(names)`, set by hotspot/commands/_run.py around the renderer),
and `Sections.text()` keeps those. The section names of each command are declared once, in its
spec (hotspot/commandspec.py `CommandSpec.sections`); tests/test_sections.py checks that a view
adds no name its spec does not declare.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Generic, TypeVar

P = TypeVar("P")

# None: the view's own default choice (every section it builds unless it marks one optional)
_ASKED: ContextVar[frozenset[str] | None] = ContextVar("hotspot_sections", default=None)


@contextmanager
def showing(names: Collection[str] | None) -> Iterator[None]:
    """Within the block, views print only the sections `names` (None: their default)."""
    token = _ASKED.set(frozenset(names) if names is not None else None)
    try:
        yield
    finally:
        _ASKED.reset(token)


def asked() -> frozenset[str] | None:
    """The sections asked for with --section, None when the view chooses."""
    return _ASKED.get()


def wanted(name: str, default: bool = True) -> bool:
    """Whether section `name` is printed: asked by name, or by the view's `default`."""
    chosen = _ASKED.get()
    return default if chosen is None else name in chosen


class Parts(Generic[P]):
    """The named parts of one view in print order (text, or a CSV table: render/csv_views.py);
    `add` keeps only the wanted ones, and no empty part."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, P]] = []

    def add(self, name: str, part: P, default: bool = True) -> None:
        if part and wanted(name, default):
            self.parts.append((name, part))

    def names(self) -> list[str]:
        return [n for n, _ in self.parts]


class Sections(Parts[str]):
    """The text sections of one view."""

    def text(self, sep: str = "\n\n") -> str:
        return sep.join(t for _, t in self.parts)
