#!/usr/bin/env bash
# A single-node Slurm on this machine, for testing pelab's Slurm launcher against the real
# scheduler rather than a mock (docs/cluster.md).
#   tools/slurm_local.sh start    install slurm-wlm and munge if missing, write slurm.conf,
#                                 start munged (if not already running), slurmctld and slurmd,
#                                 wait until the node is idle, print one "ready" line
#   tools/slurm_local.sh stop     cancel this cluster's jobs, stop the daemons start started
#   tools/slurm_local.sh status   sinfo and squeue, or "not running"
#   tools/slurm_local.sh env      print `export SLURM_CONF=...` for the client commands
# Everything lives in $PELAB_SLURM_DIR (default /var/lib/pelab-slurm): slurm.conf, state,
# spool, logs, pid files. Needs root (or passwordless sudo). Exit codes: 0 done; 77 Slurm
# cannot run here (the one-line reason is printed; a test reports it as skipped); 1 error.
set -euo pipefail

readonly CANNOT_RUN_HERE=77
SCRIPT=$(readlink -f "$0")
readonly SCRIPT
readonly DIR=${PELAB_SLURM_DIR:-/var/lib/pelab-slurm}
readonly CONF=$DIR/etc/slurm.conf
readonly READY_TIMEOUT=${PELAB_SLURM_READY_TIMEOUT:-60}
readonly PACKAGES=(slurm-wlm munge)
readonly MUNGE_KEY=/etc/munge/munge.key
readonly MUNGE_SOCKET=/run/munge/munge.socket.2
# Where client commands (sbatch, squeue, ...) look when SLURM_CONF is unset. start links it to
# the private slurm.conf only if nothing else is there, so a real cluster's file is never touched.
readonly SYSTEM_CONF=/etc/slurm/slurm.conf
export SLURM_CONF=$CONF

cannot_run() {
  echo "slurm_local: cannot run Slurm here: $*"
  exit "$CANNOT_RUN_HERE"
}
die() {
  echo "slurm_local: $*" >&2
  exit 1
}
say() { echo "slurm_local: $*"; }

# Root is needed to install packages, own /etc/munge and run slurmd (which starts jobs as the
# submitting user). Without root, passwordless sudo re-runs this script; otherwise: skip.
become_root() {
  [ "$(id -u)" -eq 0 ] && return
  if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
    exec sudo -n PELAB_SLURM_DIR="$DIR" PELAB_SLURM_READY_TIMEOUT="$READY_TIMEOUT" "$SCRIPT" "$@"
  fi
  cannot_run "needs root (or passwordless sudo) to install and run slurmctld, slurmd and munged"
}

package_installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

# apt-get update only when the package lists do not know the packages, or when installing
# from them fails (stale lists point at files the mirror no longer has).
install_packages() {
  local missing=() p
  for p in "${PACKAGES[@]}"; do package_installed "$p" || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return
  command -v apt-get >/dev/null || cannot_run "${missing[*]} not installed and no apt-get"
  say "installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  local log=$DIR/log/apt.log
  # Wait for another apt (a machine's own updates) rather than fail at once.
  local install=(apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=120)
  if ! apt-cache show "${missing[@]}" >/dev/null 2>&1; then
    apt-get update -qq >"$log" 2>&1 || cannot_run "apt-get update failed ($(tail -n1 "$log"))"
  fi
  if ! "${install[@]}" "${missing[@]}" >"$log" 2>&1; then
    if ! { apt-get update -qq && "${install[@]}" "${missing[@]}"; } >>"$log" 2>&1; then
      cannot_run "apt-get install ${missing[*]} failed ($(tail -n1 "$log"))"
    fi
  fi
}

