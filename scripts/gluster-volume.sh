#!/usr/bin/env bash
# A throwaway GlusterFS volume on 127.0.0.1, mounted twice with the FUSE client's default options.
#
#   gluster-volume.sh check          exit 0 if glusterd, gluster, glusterfs and FUSE are here, else 2 and why
#   gluster-volume.sh up DIR         DIR/state holds glusterd's working directory and logs, DIR/brick the
#                                    brick; the volume is mounted at DIR/mnt/a and DIR/mnt/b
#   gluster-volume.sh bounce DIR S   stop the volume (its brick: every mount gets ENOTCONN), wait S
#                                    seconds, start it again; the mounts reconnect by themselves
#   gluster-volume.sh down DIR       unmount, stop the volume, stop the brick and glusterd (by PID); safe twice
#
# glusterd listens on 127.0.0.1:24007 (the brick process finds it only there), so a glusterd
# that this script did not start must not be running: `check` says so. The gluster CLI
# refuses a literal 127.0.0.1 brick, so /etc/hosts gets the alias `fcbrick` (added once, left).
# Must run as root. Exit 2 means "not available here"; any other non-zero exit is a real failure.
set -euo pipefail

ALIAS=fcbrick
WAIT=30   # seconds any one step may take
source "$(dirname "${BASH_SOURCE[0]}")/mount-common.sh"

unavailable() { echo "gluster-volume: GlusterFS unavailable: $*" >&2; exit 2; }

check() {
  [ "$(id -u)" = 0 ] || unavailable "must run as root to start glusterd and mount"
  [ -c /dev/fuse ] || unavailable "/dev/fuse is missing"
  local tool
  for tool in glusterd gluster glusterfs fusermount3 mountpoint ss; do
    command -v "$tool" >/dev/null || unavailable "$tool is not installed (apt-get install glusterfs-server glusterfs-client fuse3 iproute2)"
  done
  [ -f /etc/glusterfs/glusterd.vol ] || unavailable "/etc/glusterfs/glusterd.vol is missing (glusterfs-server)"
}

cli() { gluster --glusterd-sock="$STATE/cli.socket" --mode=script "$@"; }

down() {
  local dir=$1
  STATE="$dir/state"
  unmount "$dir/mnt/a"
  unmount "$dir/mnt/b"
  if [ -f "$STATE/volume" ]; then
    local volume
    volume=$(cat "$STATE/volume")
    if [ -S "$STATE/cli.socket" ]; then
      timeout 30 gluster --glusterd-sock="$STATE/cli.socket" --mode=script volume stop "$volume" force >/dev/null 2>&1 || true
    fi
    # The brick process's PID file: glusterd wrote it where the volume's name makes it ours.
    stop_pid_file "$(ls /var/run/gluster/vols/"$volume"/*.pid 2>/dev/null | head -1)" 2>/dev/null || true
    rm -rf "/var/run/gluster/vols/$volume"
  fi
  stop_pid_file "$STATE/glusterd.pid"
}

# The plain listing wraps a long brick path onto two lines; the XML one does not.
volume_started() { cli volume status "$VOLUME" --xml | tr -d ' \n' | grep -q "<path>$dir/brick</path>.*<status>1</status>"; }

mount_side() {
  local dir=$1 side=$2
  detached glusterfs --volfile-server=127.0.0.1 --volfile-id="$VOLUME" -l "$STATE/mount-$side.log" "$dir/mnt/$side" </dev/null >/dev/null 2>>"$STATE/mount.err"
  wait_for "the mount of $dir/mnt/$side" mountpoint -q "$dir/mnt/$side"
  wait_for "a listing of $dir/mnt/$side" ls "$dir/mnt/$side"
}

up() {
  local dir=$1
  check
  if port_taken 24007; then
    unavailable "something already listens on port 24007 (a glusterd this test did not start?); stop it to run these tests"
  fi
  down "$dir"
  STATE="$dir/state"
  VOLUME="fc$(od -An -N4 -tx4 /dev/urandom | tr -d ' ')"
  mkdir -p "$STATE/lib" "$dir/brick" "$dir/mnt/a" "$dir/mnt/b"
  chmod 700 "$STATE"
  grep -qE "^[^#]*[[:space:]]$ALIAS([[:space:]]|\$)" /etc/hosts || echo "127.0.0.1 $ALIAS" >>/etc/hosts
  trap 'down "$dir"' ERR
  [ -d /var/lib/glusterd ] && cp -a /var/lib/glusterd/. "$STATE/lib/"
  rm -f "$STATE/lib/glusterd.info"
  rm -rf "$STATE/lib/vols" "$STATE/lib/peers"
  sed -e "s#option working-directory .*#option working-directory $STATE/lib\n    option transport.socket.bind-address 127.0.0.1\n    option glusterd-sockfile $STATE/cli.socket#" \
    /etc/glusterfs/glusterd.vol >"$STATE/glusterd.vol"
  echo "$VOLUME" >"$STATE/volume"
  detached glusterd -f "$STATE/glusterd.vol" -p "$STATE/glusterd.pid" -l "$STATE/glusterd.log" </dev/null >/dev/null 2>&1
  wait_for "glusterd answering on $STATE/cli.socket" cli volume list
  cli volume create "$VOLUME" "$ALIAS:$dir/brick" force >/dev/null
  cli volume start "$VOLUME" >/dev/null
  wait_for "the brick of $VOLUME starting" volume_started
  mount_side "$dir" a
  mount_side "$dir" b
  trap - ERR
  echo "$dir/mnt/a"
  echo "$dir/mnt/b"
}

bounce() {
  local dir=$1 seconds=$2
  STATE="$dir/state"
  VOLUME=$(cat "$STATE/volume")
  cli volume stop "$VOLUME" force >/dev/null
  sleep "$seconds"
  cli volume start "$VOLUME" >/dev/null
  wait_for "the brick of $VOLUME starting again" volume_started
  wait_for "a listing of $dir/mnt/a" ls "$dir/mnt/a"
  wait_for "a listing of $dir/mnt/b" ls "$dir/mnt/b"
}

case "${1:-}" in
  check) check ;;
  up) [ -n "${2:-}" ] || { echo "usage: $0 up DIR" >&2; exit 64; }; up "$(realpath -m "$2")" ;;
  bounce) [ -n "${3:-}" ] || { echo "usage: $0 bounce DIR SECONDS" >&2; exit 64; }; bounce "$(realpath -m "$2")" "$3" ;;
  down) [ -n "${2:-}" ] || { echo "usage: $0 down DIR" >&2; exit 64; }; down "$(realpath -m "$2")" ;;
  *) echo "usage: $0 check | up DIR | bounce DIR SECONDS | down DIR" >&2; exit 64 ;;
esac
