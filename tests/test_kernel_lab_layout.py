"""The kernel-library layout (`<kernel>/att_viewer/<name>/ui_output_*` with the discovery CSVs in
`<kernel>/compute_viewer/`): LDS, workgroup size and arch are found there, each with its source
(issue 15 point 3; corpus fixture layouts/kernel-lab)."""

from __future__ import annotations

import csv
from pathlib import Path

from tests.conftest import corpus_path

LAB = corpus_path("layouts", "kernel-lab", "blockscale_preshuffle_gemm")


def _dispatch_dir() -> Path:
    return next((LAB / "att_viewer" / "big").glob("ui_output_agent_*_dispatch_*"))


def _trace_row(kernel: str) -> dict[str, str]:
    path = next((LAB / "compute_viewer").glob("*kernel_trace.csv"))
    with path.open(newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["Kernel_Name"].startswith(kernel[:24])]
    assert rows, f"{kernel} not in {path}"
    return rows[0]


def test_resources_and_arch_come_from_compute_viewer(cli, corpus) -> None:
    data = cli("analyze", _dispatch_dir(), "--format", "json").json()["data"]
    arch = data["arch"]
    assert arch["gfx"] == "gfx950" and arch["known"] is True
    assert "compute_viewer" in arch["source"] and "agent_info" in arch["source"]
    res = data["occupancy"]["resources"]
    row = _trace_row(data["dispatch"]["kernel"])
    wg = int(row["Workgroup_Size_X"]) * int(row["Workgroup_Size_Y"]) * int(row["Workgroup_Size_Z"])
    assert res["lds"] == int(row["LDS_Block_Size"]) and res["wg"] == wg
    for field in ("lds_bytes", "wg_threads"):
        assert "compute_viewer" in res["source"][field], res["source"]
    assert data["occupancy"]["limits"]["lds"] is not None and not data["occupancy"]["unknown_limits"]


def test_meta_names_side_files_explicitly(cli, corpus, tmp_path: Path) -> None:
    """A capture copied away from its side files finds nothing; --meta FOLDER brings them back."""
    import shutil

    d = tmp_path / "ui_output_agent_1_dispatch_1"
    shutil.copytree(corpus_path("att", "gfx950", "vec_add"), d)
    alone = cli("analyze", d, "--format", "json").json()["data"]
    assert alone["arch"]["known"] is False and alone["occupancy"]["resources"]["wg"] is None
    meta = corpus_path("att", "gfx950", "vec_add.meta")
    found = cli("analyze", d, "--meta", meta, "--format", "json").json()["data"]
    assert found["arch"]["gfx"] == "gfx950" and str(meta) in found["arch"]["source"]
    assert found["occupancy"]["resources"]["wg"] is not None
    assert str(meta) in found["occupancy"]["resources"]["source"]["wg_threads"]