# The pid in FILE if that process is alive and is COMMAND (a stale pid file may name a
# process that reused the number).
live_pid() {
  local file=$1 command=$2 pid
  [ -s "$file" ] || return 1
  pid=$(cat "$file")
  [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$command" ] && echo "$pid"
}

# The last fatal line of a daemon's log (else its last error line), as the one-line reason why
# it did not start. Some error lines are harmless (no PMIx library for the MPI plugins).
log_reason() {
  local line
  line=$(grep -F 'fatal' "$1" 2>/dev/null | tail -n1) ||
    line=$(grep -F 'error' "$1" 2>/dev/null | tail -n1) || true
  echo "${line:-no error in $1}"
}

# The node as slurmd itself detects it (CPUs, sockets, cores, threads, memory): a slurm.conf
# that claims more than slurmd finds makes slurmctld drain the node.
write_conf() {
  local node=$1 detected hardware
  detected=$(slurmd -C 2>&1) || cannot_run "slurmd -C failed: $(tail -n1 <<<"$detected")"
  hardware=$(head -n1 <<<"$detected" | sed 's/^NodeName=[^ ]* //')
  mkdir -p "$DIR/etc" "$DIR/state" "$DIR/spool" "$DIR/log" "$DIR/run"
  cat >"$CONF.new" <<EOF
# Single-node Slurm for pelab's tests, written by tools/slurm_local.sh (docs/cluster.md).
ClusterName=pelab-local
SlurmctldHost=$node(127.0.0.1)
SlurmUser=root
AuthType=auth/munge
# One node, one partition: this machine, as slurmd -C reports it.
NodeName=$node NodeAddr=127.0.0.1 $hardware State=UNKNOWN
PartitionName=local Nodes=$node Default=YES MaxTime=INFINITE State=UP
# Schedule single CPUs, not whole nodes, so two one-CPU tasks share the node.
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
# No cgroups: track job processes through /proc, no CPU binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# A node set DOWN for any reason (not responding, rebooted) returns when slurmd registers.
ReturnToService=2
# Seconds between SIGTERM and SIGKILL when a job is cancelled, requeued or out of time.
KillWait=10
# No accounting daemon (slurmdbd): squeue and the run directories tell the state.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
# No mail is sent; the default program is missing on most machines.
MailProg=/bin/true
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.log
EOF
  mv "$CONF.new" "$CONF"
  if [ ! -e "$SYSTEM_CONF" ] && [ ! -L "$SYSTEM_CONF" ]; then # else SLURM_CONF is needed
    { mkdir -p "$(dirname "$SYSTEM_CONF")" && ln -s "$CONF" "$SYSTEM_CONF"; } 2>/dev/null || true
  fi
}

munge_works() { munge -n -S "$MUNGE_SOCKET" 2>/dev/null | unmunge -S "$MUNGE_SOCKET" >/dev/null 2>&1; }

# munged refuses a key or directories that others can read or write, so owner and modes
# matter. A munged already running (a system service) is used as it is and never stopped.
start_munge() {
  munge_works && return
  local log=$DIR/log/munged.start
  {
    install -d -o munge -g munge -m 0700 /etc/munge /var/log/munge &&
      install -d -o munge -g munge -m 0711 /var/lib/munge &&
      install -d -o munge -g munge -m 0755 /run/munge
  } 2>"$log" || cannot_run "cannot prepare munge's directories: $(tail -n1 "$log")"
  if [ ! -s "$MUNGE_KEY" ]; then # the munge package makes one; an image may lack it
    {
      if command -v mungekey >/dev/null; then
        mungekey --create --keyfile="$MUNGE_KEY"
      else
        dd if=/dev/urandom of="$MUNGE_KEY" bs=1 count=1024 status=none
      fi && chown munge:munge "$MUNGE_KEY" && chmod 0400 "$MUNGE_KEY"
    } 2>"$log" || cannot_run "cannot create $MUNGE_KEY: $(tail -n1 "$log")"
  fi
  runuser -u munge -- /usr/sbin/munged >"$log" 2>&1 ||
    cannot_run "munged did not start: $(tail -n1 "$log")"
  cp /run/munge/munged.pid "$DIR/run/munged.ours" 2>/dev/null || true
  munge_works || cannot_run "munged runs but munge/unmunge fail: $(log_reason /var/log/munge/munged.log)"
}

# DAEMON ARGS...: starts it (it forks into the background) and checks that it stays up.
start_daemon() {
  local daemon=$1 log=$DIR/log/$1.log
  shift
  "$daemon" "$@" >"$DIR/log/$daemon.start" 2>&1 ||
    cannot_run "$daemon did not start: $(tail -n1 "$DIR/log/$daemon.start")"
  local i
  for ((i = 0; i < 20; i++)); do # the forked daemon writes its pid file soon after
    live_pid "$DIR/run/$daemon.pid" "$daemon" >/dev/null && return 0
    sleep 0.5
  done
  cannot_run "$daemon exited: $(log_reason "$log")"
}

node_state() { sinfo -h -n "$1" -o %T 2>/dev/null | head -n1; }

# Bounded: the node must be idle (or running jobs) within READY_TIMEOUT seconds.
wait_until_ready() {
  local node=$1 state="" daemon deadline=$((SECONDS + READY_TIMEOUT))
  while ((SECONDS < deadline)); do
    state=$(node_state "$node")
    case $state in idle | mixed | allocated | completing) return 0 ;; esac
    for daemon in slurmctld slurmd; do
      live_pid "$DIR/run/$daemon.pid" "$daemon" >/dev/null ||
        cannot_run "$daemon exited: $(log_reason "$DIR/log/$daemon.log")"
    done
    sleep 1
  done
  die "node $node not ready after ${READY_TIMEOUT}s (state '${state:-none}'; $(sinfo -h -R -o %E 2>/dev/null | head -n1); logs in $DIR/log)"
}

