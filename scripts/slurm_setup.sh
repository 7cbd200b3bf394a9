#!/usr/bin/env bash
# A single-node Slurm on this machine, for the cluster=slurm and submitit tests.
#
# Installs Debian's slurm-wlm and munge, makes a munge key, writes slurm.conf naming this
# host (NodeAddr=127.0.0.1), starts munged, slurmctld and slurmd directly (no systemd) and
# checks that `srun -N1 hostname` works.  Needs root and apt-get.  Idempotent: with Slurm
# already answering, it only checks and returns.
#
# Exit status: 0 ready; 3 cannot run here (not root, no apt-get); 1 something failed
# (the last lines of the Slurm logs are printed).
set -euo pipefail

log() { echo "slurm_setup: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
    log "needs root (to install packages and start munged/slurmctld/slurmd)"
    exit 3
fi

slurm_answers() {
    command -v srun >/dev/null 2>&1 &&
        timeout 20 srun -N1 --time=1 hostname >/dev/null 2>&1
}

if slurm_answers; then
    log "Slurm already running: $(sinfo -h -o '%N %T %c CPUs %m MB' 2>/dev/null)"
    exit 0
fi

if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1 ||
    ! command -v pgrep >/dev/null 2>&1; then
    if ! command -v apt-get >/dev/null 2>&1; then
        log "slurm-wlm and munge are not installed and there is no apt-get to install them"
        exit 3
    fi
    log "installing slurm-wlm and munge with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends slurm-wlm munge procps >/dev/null
fi

HOST=$(hostname -s)
CPUS=$(nproc)
MEM_MB=$(awk '/MemTotal/ {print int($2 / 1024)}' /proc/meminfo)
REAL_MB=$((MEM_MB * 9 / 10))   # a little under the machine's, so the node is never "invalid"
CONF_DIR=/etc/slurm
[ -d /etc/slurm-llnl ] && [ ! -d /etc/slurm ] && CONF_DIR=/etc/slurm-llnl

# munge: a key from /dev/urandom, owned by the munge user; munged runs as that user
install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
install -d -o munge -g munge -m 0755 /run/munge
if [ ! -s /etc/munge/munge.key ]; then
    dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key status=none
fi
chown munge:munge /etc/munge/munge.key
chmod 0400 /etc/munge/munge.key
if ! pgrep -u munge -x munged >/dev/null 2>&1; then
    log "starting munged"
    su -s /bin/sh munge -c "munged --force"
fi

mkdir -p "$CONF_DIR" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm
cat >"$CONF_DIR/slurm.conf" <<CONF
# written by guesslab's scripts/slurm_setup.sh: one node, this machine
ClusterName=guesslab
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CryptoType=crypto/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SlurmctldPort=6817
SlurmdPort=6818
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=30
KillWait=5
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$CPUS RealMemory=$REAL_MB State=UNKNOWN
PartitionName=debug Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
CONF
# Slurm reads cgroup.conf if present; none of the plugins above needs cgroups
rm -f "$CONF_DIR/cgroup.conf"

if ! pgrep -x slurmctld >/dev/null 2>&1; then
    log "starting slurmctld"
    slurmctld -c   # -c: a clean start, no state of an earlier configuration
fi
if ! pgrep -x slurmd >/dev/null 2>&1; then
    log "starting slurmd"
    slurmd
fi

for _ in $(seq 1 30); do
    scontrol update NodeName="$HOST" State=RESUME >/dev/null 2>&1 || true
    if slurm_answers; then
        log "ready: $(sinfo -h -o '%N %T %c CPUs %m MB')"
        exit 0
    fi
    sleep 1
done
log "srun -N1 hostname does not work; the logs say:"
tail -n 20 /var/log/slurm/slurmctld.log /var/log/slurm/slurmd.log >&2 || true
exit 1
