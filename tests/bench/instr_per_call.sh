#!/bin/bash
# claim: benchmark (not a test): user-space instructions and system calls of rpcrdma-gw per forwarded GETATTR and per 1 MiB READ/WRITE (kernel NFS client through the gateway to nfsd over Soft-RoCE)
# SPDX-License-Identifier: MIT
#
# This file contains the per-call cost benchmark of the gateway.
# On the host: BUILD=build tests/bench/instr_per_call.sh boots the VM tier's
# guest and runs itself inside.  The guest runs the gateway twice, one after
# the other, and the same five workloads against each on a vers=3 mount
# (IPC_VERS=4.1: a vers=4.1 mount of the pseudo root):
#
#   GETATTR   IPC_GA stat() calls of one file on a noac mount
#   WRITE     IPC_MIB MiB with dd bs=1M oflag=direct (1 MiB WRITE calls)
#   READ      the same file with dd bs=1M iflag=direct (1 MiB READ calls)
#   READ4K    IPC_GA blocks of it with dd bs=4k iflag=direct (4 KiB READs,
#             the small data calls of make bench's 4 KiB rows)
#   GETATTR8  eight GETATTR loops at once on the noac mount (8 x IPC_GA
#             calls, several in flight: what a loop pass shares among calls)
#
# 1. native: `perf stat -e raw_syscalls:sys_enter` on the gateway per
#    workload (every system call, verbs doorbells and CQ events included) and
#    the gateway's own syscalls_total{call} counters, both divided by
#    calls_forwarded_total of the workload;
# 2. under valgrind --tool=callgrind: the counts are zeroed before and dumped
#    after each workload (callgrind_control), so each dump holds the
#    instructions (Ir) of that workload only; Ir / forwarded calls and the
#    top functions (self cost) are printed.
# Settings (host environment or NAME=value arguments): IPC_GA (300), IPC_MIB (16), IPC_VERS (3);
# IPC_BASE=PATH/rpcrdma-gw also runs the callgrind phase on that (baseline)
# build and prints its "IR base" lines, per client NFS call (older builds
# have no calls_forwarded_total); IPC_NATIVE=0 skips the system call phase,
# IPC_CALLGRIND=0 the instruction phase; IPC_PROFILE=1 samples the whole
# guest over each native workload (perf record -a -e cpu-clock: CPU time
# by task and object, the gateway's by function, the whole guest's by
# function, Soft-RoCE's work included); IPC_WORKERS="1 2" runs the callgrind
# phase once per `workers =` value (labels w1, w2: the cost per call of
# running two event loops, the mount's calls on one of them);
# IPC_SYSTIME=1 samples the gateway process alone with call graphs over each
# native workload (perf record -g -p) and splits its CPU time by the system
# call it was spent in, user space apart: how much of it is Soft-RoCE run in
# the doorbell's write (work an RDMA device does in hardware) and how much TCP;
# IPC_HAPROXY=1 then runs the GETATTR workload through HAProxy (mode tcp, to
# nfsd's TCP port) with the same counts and samples, for comparison;
# IPC_TRANSPORT=tcp sends the gateway's NFS route over TCP instead of RDMA;
# IPC_HAPROXY_CG=1 runs HAProxy under callgrind for the GETATTR workload
# (instructions and function calls per client call, beside the gateway's
# "FCALLS" lines); IPC_CALLERS="memcpy clock_gettime" lists the callers of
# each function named (by name prefix), calls per forwarded call;
# IPC_KEEP=1 copies each callgrind dump to LABEL.WORKLOAD.cg in the run
# folder and keeps it ($BUILD/vm/run-instr_per_call.*/, for callgrind_annotate);
# IPC_PAGES=1 counts the memory pages the gateway (and HAProxy, with
# IPC_HAPROXY=1) touches over one GETATTR, ten, and an idle second, by
# mapping ("PAGES" lines; transparent huge pages off in the guest, so that a
# page is 4 KiB).
set -u

