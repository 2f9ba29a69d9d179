"""What a user sees at the command line: usage errors under --format json, every advertised format,
compact JSON with --pretty to indent."""

from __future__ import annotations

import json
import re

import pytest

from hotspot.cli import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("args, command, needle", [
    (["analyze", "--format", "json", "--topk", "abc", "x"], "analyze", "--topk"),
    (["occupancy", "--format", "json", "--arch", "gfx942"], "occupancy", "--vgpr"),
    (["occupancy", "--format=json", "--arch", "gfx942", "--no-such-flag"], "occupancy", "--no-such-flag"),
    (["pmc", "--format", "json", "--topk", "-"], "pmc", "--topk"),
])
def test_usage_error_prints_one_json_envelope(capsys, args, command, needle) -> None:
    code, out, err = _run(capsys, *args)
    assert code == 2
    doc = json.loads(out)  # exactly one document
    assert doc["ok"] is False and doc["command"] == command
    assert doc["error"]["code"] == "usage" and doc["error"]["exit_code"] == 2
    assert needle in doc["error"]["message"]
    assert needle in err  # the human message still goes to stderr


def test_usage_error_without_json_prints_nothing_on_stdout(capsys) -> None:
    code, out, err = _run(capsys, "occupancy", "--arch", "gfx942")
    assert code == 2 and out == "" and "--vgpr" in err


def _advertised_formats(help_text: str) -> list[str]:
    m = re.search(r"--format\s+[<\[]([a-z|]+)[>\]]", help_text)
    assert m, help_text
    return m.group(1).split("|")


@pytest.mark.parametrize("command, n", [(["skill", "path"], 2),
                                        (["occupancy", "--arch", "gfx942", "--vgpr", "128"], 1)])
def test_every_advertised_format_works(capsys, command, n) -> None:
    main([*command[:n], "--help"])
    formats = _advertised_formats(capsys.readouterr().out)
    assert "markdown" in formats
    for fmt in formats:
        code, out, err = _run(capsys, *command, "--format", fmt)
        assert code == 0, (fmt, err)
        assert out.strip()
        if fmt == "json":
            assert json.loads(out)["ok"] is True


def test_json_is_compact_unless_pretty(capsys) -> None:
    args = ["occupancy", "--arch", "gfx942", "--vgpr", "128", "--format", "json"]
    code, compact, _ = _run(capsys, *args)
    assert code == 0 and compact.count("\n") == 1
    code, pretty, _ = _run(capsys, *args, "--pretty")
    assert code == 0 and pretty.count("\n") > 10 and pretty.startswith('{\n  "schema_version"')
    assert json.loads(compact) == json.loads(pretty)
    code, again, _ = _run(capsys, *args)  # the mode does not stick between calls
    assert again == compact


def test_shell_completion_is_on(monkeypatch, capsys) -> None:
    main(["--help"])
    assert "--install-completion" in capsys.readouterr().out
    monkeypatch.setenv("_HOTSPOT_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", "hotspot analyze --for")
    monkeypatch.setenv("COMP_CWORD", "2")
    assert main([]) == 0
    assert capsys.readouterr().out.split() == ["--format"]


def test_top_level_listing_is_what_the_commands_register():
    """`hotspot --help` lists the commands from cli.LISTING without importing them: the table must
    be exactly what each command module registers (name, help, command or group, order)."""
    from hotspot.cli import LISTING, build_app

    app = build_app(None, listing_only=False)
    real = [(c.name, c.help, False) for c in app.registered_commands]
    for g in app.registered_groups:
        text = g.help if isinstance(g.help, str) else g.typer_instance.info.help
        real.append((g.name or g.typer_instance.info.name, text, True))
    assert real == list(LISTING)


@pytest.mark.parametrize("args", [["--help"], [], ["--version"], ["nosuchcommand"]])
def test_top_level_help_reads_the_same_without_importing_the_commands(args, monkeypatch):
    import sys

    from hotspot import cli
    from tests.conftest import run_cli

    for name in [m for m in sys.modules if m.startswith("hotspot.commands.")
                 and m != "hotspot.commands._run"]:
        monkeypatch.delitem(sys.modules, name)
    stubbed = run_cli(*args)
    assert not [m for m in sys.modules if m.startswith("hotspot.commands.analyze")]
    real_build = cli.build_app
    monkeypatch.setattr(cli, "build_app", lambda only=None, listing_only=False: real_build(only))
    real = run_cli(*args)
    assert (stubbed.exit_code, stubbed.stdout, stubbed.stderr) == (real.exit_code, real.stdout,
                                                                   real.stderr)


def test_plan_brief_help_does_not_claim_to_imply_plan(capsys) -> None:
    main(["plan", "--help"])
    plan_help = " ".join(capsys.readouterr().out.split())
    assert "--brief Print only the verdict" in plan_help and "implies --plan" not in plan_help
    main(["analyze", "--help"])
    # analyze opens with the verdict whatever the flags: --brief prints it alone, no plan implied
    analyze_help = " ".join(capsys.readouterr().out.split())
    assert "--brief Print only the verdict" in analyze_help and "implies --plan" not in analyze_help


def test_mode_help_lists_exactly_the_modes_analyze_accepts(capsys) -> None:
    main(["analyze", "--help"])
    m = re.search(r"--mode <([a-z|]+)>", capsys.readouterr().out)
    assert m, "--mode hides its choices"
    from hotspot.att.model import AnalyzeOptions
    from hotspot.examples import example_dispatch_dir

    for mode in [*m.group(1).split("|"), "nonsense"]:
        code, _, err = _run(capsys, "--no-cache", "analyze", str(example_dispatch_dir()), "--mode", mode,
                            "--brief")
        assert (code == 0) == (mode != "nonsense"), (mode, err)
    assert AnalyzeOptions().mode in m.group(1).split("|")
