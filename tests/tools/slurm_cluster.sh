#!/usr/bin/env bash
# tests/tools/slurm_cluster.sh up|down — a real Slurm 22.05 cluster (one slurmctld, N slurmd) on
# this one machine, for the slurm substrate's tests (issue 15). Root only.
#
# Every daemon lives in its own network namespace, with its own hostname (UTS namespace) and a
# private /etc/hosts (mount namespace). The nodes reach each other over a bridge that exists
# only inside the head's namespace; the root namespace has no address on that network and an
# `unreachable` route for it, so a misdirected packet fails here instead of leaving the machine.
#
# Each node also has a management interface (mgmt0) that holds its default route: a veth pair
# whose two ends are both inside the node's own namespace, so nothing sent that way leaves it.
# tcp-baseline refuses to load the default-route interface (§9.13); with this layout the fabric
# (eth0, on the bridge) is a different interface and can be measured.
#
# Knobs: GLIMMER_SLURM_DIR (/tmp/glimmer-slurm), GLIMMER_SLURM_PREFIX (glsl: namespaces are
# <prefix>-head, <prefix>-n1..), GLIMMER_SLURM_NET (10.199.0: a /24 used only in namespaces),
# GLIMMER_SLURM_NODES (4), GLIMMER_SLURM_CPUS (nproc), GLIMMER_SLURM_WAIT (60 s to become idle),
# GLIMMER_SLURM_KEEP=1 (down keeps the files, logs included).
#
# After `up`: `. $GLIMMER_SLURM_DIR/env` sets SLURM_CONF and puts the client wrappers first on
# PATH; sinfo, sbatch, scontrol... then work from the root namespace. The nodes share this
# filesystem, so job output files and the venv's glimmer-runner are visible on every node.
set -euo pipefail

DIR=${GLIMMER_SLURM_DIR:-/tmp/glimmer-slurm}
PREFIX=${GLIMMER_SLURM_PREFIX:-glsl}
NET=${GLIMMER_SLURM_NET:-10.199.0}
NODES=${GLIMMER_SLURM_NODES:-4}
HEAD=$PREFIX-head

usage() { echo "usage: $0 up|down" >&2; exit 2; }

