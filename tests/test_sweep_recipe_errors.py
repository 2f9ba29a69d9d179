"""Recipe errors stay readable and the YAML reader stays bounded: every problem line at most 200
characters, a duplicate name reported among the other problems, a problem in `defaults` once, and a
hostile file (an alias bomb, an alias inside its own anchor) refused at once with one line."""

from __future__ import annotations

import json
import time

import pytest

from hotspot.errors import InputError
from hotspot.sweep.recipes import MAX_LINE, MAX_VALUES, load_recipes
from tests.sweep_support import hotspot

LONG_DIR = "/nonexistent/" + "a_rather_long_directory_name_for_a_benchmark_suite/" * 6


def _bad_file(tmp_path):
    text = f"""
defaults:
  timeout_s: -3
  env: {{HIP_VISIBLE_DEVICES: "1"}}
entries:
  - {{name: a, cmd: [x]}}
  - {{name: a, cmd: []}}
  - name: b
    cmd: [y]
    {"bogus_" * 30}field: 1
  - name: "{'not a safe name ' * 10}"
    cmd: [z]
    cwd: {LONG_DIR}y
  - {{name: c, cmd: [w], kernel: "(unclosed"}}
"""
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    return path


def test_problem_lines_fit_200_columns_duplicates_among_others_defaults_once(tmp_path):
    path = _bad_file(tmp_path)
    proc = hotspot("sweep", str(path), "--gpus", "0", "--format", "json")
    assert proc.returncode == 3
    problems = json.loads(proc.stdout)["error"]["details"]["problems"]
    lines = proc.stderr.splitlines()
    assert lines and all(len(ln) <= MAX_LINE for ln in lines), max(lines, key=len)
    listed = [ln for ln in lines if ln.startswith("  entry ")]
    assert len(listed) == len(problems)  # one line per problem, all at once
    by = [(p["entry"], p["field"]) for p in problems]
    # the duplicate, although that entry (and others) have problems of their own
    assert ("#2 (a)", "name") in by and ("#2 (a)", "cmd") in by
    assert ("#3 (b)", "bogus_" * 30 + "field") in by and ("#5 (c)", "kernel") in by
    assert any(e.startswith("#4") and f == "cwd" for e, f in by)
    # the defaults' two problems once each, not once per entry (five entries)
    assert [f for e, f in by if e == "(defaults)"] == ["env.HIP_VISIBLE_DEVICES", "timeout_s"]
    assert sum(": timeout_s: " in ln for ln in listed) == 1
    # a line cut to fit keeps the path's end and the whole fix
    cwd_line = next(ln for ln in listed if ln.startswith("  entry #4") and ": cwd: " in ln)
    assert "suite/y is not a directory (fix: create it, or fix the path)" in cwd_line
    assert len(next(p["problem"] for p in problems if p["field"] == "cwd" and p["entry"].startswith("#4"))) > 300


BOMB = """a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
entries: *i
"""


def test_an_alias_bomb_is_refused_within_half_a_second(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(BOMB)  # 9^9 = 387,420,489 values once expanded
    start = time.perf_counter()
    with pytest.raises(InputError) as err:
        load_recipes(path)
    assert time.perf_counter() - start <= 0.5
    assert f"expands to more than {MAX_VALUES:,} values through its aliases" in err.value.message
    assert "\n" not in err.value.message
    proc = hotspot("sweep", str(path), "--gpus", "0", timeout=60)
    assert proc.returncode == 3
    assert len(proc.stderr.strip().splitlines()) == 1 and "aliases" in proc.stderr


def test_an_alias_inside_its_own_anchor_is_refused(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("entries: &e [{name: a, cmd: [x]}, *e]\n")
    with pytest.raises(InputError, match="alias inside its own anchor"):
        load_recipes(path)


def test_ordinary_aliases_and_merge_keys_still_read(tmp_path):
    path = tmp_path / "ok.yaml"
    path.write_text("defaults: {timeout_s: 60}\nentries:\n  - &base {name: a, cmd: [x], tags: [t]}\n"
                    "  - {<<: *base, name: b}\n  - {<<: *base, name: c, cmd: [y]}\n")
    r = load_recipes(path)
    assert [(e.name, e.cmd, e.tags, e.timeout_s) for e in r.entries] == [
        ("a", ("x",), ("t",), 60.0), ("b", ("x",), ("t",), 60.0), ("c", ("y",), ("t",), 60.0)]


def test_a_file_of_too_many_plain_values_is_refused_within_half_a_second(tmp_path):
    """No alias at all, only a large file (under the byte cap): refused while its events are walked,
    not after minutes of building values."""
    path = tmp_path / "huge.yaml"
    row = "  - {name: e%d, cmd: [run, --size, '4096'], tags: [a, b]}\n"
    # 12 values an entry (the map, 3 keys, the name, 2 lists and their 5 items), 3 around them
    # (the top map, `entries`, its list): the most entries the count allows, by hand
    most = (MAX_VALUES - 3) // 12
    path.write_text("entries:\n" + "".join(row % i for i in range(most + 1)))
    start = time.perf_counter()
    with pytest.raises(InputError) as err:
        load_recipes(path)
    assert time.perf_counter() - start <= 0.5
    assert f"holds more than {MAX_VALUES:,} values" in err.value.message and "alias" not in err.value.message
    assert "split the entries" in err.value.hint
    # one entry fewer reads: the count is of values, exactly
    path.write_text("entries:\n" + "".join(row % i for i in range(most)))
    assert len(load_recipes(path).entries) == most


def test_a_file_over_the_byte_cap_is_refused_unread(tmp_path):
    from hotspot.sweep.recipes import MAX_RECIPES_BYTES

    path = tmp_path / "big.yaml"
    with open(path, "wb") as fh:
        fh.truncate(MAX_RECIPES_BYTES + 1)  # sparse: nothing to read, only its size
    start = time.perf_counter()
    with pytest.raises(InputError) as err:
        load_recipes(path)
    assert time.perf_counter() - start <= 0.5
    assert f"{MAX_RECIPES_BYTES + 1} bytes, more than the 16 MiB" in err.value.message
    assert "split the entries" in err.value.hint  # the user's file, not one hotspot wrote


def test_deep_nesting_is_refused_at_once(tmp_path):
    path = tmp_path / "deep.yaml"
    path.write_text("entries:\n" + "".join("  " * i + "- \n" for i in range(200)))
    start = time.perf_counter()
    with pytest.raises(InputError, match="nested more than 32 levels deep"):
        load_recipes(path)
    assert time.perf_counter() - start <= 0.5
