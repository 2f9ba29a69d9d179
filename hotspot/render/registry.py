"""Which renderer turns each command's Result into each output format (JSON is the Result's own
serialization and needs none). Renderers are named, not imported: `--format json` never loads
table or HTML code. Adding an output format = one renderer module + its entries here."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hotspot.result import Result

Renderer = Callable[["Result"], str]

# command -> format -> (module, function)
RENDERERS: dict[str, dict[str, tuple[str, str]]] = {
    "analyze": {"text": ("hotspot.render.analyze", "render_text"),
                "markdown": ("hotspot.render.analyze", "render_markdown"),
                "html": ("hotspot.render.html", "render_html")},
    "plan": {"text": ("hotspot.render.plan", "render_text"),
             "markdown": ("hotspot.render.plan", "render_markdown")},
    "diff": {"text": ("hotspot.render.diff", "render_text"),
             "markdown": ("hotspot.render.diff", "render_markdown")},
    "occupancy": {"text": ("hotspot.render.occupancy", "render_text"),
                  "markdown": ("hotspot.render.occupancy", "render_markdown")},
    "pmc": {"text": ("hotspot.render.pmc", "render_text"),
            "markdown": ("hotspot.render.pmc", "render_markdown")},
    "kernels": {"text": ("hotspot.render.kernels", "render_text"),
                "markdown": ("hotspot.render.kernels", "render_markdown")},
    "report": {"text": ("hotspot.render.written", "render_written"),
               "markdown": ("hotspot.render.written", "render_written")},
    "collect": {"text": ("hotspot.render.collect", "render_collect"),
                "markdown": ("hotspot.render.collect", "render_collect_markdown")},
    "doctor": {"text": ("hotspot.render.collect", "render_doctor"),
               "markdown": ("hotspot.render.collect", "render_doctor_markdown")},
    "skill install": {"text": ("hotspot.render.skill", "render_install"),
                      "markdown": ("hotspot.render.skill", "render_install")},
    "skill mcp": {"text": ("hotspot.render.skill", "render_mcp"),
                  "markdown": ("hotspot.render.skill", "render_mcp")},
    "skill path": {"text": ("hotspot.render.skill", "render_path"),
                   "markdown": ("hotspot.render.skill", "render_path")},
    "plan detail": {"text": ("hotspot.render.plan", "render_text_detail"),
                    "markdown": ("hotspot.render.plan", "render_markdown_detail")},
    "brief": {"text": ("hotspot.render.plan", "render_brief"),
              "markdown": ("hotspot.render.plan", "render_brief")},
    "cache info": {"text": ("hotspot.render.cache", "render_info"),
                   "markdown": ("hotspot.render.cache", "render_info")},
    "cache clear": {"text": ("hotspot.render.cache", "render_clear"),
                    "markdown": ("hotspot.render.cache", "render_clear")},
    "export": {"text": ("hotspot.render.written", "render_export_written"),
               "markdown": ("hotspot.render.written", "render_export_written")},
}


def lazy(module: str, name: str) -> Renderer:
    """A renderer imported on first use."""
    def render(result: "Result") -> str:
        return getattr(importlib.import_module(module), name)(result)

    return render


def renderers(command: str) -> dict[str, Renderer]:
    """The format -> renderer map of one command (imports nothing until a renderer runs)."""
    return {fmt: lazy(module, name) for fmt, (module, name) in RENDERERS.get(command, {}).items()}
