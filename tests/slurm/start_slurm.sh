#!/usr/bin/env bash
# Start a single-node Slurm cluster (munged, slurmctld, slurmd; with accounting: mariadbd and
# slurmdbd) for the sweep's end-to-end test.
#
#   tests/slurm/start_slurm.sh DIR    -> everything lives in DIR (config, state, spool, logs, sockets);
#                                        prints `export SLURM_CONF=DIR/slurm.conf` on success
#   tests/slurm/stop_slurm.sh DIR     -> stops exactly the daemons this script started (DIR/pids)
#
# Needs root (SlurmUser=root) and Debian's slurm-wlm + munge packages; with Debian's slurmdbd and
# mariadb-server also installed, accounting runs too (a MariaDB server of its own: datadir, socket
# and log in DIR, TCP on 127.0.0.1 at a free port; no system service), so sacct answers, as on a
# site cluster. HOTSPOT_SLURM_ACCOUNTING=0 starts without it. The controller and the node are this
# host (short hostname); ports are picked free; nothing outside DIR is touched, so it does not
# disturb a system Slurm, munge or MariaDB.
set -euo pipefail

dir="${1:?usage: start_slurm.sh DIR}"
mkdir -p "$dir"/{state,spool,logs}
dir="$(cd "$dir" && pwd)"
for bin in munged slurmctld slurmd sbatch squeue scontrol; do
  command -v "$bin" >/dev/null 2>&1 || { echo "start_slurm: $bin not found (apt-get install slurm-wlm munge)" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "start_slurm: needs root (SlurmUser=root)" >&2; exit 3; }

host="$(hostname -s)"
# At least 16 CPUs so two array tasks of 2 GPUs x 4 CPUs run at once even on a small VM (config_overrides lets the
# node claim more than it has instead of being drained for "Low CPUs").
cpus="$(nproc)"; [ "$cpus" -ge 16 ] || cpus=16
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ctld_port="$(free_port)"
d_port="$(free_port)"
: > "$dir/pids"
accounting=0
if [ "${HOTSPOT_SLURM_ACCOUNTING:-1}" != 0 ]; then
  accounting=1
  for bin in slurmdbd mariadbd mariadb-install-db mariadb sacctmgr; do
    command -v "$bin" >/dev/null 2>&1 || { accounting=0; echo "start_slurm: $bin not found: no accounting (apt-get install slurmdbd mariadb-server)" >&2; }
  done
fi

# Four fake GPUs for gres/gpu: character device nodes under DIR/dev with numbers of the "local /
# experimental use" range (major 240; nothing opens them: there is no cgroup device constraint here).
# slurmd requires a character or block device; it then hands each task its devices' indices in the
# *_VISIBLE_DEVICES variables exactly as on a real node.
mkdir -p "$dir/dev"
for i in 0 1 2 3; do [ -c "$dir/dev/gpu$i" ] || mknod "$dir/dev/gpu$i" c 240 "$i"; done
cat > "$dir/gres.conf" <<GRES
NodeName=$host Name=gpu File=$dir/dev/gpu[0-3]
GRES

# munge with its own key and socket in DIR
dd if=/dev/urandom of="$dir/munge.key" bs=1024 count=1 status=none
chmod 600 "$dir/munge.key"
munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
  --log-file="$dir/logs/munged.log" --seed-file="$dir/munge.seed"
for _ in $(seq 50); do [ -s "$dir/munged.pid" ] && break; sleep 0.1; done
cat "$dir/munged.pid" >> "$dir/pids"

# Accounting is best effort outside CI: when MariaDB or slurmdbd does not come up, the cluster runs
# without it (the sacct tests then skip with sacct's answer); under CI (CI set) it is an error.
no_accounting() {
  echo "start_slurm: $1; logs in $dir/logs" >&2
  [ -z "${CI:-}" ] || exit 4
  for f in slurmdbd.pid mariadbd.pid; do
    if [ -s "$dir/$f" ]; then
      pid="$(cat "$dir/$f")"
      kill -TERM "$pid" 2>/dev/null || true
      sed -i "/^$pid\$/d" "$dir/pids"  # stopped here: stop_slurm.sh must not signal the number again
    fi
  done
  accounting=0
}

