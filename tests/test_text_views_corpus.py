"""Every read-only command's text view of every corpus capture fits 80 columns (COLUMNS=80), so
does the prose of its markdown (table rows, headings and code cannot wrap in markdown), no table
in either holds two identical rows, and markdown tables stay well formed. Skips
without the corpus; a capture named here that the corpus lacks is a failure.

One xdist group: the module's command lines are run once each (the `views` memo) on one worker;
the result cache they use is the run's shared one (a capture's wave pass is made once)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import CORPUS, run_cli
from tests.textviews import duplicate_rows, malformed_markdown, wide_lines, wide_markdown_prose

pytestmark = pytest.mark.xdist_group("text-views-corpus")

WIDTH = 80
ATT = ["att/gfx950/vec_add", "att/gfx950/preshuffle_gemm_v2", "att/gfx950/blockscale_preshuffle_gemm",
       "att/gfx950/pa_mqa_logits_fp4_small", "att/gfx950/mla_decode", "att/gfx942/ck_bmm",
       "att/gfx942/hipkittens_gemm_spill", "att/gfx950/triton_gemm_early3", "att/other/pcsampling_code_json",
       "att/gfx950/flash_attn_replicates/small", "layouts/kernel-lab/blockscale_preshuffle_gemm"]
PMC = ["pmc/rocprof-compute_MI300X_bmm1/pmc_perf.csv", "pmc/rocprof-compute_MI200_vcopy/pmc_perf.csv",
       "pmc/rocprof-compute_MI350_vcopy/pmc_perf.csv", "pmc/rocprof-compute_MI300X_vcopy_rocpd/pmc_perf.csv",
       "csv/counter_collection.csv", "csv/gfx1201/l2_counter_collection.csv"]
KERNELS = ["csv/kernel_trace.csv", "csv/kernel_trace_truncated.csv", "csv/gfx1201/hip-v0_kernel_stats.csv",
           "att/gfx950/pa_mqa_logits_fp4_small.meta/discover_kernel_stats.csv",
           "att/gfx950/mla_decode.meta/discover_kernel_trace.csv",
           "att/gfx950/vec_add.meta/discover_kernel_stats.csv"]
DIFFS = [("att/gfx950/flash_attn_replicates/small/ui_output_agent_23205_dispatch_44_after_loc_fix",
          "att/gfx950/flash_attn_replicates/small/ui_output_agent_14326_dispatch_44_after_loc_fix"),
         ("att/gfx950/flash_attn_replicates/big/ui_output_agent_25171_dispatch_44",
          "att/gfx950/flash_attn_replicates/small/ui_output_agent_23205_dispatch_44_after_loc_fix"),
         ("att/gfx950/preshuffle_gemm_v2", "att/gfx950/blockscale_preshuffle_gemm")]
OCCUPANCY = [("--arch", "gfx942", "--vgpr", "128", "--agpr", "384", "--lds", "65536", "--wg", "256"),
             ("--arch", "gfx950", "--vgpr", "256", "--lds", "163840", "--wg", "1024")]
FORMATS = ("text", "markdown")


def _views() -> Iterator[tuple[str, tuple[str, ...], tuple[str, ...]]]:
    """(id, command line, corpus paths it names)."""
    for rel in ATT:
        path = str(CORPUS / rel)
        for fmt in FORMATS:
            for extra in ((), ("--plan",), ("--detail",), ("--mode", "both")):
                yield (f"analyze-{rel}{''.join(extra)}-{fmt}", ("analyze", path, *extra, "--format", fmt), (rel,))
            for extra in ((), ("--brief",), ("--detail",)):
                yield (f"plan-{rel}{''.join(extra)}-{fmt}", ("plan", path, *extra, "--format", fmt), (rel,))
        # a PC-sampling capture has no timelines: export refuses it (exit 3). Export's view is one
        # sentence of one shape (file, waves, tracks, events, time base): the spill capture's (the
        # suite's costliest export, a 63 MB trace; tests/test_perfetto.py checks its trace) says
        # nothing the early capture's (shader cycles too) and ck_bmm's (gfx942) do not
        if "pcsampling" not in rel and "hipkittens" not in rel:
            yield (f"export-{rel}", ("export", "perfetto", path, "-o", "{tmp}/trace.json", "--force"), (rel,))
        yield (f"report-{rel}", ("report", path, "-o", "{tmp}/report.html", "--force"), (rel,))
    for rel in ("att/gfx942/ck_bmm", "att/gfx950/flash_attn_replicates/small"):  # several dispatches
        for fmt in FORMATS:
            yield (f"analyze-all-{rel}-{fmt}", ("analyze", str(CORPUS / rel), "--all", "--plan", "--format", fmt),
                   (rel,))
    for rel in PMC:
        for fmt in FORMATS:
            yield (f"pmc-{rel}-{fmt}", ("pmc", str(CORPUS / rel), "--per-dispatch", "--format", fmt), (rel,))
    for rel in KERNELS:
        for fmt in FORMATS:
            yield (f"kernels-{rel}-{fmt}", ("kernels", str(CORPUS / rel), "--top", "0", "--format", fmt), (rel,))
    for before, after in DIFFS:
        for fmt in FORMATS:
            yield (f"diff-{before}-{after}-{fmt}",
                   ("diff", str(CORPUS / before), str(CORPUS / after), "--format", fmt), (before, after))
    for k, args in enumerate(OCCUPANCY):
        for fmt in FORMATS:
            yield (f"occupancy-{k}-{fmt}", ("occupancy", *args, "--format", fmt), ())


VIEWS = list(_views())


def _missing(corpus: Path) -> list[str]:
    return sorted({rel for _, _, rels in VIEWS for rel in rels if not (corpus / rel).exists()})


@pytest.fixture(scope="module")
def views(tmp_path_factory: pytest.TempPathFactory,
          _shared_cache_home: Path) -> Iterator[dict[tuple[str, ...], tuple[int, str, str]]]:
    """Runs a command line once per module at COLUMNS=80 with the run's shared result cache
    (tests/conftest.py shared_analyses: analyze, plan and export of a capture make its wave pass
    once, in this module or another); returns the memo."""
    if not CORPUS.is_dir():
        pytest.skip(f"real-data corpus not found at {CORPUS} (it lives beside the project in ../shared)")
    missing = _missing(CORPUS)
    if missing:
        pytest.fail(f"the corpus at {CORPUS} lacks {', '.join(missing)}, which this test names", pytrace=False)
    tmp = tmp_path_factory.mktemp("text-views")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(_shared_cache_home))
        mp.setenv("HOTSPOT_CACHE", "on")
        mp.setenv("COLUMNS", str(WIDTH))
        class Memo(dict):  # type: ignore[type-arg]
            def __missing__(self, args: tuple[str, ...]) -> tuple[int, str, str]:
                r = run_cli(*(a.replace("{tmp}", str(tmp)) for a in args))
                self[args] = (r.exit_code, r.stdout, r.stderr)
                return self[args]

        memo = Memo()
        yield memo


@pytest.mark.parametrize("args", [pytest.param(a, id=i) for i, a, _ in VIEWS])
def test_view_fits_80_columns_and_rows_differ(views, args: tuple[str, ...]) -> None:
    code, out, err = views[args]
    # 0, or the documented verdict codes: 8 (diff of different kernels), 9 (pmc without a usable counter)
    assert code in (0, 8, 9), err
    markdown = args[-1] == "markdown"
    assert not duplicate_rows(out, markdown), duplicate_rows(out, markdown)[:3]
    if markdown:
        assert not malformed_markdown(out), malformed_markdown(out)[:3]
        # prose wraps; a table row, a heading or code cannot be broken in markdown
        assert not wide_markdown_prose(out, WIDTH), wide_markdown_prose(out, WIDTH)[:3]
    else:
        assert not wide_lines(out, WIDTH), wide_lines(out, WIDTH)[:3]


def test_the_checks_catch_what_they_look_for() -> None:
    """The checker itself: a duplicate row, a wide line and a short markdown row are found; a
    wrapped cell (its numeric columns blank) is part of the row above, not a row of its own."""
    page = ("name        stall\n----------  -----\n#1 s_load     10\n  dwordx2\n#2 s_load     10\n"
            "  dwordx2\n#1 s_load     10\n  dwordx2\n")
    assert duplicate_rows(page, markdown=False) == ["#1 s_load     10\n  dwordx2"]
    assert not duplicate_rows(page.rsplit("#1", 1)[0], markdown=False)
    assert wide_lines("x" * 81 + "\nshort", 80) == ["x" * 81]
    md = "| a | b |\n|---|---|\n| 1 | 2 |\n| 1 | 2 |\n| 3 |\n"
    assert duplicate_rows(md, markdown=True) == ["1 | 2"]
    assert malformed_markdown(md) == ["3"]


def test_a_missing_capture_is_named(tmp_path: Path) -> None:
    """What the module fixture fails on (rather than skipping) when the corpus lacks a capture."""
    assert _missing(CORPUS) == [] or not CORPUS.is_dir() or pytest.fail(str(_missing(CORPUS)))
    (tmp_path / "att" / "gfx950").mkdir(parents=True)
    (tmp_path / "att" / "gfx950" / "vec_add").mkdir()
    missing = _missing(tmp_path)
    assert "att/gfx950/vec_add" not in missing and "att/gfx942/ck_bmm" in missing


@pytest.mark.parametrize("columns", [80, 250])
def test_kernels_of_one_template_get_distinct_names(views, monkeypatch, columns: int) -> None:
    """`kernels` on a PyTorch run (74 kernels, most of them instantiations of a few templates):
    the kernel column tells every kernel apart, at 80 columns and at 250."""
    import re

    from tests.textviews import text_tables

    rel = "att/gfx950/pa_mqa_logits_fp4_small.meta/discover_kernel_stats.csv"
    monkeypatch.setenv("COLUMNS", str(columns))
    r = run_cli("kernels", str(CORPUS / rel), "--top", "0")
    names = [k["name"] for k in run_cli("kernels", str(CORPUS / rel), "--top", "0", "--format", "json")
             .json()["data"]["kernels"]]
    assert r.exit_code == 0 and len(set(names)) == len(names) == 74
    lines = r.stdout.split("\n")
    rule = next(ln for ln in lines if re.fullmatch(r"-+(  +-+)+", ln))
    a, b = [m.span() for m in re.finditer(r"-+", rule)][1]  # the kernel column
    rows = text_tables(r.stdout)[0]
    cells = [" ".join(ln[a:b].strip() for ln in row.split("\n")) for row in rows]
    assert len(cells) == 74 and len(set(cells)) == 74
    assert max(len(ln) for ln in lines) <= columns


_CUT_WORD = r"\w…(?=\s|$|[),;:])"  # a word with its end replaced by "…" (elision inside a name keeps its end)


@pytest.mark.parametrize("rel", ATT)
def test_no_verdict_line_ends_in_a_cut_word(views, rel: str) -> None:
    """The verdict block (plan --brief, and the head of analyze and plan) at 80 columns wraps
    between words or drops whole parts: no line of it holds a word cut short by `…`."""
    import re

    path = str(CORPUS / rel)
    for args in (("plan", path, "--brief", "--format", "text"), ("analyze", path, "--format", "text"),
                 ("plan", path, "--format", "text")):
        code, out, err = views[args]
        if code != 0:  # a layout hotspot refuses (exit 3): there is no verdict
            continue
        block = out.split("\n\n", 1)[0].split("\n")
        assert block[0].startswith("hotspot"), out[:200]
        cut = [ln for ln in block if re.search(_CUT_WORD, ln)]
        assert not cut, f"{' '.join(args[:1] + args[2:])}: {cut}"
        assert max(len(ln) for ln in block) <= WIDTH


def test_the_cut_word_check_catches_a_cut() -> None:
    import re

    assert re.search(_CUT_WORD, "explained: wait-vmcnt 67%, barrie…")
    assert re.search(_CUT_WORD, "global load waited on inside the… (4 waits)")
    assert not re.search(_CUT_WORD, "…/kernels/flash_attn_func.py:692  the load cannot move …")
    assert not re.search(_CUT_WORD, "hotspot: void ck_tile::kentry<1, ck_til…oid> on gfx942")
