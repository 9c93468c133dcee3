#!/usr/bin/env bash
# Trainpool's own one-node Slurm cluster, for the Slurm tests and CI (.ci/run): munged, slurmctld and
# slurmd on this machine, one node (`hostname -s`) with 8 CPUs and 2 fake GPUs, partition `debug`.
#
#   scripts/slurm-cluster.sh up       start it (already up: says so and succeeds)
#   scripts/slurm-cluster.sh down     cancel every job, wait until the node is free, stop the daemons
#   scripts/slurm-cluster.sh status   what runs, sinfo, squeue (exit 0 when up, 1 when not)
#
# Everything lives in one run folder, TRAINPOOL_SLURM_DIR (default /tmp/trainpool-slurm): slurm.conf,
# gres.conf, state, spool, logs (log/), the jobcomp file (log/jobcomp.txt: a line per finished job),
# the munge socket, and the PIDs this script started (pid/). `up` wipes the folder first (Slurm keeps
# a node's drain reason in its state files across restarts), so each start is a fresh cluster. `up`
# and `down` must be given the same folder. Needs root (slurmd runs jobs as their users) and the
# packages from .ci/system-deps.sh (slurm-wlm, munge).
#
# Where clients find the configuration: the daemons read <run>/slurm.conf (-f). For sbatch, squeue,
# scontrol… that other code runs, `up` points /etc/slurm/slurm.conf (their default) at it with a
# symlink — only when that path is free or already such a link (a machine's real Slurm
# configuration is never touched; then set SLURM_CONF). <run>/env says the same for a shell:
# `. /tmp/trainpool-slurm/env` exports SLURM_CONF. `down` removes the link.
#
# Fake GPUs: gres.conf's File= are two symlinks to /dev/null in the run folder; Slurm then sets
# CUDA_VISIBLE_DEVICES (and SLURM_JOB_GPUS) per task. No cgroups, so it is only an environment
# variable: nothing isolates devices. CPUs=8 (SlurmdParameters=config_overrides) lets 8 tasks run
# at once on a 2-core machine. No accounting (sacct says "accounting storage is disabled"): finished
# jobs stay in squeue/scontrol for MinJobAge (300 s), and in the jobcomp file.
#
# Daemons run in the foreground (-D / -F) under setsid (a daemon started inside `timeout …` would
# otherwise die with timeout's process group) and are stopped by their recorded PIDs, never by name:
# TERM, then KILL after TRAINPOOL_SLURM_STOP_TIMEOUT seconds. `down` first waits until no job is
# left and the node has left alloc/mix/comp — killing slurmd under running steps leaves slurmstepd
# orphans that ignore TERM. One cluster per machine (the ports are Slurm's defaults, 6817/6818).
# Bounds, in seconds: TRAINPOOL_SLURM_UP_TIMEOUT (30: node idle, else the logs' tails and a
# failure), TRAINPOOL_SLURM_DOWN_TIMEOUT (30: jobs gone), TRAINPOOL_SLURM_STOP_TIMEOUT (10: per stop).
# On a 2-core machine: up about 0.3-1.5 s, down about 4 s (slurmd and slurmctld take 1.5-2 s each
# to shut down, munged about 2 s).
set -euo pipefail

RUN=${TRAINPOOL_SLURM_DIR:-/tmp/trainpool-slurm}
UP_TIMEOUT=${TRAINPOOL_SLURM_UP_TIMEOUT:-30}
DOWN_TIMEOUT=${TRAINPOOL_SLURM_DOWN_TIMEOUT:-30}
STOP_TIMEOUT=${TRAINPOOL_SLURM_STOP_TIMEOUT:-10}
ETC_CONF=/etc/slurm/slurm.conf
MARK=.trainpool-slurm # in the run folder: the folder is ours, `up` may wipe it
DAEMONS=(munged slurmctld slurmd)

