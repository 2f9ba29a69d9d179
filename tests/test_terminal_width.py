"""Text output fits the terminal: doctor at COLUMNS=80 (every corpus view: test_text_views_corpus.py),
the analyze page keeps the line number of every source location, plus unit checks of the
shortening helpers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hotspot.kernel_names import short_kernel_name
from hotspot.render.tables import (fit_text, shorten_left, shorten_middle, table,
                                   terminal_width)
from tests.conftest import corpus_path, run_cli

WIDTH = 80
SOURCE_FILE = re.compile(r"\.(py|cpp|cc|cu|hip|hpp)\b(?!:\d)")

ATT = ["gfx942/ck_bmm", "gfx950/mla_decode", "gfx950/vec_add", "gfx950/blockscale_preshuffle_gemm",
       "gfx950/pa_mqa_logits_fp4_small", "gfx950/preshuffle_gemm_v2"]


def test_doctor_fits_80_columns(monkeypatch) -> None:
    """doctor's table at 80 columns (the views of the corpus captures: test_text_views_corpus.py)."""
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    r = run_cli("doctor")
    assert r.exit_code in (0, 5), r.stderr
    assert all(len(ln) <= WIDTH for ln in r.stdout.split("\n")), r.stdout
    # the one-line error no longer repeats the table's details and fixes
    assert all(len(ln) <= 2 * WIDTH for ln in r.stderr.splitlines())


@pytest.mark.usefixtures("shared_analyses")
@pytest.mark.parametrize("target", [pytest.param(corpus_path("att", d), id=d) for d in ATT])
def test_every_source_location_keeps_its_line_number(corpus: Path, monkeypatch, target: Path) -> None:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    r = run_cli("analyze", target, "--plan")
    assert r.exit_code == 0, r.stderr
    assert not SOURCE_FILE.search(r.stdout), SOURCE_FILE.search(r.stdout).group(0)
    assert re.search(r"\.py:\d+", r.stdout) or "source-mapped" in r.stdout


def test_terminal_width_reads_columns(monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "132")
    assert terminal_width() == 132
    monkeypatch.delenv("COLUMNS")
    assert terminal_width() == 100  # pytest's stdout is not a terminal


def test_shortening_keeps_the_ends() -> None:
    loc = "/sgl-workspace/FlyDSL-lab/kernels/mla_fwd_decode_m16x8_fp8_fp8.py:393"
    # whole directories go first; the file name and line stay whole while they fit
    assert shorten_left(loc, 50) == "…/kernels/mla_fwd_decode_m16x8_fp8_fp8.py:393"
    assert shorten_left(loc, 40) == "…/mla_fwd_decode_m16x8_fp8_fp8.py:393"
    # a file name longer than the width keeps its start and its end (never the directory instead)
    assert shorten_left(loc, 24) == "…/mla_fwd_de…_fp8.py:393" and len(shorten_left(loc, 24)) == 24
    name = "ck_tile::kentry<1, ck_tile::BatchedGemmKernel<...>>(ck_tile::BatchedGemmKernelArgs)"
    mid = shorten_middle(name, 21)
    assert len(mid) == 21 and mid.startswith("ck_tile::k") and mid.endswith("Args)")
    assert shorten_middle("short", 21) == "short"


@pytest.mark.parametrize("full, short", [
    ("void addition_kernel<float>(float*, float const*, float const*, int, int)", "addition_kernel<…>"),
    ("void ck_tile::kentry<1, ck_tile::BatchedGemmKernel<A<B>, C>>(ck_tile::Args)", "ck_tile::kentry<…>"),
    ("kn_mla_fwd_decode_m16x8_fp8_fp8_0", "kn_mla_fwd_decode_m16x8_fp8_fp8_0"),
    ("divide_kernel(float*, float const*, int, int)", "divide_kernel"),
    ("__amd_rocclr_fillBufferAligned.kd", "__amd_rocclr_fillBufferAligned.kd"),
])
def test_short_kernel_name(full: str, short: str) -> None:
    assert short_kernel_name(full) == short


def test_table_fits_and_keeps_numbers_and_line_numbers() -> None:
    rows = [["/very/long/path/to/some/source/file_with_a_long_name.py:1234", "123,456,789",
             "a fairly long free-text explanation that needs to wrap inside its cell"]]
    out = table(rows, ["source", "stall", "why"], width=60)
    assert max(len(ln) for ln in out.split("\n")) <= 60
    # directories go, the file name and line stay whole
    assert "123,456,789" in out and "…/file_with_a_long_name.py:1234" in out and "/very/" not in out
    assert "explanation" in out  # prose wraps, nothing of it is cut


def test_fit_text_wraps_prose_under_its_label() -> None:
    line = "  note:  " + " ".join(["word"] * 40)
    out = fit_text(line, 40).split("\n")
    assert len(out) > 1 and all(len(ln) <= 40 for ln in out)
    assert all(ln.startswith(" " * 9) for ln in out[1:])
    assert fit_text("short line", 40) == "short line"