if [ "${VM_GUEST:-}" != 1 ]; then
	cd "$(dirname "$0")/../.." || exit 1
	export BUILD=${BUILD:-build}
	why=$(tests/vm/run-vm.sh --probe) || { echo "instr_per_call: VM tier unavailable: $why" >&2; exit 1; }
	command -v valgrind >/dev/null || { echo "instr_per_call: valgrind missing (apt-get install valgrind)" >&2; exit 1; }
	base=
	[ -z "${IPC_BASE:-}" ] || base="IPC_BASE=$(realpath "$IPC_BASE")"
	[ "${IPC_KEEP:-0}" = 0 ] || export VM_KEEP=1
	VM_TIMEOUT=${VM_TIMEOUT:-1500} exec tests/vm/run-vm.sh tests/bench/instr_per_call.sh \
		"IPC_GA=${IPC_GA:-300}" "IPC_MIB=${IPC_MIB:-16}" "IPC_NATIVE=${IPC_NATIVE:-1}" \
		"IPC_CALLGRIND=${IPC_CALLGRIND:-1}" "IPC_WORKERS=${IPC_WORKERS:-}" \
		"IPC_PROFILE=${IPC_PROFILE:-0}" "IPC_VERS=${IPC_VERS:-3}" "IPC_SYSTIME=${IPC_SYSTIME:-0}" \
		"IPC_TRANSPORT=${IPC_TRANSPORT:-rdma}" \
		"IPC_HAPROXY=${IPC_HAPROXY:-0}" "IPC_HAPROXY_CG=${IPC_HAPROXY_CG:-0}" \
		"IPC_CALLERS=${IPC_CALLERS:-}" "IPC_KEEP=${IPC_KEEP:-0}" "IPC_PAGES=${IPC_PAGES:-0}" \
		${base:+"$base"}
fi

# --- inside the guest ---------------------------------------------------------
for a in "$@"; do	# run-vm.sh passes arguments, not the environment
	case $a in IPC_*=*) export "${a?}" ;; esac
done
# shellcheck source=tests/vm/lib.sh
. "$(dirname "$0")/../vm/lib.sh"
# shellcheck source=tests/bench/bench_lib.sh
. "$(dirname "$0")/bench_lib.sh"

IPC_GA=${IPC_GA:-300}
IPC_MIB=${IPC_MIB:-16}
IPC_VERS=${IPC_VERS:-3}
GW_PORT=20490
W=/tmp/ipc
M=/mnt/ipc
mkdir -p "$W" "$M"
echo "guest kernel: $(uname -r)"

# Pages counted one by one: the gateway's memory is mapped after this.
[ "${IPC_PAGES:-0}" != 1 ] || echo never >/sys/kernel/mm/transparent_hugepage/enabled

# nfsd's largest READ/WRITE is 256 KiB by default in this guest: raise it
# so that a 1 MiB dd block is one 1 MiB call.
BED_NFSD_MAX_BLOCK=1048576 bed_nfsd_up
bed_nfs_client_modules
echo x >"$BED_EXPORT/small"
head -c $((IPC_MIB << 20)) /dev/urandom >"$W/src.bin"

# gw_conf_file WORKERS: the gateway's configuration (WORKERS empty: one worker)
gw_conf_file() {
	cat >"$W/gw.conf" <<CONF
[gateway]
listen = $BED_IP:$GW_PORT
workers = ${1:-1}
log_level = info
control_socket = $W/gw.control
admin_listen =
[backend nfsd]
address = $BED_IP
port = $BED_NFS_PORT
[route nfs]
program = nfs
transport = ${IPC_TRANSPORT:-rdma}
[route mount]
program = mount
transport = tcp
CONF
}
gw_conf_file ""

gw_pid=
trap 'rc=$?; [ -z "$gw_pid" ] || kill -TERM "$gw_pid" 2>/dev/null; (exit $rc); bed_on_exit' EXIT