case "$RUN" in /*) ;; *) RUN="$PWD/$RUN" ;; esac
RUN=${RUN%/}
CONF="$RUN/slurm.conf"
export SLURM_CONF="$CONF"

say() { echo "slurm-cluster: $*"; }
fail() { echo "slurm-cluster: $*" >&2; exit 1; }

pid_of() { if [ -s "$RUN/pid/$1" ]; then cat "$RUN/pid/$1"; fi; }
# Alive and still the program we started (a recorded PID may have been reused since).
alive() {
  local pid; pid=$(pid_of "$1")
  [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ]
}

log_tails() {
  local f
  for f in "$RUN"/log/slurmctld.log "$RUN"/log/slurmd.log "$RUN"/log/*.out; do
    [ -s "$f" ] || continue
    echo "--- last lines of $f" >&2
    tail -n 15 "$f" >&2
  done
}

# Node states as sinfo prints them (idle, mix, alloc, comp, drain, down…; a suffix such as * or ~
# marks a flag).
node_state() { timeout 5 sinfo -h -N -o '%t' 2>/dev/null | head -n 1 | tr -d '*~#!%$@^-' || true; }

seconds() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(seconds)" 'BEGIN { printf "%.1f", b - a }'; }

stop_pids() { # names…: TERM to all at once, wait, then KILL what is left
  local name i left=()
  for name in "$@"; do
    if alive "$name"; then kill -TERM "$(pid_of "$name")" 2>/dev/null || true; left+=("$name"); fi
  done
  for ((i = 0; i < STOP_TIMEOUT * 20 && ${#left[@]} > 0; i++)); do
    sleep 0.05
    for name in "${!left[@]}"; do alive "${left[$name]}" || unset 'left[name]'; done
  done
  for name in "${left[@]}"; do
    say "$name (pid $(pid_of "$name")) ignored TERM for ${STOP_TIMEOUT} s: KILL"
    kill -KILL "$(pid_of "$name")" 2>/dev/null || true
  done
  for name in "$@"; do rm -f "$RUN/pid/$name"; done
}

is_up() { alive munged && alive slurmctld && alive slurmd; }

# The run folder of a cluster another TRAINPOOL_SLURM_DIR brought up, if its slurmctld is alive.
other_cluster() {
  local target dir
  target=$(readlink "$ETC_CONF" 2>/dev/null) || return 0
  dir=${target%/slurm.conf}
  if [ "$target" != "$CONF" ] && [ -e "$dir/$MARK" ] && [ -s "$dir/pid/slurmctld" ] &&
    [ "$(cat "/proc/$(cat "$dir/pid/slurmctld")/comm" 2>/dev/null)" = slurmctld ]; then
    echo "$dir"
  fi
}

link_etc_conf() {
  if [ -L "$ETC_CONF" ] || [ ! -e "$ETC_CONF" ]; then
    mkdir -p "$(dirname "$ETC_CONF")"
    ln -sfn "$CONF" "$ETC_CONF"
  else
    say "$ETC_CONF is a real configuration: left alone; clients need SLURM_CONF=$CONF (. $RUN/env)"
  fi
}

unlink_etc_conf() {
  if [ -L "$ETC_CONF" ] && [ "$(readlink "$ETC_CONF")" = "$CONF" ]; then rm -f "$ETC_CONF"; fi
}

ensure_hostname_resolves() {
  local host; host=$(hostname -s)
  if ! getent hosts "$host" >/dev/null; then
    echo "127.0.0.1 $host # added by trainpool scripts/slurm-cluster.sh" >> /etc/hosts
    say "added $host to /etc/hosts (it did not resolve)"
  fi
}

write_config() {
  local host node mem_mb
  host=$(hostname -s)
  # slurmd -C describes this machine (and needs no slurm.conf). The node line keeps its memory,
  # lowered to 3/4 (a RealMemory above what slurmd finds would drain the node; memory is not a
  # consumable here, CR_Core), and says CPUs=8 alone: Slurm takes that as 8 sockets of one core,
  # consistent, so 8 single-CPU tasks run at once on any machine (config_overrides).
  node=$(slurmd -C | head -n 1)
  mem_mb=$(sed -n 's/.*RealMemory=\([0-9]*\).*/\1/p' <<< "$node")
  [ -n "$mem_mb" ] || fail "slurmd -C printed no RealMemory: $node"
  mkdir -p "$RUN/gpu"
  ln -sfn /dev/null "$RUN/gpu/nvidia0"
  ln -sfn /dev/null "$RUN/gpu/nvidia1"
  cat > "$RUN/gres.conf" <<EOF
