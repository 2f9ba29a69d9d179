"""`hotspot sweep` on one node with the fake rocprofv3: scheduling invariants, outcomes per entry,
resume, retries, changed recipes. Every entry's application records (pid, GPU env, start, end)."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import (
    entry,
    finished,
    hotspot,
    manifest,
    no_inherited_devices,  # noqa: F401  (autouse fixture)
    new_manifest,
    no_overlap_per_gpu,
    states,
    write_recipes,
)


def run_json(*args: str) -> tuple[int, dict]:
    proc = hotspot(*args, "--format", "json")
    doc = json.loads(proc.stdout)
    return proc.returncode, doc


def test_every_entry_once_every_gpu_used_no_gpu_shared(fake, tmp_path):
    rec = tmp_path / "rec.jsonl"
    names = [f"k{i}" for i in range(6)]
    recipes = write_recipes(fake.root / "lib.yaml", [entry(n, 0.3, rec) for n in names])
    code, doc = run_json("sweep", str(recipes), "--gpus", "0-2", "-o", str(fake.root / "sw"))
    assert code == 0, doc
    assert doc["ok"] and doc["data"]["counts"]["done"] == 6
    runs = finished(rec)
    assert sorted(r["name"] for r in runs) == names  # each entry's app ran exactly once
    no_overlap_per_gpu(runs)
    assert {r["gpu"] for r in runs} == {"0", "1", "2"}
    m = manifest(fake.root / "sw")
    for e in m["entries"]:
        assert e["state"] == "done" and e["attempts"] == 1
        assert str(e["gpu"]) == next(r["gpu"] for r in runs if r["name"] == e["name"])
        assert (fake.root / "sw" / e["report_html"]).is_file()
        s = e["summary"]
        assert s["kernel"] == "reduce_kernel(float*, int)" and s["arch"] == "gfx942"
        # the fake's reduce_kernel lasts 8000 ns + (round % 3) * 10; the ATT run traces calls 5-6
        with (fake.root / "sw" / e["run_dir"] / "att" / "out_kernel_trace.csv").open() as fh:
            row = next(r for r in csv.reader(fh) if r[5] == s["dispatch"].rsplit("_", 1)[1])
        assert s["traced_dispatch_ns"] == int(row[10]) - int(row[9]) and 8000 <= s["traced_dispatch_ns"] <= 8020
        # avg ns of a `kernel:` entry (no discovery): the kernel trace's dispatches of that kernel that
        # were not traced (the traced ones have a ui_output_agent_*_dispatch_<id> folder)
        att = fake.root / "sw" / e["run_dir"] / "att"
        traced_ids = {p.name.rsplit("_", 1)[1] for p in att.glob("ui_output_agent_*_dispatch_*")}
        with (att / "out_kernel_trace.csv").open() as fh:
            untraced = [int(r[10]) - int(r[9]) for r in list(csv.reader(fh))[1:]
                        if r[7] == row[7] and r[5] not in traced_ids]
        assert traced_ids and untraced and s["duration_ns"] == pytest.approx(sum(untraced) / len(untraced))
        plan = json.loads((fake.root / "sw" / e["plan_json"]).read_text())["data"]
        assert s["top_plan_item"]["id"] == plan["plan"][0]["id"]
        assert s["headroom_pct"] == max(p["estimate"]["high_pct"] for p in plan["plan"])
        top = max(plan["stall_by_category"], key=lambda c: c["stall"])
        assert (s["top_stall_category"], s["top_stall_share"]) == (top["category"], top["share"])
    # rerun: everything is skipped, nothing runs again: nothing to do (exit 7)
    code, doc = run_json("sweep", str(recipes), "--gpus", "0-2", "-o", str(fake.root / "sw"))
    assert code == 7 and doc["data"]["ran"] == [] and doc["data"]["to_do"] == 0
    assert len(finished(rec)) == 6


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.1, 0.25]), st.booleans()), min_size=1, max_size=5),
       st.integers(min_value=1, max_value=3))
def test_scheduling_invariants_random(fake, tmp_path_factory, jobs, n_gpus):
    tmp = tmp_path_factory.mktemp("hyp")
    rec = tmp / "rec.jsonl"
    entries = [entry(f"e{i}", s, rec, code=3 if fails else 0) for i, (s, fails) in enumerate(jobs)]
    recipes = write_recipes(tmp / "r.yaml", entries)
    code, doc = run_json("sweep", str(recipes), "--gpus", f"0-{n_gpus - 1}", "-o", str(tmp / "sw"),
                         "--att-retries", "0")
    runs = finished(rec)
    assert sorted(r["name"] for r in runs) == sorted(e["name"] for e in entries)
    no_overlap_per_gpu(runs)
    used = {r["gpu"] for r in runs}
    assert used == {str(g) for g in range(min(n_gpus, len(entries)))}
    want = {f"e{i}": "failed" if fails else "done" for i, (_, fails) in enumerate(jobs)}
    assert states(tmp / "sw") == want
    assert code == (6 if any(f for _, f in jobs) else 0)


def test_failing_app_timeout_and_the_sweep_goes_on(fake, tmp_path):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [
        entry("bad", 0.0, rec, code=7),
        entry("slow", 30, rec, timeout_s=1.0),
        entry("good", 0.1, rec)])
    code, doc = run_json("sweep", str(recipes), "--gpus", "0", "-o", str(fake.root / "sw"))
    assert code == 6
    by = {e["name"]: e for e in manifest(fake.root / "sw")["entries"]}
    assert by["bad"]["state"] == "failed" and by["bad"]["exit_code"] == 6
    assert "exited 7" in by["bad"]["reason"]
    assert (fake.root / "sw" / by["bad"]["log"]).is_file()
    assert by["slow"]["state"] == "timed-out" and "timed out after 1 s" in by["slow"]["reason"]
    assert by["slow"]["elapsed_s"] < 10
    assert by["good"]["state"] == "done"
    slow = [r for r in json.loads(json.dumps(finished(rec))) if r["name"] == "slow"]
    assert slow == []  # the sleeping app was stopped, it never finished its sleep


def test_empty_trace_retries_other_cus_then_succeeds_or_marks_empty(fake, tmp_path, monkeypatch):
    rec = tmp_path / "rec.jsonl"
    # CU 1 (the default) and CU 0 are empty: the 3rd capture (CU 0, wide mask) is still empty
    monkeypatch.setenv("FAKE_ROCPROF_EMPTY_CUS", "1,0")
    recipes = write_recipes(fake.root / "r.yaml", [entry("tiny", 0.0, rec, kernel=None)])
    code, _ = run_json("sweep", str(recipes), "--gpus", "0", "-o", str(fake.root / "a"), "--att-retries", "2")
    e = manifest(fake.root / "a")["entries"][0]
    assert code == 4 and e["state"] == "empty"
    assert [(a["target_cu"], a["shader_engine_mask"]) for a in e["att_attempts"]] == [(1, "0x1"), (1, "0xf"), (0, "0xf")]
    assert all(a["outcome"] == "empty-trace" for a in e["att_attempts"])
    assert "3 capture(s)" in e["reason"] and "remedies" in e["reason"]
    # the fake log shows the retries traced the discovered kernel without a second discovery
    calls = fake.calls()
    att = [c["jobs"][0] for c in calls if c["jobs"][0].get("advanced_thread_trace")]
    assert [j["att_target_cu"] for j in att] == [1, 1, 0]
    assert len({j["kernel_include_regex"] for j in att}) == 1 and len(calls) == 4
    # one more retry reaches CU 0 with mask 0xff... still CU 0: empty; CU 2 would work
    monkeypatch.setenv("FAKE_ROCPROF_EMPTY_CUS", "1")
    code, _ = run_json("sweep", str(recipes), "--gpus", "0", "-o", str(fake.root / "a"), "--retry", "empty")
    e = manifest(fake.root / "a")["entries"][0]
    assert code == 0 and e["state"] == "done" and e["attempts"] == 2
    assert [a["outcome"] for a in e["att_attempts"]] == ["empty-trace", "empty-trace", "ok"]
    assert e["history"][0]["state"] == "empty"


def test_resume_retry_only_and_changed_recipes(fake, tmp_path):
    rec = tmp_path / "rec.jsonl"
    entries = [entry("a", 0.0, rec), entry("b", 0.0, rec, code=2)]
    recipes = write_recipes(fake.root / "lib.yaml", entries)
    code, doc = run_json("sweep", str(recipes), "--gpus", "0,1")
    sweep_dir = Path(doc["data"]["sweep_dir"])
    assert code == 6 and sweep_dir.parent == fake.root / "hotspot-sweeps"
    # same command: resumes the same directory, runs nothing (failed needs --retry)
    code, doc = run_json("sweep", str(recipes), "--gpus", "0,1")
    assert Path(doc["data"]["sweep_dir"]) == sweep_dir and doc["data"]["ran"] == []
    code, doc = run_json("sweep", str(recipes), "--gpus", "0,1", "--retry", "failed")
    assert [r["name"] for r in doc["data"]["ran"]] == ["b"]
    # --only re-runs one entry whatever its state; the earlier capture stays reachable for a diff
    before = str(sweep_dir / manifest(sweep_dir)["entries"][0]["summary"]["dispatch"])  # relative inside
    code, doc = run_json("sweep", str(recipes), "--gpus", "0", "--only", "a")
    assert [r["name"] for r in doc["data"]["ran"]] == ["a"] and code == 0
    a = doc["data"]["entries"][0]
    assert a["attempts"] == 2 and a["history"][-1]["dispatch"] == before != a["summary"]["dispatch"]
    assert "attempt-1" in before and Path(before).is_dir() and "attempt-2" in a["summary"]["dispatch"]
    assert a["history"][-1]["requeued"] == "--only" and a["history"][-1]["state"] == "done"
    # a changed recipe is refused (exit 3, nothing run), then accepted with --force-recipes
    entries[1] = entry("b", 0.0, rec, code=0)
    write_recipes(recipes, entries + [entry("c", 0.0, rec)])
    code, doc = run_json("sweep", str(recipes), "--gpus", "0")
    assert code == 3 and doc["error"]["code"] == "recipes-changed"
    assert doc["error"]["details"] == {"changed": ["b"], "added": ["c"], "removed": []}
    n = len(finished(rec))
    code, doc = run_json("sweep", str(recipes), "--gpus", "0,1", "--force-recipes")
    assert code == 0 and sorted(r["name"] for r in doc["data"]["ran"]) == ["b", "c"]
    assert len(finished(rec)) == n + 2
    assert states(sweep_dir) == {"a": "done", "b": "done", "c": "done"}


def test_bad_recipes_report_every_problem_and_run_nothing(fake, tmp_path):
    (fake.root / "bad.yaml").write_text(
        "defaults: {timeout_s: 0}\nentries:\n  - {name: 'a b', cmd: 3}\n  - {name: ok, cmd: [x], iterations: zz}\n"
        "  - {name: ok, cmd: [y], att: {target_cu: nope, cu: 1}}\n")
    code, doc = run_json("sweep", str(fake.root / "bad.yaml"), "--gpus", "0")
    assert code == 3 and not doc["ok"]
    problems = [(p["entry"], p["field"]) for p in doc["error"]["details"]["problems"]]
    # the defaults' problem once (not once per entry), the duplicate name although #3 has other problems
    assert problems == [("(defaults)", "timeout_s"), ("#1 (a b)", "name"), ("#1 (a b)", "cmd"),
                        ("#2 (ok)", "iterations"), ("#3 (ok)", "name"), ("#3 (ok)", "att.target_cu"),
                        ("#3 (ok)", "att.cu")]
    assert all(p["fix"] for p in doc["error"]["details"]["problems"])
    assert not (fake.root / "hotspot-sweeps").exists() and fake.calls() == []


def test_init_writes_a_valid_example_and_never_overwrites(tmp_path):
    from hotspot.sweep.recipes import load_recipes

    proc = hotspot("sweep", "--init", str(tmp_path / "r.yaml"))
    assert proc.returncode == 0, proc.stderr
    rec = load_recipes(tmp_path / "r.yaml")
    assert [e.name for e in rec.entries] == ["gemm_bf16", "layernorm"]
    assert rec.entries[0].kernel == "^gemm_" and rec.entries[0].buffer_size == 256 << 20
    assert rec.entries[1].cmd == ("python", "bench_norm.py", "--rows", "4096") and rec.entries[1].timeout_s == 300
    assert rec.entries[1].env == (("HIP_FORCE_DEV_KERNARG", "1"),)
    before = (tmp_path / "r.yaml").read_bytes()
    proc = hotspot("sweep", "--init", str(tmp_path / "r.yaml"))
    assert proc.returncode == 3 and (tmp_path / "r.yaml").read_bytes() == before


@pytest.mark.parametrize("spec,want", [("0-3", (0, 1, 2, 3)), ("0,2,5", (0, 2, 5)), ("0-1,4", (0, 1, 4)),
                                       ("3", (3,))])
def test_gpu_lists(spec, want):
    from hotspot.sweep.api import parse_gpus

    assert parse_gpus(spec) == want


def test_gpu_list_errors():
    from hotspot.errors import UsageError
    from hotspot.sweep.api import parse_gpus

    for bad in ("3-1", "a", "0,,1", ""):
        with pytest.raises(UsageError):
            parse_gpus(bad)


def test_doctor_lists_gpus_from_kfd_topology(tmp_path, monkeypatch):
    from hotspot.collect.rocm_tools import parse_kfd_topology

    nodes = tmp_path / "class" / "kfd" / "kfd" / "topology" / "nodes"
    props = {0: "cpu_cores_count 64\nsimd_count 0\ngfx_target_version 0\n",
             1: "cpu_cores_count 0\nsimd_count 1216\ngfx_target_version 90402\n",
             2: "simd_count 1024\ngfx_target_version 90500\n", 10: "simd_count 440\ngfx_target_version 90010\n"}
    for n, text in props.items():
        (nodes / str(n)).mkdir(parents=True)
        (nodes / str(n) / "properties").write_text(text)
    gpus = parse_kfd_topology(tmp_path)
    assert [(g.index, g.gfx) for g in gpus] == [(0, "gfx942"), (1, "gfx950"), (2, "gfx90a")]
    assert parse_kfd_topology(tmp_path / "nothing") == []
    # what doctor (and sweep --gpus all) use when no ROCm tool is installed
    from hotspot.collect import rocm_tools as tools

    monkeypatch.setattr(tools, "find_tool", lambda name, rocprofv3=None: None)
    found, how = tools.list_gpus(None, sysfs_root=tmp_path)
    assert how == "kfd-topology" and [g.gfx for g in found] == ["gfx942", "gfx950", "gfx90a"]
    found, how = tools.list_gpus(None, sysfs_root=tmp_path / "nothing")
    assert found == [] and "rocminfo: not found" in how and "kfd topology" in how


def test_amd_smi_json():
    from hotspot.collect.rocm_tools import parse_amd_smi

    text = json.dumps([{"gpu": 1, "asic": {"market_name": "MI300X", "target_graphics_version": "gfx942"}},
                       {"gpu": 0, "asic": {"market_name": "MI300X", "target_graphics_version": "gfx942"}}])
    assert [(g.index, g.gfx, g.product) for g in parse_amd_smi(text)] == [(0, "gfx942", "MI300X"), (1, "gfx942", "MI300X")]
    assert [g.index for g in parse_amd_smi(json.dumps({"gpu_data": json.loads(text)}))] == [0, 1]
    assert parse_amd_smi("not json") == []


def test_gpu_is_free_only_when_the_whole_tree_exited(fake, tmp_path):
    """An application that leaves a child behind in its group: the sweep kills it before the GPU's
    next entry starts."""
    from tests.sweep_support import pid_alive

    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("leaky", 0.0, rec, leak=True), entry("next", 0.0, rec)])
    code, doc = run_json("sweep", str(recipes), "--gpus", "0", "-o", str(fake.root / "sw"))
    assert code == 0, doc
    leaky = next(r for r in finished(rec) if r["name"] == "leaky")
    assert leaky["leaked"] and not pid_alive(leaky["leaked"])
    m = {e["name"]: e for e in manifest(fake.root / "sw")["entries"]}
    assert m["next"]["started_at"] >= m["leaky"]["finished_at"]


def test_worker_liveness_rules(monkeypatch):
    import os
    import time

    from hotspot.sweep import manifest as mf

    here = mf.hostname()
    doc = new_manifest(workers={"far:1": time.time() - 10, "old:1": time.time() - 999})
    assert not mf.worker_gone(doc, f"{here}:{os.getpid()}")  # us: alive
    assert mf.worker_gone(doc, f"{here}:999999999")  # no such pid on this host
    assert not mf.worker_gone(doc, "far:1")  # another host, fresh heartbeat
    assert mf.worker_gone(doc, "old:1") and mf.worker_gone(doc, "never:1")
    doc.entries = new_manifest([("a", "running"), ("b", "running")]).entries
    doc.entries[0].worker, doc.entries[1].worker = "old:1", "far:1"
    assert mf.reclaim_stale(doc) == ["a"]
    assert [e.state for e in doc.entries] == ["interrupted", "running"]


def test_slurm_dry_run_missing_sbatch_and_worker_without_shared_dir(fake, tmp_path, monkeypatch):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("a", 0.0, rec)], slurm={"prelude": "module load rocm"})
    code, doc = run_json("sweep", str(recipes), "--slurm", "--dry-run", "--nodes", "3", "--partition", "gpu",
                         "--time", "01:00:00", "--account", "proj", "--sbatch-arg=--exclusive", "-o", str(fake.root / "s1"))
    assert code == 0 and doc["data"]["slurm"]["job_id"] is None
    script = (fake.root / "s1" / "sweep.sbatch").read_text()
    for line in ("#SBATCH --array=0-2", "#SBATCH --partition=gpu", "#SBATCH --time=01:00:00",
                 "#SBATCH --account=proj", "#SBATCH --exclusive", "module load rocm",
                 f"--worker {fake.root / 's1'} --gpus all"):
        assert line in script, line
    assert finished(rec) == [] and states(fake.root / "s1") == {"a": "pending"}
    # PATH without sbatch (the fake fixture's PATH holds only the venv, the fake and /usr/bin, /bin)
    monkeypatch.setenv("PATH", os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if not
                                                (Path(p) / "sbatch").exists()))
    code, doc = run_json("sweep", str(recipes), "--slurm", "-o", str(fake.root / "s2"))
    assert code == 5 and doc["error"]["code"] == "tool-missing" and "sbatch" in doc["error"]["message"]
    code, doc = run_json("sweep", "--worker", str(tmp_path / "elsewhere"), "--gpus", "0")
    assert code == 3 and "shared by every node" in doc["error"]["hint"]


def test_recipe_may_not_override_gpu_pinning(fake, tmp_path):
    rec = tmp_path / "rec.jsonl"
    recipes = write_recipes(fake.root / "r.yaml", [entry("a", 0.0, rec, env={"HIP_VISIBLE_DEVICES": "3"})])
    code, doc = run_json("sweep", str(recipes), "--gpus", "0")
    assert code == 3 and doc["error"]["details"]["problems"][0]["field"] == "env.HIP_VISIBLE_DEVICES"


def test_recipes_problems_are_all_listed_per_entry(tmp_path):
    from hotspot.errors import InputError
    from hotspot.sweep.recipes import load_recipes

    (tmp_path / "r.yaml").write_text("- {name: 'bad name'}\n- {name: x, cmd: ''}\n- {name: y, cmd: [a], cwd: nope}\n"
                                     "- {name: z, cmd: [a], env: {HIP_VISIBLE_DEVICES: 1, OK: [1]}, tags: 3}\n- 7\n")
    with pytest.raises(InputError) as err:
        load_recipes(tmp_path / "r.yaml")
    got = [(p["entry"], p["field"]) for p in err.value.details["problems"]]
    assert got == [("#1 (bad name)", "name"), ("#1 (bad name)", "cmd"), ("#2 (x)", "cmd"), ("#3 (y)", "cwd"),
                   ("#4 (z)", "env.HIP_VISIBLE_DEVICES"), ("#4 (z)", "env.OK"), ("#4 (z)", "tags"),
                   ("#5", "(entry)")]
    assert err.value.exit_code == 3 and str(tmp_path / "r.yaml") in err.value.message
    (tmp_path / "s.yaml").write_text("entries: [\n")
    with pytest.raises(InputError, match="not valid YAML at line 2"):
        load_recipes(tmp_path / "s.yaml")


def test_gpu_indices_count_within_an_inherited_device_list(fake, tmp_path, monkeypatch):
    """Slurm --gres restricts the worker with ROCR_VISIBLE_DEVICES: --gpus 0,1 are the listed devices."""
    from hotspot.sweep.scheduler import pin_env

    assert pin_env({}, 3) == {"ROCR_VISIBLE_DEVICES": "3", "HIP_VISIBLE_DEVICES": "0"}
    assert pin_env({"HIP_VISIBLE_DEVICES": "4,6"}, 1)["ROCR_VISIBLE_DEVICES"] == "6"
    rec = tmp_path / "rec.jsonl"
    monkeypatch.setenv("ROCR_VISIBLE_DEVICES", "5,7")
    recipes = write_recipes(fake.root / "r.yaml", [entry("a", 0.2, rec), entry("b", 0.2, rec)])
    code, doc = run_json("sweep", str(recipes), "--gpus", "2", "-o", str(fake.root / "s0"))
    assert code == 2 and "2 visible devices" in doc["error"]["message"]
    code, doc = run_json("sweep", str(recipes), "--gpus", "all", "-o", str(fake.root / "sw"))
    assert code == 0, doc
    assert doc["data"]["gpus"] == [0, 1]  # all = the inherited list, not what the tools enumerate
    runs = finished(rec)
    no_overlap_per_gpu(runs)
    assert sorted(r["gpu"] for r in runs) == ["5", "7"]
    by = {e["name"]: e for e in manifest(fake.root / "sw")["entries"]}
    assert {(by[r["name"]]["gpu"], by[r["name"]]["device"]) for r in runs} == {(0, "5"), (1, "7")}
