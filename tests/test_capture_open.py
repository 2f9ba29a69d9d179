"""The Capture and its on-demand parts, and the side-file table they search with."""

from __future__ import annotations

import importlib
import os
import sqlite3

from hotspot.capture import open_capture
from hotspot.capture.sidefiles import AGENTS, DISPATCHES, SIDE_FILE_PATTERNS, SIDE_FILES, side_files
from tests.conftest import corpus_path

CK_BMM = ("att", "gfx942", "ck_bmm")


def test_every_side_file_reader_resolves_and_ranks_are_distinct() -> None:
    for side in SIDE_FILES:
        module, name = side.reader.split(":")
        assert callable(getattr(importlib.import_module(module), name)), side
    for fact in (AGENTS, DISPATCHES):
        ranks = [s.rank for s in side_files(fact)]
        assert ranks == sorted(set(ranks)), (fact, ranks)
    # the listing a search makes holds exactly the table's globs
    assert set(SIDE_FILE_PATTERNS) == {g for s in SIDE_FILES for g in s.globs}


def test_capture_reads_its_parts_on_demand_once(corpus) -> None:
    d = corpus_path(*CK_BMM, "ui_output_agent_5600_dispatch_2")
    cap = open_capture(d)
    assert cap.on_demand == {}  # nothing beyond code.json and the listing yet
    # the rocpd db beside the capture: its kernel rows named like the traced kernel, from this run
    db = next(p for p in corpus_path(*CK_BMM).rglob("*_results.db"))
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        gfx, = {r[0] for r in con.execute("select name from rocpd_info_agent where type = 'GPU'")}
    warnings: list[str] = []
    found = cap.kernel_rows(warnings)
    assert [(k.kind, k.path, k.run_id) for k in found][0] == ("rocpd", db, 2)  # dispatch_2 of this run
    names = {cap.kernel.symbol, cap.kernel.demangled}
    assert found[0].rows and all(r.kernel_name in names for r in found[0].rows)
    assert cap.arch().gfx == gfx and str(db) in cap.arch().source
    assert cap.kernel_rows([]) is found and cap.arch() is cap.arch()  # read once
    assert set(cap.on_demand) == {"kernel rows", "arch None"}
    occ = cap.occupancy()
    assert occ is not None and occ.dispatches
    rt = cap.realtime(warnings)
    assert rt is not None and rt.maps
    assert os.path.basename(cap.wave_files[0].path) in os.listdir(d)
    wave = cap.read_wave(cap.wave_files[0])
    assert wave.end >= wave.begin and wave.instructions


def test_the_search_depth_is_named_when_nothing_is_found(tmp_path, cli) -> None:
    """A dispatch dir one level deeper than the search goes: the error says how deep it looked
    and that a folder nearer the capture works; from there it is found."""
    from hotspot.capture.layout import SEARCH_DEPTH, find_dispatch_dirs

    parents = [f"level{i}" for i in range(1, SEARCH_DEPTH + 1)]  # SEARCH_DEPTH folders, then the dispatch
    dispatch = tmp_path.joinpath(*parents, "ui_output_agent_1_dispatch_1")
    dispatch.mkdir(parents=True)
    (dispatch / "code.json").write_text("{}")
    assert find_dispatch_dirs(tmp_path) == []
    assert find_dispatch_dirs(tmp_path / "level1") == [dispatch]  # exactly SEARCH_DEPTH levels below
    r = cli("--no-cache", "analyze", str(tmp_path))
    assert r.exit_code == 3
    assert f"found here or up to {SEARCH_DEPTH} folder levels below" in r.stderr
    assert f"a folder at most {SEARCH_DEPTH} levels above it" in r.stderr
