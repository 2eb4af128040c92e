#!/bin/bash
# claim: benchmark (not a test): the system calls per forwarded call, by kind, and the context switches per call of HAProxy and of the gateway under concurrent 4 KiB random reads (8 streams), in one guest boot; with the gateway's own doorbell, clock and loop-pass counters
# SPDX-License-Identifier: MIT
#
# Host: tests/vm/run-vm.sh tests/bench/vm_conc_syscalls.sh [CS_SECS=8]
#       [CS_JOBS=8] [CS_DEPTH=4] [CS_NCONNECT=8] [CS_FTRACE=1] [CS_PIN=1]
#
#   fio (CS_JOBS jobs, iodepth CS_DEPTH, 4 KiB randread, O_DIRECT)
#     -> kernel NFS client, vers=3, nconnect=CS_NCONNECT
#        -> HAProxy (mode tcp)            -> nfsd TCP 2049
#        -> rpcrdma-gw (one worker)       -> nfsd RDMA 20049 (Soft-RoCE)
#
# Counts, not times: `perf stat` of each syscall tracepoint on the proxy
# process over CS_SECS of load, divided by the NFS calls the client made
# meanwhile (/proc/self/mountstats).  For the gateway, its metrics over the
# same window: RDMA send doorbells (ibv_post_send calls), precise clock
# reads and loop passes.  Per call too: user and system CPU, voluntary and
# involuntary context switches (/proc, all threads).  CPU µs per call and
# IOPS are one unpaired run each (tests/bench/vm_nfs_bench.sh BENCH_AB pairs).
# CS_FTRACE=1: over a second window of the same load, the proxy's CPU time
# inside each kind of system call (ftrace function_graph on its threads,
# only the syscall entry points traced, time scheduled out excluded), per
# call: where its system time goes.
# CS_PIN=1: the proxy's threads on the guest's last CPU, fio on the others.
# Booted with VM_APPEND=nohz_full=N (N that last CPU), the kernel then
# accounts user and system time exactly at each kernel entry and exit;
# otherwise they split the task's run time by which mode each tick found.
set -u
for a in "$@"; do	# run-vm.sh passes arguments, not the environment
	case $a in CS_*=*) export "${a?}" ;; esac
done
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"
# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"

CS_SECS=${CS_SECS:-8}
CS_JOBS=${CS_JOBS:-8}
CS_DEPTH=${CS_DEPTH:-4}
CS_NCONNECT=${CS_NCONNECT:-8}
CS_FTRACE=${CS_FTRACE:-0}
CS_PIN=${CS_PIN:-0}
PROXY_PORT=20491
W=/tmp/conc
M=/mnt/conc
ADMIN=http://127.0.0.1:9466/metrics
mkdir -p "$W" "$M"

bed_nfsd_up
bed_nfs_client_modules
head -c $((32 << 20)) /dev/urandom >"$BED_EXPORT/f"
bed_haproxy "$PROXY_PORT" "$W" || exit 1
gw_start 20490 "$W" gateway.log_level=info
trap 'rc=$?; kill "$(cat "$W/haproxy.pid")" 2>/dev/null; (exit $rc); gw_stop; bed_on_exit' EXIT

EVENTS=raw_syscalls:sys_enter,context-switches
for c in epoll_wait recvfrom sendto read write writev ioctl clock_gettime; do
	EVENTS=$EVENTS,syscalls:sys_enter_$c
done

load() { # seconds
	fio --name=cs --filename="$M/f" --rw=randread --bs=4k --direct=1 --ioengine=libaio \
		--iodepth="$CS_DEPTH" --numjobs="$CS_JOBS" --runtime="$1" --time_based \
		--group_reporting >"$W/fio.out" 2>&1 || bed_fail "fio"
}
# "utime stime voluntary nonvoluntary" of process $1, summed over its
# threads (each thread's switches are its own); builtins only, no fork.
proc_split() {
	local t line u s k v su=0 ss=0 sv=0 sn=0
	for t in /proc/"$1"/task/*; do
		read -r line <"$t/stat" || continue
		line=${line##*) }
		read -r _ _ _ _ _ _ _ _ _ _ _ u s _ <<<"$line"
		su=$((su + u)) ss=$((ss + s))
		while read -r k v; do
			case $k in
			voluntary_ctxt_switches:) sv=$((sv + v)) ;;
			nonvoluntary_ctxt_switches:) sn=$((sn + v)) ;;
			esac
		done <"$t/status"
	done
	echo "$su $ss $sv $sn"
}
# the sum of metric lines starting with $1 in file $2
metric_sum() { awk -v k="$1" 'index($1, k) == 1 { s += $2 } END { printf "%.0f\n", s }' "$2"; }

TR=/sys/kernel/tracing
SYSCALLS="epoll_wait recvfrom sendto read write writev readv ioctl clock_gettime"
# CPU µs inside each system call of process $1 over a load of $2 seconds,
# per NFS call of mount $M.  sleep-time off: a call's time off the CPU
# (epoll_wait's sleep, a preemption inside) is not counted.
ftrace_split() {
	local pid=$1 secs=$2 c0 c1 f t
	[ -e "$TR/trace" ] || mount -t tracefs nodev "$TR" || bed_fail "tracefs"
	echo 0 >"$TR/tracing_on"
	echo nop >"$TR/current_tracer"
	for f in $SYSCALLS; do echo "__x64_sys_$f"; done >"$TR/set_ftrace_filter"
	for t in /proc/"$pid"/task/*; do echo "${t##*/}"; done >"$TR/set_ftrace_pid"
	echo 16384 >"$TR/buffer_size_kb"
	echo function_graph >"$TR/current_tracer"
	echo 0 >"$TR/options/sleep-time"
	echo 1 >"$TR/options/funcgraph-tail"	# a call that slept closes with its name
	: >"$TR/trace"
	c0=$(bench_nfs_calls "$M")
	echo 1 >"$TR/tracing_on"
	load "$secs"
	echo 0 >"$TR/tracing_on"
	c1=$(bench_nfs_calls "$M")
	[ $((c1 - c0)) -gt 0 ] || bed_fail "no NFS calls in the ftrace window"
	awk -v c=$((c1 - c0)) 'match($0, /__x64_sys_[a-z_0-9]+/) {
			n = substr($0, RSTART + 10, RLENGTH - 10)
			for (i = 1; i < NF; i++) if ($(i + 1) == "us") { k[n]++; us[n] += $i; all += $i; break }
		}
		END {
			printf "  ftrace over %d calls: CPU inside system calls %.0f µs per call\n", c, all / c
			for (n in k) printf "    %-14s %6.3f per call %8.1f µs per call %7.1f µs each\n", n, k[n] / c, us[n] / c, us[n] / k[n]
		}' "$TR/trace"
	echo nop >"$TR/current_tracer"
	: >"$TR/set_ftrace_filter"
	: >"$TR/set_ftrace_pid"
}

