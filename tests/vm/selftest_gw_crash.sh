#!/bin/bash
# claim: lib.sh's gateway helpers catch a crash: a gateway killed by SIGSEGV makes gw_alive and gw_stop fail, naming SIGSEGV and leaving a core dump in the run folder, while a healthy gateway stops with gw_stop returning 0
# (a self-test of tests/vm/lib.sh, not a t_*.sh scenario: run it by hand,
# tests/vm/run-vm.sh tests/vm/selftest_gw_crash.sh)
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/lib.sh"

out=/tmp/selftest-gw
# The core dump (~100 MB over 9p) takes a while: until it is written the
# process still runs, and gw_alive cannot tell.
wait_dead() {
	local i
	for ((i = 0; i < 300; i++)); do
		gw_running || return 0
		sleep 0.2
	done
	bed_fail "the gateway still runs 60 s after SIGSEGV"
}
mkdir -p "$out/a" "$out/b"
bed_nfsd_up

step "a gateway killed by SIGSEGV"
gw_start 20497 "$out/a"
pid=$gw_pid
kill -SEGV "$pid"
wait_dead
rc=0
gw_alive 2>"$out/alive.err" || rc=$?
sed 's/^/  gw_alive: /' "$out/alive.err"
assert_eq 1 "$rc" "gw_alive status after SIGSEGV"
assert_grep 'killed by signal 11 (SIGSEGV)' "$out/alive.err"
assert_eq "" "$gw_pid" "gw_pid after the crash was reported"
ls /run/vm/core.rpcrdma-gw.* >/dev/null 2>&1 || bed_fail "no core dump in /run/vm"
BED_FAIL_SAID=

step "the same, noticed by gw_stop"
gw_start 20497 "$out/a"
kill -SEGV "$gw_pid"
wait_dead
rc=0
gw_stop 2>"$out/stop.err" || rc=$?
sed 's/^/  gw_stop: /' "$out/stop.err"
assert_eq 1 "$rc" "gw_stop status after SIGSEGV"
assert_grep 'died before it was asked to stop: killed by signal 11 (SIGSEGV)' "$out/stop.err"
BED_FAIL_SAID=

step "a healthy gateway: gw_alive and gw_stop return 0"
gw_start 20498 "$out/b"
gw_alive
gw_stop
assert_grep 'signal 15: shutting down' "$out/b/gw.log"
rm -f /run/vm/core.rpcrdma-gw.*