def test_diagnostics_wrap_on_a_terminal_only(monkeypatch) -> None:
    from hotspot import diagnostics

    line = "hotspot analyze: " + " ".join(["word"] * 40) + " /a/very/long/path/" + "x" * 90 + ".py:12"
    monkeypatch.setenv("COLUMNS", "60")
    monkeypatch.setattr(diagnostics, "_stderr_is_tty", lambda: False)
    assert diagnostics.fit_diagnostic(line) == line  # a log keeps one greppable line
    monkeypatch.setattr(diagnostics, "_stderr_is_tty", lambda: True)
    out = diagnostics.fit_diagnostic(line).split("\n")
    assert len(out) > 1 and all(len(ln) <= 60 for ln in out)
    assert out[-1].endswith(".py:12")  # the long path keeps its end


def test_a_table_too_wide_folds_long_headers_onto_two_lines() -> None:
    """Headers wider than their values (`L2→fabric read` over `7.89 GB`) fold when the table does
    not fit, so a counter table fits 80 columns; a table that fits keeps one header line."""
    from hotspot.render.tables import table

    headers = ["kernel", "disp", "L2 hit", "32B req", "L2→fabric read", "time µs", "GB/s", "% peak",
               "over-fetch", "TCC_EA0_RDREQ_sum"]
    rows = [["gemm", "150", "75.6%", "0.0%", "7.89 GB", "4,358.0", "1,810.7", "42.5%", "1.2x", "0"]]
    wide = table(rows, headers, width=200)
    assert len(wide.splitlines()) == 3 and "L2→fabric read" in wide
    narrow = table(rows, headers, width=80)
    lines = narrow.splitlines()
    assert max(len(x) for x in lines) <= 80
    assert len(lines) == 4  # two header lines, the rule, the row
    assert "L2→fabric" in lines[0] and "read" in lines[1]
    assert "TCC_EA0_" in lines[0] and "RDREQ_sum" in lines[1]  # counter names fold at an underscore
    for cell in rows[0]:
        assert cell in lines[3]  # values are never cut


def test_a_terminal_without_a_size_is_not_forty_columns(monkeypatch) -> None:
    """A pseudo-terminal nobody sized (`script`, some CI runners) reports 0 columns: text falls
    back to the default width and diagnostics stay on one line, as in a log."""
    import os
    import sys

    from hotspot import diagnostics

    class Tty:
        def isatty(self) -> bool:
            return True

        def fileno(self) -> int:
            return 1

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(sys, "stdout", Tty())
    monkeypatch.setattr(sys, "stderr", Tty())
    monkeypatch.setattr(os, "get_terminal_size", lambda fd=0: os.terminal_size((0, 0)))
    assert diagnostics.terminal_width() == diagnostics.DEFAULT_WIDTH
    line = "warning: " + "word " * 40
    assert diagnostics.fit_diagnostic(line) == line


def test_verdict_lines_keep_the_file_name_whole_at_80_columns() -> None:
    """A location in the verdict block loses directories, never part of its file name: the title
    gives way (`…/mfma_preshuff…ipeline.py:83` hid which file it was)."""
    from hotspot.att.model import ArchOut
    from hotspot.plan.engine import Verdict, VerdictItem
    from hotspot.plan.model import Trust
    from hotspot.render.plan import verdict_block

    path = "/sgl-workspace/FlyDSL-lab/kernels/mfma_preshuffle_pipeline.py"
    verdict = Verdict(Trust("ok", []), 90.0, [],
                      [VerdictItem(1, "short-load-distance", "MED", "load issued too close to its use (9 waits)",
                                   3.3, 6.6, path, 83, None)], 0)
    arch = ArchOut("gfx950", None, "test", True, [], [])
    for width in (80, 100, 120):
        lines = verdict_block("k", arch, verdict, width=width).splitlines()
        line = next(ln for ln in lines if ln.startswith("1. "))  # the title may wrap below it
        assert "/mfma_preshuffle_pipeline.py:83  " in line and max(map(len, lines)) <= width, (width, lines)
        assert "load issued too close to its use (9 waits)" in " ".join(" ".join(lines).split())


def test_verdict_block_stays_within_15_lines_with_long_titles() -> None:
    """Three items with long titles and a long trust reason at 80 columns: the titles wrap while
    the block keeps to 15 lines, else each keeps one line ending in a separate ` …`; no word cut."""
    import re

    from hotspot.att.model import ArchOut
    from hotspot.plan.engine import Verdict, VerdictItem
    from hotspot.plan.model import Trust
    from hotspot.render.plan import BRIEF_LINES, verdict_block

    title = "a title with many words " * 8
    items = [VerdictItem(i, "x", "MED", title.strip(), 1.0, 2.0, f"/a/b/file{i}.py", 10 * i, None)
             for i in (1, 2, 3)]
    reason = "small-sample: " + "the capture traced few waves and so on " * 12 + "— re-capture with more"
    for n_items in (1, 3):
        block = verdict_block("k", ArchOut("gfx950", None, "test", True, [], []),
                              Verdict(Trust("limited", [reason]), 90.0, [], items[:n_items], 4), width=80)
        lines = block.splitlines()
        assert len(lines) <= BRIEF_LINES and max(map(len, lines)) <= 80, block
        assert not [ln for ln in lines if re.search(r"\w…", ln)], block
        assert lines[-1].startswith("+4 more items")
    assert "many words a title" in " ".join(verdict_block(
        "k", ArchOut("gfx950", None, "test", True, [], []), Verdict(Trust("ok", []), 90.0, [], items[:1], 0),
        width=80).split())  # one item: its title wraps whole