cmd_start() {
  become_root start
  mkdir -p "$DIR/log"
  install_packages
  local node
  node=$(hostname -s)
  if live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null &&
    live_pid "$DIR/run/slurmd.pid" slurmd >/dev/null; then
    wait_until_ready "$node"
    say "ready (already running): node $node, partition local, SLURM_CONF=$CONF"
    return
  fi
  cmd_stop quiet # a half-started cluster from before: stop what is left, then start afresh
  write_conf "$node"
  local log # the daemons append: keep one previous log, so a failure's reason is this start's
  for log in slurmctld slurmd; do
    if [ -f "$DIR/log/$log.log" ]; then mv -f "$DIR/log/$log.log" "$DIR/log/$log.log.1"; fi
  done
  trap 'cmd_stop quiet' EXIT # a failed start leaves nothing running (the logs stay)
  start_munge
  start_daemon slurmctld -f "$CONF"
  start_daemon slurmd -f "$CONF" -N "$node"
  wait_until_ready "$node"
  trap - EXIT
  say "ready: node $node ($(sinfo -h -n "$node" -o %c) CPUs), partition local, SLURM_CONF=$CONF"
}

# PIDFILE COMMAND: SIGTERM, then SIGKILL after 10 s.
stop_daemon() {
  local pid i
  pid=$(live_pid "$1" "$2") || return 0
  kill -TERM "$pid"
  for ((i = 0; i < 20; i++)); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.5
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  rm -f "$1"
}

# Jobs first, so no job's processes outlive slurmd: cancel, then wait for the jobs' KillWait.
cancel_jobs() {
  live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null || return 0
  local jobs i
  mapfile -t jobs < <(squeue -h -o %A 2>/dev/null)
  [ ${#jobs[@]} -eq 0 ] && return 0
  scancel "${jobs[@]}" 2>/dev/null || true
  for ((i = 0; i < 45; i++)); do
    [ -z "$(squeue -h -o %A 2>/dev/null)" ] && return 0
    sleep 1
  done
  say "jobs still listed after 45 s: $(squeue -h -o '%A %T' | tr '\n' ' ')"
}

cmd_stop() {
  local quiet=${1:-}
  become_root stop
  cancel_jobs
  stop_daemon "$DIR/run/slurmd.pid" slurmd
  stop_daemon "$DIR/run/slurmctld.pid" slurmctld
  stop_daemon "$DIR/run/munged.ours" munged
  if [ "$(readlink "$SYSTEM_CONF" 2>/dev/null)" = "$CONF" ]; then rm -f "$SYSTEM_CONF"; fi
  [ -n "$quiet" ] || say "stopped"
}

cmd_status() {
  if ! live_pid "$DIR/run/slurmctld.pid" slurmctld >/dev/null; then
    say "not running"
    return 3
  fi
  sinfo
  squeue
}

case ${1:-} in
  start) cmd_start ;;
  stop) cmd_stop ;;
  status) cmd_status ;;
  env) echo "export SLURM_CONF=$CONF" ;;
  *)
    sed -n '2,12p' "$SCRIPT" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
