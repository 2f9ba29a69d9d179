"""Hostile input to `hotspot sweep` (issue 28): every case is refused fast with one line and its
documented exit code; nothing hangs, nothing is left half-written, the JSON envelope tells the truth."""

from __future__ import annotations

import errno
import json
import os
import time

import pytest

from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import (
    entry,
    hotspot,
    no_inherited_devices,  # noqa: F401  (autouse fixture)
    write_recipes,
)


def run_json(*args: str, timeout: float = 60) -> tuple[int, dict, str]:
    proc = hotspot(*args, "--format", "json", timeout=timeout)
    return proc.returncode, json.loads(proc.stdout), proc.stderr


@pytest.mark.parametrize("spec", ["0-99999999", "9" * 5000, "0-" + "9" * 40, "x" * 100_000, "0,,1", "1-0"])
def test_robust_gpus_garbage_refused_fast(tmp_path, spec):
    recipes = write_recipes(tmp_path / "r.yaml", [entry("a", 0.0, tmp_path / "rec.jsonl")])
    t0 = time.monotonic()
    code, doc, err = run_json("sweep", str(recipes), "--gpus", spec, "-o", str(tmp_path / "sw"))
    assert time.monotonic() - t0 < 30  # was: 4.7 GB and a hang for 0-99999999
    assert code == 2 and doc["error"]["code"] == "usage" and "--gpus" in doc["error"]["message"]
    assert len(err.strip().splitlines()) == 1 and len(err) < 400
    assert not (tmp_path / "sw").exists()


def test_robust_gpus_bounds_in_process():
    from hotspot.errors import UsageError
    from hotspot.sweep.api import MAX_GPUS, parse_gpus

    assert parse_gpus(f"0-{MAX_GPUS - 1}") == tuple(range(MAX_GPUS))
    assert parse_gpus("0-2,1,0") == (0, 1, 2)
    with pytest.raises(UsageError, match="beyond any node"):
        parse_gpus(f"0-{MAX_GPUS}")


def test_robust_status_refuses_a_fifo_manifest(tmp_path):
    sw = tmp_path / "sw"
    sw.mkdir()
    os.mkfifo(sw / "sweep.json")
    t0 = time.monotonic()
    code, doc, err = run_json("sweep", "status", str(sw), timeout=30)
    assert time.monotonic() - t0 < 20
    assert code == 3 and "not a regular file (a FIFO)" in doc["error"]["message"]
    assert len(err.strip().splitlines()) == 1


def test_robust_recipes_special_file_refused(tmp_path):
    os.mkfifo(tmp_path / "r.yaml")
    code, doc, _ = run_json("sweep", str(tmp_path / "r.yaml"), "--gpus", "0", timeout=30)
    assert code == 3 and "a FIFO" in doc["error"]["message"]
    code, doc, _ = run_json("sweep", "/dev/zero", "--gpus", "0", timeout=30)
    assert code == 3 and "a character device" in doc["error"]["message"]


def test_robust_envelope_ok_false_when_entries_failed(fake, tmp_path):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("bad", 0.0, rec, code=7)])
    code, doc, _ = run_json("sweep", str(recipes), "--gpus", "0", "-o", str(fake.root / "sw"), timeout=120)
    assert code == 6 and doc["ok"] is False and doc["exit_code"] == 6
    assert doc["data"]["counts"]["failed"] == 1  # the data is still there


def test_robust_init_on_a_full_disk_leaves_nothing(tmp_path, monkeypatch):
    from hotspot.errors import InputError
    from hotspot.sweep import api

    real = os.fsync

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(api.os, "fsync", full)
    with pytest.raises(InputError) as err:
        api.write_example(tmp_path / "recipes.yaml")
    assert "No space left" in err.value.message and err.value.exit_code == 3
    assert sorted(os.listdir(tmp_path)) == []  # neither the file nor its temporary
    monkeypatch.setattr(api.os, "fsync", real)
    api.write_example(tmp_path / "recipes.yaml")
    from hotspot.sweep.recipes import EXAMPLE

    assert (tmp_path / "recipes.yaml").read_text() == EXAMPLE and sorted(os.listdir(tmp_path)) == ["recipes.yaml"]


@pytest.mark.parametrize("att,field,words", [
    ("{target_cu: 99999999999999999999999999999}", "att.target_cu", "not a CU id"),
    ("{target_cu: 100000}", "att.target_cu", "not a CU id"),
    ("{shader_engine_mask: 0x1ffffffffffffffff}", "att.shader_engine_mask", "above"),
    ("{simd_select: 0x1F}", "att.simd_select", "above"),
    ("{buffer_size: 0x" + "f" * 20 + "}", "att.buffer_size", "above"),
    ("{buffer_size: '" + "9" * 5000 + "'}", "att.buffer_size", "not a size"),
])
def test_robust_recipes_huge_att_values(tmp_path, att, field, words):
    (tmp_path / "r.yaml").write_text(f"- {{name: a, cmd: [x], att: {att}}}\n")
    code, doc, err = run_json("sweep", str(tmp_path / "r.yaml"), "--gpus", "0")
    assert code == 3, err
    (p,) = doc["error"]["details"]["problems"]
    assert p["field"] == field and words in p["problem"] and len(p["problem"]) < 120


def test_robust_recipes_target_cu_limit_comes_from_the_product_table():
    from hotspot.arch.products import PRODUCTS
    from hotspot.sweep.recipes import att_limits

    assert att_limits()["target_cu"] == max(p.cus for p in PRODUCTS.values()) - 1 == 303  # MI300X: 304 CUs
    assert att_limits()["simd_select"] == 0xF  # 4 SIMDs per CDNA CU


