"""One ranking of dispatch dirs (hotspot/capture/select.py) used by analyze, diff, export and
collect: `collect` and a later `analyze RUNDIR` pick the same dispatch, and an idle slice never
outranks a representative capture (issue 14 acceptance; issue 16 point 6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from hotspot.capture.select import IDLE_SLICE_EXECUTED_SHARE, rank_dispatches
from hotspot.collect.att_outputs import find_dispatches
from tests.fake_rocprofv3.helpers import app, fake  # noqa: F401  (fixture)

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "collect" / "att_dispatch"


def _dispatch(root: Path, dispatch_id: int, extra_waves: int = 0, unexecuted_rows: int = 0) -> Path:
    """A copy of the fixture dispatch with more wave files and/or rows that never executed."""
    d = root / "att" / f"ui_output_agent_300_dispatch_{dispatch_id}"
    shutil.copytree(FIXTURE, d)
    names = json.loads((d / "filenames.json").read_text())
    for n in range(extra_waves):
        src = d / "se0_sm0_sl0_wv0.json"
        name = f"se0_sm2_sl0_wv{n}.json"
        shutil.copyfile(src, d / name)
        names["wave_filenames"]["0"].setdefault("2", {}).setdefault("0", {})[str(n)] = [name, 1000, 2252]
    (d / "filenames.json").write_text(json.dumps(names))
    code = json.loads((d / "code.json").read_text())
    last = max(r[2] for r in code["code"])
    code["code"] += [["s_nop 0", 0, last + 1 + i, "", 1, 4096 + 4 * i, 0, 0, 0, 0]
                     for i in range(unexecuted_rows)]
    (d / "code.json").write_text(json.dumps(code))
    return d


def test_idle_slice_ranks_last_even_with_more_waves(tmp_path: Path) -> None:
    executed = sum(1 for r in json.loads((FIXTURE / "code.json").read_text())["code"] if r[6] > 0)
    # enough never-executed rows to push the executed share under the idle-slice cut
    padding = int(executed / IDLE_SLICE_EXECUTED_SHARE) + 10
    idle = _dispatch(tmp_path, 7, extra_waves=6, unexecuted_rows=padding)
    full = _dispatch(tmp_path, 8)
    ranking, _ = rank_dispatches([idle, full])
    assert [Path(c.path) for c in ranking] == [full, idle]
    assert ranking[1].idle_slice and not ranking[0].idle_slice
    assert ranking[1].waves > ranking[0].waves  # the old "most waves first" would have chosen it


def test_collect_and_analyze_rank_alike(cli, tmp_path: Path) -> None:
    executed = sum(1 for r in json.loads((FIXTURE / "code.json").read_text())["code"] if r[6] > 0)
    _dispatch(tmp_path, 3, extra_waves=4, unexecuted_rows=int(executed / IDLE_SLICE_EXECUTED_SHARE) + 10)
    best = _dispatch(tmp_path, 4, extra_waves=1)
    _dispatch(tmp_path, 5)
    collect_order = [d.path for d in find_dispatches(tmp_path)]
    res = cli("analyze", tmp_path, "--format", "json")
    assert res.exit_code == 0, res.stderr
    sel = res.json()["data"]["selection"]
    assert Path(sel["chosen"]) == collect_order[0] == best
    assert [Path(c["path"]) for c in sel["candidates"]] == collect_order


def test_collect_run_dir_and_analyze_pick_the_same_dispatch(cli, fake) -> None:
    res = cli("collect", "--no-analyze", "--format", "json", "--", *app("print('x')"))
    assert res.exit_code == 0, res.stderr
    data = res.json()["data"]
    assert len(data["dispatches"]) >= 2
    again = cli("analyze", data["run_dir"], "--format", "json")
    assert again.exit_code == 0, again.stderr
    assert again.json()["data"]["dispatch"]["path"] == data["chosen_dispatch"]["path"]


@pytest.mark.usefixtures("shared_analyses")  # nine views of one unchanged capture: one wave pass
def test_every_view_of_a_multi_dispatch_folder_renders(cli, corpus) -> None:
    """The chosen-dispatch reason and the --all ranking render in text, markdown and html."""
    from tests.conftest import corpus_path

    run = corpus_path("att", "gfx942", "ck_bmm")
    for args in (("analyze", run), ("analyze", run, "--plan"), ("analyze", run, "--all"),
                 ("plan", run)):
        for fmt in ("text", "markdown"):
            res = cli(*args, "--format", fmt)
            assert res.exit_code == 0, (args, fmt, res.stderr)
            assert "internal error" not in res.stderr
        if args[0] == "analyze" and "--all" not in args:
            assert "chosen because" in cli(*args).stdout
    html = cli("analyze", run, "--format", "html")
    assert html.exit_code == 0 and "chosen because" in html.stdout
