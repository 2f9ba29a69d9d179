"""Kernel names that stay distinct in a table, rows whose `#row` survives a narrow column, no cut
words, and color only on a terminal (NO_COLOR, --no-color, TERM=dumb turn it off)."""

from __future__ import annotations

import io

import pytest

from hotspot.kernel_names import distinct, fit_distinct, fit_name, forms
from hotspot.render.tables import table
from tests.conftest import run_cli

REDUCE_A = ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::ArgMinOps<float>, "
            "unsigned int, long, 4, 4> >(at::native::ReduceOp<float, at::native::ArgMinOps<float>, "
            "unsigned int, long, 4, 4>)")
REDUCE_B = REDUCE_A.replace("ArgMinOps", "ArgMaxOps")
REDUCE_C = REDUCE_A.replace("<512, 1,", "<128, 4,")


def test_forms_open_template_arguments_level_by_level() -> None:
    f = forms(REDUCE_A)
    assert f[0] == "reduce_kernel<…>"
    assert f[1] == "reduce_kernel<512, 1, ReduceOp<…>>"
    assert f[2] == "reduce_kernel<512, 1, ReduceOp<float, ArgMinOps<…>, unsigned int, long, 4, 4>>"
    assert forms("kn_mla_fwd_decode_m16x8_fp8_fp8_0") == ["kn_mla_fwd_decode_m16x8_fp8_fp8_0"]
    assert forms("__amd_rocclr_copyBuffer (runtime)") == ["__amd_rocclr_copyBuffer (runtime)"]


def test_each_name_gets_the_detail_that_tells_it_apart() -> None:
    short = distinct([REDUCE_A, REDUCE_B, REDUCE_C, "vecAdd(float*)"])
    assert short[3] == "vecAdd"
    assert short[2] == "reduce_kernel<128, 4, ReduceOp<…>>"  # one level is enough for it
    assert "ArgMinOps" in short[0] and "ArgMaxOps" in short[1]
    assert len(set(short)) == 4


def test_elided_names_keep_their_difference() -> None:
    names = distinct([REDUCE_A, REDUCE_B])
    for width in (24, 30, 40):
        cut = fit_distinct(names, width)
        assert all(len(c) <= width for c in cut) and cut[0] != cut[1], (width, cut)


def test_a_name_in_a_message_gets_the_most_detail_that_fits() -> None:
    assert fit_name(REDUCE_A, 40) == "reduce_kernel<512, 1, ReduceOp<…>>"   # form 2 (35) fits, form 3 not
    assert fit_name(REDUCE_A, 20) == "reduce_kernel<…>"
    # beside a name of the same template: never less detail than tells them apart
    assert fit_name(REDUCE_A, 40, [REDUCE_C]) == "reduce_kernel<512, 1, ReduceOp<…>>"
    told = fit_name(REDUCE_A, 40, [REDUCE_B])  # they differ only deep inside: elided around it
    assert len(told) <= 40 and "ArgMin" in told
    assert fit_name("vecAdd(float*)", 5) == "ve…dd"  # no form fits: its start and end kept


def test_kernels_of_one_template_are_distinct_rows_at_80_columns() -> None:
    rows = [[str(i), n, "other", "17", "33,134.3"] for i, n in enumerate([REDUCE_A, REDUCE_B, REDUCE_C], 1)]
    out = table(rows, ["#", "kernel", "family", "calls", "total µs"], width=80)
    assert max(len(ln) for ln in out.split("\n")) <= 80
    assert "ArgMinOps" in out and "ArgMaxOps" in out and "<128, 4," in out


def test_a_narrow_label_column_keeps_its_row_number_and_whole_words() -> None:
    rows = [[f"#{n} s_load_dwordx2 s[12:13], s[0:1], 0x{n:x}", "454", "4.3%"] for n in (53, 54, 55)]
    out = table(rows, ["load", "blamed stall", "% of wait"], width=40)
    lines = out.split("\n")
    assert max(map(len, lines)) <= 40
    for n in (53, 54, 55):
        assert any(ln.startswith(f"#{n} ") for ln in lines)
    words = {w for r in rows for w in r[0].split()}
    assert {w for ln in lines[2:] for w in ln.split()} >= words  # wrapped, no word cut