db_up() {  # MariaDB for slurmdbd: its own datadir, socket and port; the Slurm user over TCP with a password
  db_port="$(free_port)"
  dbd_port="$(free_port)"
  mariadb-install-db --no-defaults --datadir="$dir/db" --user=root --skip-test-db \
    --auth-root-authentication-method=socket > "$dir/logs/mariadb-install.log" 2>&1 || return 1
  mariadbd --no-defaults --datadir="$dir/db" --socket="$dir/mysql.sock" --port="$db_port" \
    --bind-address=127.0.0.1 --user=root --pid-file="$dir/mariadbd.pid" --log-error="$dir/logs/mariadb.log" \
    --skip-name-resolve --innodb-buffer-pool-size=16M --innodb-log-file-size=8M --skip-log-bin \
    --innodb-flush-log-at-trx-commit=0 --performance-schema=OFF > /dev/null 2>&1 &
  for _ in $(seq 300); do [ -S "$dir/mysql.sock" ] && [ -s "$dir/mariadbd.pid" ] && break; sleep 0.1; done
  [ -s "$dir/mariadbd.pid" ] || return 1
  cat "$dir/mariadbd.pid" >> "$dir/pids"
  mariadb --no-defaults --socket="$dir/mysql.sock" -u root -e \
    "CREATE USER 'slurm'@'127.0.0.1' IDENTIFIED BY 'hotspot-test'; GRANT ALL ON *.* TO 'slurm'@'127.0.0.1';" || return 1
  cat > "$dir/slurmdbd.conf" <<DBD
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
DbdHost=$host
DbdAddr=127.0.0.1
DbdPort=$dbd_port
SlurmUser=root
PidFile=$dir/slurmdbd.pid
LogFile=$dir/logs/slurmdbd.log
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$db_port
StorageUser=slurm
StoragePass=hotspot-test
StorageLoc=slurm_acct_db
DBD
  chmod 600 "$dir/slurmdbd.conf"
}

dbd_up() {  # slurmdbd reads slurmdbd.conf beside $SLURM_CONF; the cluster is registered before slurmctld starts
  slurmdbd || return 1
  for _ in $(seq 100); do [ -s "$dir/slurmdbd.pid" ] && timeout 10 sacctmgr -i -n list cluster >/dev/null 2>&1 && break; sleep 0.2; done
  [ -s "$dir/slurmdbd.pid" ] || return 1
  cat "$dir/slurmdbd.pid" >> "$dir/pids"
  timeout 20 sacctmgr -i add cluster hotspottest >/dev/null || return 1
}

if [ "$accounting" = 1 ] && ! db_up; then no_accounting "MariaDB did not start"; fi
if [ "$accounting" = 1 ]; then
  # sacctmgr and slurmctld reach slurmdbd with the munge socket named here (not AuthInfo)
  storage="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$dbd_port
AccountingStoragePass=$dir/munge.sock"
else
  storage="AccountingStorageType=accounting_storage/none"
fi

cat > "$dir/slurm.conf" <<CONF
ClusterName=hotspottest
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# start a submitted job at once (the tests wait on it; defaults add up to seconds)
SchedulerParameters=bf_interval=1,sched_min_interval=0
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/logs/slurmctld.log
SlurmdLogFile=$dir/logs/slurmd.log
ReturnToService=1
SlurmdParameters=config_overrides
JobCompType=jobcomp/none
$storage
JobAcctGatherType=jobacct_gather/none
MinJobAge=300
GresTypes=gpu
NodeName=$host CPUs=$cpus Gres=gpu:4 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
# the same node seen as one of 2 CPUs (a small VM): what sweep --slurm must clip its default to
PartitionName=small Nodes=$host MaxCPUsPerNode=2 MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$dir/slurm.conf"

if [ "$accounting" = 1 ] && ! dbd_up; then
  no_accounting "slurmdbd did not start"
  sed -i -e '/^AccountingStorage/d' -e 's/^JobCompType=.*/&\nAccountingStorageType=accounting_storage\/none/' "$SLURM_CONF"
fi

slurmctld -i -f "$SLURM_CONF"
for _ in $(seq 100); do [ -s "$dir/slurmctld.pid" ] && break; sleep 0.1; done
cat "$dir/slurmctld.pid" >> "$dir/pids"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do [ -s "$dir/slurmd.pid" ] && break; sleep 0.1; done
cat "$dir/slurmd.pid" >> "$dir/pids"

# ready when the node is idle
for _ in $(seq 150); do
  state="$(sinfo -h -n "$host" -o %t 2>/dev/null || true)"
  case "$state" in idle*|mix*|alloc*) echo "export SLURM_CONF=$SLURM_CONF"; exit 0 ;; esac
  sleep 0.2
done
echo "start_slurm: node $host did not become idle (state '${state:-?}'); logs in $dir/logs" >&2
exit 4
