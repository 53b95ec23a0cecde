#!/usr/bin/env bash
# A real one-node SLURM cluster on this machine from Debian's packages, to try --slurm serving and test it.
#
#   ./scripts/slurm_cluster.sh start    # installs slurmctld, slurmd, slurm-client and munge if missing; idempotent
#   ./scripts/slurm_cluster.sh stop     # cancels every job, then stops the daemons by pid; idempotent
#   ./scripts/slurm_cluster.sh status
#
# Clients (sbatch, squeue, scancel) need `export SLURM_CONF=<folder>/slurm.conf`, printed by start. The folder is
# $ACOUSTICBENCH_SLURM_DIR (default /tmp/acousticbench-slurm); ACOUSTICBENCH_SLURM_PORT moves the controller's port
# (default 6817; slurmd takes the next). No systemd is needed: the daemons run in the background with pid files.
set -euo pipefail

DIR=${ACOUSTICBENCH_SLURM_DIR:-/tmp/acousticbench-slurm}
PORT=${ACOUSTICBENCH_SLURM_PORT:-6817}
CONF=$DIR/slurm.conf
export SLURM_CONF=$CONF
HOST=$(hostname -s)

alive() { [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

install_packages() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null &&
    command -v munged >/dev/null && return 0
  echo "installing slurmctld slurmd slurm-client munge from Debian..." >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null 2>&1 || {
    apt-get update -qq >/dev/null
    apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge >/dev/null
  }
}

write_config() {
  local cpus memory
  cpus=$(( $(nproc) * 8 ))  # job slots, not cores (config_overrides): on 2 cores only two one-CPU replicas could run
  memory=$(awk '/MemTotal/ {print int($2 / 1024 * 0.85)}' /proc/meminfo)  # MB, what the node offers its jobs
  mkdir -p "$DIR/munge" "$DIR/state" "$DIR/spool" "$DIR/log"
  chmod 755 "$DIR" "$DIR/munge"  # munged refuses a socket folder of mode 700
  # DefMemPerCPU: without it a job takes all the memory and no two jobs (replicas) run at once
  cat > "$CONF" <<EOF
ClusterName=acousticbench
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$PORT
SlurmdPort=$((PORT + 1))
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$DIR/munge/munge.socket
CryptoType=crypto/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=256
SchedulerParameters=batch_sched_delay=0
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
ReturnToService=2
MpiDefault=none
SlurmdParameters=config_overrides
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=main Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
}

start() {
  install_packages
  write_config
  if ! alive "$DIR/munged.pid"; then
    if [[ ! -f $DIR/munge/munge.key ]]; then
      head -c 1024 /dev/urandom > "$DIR/munge/munge.key"
      chmod 400 "$DIR/munge/munge.key"
    fi
    munged --socket="$DIR/munge/munge.socket" --key-file="$DIR/munge/munge.key" --pid-file="$DIR/munged.pid" \
      --log-file="$DIR/log/munged.log" --seed-file="$DIR/munge/munged.seed" --force
  fi
  if ! alive "$DIR/slurmctld.pid"; then
    slurmctld -D -f "$CONF" >> "$DIR/log/slurmctld.out" 2>&1 &
    echo $! > "$DIR/slurmctld.pid"
  fi
  if ! alive "$DIR/slurmd.pid"; then
    slurmd -D -f "$CONF" >> "$DIR/log/slurmd.out" 2>&1 &
    echo $! > "$DIR/slurmd.pid"
  fi
  for _ in $(seq 1 150); do  # the node is up once the controller sees it idle (or already running jobs)
    if sinfo -h -N -o %t 2>/dev/null | grep -Eq '^(idle|mix|alloc)'; then
      echo "SLURM is up (node $HOST, state in $DIR)."
      echo "export SLURM_CONF=$CONF"
      return 0
    fi
    sleep 0.2
  done
  echo "error: SLURM did not come up within 30 s; see $DIR/log/" >&2
  tail -5 "$DIR/log/slurmctld.log" "$DIR/log/slurmd.log" >&2 || true
  exit 1
}

stop_pid() {  # by the pid we recorded, never by name: another cluster may run on this machine
  local file=$1
  if alive "$file"; then
    local pid
    pid=$(cat "$file")
    kill "$pid"
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid"
  fi
  rm -f "$file"
}

stop() {
  if alive "$DIR/slurmctld.pid"; then  # stopping slurmd leaves jobs running: cancel them first
    local jobs
    jobs=$(squeue -h -o %A 2>/dev/null || true)
    if [[ -n $jobs ]]; then
      scancel $jobs 2>/dev/null || true
      # a job is listed until its processes are gone: KillWait (30 s) after SIGTERM, SLURM kills what is left
      for _ in $(seq 1 300); do [[ -z $(squeue -h -o %A 2>/dev/null) ]] && break; sleep 0.2; done
    fi
  fi
  stop_pid "$DIR/slurmd.pid"
  stop_pid "$DIR/slurmctld.pid"
  stop_pid "$DIR/munged.pid"
  echo "SLURM stopped."
}

case ${1:-} in
  start) start ;;
  stop) stop ;;
  status) sinfo && squeue ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
