#!/usr/bin/env bash
# Stop the daemons tests/slurm/start_slurm.sh DIR started: by the pids it recorded, nothing else.
set -uo pipefail
dir="${1:?usage: stop_slurm.sh DIR}"
[ -f "$dir/pids" ] || exit 0
pids="$(tac "$dir/pids")"   # slurmd, slurmctld, then munged
for pid in $pids; do kill -TERM "$pid" 2>/dev/null; done
for _ in $(seq 50); do
  alive=0
  for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
  [ "$alive" = 0 ] && exit 0
  sleep 0.1
done
for pid in $pids; do kill -KILL "$pid" 2>/dev/null; done
exit 0