# metrics FILE: the gateway's exposition, through the control socket
metrics() { timeout 120 "$BUILD/rpcrdma-gwctl" -s "$W/gw.control" metrics >"$1"; }
# delta A B SAMPLE-REGEX: sum of the matching samples in B minus in A
delta() {
	awk -v re="$3" 'FNR == 1 { f++ } $1 ~ re { s[f] += $2 } END { printf "%.0f\n", s[2] - s[1] }' "$1" "$2"
}

do_mount() { # extra options
	step "mount vers=$IPC_VERS${1:+ -o $1}"
	if [ "$IPC_VERS" = 3 ]; then
		timeout 120 mount -t nfs -o "vers=3,proto=tcp,port=$GW_PORT,mountport=$GW_PORT,mountproto=tcp,nolock,soft,timeo=150,retrans=2${1:+,$1}" \
			"$BED_IP:$BED_EXPORT" "$M"
	else	# NFSv4.x: the pseudo root (the export is fsid=0), no MOUNT protocol
		timeout 120 mount -t nfs -o "vers=$IPC_VERS,proto=tcp,port=$GW_PORT,soft,timeo=150,retrans=2${1:+,$1}" \
			"$BED_IP:/" "$M"
	fi
}

# The five workloads.
wl_getattr() {
	perl -e 'my ($f, $n) = @ARGV; for (1 .. $n) { stat($f) or die "$f: $!" }' "$M/small" "$IPC_GA"
}
# GETATTR8: eight of those processes at once (IPC_GA each): calls from one
# connection in flight together, as in make bench's small-op mix.
wl_getattr8() {
	local i rc=0
	for i in 1 2 3 4 5 6 7 8; do wl_getattr & done
	for i in 1 2 3 4 5 6 7 8; do wait -n || rc=1; done
	return $rc
}
wl_write() { timeout 600 dd if="$W/src.bin" of="$M/seq.bin" bs=1M oflag=direct status=none; }
wl_read() { timeout 600 dd if="$M/seq.bin" of=/dev/null bs=1M iflag=direct status=none; }
wl_read4k() { timeout 600 dd if="$M/seq.bin" of=/dev/null bs=4k count="$IPC_GA" iflag=direct status=none; }
# NFS calls the client made on $M, per procedure ("GETATTR=900 LOOKUP=3 ...")
nfs_ops() {
	awk -v m="$M" '$1 == "device" { inb = ($5 == m); po = 0; next }
		inb && /per-op statistics/ { po = 1; next }
		inb && po && $1 ~ /^[A-Z_0-9]+:$/ && $2 > 0 { sub(/:$/, "", $1); printf "%s=%s ", $1, $2 }' /proc/self/mountstats
}

# NFS calls the client made on $M, all procedures
nfs_calls() { nfs_ops | tr ' ' '\n' | awk -F= '{ s += $2 } END { printf "%.0f\n", s }'; }