def test_columns_left_out_are_named() -> None:
    rows = [["k", *(f"{v:,}" for v in range(100_000_000, 100_000_012))]]
    out = table(rows, ["kernel", *(f"c{i}" for i in range(12))], width=60)
    assert max(len(ln) for ln in out.split("\n")) <= 60
    lines = out.split("\n")
    shown = lines[0].split()[1:]
    note = " ".join(lines[3:])
    left_out = note.split(": ", 1)[1].split(";")[0].split(", ")
    assert note.startswith("(not shown at 60 columns: ")
    assert shown + left_out == [f"c{i}" for i in range(12)]  # each column shown or named, in order


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("env, flag, colored", [({}, False, True), ({"NO_COLOR": ""}, False, False),
                                                ({"NO_COLOR": "1"}, False, False), ({}, True, False),
                                                ({"TERM": "dumb"}, False, False)])
def test_color_only_on_a_terminal_that_wants_it(monkeypatch, env, flag, colored) -> None:
    from hotspot import diagnostics

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setitem(diagnostics.COLOR, "off", flag)
    assert diagnostics.color_on(_Tty()) is colored
    assert diagnostics.color_on(io.StringIO()) is False  # never off a terminal


def test_colorize_marks_priorities_warnings_and_bars() -> None:
    from hotspot.render.color import colorize

    text = "1. [HIGH] x\n2. [MED] y\nwarning: z\nvalu  12  ████▌\ntrust: ok\n"
    out = colorize(text)
    assert "\x1b[1;31m[HIGH]\x1b[0m" in out and "\x1b[33m[MED]\x1b[0m" in out
    assert "\x1b[33mwarning:\x1b[0m" in out and "\x1b[36m████▌\x1b[0m" in out
    assert "trust: ok" in out  # a trusted capture is not flagged
    import re
    assert re.sub(r"\x1b\[[\d;]*m", "", out) == text


def test_the_cli_prints_no_color_off_a_terminal_and_accepts_no_color() -> None:
    for args in (("occupancy", "--arch", "gfx942", "--vgpr", "128"),
                 ("--no-color", "occupancy", "--arch", "gfx942", "--vgpr", "128")):
        r = run_cli(*args)
        assert r.exit_code == 0 and "\x1b[" not in r.stdout, r.stderr


def test_fmt_value_leaves_out_keys_without_a_value() -> None:
    from hotspot.render.html import fmt_value

    assert fmt_value({"hardware": 8, "vgpr": 2, "lds": None, "workgroup": None}) == "hardware: 8; vgpr: 2"
    assert fmt_value({"file": "", "line": None, "line_number": None, "kernel": "k", "n": 0}) == "kernel: k; n: 0"


@pytest.mark.parametrize("target", [("--example",), ("{corpus}/att/gfx942/ck_bmm",)])
def test_the_report_page_shows_no_key_without_a_value(corpus_or_none, tmp_path, target) -> None:
    """The page's visible text has no `lds: ;` / `file: ; line: ;` (a key whose value is empty)."""
    import html
    import re

    args = [a.replace("{corpus}", str(corpus_or_none)) for a in target]
    if "{corpus}" in target[0] and corpus_or_none is None:
        pytest.skip("real-data corpus not found (it lives beside the project in ../shared)")
    out = tmp_path / "r.html"
    r = run_cli("report", *args, "-o", str(out))
    assert r.exit_code == 0, r.stderr
    page = re.sub(r"<script.*?</script>|<style.*?</style>", "", out.read_text(), flags=re.S)
    text = html.unescape(re.sub(r"<[^>]+>", " ", page))
    assert not re.search(r"\b\w+:\s*;", text), re.search(r".{60}\b\w+:\s*;.{20}", text, flags=re.S)


@pytest.fixture
def corpus_or_none():
    from tests.conftest import CORPUS

    return CORPUS if CORPUS.is_dir() else None


def test_a_cell_that_almost_reads_as_a_number_is_typed_at_once() -> None:
    """The numeric-cell pattern reads each character one way: a long cell of numbers ending in a
    word (which nested repeats backtracked on for 20 s and more) is text, decided in milliseconds."""
    import time

    from hotspot.render.tables import _NUMERIC

    cell = "1, 2, 4, 8, 16, 32, 64, 128 " * 20 + "waves"
    start = time.perf_counter()
    assert _NUMERIC.fullmatch(cell) is None
    assert _NUMERIC.fullmatch("~12.60–25.20 MB") and _NUMERIC.fullmatch("−7.2% [−43, +6]")
    assert _NUMERIC.fullmatch("3 µs") and not _NUMERIC.fullmatch("MB 3")
    assert time.perf_counter() - start < 1.0
