#!/bin/bash
# Runs the test tiers and ends with one line: `check: N passed, N failed`.
#   tests/check.sh all|layout|unit|fuzz|vm|pkg
# Unit tests count per cmocka case (TAP output); each fuzz target and each
# VM scenario counts as one (a scenario run again on the second reference
# kernel as NAME@6.12).  A tier that cannot run says so loudly; with
# CI=true a missing VM tier (or 6.12 kernel) is a failure, never a skip.
set -u
# Run from make's recipe: the package build below starts make afresh, not
# as a job of ours (our jobserver's descriptors are not passed on).
unset MAKEFLAGS MFLAGS MAKELEVEL
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
FUZZ_BUILD=${FUZZ_BUILD:-build-fuzz}
FUZZ_CHECK_SECONDS=${FUZZ_CHECK_SECONDS:-5}
FUZZ_RUNS=${FUZZ_RUNS:--1}	# -1: no limit (libFuzzer's default)
LOGDIR=$BUILD/test-logs
mkdir -p "$LOGDIR"
passed=0 failed=0 skipped=0
failures=()

fail() { failed=$((failed + 1)); failures+=("$1"); echo "FAIL: $1"; }

run_unit() {
	local bin out np nf ns
	for bin in "$BUILD"/tests/unit/test_*; do
		[ -x "$bin" ] || continue
		case "$bin" in *.o|*.d) continue;; esac
		out="$LOGDIR/unit-$(basename "$bin").log"
		# a hung test is a failure, not a hung check
		CMOCKA_MESSAGE_OUTPUT=TAP timeout -k 10 "${UNIT_TIMEOUT:-600}" "$bin" >"$out" 2>&1
		local rc=$?
		# cmocka's TAP says "not ok N # SKIP name" for a skipped case
		np=$(grep '^ok ' "$out" | grep -vc '# *SKIP')
		nf=$(grep '^not ok ' "$out" | grep -vc '# *SKIP')
		ns=$(grep -E '^(not )?ok ' "$out" | grep -c '# *SKIP')
		passed=$((passed + np))
		if [ "$ns" -gt 0 ]; then	# a skipped case is said loudly, never counted as passed
			skipped=$((skipped + ns))
			echo "!!! SKIPPED: unit $(basename "$bin"): $ns cases (log $out)"
		fi
		if [ "$nf" -gt 0 ] || [ "$rc" -ne 0 ] || [ "$np" -eq 0 ]; then
			[ "$nf" -eq 0 ] && nf=1
			failed=$((failed + nf))
			failures+=("unit $(basename "$bin") (rc=$rc, log $out)")
			echo "FAIL: unit $(basename "$bin"): $nf failed, rc=$rc"
			grep -E '^not ok|ERROR|error:|runtime error|Sanitizer' "$out" | head -20
		else
			echo "ok:   unit $(basename "$bin"): $np cases"
		fi
	done
}

