"""Host-wide GPU device locks (hotspot/collect/device_lock.py): two sweeps on one host, or a sweep and
a `hotspot collect`, never run on one device at the same time; a lock dies with its holder; the
default folder is shared by every user. Every application run records its device and its start and
end times (tests/fixtures/sweep/app.py), from which overlaps are computed."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from hotspot.collect import device_lock
from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import (
    APP,
    LinesOf,
    entry,
    finished,
    manifest,
    no_inherited_devices,  # noqa: F401  (autouse fixture)
    no_overlap_per_gpu,
    records,
    start_hotspot,
    states,
    wait_until,
    write_recipes,
)


def _started(rec: Path, prefix: str) -> list[dict]:
    return [r for r in records(rec) if "started" in r and r["name"].startswith(prefix)]


def _sweep(*args: str, env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "hotspot", "sweep", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)


def test_two_concurrent_sweeps_on_one_host_use_disjoint_gpus(fake, tmp_path):
    """With the default lock folder (no HOTSPOT_LOCK_DIR): the host's, shared by every sweep. The two
    devices get names of this test's own (an inherited ROCR_VISIBLE_DEVICES list, as Slurm gives),
    so no other test or sweep on this host shares their locks."""
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    a = write_recipes(fake.root / "a.yaml", [entry(f"a{i}", f"@{gate}", rec) for i in range(3)])
    b = write_recipes(fake.root / "b.yaml", [entry(f"b{i}", 0.2, rec) for i in range(3)])
    # numbers (a name the runtimes' rules keep: gpu_identity.fallback_names), unique to this run
    devices = [str(time.time_ns() // 1000 * 10 + d) for d in (0, 1)]
    env = {k: v for k, v in os.environ.items() if k != device_lock.LOCK_DIR_ENV}
    env["ROCR_VISIBLE_DEVICES"] = ",".join(devices)
    host_folder = device_lock.lock_folder(env)
    first = _sweep(str(a), "--gpus", "0-1", "-o", str(fake.root / "swa"), env=env)
    second = None
    try:
        wait_until(lambda: len(_started(rec, "a")) == 2, timeout=60)
        assert all((host_folder / device_lock.lock_name(d)).is_file() for d in devices)
        second = _sweep(str(b), "--gpus", "0-1", "-o", str(fake.root / "swb"), env=env)
        second_err = LinesOf(second.stderr)
        # both devices are held by the first sweep: the second says so for each and starts nothing
        # while they are (and never beside the first: the overlap checks below)
        wait_until(lambda: second_err.count("is in use on this host") == 2, timeout=60)
        assert _started(rec, "b") == [] and second.poll() is None
        assert set(states(fake.root / "swb").values()) == {"pending"}
        gate.write_text("")
        out_a, err_a = first.communicate(timeout=120)
        assert second.stdout is not None
        out_b = second.stdout.read()
        second.wait(timeout=120)
        err_b = second_err.text()
    finally:
        gate.write_text("")
        for proc in (first, second):
            if proc is not None and proc.poll() is None:
                proc.kill()
        for d in devices:
            (host_folder / device_lock.lock_name(d)).unlink(missing_ok=True)
    assert first.returncode == 0, err_a
    assert second.returncode == 0, err_b
    # the second sweep said who held the devices: the first sweep's worker
    assert f"is in use on this host by pid {first.pid} " in err_b and "hotspot sweep" in err_b
    runs = finished(rec)
    assert sorted(r["name"] for r in runs) == ["a0", "a1", "a2", "b0", "b1", "b2"]
    no_overlap_per_gpu(runs)  # across both sweeps: one run per device at any moment
    assert {r["gpu"] for r in runs} == set(devices)
    # and at no moment more runs than devices, whichever sweep they belong to
    events = sorted([(r["start"], 1) for r in runs] + [(r["end"], -1) for r in runs])
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert peak <= 2


def test_collect_waits_for_the_device_a_sweep_holds(fake, tmp_path):
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    recipes = write_recipes(fake.root / "r.yaml", [entry("held", f"@{gate}", rec)])
    sweep = start_hotspot("sweep", str(recipes), "--gpus", "1", "-o", str(fake.root / "sw"))
    collect = None
    try:
        wait_until(lambda: len(_started(rec, "held")) == 1, timeout=60)
        env = dict(os.environ, ROCR_VISIBLE_DEVICES="1")
        collect = subprocess.Popen(
            [sys.executable, "-m", "hotspot", "collect", "--kernel", "^reduce", "--no-analyze", "--",
             sys.executable, str(APP), "mine", "0", "0", str(rec)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        collect_err = LinesOf(collect.stderr)
        wait_until(lambda: collect_err.count("waiting for it") == 1, timeout=60)
        assert collect.poll() is None and _started(rec, "mine") == []  # waiting: its program has not run
        gate.write_text("")
        assert collect.stdout is not None
        collect.stdout.read()
        collect.wait(timeout=120)
        err = collect_err.text()
        sweep.communicate(timeout=120)
    finally:
        gate.write_text("")
        for proc in (sweep, collect):
            if proc is not None and proc.poll() is None:
                proc.kill()
    assert collect.returncode == 0, err
    assert f"GPU device 1 is in use on this host by pid {sweep.pid} " in err and "waiting for it" in err
    runs = {r["name"]: r for r in finished(rec)}
    assert runs["mine"]["gpu"] == "1" and runs["held"]["gpu"] == "1"
    assert runs["mine"]["start"] >= runs["held"]["end"]  # after the sweep's run, never beside it


HOLDER = """
import sys, time
from hotspot.collect import device_lock
fd = device_lock.try_lock(sys.argv[1], "test holder")
print("locked" if fd is not None else "busy", flush=True)
time.sleep(60)
"""


def test_a_lock_is_released_when_its_holder_dies_and_is_per_device():
    child = subprocess.Popen([sys.executable, "-c", HOLDER, "3"], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        assert device_lock.try_lock("3", "me") is None  # held by another process
        assert device_lock.holder("3").startswith(f"pid {child.pid} of ")
        assert device_lock.holder("3").endswith(": test holder")
        other = device_lock.try_lock("2", "me")  # another device is free
        assert other is not None
        os.close(other)
        child.send_signal(signal.SIGKILL)  # no cleanup runs: the kernel drops the lock
        child.wait(timeout=30)
        fd = device_lock.try_lock("3", "me")
        assert fd is not None
        assert device_lock.holder("3").startswith(f"pid {os.getpid()} of ")
        # held by this process on one descriptor: a second take (another open file) is refused too
        assert device_lock.try_lock("3", "me again") is None
        os.close(fd)
    finally:
        if child.poll() is None:
            child.kill()


def test_default_folder_is_the_first_shared_one_created_sticky(tmp_path, monkeypatch):
    private = tmp_path / "private"
    private.mkdir(mode=0o755)
    private.chmod(0o755)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o1777)
    monkeypatch.setattr(device_lock, "SYSTEM_LOCK_DIRS", ((str(private), "hotspot"), (str(shared), "hotspot-locks")))
    monkeypatch.delenv(device_lock.LOCK_DIR_ENV)
    assert device_lock.lock_folder() == shared / "hotspot-locks"
    old = os.umask(0o022)
    try:
        fd = device_lock.try_lock("0", "me")
    finally:
        os.umask(old)
    assert fd is not None
    os.close(fd)
    folder = shared / "hotspot-locks"
    assert stat.S_IMODE(folder.stat().st_mode) == 0o1777  # every user creates locks, none removes another's
    (lock,) = folder.iterdir()
    assert lock.name == f"{device_lock.hostname()}.dev0.lock"
    assert stat.S_IMODE(lock.stat().st_mode) == 0o666
    # a shared folder anyone may write but without the sticky bit: refused (anyone could swap locks)
    folder.chmod(0o777)
    from hotspot.errors import InputError

    with pytest.raises(InputError, match="not sticky"):
        device_lock.try_lock("0", "me")
    # HOTSPOT_LOCK_DIR wins over the system folders
    monkeypatch.setenv(device_lock.LOCK_DIR_ENV, str(tmp_path / "mine"))
    assert device_lock.lock_folder() == tmp_path / "mine"


def test_a_planted_symlink_is_not_followed(tmp_path, monkeypatch):
    monkeypatch.setenv(device_lock.LOCK_DIR_ENV, str(tmp_path / "locks"))
    (tmp_path / "locks").mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (tmp_path / "locks" / device_lock.lock_name("5")).symlink_to(victim)
    from hotspot.errors import InputError

    with pytest.raises(InputError, match="symbolic link"):
        device_lock.try_lock("5", "me")
    assert victim.read_text() == "keep me"


@pytest.mark.parametrize(("env", "want"), [
    ({}, None),
    ({"ROCR_VISIBLE_DEVICES": "2,3"}, ["2", "3"]),
    ({"ROCR_VISIBLE_DEVICES": "2,3", "HIP_VISIBLE_DEVICES": "1"}, ["3"]),  # HIP counts within ROCr's list
    ({"HIP_VISIBLE_DEVICES": "0,2"}, ["0", "2"]),
    ({"CUDA_VISIBLE_DEVICES": "1"}, ["1"]),
    ({"ROCR_VISIBLE_DEVICES": "0x2,3,2,1"}, ["2", "3"]),  # strtol base 0; a repeat ends ROCr's list
    ({"ROCR_VISIBLE_DEVICES": "2,3", "HIP_VISIBLE_DEVICES": "1,5,0"}, ["3"]),  # HIP's 5: beyond, ends it
    ({"ROCR_VISIBLE_DEVICES": ""}, []),  # set but empty: no device
    ({"ROCR_VISIBLE_DEVICES": "2,3", "CUDA_VISIBLE_DEVICES": "2,3"}, ["2", "3"]),  # as Slurm sets them: one list
])
def test_visible_devices(env, want):
    assert device_lock.visible_devices(env) == want


def test_a_lock_folder_that_fails_mid_run_keeps_the_results_obtained(fake, tmp_path):
    """The lock folder turns into a file while two entries run: the worker meets it when a finished
    entry frees its GPU. That entry's result is in the manifest, the other running entry is stopped
    and recorded interrupted (why said), the third stays pending, and the error is the lock
    folder's own (exit 3) after all of it is written."""
    import shutil

    rec, gate_a, gate_b = tmp_path / "rec.jsonl", tmp_path / "gate-a", tmp_path / "gate-b"
    recipes = write_recipes(fake.root / "r.yaml", [entry("a", f"@{gate_a}", rec), entry("b", f"@{gate_b}", rec),
                                                   entry("c", 0.0, rec)])
    sw = fake.root / "sw"
    folder = Path(os.environ[device_lock.LOCK_DIR_ENV])
    sweep = start_hotspot("sweep", str(recipes), "--gpus", "0-1", "-o", str(sw))
    try:
        wait_until(lambda: len(_started(rec, "")) == 2, timeout=60)
        shutil.rmtree(folder)  # the held locks stay held; no new lock can be taken
        folder.write_text("not a folder")
        gate_a.write_text("")
        _, err = sweep.communicate(timeout=120)
    finally:
        gate_a.write_text("")
        gate_b.write_text("")
        if sweep.poll() is None:
            sweep.kill()
    assert sweep.returncode == 3, err
    assert f"cannot open the GPU lock {folder}/" in err and device_lock.LOCK_DIR_ENV in err
    assert "the GPU locks failed: no new entries; stopping the 1 running" in err
    doc = manifest(sw)
    got = {e["name"]: e for e in doc["entries"]}
    assert {n: e["state"] for n, e in got.items()} == {"a": "done", "b": "interrupted", "c": "pending"}
    assert got["a"]["exit_code"] == 0 and got["a"]["plan_json"]  # the finished entry's result is kept
    assert "its GPU locks failed" in got["b"]["reason"]
    assert [w["state"] for w in doc["workers"].values()] == ["interrupted"]
    assert [r["name"] for r in finished(rec)] == ["a"]  # b was stopped before its gate opened; c never ran
