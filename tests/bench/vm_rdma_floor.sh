#!/bin/bash
# claim: benchmark (not a test): what one RPC over Soft-RoCE costs a process with no TCP side at all (rpcrdma-call, sequential NULLs to nfsd) against what HAProxy and the gateway spend per forwarded GETATTR, user and system time apart, in one guest boot
# SPDX-License-Identifier: MIT
#
# Host: tests/vm/run-vm.sh tests/bench/vm_rdma_floor.sh [FL_N=calls] [FL_ROUNDS=n]
#       [FL_TASKS=1 [FL_SWITCH=K]] [FL_RT=1] [FL_PERF=1|sched]
#
# The question: can any user-space work make the gateway's CPU per small call
# reach HAProxy's on this bed?  Soft-RoCE does the adapter's work in the
# kernel, much of it inside the system calls of the process that posts
# (the Send doorbell runs the requester and, over the loopback, the peer's
# responder).  rpcrdma-call is the gateway's own RDMA transport with nothing
# else: its CPU per NULL is the RDMA leg's cost to the process that drives
# it, and its system time per call is the part no user-space change removes.
# Each round: the tool (FL_N NULLs, less the same tool's run of 1 NULL for
# setup), then FL_N stat() on a noac mount through HAProxy and through the
# gateway; CPU from /proc/PID/stat, calls from the client's mountstats.
# FL_TASKS=1: also every task's time on a CPU around each stat() loop,
# with direct RDMA and direct TCP mounts as two more sides, summed by who
# ran (client, proxy, nfsd, kworkers, ksoftirqd): where each path's CPU
# per call goes besides the proxy's own.  FL_SWITCH=K (with FL_TASKS=1):
# one more side, direct RDMA with K round trips to another process after
# each stat(), nfsd's work unchanged: what switching between user address
# spaces alone does to the kernel's CPU per call on this bed.
set -u
for a in "$@"; do	# run-vm.sh passes arguments, not the environment
	case $a in FL_*=*) export "${a?}" ;; esac
done
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"
# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"

FL_N=${FL_N:-3000}
FL_ROUNDS=${FL_ROUNDS:-3}
TOOL=$BUILD/tools/rpcrdma-call
PROXY_PORT=20491
W=/tmp/floor
M=/mnt/floor
mkdir -p "$W" "$M"
HZ=$(getconf CLK_TCK)

bed_nfsd_up
bed_nfs_client_modules
echo x >"$BED_EXPORT/small"
bed_haproxy "$PROXY_PORT" "$W" || exit 1
# FL_RT=1: both proxies run SCHED_RR at priority 1 (the gateway by its
# realtime_priority, HAProxy by chrt), so that no kernel thread (ksoftirqd
# above all) preempts them: what their preemptions cost them.
if [ "${FL_RT:-0}" = 1 ]; then
	gw_start 20490 "$W" gateway.log_level=info gateway.realtime_priority=1
	chrt -a -r -p 1 "$(cat "$W/haproxy.pid")" || bed_fail "chrt haproxy"
else
	gw_start 20490 "$W" gateway.log_level=info
fi
trap 'rc=$?; kill "$(cat "$W/haproxy.pid")" 2>/dev/null; (exit $rc); gw_stop; bed_on_exit' EXIT

