"""Which renderer turns each command's Result into each output format (JSON is the Result's own
serialization and needs none): one table keyed by (view, format), for every command. A view is
a command's name, or a named way of showing its Result (`brief`, `plan detail`, `report page`).
Renderers are named, not imported: `--format json` never loads table or HTML code. The `--format`
choices of each command are read from here (hotspot/commands/options.py `format_option`), so adding
an output format = one renderer module + its entries here (+ the regenerated help snapshot)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hotspot.result import Result

Renderer = Callable[["Result[Any]"], str]


def _both(module: str, text: str, markdown: str | None = None) -> dict[str, tuple[str, str]]:
    """A view's text and markdown renderers (the same function when `markdown` is not named)."""
    return {"text": (module, text), "markdown": (module, markdown or text)}


_VIEWS: dict[str, dict[str, tuple[str, str]]] = {
    "analyze": {**_both("hotspot.render.analyze", "render_text", "render_markdown"),
                "html": ("hotspot.render.html", "render_html")},
    "plan": _both("hotspot.render.plan", "render_text", "render_markdown"),
    "plan detail": _both("hotspot.render.plan", "render_text_detail", "render_markdown_detail"),
    "brief": _both("hotspot.render.plan", "render_brief"),
    "diff": _both("hotspot.render.diff", "render_text", "render_markdown"),
    "occupancy": _both("hotspot.render.occupancy", "render_text", "render_markdown"),
    "pmc": _both("hotspot.render.pmc", "render_text", "render_markdown"),
    "kernels": _both("hotspot.render.kernels", "render_text", "render_markdown"),
    "report": _both("hotspot.render.written", "render_written"),
    # `report -o -`: the page itself on stdout
    "report page": {"text": ("hotspot.render.html", "render_html")},
    "export": _both("hotspot.render.written", "render_export_written"),
    # `export perfetto -o -`: the trace was streamed to stdout while it was made
    "export stream": {"text": ("hotspot.render.written", "render_streamed")},
    "collect": _both("hotspot.render.collect", "render_collect", "render_collect_markdown"),
    "doctor": _both("hotspot.render.collect", "render_doctor", "render_doctor_markdown"),
    "skill install": _both("hotspot.render.skill", "render_install"),
    "skill mcp": _both("hotspot.render.skill", "render_mcp"),
    "skill path": _both("hotspot.render.skill", "render_path"),
    "cache info": _both("hotspot.render.cache", "render_info"),
    "cache clear": _both("hotspot.render.cache", "render_clear"),
    "sweep": _both("hotspot.render.sweep", "render_sweep", "render_sweep_markdown"),
    "sweep init": _both("hotspot.render.sweep", "render_init"),
    "sweep status": _both("hotspot.render.sweep", "render_status", "render_status_markdown"),
    "sweep report": _both("hotspot.render.sweep", "render_report", "render_report_markdown"),
    "sweep cancel": _both("hotspot.render.sweep", "render_cancel"),
}

# (view, format) -> (module, function)
RENDERERS: dict[tuple[str, str], tuple[str, str]] = {
    (view, fmt): named for view, formats in _VIEWS.items() for fmt, named in formats.items()}


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


def output_formats(view: str) -> tuple[str, ...]:
    """The `--format` choices of a command's view: text, json (the Result's own serialization, no
    renderer), then the view's other formats in table order."""
    named = [fmt for v, fmt in RENDERERS if v == view]
    return ("text", "json", *(fmt for fmt in named if fmt != "text"))
