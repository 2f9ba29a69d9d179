"""A dispatch folder is listed once when opened, whether filenames.json lists the wave files or
not (hotspot/capture/layout.py: the names and the files' identity come from one scan)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hotspot.capture import layout
from hotspot.synth import DispatchSpec, InstructionMix, Layout, make_dispatch


@pytest.mark.parametrize("listed", [True, False])
def test_the_folder_is_scanned_once(tmp_path, monkeypatch, listed):
    spec = DispatchSpec(waves=6, layout=Layout(ses=(0,), simds=2, slots=1, other_cus=()),
                        variants=1, program=InstructionMix(loop_trips=2))
    d = make_dispatch(tmp_path, spec, seed=2)
    want = sorted(p.name for p in d.glob("se*_sm*_sl*_wv*.json"))
    if not listed:  # the waves are then found by their names in the folder
        fn = d / "filenames.json"
        doc = json.loads(fn.read_text())
        del doc["wave_filenames"]
        fn.write_text(json.dumps(doc))
    scans: list[str] = []
    scandir, listdir = os.scandir, os.listdir

    def counted_scandir(path):
        scans.append(os.fspath(path))
        return scandir(path)

    def counted_listdir(path):
        scans.append(os.fspath(path))
        return listdir(path)

    monkeypatch.setattr(layout.os, "scandir", counted_scandir)
    monkeypatch.setattr(layout.os, "listdir", counted_listdir)
    got = layout._open_dispatch(d)
    assert scans == [os.fspath(d)]
    assert sorted(Path(w.where).name for w in got.wave_files) == want


def test_an_analysis_lists_the_dispatch_folder_once_and_finds_its_side_files(tmp_path, monkeypatch):
    """The side-file search takes the names the folder's opening listed (one scan per command),
    and still finds the agent_info CSV kept in the dispatch folder itself."""
    from hotspot.mcp.invoke import run_command

    spec = DispatchSpec(waves=6, layout=Layout(ses=(0,), simds=2, slots=1, other_cus=()),
                        variants=1, program=InstructionMix(loop_trips=2), agent_info=True,
                        arch="gfx942")
    d = make_dispatch(tmp_path, spec, seed=2)
    os.rename(d.parent / "synth_agent_info.csv", d / "synth_agent_info.csv")
    monkeypatch.setenv("HOTSPOT_CACHE", "off")
    scans: list[str] = []
    scandir = os.scandir

    def counted_scandir(path="."):
        scans.append(os.path.abspath(os.fspath(path)))
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counted_scandir)
    answer = run_command(["analyze", str(d), "--format", "json"])
    arch = json.loads(answer.document)["data"]["arch"]
    assert arch["gfx"] == "gfx942"
    assert arch["source"] == f"agent_info: {d / 'synth_agent_info.csv'}"
    assert scans.count(os.path.abspath(d)) == 1


@pytest.mark.parametrize("mode", ["files", "dirs", "dirs-followed"])
def test_a_listing_from_names_listed_earlier_is_the_folders_own(tmp_path, mode):
    """`listed` over names the command listed already gives the names its own scan gives: the
    same matches, of the same types (links followed where the mode says)."""
    from hotspot.cache import deps

    (tmp_path / "a_agent_info.csv").write_text("x")
    (tmp_path / "B_Agent_Info.CSV").write_text("x")  # globs match case-insensitively
    (tmp_path / "dir_agent_info.csv").mkdir()
    (tmp_path / "ui_output_agent_1_dispatch_2").mkdir()
    (tmp_path / "ui_output_agent_1_dispatch_3").write_text("not a folder")
    (tmp_path / "link_agent_info.csv").symlink_to(tmp_path / "a_agent_info.csv")
    (tmp_path / "broken_agent_info.csv").symlink_to(tmp_path / "nowhere")
    (tmp_path / "ui_output_agent_1_dispatch_4").symlink_to(tmp_path / "ui_output_agent_1_dispatch_2")
    (tmp_path / "se0_sm0_sl0_wv0.json").write_text("{}")
    globs = ("*agent_info.csv", "ui_output_agent_*_dispatch_*", "*.json")
    want = deps.listed(str(tmp_path), globs, mode)
    got = deps.listed(str(tmp_path), globs, mode, os.listdir(tmp_path))
    assert got == want
    assert want  # each mode keeps some of them
