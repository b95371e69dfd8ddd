# Sourced by .ci/run and .ci/apt_test.sh. $sudo is "" as root, else
# "sudo".

# apt_get runs apt-get as root, waiting up to LLMRUN_APT_LOCK_WAIT seconds
# (300) for a package lock another apt or dpkg holds (an unattended
# upgrade, say) rather than failing at once, and saying which lock it waits
# for. apt waits for dpkg's locks itself (DPkg::Lock::Timeout) but not for
# the package lists' lock, which "apt-get update" takes: that failure is
# retried here until the same deadline.
apt_get() {
  local - # set +e below ends with the function
  local wait=${LLMRUN_APT_LOCK_WAIT:-300} said="" log lock status
  local deadline=$((SECONDS + wait))
  log=$(mktemp)
  while true; do
    set +e
    $sudo env DEBIAN_FRONTEND=noninteractive apt-get -q -o DPkg::Lock::Timeout="$((deadline > SECONDS ? deadline - SECONDS : 1))" "$@" 2>&1 |
      awk -v out="$log" -v wait="$wait" '
        /^Waiting for cache lock/ && !said { sub(/^Waiting for cache lock: Could not get lock /, ""); print "waiting up to " wait "s for the package lock " $0 > "/dev/stderr"; said = 1 }
        { print > out }'
    status=${PIPESTATUS[0]}
    [ "$status" = 0 ] && break
    lock=$(grep -m1 -o 'Could not get lock .*' "$log" || true)
    if [ -z "$lock" ] || [ "$SECONDS" -ge "$deadline" ]; then
      if [ -n "$lock" ]; then echo "gave up after ${wait}s waiting for the package lock" >&2; fi
      echo "apt-get $* failed:" >&2
      cat "$log" >&2
      rm -f "$log"
      return 1
    fi
    if [ -z "$said" ]; then
      echo "waiting up to ${wait}s for the package lock ${lock#Could not get lock }" >&2
      said=1
    fi
    sleep "${LLMRUN_APT_RETRY_EVERY:-5}"
  done
  rm -f "$log"
}
