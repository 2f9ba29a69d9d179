"""What a command is, declared once beside its options: `SPEC = CommandSpec(...)` in its adapter
module (hotspot/commands/<name>.py; the MCP server's in hotspot/mcp/command.py, the layer above the
commands it serves). The name, the help text, the views with each format's renderer, whether its
output may be cached and its MCP tools live there; the options are the adapter's typer parameters.

scripts/gen_help.py collects every SPEC into the command index hotspot/clihelp/index.py (the help
pages it records are in pages.py beside it), which the fast paths read without importing any command: cli.py (what
to mount, the top-level listing), the render registry (which renderer a view has in a format), the
output cache (which commands qualify) and the MCP server (which tools exist). tests/test_clihelp.py
fails while the index differs from the specs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

# view -> format -> "module:function" of the renderer (JSON is the Result's own serialization)
Views = Mapping[str, Mapping[str, str]]
# The specs built in this process, by the views they declare: an adapter module builds its SPEC
# before the options that read it (hotspot/commands/options.py `format_option(view)`).
_DECLARED: dict[str, CommandSpec] = {}


def text_and_markdown(module: str, text: str, markdown: str | None = None) -> dict[str, str]:
    """A view's text and markdown renderers (the same function when `markdown` is not named)."""
    return {"text": f"{module}:{text}", "markdown": f"{module}:{markdown or text}"}


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool over a command: which of its parameters it exposes and how."""

    name: str
    description: str = ""              # default: the command's help
    words: tuple[str, ...] = ()        # fixed leading words (`sweep status`)
    only: tuple[str, ...] | None = None  # the CLI parameters exposed (None: all but the hidden ones)
    rename: Mapping[str, str] = field(default_factory=dict)  # CLI parameter -> tool argument
    single: frozenset[str] = frozenset()  # variadic CLI arguments taken as one value
    paths: frozenset[str] = frozenset()   # tool arguments naming files or folders (checked against roots)
    outputs: frozenset[str] = frozenset()  # of `paths`, the files the call writes (never '-', stdout)
    # arguments the tool requires though the command line does not (an output file; PATH, which the
    # CLI's --example stands in for: the tool hides --example and keeps its path required); named by
    # the CLI parameter or the tool argument
    required: frozenset[str] = frozenset()
    help: Mapping[str, str] = field(default_factory=dict)  # a tool argument's own help (renamed ones)
    detail: bool = False               # takes `detail_level` (brief | full)
    remembered: bool = True            # a repeat call on unchanged inputs is answered from memory
    long_running: bool = False         # reports progress; cancellation stops its child processes
    hidden: frozenset[str] = frozenset()  # options of the command that change only its text view
    rank: int = 100                    # its place in the MCP server's tool list (ties: command order)
    command: str = ""                  # the command it runs: set from the CommandSpec holding it


@dataclass(frozen=True)
class CommandSpec:
    name: str
    help: str                 # `hotspot NAME --help` and the line in `hotspot --help`
    rank: int                 # its place in `hotspot --help` (typer lists commands, then groups)
    views: Views              # the command's views (its name, and named ones such as `plan detail`)
    group: bool = False       # a command group (`export perfetto`, `cache info`)
    cacheable: bool = False   # read-only: its output is replayed while nothing it read changed
    tools: tuple[ToolSpec, ...] = ()  # the MCP tools that run it
    # the sections of its text/markdown/csv views, in print order: name -> what it holds
    # (`--section NAME[,NAME]`, `--list-sections`; hotspot/render/sections.py)
    sections: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for view in self.views:
            _DECLARED[view] = self

    def formats(self, view: str | None = None) -> tuple[str, ...]:
        """The `--format` choices of a view (default: the command's own): text, json (no
        renderer), then the view's other formats in the order they are declared."""
        named = self.views[view or self.name]
        return ("text", "json", *(fmt for fmt in named if fmt != "text"))

    def section_names(self, value: str) -> tuple[str, ...]:
        """`--section` VALUE as the spec's section names, in print order: comma-separated, case and
        `_`/space for `-` forgiven. An unknown name is a ValueError naming the valid ones."""
        asked = [v.strip().lower().replace("_", "-").replace(" ", "-") for v in value.split(",")]
        asked = [a for a in asked if a]
        unknown = [a for a in asked if a not in self.sections]
        if unknown or not asked:
            raise ValueError(f"--section {value}: {'unknown section ' + ', '.join(unknown) if unknown else 'no section named'}"
                             f"; {self.name} has {', '.join(self.sections)}")
        return tuple(n for n in self.sections if n in asked)

    def mcp_tools(self) -> tuple[ToolSpec, ...]:
        from dataclasses import replace

        return tuple(replace(t, command=self.name) for t in self.tools)


def formats_of(view: str) -> tuple[str, ...]:
    """The `--format` choices of a view, from the spec that declared it in this process."""
    spec = _DECLARED.get(view)
    if spec is None:
        raise LookupError(f"no command spec declares the view {view!r}: build the adapter's SPEC "
                          "before the options that read it")
    return spec.formats(view)
