"""Help pages printed without typer (hotspot/clihelp): the snapshot is what the commands register,
every page reads byte for byte as typer prints it at every terminal width, and any other command
line is left to typer."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from hotspot import clihelp
from hotspot.examples import example_dispatch_dir
from hotspot.clihelp.index import HELP
from hotspot.clihelp.pages import PAGES
from tests.conftest import PROJECT_ROOT, run_cli

sys.path.insert(0, str(PROJECT_ROOT / "scripts"))

import gen_help  # noqa: E402  (scripts/gen_help.py)

# click's widths: min(COLUMNS, 80) - 2, at least 50
WIDTHS = range(clihelp.MIN_WIDTH, clihelp.MAX_WIDTH - 1)


def _served(argv: list[str]) -> tuple[int | None, str, str]:
    out = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    err = io.TextIOWrapper(io.BytesIO(), encoding="utf-8")
    with redirect_stdout(out), redirect_stderr(err):
        code = clihelp.serve(argv)
    out.flush()
    err.flush()
    return code, out.buffer.getvalue().decode(), err.buffer.getvalue().decode()


def test_snapshot_is_what_the_commands_register() -> None:
    generated = gen_help.generate()
    assert set(generated) == {gen_help.INDEX, gen_help.PAGES}
    for target, src in generated.items():
        assert src == target.read_text(), f"{target.name}: the help snapshot is stale: run python scripts/gen_help.py"
    assert list(HELP) == list(PAGES)  # the index names every page, in the same order


def test_a_command_that_prints_no_help_does_not_import_the_pages() -> None:
    """The pages (~58 KB) are read by a help call only; a run reads the small index."""
    probe = ("import sys; from hotspot.console import main; sys.argv = ['hotspot', *sys.argv[1:]]; "
             "code = main(); print(code, 'hotspot.clihelp.index' in sys.modules, "
             "'hotspot.clihelp.pages' in sys.modules, file=sys.stderr)")

    def run(*argv: str) -> str:
        done = subprocess.run([sys.executable, "-c", probe, *argv], capture_output=True, text=True,
                              cwd=PROJECT_ROOT, timeout=300, env={**os.environ, "HOTSPOT_CACHE": "off"})
        return done.stderr.strip().splitlines()[-1]

    example = str(example_dispatch_dir())
    assert run("plan", example) == "0 True False"          # two words: could have been a page
    assert run("plan", "--example", "--brief") == "0 True False"
    assert run("plan", "--help") == "0 True True"
    assert run("plan") == "2 True True"                    # no arguments: plan's page, exit 2


def test_every_command_has_a_page() -> None:
    from hotspot.cli import LISTING

    assert {name for name, _, _ in LISTING} <= set(PAGES)
    assert {"", "export perfetto", "skill install", "cache clear"} <= set(PAGES)


@pytest.mark.parametrize("page", list(PAGES))
def test_page_reads_as_typer_prints_it_at_every_width(page: str, monkeypatch) -> None:
    words = page.split()
    names, no_args_is_help = HELP[page]
    for width in WIDTHS:
        monkeypatch.setenv("COLUMNS", str(width + 2))
        real = run_cli(*words, "--help")
        assert real.exit_code == 0
        assert _served([*words, "--help"]) == (0, real.stdout, ""), f"{page!r} at width {width}"
    for columns in ("10", "300"):  # clamped to 50 and 78
        monkeypatch.setenv("COLUMNS", columns)
        real = run_cli(*words, "-h")
        assert _served([*words, "-h"]) == (real.exit_code, real.stdout, real.stderr)
    monkeypatch.delenv("COLUMNS")
    assert set(names) == {"-h", "--help"}
    if no_args_is_help:  # the page on stderr and exit 2, as click's NoArgsIsHelpError
        real = run_cli(*words)
        assert real.exit_code == 2 and real.stdout == ""
        assert _served(words) == (2, "", real.stderr)


@pytest.mark.parametrize("argv", [
    ["analyze"],                          # runs the command (no_args_is_help is off)
    ["analyze", "DIR", "--help"],          # typer decides what a help after arguments means
    ["--help", "analyze"],
    ["analyze", "--format", "json", "--help"],
    ["nosuchcommand", "--help"],
    ["sweep", "recipes.yaml", "--help"],   # a help after a recipes file: typer decides
    ["export", "perfetto", "x", "-h"],
    ["--version"],
    ["--", "--help"],
    ["analyze", "--", "--help"],
    ["--help", "--help"],
    ["a", "b", "c", "--help"],
    ["", "--help"],
])
def test_other_command_lines_are_left_to_typer(argv: list[str]) -> None:
    assert _served(argv) == (None, "", "")


def test_global_flags_are_ignored_as_the_cli_does() -> None:
    plain = _served(["analyze", "--help"])
    assert plain[0] == 0
    assert _served(["--quiet", "analyze", "--pretty", "--help", "--no-cache"]) == plain


def test_completion_is_left_to_typer(monkeypatch) -> None:
    monkeypatch.setenv("_HOTSPOT_COMPLETE", "complete_bash")
    assert _served(["--help"]) == (None, "", "")


@pytest.mark.parametrize("broken", ["empty", "no pages module", "no index module"])
def test_a_missing_or_stale_snapshot_is_left_to_typer(broken: str, monkeypatch) -> None:
    """pages.py empty or gone, or the index gone: no traceback, typer prints its own help."""
    import sys as _sys
    import types

    if broken == "empty":
        stale = types.ModuleType("hotspot.clihelp.pages")
        stale.PAGES = {}  # type: ignore[attr-defined]
        monkeypatch.setitem(_sys.modules, "hotspot.clihelp.pages", stale)
    else:  # None in sys.modules: the import raises ModuleNotFoundError, as for a deleted file
        name = "pages" if broken == "no pages module" else "index"
        monkeypatch.setitem(_sys.modules, f"hotspot.clihelp.{name}", None)
    assert _served(["sweep", "--help"]) == (None, "", "")
    assert _served(["--help"]) == (None, "", "")


def test_a_stream_that_is_not_utf8_is_left_to_typer() -> None:
    out = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    with redirect_stdout(out):
        assert clihelp.serve(["--help"]) is None
    out.flush()
    assert out.buffer.getvalue() == b""


def _launch(args: list[str], **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "hotspot", *args], capture_output=True, timeout=60,
                          env={**os.environ, **env})


def _typer_only(args: list[str], **env: str) -> subprocess.CompletedProcess:
    code = "import sys; from hotspot.cli import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, timeout=60,
                          env={**os.environ, **env})


@pytest.mark.parametrize("args", [["--help"], ["analyze", "--help"], [], ["export"]])
def test_a_help_process_imports_neither_typer_nor_rich_nor_the_cache(args: list[str]) -> None:
    probe = ("import io, os, sys; sys.argv[1:] = {args!r}; "
             "sink = lambda: io.TextIOWrapper(open(os.devnull, 'wb'), encoding='utf-8'); "
             "sys.stdout, sys.stderr = sink(), sink(); "
             "from hotspot.console import main; code = main(); "
             "mods = sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'click', 'rich', 'orjson') "
             "or m.startswith(('hotspot.cache', 'hotspot.commands', 'hotspot.cli.'))); "
             "sys.__stdout__.write(repr((code, mods)))")
    p = subprocess.run([sys.executable, "-c", probe.format(args=args)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stderr
    assert eval(p.stdout) == (0 if args[-1:] == ["--help"] else 2, [])


@pytest.mark.parametrize("env", [{}, {"PYTHONIOENCODING": "ascii"}, {"COLUMNS": "61"}])
def test_the_launcher_prints_what_typer_prints(env: dict[str, str]) -> None:
    for args in (["--help"], ["cache", "clear", "-h"], ["export"]):
        fast, slow = _launch(args, **env), _typer_only(args, **env)
        assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout, slow.stderr)


def test_a_closed_pipe_ends_as_with_typer() -> None:
    def run(argv: list[str]) -> tuple[int, bytes]:
        r, w = os.pipe()
        os.close(r)  # every write fails with EPIPE
        try:
            p = subprocess.run(argv, stdout=w, stderr=subprocess.PIPE, timeout=60)
        finally:
            os.close(w)
        return p.returncode, p.stderr

    code = "import sys; from hotspot.cli import main; sys.exit(main(sys.argv[1:]))"
    assert run([sys.executable, "-m", "hotspot", "--help"]) == run([sys.executable, "-c", code, "--help"]) \
        == (1, b"")


# --- the formatter against click's on text hotspot's pages do not happen to contain -------------------

_PIECES = ["a", "b", " ", "cd", ".", "\n", "\b", "-", "word", "verylongwordwithoutspaces", "  ", "\n\n",
           "\b\n", "x.", "\t"]
_text = st.lists(st.sampled_from(_PIECES), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_text, width=st.integers(min_value=10, max_value=90), indent=st.integers(0, 6),
       paragraphs=st.booleans())
def test_wrap_text_is_clicks(text: str, width: int, indent: int, paragraphs: bool) -> None:
    from typer._click.formatting import wrap_text

    pad = " " * indent
    # a paragraph indented past the line leaves click's wrapper (the stdlib's) looping forever on
    # an empty chunk; ours ends (test_wrap_text_ends_when_the_indent_passes_the_line)
    lead = max((len(ln) - len(ln.lstrip()) for ln in text.expandtabs().splitlines()), default=0)
    assume(width - len(pad) - 1 - lead > 0)
    assert clihelp.wrap_text(text, width, pad, pad + " ", preserve_paragraphs=paragraphs) == \
        wrap_text(text, width, pad, pad + " ", preserve_paragraphs=paragraphs)


def test_wrap_text_ends_when_the_indent_passes_the_line() -> None:
    # a tab (8 columns) of paragraph indent after a 7-column indent on a 10-column line: the line
    # has no room, each piece of text goes on a line of its own (this looped forever)
    out = clihelp.wrap_text("\t\n-bword\x08\na  .", 10, " " * 6, " " * 7, preserve_paragraphs=True)
    assert "".join(out.split()) == "-bword\x08a.", out


@settings(max_examples=300, deadline=None)
@given(text=_text, limit=st.integers(min_value=1, max_value=80))
def test_short_help_is_clicks(text: str, limit: int) -> None:
    from typer._click.utils import make_default_short_help

    assert clihelp.short_help(text, limit) == make_default_short_help(text, limit)


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.tuples(st.text(alphabet="-a,b ", min_size=1, max_size=40), _text), min_size=1,
                     max_size=4),
       width=st.integers(min_value=50, max_value=78), prog=st.text(alphabet="ab ", min_size=1, max_size=70),
       args=_text)
def test_formatter_is_clicks(rows: list[tuple[str, str]], width: int, prog: str, args: str) -> None:
    from typer._click.formatting import HelpFormatter

    click_f = HelpFormatter(width=width)
    click_f.write_usage(prog, args)
    with click_f.section("Options"):
        click_f.write_dl(rows)
    click_f.write_paragraph()
    with click_f.indentation():
        click_f.write_text(args)
    ops = [("usage", prog, args, None), ("paragraph",), ("heading", "Options"), ("indent",), ("dl", rows, 30, 2),
           ("dedent",), ("paragraph",), ("indent",), ("text", args), ("dedent",)]
    assert clihelp.render(ops, width) == click_f.getvalue().rstrip("\n")