ticks() { awk '{ print $14, $15 }' "/proc/$1/stat"; }	# utime stime, all threads
switches() { # context switches of all of PID's threads: "voluntary involuntary"
	cat /proc/"$1"/task/*/status | awk '/^voluntary_ctxt_switches/ { v += $2 }
		/^nonvoluntary_ctxt_switches/ { n += $2 } END { print v, n }'
}
per_call_switches() { # voluntary involuntary calls
	awk -v v="$1" -v n="$2" -v c="$3" 'BEGIN { printf "%.2f voluntary + %.2f involuntary context switches", v / c, n / c }'
}
# tool N -> "user_seconds sys_seconds real_seconds voluntary involuntary" of
# one rpcrdma-call run (context switches from GNU time)
tool() {
	local TIMEFORMAT='%U %S %R' t
	t=$({ time /usr/bin/time -f '%w %c' -o "$W/tool.sw" "$TOOL" "$BED_IP" "$BED_RDMA_PORT" null "$1" \
		>"$W/tool.out" 2>&1; } 2>&1) ||
		{ sed 's/^/  rpcrdma-call: /' "$W/tool.out" >&2; bed_fail "rpcrdma-call null $1"; }
	echo "$t $(tail -1 "$W/tool.sw")"
}
floor_round() { # round
	local u1 s1 r1 v1 i1 un sn rn vn in
	read -r u1 s1 r1 v1 i1 <<<"$(tool 1)"
	read -r un sn rn vn in <<<"$(tool "$FL_N")"
	echo "  rdma-null: per call $(per_call_switches $((vn - v1)) $((in - i1)) $((FL_N - 1)))" >&2
	awk -v r="$1" -v n="$FL_N" -v u1="$u1" -v s1="$s1" -v r1="$r1" -v un="$un" -v sn="$sn" -v rn="$rn" 'BEGIN {
		c = n - 1; printf "FLOOR %d rdma-null %.0f %.0f %d %.0f\n", r,
			(un - u1) * 1e6 / c, (sn - s1) * 1e6 / c, c, c / (rn - r1) }'
}
# tasks_snap FILE [PID]: "TID NS CLASS" of every task now (NS: its time on
# a CPU, schedstat; the guest has no IRQ time accounting, so interrupts and
# softirqs count to the task they interrupted); PID's threads are "proxy".
tasks_snap() {
	local t c ns cls
	for t in /proc/[0-9]*/task/[0-9]*; do
		read -r ns _ <"$t/schedstat" 2>/dev/null || continue
		read -r c <"$t/comm" 2>/dev/null || continue
		case $c in
		nfsd) cls=nfsd ;;
		kworker/*) cls=kworker ;;
		ksoftirqd/*) cls=ksoftirqd ;;
		*) cls="other:${c// /_}" ;;
		esac
		case $t in "/proc/${2:-x}/task/"*) cls=proxy ;; esac
		echo "${t##*/} $ns $cls"
	done >"$1"
}
# tasks_rows ROUND SIDE CALLS SECONDS BUSY_TICKS: "TASKS" lines, µs per call
# of each class between $W/tasks.0 and $W/tasks.1 (the client: the loop's
# own CPU, $W/client.us; its children's time counts there too), the guest's
# busy time (/proc/stat) and the wall time
tasks_rows() {
	awk -v r="$1" -v s="$2" -v c="$3" -v dt="$4" -v busy="$5" -v hz="$HZ" -v cl="$(cat "$W/client.us")" '
		BEGIN { t["client"] = cl * 1e3; all = cl * 1e3 }
		NR == FNR { b[$1] = $2; next }
		{ d = $2 - ($1 in b ? b[$1] : 0); k = $3; if (k ~ /^other:/) { o[substr(k, 7)] += d; k = "other" }
		  t[k] += d; all += d }
		END { if (c <= 0) exit
			for (k in t) printf "TASKS %d %s %s %.0f\n", r, s, k, t[k] / 1e3 / c
			printf "TASKS %d %s tasks %.0f\n", r, s, all / 1e3 / c
			printf "TASKS %d %s busy %.0f\n", r, s, busy / hz * 1e6 / c
			printf "TASKS %d %s wall %.0f\n", r, s, dt * 1e6 / c
			for (k in o) if (o[k] / 1e3 / c >= 5) printf "OTHER %d %s %s %.0f\n", r, s, k, o[k] / 1e3 / c }' \
		"$W/tasks.0" "$W/tasks.1"
}

