"""Device locks keyed by the physical GPU (hotspot/collect/gpu_identity.py): jobs that Slurm's device
cgroup gives renumbered views ("device 0" in each) of different GPUs never contend, and two views of
one GPU under different indices exclude each other. No GPU here: each view is a fake sysfs tree in
the KFD topology's format (nodes/N/properties, `name value` lines), the nodes outside a job's cgroup
unreadable as the driver makes them (EPERM there, a read error here)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hotspot.collect import device_lock, gpu_identity
from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import entry, no_inherited_devices, records, wait_until, write_recipes  # noqa: F401

# The host: a CPU node 0 and four GPUs on PCI buses c1..c4 (location_id = bus << 8, device 0,
# function 0), each with its serial (unique_id).
HOST = {1: 0xC100, 2: 0xC200, 3: 0xC300, 4: 0xC400}
SERIAL = {node: 0x7ED3AD6F5F7D1E00 + (node << 40) for node in HOST}  # GPU-7ED3AE.., -7ED3AF.., -7ED3B0.., -7ED3B1..
KEY = {node: f"pci-0000_{bus >> 8:02x}_00.0" for node, bus in HOST.items()}  # by hand from the buses


def view(root: Path, readable: set[int]) -> Path:
    """A sysfs tree of this host as a process whose cgroup holds the GPUs of `readable` sees it."""
    nodes = root / "class" / "kfd" / "kfd" / "topology" / "nodes"
    cpu = nodes / "0"
    cpu.mkdir(parents=True)
    (cpu / "properties").write_text("cpu_cores_count 64\nsimd_count 0\nlocation_id 0\ndomain 0\n")
    for node, location in HOST.items():
        d = nodes / str(node)
        d.mkdir()
        if node in readable:
            (d / "properties").write_text(
                f"cpu_cores_count 0\nsimd_count 304\nmem_banks_count 1\ngfx_target_version 90402\n"
                f"location_id {location}\ndrm_render_minor {127 + node}\nunique_id {SERIAL[node]}\n"
                f"domain 0\nnum_xcc 8\n")
        else:
            (d / "properties").mkdir()  # reading it fails, as EPERM does outside the job's cgroup
    return root


def env(root: Path, **lists: str) -> dict[str, str]:
    return {gpu_identity.SYSFS_ROOT_ENV: str(root), **lists}


@pytest.fixture(autouse=True)
def _fallback_said_afresh(monkeypatch):
    monkeypatch.setattr(device_lock, "FALLBACK_TOLD", {"on": False})
    monkeypatch.setattr(device_lock, "NONE_TOLD", {"on": False}, raising=False)


def test_renumbered_views_of_different_gpus_do_not_contend(tmp_path):
    said: list[str] = []
    job_a = env(view(tmp_path / "a", {2, 3}), ROCR_VISIBLE_DEVICES="0,1")  # Slurm renumbers from 0
    job_b = env(view(tmp_path / "b", {1, 4}), ROCR_VISIBLE_DEVICES="0,1")
    keys_a, keys_b = device_lock.lock_keys(job_a, said.append), device_lock.lock_keys(job_b, said.append)
    assert keys_a == [KEY[2], KEY[3]] and keys_b == [KEY[1], KEY[4]]
    held = device_lock.hold_all(keys_a, "job a", said.append)
    try:
        for key in keys_b:  # job b's "0" and "1" are other GPUs: free while job a holds its own
            fd = device_lock.try_lock(key, "job b")
            assert fd is not None
            os.close(fd)
    finally:
        for fd in held:
            os.close(fd)
    assert said == []  # identities found: no fallback said


def test_two_views_of_one_gpu_exclude_each_other(tmp_path):
    said: list[str] = []
    job = env(view(tmp_path / "job", {2, 3}), ROCR_VISIBLE_DEVICES="1")  # its second GPU: node 3
    host = view(tmp_path / "host", set(HOST))
    by_index = env(host, ROCR_VISIBLE_DEVICES="2")  # outside any cgroup node 3 is the third GPU
    by_uuid = env(host, ROCR_VISIBLE_DEVICES=f"GPU-{SERIAL[3]:016X}")
    narrowed = env(host, ROCR_VISIBLE_DEVICES="1,2,3", HIP_VISIBLE_DEVICES="1")  # HIP counts within ROCr's
    (key,) = device_lock.lock_keys(job, said.append)
    assert key == KEY[3]
    fd = device_lock.try_lock(key, "job")
    assert fd is not None
    try:
        for other in (by_index, by_uuid, narrowed):  # no GPU hidden: the host index (2) is locked too
            assert device_lock.lock_keys(other, said.append) == [KEY[3], "2"]
            assert device_lock.try_lock(KEY[3], "another view") is None
        assert device_lock.holder(KEY[3]).endswith(": job")
    finally:
        os.close(fd)
    # the same index in another job's view is another GPU
    assert device_lock.lock_keys(env(view(tmp_path / "other", {1, 4}), ROCR_VISIBLE_DEVICES="1"),
                                 said.append) == [KEY[4]]
    assert said == []


def test_every_gpu_of_the_view_when_nothing_restricts_it(tmp_path):
    assert device_lock.lock_keys(env(view(tmp_path, {1, 4})), print) == [KEY[1], KEY[4]]


def test_partitions_and_domains_are_devices_of_their_own():
    # MI300 CPX: kfd_topology.c ORs the partition's node id into location_id's function bits
    parts = [gpu_identity.KfdGpu(1 + p, 0, 0xC100 | p, 5) for p in range(8)]
    assert [g.key for g in parts] == [f"pci-0000_c1_00.{p}" for p in range(8)]  # by hand: .0 .. .7
    assert len({g.key for g in parts}) == 8
    assert gpu_identity.KfdGpu(3, 1, 0x0A19, 0).key == "pci-0001_0a_03.1"  # bus 0x0a, device 3, function 1
    # the whole package, opt-in: every function of the slot, whichever partition asks
    assert parts[5].package_keys == [g.key for g in parts] == parts[0].package_keys


def test_without_a_topology_the_visible_names_are_locked_and_that_is_said_once(tmp_path):
    said: list[str] = []
    missing = env(tmp_path / "no-sysfs", ROCR_VISIBLE_DEVICES="2,3", HIP_VISIBLE_DEVICES="1")
    assert device_lock.lock_keys(missing, said.append) == ["3"]  # today's names: ROCr's list narrowed by HIP
    assert device_lock.lock_keys(env(tmp_path / "no-sysfs"), said.append) == ["0"]  # nothing listed: device 0
    assert len(said) == 1 and "locking by device number" in said[0] and str(tmp_path / "no-sysfs") in said[0]
    # no topology: ROCr's tokens in order until an invalid one, HIP's indices within them
    assert device_lock.lock_keys(env(tmp_path / "no-sysfs", ROCR_VISIBLE_DEVICES="0x1,2,2,5"),
                                 said.append) == ["1", "2"]
    assert device_lock.lock_keys(env(tmp_path / "no-sysfs", ROCR_VISIBLE_DEVICES="1",
                                     CUDA_VISIBLE_DEVICES="0,7"), said.append) == ["1"]
    assert len(said) == 1


def lists(**names: str) -> dict[str, str]:
    return names


# (the lists, the topology nodes the process gets): each by hand from the runtimes' rules (module doc)
RESOLVED = [
    (lists(ROCR_VISIBLE_DEVICES="1"), [2]),
    (lists(ROCR_VISIBLE_DEVICES="1", HIP_VISIBLE_DEVICES="0,1"), [2]),  # HIP's 1 is beyond: ends, 0 stays
    (lists(ROCR_VISIBLE_DEVICES="0,7"), [1]),  # 7 is beyond: ends the list, 0 stays
    (lists(ROCR_VISIBLE_DEVICES="0x1"), [2]),  # strtol base 0
    (lists(ROCR_VISIBLE_DEVICES="010"), []),  # octal 8: beyond the 4 GPUs
    (lists(ROCR_VISIBLE_DEVICES=" 3 , 1"), [4, 2]),  # trimmed; in the order listed
    (lists(ROCR_VISIBLE_DEVICES="2,1,2,0"), [3, 2]),  # a repeat ends the list
    (lists(ROCR_VISIBLE_DEVICES="1,x,0"), [2]),
    (lists(ROCR_VISIBLE_DEVICES=""), []),  # set but empty: zero devices
    (lists(ROCR_VISIBLE_DEVICES="gpu-7ed3b0"), [3]),  # a prefix, any case
    (lists(ROCR_VISIBLE_DEVICES="GPU-7ED3"), []),  # a prefix of all four: invalid
    (lists(ROCR_VISIBLE_DEVICES="2,GPU-7ED3AE"), [3, 1]),
    (lists(ROCR_VISIBLE_DEVICES=f"1,GPU-{SERIAL[3]:016X}0"), [2]),  # longer than a UUID: ends the list
    (lists(HIP_VISIBLE_DEVICES="3,1"), [4, 2]),
    (lists(HIP_VISIBLE_DEVICES="1,1,0"), [2, 1]),  # HIP skips repeats
    (lists(HIP_VISIBLE_DEVICES="1,01,0"), [2]),  # not written as a decimal number: ends the list
    (lists(HIP_VISIBLE_DEVICES=f"{SERIAL[4]:016x}"[-6:]), []),  # no `GPU-` in it: not a UUID
    (lists(HIP_VISIBLE_DEVICES="GPU-7ed3"), [1]),  # a substring of every UUID: the first
    (lists(HIP_VISIBLE_DEVICES="GPU-7ED3B0"), []),  # HIP compares case and all: upper case is no UUID
    (lists(HIP_VISIBLE_DEVICES=f"0,GPU-{SERIAL[4]:016x}"), [1, 4]),
    (lists(HIP_VISIBLE_DEVICES="", CUDA_VISIBLE_DEVICES="2"), [3]),  # empty HIP list: CUDA's
    (lists(HIP_VISIBLE_DEVICES="1", CUDA_VISIBLE_DEVICES="2"), [2]),  # HIP's first
    (lists(ROCR_VISIBLE_DEVICES="3,2,1", CUDA_VISIBLE_DEVICES="2,0"), [2, 4]),  # within ROCr's order
    # Slurm's gres/gpu without ConstrainDevices: the same list in both, one restriction (not none)
    (lists(ROCR_VISIBLE_DEVICES="2,3", CUDA_VISIBLE_DEVICES="2,3"), [3, 4]),
    (lists(ROCR_VISIBLE_DEVICES="2,3", CUDA_VISIBLE_DEVICES="3"), []),  # differs: HIP counts within ROCr's
]


@pytest.mark.parametrize(("names", "nodes"), RESOLVED)
def test_the_runtimes_rules_pick_the_devices(tmp_path, names, nodes):
    said: list[str] = []
    keys = device_lock.lock_keys(env(view(tmp_path, set(HOST)), **names), said.append)
    assert keys == [k for n in nodes for k in (KEY[n], str(n - 1))]  # every node readable: host index too
    assert not any("device number" in line for line in said)  # a readable topology: never index names
    assert said == ([] if nodes else [said[0]]) and (nodes or "nothing to lock" in said[0])


def test_a_list_that_leaves_no_gpu_locks_nothing_and_says_so_once(tmp_path):
    said: list[str] = []
    root = view(tmp_path, {2, 3})
    assert device_lock.lock_keys(env(root, ROCR_VISIBLE_DEVICES="5"), said.append) == []
    assert device_lock.lock_keys(env(root, ROCR_VISIBLE_DEVICES="GPU-00000000deadbeef"), said.append) == []
    assert len(said) == 1 and "nothing to lock" in said[0]
    assert device_lock.hold_all([], "nothing", said.append) == []


def test_the_bug_repro_two_lists_one_gpu_meet(tmp_path):
    """ROCR=1 HIP=0,1 and plain ROCR=1 are the same GPU: they take the same locks."""
    root = view(tmp_path, set(HOST))
    first = device_lock.lock_keys(env(root, ROCR_VISIBLE_DEVICES="1", HIP_VISIBLE_DEVICES="0,1"), print)
    held = device_lock.hold_all(first, "first", print)
    try:
        second = device_lock.lock_keys(env(root, ROCR_VISIBLE_DEVICES="1"), print)
        assert second == first == [KEY[2], "1"]
        assert all(device_lock.try_lock(k, "second") is None for k in second)
    finally:
        for fd in held:
            os.close(fd)


def test_a_gpu_node_without_location_id_makes_the_topology_unknown(tmp_path):
    root = view(tmp_path, set(HOST))
    props = root / "class" / "kfd" / "kfd" / "topology" / "nodes" / "2" / "properties"
    props.write_text("\n".join(line for line in props.read_text().splitlines() if not line.startswith("location_id")))
    assert gpu_identity.topology(root) is None and gpu_identity.kfd_gpus(root) == []
    said: list[str] = []
    # without the rule node 3 would have been "1" and got node 3's key
    assert device_lock.lock_keys(env(root, ROCR_VISIBLE_DEVICES="1"), said.append) == ["1"]
    assert len(said) == 1 and "location_id" in said[0]


def test_old_index_named_locks_only_where_no_gpu_is_hidden(tmp_path):
    """An older hotspot locks `<host>.dev<N>.lock` by index: a new one outside any cgroup takes it too."""
    host = env(view(tmp_path / "host", set(HOST)), ROCR_VISIBLE_DEVICES="2")
    old = device_lock.try_lock("2", "old hotspot")  # what an older version, told ROCR_VISIBLE_DEVICES=2, holds
    assert old is not None
    try:
        keys = device_lock.lock_keys(host, print)
        assert keys == [KEY[3], "2"]
        assert device_lock.try_lock("2", "new hotspot") is None  # the new one would wait for the old
    finally:
        os.close(old)
    # in a cgroup the positions are not host indices: no index name
    job = env(view(tmp_path / "job", {3}), ROCR_VISIBLE_DEVICES="0")
    assert device_lock.lock_keys(job, print) == [KEY[3]]
    assert device_lock.lock_name("2") == f"{device_lock.hostname()}.dev2.lock"  # the old name


def test_the_whole_package_opt_in_locks_every_partition(tmp_path):
    nodes = tmp_path / "class" / "kfd" / "kfd" / "topology" / "nodes"
    for p in range(4):  # one MI300X in TPX-like partitions: node ids in the function bits
        (nodes / str(p)).mkdir(parents=True)
        (nodes / str(p) / "properties").write_text(f"simd_count 76\nlocation_id {0xC100 | p}\ndomain 0\n")
    one = device_lock.lock_keys(env(tmp_path, ROCR_VISIBLE_DEVICES="1"), print)
    assert one == ["pci-0000_c1_00.1", "1"]
    whole = device_lock.lock_keys(env(tmp_path, ROCR_VISIBLE_DEVICES="1",
                                      **{gpu_identity.WHOLE_GPU_ENV: "1"}), print)
    assert whole == [f"pci-0000_c1_00.{f}" for f in range(8)] + ["1"]
    assert set(one) < set(whole)  # meets a sibling partition's process that did not opt in


def test_a_sweep_worker_locks_the_physical_device_and_shows_its_index(tmp_path, monkeypatch):
    from hotspot.sweep.scheduler import Worker, WorkerOptions

    monkeypatch.setenv(gpu_identity.SYSFS_ROOT_ENV, str(view(tmp_path / "job", {2, 4})))
    monkeypatch.setenv("ROCR_VISIBLE_DEVICES", "0,1")
    monkeypatch.delenv("HIP_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    worker = Worker(tmp_path / "sw", WorkerOptions(gpus=(0, 1)), say=print)
    assert worker.lock_keys == {0: [KEY[2]], 1: [KEY[4]]}
    assert worker.devices == {0: "0", 1: "1"}  # what the status and progress lines show is unchanged


def test_waiting_checks_the_lock_folder_once(tmp_path, monkeypatch):
    """hold_all looks again every WAIT_POLL_S; the folder is created and checked before the first look only."""
    checked: list[Path] = []
    real = device_lock._ensure_folder
    monkeypatch.setattr(device_lock, "_ensure_folder", lambda folder, shared: (checked.append(folder),
                                                                               real(folder, shared))[1])
    blocker = device_lock.try_lock("9", "blocker")
    assert blocker is not None and checked == [device_lock.lock_folder()]
    checked.clear()
    polls: list[float] = []

    def sleep(seconds: float) -> None:  # the third wait ends with the blocker's release
        polls.append(seconds)
        if len(polls) == 3:
            os.close(blocker)

    monkeypatch.setattr(device_lock.time, "sleep", sleep)
    said: list[str] = []
    fds = device_lock.hold_all(["9"], "waiter", said.append)
    for fd in fds:
        os.close(fd)
    assert len(polls) == 3 and len(fds) == 1 and len(said) == 1
    assert checked == [device_lock.lock_folder()]


def test_two_sweeps_on_renumbered_views(fake, tmp_path):
    """End to end: sweeps in two "jobs", each told ROCR_VISIBLE_DEVICES=0 by Slurm. On different GPUs
    both run at once; then a third sweep outside any cgroup pinned to the first job's GPU by its host
    index (1) waits for it."""
    import subprocess
    import sys
    import time

    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    procs = []

    def sweep(name: str, root: Path, device: str) -> subprocess.Popen:
        recipes = write_recipes(fake.root / f"{name}.yaml", [entry(name, f"@{gate}", rec)])
        environ = dict(os.environ, ROCR_VISIBLE_DEVICES=device, **{gpu_identity.SYSFS_ROOT_ENV: str(root)})
        procs.append(subprocess.Popen([sys.executable, "-m", "hotspot", "sweep", str(recipes), "--gpus", "0",
                                       "-o", str(fake.root / name)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, env=environ))
        return procs[-1]

    def started() -> list[str]:
        return sorted(r["name"] for r in records(rec) if "started" in r)

    try:
        sweep("a", view(tmp_path / "job-a", {2}), "0")
        sweep("b", view(tmp_path / "job-b", {3}), "0")
        wait_until(lambda: started() == ["a", "b"], timeout=60)  # both "device 0": different GPUs, no wait
        third = sweep("c", view(tmp_path / "host", set(HOST)), "1")  # node 2, job a's GPU
        wait_until(lambda: (fake.root / "c" / "sweep.json").exists(), timeout=60)
        time.sleep(2.0)
        assert started() == ["a", "b"] and third.poll() is None
        gate.write_text("")
        errs = [p.communicate(timeout=120)[1] for p in procs]
    finally:
        gate.write_text("")
        for p in procs:
            if p.poll() is None:
                p.kill()
    assert [p.returncode for p in procs] == [0, 0, 0], errs
    assert "GPU 1 is in use on this host by pid" in errs[2]  # said with the index it knows the GPU by
    assert not any("locking by device number" in e for e in errs)


def test_a_sweep_pins_its_entries_within_the_users_restriction(tmp_path):
    """pin_env: --gpus N counts within the devices the runtimes would give the sweep, HIP's and CUDA's
    narrowing included; the entry gets that device alone (ROCR_VISIBLE_DEVICES: its position among
    the readable GPU nodes; HIP_VISIBLE_DEVICES=0, which also overrides CUDA_VISIBLE_DEVICES)."""
    from hotspot.sweep.scheduler import pin_env

    host = view(tmp_path / "host", set(HOST))

    def pinned(index: int, **names: str) -> str:
        return pin_env(env(host, **names), index)["ROCR_VISIBLE_DEVICES"]

    assert pinned(0, ROCR_VISIBLE_DEVICES="1,2,3", HIP_VISIBLE_DEVICES="2") == "3"  # node 4
    with pytest.raises(IndexError, match="among the 1 visible devices"):
        pinned(1, ROCR_VISIBLE_DEVICES="1,2,3", HIP_VISIBLE_DEVICES="2")  # not node 3: outside HIP's list
    assert [pinned(g, CUDA_VISIBLE_DEVICES="3,1") for g in (0, 1)] == ["3", "1"]
    with pytest.raises(IndexError):
        pinned(2, CUDA_VISIBLE_DEVICES="3,1")
    assert pinned(0, ROCR_VISIBLE_DEVICES=f"GPU-{SERIAL[2]:016X}") == "1"
    assert pin_env(env(host, CUDA_VISIBLE_DEVICES="2"), 0)["HIP_VISIBLE_DEVICES"] == "0"
    # a job's cgroup view: positions count the readable nodes, as ROCr in the entry will
    job = view(tmp_path / "job", {2, 4})
    assert pin_env(env(job, ROCR_VISIBLE_DEVICES="0,1", HIP_VISIBLE_DEVICES="1"), 0)["ROCR_VISIBLE_DEVICES"] == "1"
    # without a topology: the names the lists hold, HIP counting within ROCr's
    none = tmp_path / "no-sysfs"
    assert pin_env(env(none, ROCR_VISIBLE_DEVICES="5,7", HIP_VISIBLE_DEVICES="1"), 0)["ROCR_VISIBLE_DEVICES"] == "7"
    assert pin_env(env(none, CUDA_VISIBLE_DEVICES="4,6"), 1)["ROCR_VISIBLE_DEVICES"] == "6"
    with pytest.raises(IndexError):
        pin_env(env(none, ROCR_VISIBLE_DEVICES="5,7", HIP_VISIBLE_DEVICES="1"), 1)


def test_gpus_all_is_what_the_runtimes_leave(tmp_path, monkeypatch):
    from hotspot.errors import ToolMissingError
    from hotspot.sweep.gpus import parse_gpus

    monkeypatch.setenv(gpu_identity.SYSFS_ROOT_ENV, str(view(tmp_path, set(HOST))))
    monkeypatch.setenv("ROCR_VISIBLE_DEVICES", "0,1,2")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,0")
    assert parse_gpus("all") == (0, 1)  # CUDA's two of ROCr's three
    monkeypatch.setenv("HIP_VISIBLE_DEVICES", "5")  # beyond ROCr's three: no device at all
    with pytest.raises(ToolMissingError, match="no GPU"):
        parse_gpus("all")