# sys_count_start PID NAME VAR: perf stat of process PID's system calls
# into $W/pstat.NAME, in the background (its pid in VAR; stop it with INT).
sys_count_start() {
	perf stat -e raw_syscalls:sys_enter -e syscalls:sys_enter_epoll_wait \
		-e syscalls:sys_enter_clock_gettime -e syscalls:sys_enter_recvfrom \
		-e syscalls:sys_enter_sendto -e syscalls:sys_enter_read -e syscalls:sys_enter_write \
		-e syscalls:sys_enter_writev -e syscalls:sys_enter_epoll_ctl -e syscalls:sys_enter_ioctl \
		-p "$1" -x ';' -o "$W/pstat.$2" >/dev/null 2>&1 &
	printf -v "$3" '%s' "$!"
	sleep 1
}
sys_count_stop() { kill -INT "$1"; wait "$1" 2>/dev/null || true; }	# PID
# sys_count_print NAME CALLS LABEL: "SYS LABEL all_syscalls/call=..." and a
# line per counted system call, per call, from $W/pstat.NAME.
sys_count_print() {
	awk -F';' -v c="$2" -v l="$3" '$3 ~ /raw_syscalls/ && c > 0 { printf "SYS %s all_syscalls/call=%.2f\n", l, $1 / c }
		$3 ~ /sys_enter_/ && c > 0 { sub(/.*sys_enter_/, "", $3); printf "  %s/call %.2f\n", $3, $1 / c }' "$W/pstat.$1"
}
# samples_start PID NAME VAR: with IPC_SYSTIME=1, process PID alone sampled
# with call graphs into $W/st.NAME until its child sleep ends (systime);
# its pid in VAR, left empty otherwise.
samples_start() {
	[ "${IPC_SYSTIME:-0}" = 1 ] || return 0
	echo 0 >/proc/sys/kernel/kptr_restrict
	perf record -g -e cpu-clock -F 999 -p "$1" -o "$W/st.$2" -- sleep 900 >/dev/null 2>&1 &
	printf -v "$3" '%s' "$!"
	bed_wait 60 "perf record -p running" pgrep -P "${!3}" -x sleep
}

# phase MODE NAME: run workload NAME against the running gateway; MODE
# native counts system calls with perf, MODE callgrind zeroes and dumps the
# instruction counts around it.
phase() {
	local mode=$1 name=$2 calls sys c0 ps='' pr='' st=''
	step "$mode: $name"
	metrics "$W/m0"
	case $mode in
	native)
		sys_count_start "$gw_pid" "$name" ps
		if [ "${IPC_PROFILE:-0}" = 1 ]; then	# where the CPU time goes, whole guest
			echo 0 >/proc/sys/kernel/kptr_restrict
			# Stopped by ending its child: perf record stopped by a
			# signal here kept almost no samples.  Its start-up takes
			# seconds under TCG: the workload waits for the child.
			perf record -e cpu-clock -F 999 -a -o "$W/prof.$name" -- sleep 900 >/dev/null 2>&1 &
			pr=$!
			bed_wait 60 "perf record running" pgrep -P "$pr" -x sleep
		fi
		samples_start "$gw_pid" "$name" st ;;
	callgrind) callgrind_control -z "$gw_pid" >/dev/null 2>&1 ;;
	esac
	c0=$(nfs_calls)
	if ! "wl_$name"; then
		echo "  $name FAILED; client: $(dmesg | tail -3 | tr '\n' ' ')"
		timeout 30 "$BUILD/rpcrdma-gwctl" -s "$W/gw.control" stats 2>&1 | sed 's/^/  gw /'
		tail -20 "$W"/gw-*.log | sed 's/^/  gw log: /'
	fi
	echo "  client NFS calls so far on this mount: $(nfs_ops)"
	case $mode in
	native)
		sys_count_stop "$ps"
		if [ -n "$pr" ]; then
			pkill -P "$pr" -x sleep
			wait "$pr" 2>/dev/null || true
			echo "PROF $name: the guest's CPU samples over the workload (all vCPUs) by task and object,"
			echo "  then the gateway's own by object and function (shares of all samples)"
			perf report -i "$W/prof.$name" --stdio --sort comm,dso 2>/dev/null |
				awk '/^ *[0-9.]+%/ { print "    " $0 }' | sed -n 1,14p
			perf report -i "$W/prof.$name" --stdio --comm rpcrdma-gw --sort dso,sym 2>/dev/null |
				awk '/^ *[0-9.]+%/ { print "    " $0 }' | sed -n 1,30p
			echo "  the whole guest by function:"
			perf report -i "$W/prof.$name" --stdio --sort sym 2>/dev/null |
				awk '/^ *[0-9.]+%/ { print "    " $0 }' | sed -n 1,40p
		fi
		[ -z "$st" ] || systime "$name" "$st" ;;
	callgrind) callgrind_control -d "$name" "$gw_pid" >/dev/null 2>&1 ;;
	esac
	metrics "$W/m1"
	calls=$(delta "$W/m0" "$W/m1" '^rpcrdma_gw_calls_forwarded_total')
	sys=$(delta "$W/m0" "$W/m1" '^rpcrdma_gw_syscalls_total')
	# RDMA work per call: window binds and LOCAL_INVs (one per segment offered)
	[ "$calls" -gt 0 ] 2>/dev/null && echo "REG $mode $name calls=$calls $(for k in mw_bind local_inv remote_inv; do
		printf '%s/call=%s ' "$k" "$(delta "$W/m0" "$W/m1" "^rpcrdma_gw_rdma_registrations_total.*kind=\"$k\"" |
			awk -v c="$calls" '{ printf "%.2f", $1 / c }')"; done)"
	if [ "$mode" = native ]; then
		sys_count_print "$name" "$calls" "$name calls=$calls counted(syscalls_total)/call=$(awk -v c="$calls" -v s="$sys" 'BEGIN { if (c > 0) printf "%.2f", s / c }')"
		grep '^rpcrdma_gw_syscalls_total' "$W/m1" >"$W/sys1"
		grep '^rpcrdma_gw_syscalls_total' "$W/m0" >"$W/sys0"
		awk -v c="$calls" 'FNR == 1 { f++ } { v[f, $1] = $2; k[$1] = 1 }
			END { for (s in k) if (c > 0 && v[2, s] - v[1, s] > 0) printf "  %s/call %.2f\n", s, (v[2, s] - v[1, s]) / c }' \
			"$W/sys0" "$W/sys1" | sort
	else
		echo "$calls $(($(nfs_calls) - c0))" >"$W/calls.$name"
	fi
}