def test_robust_recipes_number_too_long_for_python(tmp_path):
    (tmp_path / "r.yaml").write_text("- {name: a, cmd: [x], att: {buffer_size: " + "9" * 5000 + "}}\n")
    code, doc, err = run_json("sweep", str(tmp_path / "r.yaml"), "--gpus", "0")
    assert code == 3 and "a value cannot be read" in doc["error"]["message"] and len(err) < 400


@pytest.mark.parametrize("text", ["[" * 100_000 + "]" * 100_000, "- " * 5000 + "x\n",
                                  "entries:\n  - {name: a, cmd: [x], env: " + "{a: " * 60 + "1" + "}" * 61 + "\n"])
def test_robust_recipes_deep_nesting(tmp_path, text):
    (tmp_path / "r.yaml").write_text(text)
    code, doc, err = run_json("sweep", str(tmp_path / "r.yaml"), "--gpus", "0")
    assert code == 3 and "nested more than 32 levels" in doc["error"]["message"], err
    assert "internal error" not in err


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf", "1e400", "0", "true", "'10'"])
def test_robust_recipes_timeout_not_a_number_of_seconds(tmp_path, value):
    (tmp_path / "r.yaml").write_text(f"- {{name: a, cmd: [x], timeout_s: {value}}}\n")
    code, doc, _ = run_json("sweep", str(tmp_path / "r.yaml"), "--gpus", "0")
    assert code == 3
    assert [(p["field"]) for p in doc["error"]["details"]["problems"]] == ["timeout_s"]


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_robust_cli_timeout_nan(tmp_path, value):
    recipes = write_recipes(tmp_path / "r.yaml", [entry("a", 0.0, tmp_path / "rec.jsonl")])
    code, doc, _ = run_json("sweep", str(recipes), "--gpus", "0", "--timeout", value, "-o", str(tmp_path / "sw"))
    assert code == 2 and "--timeout" in doc["error"]["message"]
    assert not (tmp_path / "sw").exists()


@pytest.mark.parametrize("path,value,field,what", [
    (("entries", 0, "attempts"), "two", "entries[0].attempts", "is not an integer"),
    (("entries", 0, "summary"), {"kernel": 3}, "entries[0].summary.kernel", "is not a string"),
    (("workers",), [], "workers", "is not an object"),
    (("recipes",), {"path": "r.yaml"}, "recipes.sha256", "is missing"),
])
def test_robust_manifest_with_a_wrong_field_is_one_line_naming_it(tmp_path, path, value, field, what):
    """sweep.json is decoded once where it is read: a field of the wrong type (or missing) is exit 3
    naming the file and the field, for every command that reads it, never a traceback later."""
    from hotspot.sweep import api, manifest as mf
    from hotspot.sweep.recipes import load_recipes

    recipes = write_recipes(tmp_path / "r.yaml", [entry("a", 0.0, tmp_path / "rec.jsonl")])
    sw = tmp_path / "sw"
    api._new_manifest(sw, load_recipes(recipes), api.SweepOptions(recipes=recipes))
    doc = json.loads((sw / mf.MANIFEST).read_text())
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    (sw / mf.MANIFEST).write_text(json.dumps(doc))
    for args in (("sweep", "status", str(sw)), ("sweep", "report", str(sw)),
                 ("sweep", str(recipes), "-o", str(sw), "--gpus", "0")):
        code, out, err = run_json(*args)
        assert code == 3 and out["error"]["code"] == "bad-input", (args, out)
        assert out["error"]["message"] == f"{sw / mf.MANIFEST}: field '{field}' {what}"
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_recipes_field_table_decodes_given_absent_null_and_merged(tmp_path):
    """Every entry field is in the field table and on the decoded entry (Given); a field the entry
    does not give comes from `defaults`, then from the table; an explicit null is the entry's own
    value (a problem), not the default; env and att maps merge, the entry's keys winning."""
    from dataclasses import fields

    from hotspot.errors import InputError
    from hotspot.sweep.recipes import ENTRY_FIELDS, Entry, Given, load_recipes

    assert [f.name for f in fields(Given)] == [*ENTRY_FIELDS, "present", "unknown"]
    assert set(ENTRY_FIELDS) <= {f.name for f in fields(Entry)} | {"att"}
    r = tmp_path / "r.yaml"
    r.write_text("defaults: {env: {A: '1', B: '2'}, att: {target_cu: 3}, timeout_s: 5}\n"
                 "entries:\n- {name: a, cmd: x, env: {B: '3'}, att: {simd_select: 3}}\n- {name: b, cmd: y}\n")
    a, b = load_recipes(r).entries
    assert (a.env, a.target_cu, a.simd_select, a.timeout_s) == ((("A", "1"), ("B", "3")), 3, 3, 5.0)
    assert (b.env, b.target_cu, b.simd_select, b.cwd, b.pmc, b.tags) == ((("A", "1"), ("B", "2")), 3, 0xF,
                                                                     str(tmp_path), (), ())
    r.write_text("defaults: {env: {A: '1'}}\nentries:\n- {name: a, cmd: x, env: null, cwd: null}\n")
    with pytest.raises(InputError) as err:
        load_recipes(r)
    assert [(p["entry"], p["field"], p["problem"]) for p in err.value.details["problems"]] == [
        ("#1 (a)", "cwd", "is a NoneType"), ("#1 (a)", "env", "is a NoneType")]
