"""Which renderer turns each command's Result into each output format (JSON is the Result's own
serialization and needs none): one table keyed by (view, format), for every command. A view is
a command's name, or a named way of showing its Result (`brief`, `plan detail`, `report page`).
The views are declared in each command's SPEC (hotspot/commandspec.py) and read here from the
command index (hotspot/clihelp/index.py `VIEWS`, written by scripts/gen_help.py). Renderers are
named, not imported: `--format json` never loads table or HTML code."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hotspot.clihelp.index import VIEWS

if TYPE_CHECKING:
    from hotspot.result import Result

Renderer = Callable[["Result[Any]"], str]


# (view, format) -> (module, function)
RENDERERS: dict[tuple[str, str], tuple[str, str]] = {
    (view, fmt): (named.partition(":")[0], named.partition(":")[2])
    for view, formats in VIEWS.items() for fmt, named in formats.items()}


def lazy(module: str, name: str) -> Renderer:
    """A renderer imported on first use."""
    def render(result: "Result[Any]") -> str:
        text: str = getattr(importlib.import_module(module), name)(result)
        return text

    return render


def renderer(view: str, fmt: str) -> Renderer | None:
    """The renderer of `view` in `fmt`, None when that view has no such format (imports nothing
    until the renderer runs)."""
    named = RENDERERS.get((view, fmt))
    return lazy(*named) if named is not None else None


def renderers(view: str) -> dict[str, Renderer]:
    """The format -> renderer map of one view."""
    return {fmt: lazy(module, name) for (v, fmt), (module, name) in RENDERERS.items() if v == view}
