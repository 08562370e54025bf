"""Shell scripts the MPI runtime runs: the worker's sshd start, the launcher's key setup and the
KAI wait-for-workers loop. Each is one ``sh -c`` argument.
"""

from __future__ import annotations

from glimmer.certify.platform.vocab import HOSTFILE_DIR, SSH_AUTH_PATH, SSH_DIR

SSHD = "/usr/sbin/sshd"

# The install is guarded on the exact path the chain execs, so an image that ships sshd starts
# with no package-manager egress (air-gapped clusters); a PATH lookup could disagree with it.
SSHD_INSTALL = (
    f"{{ test -x {SSHD} || {{ apt-get update && DEBIAN_FRONTEND=noninteractive "
    "apt-get install -y --no-install-recommends openssh-server; }; }"
)

# Chained with && so that any failed step aborts before sshd starts on a broken key set.
WORKER_SSHD_SCRIPT = " && ".join(
    (
        "set -x",
        SSHD_INSTALL,
        "mkdir -p -m 0755 /var/run/sshd",
        f"mkdir -p -m 700 {SSH_DIR}",
        f"cp {SSH_AUTH_PATH}/* {SSH_DIR}/",
        f"chmod 600 {SSH_DIR}/id_rsa",
        f"chmod 644 {SSH_DIR}/id_rsa.pub {SSH_DIR}/authorized_keys",
        f"exec {SSHD} -De",
    )
)

FIX_SSH_SCRIPT = "\n".join(
    (
        "set -e -x",
        f"mkdir -p {SSH_DIR}",
        f"cp {SSH_AUTH_PATH}/* {SSH_DIR}/",
        f"chmod 600 {SSH_DIR}/id_rsa",
        f"chmod 644 {SSH_DIR}/id_rsa.pub {SSH_DIR}/authorized_keys",
    )
)

# KAI admits a PodGroup only when every sub-group has pods, so the launcher cannot wait outside
# its pod (dependsOn) for the workers: it waits here, inside, until every worker answers ssh.
LAUNCHER_WAIT_SCRIPT = f"""\
set -e
mkdir -p {SSH_DIR}
if [ ! -f {SSH_DIR}/id_rsa ]; then
  cp {SSH_AUTH_PATH}/* {SSH_DIR}/
  chmod 600 {SSH_DIR}/id_rsa
  chmod 644 {SSH_DIR}/id_rsa.pub {SSH_DIR}/authorized_keys
fi
HOSTFILE={HOSTFILE_DIR}/hostfile
HOSTS=$(awk '{{print $1}}' "$HOSTFILE" 2>/dev/null || true)
if [ -z "$HOSTS" ]; then
  echo "wait-for-workers: $HOSTFILE is missing or empty" >&2
  exit 1
fi
SELF=$(hostname)
START=$(date +%s)
attempt=0
while [ "$attempt" -lt 240 ]; do
  attempt=$((attempt + 1))
  pending=""
  for host in $HOSTS; do
    case "$host" in "$SELF"|"$SELF".*) continue ;; esac
    if ! err=$(timeout 10 ssh -n -o BatchMode=yes -o StrictHostKeyChecking=no \\
        -o UserKnownHostsFile=/dev/null -o ConnectTimeout=5 "$host" true 2>&1); then
      pending="$host"
      if [ $((attempt % 10)) -eq 0 ]; then
        echo "wait-for-workers: attempt $attempt: $host not answering:"
        echo "$err" | head -n 3
      fi
      break
    fi
  done
  if [ -z "$pending" ]; then
    echo "wait-for-workers: all workers answer ssh after $(( $(date +%s) - START ))s"
    exit 0
  fi
  sleep 5
done
echo "wait-for-workers: workers did not answer ssh within 20 minutes; hostfile:" >&2
cat "$HOSTFILE" >&2
echo "hint: a NetworkPolicy must allow pod-to-pod traffic on port 22" >&2
exit 1
"""