# cpu_getattr PID LABEL: the GETATTR workload once more with nothing
# attached (perf's tracepoints and samples cost more CPU than the call under
# TCG): CPU of process PID per client NFS call.
cpu_getattr() {
	local c0 t0 t1
	c0=$(nfs_calls); bench_cpu_ticks "$1" t0
	wl_getattr || echo "  getattr ($2) FAILED"
	bench_cpu_ticks "$1" t1
	echo "CPU $2 getattr: $(((t1 - t0) * 10000 / ($(nfs_calls) - c0))) µs per client NFS call (utime + stime, all threads, nothing attached)"
}

# pages_snap PID: 4 KiB pages referenced per mapping of PID, and all of them
pages_snap() { # PID
	awk '/^[0-9a-f]+-[0-9a-f]+ / { m = $6 ? $6 : "[anon]"; sub(/.*\//, "", m) }
		/^Referenced:/ { r[m] += $2 }
		END { for (m in r) if (r[m] > 0) { printf "%s=%d ", m, r[m] / 4; t += r[m] / 4 } printf "all=%d\n", t }' "/proc/$1/smaps"
}
# pages_per_call PID LABEL (IPC_PAGES=1): "PAGES LABEL WHAT: MAPPING=N ..."
# lines, N the 4 KiB pages of each mapping of PID (file name, [heap],
# [anon], [stack], ...) referenced over WHAT: an idle second, one GETATTR
# (three times), ten in a row.  The kernel clears the accessed bits
# (clear_refs) before each.  Shared libraries' counts include pages that
# other processes (the perl client) referenced: read the process's own
# mappings.  Under TCG every page touched after a switch of address space
# costs a software TLB fill.
pages_per_call() {
	local n what
	for n in 0 1 1 1 10; do
		echo 1 >"/proc/$1/clear_refs"
		if [ "$n" = 0 ]; then
			what="idle 1 s"; sleep 1
		else
			what="calls=$n"
			IPC_GA=$n wl_getattr
		fi
		echo "PAGES $2 $what: $(pages_snap "$1")"
	done
}