proxy_round() { # round side pid server-address mount-options [K] (pid "": a direct mount)
	local r=$1 side=$2 pid=$3 u0 s0 u1 s1 c0 c1 t0 t1 v0 n0 v1 n1 g0 g1 dt
	timeout 60 mount -t nfs -o "$5,soft,timeo=100,retrans=2,noac" "$4:$BED_EXPORT" "$M" ||
		bed_fail "mount through $side"
	stat "$M/small" >/dev/null
	[ "${FL_TASKS:-0}" = 1 ] && tasks_snap "$W/tasks.0" "$pid"
	bench_guest_ticks g0
	[ -n "$pid" ] && read -r u0 s0 <<<"$(ticks "$pid")"
	c0=$(bench_nfs_calls "$M"); t0=$(bed_now)
	[ -n "$pid" ] && read -r v0 n0 <<<"$(switches "$pid")"
	perf_on "$r" "$side" "$pid"
	# The loop's own CPU goes to $W/client.us (it exits before the second
	# snapshot); with K > 0 it also bounces a byte off a child process K
	# times after each stat(): K * 2 switches between user processes.
	perl -e 'my ($f, $n, $k, $out) = @ARGV; my ($r1, $w1, $r2, $w2, $b, $pid);
		if ($k) { pipe($r1, $w1) or die; pipe($r2, $w2) or die; $pid = fork() // die;
			if (!$pid) { close $w1; close $r2; while (sysread($r1, $b, 1)) { syswrite($w2, $b, 1) } exit 0 }
			close $r1; close $w2 }
		for (1 .. $n) { stat($f) or die "$f: $!"; for (1 .. $k) { syswrite($w1, "x", 1); sysread($r2, $b, 1) } }
		if ($k) { close $w1; waitpid($pid, 0) }
		my @t = times; open(my $o, ">", $out) or die; printf $o "%.0f\n", ($t[0] + $t[1] + $t[2] + $t[3]) * 1e6' \
		"$M/small" "$FL_N" "${6:-0}" "$W/client.us"
	c1=$(bench_nfs_calls "$M"); t1=$(bed_now)
	bench_guest_ticks g1
	[ -n "$pid" ] && read -r u1 s1 <<<"$(ticks "$pid")"
	[ -n "$pid" ] && read -r v1 n1 <<<"$(switches "$pid")"
	[ "${FL_TASKS:-0}" = 1 ] && tasks_snap "$W/tasks.1" "$pid"
	perf_off
	timeout 60 umount "$M" || umount -f -l "$M"
	dt=$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')
	[ "${FL_TASKS:-0}" = 1 ] && tasks_rows "$r" "$side" $((c1 - c0)) "$dt" $((${g1%% *} - ${g0%% *}))
	[ -n "$pid" ] || return 0
	echo "  $side: $(find /proc/"$pid"/task -mindepth 1 -maxdepth 1 | wc -l) threads, per call $(per_call_switches $((v1 - v0)) $((n1 - n0)) $((c1 - c0)))" >&2
	awk -v r="$r" -v s="$side" -v hz="$HZ" -v du=$((u1 - u0)) -v ds=$((s1 - s0)) -v c=$((c1 - c0)) \
		-v dt="$dt" 'BEGIN {
		if (c > 0) printf "FLOOR %d %s %.0f %.0f %d %.0f\n", r, s, du / hz * 1e6 / c, ds / hz * 1e6 / c, c, c / dt }'
}

