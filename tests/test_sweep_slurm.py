"""A real single-node Slurm cluster (tests/slurm/start_slurm.sh) runs a 2-task array sweep end to
end through sbatch, with the fake rocprofv3 and fake GPUs (--gpus 0,1 on the node).

Skipped with the reason when slurm-wlm/munge are not installed or we are not root; when they are
and the cluster does not come up, the test fails under CI (CI=true) and skips with the logs
elsewhere. The daemons it started are stopped by pid at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.fake_rocprofv3.helpers import fake  # noqa: F401  (fixture)
from tests.sweep_support import (
    entry,
    finished,
    hotspot,
    no_inherited_devices,  # noqa: F401  (autouse fixture)
    no_overlap_per_gpu,
    records,
    wait_until,
    write_recipes,
)

HERE = Path(__file__).resolve().parent / "slurm"
BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "squeue", "sinfo", "scontrol", "scancel")


@pytest.fixture
def slurm(tmp_path, monkeypatch):
    missing = [b for b in BINARIES if shutil.which(b) is None and not Path("/usr/sbin", b).exists()]
    if missing:
        pytest.skip(f"Slurm not installed ({', '.join(missing)} missing; Debian: apt-get install slurm-wlm munge)")
    if os.geteuid() != 0:
        pytest.skip("the test cluster runs its daemons as root (SlurmUser=root); not root here")
    # its own short dir: munge's Unix socket path must stay under 108 bytes
    cluster = Path(tempfile.mkdtemp(prefix="hs-slurm-"))
    env = {**os.environ, "PATH": os.environ.get("PATH", "") + ":/usr/sbin:/usr/bin"}
    start = subprocess.run(["bash", str(HERE / "start_slurm.sh"), str(cluster)], capture_output=True, text=True,
                           timeout=120, env=env)
    try:
        if start.returncode != 0:
            logs = "; ".join(f"{p.name}: {p.read_text()[-400:]}" for p in sorted((cluster / "logs").glob("*.log")))
            msg = f"single-node Slurm did not start (exit {start.returncode}): {start.stderr.strip()[-400:]} {logs}"
            if os.environ.get("CI"):
                pytest.fail(msg)
            pytest.skip(msg)
        monkeypatch.setenv("SLURM_CONF", str(cluster / "slurm.conf"))
        yield cluster
    finally:
        subprocess.run(["bash", str(HERE / "stop_slurm.sh"), str(cluster)], timeout=60)
        shutil.rmtree(cluster, ignore_errors=True)


def test_two_task_array_sweep_through_sbatch(fake, slurm, tmp_path):
    rec, gate = tmp_path / "rec.jsonl", tmp_path / "gate"
    names = [f"k{i}" for i in range(4)]
    recipes = write_recipes(fake.root / "lib.yaml", [entry(n, f"@{gate}", rec) for n in names],
                            slurm={"prelude": f"echo prelude-ran > {tmp_path}/prelude.txt"})
    sw = fake.root / "sw"
    proc = hotspot("sweep", str(recipes), "--slurm", "--nodes", "2", "--gpus", "0,1", "-o", str(sw),
                   "--sbatch-arg=--cpus-per-task=1", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    job_id = json.loads(proc.stdout)["data"]["slurm"]["job_id"]
    script = (sw / "sweep.sbatch").read_text()
    assert "#SBATCH --array=0-1" in script and "#SBATCH --cpus-per-task=1" in script
    assert f"--worker {sw} --gpus 0,1" in script
    try:
        def array_running() -> bool:
            st = json.loads(hotspot("sweep", "status", str(sw), "--format", "json").stdout)["data"]["slurm"]
            tasks = st["squeue"] or []
            return (sorted(t["job_id"] for t in tasks) == [f"{job_id}_0", f"{job_id}_1"]
                    and all(t["state"] == "RUNNING" for t in tasks) and st["tasks_seen_in_manifest"] == ["0", "1"])

        wait_until(array_running, timeout=60, step=0.3)
        # both tasks work at once, sharing the node's two GPUs through the per-host GPU locks
        wait_until(lambda: len([r for r in records(rec) if "started" in r]) == 2, timeout=60)
        text = hotspot("sweep", "status", str(sw)).stdout
        assert f"{job_id}_0" in text and f"{job_id}_1" in text
        gate.write_text("")

        def all_done() -> bool:
            st = json.loads(hotspot("sweep", "status", str(sw), "--format", "json").stdout)["data"]
            return st["counts"]["done"] == len(names) and not st["slurm"]["squeue"]

        wait_until(all_done, timeout=90, step=0.3)
    finally:
        subprocess.run(["scancel", str(job_id)], capture_output=True, timeout=30)
    runs = finished(rec)
    assert sorted(r["name"] for r in runs) == names
    no_overlap_per_gpu(runs)
    doc = json.loads((sw / "sweep.json").read_text())
    tasks = sorted((w["slurm"] or {}).get("slurm_array_task_id") for w in doc["workers"].values())
    assert tasks == ["0", "1"]
    assert {w["slurm"]["slurm_array_job_id"] for w in doc["workers"].values()} == {str(job_id)}
    assert (tmp_path / "prelude.txt").read_text().strip() == "prelude-ran"
    assert sorted(p.name for p in (sw / "slurm").iterdir()) == [f"{job_id}_0.out", f"{job_id}_1.out"]
