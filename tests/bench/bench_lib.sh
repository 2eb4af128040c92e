# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# This file contains what the guest parts of the NFS benchmarks
# (vm_nfs_bench.sh, instr_per_call.sh) share beyond tests/vm/lib.sh.

# bench_cpu_ticks PID VAR: utime + stime of process PID (all threads) in
# clock ticks (10 ms) into VAR, or "-" when there is no such process; no fork.
bench_cpu_ticks() {
	local line utime stime
	if [ -z "$1" ] || ! read -r line <"/proc/$1/stat" 2>/dev/null; then
		printf -v "$2" '%s' -
		return 0
	fi
	line=${line##*) }	# fields from the state on: utime is the 12th, stime the 13th
	read -r _ _ _ _ _ _ _ _ _ _ _ utime stime _ <<<"$line"
	printf -v "$2" '%s' $((utime + stime))
}
