#!/usr/bin/env bash
# Mounts one directory several times through FUSE, so that tests can write
# one SQLite file through mounts that share neither locks nor caches.
#
#   fuse-mounts.sh check        exit 0 if FUSE and the tools are here, else 2 and why
#   fuse-mounts.sh up DIR       DIR/shared mounted at DIR/mnt/{sshfs-a,sshfs-b,bindfs-a,bindfs-b}
#   fuse-mounts.sh down DIR     unmount all of them and stop the sshd that `up` started
#
# sshfs goes over loopback to a throwaway sshd (its own key, config and a high
# port, under DIR/state). Must run as root. Exit 2 means "FUSE is not available
# here"; any other non-zero exit is a real failure.
set -euo pipefail

MOUNTS=(sshfs-a sshfs-b bindfs-a bindfs-b)
source "$(dirname "${BASH_SOURCE[0]}")/mount-common.sh"

unavailable() { echo "fuse-mounts: FUSE unavailable: $*" >&2; exit 2; }

check() {
  [ "$(id -u)" = 0 ] || unavailable "must run as root to start sshd and mount"
  [ -c /dev/fuse ] || unavailable "/dev/fuse is missing"
  { exec 3<>/dev/fuse; } 2>/dev/null || unavailable "/dev/fuse cannot be opened"
  exec 3>&-
  local tool
  for tool in sshfs bindfs fusermount3 ssh-keygen /usr/sbin/sshd mountpoint; do
    command -v "$tool" >/dev/null || unavailable "$tool is not installed (apt-get install sshfs openssh-server bindfs fuse3)"
  done
}

down() {
  local dir=$1 m
  for m in "${MOUNTS[@]}"; do unmount "$dir/mnt/$m"; done
  stop_sshd "$dir/state"
}

start_sshd() {
  local state=$1 port attempt
  mkdir -p /run/sshd && chmod 755 /run/sshd
  ssh-keygen -q -t ed25519 -N '' -f "$state/host_ed25519" <<<y >/dev/null
  ssh-keygen -q -t ed25519 -N '' -f "$state/client_ed25519" <<<y >/dev/null
  cp "$state/client_ed25519.pub" "$state/authorized_keys"
  chmod 600 "$state/authorized_keys"
  for attempt in 1 2 3 4 5 6 7 8; do
    port=$(( 20000 + RANDOM % 40000 ))
    cat >"$state/sshd_config" <<CONFIG
Port $port
ListenAddress 127.0.0.1
HostKey $state/host_ed25519
PidFile $state/sshd.pid
AuthorizedKeysFile $state/authorized_keys
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
LogLevel INFO
CONFIG
    if detached /usr/sbin/sshd -f "$state/sshd_config" -E "$state/sshd.log" </dev/null >/dev/null 2>&1; then
      echo "$port" >"$state/port"
      return 0
    fi
  done
  echo "fuse-mounts: sshd would not start; see $state/sshd.log" >&2
  return 1
}

stop_sshd() {
  local state=$1 pid
  [ -f "$state/sshd.pid" ] || return 0
  pid=$(cat "$state/sshd.pid")
  # Only the sshd this script started: its pid file lives in our state directory.
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then kill "$pid" 2>/dev/null || true; fi
  rm -f "$state/sshd.pid"
}

# Mounts DIR/shared at DIR/mnt/sshfs-a and -b. A connection the server drops (seen once in CI, on a
# loaded machine, as "Connection reset by peer" five times running) is retried, and after three
# failures in a row against one sshd that sshd is replaced by a fresh one on another port.
mount_sshfs() {
  local dir=$1 state=$2 m port tries round
  for round in 1 2 3; do
    start_sshd "$state"
    port=$(cat "$state/port")
    for m in sshfs-a sshfs-b; do
      mountpoint -q "$dir/mnt/$m" && continue
      # Each sshfs mount is its own ssh session and its own cache: that is the point.
      tries=0
      until detached sshfs -p "$port" \
          -o "IdentityFile=$state/client_ed25519,IdentitiesOnly=yes,StrictHostKeyChecking=no,UserKnownHostsFile=/dev/null,BatchMode=yes,LogLevel=ERROR" \
          "root@127.0.0.1:$dir/shared" "$dir/mnt/$m" 2>>"$state/sshfs.log"; do
        tries=$((tries + 1))
        [ "$tries" -lt 3 ] || break
        sleep $((tries))
      done
    done
    mountpoint -q "$dir/mnt/sshfs-a" && mountpoint -q "$dir/mnt/sshfs-b" && return 0
    echo "round $round on port $port failed" >>"$state/sshfs.log"
    stop_sshd "$state"
  done
  echo "fuse-mounts: sshfs mounts of $dir/mnt failed three times, each time against a fresh sshd;" \
    "sshfs said: $(tail -4 "$state/sshfs.log"); sshd said: $(tail -6 "$state/sshd.log" 2>/dev/null)" >&2
  return 1
}

up() {
  local dir=$1 state mnt m port
  check
  down "$dir"
  state="$dir/state"
  mkdir -p "$dir/shared" "$state" && chmod 700 "$state"
  for m in "${MOUNTS[@]}"; do mkdir -p "$dir/mnt/$m"; done
  trap 'down "$dir"' ERR
  mount_sshfs "$dir" "$state"
  # The daemons' stderr goes to files: a caller reading our stderr to its end must not wait on them.
  detached bindfs "$dir/shared" "$dir/mnt/bindfs-a" 2>>"$state/bindfs.log"
  detached bindfs "$dir/shared" "$dir/mnt/bindfs-b" 2>>"$state/bindfs.log"
  for m in "${MOUNTS[@]}"; do
    mountpoint -q "$dir/mnt/$m" || { echo "fuse-mounts: $dir/mnt/$m is not mounted" >&2; false; }
  done
  trap - ERR
  for m in "${MOUNTS[@]}"; do echo "$dir/mnt/$m"; done
}

case "${1:-}" in
  check) check ;;
  up) [ -n "${2:-}" ] || { echo "usage: $0 up DIR" >&2; exit 64; }; up "$(realpath -m "$2")" ;;
  down) [ -n "${2:-}" ] || { echo "usage: $0 down DIR" >&2; exit 64; }; down "$(realpath -m "$2")" ;;
  *) echo "usage: $0 check | up DIR | down DIR" >&2; exit 64 ;;
esac