# systime NAME PID: ends perf record PID (IPC_SYSTIME) and prints the
# gateway's samples of workload NAME: all, in user space, and under each
# system call's kernel entry (__x64_sys_*; children included: the share of
# all samples taken inside that call).
systime() {
	local name=$1 pid=$2 f=$W/st.$1
	pkill -P "$pid" -x sleep || echo "  (perf record had ended before the workload did)"
	wait "$pid" 2>/dev/null || true
	echo "SYSTIME $name: the process's CPU samples (cpu-clock, call graphs), $(perf report -i "$f" --stdio \
		--sort dso 2>/dev/null | awk '/^# Samples:/ && !n++ { print $3 " samples" }')"
	perf report -i "$f" --stdio --no-children --sort dso 2>/dev/null |
		awk '/^ *[0-9.]+%/ { if ($2 ~ /kernel/) k += $1; else u += $1 } END { printf "  user space %.1f%%, kernel %.1f%%\n", u, k }'
	perf report -i "$f" --stdio --children --sort sym -g none 2>/dev/null |
		awk '/^ *[0-9.]+% +[0-9.]+% +\[k\] __x64_sys_/ { printf "  in %-28s %6s\n", $4, $1 }' | sed -n 1,12p
	echo "  top symbols, children included:"
	perf report -i "$f" --stdio --children --sort sym -g none 2>/dev/null |
		awk '/^ *[0-9.]+% +[0-9.]+% +\[/ { print "    " $0 }' | sed -n 1,30p
}

run_all() { # mode
	do_mount noac
	wl_getattr >/dev/null	# warm-up: lookups, attribute paths, TCG translations
	[ "$1" != native ] || cpu_getattr "$gw_pid" gateway
	[ "$1" != native ] || [ "${IPC_PAGES:-0}" != 1 ] || pages_per_call "$gw_pid" gateway
	phase "$1" getattr
	phase "$1" getattr8
	umount "$M"
	do_mount
	phase "$1" write
	umount "$M"
	do_mount	# O_DIRECT: no client cache to drop
	phase "$1" read
	phase "$1" read4k
	rm -f "$M/seq.bin"
	umount "$M"
}

if [ "${IPC_NATIVE:-1}" != 0 ]; then
	step "native gateway: system calls per forwarded call"
	"$BUILD/rpcrdma-gw" -c "$W/gw.conf" >"$W/gw-native.log" 2>&1 &
	gw_pid=$!
	bed_wait 30 "the gateway's NFS path" grep -q "transport ${IPC_TRANSPORT:-rdma} up" "$W/gw-native.log"
	run_all native
	kill -TERM "$gw_pid"; wait "$gw_pid" 2>/dev/null; gw_pid=
fi

# HAProxy (mode tcp) between the client and nfsd's TCP port: the GETATTR
# workload with the same system call counts, CPU per call and samples.
haproxy_getattr() {
	local hp ps='' st='' c0 c1
	step "HAProxy (mode tcp) on $BED_IP:20491 -> nfsd tcp $BED_NFS_PORT: getattr"
	bed_haproxy 20491 "$W" || return 1
	hp=$(cat "$W/haproxy.pid")
	timeout 120 mount -t nfs -o "vers=3,proto=tcp,port=20491,nolock,soft,timeo=150,retrans=2,noac" \
		"$BED_IP:$BED_EXPORT" "$M"
	wl_getattr >/dev/null	# warm-up, as for the gateway
	cpu_getattr "$hp" haproxy
	[ "${IPC_PAGES:-0}" != 1 ] || pages_per_call "$hp" haproxy
	sys_count_start "$hp" haproxy ps
	samples_start "$hp" haproxy st
	c0=$(nfs_calls)
	wl_getattr || echo "  getattr through HAProxy FAILED"
	c1=$(nfs_calls)
	sys_count_stop "$ps"
	sys_count_print haproxy "$((c1 - c0))" "haproxy-getattr client_calls=$((c1 - c0))"
	[ -z "$st" ] || systime haproxy "$st"
	umount "$M"
	kill "$hp" 2>/dev/null || true
}

[ "${IPC_HAPROXY:-0}" != 1 ] || haproxy_getattr