# FL_PERF=1: a profile of the proxy (cpu-clock samples, call graphs) in round
# 1, the sample share of each system call's whole path printed per proxy.
perf_pid=
# FL_PERF=sched: the proxy's context switches instead (who takes its CPU
# when it is preempted, and in which system call).
perf_on() { # round side pid
	[ "${FL_PERF:-0}" != 0 ] && [ "$1" = 1 ] || return 0
	if [ "$FL_PERF" = sched ]; then
		perf record -q -g -e sched:sched_switch -p "$3" -o "$W/sched.$2" >/dev/null 2>&1 &
	else
		perf record -q -g -e cpu-clock -p "$3" -o "$W/perf.$2" >/dev/null 2>&1 &
	fi
	perf_pid=$!
	sleep 1
}
perf_off() {
	[ -n "$perf_pid" ] || return 0
	kill -INT "$perf_pid"; wait "$perf_pid" 2>/dev/null || true; perf_pid=
}
sched_show() { # side: its preemptions (prev_state R) by next task and by system call
	[ -f "$W/sched.$1" ] || return 0
	echo "  $1: preemptions (switched out runnable): the task that ran next, and the system call"
	perf script -i "$W/sched.$1" -F trace,ip,sym 2>/dev/null | awk '
		function flush(   i, sc) {
			if (!pre) return
			sc = "?"; for (i = 1; i <= ns; i++) if (st[i] ~ /^(__x64_sys_|ksys_|__sys_|sock_write_iter|ib_uverbs_write|do_epoll_wait)/) { sc = st[i]; break }
			by[nx " in " sc]++; tot++; pre = 0
		}
		/^\t/ { ns++; st[ns] = $2; next }
		{ flush(); ns = 0; pre = 0
		  if (match($0, /prev_state=[A-Z+]+/) && substr($0, RSTART + 11, 1) == "R") {
			pre = 1; nx = $0; sub(/.*next_comm=/, "", nx); sub(/ next_pid=.*/, "", nx); sub(/:[0-9]+$/, "", nx); sub(/[0-9]+$/, "N", nx) } }
		END { flush(); for (k in by) printf "    %5.1f %%  %s\n", 100 * by[k] / tot, k | "sort -rn | head -12"; close("sort -rn | head -12"); printf "    (%d preemptions)\n", tot }'
}
perf_show() { # side
	sched_show "$1"
	[ -f "$W/perf.$1" ] || return 0
	echo "  $1: whole paths (children), top entries"
	perf report -i "$W/perf.$1" --stdio --children --sort sym -g none 2>/dev/null |
		grep -E '^ +[0-9]' | sed -n 1,45p | sed 's/^/    /'
	echo "  $1: per system call path (samples with it on the stack): share, its context-switch share, top leaves"
	perf script -i "$W/perf.$1" -F comm,ip,sym 2>/dev/null | awk '
		function flush(   i, j, k, leaf) {
			if (!ns) return
			tot++
			for (k in want) for (i = 1; i <= ns; i++) if (st[i] == k) {
				hit[k]++; leaf = st[1]
				for (j = 1; j <= ns; j++) if (st[j] == "finish_task_switch.isra.0") { sw[k]++; break }
				lf[k, leaf]++; break
			}
			ns = 0
		}
		BEGIN { split("sock_write_iter __sys_sendto __sys_recvfrom ib_uverbs_write do_epoll_wait __x64_sys_clock_gettime __x64_sys_gettimeofday __x64_sys_ioctl ksys_read", w, " "); for (i in w) want[w[i]] = 1 }
		/^\t/ { ns++; st[ns] = $2; next }
		{ flush() }
		END { flush()
			for (k in hit) {
				printf "    %-26s %5.1f %% of samples, %4.1f %% of them in a context switch;", k, 100 * hit[k] / tot, 100 * sw[k] / hit[k]
				n = 0; for (x in lf) { split(x, kk, SUBSEP); if (kk[1] == k) { n++; nm[n] = kk[2]; ct[n] = lf[x] } }
				for (i = 1; i <= 4 && i <= n; i++) { b = i; for (j = i + 1; j <= n; j++) if (ct[j] > ct[b]) b = j
					t = nm[i]; nm[i] = nm[b]; nm[b] = t; t = ct[i]; ct[i] = ct[b]; ct[b] = t
					printf " %s %.0f%%", nm[i], 100 * ct[i] / hit[k] }
				printf "\n"
			} }'
	echo "  $1: self, top entries"
	perf report -i "$W/perf.$1" --stdio --no-children --sort dso,sym -g none 2>/dev/null |
		grep -E '^ +[0-9]' | sed -n 1,30p | sed 's/^/    /'
}

