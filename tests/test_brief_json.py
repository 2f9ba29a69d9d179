"""The `brief` JSON detail level (`--brief --format json`): under 4 KB on every corpus capture, and
every value it holds is the full plan's value (or a cut of it)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.conftest import CORPUS

from hotspot.plan.brief import BRIEF_BUDGET, BRIEF_ROWS, cut
from hotspot.plan.conventions import VERDICT_ITEMS

# The same corpus captures are analyzed by several tests and commands here: their wave pass is
# made once per test process (tests/conftest.py shared_analyses).
pytestmark = pytest.mark.usefixtures("shared_analyses")


def _captures() -> list[str]:
    """Every dispatch dir of the corpus: the ui_output_agent_*_dispatch_* dirs, and any other dir
    holding a code.json beside wave files."""
    if not CORPUS.is_dir():
        return ["(corpus absent)"]
    found = {p for p in CORPUS.rglob("ui_output_agent_*_dispatch_*") if p.is_dir()}
    found |= {c.parent for c in CORPUS.rglob("code.json") if any(c.parent.glob("se*_wv*.json"))}
    return sorted(str(p.relative_to(CORPUS)) for p in found)


def _same_or_cut(short: str | None, full: str | None) -> bool:
    if short is None or full is None:
        return short == full
    return short == full or (short.endswith("…") and full.startswith(short[:-1]))


@pytest.mark.parametrize("rel", _captures())
@pytest.mark.parametrize("command", ["plan", "analyze"])
def test_brief_json_is_small_and_agrees_with_the_full_plan(corpus: Path, rel: str, command: str, cli) -> None:
    d = corpus / rel
    brief = cli(command, d, "--brief", "--format", "json")
    assert len(brief.stdout.encode()) <= BRIEF_BUDGET, f"{rel}: {len(brief.stdout.encode())} bytes"
    env = brief.json()
    if brief.exit_code != 0:  # a capture hotspot refuses (a legacy layout): the same error as in full
        full_err = cli(command, d, "--format", "json")
        assert full_err.exit_code == brief.exit_code and env["error"] == full_err.json()["error"]
        return
    assert env["schema_version"] == 1 and env["command"] == command and env["ok"] is True
    b = env["data"]
    assert b["detail"] == "brief"

    # `more` is the one command that prints everything: run it, compare
    more = shlex.split(b["more"])
    assert more[:2] == ["hotspot", command] and more[-2:] == ["--format", "json"]
    full_run = cli(*more[1:])
    assert full_run.exit_code == 0, full_run.stderr
    full = full_run.json()["data"]
    items = [i for i in full["plan"] if i["kind"] != "capture"]  # capture items are trust: in data.trust
    trust = full["trust"] if command == "plan" else full["plan_trust"]
    summary = full["summary"] if command == "plan" else full["plan_summary"]

    assert b["path"] == full["dispatch"]["path"]
    assert b["gfx"] == full["arch"]["gfx"]
    assert b["trust"]["level"] == trust["level"]
    assert all(_same_or_cut(s, f) for s, f in zip(b["trust"]["reasons"], trust["reasons"]))
    assert b["stall_pct_of_cycles"] == summary["stall_pct_of_cycles"]
    assert b["top_categories"] == summary["top_categories"][:3]
    assert [i["id"] for i in b["items"]] == [i["id"] for i in items[:VERDICT_ITEMS]]
    assert b["more_items"] == max(0, len(items) - VERDICT_ITEMS)
    for short, item in zip(b["items"], items):
        assert short["priority"] == item["priority"]
        assert (short["low_pct"], short["high_pct"]) == (item["estimate"]["low_pct"],
                                                         item["estimate"]["high_pct"])
        assert _same_or_cut(short["fix"], item["fix"]) and _same_or_cut(short["title"], item["title"])
        loc = item["location"]
        assert short["at"] == (f"{loc['file']}:{loc['line']}" if loc["file"] else None)
        site_rows = {r for s in item["sites"] for r in [s["wait_row"], *s["producer_rows"]] if r is not None}
        site_rows.add(loc["line_number"])
        assert set(short["rows"]) <= site_rows and len(short["rows"]) <= BRIEF_ROWS
        if site_rows - {None}:
            assert short["rows"], item["id"]


def test_brief_json_of_several_dispatches_is_refused(corpus: Path, cli) -> None:
    folder = corpus / "att" / "gfx942" / "ck_bmm"
    r = cli("analyze", folder, "--all", "--brief", "--format", "json")
    assert r.exit_code == 2
    assert r.json()["error"]["code"] == "usage"
    assert "one dispatch" in r.json()["error"]["message"]


def test_cut_keeps_short_text_and_marks_a_cut() -> None:
    assert cut("abc", 3) == "abc"
    assert cut("abcdef", 4) == "abc…" and len(cut("abcdef", 4)) == 4
    assert cut(None, 5) == ""
