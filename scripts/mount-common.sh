# Shared by fuse-mounts.sh, gluster-volume.sh and samba-share.sh (sourced, not run).

# Closes every descriptor but 0-2 in the current (sub)shell.
close_inherited_fds() {
  local fd
  for fd in /proc/$BASHPID/fd/*; do
    fd=${fd##*/}
    if [ "$fd" -gt 2 ]; then eval "exec $fd>&-" 2>/dev/null || true; fi
  done
}

# Runs a daemon with no descriptors but 0-2 from us. Foundation.Process learns
# that its child ended when an inherited socket closes, so a daemon holding
# that socket would make the caller wait for as long as the mount lives.
detached() { ( close_inherited_fds; exec "$@" ); }

# The same, in the background: one subshell, which closes the descriptors and becomes the daemon
# (`detached … &` would leave a bash in between, holding the caller's socket).
detached_background() { ( close_inherited_fds; exec "$@" ) & }

unmount() {
  local mnt=$1
  mountpoint -q "$mnt" 2>/dev/null || return 0
  fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -uz "$mnt" 2>/dev/null || umount -l "$mnt"
}

# Waits up to $WAIT seconds (default 30) for a command to succeed; says what did not happen.
wait_for() {
  local what=$1; shift
  local deadline=$((SECONDS + ${WAIT:-30}))
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { echo "$(basename "$0"): $what did not happen within ${WAIT:-30}s" >&2; return 1; }
    sleep 0.2
  done
}

# Stops the process whose PID the file holds (only that one), waiting up to 10 s before SIGKILL.
stop_pid_file() {
  local file=$1 pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
    kill "$pid" 2>/dev/null || true
    local deadline=$((SECONDS + 10))
    while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -9 "$pid" 2>/dev/null || true; fi
  fi
  rm -f "$file"
}

port_taken() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