# Everything under DIR is deleted by `down`: refuse a path that could be someone's home or /.
case $DIR in /*/*) ;; *) echo "GLIMMER_SLURM_DIR must be absolute and two levels deep" >&2; exit 2;; esac
[ "$(id -u)" = 0 ] || { echo "slurm_cluster.sh: must run as root (network namespaces)" >&2; exit 1; }

# The cluster's own namespaces, and nothing else's: the prefix is part of the name.
cluster_namespaces() {
  ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$PREFIX-(head|n[0-9]+)$" || true
}

pids_inside() {
  local ns
  for ns in $(cluster_namespaces); do ip netns pids "$ns" 2>/dev/null || true; done | sort -u
}

down() {
  # Only processes attributable to this cluster end: whatever runs inside its namespaces
  # (daemons, slurmstepd, job tasks, wrapped clients) and munged by its pid file. Never by name.
  local p mp ns
  p=$(pids_inside)
  if [ -n "$p" ]; then
    # shellcheck disable=SC2086
    kill -TERM $p 2>/dev/null || true
    # srun ignores the first SIGTERM; give the daemons 5 s to stop their jobs, then insist.
    for _ in $(seq 1 50); do [ -z "$(pids_inside)" ] && break; sleep 0.1; done
    p=$(pids_inside)
    # shellcheck disable=SC2086
    if [ -n "$p" ]; then kill -KILL $p 2>/dev/null || true; sleep 0.2; fi
  fi
  if [ -f "$DIR/run/munged.pid" ]; then
    mp=$(cat "$DIR/run/munged.pid")
    if [ "$(cat "/proc/$mp/comm" 2>/dev/null)" = munged ]; then
      kill -TERM "$mp" 2>/dev/null || true
      for _ in $(seq 1 30); do [ -d "/proc/$mp" ] || break; sleep 0.1; done
    fi
  fi
  # Deleting a namespace destroys its interfaces: the bridge, the veths, the management pairs.
  for ns in $(cluster_namespaces); do ip netns del "$ns" 2>/dev/null || true; done
  ip route del unreachable "$NET.0/24" 2>/dev/null || true
  [ "${GLIMMER_SLURM_KEEP:-0}" = 1 ] || rm -rf "$DIR"
  echo "slurm cluster $PREFIX: down"
}

install_packages() {
  command -v slurmctld >/dev/null && command -v slurmd >/dev/null && command -v sbatch >/dev/null \
    && command -v munged >/dev/null && command -v ip >/dev/null && return 0
  # The packages' postinst would start the system's own munge and slurm services; a
  # policy-rc.d answering 101 stops that (Debian images often have one already).
  local made_policy=
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
    chmod +x /usr/sbin/policy-rc.d
    made_policy=1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q >/dev/null
  apt-get install -y -q --no-install-recommends slurmctld slurmd slurm-client munge iproute2 \
    >/dev/null
  [ -z "$made_policy" ] || rm -f /usr/sbin/policy-rc.d
}

write_network() {
  local i ns
  ip route replace unreachable "$NET.0/24"
  ip netns add "$HEAD"
  ip -n "$HEAD" link set lo up
  ip -n "$HEAD" link add fabric0 type bridge
  ip -n "$HEAD" addr add "$NET.1/24" dev fabric0
  ip -n "$HEAD" link set fabric0 up
  printf '127.0.0.1 localhost\n%s head\n' "$NET.1" >"$DIR/etc/hosts"
  for i in $(seq 1 "$NODES"); do
    ns=$PREFIX-n$i
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    # The fabric: eth0 in the node, its peer on the head's bridge.
    ip link add "vh$i" netns "$HEAD" type veth peer name eth0 netns "$ns"
    ip -n "$HEAD" link set "vh$i" master fabric0 up
    ip -n "$ns" addr add "$NET.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
    # The management path: both ends in the node, the default route through it.
    ip -n "$ns" link add mgmt0 type veth peer name mgmt1
    ip -n "$ns" addr add "10.200.$i.1/30" dev mgmt0
    ip -n "$ns" addr add "10.200.$i.2/30" dev mgmt1
    ip -n "$ns" link set mgmt0 up
    ip -n "$ns" link set mgmt1 up
    ip -n "$ns" route add default via "10.200.$i.2" dev mgmt0
    echo "$NET.$((10 + i)) n$i" >>"$DIR/etc/hosts"
  done
}

write_config() {
  local cpus=${GLIMMER_SLURM_CPUS:-$(nproc)} i
  # The settings that keep slurmd away from cgroups: linuxproc, task/none, no accounting
  # gather. batch_sched_delay=0 places a batch job at once instead of on the 3 s tick.
  # sched_interval=1: a node just resumed answers slurmctld's ping about 0.7 s later, and a job
  # submitted to it in between was seen to wait for the next main-loop pass (60 s by default)
  # instead of starting when the node answered; a pass every second bounds that wait.
  cat >"$DIR/etc/slurm.conf" <<EOF
ClusterName=glimmer
SlurmctldHost=head($NET.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=6817
SlurmdPort=6818
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$DIR/sock/munge.sock
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd.%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,sched_interval=1
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdParameters=config_overrides
SlurmctldTimeout=30
SlurmdTimeout=10
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
EOF
  for i in $(seq 1 "$NODES"); do
    echo "NodeName=n$i NodeAddr=$NET.$((10 + i)) NodeHostname=n$i CPUs=$cpus RealMemory=1000 State=UNKNOWN" \
      >>"$DIR/etc/slurm.conf"
  done
  echo "PartitionName=debug Nodes=n[1-$NODES] Default=YES MaxTime=INFINITE State=UP" >>"$DIR/etc/slurm.conf"
}

write_launchers() {
  local c
  # nsenter joins the network namespace without remounting /sys (`ip netns exec` would, and
  # slurmd 22.05 needs /sys/fs/cgroup); unshare gives the own hostname and /etc/hosts. Every
  # step execs, so the pid started is the daemon's own.
  cat >"$DIR/bin/nsrun" <<EOF
#!/bin/sh
# nsrun NETNS HOSTNAME CMD...: run CMD as host HOSTNAME inside NETNS.
ns=\$1; h=\$2; shift 2
exec nsenter --net=/run/netns/"\$ns" unshare --uts --mount --propagation private \\
  /bin/sh -c 'hostname "\$0"; mount --bind $DIR/etc/hosts /etc/hosts; exec "\$@"' "\$h" "\$@"
EOF
  chmod +x "$DIR/bin/nsrun"
  # Clients called from the root namespace run in the head's; called from inside the cluster
  # (a batch script on a node) they run where they are. The test's own -ef (same device and
  # inode, as stat -L sees them) tells which without a process per namespace: the substrate
  # makes hundreds of calls a run, and on a loaded 2-core machine each spawned stat costs.
  for c in srun sbatch salloc squeue sinfo scontrol scancel sacct sattach sstat sprio sshare sdiag sbcast; do
    cat >"$DIR/bin/$c" <<EOF
#!/bin/sh
for f in /run/netns/$PREFIX-*; do
  [ /proc/self/ns/net -ef "\$f" ] && exec /usr/bin/$c "\$@"
done
exec nsenter --net=/run/netns/$HEAD /usr/bin/$c "\$@"
EOF
    chmod +x "$DIR/bin/$c"
  done
  cat >"$DIR/env" <<EOF
export SLURM_CONF=$DIR/etc/slurm.conf
export PATH=$DIR/bin:\$PATH
EOF
}

start_daemon() { # start_daemon NAME NETNS HOST CMD...
  local name=$1
  shift
  setsid "$DIR/bin/nsrun" "$@" >"$DIR/log/$name.stdout" 2>&1 </dev/null &
  echo $! >"$DIR/run/$name.pid"
}

up() {
  local started=$SECONDS i idle deadline
  # A cluster left over (a killed run) is replaced, never joined: its state is unknown.
  if [ -n "$(cluster_namespaces)" ] || [ -e "$DIR/run/munged.pid" ]; then down >/dev/null; fi
  install_packages
  rm -rf "$DIR"
  mkdir -p "$DIR"/{etc,log,run,state,bin,munge,sock}
  for i in $(seq 1 "$NODES"); do mkdir -p "$DIR/spool/n$i"; done
  chmod 700 "$DIR/munge"
  chmod 755 "$DIR" "$DIR/sock"
  # One munged in the root namespace serves every node: its socket is a file, and files are
  # shared across network namespaces.
  mungekey -c -k "$DIR/munge/munge.key" -b 1024
  munged --force --key-file="$DIR/munge/munge.key" --socket="$DIR/sock/munge.sock" \
    --pid-file="$DIR/run/munged.pid" --log-file="$DIR/log/munged.log" \
    --seed-file="$DIR/munge/munged.seed"
  write_network
  write_config
  write_launchers
  # slurmctld refuses to start unless its hostname is SlurmctldHost's.
  start_daemon slurmctld "$HEAD" head slurmctld -D -i -f "$DIR/etc/slurm.conf"
  for i in $(seq 1 "$NODES"); do
    start_daemon "slurmd-n$i" "$PREFIX-n$i" "n$i" slurmd -D -f "$DIR/etc/slurm.conf"
  done
  export SLURM_CONF=$DIR/etc/slurm.conf PATH=$DIR/bin:$PATH
  deadline=$((SECONDS + ${GLIMMER_SLURM_WAIT:-60}))
  while [ $SECONDS -lt $deadline ]; do
    idle=$(timeout 5 sinfo -h -N -o %t 2>/dev/null | grep -cx idle || true)
    if [ "$idle" = "$NODES" ]; then
      echo "slurm cluster $PREFIX: $NODES nodes idle in $((SECONDS - started)) s (. $DIR/env)"
      return 0
    fi
    sleep 0.1
  done
  echo "slurm cluster $PREFIX: not idle within ${GLIMMER_SLURM_WAIT:-60} s" >&2
  tail -n 20 "$DIR"/log/*.log >&2 || true
  return 1
}

case ${1:-} in
  up) up ;;
  down) down ;;
  *) usage ;;
esac
