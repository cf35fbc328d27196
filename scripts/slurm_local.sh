#!/usr/bin/env bash
# A single-node Slurm on this machine for tests/mpi/test_slurm.py: writes a minimal
# /etc/slurm/slurm.conf naming this host as controller and only node, starts munged,
# slurmctld and slurmd (each only when it is not running already), and waits until
# `sinfo` shows the node idle. Safe to run again. Needs root and the packages
# scripts/setup.sh installs (slurm-wlm, munge); .ci/run calls it before the tests. A
# slurm.conf this script did not write is left alone. Every failure: one line, exit 1.
#
#   HEAPSCOPE_SLURM_WAIT=SECONDS   how long to wait for the idle node (default 60)
set -euo pipefail
PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin

fail() { echo "slurm_local: $*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || fail "needs root (it starts munged, slurmctld and slurmd); the Slurm tests skip without them"
for cmd in munged slurmctld slurmd sinfo scontrol; do
  command -v "$cmd" >/dev/null || fail "no $cmd: run scripts/setup.sh first (it installs slurm-wlm and munge)"
done
wait_s=${HEAPSCOPE_SLURM_WAIT:-60}
[[ "$wait_s" =~ ^[0-9]+$ ]] || fail "HEAPSCOPE_SLURM_WAIT must be a whole number of seconds, not '$wait_s'"

conf=/etc/slurm/slurm.conf
mark="# written by heapscope scripts/slurm_local.sh"
logs=/var/log/slurm
state=/var/lib/slurm
host=$(hostname -s)

# slurmd -C reads this machine's CPUs, sockets, cores and memory: the node line as
# slurmd itself will see it, so the node registers instead of draining on a mismatch
node=$(slurmd -C 2>/dev/null | head -1)
[[ "$node" == "NodeName=$host "* ]] || fail "'slurmd -C' did not describe this host ($host): got '${node:-nothing}'"

# Everything on 127.0.0.1 so no name lookup is needed. Processes are tracked by
# /proc (no cgroups: containers and machines without systemd), no accounting, and a
# node that restarts comes back idle by itself (ReturnToService=2).
new=$(cat <<EOF
$mark
ClusterName=heapscope
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
StateSaveLocation=$state/slurmctld
SlurmdSpoolDir=$state/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=$logs/slurmctld.log
SlurmdLogFile=$logs/slurmd.log
$node NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
)

changed=
if [ -e "$conf" ]; then
  [ "$(head -1 "$conf")" = "$mark" ] ||
    fail "$conf exists and was not written by this script: left alone (this machine has its own Slurm; the tests use it if its node is idle)"
  [ "$(cat "$conf")" = "$new" ] || changed=1
else
  changed=1
fi
if [ -n "$changed" ]; then
  mkdir -p "$(dirname "$conf")"
  printf '%s\n' "$new" >"$conf"
fi
mkdir -p "$logs" "$state/slurmctld" "$state/slurmd"

running() { [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# munged runs as its own user; /run/munge is made by systemd's tmpfiles elsewhere
install -d -o munge -g munge -m 0755 /run/munge
if ! munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1; then
  [ -s /etc/munge/munge.key ] || fail "no /etc/munge/munge.key (reinstall munge: its postinst makes the key)"
  runuser -u munge -- munged </dev/null >>"$logs/munged.out" 2>&1 ||
    fail "munged did not start (see $logs/munged.out and /var/log/munge/munged.log)"
  munge -n </dev/null 2>/dev/null | unmunge >/dev/null 2>&1 ||
    fail "munged started but 'munge -n | unmunge' fails (see /var/log/munge/munged.log)"
fi

if running /run/slurmctld.pid; then
  # a running controller reads a changed file on reconfigure
  [ -z "$changed" ] || scontrol reconfigure >/dev/null ||
    fail "slurmctld runs but 'scontrol reconfigure' failed (see $logs/slurmctld.log)"
else
  slurmctld </dev/null >>"$logs/slurmctld.out" 2>&1 ||
    fail "slurmctld did not start (see $logs/slurmctld.out and $logs/slurmctld.log)"
fi
if ! running /run/slurmd.pid; then
  slurmd </dev/null >>"$logs/slurmd.out" 2>&1 ||
    fail "slurmd did not start (see $logs/slurmd.out and $logs/slurmd.log)"
fi

for ((i = 0; i < wait_s * 2; i++)); do
  nodestate=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  case "$nodestate" in
    idle | mixed) echo "slurm_local: node $host is $nodestate (partition debug)"; exit 0 ;;
  esac
  sleep 0.5
done
fail "node $host not idle after ${wait_s}s (sinfo: '${nodestate:-no answer}'; see $logs/slurmctld.log and $logs/slurmd.log)"