# Two fake GPUs: symlinks to /dev/null. Slurm sets CUDA_VISIBLE_DEVICES per task from them.
Name=gpu File=$RUN/gpu/nvidia[0-1]
EOF
  cat > "$CONF" <<EOF
# Written by Trainpool's scripts/slurm-cluster.sh: a one-node cluster for tests. Do not edit: \`up\`
# rewrites it.
ClusterName=trainpool
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$RUN/munge/munge.socket
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$RUN/log/jobcomp.txt
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerParameters=batch_sched_delay=0,sched_min_interval=0
ReturnToService=2
MailProg=/bin/true
KillWait=5
StateSaveLocation=$RUN/state
SlurmdSpoolDir=$RUN/spool
SlurmctldPidFile=$RUN/run/slurmctld.pid
SlurmdPidFile=$RUN/run/slurmd.pid
SlurmctldLogFile=$RUN/log/slurmctld.log
SlurmdLogFile=$RUN/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$RUN/plugstack.conf
GresTypes=gpu
SlurmdParameters=config_overrides
NodeName=$host CPUs=8 RealMemory=$((mem_mb * 3 / 4)) Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  : > "$RUN/plugstack.conf"
  cat > "$RUN/env" <<EOF
# Written by scripts/slurm-cluster.sh up: \`. $RUN/env\` before running Slurm's commands.
export TRAINPOOL_SLURM_DIR=$RUN
export SLURM_CONF=$CONF
EOF
}

start() { # name, command…: in the background under setsid, its PID recorded
  local name=$1 pid i; shift
  setsid "$@" < /dev/null >> "$RUN/log/$name.out" 2>&1 &
  pid=$!
  echo "$pid" > "$RUN/pid/$name"
  # setsid (and setpriv) exec the daemon: same PID; wait until it carries the daemon's name.
  for ((i = 0; i < 50; i++)); do
    alive "$name" || [ ! -e "/proc/$pid" ] && break
    sleep 0.05
  done
}

# While `up` starts daemons, a failure (or an interrupt) stops what it started and shows the logs.
STARTING=
on_exit() {
  local rc=$?
  if [ -n "$STARTING" ] && [ "$rc" -ne 0 ]; then log_tails; stop_all; fi
}
trap on_exit EXIT
trap 'exit 130' INT TERM