# cg_fcalls DUMP CALLS LABEL: function calls executed per forwarded call
# (the counts of the dump's calls= lines).  Under TCG each return and each
# call through a pointer or the PLT is an indirect jump, which costs a
# lookup of its target, so calls weigh more there than instructions say.
cg_fcalls() {
	awk -v c="$2" -v l="$3" '/^calls=/ { split(substr($0, 7), a, " "); n += a[1] }
		END { if (c > 0) printf "FCALLS %s %.0f function calls per call\n", l, n / c }' "$1"
	awk -v c="$2" '/^cfn=/ { f = substr($0, 5) }
		/^calls=/ { split(substr($0, 7), a, " "); by[f] += a[1] }
		END { for (f in by) if (c > 0) printf "%10.1f  %s\n", by[f] / c, f }' "$1" |
		sort -rn | sed -n 's/^/    called per call /; 1,15p'	# not head: its SIGPIPE fails the pipe
	local callee
	for callee in ${IPC_CALLERS:-}; do	# who calls it, per call
		awk -v c="$2" -v want="$callee" '/^fn=/ { f = substr($0, 4) } /^cfn=/ { g = substr($0, 5) }
			/^calls=/ && index(g, want) == 1 { split(substr($0, 7), a, " "); by[f] += a[1] }
			END { for (f in by) if (c > 0) printf "%10.1f  %s\n", by[f] / c, f }' "$1" |
			sort -rn | sed -n "s/^/    $callee called by /; 1,8p"
	done
}

# IPC_HAPROXY_CG=1: HAProxy (mode tcp, to nfsd's TCP port) under callgrind
# for the GETATTR workload: instructions and function calls per client NFS
# call, beside the gateway's (HAProxy forwards each call and reply).
haproxy_callgrind() {
	local hp c0 c1 f ir
	step "HAProxy under callgrind: instructions per client NFS call (getattr)"
	bed_haproxy_cfg 20492 "$W/hp-cg.cfg"
	rm -f "$W"/hcg.out*
	valgrind --tool=callgrind --callgrind-out-file="$W/hcg.out" --dump-instr=no --compress-strings=no \
		haproxy -db -f "$W/hp-cg.cfg" >"$W/hp-cg.log" 2>&1 &
	hp=$!
	bed_wait 300 "HAProxy under valgrind listening" sh -c "ss -ltn | grep -q ':20492 '"
	timeout 120 mount -t nfs -o "vers=3,proto=tcp,port=20492,nolock,soft,timeo=150,retrans=2,noac" \
		"$BED_IP:$BED_EXPORT" "$M"
	wl_getattr >/dev/null	# warm-up, as for the gateway
	callgrind_control -z "$hp" >/dev/null 2>&1
	c0=$(nfs_calls)
	wl_getattr || echo "  getattr through HAProxy FAILED"
	c1=$(nfs_calls)
	callgrind_control -d getattr "$hp" >/dev/null 2>&1
	umount "$M"
	kill -TERM "$hp"; wait "$hp" 2>/dev/null || true	# 143: ended by the TERM
	f=$(grep -l '^desc: Trigger: .*dump getattr$' "$W"/hcg.out* 2>/dev/null | head -1)
	[ -n "$f" ] || { echo "no callgrind dump of HAProxy"; return 1; }
	ir=$(awk '/^totals:/ { print $2; exit }' "$f")
	echo "IR haproxy getattr client_calls=$((c1 - c0)) Ir=$ir Ir/client_call=$((ir / (c1 - c0)))"
	cg_fcalls "$f" "$((c1 - c0))" "haproxy getattr"
}
[ "${IPC_HAPROXY_CG:-0}" != 1 ] || haproxy_callgrind

