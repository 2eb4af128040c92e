# shellcheck shell=bash
# SPDX-License-Identifier: MIT
#
# This file contains what the guest parts of the NFS benchmarks
# (vm_nfs_bench.sh, vm_conc_syscalls.sh, instr_per_call.sh, vm_rdma_floor.sh)
# share beyond tests/vm/lib.sh.

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

# bench_guest_ticks VAR: the whole guest's CPU time so far, "BUSY ALL" in
# clock ticks into VAR (/proc/stat's cpu line: BUSY is every state but idle
# and iowait, ALL every state, summed over the CPUs); no fork.
bench_guest_ticks() {
	local us ni sy id io irq sirq st
	read -r _ us ni sy id io irq sirq st _ </proc/stat
	printf -v "$1" '%s %s' $((us + ni + sy + irq + sirq + st)) $((us + ni + sy + id + io + irq + sirq + st))
}

# bench_sched VAR TASKDIR...: the scheduler's time of the tasks named by
# their /proc directories (/proc/PID/task/TID), "RUN WAIT" in µs into VAR
# (schedstat: on a CPU, and runnable but waiting on a run queue), or "- -"
# when none of them can be read (no such process); no fork.
bench_sched() {
	local var=$1 t r w run=0 wait=0 n=0
	shift
	for t in "$@"; do
		read -r r w _ <"$t/schedstat" 2>/dev/null || continue
		run=$((run + r)) wait=$((wait + w)) n=$((n + 1))
	done
	if [ "$n" = 0 ]; then
		printf -v "$var" '%s' "- -"
	else
		printf -v "$var" '%s %s' $((run / 1000)) $((wait / 1000))
	fi
}

# bench_ksoftirqd_tasks: the /proc directory of every CPU's ksoftirqd thread,
# one a line (Soft-RoCE's tasklets run there when raised from a process);
# they live as long as the boot, so a script finds them once.
bench_ksoftirqd_tasks() {
	local t c
	for t in /proc/[0-9]*; do
		read -r c <"$t/comm" 2>/dev/null || continue
		case $c in ksoftirqd/*) echo "$t" ;; esac
	done
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

# bench_pin PID...: each process (all threads) on the guest's last CPU, the
# calling shell, and so every workload it starts from now on, on the others;
# says whether the kernel accounts the pinned processes' user and system time
# exactly there (that CPU in nohz_full, e.g. VM_APPEND=nohz_full=1) or by
# which mode each tick found them in.
bench_pin() {
	local last=$(($(getconf _NPROCESSORS_ONLN) - 1)) p nohz how	# not nproc: this shell may be pinned already
	[ "$last" -ge 1 ] || { echo "bench: pinning needs two CPUs" >&2; return 1; }
	for p in "$@"; do
		taskset -a -p -c "$last" "$p" >/dev/null || { echo "bench: taskset $p failed" >&2; return 1; }
	done
	taskset -p -c "0-$((last - 1))" $$ >/dev/null || { echo "bench: taskset of the workloads failed" >&2; return 1; }
	nohz=$(cat /sys/devices/system/cpu/nohz_full 2>/dev/null) || nohz=
	# nohz_full is a CPU list ("1", "1-3,5", "(null)"); is $last in it?
	if awk -v c="$last" -v l="$nohz" 'BEGIN { n = split(l, r, ","); for (i = 1; i <= n; i++) {
		if (split(r[i], b, "-") == 1) b[2] = b[1]; if (r[i] ~ /^[0-9]/ && c >= b[1] + 0 && c <= b[2] + 0) exit 0 }
		exit 1 }'; then
		how="exact (nohz_full $nohz)"
	else
		how="sampled by the tick (boot with VM_APPEND=nohz_full=$last for exact)"
	fi
	echo "  pinned: $* on CPU $last, workloads on 0-$((last - 1)); user / system CPU $how"
}
