"""One output sink: every command's views are in the registry, `--format` is read from the raw
command line in one place, and every file hotspot writes goes through hotspot/outfile.py."""

from __future__ import annotations

import ast
import os
import re
from pathlib import Path

import pytest

from hotspot import outfile
from hotspot.globalflags import requested_format
from hotspot.render import registry

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "hotspot"
# Writers that still rename their own temporary files. This set must shrink to empty: when one
# of them moves onto hotspot/outfile.py the test below fails until it is taken out of the set.


def _run_calls() -> list[tuple[str, ast.Call]]:
    """Every `run(...)` call of the command adapters (hotspot/commands/_run.py's run)."""
    calls = []
    for path in [*sorted((PACKAGE / "commands").glob("*.py")), PACKAGE / "mcp" / "command.py"]:
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "run":
                calls.append((path.name, node))
    return calls


def _strings(node: ast.AST) -> list[str]:
    """The string constants a view argument can take (`"brief" if brief else None`)."""
    return [n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def test_every_command_renders_through_the_registry():
    views = {view for view, _ in registry.RENDERERS}
    calls = _run_calls()
    assert len(calls) >= 15, calls  # every command and sub-command
    for name, call in calls:
        # the view is a name, never a renderer handed in by the adapter (the sections to print, by
        # keyword, are names too: hotspot/render/sections.py)
        assert len(call.args) <= 4 and {k.arg for k in call.keywords} <= {"sections"}, (name, ast.dump(call))
        named = _strings(call.args[3]) if len(call.args) == 4 else _strings(call.args[0])
        if len(call.args) < 4 and not named:  # run(command, ...) with a variable command
            continue
        for view in named:
            assert view in views, f"{name}: view {view!r} has no renderer in hotspot/render/registry.py"
            assert registry.renderer(view, "text") is not None


def test_the_registry_names_real_functions():
    import importlib

    for (view, fmt), (module, function) in registry.RENDERERS.items():
        assert callable(getattr(importlib.import_module(module), function)), (view, fmt)
    assert registry.renderer("report", "html") is None
    assert set(registry.renderers("analyze")) == {"text", "markdown", "html", "csv"}
    # the --format choices are read from the command's spec (commands/options.py format_option), whose
    # views the registry holds
    from hotspot.commands.analyze import SPEC as ANALYZE
    from hotspot.commands.sweep import SPEC as SWEEP

    assert ANALYZE.formats() == ("text", "json", "markdown", "html", "csv")
    assert SWEEP.formats("sweep status") == ("text", "json", "markdown", "csv")
    for spec in (ANALYZE, SWEEP):
        for view, formats in spec.views.items():
            assert set(registry.renderers(view)) == set(formats)


def _without_spec(text: str) -> str:
    """A command module's source without its SPEC (whose views name renderers, as text)."""
    for node in ast.parse(text).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "SPEC" for t in node.targets):
            return text.replace(ast.get_source_segment(text, node) or "", "")
    return text


def test_no_command_module_renders_itself():
    for path in sorted((PACKAGE / "commands").glob("*.py")):
        text = _without_spec(path.read_text())
        # a table of renderers, or one handed to run(): the registry's job (a SPEC only names them)
        assert not re.search(r"\{\s*\"(text|markdown|html)\"\s*:", text), path
        assert "lambda r" not in text and "render_html" not in text, path


@pytest.mark.parametrize("argv, expected", [
    (["analyze", "d", "--format", "json"], "json"),
    (["analyze", "d", "--format=json"], "json"),
    (["analyze", "--format", "json", "d", "--format", "text"], "text"),  # the last one, as parsed
    (["analyze", "d"], None),
    (["analyze", "d", "--format"], None),
    (["collect", "--format", "markdown", "--", "app", "--format", "json"], "markdown"),
    (["collect", "--", "app", "--format=json"], None),
])
def test_the_requested_format_is_read_from_the_words_before_the_command(argv, expected):
    assert requested_format(argv) == expected


def test_a_usage_error_answers_in_the_requested_format(capsys):
    from hotspot.cli import main

    assert main(["kernels", "--no-such-option", "--format=json"]) == 2
    out = capsys.readouterr().out
    assert '"code":"usage"' in out.replace(" ", "")
    assert main(["kernels", "--no-such-option", "--format", "json", "--format", "text"]) == 2
    assert capsys.readouterr().out == ""


def _renames() -> dict[str, int]:
    found: dict[str, int] = {}
    pattern = re.compile(r"\bos\.(replace|rename|renames)\(|\.rename\(|\.replace\(\s*tmp")
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        n = len(pattern.findall(path.read_text()))
        if n:
            found[rel] = n
    return found


def test_one_module_renames_files_into_place():
    found = _renames()
    assert "hotspot/outfile.py" in found
    others = set(found) - {"hotspot/outfile.py"}
    assert not others, f"write through hotspot/outfile.py instead: {sorted(others)}"


def test_replace_atomically_leaves_the_old_file_on_failure(tmp_path):
    target = tmp_path / "out.json"
    target.write_bytes(b"old")

    def fails(fh):
        fh.write(b"partial")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError):
        outfile.replace_atomically(target, fails)
    assert target.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["out.json"]  # no temporary file left
    assert outfile.replace_atomically(target, lambda fh: fh.write(b"new!")) == 4
    assert target.read_bytes() == b"new!"
    assert os.listdir(tmp_path) == ["out.json"]


def test_an_output_is_never_a_file_the_command_read(tmp_path):
    from hotspot.capture.session import capture_session
    from hotspot.errors import InputError

    source = tmp_path / "code.json"
    source.write_text("{}")
    with capture_session():
        source.read_text()  # the command read it
        with pytest.raises(InputError) as err:
            outfile.resolve_output(str(source), "x", force=True)
        assert err.value.code == "output-is-input"
    assert outfile.resolve_output(str(source), "x", force=True) == source  # outside the command: no input


def test_the_result_cache_writes_through_the_one_writer(tmp_path, monkeypatch):
    from hotspot.cache import store

    calls = []
    real = outfile.replace_atomically

    def spy(path, write, **kw):
        calls.append((os.fspath(path), kw))
        return real(path, write, **kw)

    monkeypatch.setattr(outfile, "replace_atomically", spy)
    assert store.write_entry(str(tmp_path), "a.entry", b"body", key=b"k")
    assert calls == [(str(tmp_path / "a.entry"), {"private": True})]
    assert (tmp_path / "a.entry").stat().st_mode & 0o777 == 0o600
    assert store.read_entry(str(tmp_path), "a.entry", key=b"k") == b"body"