side() { # name pid server-address mount-options
	local name=$1 pid=$2 c0 c1 t0 t1 sp p0 p1
	timeout 60 mount -t nfs -o "$4,soft,timeo=100,retrans=2,nconnect=$CS_NCONNECT" \
		"$3:$BED_EXPORT" "$M" || bed_fail "mount through $name"
	[ "$CS_PIN" != 1 ] || bench_pin "$pid" || bed_fail "CS_PIN=1: pinning $name"
	load 2	# warm-up: caches, connections
	[ "$name" = gateway ] && curl -sf "$ADMIN" >"$W/m0"
	bench_cpu_ticks "$pid" t0
	p0=$(proc_split "$pid")
	c0=$(bench_nfs_calls "$M")
	perf stat -x, -e "$EVENTS" -p "$pid" -o "$W/stat" -- sleep "$CS_SECS" &
	sp=$!
	load "$CS_SECS"
	wait "$sp" || bed_fail "perf stat"
	bench_cpu_ticks "$pid" t1
	p1=$(proc_split "$pid")
	c1=$(bench_nfs_calls "$M")
	[ $((c1 - c0)) -gt 0 ] || bed_fail "no NFS calls through $name"
	echo "$name: $((c1 - c0)) NFS calls, $(grep -o 'IOPS=[0-9.k]*' "$W/fio.out"), CPU $(((t1 - t0) * 10000 / (c1 - c0))) µs per call (one unpaired run)"
	awk -F, -v c=$((c1 - c0)) '$1 ~ /^[0-9]+$/ { e = $3; sub(/^syscalls:sys_enter_/, "", e)
		printf "  %-26s %6.3f per call\n", e, $1 / c }' "$W/stat"
	awk -v a="$p0" -v b="$p1" -v c=$((c1 - c0)) 'BEGIN { split(a, x, " "); split(b, y, " ")
		printf "  user / system CPU         %d / %d µs per call\n", (y[1] - x[1]) * 10000 / c, (y[2] - x[2]) * 10000 / c
		printf "  voluntary / involuntary   %.3f / %.3f switches per call\n", (y[3] - x[3]) / c, (y[4] - x[4]) / c }'
	if [ "$name" = gateway ]; then
		curl -sf "$ADMIN" >"$W/m1"
		for k in rpcrdma_gw_rdma_send_doorbells_total \
			'rpcrdma_gw_syscalls_total{worker="0",call="clock_gettime"}' \
			'rpcrdma_gw_syscalls_total{worker="0",call="epoll_wait"}'; do
			awk -v k="$k" -v a="$(metric_sum "$k" "$W/m0")" -v b="$(metric_sum "$k" "$W/m1")" \
				-v c=$((c1 - c0)) 'BEGIN { printf "  metric %s: %.3f per call\n", k, (b - a) / c }'
		done
	fi
	[ "$CS_FTRACE" != 1 ] || ftrace_split "$pid" "$CS_SECS"
	timeout 60 umount "$M" || umount -f -l "$M"
}

step "HAProxy, then the gateway: $CS_JOBS streams, iodepth $CS_DEPTH, ${CS_SECS} s each"
side haproxy "$(cat "$W/haproxy.pid")" "$BED_IP" "vers=3,proto=tcp,port=$PROXY_PORT,nolock"
side gateway "$gw_pid" 127.0.0.1 \
	"vers=3,proto=tcp,port=$gw_port,mountport=$gw_port,mountproto=tcp,nolock"
