"""A saved `hotspot analyze --format json` stands in for the capture in analyze, plan, report and
diff (export refuses it: no timelines), each saying on stderr what a saved file lacks; saving keeps
every row unless --topk is given; a file that is neither gets that message (issue 38, point 3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> dict[str, Path]:
    from tests.conftest import run_cli

    root = tmp_path_factory.mktemp("saved")
    out = {}
    for name, extra in (("full", ()), ("cut", ("--topk", "5"))):
        r = run_cli("--no-cache", "analyze", "--example", "--format", "json", *extra)
        assert r.exit_code == 0, r.stderr
        out[name] = root / f"{name}.json"
        out[name].write_text(r.stdout)
    out["csv"] = root / "x.csv"
    out["csv"].write_text("Dispatch_ID,Kernel_Name,LDS_Block_Size\n1,k,0\n")
    return out


def test_saving_keeps_every_row_unless_topk(saved) -> None:
    full = json.loads(saved["full"].read_text())["data"]
    # every executed instruction (the dispatch's own count), said by the document itself
    assert len(full["instructions"]) == full["dispatch"]["executed_instructions"] > 15
    assert full["tables_complete"] is True and full["options"]["topk"] == 0
    cut = json.loads(saved["cut"].read_text())["data"]
    assert len(cut["instructions"]) == 5 and cut["tables_complete"] is False and cut["options"]["topk"] == 5


def test_text_views_still_show_fifteen_rows(cli) -> None:
    text = cli("--no-cache", "analyze", "--example").stdout
    assert "Top instructions (15)" in text


def test_analyze_and_plan_of_a_saved_file_are_those_of_the_capture(cli, saved) -> None:
    for argv in (("analyze",), ("analyze", "--plan"), ("plan",), ("analyze", "--format", "markdown")):
        live = cli("--no-cache", *argv, "--example")
        again = cli("--no-cache", *argv, str(saved["full"]))
        assert again.exit_code == live.exit_code == 0, again.stderr
        assert again.stdout == live.stdout, argv
    # the plan is made again from the saved rows: the same document as from the capture
    live = cli("--no-cache", "plan", "--example", "--format", "json").json()["data"]
    assert cli("--no-cache", "plan", str(saved["full"]), "--format", "json").json()["data"] == live


def test_a_cut_file_says_what_it_lacks(cli, saved) -> None:
    r = cli("--no-cache", "plan", str(saved["cut"]))
    assert r.exit_code == 0
    assert f"{saved['cut']}: saved with --topk 5: its tables hold the top 5 rows only" in r.stderr
    r = cli("--no-cache", "analyze", str(saved["full"]), "--arch", "gfx942", "--detail")
    assert r.exit_code == 0
    assert "--arch apply to a capture directory only" in r.stderr
    assert "saved without --detail" in r.stderr


def test_report_and_diff_say_what_a_saved_file_lacks(cli, saved, tmp_path) -> None:
    r = cli("--no-cache", "report", str(saved["full"]), "-o", str(tmp_path / "r.html"))
    assert r.exit_code == 0 and "no wave timelines" in r.stderr
    d = cli("--no-cache", "diff", str(saved["full"]), str(saved["full"]))
    assert d.exit_code == 0 and "a saved analysis holds no per-wave values" in d.stderr


def test_export_refuses_a_saved_file(cli, saved, tmp_path) -> None:
    out = tmp_path / "t.json"
    r = cli("--no-cache", "export", "perfetto", str(saved["full"]), "-o", str(out))
    assert r.exit_code == 3 and "a saved analysis holds no wave timelines" in r.stderr
    assert "(next: export the capture directory" in r.stderr and not out.exists()


@pytest.mark.parametrize("argv", [("analyze",), ("plan",), ("report", "-o", "{tmp}/r.html"),
                                  ("diff", "{full}"), ("export", "perfetto", "-o", "{tmp}/t.json")],
                         ids=lambda a: a[0])
def test_neither_capture_nor_saved_json(cli, saved, tmp_path, argv) -> None:
    args = [a.format(tmp=tmp_path, full=saved["full"]) for a in argv]
    r = cli("--no-cache", *args[:2 if args[0] == "export" else 1], str(saved["csv"]),
            *args[2 if args[0] == "export" else 1:])
    assert r.exit_code == 3, r.stderr
    assert (f"{saved['csv']}: neither a capture directory nor a saved `hotspot analyze --format json` "
            "file (next: ") in r.stderr
    assert "malformed" not in r.stderr and "column" not in r.stderr
    j = cli("--no-cache", *args[:2 if args[0] == "export" else 1], str(saved["csv"]),
            *args[2 if args[0] == "export" else 1:], "--format", "json").json()
    assert j["error"]["code"] == "bad-input" and j["error"]["exit_code"] == 3
    assert not list(tmp_path.iterdir())  # nothing written


def test_a_capture_file_given_for_its_dir_points_at_the_dir(cli) -> None:
    from hotspot.examples import example_dispatch_dir

    code = example_dispatch_dir() / "code.json"
    r = cli("--no-cache", "analyze", str(code))
    assert r.exit_code == 3
    assert f"{code}: neither a capture directory nor a saved" in r.stderr
    assert f"(next: pass the dispatch dir it is in: {code.parent})" in r.stderr
