"""The warnings on the register/LDS figures: one line on stderr however many there are (--quiet
drops it), every one whole in --format json."""

from __future__ import annotations

import pytest

from hotspot import diagnostics
from hotspot.diagnostics import RESOURCES_PREFIX, warn_all


def _resource_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("warning: " + RESOURCES_PREFIX)]


def test_the_examples_resource_warnings_are_one_line(cli) -> None:
    doc = cli("--no-cache", "analyze", "--example", "--format", "json").json()
    resources = [w for w in doc["warnings"] if w.startswith(RESOURCES_PREFIX)]
    assert len(resources) >= 2  # the bundled example has no counters: several estimates
    text = cli("--no-cache", "analyze", "--example")
    assert text.exit_code == 0
    [line] = _resource_lines(text.stderr)
    assert f"{len(resources)} notes" in line
    for w in resources:  # each named by its subject
        assert w[len(RESOURCES_PREFIX):].split(" ", 1)[0].rstrip(":") in line
    quiet = cli("--no-cache", "--quiet", "analyze", "--example")
    assert quiet.exit_code == 0 and _resource_lines(quiet.stderr) == []
    assert quiet.stdout == text.stdout


def test_one_resource_warning_is_printed_whole_and_others_untouched(capsys, monkeypatch) -> None:
    monkeypatch.setitem(diagnostics.QUIET, "on", False)
    warn_all(["resources: LDS from x.csv is static LDS only.", "launch: no kernel trace"])
    err = capsys.readouterr().err.splitlines()
    assert err == ["warning: resources: LDS from x.csv is static LDS only.", "warning: launch: no kernel trace"]
    monkeypatch.setitem(diagnostics.QUIET, "on", True)
    warn_all(["resources: a", "resources: b", "launch: c"])
    assert capsys.readouterr().err.splitlines() == ["warning: launch: c"]  # --quiet keeps real warnings


@pytest.mark.parametrize("n", [2, 5])
def test_folded_line_counts_and_names_subjects_once(capsys, monkeypatch, n: int) -> None:
    monkeypatch.setitem(diagnostics.QUIET, "on", False)
    monkeypatch.setenv("COLUMNS", "200")
    warn_all([f"resources: {'VGPRs' if i % 2 else 'LDS:'} item {i}" for i in range(n)])
    [line] = capsys.readouterr().err.splitlines()
    assert f"{n} notes" in line and line.count("VGPRs") == 1 and line.count("LDS") == 2  # subject + "LDS figures"