up() {
  [ "$(id -u)" -eq 0 ] || fail "needs root (slurmd runs jobs as their users; munged runs as munge)"
  local t0 d i other state=
  t0=$(seconds)
  for d in munged slurmctld slurmd sinfo sbatch setpriv; do
    command -v "$d" >/dev/null || [ -x "/usr/sbin/$d" ] || fail "$d is missing: run bash .ci/system-deps.sh"
  done
  other=$(other_cluster)
  [ -z "$other" ] || fail "another Trainpool cluster is up from $other (one per machine): TRAINPOOL_SLURM_DIR=$other $0 down"
  # Up and healthy (perhaps running others' jobs): left as it is. A drained or down node, or a
  # daemon missing, means a fresh start.
  if is_up && [[ "$(node_state)" =~ ^(idle|mix|alloc|comp)$ ]]; then
    link_etc_conf
    say "already up ($RUN)"
    return 0
  fi
  for d in "${DAEMONS[@]}"; do
    if alive "$d"; then say "partly up: stopping it first"; down; t0=$(seconds); break; fi
  done
  if [ -e "$RUN" ]; then
    [ -e "$RUN/$MARK" ] || [ -z "$(ls -A "$RUN")" ] ||
      fail "$RUN exists and is not a Trainpool Slurm folder: not wiping it (choose another TRAINPOOL_SLURM_DIR)"
    rm -rf "$RUN"
  fi
  STARTING=1
  mkdir -p "$RUN"/{state,spool,log,pid,run}
  touch "$RUN/$MARK"
  chmod 0755 "$RUN"
  install -d -o munge -g munge -m 0755 "$RUN/munge"
  [ -s /etc/munge/munge.key ] || { mungekey --create && chown munge:munge /etc/munge/munge.key; }
  ensure_hostname_resolves
  write_config

  # munged, as the munge user, with its own socket (a munged of the machine's is left alone); it
  # logs to its stderr (-F): log/munged.out.
  start munged setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged -F \
    --socket="$RUN/munge/munge.socket" --pid-file="$RUN/munge/munged.pid" \
    --seed-file="$RUN/munge/munged.seed" --log-file="$RUN/munge/munged.log"
  for ((i = 0; i < 50; i++)); do [ -S "$RUN/munge/munge.socket" ] && break; alive munged || break; sleep 0.1; done
  [ -S "$RUN/munge/munge.socket" ] || fail "munged did not start (logs below, in $RUN/log)"

  start slurmctld slurmctld -D -f "$CONF"
  start slurmd slurmd -D -f "$CONF"
  link_etc_conf

  local deadline=$(( $(date +%s) + UP_TIMEOUT ))
  while [ "$(date +%s)" -lt "$deadline" ]; do
    for d in "${DAEMONS[@]}"; do
      alive "$d" || fail "$d exited during start-up (logs below, in $RUN/log)"
    done
    state=$(node_state)
    [ "$state" = idle ] && break
    sleep 0.2
  done
  [ "$state" = idle ] ||
    fail "the node was not idle within ${UP_TIMEOUT} s (last state: ${state:-no answer from sinfo}; logs below, in $RUN/log)"
  STARTING=
  say "up in $(elapsed "$t0") s: node $(hostname -s) idle, 8 CPUs, gpu:2, partition debug; run folder $RUN"
  [ "$(readlink "$ETC_CONF" 2>/dev/null)" = "$CONF" ] || say "clients: . $RUN/env"
}

# slurmd and slurmctld stop independently (each takes 1.5-2 s to shut down here): together, then
# munged, which both use until they exit.
stop_all() { stop_pids slurmd slurmctld; stop_pids munged; unlink_etc_conf; }

down() {
  local t0; t0=$(seconds)
  local any=
  for d in "${DAEMONS[@]}"; do alive "$d" && any=1; done
  if [ -z "$any" ]; then
    unlink_etc_conf
    rm -f "$RUN"/pid/*
    say "not up ($RUN)"
    return 0
  fi
  if alive slurmctld; then
    local jobs=()
    # %F: the array's job id (a plain job's own id): scancel of it ends every task.
    mapfile -t jobs < <(timeout 10 squeue -h -o '%F' 2>/dev/null | sort -u)
    [ ${#jobs[@]} -eq 0 ] || timeout 10 scancel "${jobs[@]}" || say "scancel ${jobs[*]} failed"
    local deadline=$(( $(date +%s) + DOWN_TIMEOUT )) left state
    while :; do
      left=$(timeout 5 squeue -h -o '%i' 2>/dev/null | wc -l || true)
      state=$(node_state)
      if [ "${left:-0}" -eq 0 ] && ! [[ "$state" =~ ^(alloc|mix|comp)$ ]]; then break; fi
      if [ "$(date +%s)" -ge "$deadline" ]; then
        say "after ${DOWN_TIMEOUT} s still $left job(s) and node $state: stopping anyway (slurmstepd may be left behind)"
        break
      fi
      sleep 0.2
    done
  fi
  stop_all
  say "down in $(elapsed "$t0") s (logs kept in $RUN/log)"
}

status() {
  local d pid up=1
  for d in "${DAEMONS[@]}"; do
    pid=$(pid_of "$d")
    if alive "$d"; then echo "$d: running (pid $pid)"; else echo "$d: not running"; up=; fi
  done
  if alive slurmctld; then
    timeout 5 sinfo || true
    timeout 5 squeue || true
  fi
  echo "run folder: $RUN; $ETC_CONF -> $(readlink "$ETC_CONF" 2>/dev/null || echo '(not a link)')"
  [ -n "$up" ]
}

case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: $0 up|down|status   (run folder: TRAINPOOL_SLURM_DIR, default /tmp/trainpool-slurm)" >&2; exit 2 ;;
esac
