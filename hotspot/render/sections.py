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


class Sections:
    """The sections of one view in print order; `add` keeps only the wanted ones."""

    def __init__(self) -> None:
        self.parts: list[tuple[str, str]] = []

    def add(self, name: str, text: str, default: bool = True) -> None:
        if text and wanted(name, default):
            self.parts.append((name, text))

    def names(self) -> list[str]:
        return [n for n, _ in self.parts]

    def text(self, sep: str = "\n\n") -> str:
        return sep.join(t for _, t in self.parts)
