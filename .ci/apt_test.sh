#!/usr/bin/env bash
# Checks .ci/apt.sh's apt_get against a fake apt-get on PATH (no root, no
# real lock): a held lock is waited for, named once, and given up on at the
# deadline; any other failure fails at once with apt's message.
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/apt.sh

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# The fake fails with a held lists lock while $dir/held counts down above
# 0, as "apt-get update" does, then succeeds; "broken" fails otherwise.
cat >"$dir/apt-get" <<'FAKE'
#!/usr/bin/env bash
dir=$(dirname "$0")
echo "$*" >>"$dir/calls"
case " $* " in *" broken "*) echo "E: Unable to locate package broken" >&2; exit 100 ;; esac
n=$(cat "$dir/held")
if [ "$n" -gt 0 ]; then
  echo $((n - 1)) >"$dir/held"
  echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 42 (unattended-upgr)" >&2
  echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
  exit 100
fi
echo "Reading package lists..."
FAKE
chmod +x "$dir/apt-get"
export PATH="$dir:$PATH" LLMRUN_APT_RETRY_EVERY=0.1
sudo=""

fail() { echo "FAIL: $*" >&2; exit 1; }

# Held twice, then free: succeeds after saying once which lock it waits for.
echo 2 >"$dir/held"
: >"$dir/calls"
LLMRUN_APT_LOCK_WAIT=60 apt_get update 2>"$dir/err" || fail "apt_get update with a lock held twice failed: $(cat "$dir/err")"
[ "$(wc -l <"$dir/calls")" = 3 ] || fail "want 3 attempts, got: $(cat "$dir/calls")"
grep -q 'DPkg::Lock::Timeout=' "$dir/calls" || fail "apt-get not asked to wait for dpkg's lock: $(cat "$dir/calls")"
[ "$(grep -c 'waiting up to 60s for the package lock /var/lib/apt/lists/lock. It is held by process 42 (unattended-upgr)' "$dir/err")" = 1 ] ||
  fail "want one message naming the lock and its holder, got: $(cat "$dir/err")"

# Held for good: gives up at the deadline, with apt's message.
echo 1000000 >"$dir/held"
if LLMRUN_APT_LOCK_WAIT=1 apt_get update 2>"$dir/err"; then fail "apt_get succeeded with the lock held"; fi
grep -q 'gave up after 1s waiting for the package lock' "$dir/err" || fail "no give-up message: $(cat "$dir/err")"
grep -q 'E: Could not get lock /var/lib/apt/lists/lock' "$dir/err" || fail "apt's own message not shown: $(cat "$dir/err")"

# Another failure: no wait, apt's message.
echo 0 >"$dir/held"
: >"$dir/calls"
if LLMRUN_APT_LOCK_WAIT=60 apt_get install broken 2>"$dir/err"; then fail "apt_get install broken succeeded"; fi
[ "$(wc -l <"$dir/calls")" = 1 ] || fail "a failure other than the lock was retried: $(cat "$dir/calls")"
grep -q 'Unable to locate package broken' "$dir/err" || fail "apt's message not shown: $(cat "$dir/err")"
if grep -q waiting "$dir/err"; then fail "said it waited for a lock none held: $(cat "$dir/err")"; fi
echo "ok  .ci/apt_test.sh"
