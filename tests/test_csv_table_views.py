"""`--format csv` of occupancy, doctor, sweep status and sweep report (docs/csv.md, issue 38 point
5): their tables, every value as the JSON gives it."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from hotspot.commandspec import formats_of
from tests.fake_rocprofv3.helpers import clean_env, fake  # noqa: F401  (fixture)
from tests.sweep_support import entry, hotspot, no_inherited_devices, write_recipes  # noqa: F401


def _blocks(text: str) -> dict[str, list[dict[str, str]]]:
    out: dict[str, list[dict[str, str]]] = {}
    for block in text.rstrip("\n").split("\n\n# section: "):
        name, _, body = block.removeprefix("# section: ").partition("\n")
        out[name] = list(csv.DictReader(io.StringIO(body)))
    return out


def _cell(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def test_the_specs_declare_csv() -> None:
    import hotspot.commands.doctor  # noqa: F401
    import hotspot.commands.occupancy  # noqa: F401
    import hotspot.commands.sweep  # noqa: F401

    for view in ("occupancy", "doctor", "sweep status", "sweep report"):
        assert "csv" in formats_of(view), view


def test_occupancy_csv_is_its_json(cli) -> None:
    argv = ("occupancy", "--arch", "gfx942", "--vgpr", "128", "--agpr", "384", "--lds", "65536", "--wg", "256")
    data = cli("--no-cache", *argv, "--format", "json").json()["data"]
    r = cli("--no-cache", *argv, "--format", "csv")
    assert r.exit_code == 0, r.stderr
    b = _blocks(r.stdout)
    assert list(b) == ["occupancy", "limits", "next-steps", "notes"]
    fields = {row["field"]: row["value"] for row in b["occupancy"]}
    assert fields["waves_per_simd"] == str(data["waves_per_simd"]) == "1"
    assert fields["limiters"].split(";") == data["limiters"] == ["vgpr", "lds"]
    assert fields["lds_bytes"] == "65536" and fields["sgpr"] == ""
    assert {row["limit"]: row["waves_per_simd"] for row in b["limits"]} == {
        k: _cell(v) for k, v in data["limits"].items()}
    assert [row["limit"] for row in b["limits"] if row["binding"] == "true"] == ["vgpr", "lds"]
    assert [(s["limiter"], int(s["max_allowed"])) for s in b["next-steps"]] == [
        (k, v["max_allowed"]) for k, v in data["next_step"].items()]
    assert [n["note"] for n in b["notes"]] == data["notes"]


def test_doctor_csv_lists_the_checks_then_the_readiness(cli, monkeypatch, tmp_path) -> None:
    clean_env(monkeypatch, tmp_path, with_fake=False)  # no rocprofv3: collection not ready
    data = cli("doctor", "--for", "analyze", "--format", "json").json()["data"]
    r = cli("doctor", "--for", "analyze", "--format", "csv")
    assert r.exit_code == 0, r.stderr
    b = _blocks(r.stdout)
    assert [(c["check"], c["status"], c["required"]) for c in b["checks"]] == [
        (c["name"], c["status"], _cell(c["required"])) for c in data["checks"]]
    ready = {row["field"]: row["value"] for row in b["readiness"]}
    assert ready["analysis_ready"] == "true" and ready["collection_ready"] == ""  # --for analyze
    assert ready["tools_ready"] == "false" and "rocprofv3" in ready["missing"].split(";")
    # the default checks both: exit 5, the checks in CSV on stdout, the error on stderr
    both = cli("doctor", "--format", "csv")
    assert both.exit_code == 5 and both.stdout.startswith("# section: checks\n") and "next:" in both.stderr
    assert {row["field"]: row["value"] for row in _blocks(both.stdout)["readiness"]}["collection_ready"] == "false"


def test_sweep_status_and_report_csv_are_their_json(fake, tmp_path) -> None:
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("reduce_rows", 0.0, rec), entry("broken", 0.0, rec, code=5)])
    sw = fake.root / "sw"
    assert hotspot("sweep", str(recipes), "--gpus", "0-1", "-o", str(sw)).returncode == 6
    for words in (("status",), ("report",)):
        j = hotspot("sweep", *words, str(sw), "--format", "json")
        doc = json.loads(j.stdout)["data"]
        r = hotspot("sweep", *words, str(sw), "--format", "csv")
        assert r.returncode == j.returncode, r.stderr  # the exit code is the Result's, whatever the format
        if words == ("report",):  # one table: a plain CSV
            rows = list(csv.DictReader(io.StringIO(r.stdout)))
        else:
            b = _blocks(r.stdout)
            assert list(b) == ["entries", "workers", "slurm-tasks", "problems"]
            rows = b["entries"]
        assert [(x["entry"], x["state"]) for x in rows] == [(e["name"], e["state"]) for e in doc["entries"]]
        assert {x["entry"]: x["log"] for x in rows} == {e["name"]: _cell(e["log"]) for e in doc["entries"]}
        if words == ("report",):
            done = next(x for x in rows if x["state"] == "done")
            s = next(e["summary"] for e in doc["entries"] if e["name"] == done["entry"])
            assert done["kernel"] == s["kernel"] and done["total_cycles"] == _cell(s["total_cycles"])
            assert done["top_plan_item"] == _cell((s["top_plan_item"] or {}).get("id"))
            failed = next(x for x in rows if x["state"] == "failed")
            assert failed["kernel"] == "" and failed["reason"]