# both proxies' rounds: ROUND
proxies_round() {
	proxy_round "$1" haproxy "$(cat "$W/haproxy.pid")" "$BED_IP" "vers=3,proto=tcp,port=$PROXY_PORT,nolock"
	proxy_round "$1" gateway "$gw_pid" 127.0.0.1 "vers=3,proto=tcp,port=$gw_port,mountport=$gw_port,mountproto=tcp,nolock"
	[ "${FL_TASKS:-0}" = 1 ] || return 0
	proxy_round "$1" rdma "" "$BED_IP" "vers=3,proto=rdma,port=$BED_RDMA_PORT,nolock"
	proxy_round "$1" tcp "" "$BED_IP" "vers=3,proto=tcp,nolock"
	# FL_SWITCH=K: direct RDMA again with K round trips to another user
	# process after each stat(): nfsd's work is the same, the switches
	# between address spaces are the gateway's path's.
	[ "${FL_SWITCH:-0}" -gt 0 ] || return 0
	proxy_round "$1" rdma-sw "" "$BED_IP" "vers=3,proto=rdma,port=$BED_RDMA_PORT,nolock" "$FL_SWITCH"
}

step "warm-up (TCG translation caches, nfsd threads)"
tool 200 >/dev/null
FL_N=300 proxies_round 0 >/dev/null
for r in $(seq 1 "$FL_ROUNDS"); do
	step "round $r of $FL_ROUNDS"
	{ floor_round "$r"; proxies_round "$r"; } | tee -a "$W/rows"
done
[ -s "$W/rows" ] || bed_fail "no rows"
echo
echo "| process | rounds | user µs/call | system µs/call | total µs/call | calls/s | calls per round |"
echo "|---|---:|---:|---:|---:|---:|---:|"
# awk: med(a, n), the median of a[1..n] (sorts a)
MED_AWK='function med(a, n,   i, j, x) { for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }'
for s in rdma-null haproxy gateway; do	# the median of the rounds, each column
	awk -v s="$s" "$MED_AWK"'
		$1 == "FLOOR" && $3 == s { n++; u[n] = $4; y[n] = $5; t[n] = $4 + $5; q[n] = $7; c = $6 }
		END { if (n) printf "| %s | %d | %.0f | %.0f | %.0f | %.0f | %d |\n", s, n, med(u, n), med(y, n), med(t, n), med(q, n), c }' "$W/rows"
done
if [ "${FL_TASKS:-0}" = 1 ]; then
	echo
	echo "Every task's time on a CPU per call during the stat() loop (schedstat; medians of the rounds):"
	echo
	sides="tcp rdma haproxy gateway" heads="direct TCP | direct RDMA | HAProxy | rpcrdma-gw"
	if [ "${FL_SWITCH:-0}" -gt 0 ]; then
		sides="tcp rdma rdma-sw haproxy gateway"
		heads="direct TCP | direct RDMA | direct RDMA + $FL_SWITCH pipe round trip(s) per stat() | HAProxy | rpcrdma-gw"
	fi
	echo "| µs per NFS call | $heads |"
	echo "|---$(echo "$sides" | sed 's/[^ ]*/|---:/g; s/ //g')|"
	for k in client proxy nfsd kworker ksoftirqd other tasks busy wall; do
		awk -v k="$k" -v sides="$sides" "$MED_AWK"'
			$1 == "TASKS" && $4 == k { n[$3]++; v[$3, n[$3]] = $5 }
			function side_med(s,   i, a) { if (!n[s]) return "-"
				for (i = 1; i <= n[s]; i++) a[i] = v[s, i]
				return med(a, n[s]) }
			END { split("client proxy nfsd kworker ksoftirqd other tasks busy wall", l, " ")
				split("the client (perl)|the proxy|nfsd threads|kworkers|ksoftirqd|other tasks|all tasks|guest busy (/proc/stat)|wall time", nm, "|")
				for (i in l) if (l[i] == k) name = nm[i]
				printf "| %s |", name; ns = split(sides, sd, " ")
				for (i = 1; i <= ns; i++) printf " %s |", side_med(sd[i]); printf "\n" }' "$W/rows"
	done
	echo
	echo "Other tasks at 5 µs per call or more (round 1):"
	awk '$1 == "OTHER" && $2 == 1 { printf "  %s: %s %s µs\n", $3, $4, $5 }' "$W/rows"
fi
for s in haproxy gateway; do perf_show "$s"; done
