#!/usr/bin/env bash
# A throwaway Samba share on 127.0.0.1, mounted twice through smbnetfs (a FUSE SMB client).
#
#   samba-share.sh check        exit 0 if smbd, smbpasswd, smbnetfs and FUSE are here, else 2 and why
#   samba-share.sh up DIR       DIR/share exported as //127.0.0.1/fc; mounted at DIR/mnt/a and DIR/mnt/b,
#                               where the share is DIR/mnt/{a,b}/127.0.0.1/fc (printed, one a line)
#   samba-share.sh down DIR     unmount both and stop the smbd this script started (by PID); safe twice
#
# smbnetfs reaches the server on port 445 only, so an smbd this script did not start must not be
# listening there: `check`/`up` say so. Must run as root. Exit 2 means "not available here".
set -euo pipefail

WAIT=30
source "$(dirname "${BASH_SOURCE[0]}")/mount-common.sh"

unavailable() { echo "samba-share: Samba unavailable: $*" >&2; exit 2; }

check() {
  [ "$(id -u)" = 0 ] || unavailable "must run as root to start smbd and mount"
  [ -c /dev/fuse ] || unavailable "/dev/fuse is missing"
  local tool
  for tool in smbd smbpasswd smbnetfs fusermount3 mountpoint ss setsid; do
    command -v "$tool" >/dev/null || unavailable "$tool is not installed (apt-get install samba smbnetfs fuse3 iproute2)"
  done
}

down() {
  local dir=$1 state=$1/state
  unmount "$dir/mnt/a"
  unmount "$dir/mnt/b"
  stop_pid_file "$state/smbd.pid"
  # smbd starts samba-dcerpcd on demand; it writes its PID file in our pid directory too.
  stop_pid_file "$state/pid/samba-dcerpcd.pid"
}

smbd_pid_file() { local f; f=$(ls "$1"/pid/smbd*.pid 2>/dev/null | head -1); [ -n "$f" ] && [ -s "$f" ] && echo "$f"; }

share_listed() { ls "$1/127.0.0.1/fc"; }

up() {
  local dir=$1 state=$1/state side sub
  check
  port_taken 445 && unavailable "something already listens on port 445 (an smbd this test did not start?); stop it to run these tests"
  down "$dir"
  mkdir -p "$dir/share" "$dir/mnt/a" "$dir/mnt/b" "$state"
  chmod 700 "$state"
  for sub in private lock state cache pid ncalrpc; do mkdir -p "$state/$sub"; done
  trap 'down "$dir"' ERR
  cat >"$state/smb.conf" <<CONF
[global]
  interfaces = 127.0.0.1
  bind interfaces only = yes
  disable netbios = yes
  smb ports = 445
  server role = standalone server
  map to guest = never
  private dir = $state/private
  lock directory = $state/lock
  state directory = $state/state
  cache directory = $state/cache
  pid directory = $state/pid
  ncalrpc dir = $state/ncalrpc
  passdb backend = tdbsam:$state/private/passdb.tdb
  log file = $state/smbd.log
[fc]
  path = $dir/share
  read only = no
CONF
  printf 'pw\npw\n' | smbpasswd -c "$state/smb.conf" -s -a root >/dev/null
  # setsid: smbd's --no-process-group keeps it in our group otherwise; its PID is the one we stop.
  detached_background setsid smbd --foreground --no-process-group -s "$state/smb.conf" </dev/null >>"$state/smbd.out" 2>&1
  wait_for "smbd listening on 127.0.0.1:445" port_taken 445
  # smbd writes its PID file in our pid directory: that is the process we stop.
  wait_for "smbd's PID file" smbd_pid_file "$state"
  cat "$(smbd_pid_file "$state")" >"$state/smbd.pid"
  for side in a b; do
    mkdir -p "$state/home-$side/.smb"
    printf '[global]\n  client min protocol = SMB2\n  name resolve order = host\n' >"$state/home-$side/.smb/smb.conf"
    printf 'auth "127.0.0.1" "root" "pw"\nhost 127.0.0.1 visible=true\nsmb_query_browsers "false"\n' >"$state/home-$side/.smb/smbnetfs.conf"
    chmod 600 "$state/home-$side/.smb/"*
    HOME="$state/home-$side" detached smbnetfs "$dir/mnt/$side" </dev/null >/dev/null 2>>"$state/smbnetfs-$side.log"
    wait_for "the mount of $dir/mnt/$side" mountpoint -q "$dir/mnt/$side"
    wait_for "the share in $dir/mnt/$side" share_listed "$dir/mnt/$side"
  done
  trap - ERR
  echo "$dir/mnt/a/127.0.0.1/fc"
  echo "$dir/mnt/b/127.0.0.1/fc"
}

case "${1:-}" in
  check) check ;;
  up) [ -n "${2:-}" ] || { echo "usage: $0 up DIR" >&2; exit 64; }; up "$(realpath -m "$2")" ;;
  down) [ -n "${2:-}" ] || { echo "usage: $0 down DIR" >&2; exit 64; }; down "$(realpath -m "$2")" ;;
  *) echo "usage: $0 check | up DIR | down DIR" >&2; exit 64 ;;
esac
