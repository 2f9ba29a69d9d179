"""`hotspot report --pmc`: the roofline's second point, from counters (issue 38 point 7): the grid's
FLOPs from the trace over one dispatch's L2→fabric read bytes and duration as the counter analysis
gives them (the median over the kernel's dispatches); where the counters cannot give a point, the
page says why. Checked by hand against the corpus counter CSV and code.json."""

from __future__ import annotations

import csv
import json
import re
import statistics
from pathlib import Path

import pytest

from tests.conftest import CORPUS, run_cli

CK = "att/gfx942/ck_bmm/ui_output_agent_5600_dispatch_2"  # MI300X, launch matched (rocpd): grid scope
BMM1 = "pmc/rocprof-compute_MI300X_bmm1/pmc_perf.csv"     # MI300X counters of a batched GEMM
BMM1_KERNEL = "void batched_matrix_multiplication_matrix_core_64x64x4"
MFMA_32x32x8_FLOPS = 2 * 32 * 32 * 8  # v_mfma_f32_32x32x8_f16: M·N·K multiply-adds


@pytest.fixture
def corpus_or_skip() -> Path:
    if not CORPUS.is_dir():
        pytest.skip(f"real-data corpus not found at {CORPUS}")
    return CORPUS


def _renamed(src: Path, dst: Path, old_prefix: str, name: str) -> Path:
    """The counter file with its kernel renamed to the traced one, so the counters of a real
    MI300X batched GEMM stand for the traced GEMM's (the numbers, not the pairing, are tested)."""
    with src.open(newline="") as fh:
        rows = list(csv.reader(fh))
    col = rows[0].index("Kernel_Name")
    for r in rows[1:]:
        if r[col].startswith(old_prefix):
            r[col] = name
    with dst.open("w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return dst


def _kernel(path: Path) -> str:
    r = run_cli("--no-cache", "analyze", str(path), "--format", "json")
    return r.json()["data"]["dispatch"]["kernel"]


def _point(html: str, cls: str) -> tuple[float, float]:
    m = re.search(rf'class="{cls}"[^>]*data-intensity="([^"]+)" data-flops-per-s="([^"]+)"', html)
    assert m, cls
    return float(m.group(1)), float(m.group(2))


def _text(html: str) -> str:
    from html import unescape

    return " ".join(unescape(re.sub(r"<[^>]+>", "", html)).split())


def test_counter_point_by_hand(corpus_or_skip: Path, tmp_path: Path) -> None:
    ddir = corpus_or_skip / CK
    pmc = _renamed(corpus_or_skip / BMM1, tmp_path / "pmc_perf.csv", BMM1_KERNEL, _kernel(ddir))
    out = tmp_path / "r.html"
    r = run_cli("--no-cache", "report", str(ddir), "--pmc", str(pmc), "-o", str(out))
    assert r.exit_code == 0, r.stderr
    html = out.read_text()
    # by hand: the GEMM's MFMA executions (code.json hit, over the 4 traced waves) x its FLOPs x the
    # grid's waves / traced waves (grid 512x128 of 256 work-items: 256 workgroups of 4 waves)
    code = json.loads((ddir / "code.json").read_text())["code"]
    mfma_hits = sum(row[6] for row in code if str(row[0]).startswith("v_mfma_f32_32x32x8_f16"))
    assert mfma_hits == 1024
    grid_flops = mfma_hits * MFMA_32x32x8_FLOPS * (512 * 128 // 64) / 4
    # the counters, by hand (HARDWARE.md §6 gfx942): 128·BUBBLE + 64·(RDREQ − BUBBLE − 32B) + 32·32B per
    # dispatch; the duration End − Start; each the median over the kernel's dispatches
    with (corpus_or_skip / BMM1).open(newline="") as fh:
        rows = [x for x in csv.DictReader(fh) if x["Kernel_Name"].startswith(BMM1_KERNEL)]
    assert len(rows) == 150

    def fabric(x: dict[str, str]) -> float:
        bubble, req, b32 = (float(x[k]) for k in ("TCC_BUBBLE_sum", "TCC_EA0_RDREQ_sum", "TCC_EA0_RDREQ_32B_sum"))
        return max(0.0, 128 * bubble + 64 * (req - bubble - b32) + 32 * b32)

    nbytes = statistics.median(fabric(x) for x in rows)
    seconds = statistics.median(float(x["End_Timestamp"]) - float(x["Start_Timestamp"]) for x in rows) * 1e-9
    intensity, rate = _point(html, "roofline-counter-point")
    # the FLOPs are the trace's (MFMA, plus any FP VALU: at most a few percent more here)
    assert grid_flops / nbytes <= intensity <= 1.02 * grid_flops / nbytes
    assert grid_flops / seconds <= rate <= 1.02 * grid_flops / seconds
    # and exactly the trace point's FLOPs: its rate × the kernel trace's duration (rocpd: 24,046 ns)
    t_intensity, t_rate = _point(html, "roofline-point")
    flops = t_rate * 24046e-9
    assert rate == pytest.approx(flops / seconds, rel=1e-5)
    assert intensity == pytest.approx(flops / nbytes, rel=1e-5)
    text = _text(html)
    assert "The counters' point (square, ck_tile::kentry<…>, 150 dispatch(es)" in text
    assert "counters: " in text and "No point from the counters" not in text


def test_counters_of_another_kernel_give_no_point_and_say_why(corpus_or_skip: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    r = run_cli("--no-cache", "report", str(corpus_or_skip / CK), "--pmc", str(corpus_or_skip / BMM1), "-o", str(out))
    assert r.exit_code == 0, r.stderr
    html = out.read_text()
    assert "roofline-counter-point" not in html and 'class="roofline-point"' in html
    assert ("No point from the counters: no kernel in the counter files is the traced one (2 kernel(s) in "
            "the files, none with this name and template arguments)") in _text(html)


def test_a_per_cu_trace_point_gets_no_counter_point(corpus_or_skip: Path, tmp_path: Path) -> None:
    """The example has no kernel trace: its point is per CU, and the counters (whole dispatches)
    cannot be scaled to it without the grid's size."""
    from hotspot.examples import example_dispatch_dir

    pmc = _renamed(corpus_or_skip / BMM1, tmp_path / "pmc_perf.csv", BMM1_KERNEL, _kernel(example_dispatch_dir()))
    out = tmp_path / "r.html"
    r = run_cli("--no-cache", "report", "--example", "--pmc", str(pmc), "-o", str(out))
    assert r.exit_code == 0, r.stderr
    text = _text(out.read_text())
    assert "No point from the counters: the counters measured whole dispatches" in text
    assert "name one with --meta" in text


def test_an_unreadable_counter_file_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "x.csv"
    bad.write_text("a,b\n1,2\n")
    out = tmp_path / "r.html"
    r = run_cli("--no-cache", "report", "--example", "--pmc", str(bad), "-o", str(out))
    assert r.exit_code == 3 and "(next: " in r.stderr and "Traceback" not in r.stderr
    assert not out.exists()


def test_the_counter_files_are_parsed_once(corpus_or_skip: Path, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The plan's memory verdicts and the roofline's counter point read one parse of the files."""
    import hotspot.pmc.api as pmc_api

    ddir = corpus_or_skip / CK
    pmc = _renamed(corpus_or_skip / BMM1, tmp_path / "pmc_perf.csv", BMM1_KERNEL, _kernel(ddir))
    parsed: list[list[Path]] = []
    real = pmc_api.load_counter_files

    def spy(paths: list[Path]):  # type: ignore[no-untyped-def]
        parsed.append(list(paths))
        return real(paths)

    monkeypatch.setattr(pmc_api, "load_counter_files", spy)
    out = tmp_path / "r.html"
    r = run_cli("--no-cache", "report", str(ddir), "--pmc", str(pmc), "-o", str(out))
    assert r.exit_code == 0, r.stderr
    assert parsed == [[pmc]]
    assert 'class="roofline-counter-point"' in out.read_text()  # the point drawn from that one parse


def test_the_no_match_warning_is_one_short_line(corpus_or_skip: Path) -> None:
    """`analyze --pmc` with counters of another kernel: the warning names the traced ck_tile kernel
    (over 3,000 characters in full) by a short form, on one line of at most 200 characters."""
    ddir = corpus_or_skip / CK
    full = _kernel(ddir)
    assert len(full) > 3000
    r = run_cli("--no-cache", "analyze", str(ddir), "--pmc", str(corpus_or_skip / BMM1), "--plan")
    assert r.exit_code == 0, r.stderr
    line = next(x for x in r.stderr.splitlines() if "is not in the counter files" in x)
    assert len(line) <= 200
    assert line == ("warning: pmc: kentry<…> is not in the counter files (2 kernel(s) in the files, none "
                    "with this name and template arguments); memory verdicts left out of the plan")


def test_a_saved_analysis_gets_the_same_points(corpus_or_skip: Path, tmp_path: Path) -> None:
    """`report SAVED.json --pmc`: a saved analysis holds every executed instruction (the only rows
    with FLOPs), its ceilings and its launch: both points are those of the capture's report."""
    ddir = corpus_or_skip / CK
    pmc = _renamed(corpus_or_skip / BMM1, tmp_path / "pmc_perf.csv", BMM1_KERNEL, _kernel(ddir))
    saved = tmp_path / "saved.json"
    saved.write_text(run_cli("--no-cache", "analyze", str(ddir), "--format", "json").stdout)
    pages = {}
    for name, target in (("dir", ddir), ("saved", saved)):
        out = tmp_path / f"{name}.html"
        r = run_cli("--no-cache", "report", str(target), "--pmc", str(pmc), "-o", str(out))
        assert r.exit_code == 0, r.stderr
        pages[name] = out.read_text()
    for cls in ("roofline-point", "roofline-counter-point"):
        assert _point(pages["saved"], cls) == _point(pages["dir"], cls)
    assert "The counters' point (square, ck_tile::kentry<…>, 150 dispatch(es)" in _text(pages["saved"])


def test_a_saved_analysis_cut_to_its_top_rows_says_why_it_has_no_roofline(corpus_or_skip: Path,
                                                                         tmp_path: Path) -> None:
    ddir = corpus_or_skip / CK
    pmc = _renamed(corpus_or_skip / BMM1, tmp_path / "pmc_perf.csv", BMM1_KERNEL, _kernel(ddir))
    saved = tmp_path / "saved.json"
    saved.write_text(run_cli("--no-cache", "analyze", str(ddir), "--format", "json", "--topk", "5").stdout)
    out = tmp_path / "r.html"
    r = run_cli("--no-cache", "report", str(saved), "--pmc", str(pmc), "-o", str(out))
    assert r.exit_code == 0, r.stderr
    html = out.read_text()
    assert "roofline-point" not in html and "roofline-counter-point" not in html
    assert ("No roofline: it counts the FLOPs of every executed instruction, and this page holds only "
            "the top ones") in _text(html)