run_fuzz() {
	local bin name corpus out pids=() names=()
	local n=0
	for bin in "$FUZZ_BUILD"/fuzz_*; do
		[ -x "$bin" ] || continue
		name=$(basename "$bin")
		corpus=tests/fuzz/corpus/${name#fuzz_}
		mkdir -p "$LOGDIR/fuzz-work/$name"
		out="$LOGDIR/fuzz-$name.log"
		# Work corpus in the build tree; the seed corpus in git stays read-only.
		"$bin" -max_total_time="$FUZZ_CHECK_SECONDS" -runs="$FUZZ_RUNS" -timeout=10 -rss_limit_mb=2048 \
			-print_final_stats=1 "$LOGDIR/fuzz-work/$name" "$corpus" >"$out" 2>&1 &
		pids+=($!); names+=("$name")
		n=$((n + 1))
		# Two at a time: this is a 2-core machine.
		if [ $((n % 2)) -eq 0 ]; then wait_fuzz; fi
	done
	wait_fuzz
}
fuzz_stat() {	# STAT NAME: a libFuzzer final statistic of target NAME
	grep -o "stat::$1: *[0-9]*" "$LOGDIR/fuzz-$2.log" | grep -o '[0-9]*$'
}
wait_fuzz() {
	local i
	for i in "${!pids[@]}"; do
		if wait "${pids[$i]}"; then
			passed=$((passed + 1))
			echo "ok:   fuzz ${names[$i]} ($(fuzz_stat number_of_executed_units "${names[$i]}") execs," \
			     "$(fuzz_stat average_exec_per_sec "${names[$i]}")/s)"
		else
			fail "fuzz ${names[$i]} (log $LOGDIR/fuzz-${names[$i]}.log)"
			grep -E 'ERROR|SUMMARY|runtime error' "$LOGDIR/fuzz-${names[$i]}.log" | head -10
		fi
	done
	pids=(); names=()
}

# The gateway's core end-to-end scenarios run a second time on the second
# reference peer, Debian's 6.12 kernel (`make deps` fetches it), each
# counted as its own test NAME@6.12: v3/4.0/4.1/4.2 reads and writes over
# RDMA (t_61), v4.1/4.2 callbacks (6.12's nfsd queues no blocked LOCK: t_69 shows it with
# a direct control and requires CB_RECALL), reconnect under the backend,
# Kerberos (krb5p works on 6.12's own client and server only), the credit
# grant under 256 concurrent calls (t_53 checks the calls sent against the
# grant: 6.12's replies overtake Send completions, docs/protocol.md).  Not in
# the list, for time: t_62, t_76 and the whole v4.0 file-operation tree
# t_64c (108 s; all pass on 6.12).
# VM_SECOND_SCENARIOS="..." runs others.
VM_SECOND_KERNEL=6.12
VM_SECOND_SCENARIOS=${VM_SECOND_SCENARIOS:-t_61_rdma_gateway t_69_gw_callbacks t_54_reconnect t_74_gw_krb5 t_53_credits}
# The core end-to-end scenarios once more with `workers = 2` (lib.sh's
# gw_conf adds it), each counted as NAME@w2: v3/4.1/4.2 over RDMA, and the
# metrics summed over the workers, an NLM grant that lands on another
# worker than its client's, and a client's SM_NOTIFY datagram handed from
# worker 0's UDP socket to its worker (t_77), NFSv4.1/4.2 callbacks relayed
# by both workers (t_69: its 4.1 and 4.2 mounts land on two).  Their mounts come from one
# loopback address per worker in turn (lib.sh, gw_mount), and
# gw_spread_check fails unless every worker forwarded calls.  The hostile
# server (t_78) too: each worker opens its own RDMA connections to
# tests/peer/rpcrdma-peer, which answers them all; its clients come from
# 127.0.0.1, so one worker carries them and the other's connections idle.
# VM_WORKERS_SCENARIOS="..." runs others.
VM_WORKERS_SCENARIOS=${VM_WORKERS_SCENARIOS:-t_61_rdma_gateway t_70_metrics t_77_gw_nlm_clients t_80_gw_nlm_granted t_81_gw_nlm_server_reboot t_69_gw_callbacks t_78_gw_hostile_server}

# VM_LANES=N runs N guests side by side (default 1).  On the 2-core
# machine two lanes saved next to nothing: each guest ran 2-2.5x slower
# (the VM tier took 49 min against 37 one at a time, with another
# checkout's guests beside it for its last 15 min; one guest's boot hung in
# the kernel's init under that load).  Where cores are to spare,
# the longest runs start first, and the runs in VM_ALONE (they compare
# timings within one guest: t_78b a stat loop under attack against the
# same loop quiet, t_76 a recall against a direct mount's) run last, one at
# a time, so that the other lane's load cannot change between their two
# measurements.
VM_LANES=${VM_LANES:-1}
VM_ALONE=${VM_ALONE:-t_78b_gw_hostile_client t_76_gw_deleg40}
# Started first (the longest runs, as last measured), the rest in order.
VM_FIRST="t_64_gw_fileops t_74_gw_krb5@6.12 t_69_gw_callbacks@6.12 t_74_gw_krb5
t_64d_gw_fileops_v42 t_64c_gw_fileops_v40 t_64b_gw_fileops_v3 t_67_gw_faults"

# vm_start SCRIPT [KERNEL] [WORKERS]: starts one guest run in the background
# (NAME, NAME@6.12, NAME@w2), counted as one test when vm_reap collects it.
# VM_LOCK=FILE: each guest run holds flock FILE (several checkouts on one
# machine then take turns; the time printed is the run's own).
declare -A vm_running=()
vm_start() {
	local t=$1 kernel=${2:-} workers=${3:-} name
	name=$(vm_job_name "$t:$kernel:$workers")
	(
		[ -z "${VM_LOCK:-}" ] || { exec 9>>"$VM_LOCK"; flock 9; }
		start=$(date +%s)
		BUILD=$BUILD VM_KERNEL=${kernel:-${VM_KERNEL:-}} GW_WORKERS=$workers \
			tests/vm/run-vm.sh "$t" >"$LOGDIR/vm-$name.log" 2>&1
		echo "$? $(( $(date +%s) - start ))" >"$LOGDIR/vm-$name.rc"
	) &
	vm_running[$!]=$name
}
# Waits for one guest run to end and counts it.
vm_reap() {
	local pid name rc secs
	wait -n -p pid
	name=${vm_running[$pid]}
	unset "vm_running[$pid]"
	read -r rc secs <"$LOGDIR/vm-$name.rc" || rc=255 secs=?
	if [ "$rc" = 0 ]; then
		passed=$((passed + 1))
		echo "ok:   vm $name ($secs s)"
		grep -h 'boot hung\|boot failed' "$LOGDIR/vm-$name.log" | sed 's/^/    note: /'
	else
		fail "vm $name (rc=$rc, log $LOGDIR/vm-$name.log)"
		tail -25 "$LOGDIR/vm-$name.log" | sed 's/^/    /'
	fi
}
# vm_lanes JOB...: each JOB is SCRIPT:KERNEL:WORKERS; runs them VM_LANES at
# a time, VM_FIRST first and VM_ALONE alone at the end.
vm_lanes() {
	local j n first=() rest=() alone=() f
	for j in "$@"; do
		n=$(vm_job_name "$j")
		if [[ " $VM_ALONE " == *" $n "* ]]; then alone+=("$j")
		elif [[ " $(echo $VM_FIRST) " == *" $n "* ]]; then first+=("$j")
		else rest+=("$j"); fi
	done
	# VM_FIRST's own order among the first runs.
	for f in $VM_FIRST; do
		for j in "${first[@]}"; do
			[ "$(vm_job_name "$j")" = "$f" ] && vm_lane_run "$VM_LANES" "$j"
		done
	done
	for j in "${rest[@]}"; do vm_lane_run "$VM_LANES" "$j"; done
	for j in "${alone[@]}"; do vm_lane_run 1 "$j"; done
	while [ ${#vm_running[@]} -gt 0 ]; do vm_reap; done
}
vm_job_name() {	# SCRIPT:KERNEL:WORKERS -> NAME[@KERNEL][@wWORKERS]
	local t k w
	IFS=: read -r t k w <<<"$1"
	echo "$(basename "$t" .sh)${k:+@$k}${w:+@w$w}"
}
vm_lane_run() {	# LANES JOB: waits for a free lane, then starts JOB
	local t k w
	while [ ${#vm_running[@]} -ge "$1" ]; do vm_reap; done
	IFS=: read -r t k w <<<"$2"
	vm_start "$t" "$k" "$w"
}

run_vm() {
	local why t start rc jobs=()
	if ! why=$(tests/vm/run-vm.sh --probe 2>&1); then
		if [ "${CI:-}" = true ]; then
			fail "VM tier cannot run (CI=true makes this mandatory): $why"
		else
			echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
			echo "!!! SKIPPED: VM tier cannot run here: $why"
			echo "!!! Run 'make deps' (as root) to install qemu and the kernel."
			echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
			skipped=$((skipped + 1))
		fi
		return
	fi
	# Meta test first: a scenario that fails in the guest must fail on the
	# host, or every "ok" below would mean nothing.  selftest_fail.sh exits
	# 3; run-vm.sh hands that status back (any other non-zero status means
	# the guest did not even run it, which proves nothing).  The same boot
	# shows that VM_APPEND reaches the guest kernel's parameters.
	start=$(date +%s)
	BUILD=$BUILD VM_APPEND=rpcrdma_gw.selftest=1 tests/vm/run-vm.sh tests/vm/selftest_fail.sh >"$LOGDIR/vm-selftest_fail.log" 2>&1
	rc=$?
	if [ "$rc" -eq 3 ] && grep -q 'kernel parameters: .* rpcrdma_gw\.selftest=1' "$LOGDIR/vm-selftest_fail.log"; then
		passed=$((passed + 1))
		echo "ok:   vm runner propagates failure and VM_APPEND ($(( $(date +%s) - start )) s)"
	else
		fail "vm runner propagates failure and VM_APPEND: selftest_fail.sh exits 3 in the guest and prints the kernel parameters, with rpcrdma_gw.selftest=1; run-vm.sh returned $rc (log $LOGDIR/vm-selftest_fail.log)"
		tail -25 "$LOGDIR/vm-selftest_fail.log" | sed 's/^/    /'
	fi
	# A guest kernel that hangs before stage 2 is killed after
	# VM_BOOT_TIMEOUT and booted again, VM_BOOT_RETRIES times, then fails:
	# here no boot can be that fast, so both boots count as hung.
	start=$(date +%s)
	log=$LOGDIR/vm-selftest_boot_hung.log
	BUILD=$BUILD VM_BOOT_TIMEOUT=1 VM_BOOT_RETRIES=1 tests/vm/run-vm.sh tests/vm/selftest_fail.sh >"$log" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q 'booting again (retry 1 of 1)' "$log" && grep -q 'FAILED: boot hung' "$log"; then
		passed=$((passed + 1))
		echo "ok:   vm runner retries a hung boot once, then fails ($(( $(date +%s) - start )) s)"
	else
		fail "vm runner retries a hung boot once, then fails: run-vm.sh returned $rc (log $log)"
		tail -25 "$log" | sed 's/^/    /'
	fi
	# A guest kernel that panics before stage 2 (here: no init to run, so
	# it cannot mount a root) is booted again the same way, then fails.
	start=$(date +%s)
	log=$LOGDIR/vm-selftest_boot_ended.log
	BUILD=$BUILD VM_BOOT_RETRIES=1 VM_APPEND=rdinit=/no-such-init tests/vm/run-vm.sh tests/vm/selftest_fail.sh >"$log" 2>&1
	rc=$?
	if [ "$rc" -eq 1 ] && grep -q 'boot failed: .*booting again (retry 1 of 1)' "$log" &&
		grep -q 'FAILED: boot failed' "$log"; then
		passed=$((passed + 1))
		echo "ok:   vm runner retries a boot that panics before stage 2 once, then fails ($(( $(date +%s) - start )) s)"
	else
		fail "vm runner retries a boot that panics before stage 2 once, then fails: run-vm.sh returned $rc (log $log)"
		tail -25 "$log" | sed 's/^/    /'
	fi
	for t in tests/vm/t_*.sh; do
		[ -e "$t" ] && jobs+=("$t::")
	done
	for t in $VM_WORKERS_SCENARIOS; do
		jobs+=("tests/vm/$t.sh::2")
	done
	vm_second_probe && for t in $VM_SECOND_SCENARIOS; do
		jobs+=("tests/vm/$t.sh:$VM_SECOND_KERNEL:")
	done
	vm_lanes "${jobs[@]}"
}

# The second kernel: missing is a failure with CI=true, else one loud skip.
vm_second_probe() {
	local why k=$VM_SECOND_KERNEL
	why=$(VM_KERNEL=$k tests/vm/run-vm.sh --probe 2>&1) && return 0
	if [ "${CI:-}" = true ]; then
		fail "vm @$k cannot run (CI=true makes it mandatory): $why; skipped: $VM_SECOND_SCENARIOS"
	else
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
		echo "!!! SKIPPED: vm @$k ($VM_SECOND_SCENARIOS): $why"
		echo "!!! Run 'make deps' to fetch the $k kernel."
		echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
		skipped=$((skipped + 1))
	fi
	return 1
}

# Structure of the production tree (tests/layout/layout.py): module arrows
# one way, sizes, no dead export, one struct per member prefix and each in
# docs/naming.md, the architecture page's arrows current;
# docs against code (tests/layout/docs_code.py): config keys, rpcrdma-gwctl,
# the README's install section, the unit's credentials, the daemon's options
# and the FACTS; docs/operations.md's table of contents (docs_toc.py).
run_layout() {
	local c s out
	for c in includes sizes exports members naming doc docs_code:keys docs_code:gwctl docs_code:readme docs_code:creds docs_code:daemon docs_toc:check; do
		s=layout
		case $c in *:*) s=${c%%:*}; c=${c#*:} ;; esac
		out="$LOGDIR/layout-$c.log"
		if python3 "tests/layout/$s.py" "$c" >"$out" 2>&1; then
			passed=$((passed + 1)); echo "ok:   layout $(tail -1 "$out")"
		else
			fail "layout $c (log $out)"
			head -15 "$out" | sed 's/^/    /'
		fi
	done
}

# $1 = nocheck: the unit tier ran in this same check, so the package build
# (check-deb) does not run it again (DEB_NOCHECK; about 2 of its 4 minutes).
run_pkg() {
	local t name start nocheck=${1:-}
	for t in tests/pkg/check-*.sh; do
		[ -e "$t" ] || continue
		name=$(basename "$t" .sh)
		start=$(date +%s)
		BUILD=$BUILD DEB_NOCHECK=${nocheck:+1} "$t" >"$LOGDIR/pkg-$name.out" 2>&1
		case $? in
		0) passed=$((passed + 1)); echo "ok:   pkg $name ($(( $(date +%s) - start )) s)" ;;
		77)	# a tool is missing: said loudly, never counted as passed
			skipped=$((skipped + 1))
			echo "!!! SKIPPED: pkg $name: $(grep -m1 'SKIPPED' "$LOGDIR/pkg-$name.out") (log $LOGDIR/pkg-$name.out)" ;;
		*)
			fail "pkg $name (log $LOGDIR/pkg-$name.out)"
			tail -15 "$LOGDIR/pkg-$name.out" | sed 's/^/    /' ;;
		esac
	done
}

case "${1:-all}" in
unit) run_unit ;;
fuzz) run_fuzz ;;
vm) run_vm ;;
pkg) run_pkg ;;
layout) run_layout ;;
all) run_layout; run_unit; run_pkg nocheck; run_fuzz; run_vm ;;
*) echo "usage: $0 all|layout|unit|fuzz|vm|pkg" >&2; exit 2 ;;
esac

if [ ${#failures[@]} -gt 0 ]; then
	echo "failures:"
	printf '  %s\n' "${failures[@]}"
fi
if [ "$skipped" -gt 0 ]; then
	echo "check: $passed passed, $failed failed, $skipped skipped"
else
	echo "check: $passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