# cg_self DUMP CALLS KEY N: the N largest self costs per call, summed by
# function (KEY fn) or by object file (KEY ob): cost lines under fn=,
# except the inclusive cost line that follows each calls= line.
cg_self() {
	awk -v c="$2" -v key="$3" '/^ob=/ { o = substr($0, 4); sub(/.*\//, "", o); next }
		/^fn=/ { f = substr($0, 4); skip = 0; next }
		/^calls=/ { skip = 1; next }
		/^[0-9+*-]/ { if (skip) { skip = 0; next } self[key == "ob" ? o : f] += $2; tot += $2 }
		END { for (k in self) if (c > 0) printf "%12.0f %5.1f%%  %s\n", self[k] / c, 100 * self[k] / tot, k }' "$1" |
		sort -rn | sed -n "s/^/    /; 1,$4p"	# not head: its SIGPIPE fails the pipe
}
# callgrind LABEL BINARY: the five workloads under callgrind; "IR LABEL
# workload ..." lines (per forwarded call when the build counts them, else
# per client NFS call) and the top functions.
callgrind() {
	local label=$1 bin=$2 name f calls ccalls ir
	step "$label gateway under callgrind: instructions per forwarded call"
	rm -f "$W"/cg.out* "$W"/calls.*
	cd "$W" || exit 1
	# Uncompressed names: a dump after a zero would name functions by ids
	# defined in earlier dumps only.
	valgrind --tool=callgrind --callgrind-out-file="$W/cg.out" --dump-instr=no --compress-strings=no \
		"$bin" -c "$W/gw.conf" >"$W/gw-cg.log" 2>&1 &
	gw_pid=$!
	cd "$OLDPWD" || exit 1
	bed_wait 300 "the gateway's NFS path under valgrind" grep -q "transport ${IPC_TRANSPORT:-rdma} up" "$W/gw-cg.log"
	run_all callgrind
	for name in getattr getattr8 write read read4k; do
		f=$(grep -l "^desc: Trigger: .*dump $name\$" "$W"/cg.out* 2>/dev/null | head -1)
		[ -n "$f" ] || { echo "no callgrind dump for $name"; ls -l "$W" | sed 's/^/  /'; continue; }
		[ "${IPC_KEEP:-0}" = 0 ] || cp "$f" "/run/vm/$label.$name.cg"
		read -r calls ccalls <"$W/calls.$name"
		[ "${calls:-0}" -gt 0 ] || calls=$ccalls
		ir=$(awk '/^totals:/ { print $2; exit }' "$f")
		awk -v l="$label" -v n="$name" -v c="$calls" -v cc="$ccalls" -v ir="$ir" -v mib="$IPC_MIB" 'BEGIN {
			if (c > 0) printf "IR %s %s calls=%d client_calls=%d Ir=%d Ir/call=%.0f Ir/client_call=%.0f Ir/MiB=%s\n",
				l, n, c, cc, ir, ir / c, (cc > 0 ? ir / cc : 0), (n ~ /^getattr/ || n == "read4k" ? "-" : sprintf("%.0f", ir / mib)) }'
		cg_fcalls "$f" "$calls" "$label $name"
		echo "  top functions (self instructions per call, of this workload):"
		cg_self "$f" "$calls" fn 15
		echo "  self instructions per call by object (the gateway, libevent, verbs, libc):"
		cg_self "$f" "$calls" ob 10
	done
	kill -TERM "$gw_pid"; wait "$gw_pid" 2>/dev/null; gw_pid=
}
if [ "${IPC_CALLGRIND:-1}" != 0 ] && [ -n "${IPC_WORKERS:-}" ]; then
	for n in $IPC_WORKERS; do
		gw_conf_file "$n"
		callgrind "w$n" "$PWD/$BUILD/rpcrdma-gw"
	done
	gw_conf_file ""
elif [ "${IPC_CALLGRIND:-1}" != 0 ]; then
	callgrind this "$PWD/$BUILD/rpcrdma-gw"
fi
[ -z "${IPC_BASE:-}" ] || [ "${IPC_CALLGRIND:-1}" = 0 ] || callgrind base "$IPC_BASE"
