"""`--example` on every read-only command that reads a capture (analyze, plan, report, export
perfetto): the same output as the bundled example's path given as PATH, the path printed whole once
on stderr (dropped by --quiet), and PATH with --example a usage error."""

from __future__ import annotations

from pathlib import Path

import pytest

from hotspot.examples import example_dispatch_dir

EXAMPLE = str(example_dispatch_dir())


def _data(run) -> dict:  # noqa: ANN001 - tests.conftest CliRun
    doc = run.json()
    assert doc["ok"] is True, run.stderr
    return doc["data"]


@pytest.mark.parametrize("command", [("analyze",), ("plan",), ("plan", "--brief")])
def test_example_reads_what_its_path_reads(cli, command: tuple[str, ...]) -> None:
    by_flag = cli("--no-cache", *command, "--example", "--format", "json")
    by_path = cli("--no-cache", *command, EXAMPLE, "--format", "json")
    assert by_flag.exit_code == by_path.exit_code == 0, by_flag.stderr
    assert _data(by_flag) == _data(by_path)
    # the whole path, once, on its own line; nothing of it cut
    assert by_flag.stderr.splitlines().count(f"example: {EXAMPLE}") == 1
    assert "example:" not in by_path.stderr


@pytest.mark.parametrize("command, written", [(("report",), "page.html"),
                                              (("export", "perfetto"), "trace.json")])
def test_example_writes_what_its_path_writes(cli, tmp_path: Path, command: tuple[str, ...],
                                             written: str) -> None:
    flag_out, path_out = tmp_path / f"flag-{written}", tmp_path / f"path-{written}"
    by_flag = cli("--no-cache", *command, "--example", "-o", str(flag_out), "--format", "json")
    by_path = cli("--no-cache", *command, EXAMPLE, "-o", str(path_out), "--format", "json")
    assert by_flag.exit_code == by_path.exit_code == 0, by_flag.stderr
    flag_data, path_data = _data(by_flag), _data(by_path)
    assert flag_data.pop("output") == str(flag_out) and path_data.pop("output") == str(path_out)
    assert flag_data == path_data and flag_out.stat().st_size > 0
    assert by_flag.stderr.splitlines().count(f"example: {EXAMPLE}") == 1


def test_export_example_to_stdout(cli) -> None:
    r = cli("--no-cache", "export", "perfetto", "--example", "-o", "-")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.lstrip().startswith("{") and f"example: {EXAMPLE}" in r.stderr


def test_quiet_drops_the_example_line(cli) -> None:
    r = cli("--no-cache", "--quiet", "plan", "--example", "--brief")
    assert r.exit_code == 0 and "example:" not in r.stderr


@pytest.mark.parametrize("command", [("analyze",), ("plan",), ("report",), ("export", "perfetto")])
def test_example_with_a_path_is_a_usage_error(cli, tmp_path: Path, command: tuple[str, ...]) -> None:
    r = cli("--no-cache", *command, "--example", EXAMPLE, "--format", "json")
    assert r.exit_code == 2
    assert r.json()["error"]["message"] == "--example takes no PATH"


@pytest.mark.parametrize("command", [("plan", "--brief"), ("report", "--force"), ("export", "perfetto", "--force")])
def test_neither_path_nor_example_names_both(cli, command: tuple[str, ...]) -> None:
    r = cli("--no-cache", *command)
    assert r.exit_code == 2 and "give PATH, or --example" in r.stderr
