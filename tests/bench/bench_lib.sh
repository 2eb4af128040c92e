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

# bench_nfs_calls MOUNT: NFS calls the client made so far on MOUNT and on
# MOUNT2, MOUNT3, ... (a spread set), all procedures, from
# /proc/self/mountstats.
bench_nfs_calls() {
	awk -v m="$1" '$1 == "device" { inb = ($5 == m || index($5, m) == 1 && substr($5, length(m) + 1) ~ /^[0-9]+$/); po = 0; next }
		inb && /per-op statistics/ { po = 1; next }
		inb && po && $1 ~ /^[A-Z_0-9]+:$/ { s += $2 }
		END { printf "%.0f\n", s }' /proc/self/mountstats
}
